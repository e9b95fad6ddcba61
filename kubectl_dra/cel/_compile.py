"""Compiling a selector: the same-length renames cel-cpp needs, then the repairs of what cel-cpp rejects but
cel-go accepts (receiver-style conversions, string(<IP|CIDR>), cross-type numeric comparisons), and cel-go's
wording of what stays an error."""

from __future__ import annotations

import re

from ._common import (
    CONVERSION_STANDINS,
    GLOBAL_ONLY,
    K8S_STRING,
    LISTS_RANGE,
    MAX_EXPRESSION_BYTES,
    RENAMES,
    UNRENAME,
    CelCompileError,
)
from ._engine import Engine
from ._messages import EMPTY_SYNTAX_ERROR, apply_inserts, compile_message, remap_issues, source_offset, to_original
from ._source import apply_edits, left_operand_start, matching, tokenize


def check_length(expression: str) -> None:
    """The errors decided before the engine is needed: too long, empty."""
    if len(expression.encode("utf-8")) > MAX_EXPRESSION_BYTES:
        raise CelCompileError(f"Too long: may not be more than {MAX_EXPRESSION_BYTES} bytes")
    if expression == "":
        # cel-go's parser reports the end of an empty input at column 0, with no source line.
        raise CelCompileError("compilation failed: " + EMPTY_SYNTAX_ERROR)


def compile_source(eng: Engine, expression: str, list_attributes: bool):
    """(checked, the source checked, its tokens, the edits made: a re-tokenised source when not empty)."""
    toks = tokenize(expression)
    edits = []
    for k, t in enumerate(toks):
        if (
            t.kind == "ident"
            and t.text in RENAMES
            and k > 0
            and toks[k - 1].text in (".", ".?")
            and k + 1 < len(toks)
            and toks[k + 1].text == "("
        ):
            edits.append((t.start, t.end, RENAMES[t.text]))
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
        checked, checked_src = repair(eng, checked_src, toks, str(e), list_attributes)
        edits = edits or [None]  # force re-tokenising the repaired source
    return checked, checked_src, toks, edits


def repair(eng: Engine, src: str, toks, err: str, list_attributes: bool):
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
        off = source_offset(src, int(u.group(1)), int(u.group(2)))
        name = u.group(3)
        k = off - len(name)
        if k > 0 and src[k:off] == name and src[off : off + 1] == "(" and src[:k].rstrip().endswith("."):
            fixed = src[:k] + CONVERSION_STANDINS[name] + src[off:]
            try:
                return eng.env.compile(fixed), fixed
            except RuntimeError as e:
                return repair(eng, fixed, tokenize(fixed), str(e), list_attributes)
    m = re.search(
        r"<input>:(\d+):(\d+): found no matching overload for 'string' applied to '\((net\.IP|net\.CIDR)\)'", err
    )
    if m:
        # string(<IP|CIDR>) exists in Kubernetes; cel-cpp's string() cannot be extended, so the call
        # is renamed (same length) to a library function
        off = source_offset(src, int(m.group(1)), int(m.group(2)))
        k = off
        while k > 0 and (src[k - 1].isalnum() or src[k - 1] == "_"):
            k -= 1
        if src[k:off] == "string":
            fixed = src[:k] + K8S_STRING + src[off:]
            try:
                return eng.env.compile(fixed), fixed
            except RuntimeError as e:
                return repair(eng, fixed, tokenize(fixed), str(e), list_attributes)
    return _repair_numeric(eng, src, toks, err, list_attributes)


def _repair_numeric(eng: Engine, src: str, toks, err: str, list_attributes: bool):
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
            start = left_operand_start(ctoks, match, op)
            if start is None:
                new = []
                break
            new.append((to_original(start, inserts), "dyn("))
            new.append((to_original(op, inserts), ")"))
        if not new:
            break
        inserts = sorted(inserts + new, key=lambda x: x[0])
        current = apply_inserts(src, inserts)
        try:
            return eng.env.compile(current), current
        except RuntimeError as e:
            last_err = str(e)
    if inserts and last_err != err:
        text = compile_message(last_err, current, eng.env, any_attributes=not list_attributes)
        raise CelCompileError("compilation failed: " + remap_issues(text, current, src, inserts)) from None
    raise CelCompileError(
        "compilation failed: "
        + compile_message(
            err,
            src,
            eng.env,
            any_attributes=not list_attributes,
            extra=hidden_member_issues(eng, src, list_attributes),
        )
    ) from None


def hidden_member_issues(eng: Engine, src: str, list_attributes: bool) -> list[tuple[int, str]]:
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
    for stand_in, name in UNRENAME.items():
        display = display.replace(stand_in, name)
    out: list[tuple[int, str]] = []
    toks = tokenize(src)
    match = matching(toks)
    rev = {v: k for k, v in match.items()}
    for k, t in enumerate(toks):
        name = UNRENAME.get(t.text, t.text)
        if not (
            t.kind == "ident"
            and (name in GLOBAL_ONLY or name in CONVERSION_STANDINS)
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
        any_attrs = not list_attributes
        recv = (
            "any" if any_attrs and _checks.attribute_derived(ast.expr) else format_type(_checks.type_of(ast, ast.expr))
        )
        off = toks[k + 1].start
        out.append(
            (
                off,
                _checks.format_issue(display, off, f"found no matching overload for '{name}' applied to '{recv}.()'"),
            )
        )
    return out
