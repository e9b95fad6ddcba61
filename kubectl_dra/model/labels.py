"""Label selectors as kubectl's `-l` takes them (k8s.io/apimachinery/pkg/labels Parse): `a=b`, `a==b`, `a!=b`,
`a in (x,y)`, `a notin (x,y)`, `a` (exists), `!a` (does not exist), joined by commas. The API server evaluates them
for live reads; offline dumps are filtered with the same rules."""

from __future__ import annotations

import re

from kubectl_dra.errors import DraError

_SET = re.compile(r"^\s*([A-Za-z0-9._/-]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
_CMP = re.compile(r"^\s*([A-Za-z0-9._/-]+)\s*(==|!=|=)\s*([A-Za-z0-9._-]*)\s*$")
_KEY = re.compile(r"^\s*(!?)\s*([A-Za-z0-9._/-]+)\s*$")


def _split(text: str) -> list[str]:
    """Split at commas outside parentheses."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [x for x in out if x.strip()]


def parse_selector(text: str) -> list[tuple[str, str, frozenset]]:
    """[(key, op, values)] with op in =, !=, in, notin, exists, !exists; a one-line error for bad syntax."""
    reqs = []
    for part in _split(text or ""):
        m = _SET.match(part)
        if m:
            values = frozenset(v.strip() for v in m.group(3).split(",") if v.strip())
            reqs.append((m.group(1), m.group(2), values))
            continue
        m = _CMP.match(part)
        if m:
            reqs.append((m.group(1), "!=" if m.group(2) == "!=" else "=", frozenset({m.group(3)})))
            continue
        m = _KEY.match(part)
        if m:
            reqs.append((m.group(2), "!exists" if m.group(1) else "exists", frozenset()))
            continue
        raise DraError(f"unable to parse requirement {part.strip()!r} of label selector {text!r}")
    return reqs


def matches(reqs: list[tuple[str, str, frozenset]], labels: dict | None) -> bool:
    labels = labels or {}
    for key, op, values in reqs:
        present = key in labels
        val = labels.get(key)
        if op in ("=", "in") and not (present and val in values):
            return False
        if op in ("!=", "notin") and present and val in values:
            return False
        if op == "exists" and not present:
            return False
        if op == "!exists" and present:
            return False
    return True


def selector_string(label_selector: dict | None) -> str:
    """A workload's metav1.LabelSelector (matchLabels, matchExpressions) as the `-l` string the API server takes."""
    sel = label_selector or {}
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for e in sel.get("matchExpressions") or []:
        key, op, values = e.get("key", ""), e.get("operator", ""), sorted(e.get("values") or [])
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
        else:
            raise DraError(f"label selector operator {op!r} is not valid")
    return ",".join(parts)
