"""One compiled selector expression: the source rewriting that lets cel-cpp run what cel-go accepts, the
checks Kubernetes applies at compile time, and evaluation against a device (activation, memo keys, cost
and size limits)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from kubectl_dra import quantity as qlib

from . import _analysis
from . import _semver as slib
from ._common import (
    _CONVERSION_STANDINS,
    _RENAMES,
    _UNRENAME,
    COST_EXCEEDED,
    COST_LIMIT,
    ENGINE_LIMIT,
    K8S_STRING,
    LISTS_RANGE,
    MAX_EXPRESSION_BYTES,
    MAX_VALUE_SIZE,
    QEQ,
    CelCompileError,
    EvalResult,
)
from ._device import MISSING, _split
from ._engine import _Engine
from ._messages import (
    _EMPTY_SYNTAX_ERROR,
    _apply_inserts,
    _bool_conversion_error,
    _celgo_type_name,
    _compile_message,
    _offset,
    _remap_issues,
    _result_type_name,
    _runtime_message,
    _to_original,
)
from ._source import apply_edits, matching, tokenize
from ._unbind import has_bind, inline_binds, map_binds
from .library.regex import validate_re2

if TYPE_CHECKING:  # pragma: no cover
    from .environment import CelEnvironment

GUARD_LIMIT = (
    "kubectl-dra: the expression reads a device attribute whose value is invalid, in a form the local CEL "
    "engine cannot check; Kubernetes' result is unknown"
)


def _raw_attr(attrs: dict, driver: str, domain: str, ident: str) -> Any:
    v = attrs.get(f"{domain}/{ident}")
    if v is None and domain == driver:
        v = attrs.get(ident)
    return v


def _attr_key(attr: Any) -> Any:
    """Hashable, cheap representation of one raw attribute value."""
    if attr is None:
        return MISSING
    if isinstance(attr, dict):
        if len(attr) == 1:
            for k, v in attr.items():
                if v is not None:
                    return (k, tuple(v) if isinstance(v, list) else v)
        else:
            # several fields set: which one counts depends on the version (lists first before 1.38,
            # scalars and non-empty lists in 1.38), so all of them are the key
            items = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in attr.items() if v is not None)
            if items:
                return items
    return repr(attr)


def _plain(attr: Any) -> Any:
    if attr is None:
        return None
    if isinstance(attr, dict):
        for v in attr.values():
            if v is not None:
                return v
    return attr


def _plain_138(attr: Any) -> Any:
    """The raw value 1.38's conversion takes: the first set scalar, else the first non-empty list."""
    if isinstance(attr, dict) and len(attr) > 1:
        for k in ("int", "bool", "string", "version"):
            if attr.get(k) is not None:
                return attr[k]
        for k in ("ints", "bools", "strings", "versions"):
            if attr.get(k):
                return attr[k]
    return _plain(attr)


def _from_cel_device(raw_key):
    """read_key(cel_device) from raw_key(driver, multi, attributes, capacity)."""

    def read_key(device: dict) -> tuple:
        return raw_key(
            device.get("driver") or "",
            bool(device.get("allowMultipleAllocations")),
            device.get("attributes") or {},
            device.get("capacity") or {},
        )

    return read_key


def _cap_raw(cap: Any) -> Any:
    if cap is None:
        return None
    if isinstance(cap, dict):
        v = cap.get("value")
        return None if v is None else str(v)
    return str(cap)


