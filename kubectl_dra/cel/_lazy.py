"""Kubernetes 1.38's lazily served attributes: per-attribute errors instead of a failed device.

1.38 converts a ResourceSlice once (k8s.io/dynamic-resource-allocation/api conversion.go attrValue) and
serves ``device.attributes`` through map proxies (cel/compile.go domainToAttributes, nameToAttributes).
An attribute value that does not convert (unparsable version, empty list, no value set) is stored as nil,
and only what looks the value up fails, with
``attribute <id>: value is invalid or its type is not supported by this version``.  Measured against
upstream (tests/unit/cel/test_lazy_attributes.py), an invalid value is touched by:

* a field or index read (``m.x``, ``m["x"]``, ``m[k]``), also through ``has(m.x)``, ``m[?"x"]`` and
  ``m.?x`` (nameToAttributes.Find returns the error, cel-go's attribute resolution reports it);
* the value variable of a two-variable comprehension over the map (``m.all(k, v, ...)``), when the
  body evaluates it (the map iterator hands it over lazily);
* ``m == other`` with m the proxy and other a map of the same size (equalMaps): an error; ``!=`` is
  then true (cel-go's ``!=`` is "Equal is not true");
* ``string.format`` of the map: ``error during formatting: could not find key: "<id>"``.

It is not touched by ``size()``, key iteration (``exists``/``all``/``map``/``filter`` over keys), or
``type()``; ``"x" in m`` is false (Contains reports "not found").

The local engine cannot hold an error inside a map, so an invalid value becomes a stand-in message
(``kubernetes.InvalidAttributeValue{v: <id>}``) and the expression is rewritten (``guarded_source``) so
that every place listed above checks for it.  The rewrite is only run for devices that have an invalid
value the expression can read; everything else uses the normal program.
"""

from __future__ import annotations

from typing import Any

from ._ast import decode_type
from ._source import matching, tokenize
from .library.values import NO_SUCH_OVERLOAD, CelFunctionError, Types

INVALID_TYPE = "kubernetes.InvalidAttributeValue"
INVALID_MESSAGE = "attribute {}: value is invalid or its type is not supported by this version"

F_INVALID = "k8sInvalidAttr"
F_EQ_CHECK = "k8sProxyEqChk"
F_EQ_OK = "k8sProxyEqOk"
F_FMT_CHECK = "k8sInvalidFmtChk"

# comprehension variables of the rewrite (the bodies never contain user text, so they cannot capture)
_AV, _OPT, _HAS, _IN, _EQ, _NE, _FMT = ("k8sAvA", "k8sOptA", "k8sHasM", "k8sInP", "k8sEqG", "k8sNeG", "k8sFmtP")
VARIABLES = frozenset((_AV, _OPT, _HAS, _IN, _EQ, _NE, _FMT))


# ------------------------------------------------------------------------------ runtime helpers
def _is_invalid(v: Any) -> bool:
    return Types.INVALID is not None and isinstance(v, Types.INVALID)


def f_invalid(x: Any) -> Any:
    raise CelFunctionError(INVALID_MESSAGE.format(x.v))


def _eq_error(left: Any, right: Any) -> str | None:
    """cel-go equalMaps(left proxy, right) (1.38's attribute and capacity maps): the error it can return.
    It needs a map of the same size, then looks each key of the proxy up in both: an invalid value fails,
    and so does a Semver or Quantity compared with another type (their Equal: "no such overload"; a plain
    cel-go map ignores that error).  The Go map order decides between such an error and a mismatch found
    earlier; this picks the error.  An outer proxy (domain -> proxy) compares its inner proxies alike."""
    if not isinstance(left, dict) or not isinstance(right, dict) or len(left) != len(right):
        return None
    typed = tuple(t for t in (Types.S, Types.Q) if t is not None)
    for k, v in left.items():
        if isinstance(v, dict):
            other = right.get(k)
            if isinstance(other, dict):
                err = _eq_error(v, other)
                if err is not None:
                    return err
        elif _is_invalid(v):
            return INVALID_MESSAGE.format(v.v)
        elif isinstance(v, typed) and k in right:
            other = right[k]
            if other is not None and type(other) is not type(v):
                return NO_SUCH_OVERLOAD
    return None


def f_eq_check(left: Any, right: Any) -> bool:
    err = _eq_error(left, right)
    if err is not None:
        raise CelFunctionError(err)
    return True


