"""The CEL selectors of DeviceClasses, ResourceClaims and ResourceClaimTemplates: DRA701 (does not compile, with
cel-go's position mapped to the file), DRA702 (estimated cost over the limit), DRA703 (an attribute or capacity no
reference device has) and DRA709 (an attribute compared with a literal of another type)."""

from __future__ import annotations

import difflib
import re

from kubectl_dra.model.meta import name_of

# device.attributes["domain"].name, device.capacity["domain"].name, and the ["name"] index form
_REF = re.compile(r'device\.(attributes|capacity)\[\s*"([^"]+)"\s*\](?:\.([A-Za-z_][A-Za-z0-9_]*)|\[\s*"([^"]+)"\s*\])')
_CEL_POS = re.compile(r"<input>:(\d+):(\d+):")
# an attribute compared with a literal: device.attributes["d"].name <op> "x" | 12 | true (and the literal first)
_ATTR = r'device\.attributes\[\s*"([^"]+)"\s*\]\.([A-Za-z_][A-Za-z0-9_]*)'
_LIT = r'("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false)'
_CMP = re.compile(rf"{_ATTR}\s*(==|!=|<=|>=|<|>)\s*{_LIT}|{_LIT}\s*(==|!=|<=|>=|<|>)\s*{_ATTR}")
_LIT_TYPE = {"string": "a string", "int": "a number", "bool": "a bool"}
_FIX = {
    "version": 'semver("...") (or .isGreaterThan / .compareTo)',
    "int": "a number",
    "bool": "true or false",
    "string": 'a "string"',
}
SELECTOR_MAX_COST = 1_000_000  # k8s.io/api resource/v1 CELSelectorExpressionMaxCost, checked by API validation


def selector_paths(m) -> list[tuple[tuple, str]]:
    """(path of the expression, expression) of every CEL selector in a manifest."""
    o, kind, out = m.obj, m.obj.get("kind"), []

    def sels(base: tuple, lst):
        for i, s in enumerate(lst or []):
            expr = ((s or {}).get("cel") or {}).get("expression") if isinstance(s, dict) else None
            if isinstance(expr, str):
                out.append((base + (i, "cel", "expression"), expr))

    spec = o.get("spec") or {}
    if kind == "DeviceClass":
        sels(("spec", "selectors"), spec.get("selectors"))
    elif kind in ("ResourceClaim", "ResourceClaimTemplate"):
        base = ("spec",) if kind == "ResourceClaim" else ("spec", "spec")
        cs = spec if kind == "ResourceClaim" else (spec.get("spec") or {})
        for i, r in enumerate((cs.get("devices") or {}).get("requests") or []):
            if not isinstance(r, dict):
                continue
            rp = base + ("devices", "requests", i)
            if isinstance(r.get("exactly"), dict):
                sels(rp + ("exactly", "selectors"), r["exactly"].get("selectors"))
            sels(rp + ("selectors",), r.get("selectors"))  # v1beta1 shape
            for j, sub in enumerate(r.get("firstAvailable") or []):
                if isinstance(sub, dict):
                    sels(rp + ("firstAvailable", j, "selectors"), sub.get("selectors"))
    return out


def check(ctx, m) -> None:
    for path, expr in selector_paths(m):
        compiled, err = ctx.evaluator.compile(expr)
        if compiled is None:
            _compile_error(ctx, m, path, expr, err)
            continue
        what = f"{m.obj.get('kind')} {name_of(m.obj)}"
        cost = getattr(compiled, "estimated_cost", 0) or 0
        if cost > SELECTOR_MAX_COST:
            ctx.add(
                m,
                path,
                "DRA702",
                f"{what}: the selector's estimated worst-case cost is {cost:,.0f}, over Kubernetes' "
                f"limit of {SELECTOR_MAX_COST:,} (CELSelectorExpressionMaxCost): the API server refuses it",
                estimatedCost=round(cost),
            )
        _types(ctx, m, path, expr, what)
        _names(ctx, m, path, expr, what)


def _compile_error(ctx, m, path: tuple, expr: str, err) -> None:
    line, col = m.position(path)
    pos = _CEL_POS.search(err or "")
    if pos:  # cel-go's line and column inside the expression, from where its text starts in the file
        el, ec = int(pos.group(1)), int(pos.group(2))
        if el == 1:
            col = col + ec - 1
        else:  # a later line of a block scalar: its indentation in the file plus cel-go's column
            line += el - 1
            text = m.lines[line - 1] if 0 < line <= len(m.lines) else ""
            sub = expr.splitlines()[el - 1] if el - 1 < len(expr.splitlines()) else ""
            col = max(1, len(text) - len(sub)) + ec if text.endswith(sub) else ec
    code = "DRA702" if "cost" in (err or "").lower() else "DRA701"
    what = f"{m.obj.get('kind')} {name_of(m.obj)}"
    ctx.add_at(m, line, col, code, f"{what}: {' '.join(str(err).split())}", expression=expr)


def _types(ctx, m, path: tuple, expr: str, what: str) -> None:
    for cmp_ in _CMP.finditer(expr):
        g = cmp_.groups()
        domain, short, lit = (g[0], g[1], g[3]) if g[0] else (g[5], g[6], g[4])
        have = (ctx.attrs.get(domain) or {}).get(short)
        lit_type = "string" if lit.startswith('"') else "bool" if lit in ("true", "false") else "int"
        if have and have in _FIX and have != lit_type:
            ctx.add(
                m,
                path,
                "DRA709",
                f"{what}: attribute {domain}/{short} is a {have} in the reference inventory but is "
                f"compared with {_LIT_TYPE[lit_type]} ({lit}): compare it with {_FIX[have]}",
                attribute=f"{domain}/{short}",
                attributeType=have,
                literal=lit,
            )


def _names(ctx, m, path: tuple, expr: str, what: str) -> None:
    for ref in _REF.finditer(expr):
        section, domain, short = ref.group(1), ref.group(2), ref.group(3) or ref.group(4)
        known = ctx.attrs if section == "attributes" else ctx.caps
        if not known or short in known.get(domain, {}):
            continue
        pool = sorted({n for d in known.values() for n in d})
        guess = difflib.get_close_matches(short, pool, n=1)
        noun = "attribute" if section == "attributes" else "capacity"
        ctx.add(
            m,
            path,
            "DRA703",
            f'{what}: no device in the reference inventory has {noun} "{domain}/{short}"'
            + (f' (did you mean "{guess[0]}"?)' if guess else ""),
            # where the reference is, on the expression's first line
            column_offset=ref.start() if "\n" not in expr[: ref.start()] else 0,
            section=section,
            domain=domain,
            name=short,
            suggestion=guess[0] if guess else None,
        )
