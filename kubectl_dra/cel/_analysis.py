"""Static analysis of a checked CEL AST: what the expression reads from ``device``, where the
unknown-domain rewrite must go, and an upper bound of its evaluation cost.

The cost bound follows the spirit of cel-go's estimator (every call/ident/literal costs 1,
comprehensions cost iterations x body, string and list operations scale with their sizes) using
the DRA size limits (≤32 domains, ≤32 entries per domain, strings ≤64, lists ≤48).  It is an
approximation of Kubernetes' *runtime* cost, used to refuse work that Kubernetes would cancel
(and that could otherwise hang or exhaust memory in cel-cpp, which has no cost tracking).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._ast import Node

ATTR = "device.attributes"
CAP = "device.capacity"
DRIVER = "device.driver"
MULTI = "device.allowMultipleAllocations"

INF = float(10**18)
MAX_DOMAINS = 32
MAX_ENTRIES = 32
MAX_STRING = 64
MAX_LIST = 48


@dataclass
class ReadPlan:
    driver: bool = False
    multi: bool = False
    attr_all: bool = False
    cap_all: bool = False
    attr_domains: set = field(default_factory=set)  # whole domain read
    cap_domains: set = field(default_factory=set)
    attr_keys: list = field(default_factory=list)  # (domain, id) in first-use order
    cap_keys: list = field(default_factory=list)
    rewrite_index_ids: list = field(default_factory=list)  # ids of `_[_]` calls on the outer maps


def _parents(root: Node) -> dict[int, Node]:
    parents: dict[int, Node] = {}
    stack = [root]
    while stack:
        n = stack.pop()
        for c in n.children():
            parents[id(c)] = n
            stack.append(c)
    return parents


def _const_str(n: Node) -> str | None:
    if n.kind == "const" and n.const_type == "string":
        return n.value
    return None


def plan_reads(root: Node) -> ReadPlan:
    plan = ReadPlan()
    parents = _parents(root)
    seen_attr: set = set()
    seen_cap: set = set()
    stack = [root]
    while stack:
        n = stack.pop()
        stack.extend(reversed(n.children()))
        if n.kind != "ident":
            continue
        name = n.value
        if name == DRIVER:
            plan.driver = True
            continue
        if name == MULTI:
            plan.multi = True
            continue
        if name not in (ATTR, CAP):
            continue
        is_attr = name == ATTR
        parent = parents.get(id(n))
        domain = None
        if (
            parent is not None
            and parent.kind == "call"
            and parent.value in ("_[_]", "_[?_]")
            and parent.args
            and parent.args[0] is n
        ):
            domain = _const_str(parent.args[1])
            if parent.value == "_[_]":
                plan.rewrite_index_ids.append(parent.id)
        elif parent is not None and parent.kind == "select" and parent.operand is n:
            if parent.test_only:
                continue  # has(device.attributes.d) is always true in Kubernetes
            domain = parent.value
        if domain is None:
            if is_attr:
                plan.attr_all = True
            else:
                plan.cap_all = True
            continue
        gp = parents.get(id(parent))
        ident = None
        if gp is not None:
            if gp.kind == "select" and gp.operand is parent:
                ident = gp.value
            elif gp.kind == "call" and gp.value in ("_[_]", "_[?_]", "_?._") and gp.args and gp.args[0] is parent:
                ident = _const_str(gp.args[1])
        if ident is None:
            (plan.attr_domains if is_attr else plan.cap_domains).add(domain)
            continue
        key = (domain, ident)
        if is_attr:
            if key not in seen_attr:
                seen_attr.add(key)
                plan.attr_keys.append(key)
        else:
            if key not in seen_cap:
                seen_cap.add(key)
                plan.cap_keys.append(key)
    return plan


# ------------------------------------------------------------------------------------------ cost
@dataclass(slots=True)
class Size:
    """Upper bound on a value's size: n = length (list/map/string), elem = size of elements."""

    n: float = 1.0
    elem: "Size | None" = None


ONE = Size(1.0)
# Values whose shape the estimator does not track (results of library calls): DRA-sized.
UNKNOWN = Size(float(MAX_STRING), Size(float(MAX_STRING), Size(float(MAX_STRING))))


def _mul(a: float, b: float) -> float:
    return min(INF, a * b)


def _add(*xs: float) -> float:
    return min(INF, sum(xs))