def f_eq_ok(left: Any, right: Any) -> bool:
    """cel-go's `!=` is "Equal is not true": an error of equalMaps makes it true."""
    return _eq_error(left, right) is None


def _fmt_invalid(v: Any) -> str | None:
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            for item in x.values():
                if _is_invalid(item):
                    return item.v
                stack.append(item)
        elif isinstance(x, list):
            stack.extend(reversed(x))
    return None


def f_fmt_check(args: Any) -> bool:
    """ext/formatting.go formatMap: ``could not find key: %q`` for a value Find does not return."""
    name = _fmt_invalid(args)
    if name is not None:
        raise CelFunctionError(f'error during formatting: could not find key: "{name}"')
    return True


# ------------------------------------------------------------------------------ source spans
_BINARY = frozenset(
    ("_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_", "_+_", "_-_", "_*_", "_/_", "_%_", "_&&_", "_||_", "@in")
)


class _Spans:
    """Token spans (first, last token index) of the nodes of a checked AST in its source."""

    def __init__(self, ast, src: str):
        self.ast = ast
        self.toks = tokenize(src)
        self.match = matching(self.toks)
        self.rev = {v: k for k, v in self.match.items()}
        self.by_start = {t.start: k for k, t in enumerate(self.toks)}
        self.memo: dict[int, tuple[int, int] | None] = {}

    def tok(self, n) -> int | None:
        pos = self.ast.positions.get(n.id)
        return None if pos is None else self.by_start.get(pos)

    def _qualified_start(self, k: int) -> int:
        """Back from the identifier token k over `ident .` pairs (qualified names)."""
        toks = self.toks
        while k >= 2 and toks[k - 1].text == "." and toks[k - 2].kind == "ident":
            k -= 2
        return k

    def outer(self, n) -> tuple[int, int] | None:
        """The node's span including redundant parentheses around it."""
        s = self.span(n)
        if s is None:
            return None
        a, b = s
        toks, match = self.toks, self.match
        while a > 0 and b + 1 < len(toks) and toks[a - 1].text == "(" and match.get(a - 1) == b + 1:
            a, b = a - 1, b + 1
        return a, b

    def span(self, n) -> tuple[int, int] | None:
        if n.id in self.memo:
            return self.memo[n.id]
        self.memo[n.id] = None  # guards against cycles in odd ASTs
        out = self._span(n)
        self.memo[n.id] = out
        return out

    def _span(self, n) -> tuple[int, int] | None:
        toks, match = self.toks, self.match
        k = self.tok(n)
        if k is None:
            return None
        t = toks[k]
        if n.kind == "const":
            if t.text == "-" and k + 1 < len(toks):
                return k, k + 1
            return k, k
        if n.kind == "ident":
            if t.text == "." and k + 1 < len(toks):
                return self._qualified_start(k - 1) if k > 0 else k, k + 1
            return self._qualified_start(k), k
        if n.kind == "select":
            if n.test_only:  # has(x.f): position at "("
                if t.text == "(" and k in match and k > 0:
                    return k - 1, match[k]
                return None
            o = self.outer(n.operand) if n.operand is not None else None
            if o is None or t.text not in (".", ".?") or k + 1 >= len(toks):
                return None
            return o[0], k + 1
        if n.kind == "call":
            fn = n.value
            if fn in _BINARY and len(n.args) == 2 and n.operand is None:
                a, b = self.outer(n.args[0]), self.outer(n.args[1])
                return None if a is None or b is None else (a[0], b[1])
            if fn in ("!_", "-_") and len(n.args) == 1:
                b = self.outer(n.args[0])
                return None if b is None else (min(k, b[0]), b[1])
            if fn == "_?_:_" and len(n.args) == 3:
                a, b = self.outer(n.args[0]), self.outer(n.args[2])
                return None if a is None or b is None else (a[0], b[1])
            if fn in ("_[_]", "_[?_]") and len(n.args) == 2:
                a = self.outer(n.args[0])
                return None if a is None or k not in match else (a[0], match[k])
            if fn == "_?._" and len(n.args) == 2:
                a = self.outer(n.args[0])
                return None if a is None or k + 1 >= len(toks) else (a[0], k + 1)
            if t.text != "(" or k not in match:
                return None
            if n.operand is not None:
                a = self.outer(n.operand)
                return None if a is None else (a[0], match[k])
            if k == 0 or toks[k - 1].kind != "ident":
                return None
            return self._qualified_start(k - 1), match[k]
        if n.kind in ("list", "map"):
            return (k, match[k]) if k in match else None
        if n.kind == "struct":
            if k not in match or k == 0:
                return None
            return self._qualified_start(k - 1), match[k]
        if n.kind == "comprehension":
            if t.text != "(" or k not in match or k == 0:
                return None
            if k >= 3 and toks[k - 1].text == "bind" and toks[k - 2].text == "." and toks[k - 3].text == "cel":
                return k - 3, match[k]
            r = self.outer(n.iter_range) if n.iter_range is not None else None
            if r is None or r[1] >= k:
                return None
            return r[0], match[k]
        return None