class CompiledSelector:
    """One compiled selector; ``evaluate(device)`` memoises on the values the expression reads."""

    def __init__(self, env: CelEnvironment, expression: str):
        self.env = env
        self.expression = expression
        self.evaluations = 0  # real engine evaluations (for tests / measurements)
        self._memo: dict[Any, EvalResult] = {}
        if len(expression.encode("utf-8")) > MAX_EXPRESSION_BYTES:
            raise CelCompileError(f"Too long: may not be more than {MAX_EXPRESSION_BYTES} bytes")
        if expression == "":
            # cel-go's parser reports the end of an empty input at column 0, with no source line.
            raise CelCompileError("compilation failed: " + _EMPTY_SYNTAX_ERROR)
        eng = env.engine
        toks = tokenize(expression)
        edits = []
        for k, t in enumerate(toks):
            if (
                t.kind == "ident"
                and t.text in _RENAMES
                and k > 0
                and toks[k - 1].text in (".", ".?")
                and k + 1 < len(toks)
                and toks[k + 1].text == "("
            ):
                edits.append((t.start, t.end, _RENAMES[t.text]))
            # lists.range(<non-negative literal>) stays native; anything else may be negative, which
            # cel-cpp rejects ("vector::reserve") while cel-go returns []
            if (
                t.text == "lists"
                and k + 3 < len(toks)
                and toks[k + 1].text == "."
                and toks[k + 2].text == "range"
                and toks[k + 3].text == "("
                and toks[k + 2].end - t.start == len("lists.range")
                and (k == 0 or toks[k - 1].text != ".")
            ):
                literal = (
                    k + 5 < len(toks)
                    and toks[k + 4].kind == "number"
                    and toks[k + 5].text == ")"
                    and toks[k + 4].text.isdigit()
                )
                if not literal:
                    edits.append((t.start, toks[k + 2].end, LISTS_RANGE))
        checked_src = apply_edits(expression, edits) if edits else expression
        try:
            checked = eng.env.compile(checked_src)
        except RuntimeError as e:
            checked, checked_src = self._repair(eng, checked_src, toks, str(e))
            edits = edits or [None]  # force re-tokenising the repaired source
        rt = checked.return_type()
        from ._ast import decode_serialized

        try:
            ast = decode_serialized(checked.serialize())
        except Exception as e:  # pragma: no cover - defensive
            raise CelCompileError(f"compilation failed: cannot analyse expression: {e}") from None
        self._static_checks(ast, checked_src)
        if not rt == eng.BOOL:
            from ._checks import attribute_derived

            # attribute values are cel-go's AnyType (accepted); other dyn results are accepted only
            # when list attributes make the attribute type DynType (1.36 with the gate, 1.37)
            ok = rt.name() == "DYN" and (env.list_attributes or attribute_derived(ast.expr))
            if not ok:
                raise CelCompileError(f"must evaluate to bool or the unknown type, not {_celgo_type_name(rt.name())}")
        plan = _analysis.plan_reads(ast.expr)
        from ._checks import range_attributes

        self._range_attrs = range_attributes(ast)
        self.plan = plan
        pessimistic = _analysis.CostEstimator(env.list_attributes)
        self.estimated_cost = pessimistic.estimate(ast.expr)
        self.optimistic_cost = _analysis.CostEstimator(env.list_attributes, optimistic=True).estimate(ast.expr)
        self.max_size = pessimistic.max_size
        # Refuse up front what Kubernetes would cancel anyway and what could exhaust memory here;
        # everything else runs natively, where cel-cpp's iteration budget bounds the time.
        self.over_budget = self.optimistic_cost > COST_LIMIT or self.max_size > MAX_VALUE_SIZE
        toks2 = tokenize(checked_src) if edits else toks
        self._checked_src, self._ast = checked_src, ast
        self._guard: tuple | None = None  # 1.38: the programs for devices with invalid attribute values
        base = (checked_src, checked, ast, plan.rewrite_index_ids, toks2, frozenset())
        if env.lazy_attributes:
            base = self._proxy_equality(eng, base)
        self._program, self.run_source, self._lazy_program, lazy_source = self._run_programs(eng, *base)
        if lazy_source is not None:
            self.lazy_source = lazy_source
        self.raw_key = self._make_key_fn()
        self._key_fn = _from_cel_device(self.raw_key)
        # read_key(device): the values the expression can read of the device; devices with equal keys (and no
        # attribute that fails conversion, see CelEnvironment.conversion_error) get equal results.  In 1.38 an
        # invalid value fails only what touches it; the key holds the raw value of every attribute the
        # expression can read, so an invalid value never shares a key with a valid one.
        self._reads_all = plan.attr_all
        self._reads_domains = frozenset(plan.attr_domains)
        self._reads_keys = frozenset(plan.attr_keys)
        self.read_key = self._key_fn

    def _run_programs(
        self, eng: _Engine, checked_src: str, checked, ast, rewrite_index_ids, toks, internal=frozenset()
    ):
        """The programs that run: (program, its source, lazy-bind program or None, its source or None).
        internal: the guarded rewrite's own variables (bound wherever they occur, see inline_binds)."""
        # unknown domain -> empty map: device.attributes["d"] -> device.attributes[?"d"].orValue({})
        # and `<Semver attribute> == <non-Semver>` must fail with "no such overload" as in cel-go.
        match = matching(toks)
        by_start = {t.start: k for k, t in enumerate(toks)}
        attr_edits = []
        for nid in rewrite_index_ids:
            k = by_start.get(ast.positions.get(nid))
            if k is None or toks[k].text != "[" or k not in match:
                continue
            close = toks[match[k]]
            attr_edits.append((toks[k].start, toks[k].end, "[?"))
            attr_edits.append((close.end, close.end, ".orValue({})"))
        attr_edits += self._outer_map_edits(ast, toks, match, by_start)
        eq_edits = self._semver_equality_edits(ast, toks, match, by_start)
        program, run_source, lazy_program, lazy_source = checked, checked_src, None, None
        binds = has_bind(checked_src)
        for candidate in (eq_edits + attr_edits, attr_edits, []):
            if not candidate and not binds:
                continue
            run_src = apply_edits(checked_src, candidate) if candidate else checked_src
            # cel-cpp's cel.bind is unreliable after an early-exiting comprehension (_unbind.py)
            mapped = map_binds(run_src) if binds else run_src
            try:
                program = eng.env.compile(mapped)
                run_source = mapped
            except RuntimeError:
                continue
            if binds:
                lazy = inline_binds(run_src, internal)
                if lazy is not None:
                    try:
                        lazy_program = eng.env.compile(lazy)
                        lazy_source = lazy
                    except RuntimeError:
                        pass
            break
        return program, run_source, lazy_program, lazy_source

    @staticmethod
    def _proxy_equality(eng: _Engine, base: tuple) -> tuple:
        """1.38: `==`/`!=` with an attribute or capacity map on the left compare as the map proxies' equalMaps
        (an error where it meets a Semver or Quantity of another type), for every device (_lazy.py)."""
        from ._ast import decode_serialized
        from ._lazy import VARIABLES, guarded_source

        src, _checked, ast = base[0], base[1], base[2]
        eq_src = guarded_source(ast, src, equality_only=True)
        if eq_src is None or eq_src == src:
            return base
        try:
            checked = eng.env.compile(eq_src)
            ast2 = decode_serialized(checked.serialize())
        except (RuntimeError, ValueError):
            return base
        ids = _analysis.plan_reads(ast2.expr).rewrite_index_ids
        return (eq_src, checked, ast2, ids, tokenize(eq_src), VARIABLES)

    def _guarded_programs(self) -> tuple:
        """1.38: (program, lazy-bind program) of the guarded source (_lazy.py), built on first need;
        (None, None) when the rewrite is not possible."""
        if self._guard is None:
            from ._ast import decode_serialized
            from ._lazy import VARIABLES, guarded_source

            eng = self.env.engine
            guard: tuple = (None, None)
            src = guarded_source(self._ast, self._checked_src)
            if src is not None:
                try:
                    checked = eng.env.compile(src)
                    ast = decode_serialized(checked.serialize())
                    ids = _analysis.plan_reads(ast.expr).rewrite_index_ids
                    program, run_source, lazy_program, _ = self._run_programs(
                        eng, src, checked, ast, ids, tokenize(src), VARIABLES
                    )
                    guard = (program, lazy_program)
                    self.guarded_source = run_source
                except (RuntimeError, ValueError):
                    guard = (None, None)
            self._guard = guard
        return self._guard

    def _repair(self, eng: _Engine, src: str, toks, err: str):
        if "No overload found in reference resolve step" in err:
            fn = err.rsplit(" for ", 1)[-1].split(" ")[0]
            what = "transformMap()/transformMapEntry()" if "mapInsert" in fn else fn
            raise CelCompileError(
                f"kubectl-dra: {what} is not supported by the local CEL engine (cel-cpp); "
                "Kubernetes accepts this expression",
                exact=False,
            )
        if "'unwrap'" in err and "optional" in src:
            raise CelCompileError(
                "kubectl-dra: optional.unwrap() is not supported by the local CEL engine (cel-cpp); "
                "Kubernetes accepts this expression",
                exact=False,
            )
        if re.search(r"undeclared reference to '(format|format\.[A-Za-z0-9]+)'", err):
            raise CelCompileError(
                "kubectl-dra: the Kubernetes format library (format.named(), "
                "format.dns1123Label(), ...) is not available in the local CEL engine; "
                "Kubernetes accepts this expression",
                exact=False,
            )
        u = re.search(r"<input>:(\d+):(\d+): undeclared reference to '(string|int|uint|double|bool|bytes)'", err)
        if u:
            off = _offset(src, int(u.group(1)), int(u.group(2)))
            name = u.group(3)
            k = off - len(name)
            if k > 0 and src[k:off] == name and src[off : off + 1] == "(" and src[:k].rstrip().endswith("."):
                fixed = src[:k] + _CONVERSION_STANDINS[name] + src[off:]
                try:
                    return eng.env.compile(fixed), fixed
                except RuntimeError as e:
                    return self._repair(eng, fixed, tokenize(fixed), str(e))
        m = re.search(
            r"<input>:(\d+):(\d+): found no matching overload for 'string' applied to '\((net\.IP|net\.CIDR)\)'", err
        )
        if m:
            # string(<IP|CIDR>) exists in Kubernetes; cel-cpp's string() cannot be extended, so the call
            # is renamed (same length) to a library function
            off = _offset(src, int(m.group(1)), int(m.group(2)))
            k = off
            while k > 0 and (src[k - 1].isalnum() or src[k - 1] == "_"):
                k -= 1
            if src[k:off] == "string":
                fixed = src[:k] + K8S_STRING + src[off:]
                try:
                    return eng.env.compile(fixed), fixed
                except RuntimeError as e:
                    return self._repair(eng, fixed, tokenize(fixed), str(e))
        return self._repair_numeric(eng, src, toks, err)

    def _repair_numeric(self, eng: _Engine, src: str, toks, err: str):
        """cel-cpp has no CrossTypeNumericComparisons checker option: retry with dyn() on the left
        operand of int/uint/double ordering comparisons that cel-go accepts.  If other errors remain,
        they are reported at their positions in the original source."""
        pattern = re.compile(
            r"<input>:(\d+):(\d+): found no matching overload for '_(?:<|<=|>|>=)_' "
            r"applied to '\((int|uint|double), (int|uint|double)\)'"
        )
        inserts: list[tuple[int, str]] = []  # (offset in the original source, inserted text)
        current, last_err = src, err
        for _ in range(16):
            hits = pattern.findall(last_err)
            if not hits:
                break
            line_starts = [0] + [i + 1 for i, c in enumerate(current) if c == "\n"]
            ctoks = tokenize(current)
            match = matching(ctoks)
            new = []
            for line, col, _a, _b in hits:
                op = line_starts[int(line) - 1] + int(col) - 1
                start = self._left_operand_start(ctoks, match, op)
                if start is None:
                    new = []
                    break
                new.append((_to_original(start, inserts), "dyn("))
                new.append((_to_original(op, inserts), ")"))
            if not new:
                break
            inserts = sorted(inserts + new, key=lambda x: x[0])
            current = _apply_inserts(src, inserts)
            try:
                return eng.env.compile(current), current
            except RuntimeError as e:
                last_err = str(e)
        if inserts and last_err != err:
            text = _compile_message(last_err, current, eng.env, any_attributes=not self.env.list_attributes)
            raise CelCompileError("compilation failed: " + _remap_issues(text, current, src, inserts)) from None
        raise CelCompileError(
            "compilation failed: "
            + _compile_message(
                err,
                src,
                eng.env,
                any_attributes=not self.env.list_attributes,
                extra=self._hidden_member_issues(eng, src),
            )
        ) from None

    # Global-only functions that cel-go refuses receiver-style; the hidden member overloads (see
    # CelEnvironment) let _static_checks word that, but only on an expression cel-cpp type-checked.
    _GLOBAL_ONLY = frozenset(
        {"sign", "quantity", "isQuantity", "semver", "isSemver", "url", "isURL", "isIP", "cidr", "isCIDR"}
    )

    def _hidden_member_issues(self, eng: _Engine, src: str) -> list[tuple[int, str]]:
        """cel-go reports every checker error: next to cel-cpp's, add the receiver-style calls of
        global-only functions (`x.sign()`, `x.string()`), typing the receiver by compiling it on its own.
        src may hold same-length stand-in names (x.k8sStr()); issues are worded with the real ones."""
        from . import _checks
        from ._ast import decode_serialized, format_type

        try:
            eng.env.compile(src, disable_check=True)
        except RuntimeError:
            return []  # cel-go type-checks only what parsed: no checker errors next to a syntax error
        display = src
        for stand_in, name in _UNRENAME.items():
            display = display.replace(stand_in, name)
        out: list[tuple[int, str]] = []
        toks = tokenize(src)
        match = matching(toks)
        rev = {v: k for k, v in match.items()}
        for k, t in enumerate(toks):
            name = _UNRENAME.get(t.text, t.text)
            if not (
                t.kind == "ident"
                and (name in self._GLOBAL_ONLY or name in _CONVERSION_STANDINS)
                and 0 < k
                and toks[k - 1].text == "."
                and k + 2 < len(toks)
                and toks[k + 1].text == "("
                and toks[k + 2].text == ")"
            ):
                continue
            j = k - 2
            while j >= 0:
                u = toks[j]
                if u.text in (")", "]") and j in rev:
                    j = rev[j] - 1
                elif (u.kind in ("ident", "number", "string") and u.text != "in") or u.text in (".", "?."):
                    j -= 1
                else:
                    break
            if j + 1 > k - 2:
                continue
            receiver = src[toks[j + 1].start : toks[k - 1].start]
            try:
                ast = decode_serialized(eng.env.compile(receiver).serialize())
            except Exception:  # the receiver alone does not compile: nothing to add
                continue
            any_attrs = not self.env.list_attributes
            recv = (
                "any"
                if any_attrs and _checks.attribute_derived(ast.expr)
                else format_type(_checks._type(ast, ast.expr))
            )
            off = toks[k + 1].start
            out.append(
                (
                    off,
                    _checks.format_issue(
                        display, off, f"found no matching overload for '{name}' applied to '{recv}.()'"
                    ),
                )
            )
        return out

    def _static_checks(self, ast, src: str) -> None:
        from . import _checks

        for n in _checks._walk(ast.expr):
            if n.kind == "call" and n.value == "cel.@mapInsert":
                raise CelCompileError(
                    "kubectl-dra: transformMap()/transformMapEntry() is not supported by the local "
                    "CEL engine (cel-cpp); Kubernetes accepts this expression",
                    exact=False,
                )
        any_attrs = not self.env.list_attributes
        # Type-checker errors of cel-go first; its AST validators (homogeneous literals, format strings,
        # regex literals) only run on an expression that type-checked, so their errors are reported
        # only when there is no checker error.
        problems = (
            _checks.hidden_member_calls(ast, any_attrs)
            + _checks.type_identifiers(ast, src)
            + _checks.flatten_calls(ast)
        )
        if not self.env.list_attributes:
            problems += _checks.any_typed_ranges(ast)
        regex_issues, instantiation = _checks.constant_regexes(ast, validate_re2)
        if not problems:
            problems = (
                _checks.homogeneous_literals(ast, any_attrs) + _checks.format_literals(ast, any_attrs) + regex_issues
            )
        if problems:
            problems.sort()
            text = "\n".join(_checks.format_issue(src, off, msg) for off, msg in problems)
            for stand_in, name in _UNRENAME.items():
                text = text.replace(stand_in, name)
            raise CelCompileError("compilation failed: " + text)
        instantiation += _checks.constant_conversions(ast)
        if instantiation:
            raise CelCompileError(instantiation[0])

    @staticmethod
    def _outer_map_edits(ast, toks, match, by_start) -> list:
        """device.attributes / device.capacity return an empty map for any missing domain in
        Kubernetes, also through `[?d]` (always present), `.d` and `has(device.attributes.d)`
        (always true)."""
        out = []
        outer = ("device.attributes", "device.capacity")
        skip: set[int] = set()
        for k in range(len(toks) - 7):
            seq = [t.text for t in toks[k : k + 8]]
            if (
                seq[0] == "has"
                and seq[1] == "("
                and seq[2] == "device"
                and seq[3] == "."
                and seq[4] in ("attributes", "capacity")
                and seq[5] == "."
                and toks[k + 6].kind == "ident"
                and seq[7] == ")"
            ):
                out.append((toks[k].start, toks[k + 7].end, "true"))
                skip.add(toks[k + 5].start)
        stack = [ast.expr]
        while stack:
            n = stack.pop()
            stack.extend(n.children())
            if (
                n.kind == "call"
                and n.value == "_[?_]"
                and n.args
                and n.args[0].kind == "ident"
                and n.args[0].value in outer
            ):
                k = by_start.get(ast.positions.get(n.id))
                if k is None or k < 3 or toks[k].text != "[?" or k not in match or toks[k - 3].text != "device":
                    continue
                out.append((toks[k - 3].start, toks[k - 3].start, "optional.of("))
                out.append((toks[match[k]].end, toks[match[k]].end, ".orValue({}))"))
            elif (
                n.kind == "select"
                and not n.test_only
                and n.operand is not None
                and n.operand.kind == "ident"
                and n.operand.value in outer
            ):
                pos = ast.positions.get(n.id)
                k = by_start.get(pos)
                if k is None or pos in skip or toks[k].text != "." or k + 1 >= len(toks):
                    continue
                out.append((toks[k].start, toks[k + 1].end, f'[?"{n.value}"].orValue({{}})'))
        return out

    def _semver_equality_edits(self, ast, toks, match, by_start) -> list:
        """Equality differences between cel-go and cel-cpp, fixed by rewriting the operator:

        * cel-go's `==` calls lhs.Equal(rhs); Semver.Equal(non-Semver) is a "no such overload"
          error while cel-cpp's message equality says false: dyn left operands compared with a
          statically non-Semver right operand get a guard.
        * Quantity == Quantity is numeric (Cmp) in Kubernetes, but the message carries the
          representation (it decides isInteger/asInteger): statically Quantity-typed ==/!= becomes
          a library call."""
        from ._ast import decode_type

        out = []
        stack = [ast.expr]
        while stack:
            n = stack.pop()
            stack.extend(n.children())
            if n.kind != "call" or n.value not in ("_==_", "_!=_") or len(n.args) != 2:
                continue
            left, right = n.args
            lt = ast.types.get(left.id)
            rt = ast.types.get(right.id)
            if lt is None or rt is None:
                continue
            lt, rt = decode_type(lt), decode_type(rt)
            op = ast.positions.get(n.id)
            if op is None or op not in by_start:
                continue
            start = self._left_operand_start(toks, match, op)
            if start is None:
                continue
            quantity = ("msg", "kubernetes.Quantity")
            if lt == quantity and rt == quantity:
                end = self._right_operand_end(toks, match, by_start[op])
                if end is None:
                    continue
                prefix = QEQ + "(" if n.value == "_==_" else "!" + QEQ + "("
                out.append((start, start, prefix))
                out.append((op, op + 2, ","))
                out.append((end, end, ")"))
                continue
            if n.value != "_==_":
                continue
            objects = (("msg", "kubernetes.Semver"), quantity)
            right_null = rt[0] == "null" or (right.kind == "const" and right.const_type == "null")
            if not ((lt[0] == "dyn" and not right_null and rt not in objects) or (lt in objects and rt[0] == "dyn")):
                continue
            end = self._right_operand_end(toks, match, by_start[op])
            if end is None:
                continue
            # both operands are evaluated (left first) exactly once, as cel-go's `==` does; no cel.bind
            # (see _unbind.py) and one comprehension iteration
            out.append((start, start, "[["))
            out.append((op, op + 2, ", "))
            out.append(
                (
                    end,
                    end,
                    "]].map(k8sEqP, (type(k8sEqP[0]) in [kubernetes.Semver, kubernetes.Quantity] && "
                    'k8sEqP[1] != null && type(k8sEqP[1]) != type(k8sEqP[0])) ? dyn(0) + dyn("") : '
                    "k8sEqP[0] == k8sEqP[1])[0]",
                )
            )
        return out

    @staticmethod
    def _right_operand_end(toks, match, op_idx: int) -> int | None:
        stop = {"&&", "||", "?", ":", ",", ")", "]", "}", "==", "!=", "<", "<=", ">", ">="}
        k = op_idx + 1
        last = None
        while k < len(toks):
            t = toks[k]
            if t.text in stop or (t.kind == "ident" and t.text == "in"):
                break
            if k in match:
                last = toks[match[k]].end
                k = match[k] + 1
                continue
            last = t.end
            k += 1
        return last

    @staticmethod
    def _left_operand_start(toks, match, op: int) -> int | None:
        """Start offset of the left operand of the relational operator at offset ``op``."""
        idx = next((k for k, t in enumerate(toks) if t.start == op), None)
        if idx is None:
            return None
        rev = {v: k for k, v in match.items()}
        k = idx - 1
        stop = {"&&", "||", "?", ":", ",", "==", "!=", "<", "<=", ">", ">=", "in", "(", "[", "{", "[?", "{?"}
        while k >= 0:
            t = toks[k]
            if t.text in (")", "]", "}"):
                k = rev.get(k, k) - 1
                continue
            if t.text in stop or (t.kind == "ident" and t.text == "in"):
                break
            k -= 1
        return toks[k + 1].start if k + 1 < idx else None

    # -- memo key: the values the expression reads. raw_key(driver, multi, attributes, capacity) takes the parts of
    # a device as published (multi: allowMultipleAllocations as CEL sees it), so the per-device loops need not
    # build CEL's view of a device to find its key; read_key(cel_device) is the same key from that view.
    def _make_key_fn(self):
        plan = self.plan
        env = self.env
        attr_keys = tuple(plan.attr_keys)
        cap_keys = tuple(plan.cap_keys)
        attr_domains = tuple(sorted(plan.attr_domains))
        cap_domains = tuple(sorted(plan.cap_domains))
        need_driver = plan.driver
        need_multi = plan.multi
        attr_all, cap_all = plan.attr_all, plan.cap_all
        self._env_conv = env.conversion_error
        if not (attr_all or cap_all or attr_domains or cap_domains):
            return self._simple_key_fn(need_driver, need_multi, attr_keys, cap_keys)

        def key(driver: str, multi: bool, attrs: dict, caps: dict) -> tuple:
            parts: list = [driver if need_driver else None, multi if need_multi else None]
            if attr_all:
                parts.append(tuple((_split(n, driver), _attr_key(a)) for n, a in attrs.items()))
            else:
                for d, i in attr_keys:
                    parts.append(_attr_key(_raw_attr(attrs, driver, d, i)))
                for d in attr_domains:
                    parts.append(
                        tuple(
                            sorted(
                                (i2, _attr_key(a))
                                for n, a in attrs.items()
                                for dd, i2 in (_split(n, driver),)
                                if dd == d
                            )
                        )
                    )
            if cap_all:
                parts.append(tuple((_split(n, driver), _cap_raw(c)) for n, c in caps.items()))
            else:
                for d, i in cap_keys:
                    c = caps.get(f"{d}/{i}")
                    if c is None and d == driver:
                        c = caps.get(i)
                    parts.append(_cap_raw(c))
                for d in cap_domains:
                    parts.append(
                        tuple(
                            sorted(
                                (i2, _cap_raw(c)) for n, c in caps.items() for dd, i2 in (_split(n, driver),) if dd == d
                            )
                        )
                    )
            return tuple(parts)

        return key

    @staticmethod
    def merged_read_key(selectors: list["CompiledSelector"]):
        """One raw_key for several selectors that read literal keys only: the union of what they read (a key with
        more values only splits the memo further, so each selector's result is still a function of it). None when
        one of them reads whole maps or domains (then each keeps its own raw_key)."""
        plans = [c.plan for c in selectors]
        if any(p.attr_all or p.cap_all or p.attr_domains or p.cap_domains for p in plans):
            return None
        attrs = tuple(dict.fromkeys(k for p in plans for k in p.attr_keys))
        caps = tuple(dict.fromkeys(k for p in plans for k in p.cap_keys))
        return CompiledSelector._simple_key_fn(any(p.driver for p in plans), any(p.multi for p in plans), attrs, caps)

    @staticmethod
    def _simple_key_fn(need_driver: bool, need_multi: bool, attr_keys: tuple, cap_keys: tuple):
        """The memo key when only literal keys are read (the common case), without per-call loops
        over empty read sets; same values as the general key function."""
        attrs_q = tuple((f"{d}/{i}", d, i) for d, i in attr_keys)
        caps_q = tuple((f"{d}/{i}", d, i) for d, i in cap_keys)

        def key(driver: str, multi: bool, attrs: dict, caps: dict) -> tuple:
            parts: list = [driver if need_driver else None, multi if need_multi else None]
            if attrs_q:
                for full, d, i in attrs_q:
                    a = attrs.get(full)
                    if a is None and d == driver:
                        a = attrs.get(i)
                    parts.append(_attr_key(a))
            if caps_q:
                for full, d, i in caps_q:
                    c = caps.get(full)
                    if c is None and d == driver:
                        c = caps.get(i)
                    parts.append(_cap_raw(c))
            return tuple(parts)

        return key

    def _iterable_error(self, device: dict) -> str:
        """cel-go: "got '<Go type>', expected iterable type" (the type is found from the attribute
        being iterated when that is statically known)."""
        gotype = "unknown"
        driver = device.get("driver") or ""
        attrs = device.get("attributes") or {}
        for d, i in self._range_attrs:
            raw = _raw_attr(attrs, driver, d, i)
            if isinstance(raw, dict):
                for k, name in (
                    ("string", "types.String"),
                    ("int", "types.Int"),
                    ("bool", "types.Bool"),
                    ("version", "cel.Semver"),
                ):
                    if raw.get(k) is not None:
                        gotype = name
                        break
                if gotype != "unknown":
                    break
        return f"got '{gotype}', expected iterable type"

    def reads(self, device: dict) -> tuple:
        plan = self.plan
        driver = device.get("driver") or ""
        attrs = device.get("attributes") or {}
        caps = device.get("capacity") or {}
        out = []
        if plan.driver:
            out.append((("driver",), driver))
        if plan.multi:
            out.append((("allowMultipleAllocations",), bool(device.get("allowMultipleAllocations") or False)))
        plain = _plain_138 if self.env.lazy_attributes else _plain
        for d, i in plan.attr_keys:
            out.append((("attributes", d, i), plain(_raw_attr(attrs, driver, d, i))))
        for d in sorted(plan.attr_domains):
            dom = {i2: plain(a) for n, a in attrs.items() for dd, i2 in (_split(n, driver),) if dd == d}
            out.append((("attributes", d), dom or None))
        if plan.attr_all:
            out.append((("attributes",), {n: plain(a) for n, a in attrs.items()}))
        for d, i in plan.cap_keys:
            c = caps.get(f"{d}/{i}")
            if c is None and d == driver:
                c = caps.get(i)
            out.append((("capacity", d, i), _cap_raw(c)))
        for d in sorted(plan.cap_domains):
            dom = {i2: _cap_raw(c) for n, c in caps.items() for dd, i2 in (_split(n, driver),) if dd == d}
            out.append((("capacity", d), dom or None))
        if plan.cap_all:
            out.append((("capacity",), {n: _cap_raw(c) for n, c in caps.items()}))
        return tuple(out)

    def evaluate(self, device: dict) -> EvalResult:
        conv = self._env_conv(device)
        if conv is not None:
            return EvalResult(None, conv, ())
        key = self._key_fn(device)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        res = self._evaluate(device)
        if len(self._memo) < 65536:
            self._memo[key] = res
        return res

    def _evaluate(self, device: dict) -> EvalResult:
        reads = self.reads(device)
        if self.over_budget:
            return EvalResult(None, COST_EXCEEDED, reads)
        env = self.env
        try:
            act = env._activation(device)
        except (qlib.QuantityError, slib.SemverError, ValueError, TypeError) as e:
            return EvalResult(None, f"invalid device: {e}", reads)
        program, lazy_program = self._program, self._lazy_program
        if env.lazy_attributes and self._may_touch_invalid(device):
            program, lazy_program = self._guarded_programs()
            if program is None:
                return EvalResult(None, GUARD_LIMIT, reads, exact=False)
        self.evaluations += 1
        res = self._run(program, act, device, reads)
        if res.error is not None and lazy_program is not None:
            # cel.bind initialisers were evaluated eagerly by the map form; Kubernetes evaluates them
            # only where used, so an error is re-checked with the inlined (lazy) form
            res = self._run(lazy_program, act, device, reads)
        return res

    def _may_touch_invalid(self, device: dict) -> bool:
        """1.38: whether the device has an invalid attribute value this expression can read."""
        bad = self.env.invalid_attributes(device)
        if not bad:
            return False
        if self._reads_all:
            return True
        domains, keys = self._reads_domains, self._reads_keys
        return any(d in domains or (d, i) in keys for d, i in bad)

    def _run(self, program, act, device: dict, reads: tuple) -> EvalResult:
        env = self.env
        try:
            value = program.eval(act)
        except Exception as e:  # engine conversion failures become runtime errors
            if "Iteration budget exceeded" in str(e):
                # the abort is global like Kubernetes' cancellation; which one applies depends on
                # whether Kubernetes' cost could stay within its limit
                if self.estimated_cost > COST_LIMIT:
                    return EvalResult(None, COST_EXCEEDED, reads)
                return EvalResult(None, ENGINE_LIMIT, reads, exact=False)
            return EvalResult(None, _runtime_message(str(e), env.no_such_key_hint), reads)
        t = value.type()
        eng = env.engine
        if t == eng.BOOL:
            return EvalResult(bool(value.value()), None, reads)
        if t == eng.ERROR:
            raw = str(value.value())
            if raw.endswith("No matching overloads found : <iter_range>"):
                return EvalResult(None, self._iterable_error(device), reads)
            return EvalResult(None, _runtime_message(raw, env.no_such_key_hint), reads)
        tn = _result_type_name(value)
        return EvalResult(
            None, f"CEL result of type {tn} could not be converted to bool: {_bool_conversion_error(tn)}", reads
        )