class CostEstimator:
    """optimistic=True counts one iteration for comprehensions that can stop early (all/exists),
    giving a lower bound for expressions whose pessimistic bound exceeds the limit.  ``max_size``
    is the largest list/string/map any sub-expression may produce (memory bound)."""

    def __init__(self, list_attributes: bool, optimistic: bool = False):
        self.optimistic = optimistic
        self.max_size = 0.0
        attr_val = Size(float(max(MAX_STRING, MAX_LIST if list_attributes else 0)), Size(float(MAX_STRING)))
        self.vars: dict[str, Size] = {
            ATTR: Size(MAX_DOMAINS, Size(MAX_ENTRIES, attr_val)),
            CAP: Size(MAX_DOMAINS, Size(MAX_ENTRIES, ONE)),
            DRIVER: Size(63.0),
            MULTI: ONE,
        }

    def estimate(self, root: Node) -> float:
        cost, _ = self._visit(root, dict(self.vars), 0)
        return cost

    def _visit(self, n: Node, env: dict[str, Size], depth: int) -> tuple[float, Size]:
        cost, size = self._visit_inner(n, env, depth)
        if size.n > self.max_size:
            self.max_size = size.n
        return cost, size

    def _visit_inner(self, n: Node, env: dict[str, Size], depth: int) -> tuple[float, Size]:
        if depth > 400:
            return INF, Size(INF)
        k = n.kind
        if k == "const":
            if n.const_type in ("string", "bytes"):
                return 0.0, Size(float(len(n.value or "")))
            return 0.0, ONE
        if k == "ident":
            return 1.0, env.get(n.value, UNKNOWN)
        if k == "select":
            c, s = self._visit(n.operand, env, depth + 1)
            return _add(c, 1), (s.elem or UNKNOWN)
        if k == "list":
            total = 1.0
            elems = []
            for a in n.args:
                c, s = self._visit(a, env, depth + 1)
                total = _add(total, c)
                elems.append(s)
            return _add(total, len(n.args)), Size(float(len(n.args)), _join(elems))
        if k in ("map", "struct"):
            total = 1.0
            vals = []
            for key, v, _ in n.entries:
                if isinstance(key, Node):
                    c, _s = self._visit(key, env, depth + 1)
                    total = _add(total, c)
                c, s = self._visit(v, env, depth + 1)
                total = _add(total, c)
                vals.append(s)
            return _add(total, len(n.entries)), Size(float(len(n.entries)), _join(vals))
        if k == "comprehension":
            return self._comprehension(n, env, depth)
        if k == "call":
            return self._call(n, env, depth)
        return 1.0, ONE

    def _comprehension(self, n: Node, env: dict[str, Size], depth: int) -> tuple[float, Size]:
        rc, rs = self._visit(n.iter_range, env, depth + 1)
        ic, isz = self._visit(n.accu_init, env, depth + 1)
        iters = rs.n
        cond = n.loop_condition
        can_stop = not (cond is not None and cond.kind == "const" and cond.value is True)
        if self.optimistic and can_stop and iters > 1:
            iters = 1.0
        inner = dict(env)
        if n.iter_var2:
            inner[n.iter_var] = ONE
            inner[n.iter_var2] = rs.elem or UNKNOWN
        else:
            inner[n.iter_var] = rs.elem or UNKNOWN
        # the accumulator may grow by one element per iteration (map/filter/transformList)
        grown = Size(_add(isz.n, iters), isz.elem or rs.elem)
        inner[n.accu_var] = grown
        cc, _ = self._visit(n.loop_condition, inner, depth + 1)
        sc, ss = self._visit(n.loop_step, inner, depth + 1)
        res_c, res_s = self._visit(n.result, inner, depth + 1)
        total = _add(rc, ic, _mul(iters, _add(cc, sc)), res_c)
        if iters == 0:  # cel.bind: result sees the bound value
            inner[n.accu_var] = isz
            res_c, res_s = self._visit(n.result, inner, depth + 1)
            total = _add(rc, ic, res_c)
        return total, res_s

    # long: one case per CEL function whose cost the estimator knows, as cel-go's checker switch
    def _call(self, n: Node, env: dict[str, Size], depth: int) -> tuple[float, Size]:
        fn = n.value
        parts = []
        total = 1.0
        if n.operand is not None:
            c, s = self._visit(n.operand, env, depth + 1)
            total = _add(total, c)
            parts.append(s)
        for a in n.args:
            c, s = self._visit(a, env, depth + 1)
            total = _add(total, c)
            parts.append(s)
        const_args = [a for a in ([n.operand] if n.operand is not None else []) + n.args]
        first = parts[0] if parts else ONE
        second = parts[1] if len(parts) > 1 else ONE
        if fn in ("lists.range", "k8sLstRange"):
            arg = const_args[0]
            # a computed count is not known statically: assume DRA-sized; the runtime function caps
            # the allocation (see library/lists.py make_lists_range) and cel-cpp's iteration budget the loops
            size = float(arg.value) if arg.kind == "const" and arg.const_type == "int" else float(MAX_LIST)
            size = max(size, 0.0)
            return _add(total, size), Size(size, ONE)
        if fn == "_+_":
            # string/list concatenation grows; numbers stay size 1.  Appending to a comprehension
            # accumulator (map/filter) is constant cost in cel-go (mutable accumulator list).
            size = _add(first.n, second.n)
            if n.args and n.args[0].kind == "ident" and n.args[0].value.startswith("@"):
                return total, Size(size, _join([first.elem, second.elem]))
            return _add(total, size * 0.1), Size(size, _join([first.elem, second.elem]))
        if fn in ("_==_", "_!=_"):
            return _add(total, 0.1 * max(first.n, second.n)), ONE
        if fn in ("@in",):
            return _add(total, second.n), ONE
        if fn in ("join",):
            inner = (first.elem or ONE).n
            size = _add(_mul(first.n, inner), _mul(first.n, second.n if len(parts) > 1 else 0))
            return _add(total, size * 0.1), Size(size)
        if fn == "replace":
            third = parts[2] if len(parts) > 2 else ONE
            size = _mul(_add(first.n, 1), _add(third.n, 1))
            return _add(total, size * 0.1), Size(size)
        if fn in ("split",):
            return _add(total, first.n * 0.1), Size(_add(first.n, 1), Size(first.n))
        if fn in ("format",):
            size = _mul(_add(first.n, 1), _add(_mul(second.n, (second.elem or ONE).n), 1))
            return _add(total, size * 0.1), Size(size)
        if fn in ("strings.quote",):
            return _add(total, first.n * 0.1), Size(_add(_mul(first.n, 2), 2))
        if fn in ("upperAscii", "lowerAscii", "trim", "substring", "charAt", "reverse", "k8sSubstr", "k8sCAt"):
            return _add(total, first.n * 0.1), Size(first.n, first.elem)
        if fn in (
            "matches",
            "find",
            "findAll",
            "contains",
            "startsWith",
            "endsWith",
            "indexOf",
            "lastIndexOf",
            "k8sIdxO",
            "k8sLastIdxO",
        ):
            return _add(total, _mul(first.n, max(second.n, 1)) * 0.1), Size(first.n, Size(first.n))
        if fn in ("flatten",):
            inner = first.elem or ONE
            size = _mul(first.n, max(inner.n, 1))
            return _add(total, size), Size(size, inner.elem)
        if fn in ("sort", "@sortByAssociatedKeys", "distinct"):
            # calibrated against Kubernetes: lists.range(500).sort() passes, lists.range(1000).sort()
            # is cancelled (cost grows ~n^2), the same for distinct()
            return _add(total, _mul(first.n, first.n)), first
        if fn in (
            "slice",
            "sum",
            "min",
            "max",
            "isSorted",
            "includes",
            "size",
            "sets.contains",
            "sets.intersects",
            "sets.equivalent",
            "transformList",
        ):
            extra = first.n if fn not in ("slice", "size") else 1.0
            if fn.startswith("sets."):
                extra = _mul(first.n, second.n)
            return _add(total, extra), first if fn == "slice" else ONE
        if fn in ("_[_]", "_[?_]", "_?._", "orValue", "value", "or", "optional.of", "optional.ofNonZeroValue", "dyn"):
            # element access / optional plumbing: result is an element (or the wrapped value)
            if fn in ("_[_]", "_[?_]", "_?._"):
                return total, first.elem or UNKNOWN
            if fn in ("orValue", "or"):
                return total, _join([first, second])
            return total, first
        if fn == "_?_:_":
            return total, _join(parts[1:])
        return total, UNKNOWN if fn not in _SCALAR_RESULTS else ONE


_SCALAR_RESULTS = {
    "_&&_",
    "_||_",
    "!_",
    "-_",
    "_-_",
    "_*_",
    "_/_",
    "_%_",
    "_<_",
    "_<=_",
    "_>_",
    "_>=_",
    "size",
    "int",
    "uint",
    "double",
    "bool",
    "has",
    "@not_strictly_false",
    "compareTo",
    "isGreaterThan",
    "isLessThan",
    "sign",
    "isInteger",
    "asInteger",
    "asApproximateFloat",
    "major",
    "minor",
    "patch",
    "isSemver",
    "isQuantity",
    "quantity",
    "semver",
    "add",
    "sub",
    "hasValue",
    "startsWith",
    "endsWith",
    "contains",
    "matches",
    "isMask",
}


def _join(sizes: list) -> Size | None:
    sizes = [s for s in sizes if s is not None]
    if not sizes:
        return None
    n = max(s.n for s in sizes)
    return Size(n, _join([s.elem for s in sizes]))