# ------------------------------------------------------------------------------ the rewrite
def _t(ast, n) -> tuple:
    raw = ast.types.get(n.id)
    return decode_type(raw) if raw is not None else ("dyn",)


def _attr_map(t: tuple) -> bool:
    """Could hold a nameToAttributes proxy: map(_, dyn) (1.38 declares attribute values dyn) or dyn."""
    return t[0] == "dyn" or (t[0] == "map" and t[2][0] == "dyn")


def _optional_of(t: tuple) -> tuple | None:
    if t[0] == "abstract" and t[1] == "optional_type" and len(t[2]) == 1:
        return t[2][0]
    return None


def _is_attribute_value(ast, n) -> bool:
    """A field or index read of a map(_, dyn): an attribute value (checked by its own guard)."""
    if n.kind == "select" and not n.test_only and n.operand is not None:
        operand = n.operand
    elif n.kind == "call" and n.value == "_[_]" and len(n.args) == 2:
        operand = n.args[0]
    else:
        return False
    t = _t(ast, operand)
    return t[0] == "map" and t[2][0] == "dyn"


def _checked_value(var: str) -> str:
    return f"].map({var}, type({var}) == {INVALID_TYPE} ? {F_INVALID}({var}) : {var})[0]"


# long: one rewrite per CEL construct that needs a guard, in one pass over the AST
def guarded_source(ast, src: str, equality_only: bool = False) -> str | None:
    """The expression with every touch of an attribute value checked for the invalid stand-in; None when
    a node's source span cannot be found (then the caller keeps the normal program).  equality_only: just
    the map equality of 1.38's proxies (equalMaps also differs for valid values), for every device."""
    sp = _Spans(ast, src)
    toks = sp.toks
    # (offset, kind, depth, text): kind 0 = suffix insert, 1 = prefix insert; replacements separately
    inserts: list[tuple[int, int, int, str]] = []
    replace: dict[int, tuple[int, str]] = {}
    outer_ident = "device.attributes"

    def wrap(s: tuple[int, int], depth: int, prefix: str, suffix: str) -> None:
        inserts.append((toks[s[0]].start, 1, depth, prefix))
        inserts.append((toks[s[1]].end, 0, depth, suffix))

    def rep(k0: int, k1: int, text: str) -> bool:
        start, end = toks[k0].start, toks[k1].end
        if start in replace:
            return False
        replace[start] = (end, text)
        return True

    stack: list[tuple[Any, int, frozenset]] = [(ast.expr, 0, frozenset())]
    while stack:
        n, depth, guard_vars = stack.pop()
        kids = n.children()
        if n.kind == "comprehension":
            inner = guard_vars - {n.iter_var, n.iter_var2, n.accu_var}
            if n.iter_var2 and n.iter_range is not None and _attr_map(_t(ast, n.iter_range)):
                inner = inner | {n.iter_var2}
            for c in kids:
                stack.append((c, depth + 1, inner if c is n.loop_step or c is n.result else guard_vars))
            continue
        for c in kids:
            stack.append((c, depth + 1, guard_vars))
        if equality_only and not (n.kind == "call" and n.value in ("_==_", "_!=_")):
            continue
        if n.kind == "ident" and n.value in guard_vars:
            k = sp.tok(n)
            if k is None or toks[k].text != n.value:
                return None
            wrap((k, k), depth, "[", _checked_value(_AV))
            continue
        if n.kind == "select" and n.operand is not None:
            if n.operand.kind == "ident" and n.operand.value in (outer_ident, "device.capacity"):
                continue
            if not _attr_map(_t(ast, n.operand)):
                continue
            if n.test_only:
                k = sp.tok(n)
                o = sp.outer(n.operand)
                if k is None or o is None or k not in sp.match or k == 0 or toks[k - 1].text != "has":
                    return None
                close = sp.match[k]
                if o[1] + 2 != close - 1 or toks[o[1] + 1].text != ".":
                    return None
                f = n.value
                body = (
                    f"].map({_HAS}, has({_HAS}.{f}) ? (type({_HAS}.{f}) == {INVALID_TYPE} ? "
                    f"{F_INVALID}({_HAS}.{f}) : true) : false)[0]"
                )
                if not (rep(k - 1, k, "[") and rep(o[1] + 1, close, body)):
                    return None
                continue
            if _t(ast, n)[0] != "dyn":
                continue
            s = sp.span(n)
            if s is None:
                return None
            wrap(s, depth, "[", _checked_value(_AV))
            continue
        if n.kind != "call":
            continue
        fn = n.value
        if fn == "_[_]" and len(n.args) == 2:
            if _t(ast, n)[0] == "dyn" and _attr_map(_t(ast, n.args[0])):
                s = sp.span(n)
                if s is None:
                    return None
                wrap(s, depth, "[", _checked_value(_AV))
        elif fn in ("_[?_]", "_?._") and len(n.args) == 2:
            inner_t = _optional_of(_t(ast, n))
            operand_t = _t(ast, n.args[0])
            operand_t = _optional_of(operand_t) or operand_t
            if inner_t is not None and inner_t[0] == "dyn" and _attr_map(operand_t):
                s = sp.span(n)
                if s is None:
                    return None
                v = _OPT
                wrap(
                    s,
                    depth,
                    "[",
                    f"].map({v}, type({v}.orValue(null)) == {INVALID_TYPE} ? "
                    f"optional.of({F_INVALID}({v}.value())) : {v})[0]",
                )
        elif fn == "@in" and len(n.args) == 2 and _attr_map(_t(ast, n.args[1])):
            s, k = sp.span(n), sp.tok(n)
            if s is None or k is None or toks[k].text != "in" or not rep(k, k, ", "):
                return None
            v = _IN
            wrap(
                s,
                depth,
                "[[",
                f"]].map({v}, {v}[0] in {v}[1] && (type({v}[1]) != map || type({v}[1][{v}[0]]) != {INVALID_TYPE}))[0]",
            )
        elif fn in ("_==_", "_!=_") and len(n.args) == 2:
            left = n.args[0]
            lt = _t(ast, left)
            if lt[0] not in ("dyn", "map") or left.kind == "map":
                continue  # a map literal on the left is a plain cel-go map (its Equal ignores errors)
            if lt[0] == "dyn" and _is_attribute_value(ast, left):
                continue  # an attribute value is never a map (scalars and lists only)
            s, k = sp.span(n), sp.tok(n)
            if s is None or k is None or toks[k].text not in ("==", "!=") or not rep(k, k, ", "):
                return None
            if fn == "_==_":
                v = _EQ
                suffix = f"]].map({v}, {F_EQ_CHECK}({v}[0], {v}[1]) ? {v}[0] == {v}[1] : false)[0]"
            else:
                v = _NE
                suffix = f"]].map({v}, {F_EQ_OK}({v}[0], {v}[1]) ? {v}[0] != {v}[1] : true)[0]"
            wrap(s, depth, "[[", suffix)
        elif fn == "format" and n.operand is not None and len(n.args) == 1:
            s, k = sp.span(n), sp.tok(n)
            if s is None or k is None or k < 2 or toks[k - 1].text != "format" or toks[k - 2].text != ".":
                return None
            close = sp.match.get(k)
            if close is None or not (rep(k - 2, k, ", ") and rep(close, close, "")):
                return None
            v = _FMT
            wrap(s, depth, "[[", f']].map({v}, {F_FMT_CHECK}({v}[1]) ? {v}[0].format({v}[1]) : "")[0]')
    if not inserts and not replace:
        return src
    return _apply(src, inserts, replace)


def _apply(src: str, inserts: list[tuple[int, int, int, str]], replace: dict[int, tuple[int, str]]) -> str:
    """Suffixes close inner nodes first, prefixes open outer nodes first, then a replacement."""
    at: dict[int, list[tuple[int, int, str]]] = {}
    for off, kind, depth, text in inserts:
        at.setdefault(off, []).append((kind, -depth if kind == 0 else depth, text))
    out: list[str] = []
    p, n = 0, len(src)
    while True:
        for _kind, _order, text in sorted(at.get(p, ())):
            out.append(text)
        r = replace.get(p)
        if r is not None:
            out.append(r[1])
            p = r[0]
            continue
        if p >= n:
            break
        out.append(src[p])
        p += 1
    return "".join(out)
