"""Source rewrites that keep ``cel.bind`` away from cel-cpp.

cel-expr-python 0.1.3 (cel-cpp) evaluates ``cel.bind`` through a lazily initialised slot.  A
comprehension that stops early (``exists``/``all`` short-circuiting before the last element) leaves
its iteration slot set, and a following bind that lands on the same slot reads that stale value
instead of its initialiser: ``[0, 1, 2].exists(x, x == 1) && cel.bind(a, 5, a == 2)`` is true there.

Two bind-free spellings are produced:

* ``map_binds``: ``cel.bind(v, init, expr)`` -> ``[init].map(v, expr)[0]``.  Same scoping and types,
  but ``init`` is evaluated eagerly (one extra comprehension iteration).  cel-go evaluates the
  initialiser lazily (``cel.bind(a, 1 / 0, true)`` is true), so an *error* result of this form may
  come from an initialiser Kubernetes never evaluates;
* ``inline_binds``: every reference of ``v`` in ``expr`` replaced by ``(init)``: exactly cel-go's lazy
  semantics (an initialiser is only evaluated where it is used; CEL is side-effect free), at the price
  of evaluating it once per use.  Used only to re-check an error result of the first form.  Returns
  None when a rename could capture a variable or the text would grow too much.
"""

from __future__ import annotations

from ._source import Token, matching, tokenize

MAX_INLINE_CHARS = 64 * 1024


class _NoInline(Exception):
    pass


def _binds(toks: list[Token], match: dict[int, int]):
    """Yield (k, var_idx, comma1, comma2, close) token indices of every well-formed cel.bind call."""
    for k in range(len(toks) - 4):
        if (
            toks[k].text != "cel"
            or toks[k].kind != "ident"
            or toks[k + 1].text != "."
            or toks[k + 2].text != "bind"
            or toks[k + 3].text != "("
            or k + 3 not in match
        ):
            continue
        if k > 0 and toks[k - 1].text in (".", ".?"):
            continue
        close = match[k + 3]
        commas = []
        j = k + 4
        while j < close:
            if j in match:
                j = match[j] + 1
                continue
            if toks[j].text == ",":
                commas.append(j)
            j += 1
        if len(commas) != 2 or commas[0] != k + 5 or toks[k + 4].kind != "ident":
            continue
        yield k, k + 4, commas[0], commas[1], close


def has_bind(src: str) -> bool:
    if "bind" not in src:
        return False
    toks = tokenize(src)
    return next(_binds(toks, matching(toks)), None) is not None


def map_binds(src: str) -> str:
    toks = tokenize(src)
    match = matching(toks)
    edits = []
    for k, v, c1, c2, close in _binds(toks, match):
        edits.append((toks[k].start, toks[c1].end, "["))
        edits.append((toks[c2].start, toks[c2].end, f"].map({toks[v].text},"))
        edits.append((toks[close].start, toks[close].end, ")[0]"))
    if not edits:
        return src
    out = src
    for start, end, text in sorted(edits, reverse=True):
        out = out[:start] + text + out[end:]
    return out


def _declares(toks: list[Token], names: set[str]) -> bool:
    """Conservatively: is any of ``names`` introduced as a comprehension/bind variable (an identifier
    argument directly followed by a comma)?"""
    for j, t in enumerate(toks):
        if (
            t.kind == "ident"
            and t.text in names
            and j + 1 < len(toks)
            and toks[j + 1].text == ","
            and j > 0
            and toks[j - 1].text in ("(", ",")
        ):
            return True
    return False


def _inline(src: str, internal: frozenset = frozenset()) -> str:
    toks = tokenize(src)
    match = matching(toks)
    first = next(_binds(toks, match), None)
    if first is None:
        return src
    k, v, c1, c2, close = first
    name = toks[v].text
    init = _inline(src[toks[c1].end : toks[c2].start], internal).strip()
    body = _inline(src[toks[c2].end : toks[close].start], internal)
    btoks = tokenize(body)
    free = {t.text for t in tokenize(init) if t.kind == "ident"} - internal
    if _declares(btoks, {name} | free):
        raise _NoInline
    pieces, last = [], 0
    for j, t in enumerate(btoks):
        if (
            t.kind == "ident"
            and t.text == name
            and not (j > 0 and btoks[j - 1].text in (".", ".?"))
            and not (j + 1 < len(btoks) and btoks[j + 1].text == "(")
        ):
            pieces.append(body[last : t.start])
            pieces.append(f"({init})")
            last = t.end
    pieces.append(body[last:])
    out = src[: toks[k].start] + "(" + "".join(pieces).strip() + ")" + _inline(src[toks[close].end :], internal)
    if len(out) > MAX_INLINE_CHARS:
        raise _NoInline
    return out


def inline_binds(src: str, internal: frozenset = frozenset()) -> str | None:
    """internal: variables of rewrites that are bound wherever they occur (never free in an initialiser)."""
    try:
        return _inline(src, internal)
    except (_NoInline, RecursionError):
        return None
