"""docs/output.md documents every key the machine output emits: for each kind it has a section for, every top-level
key of every golden scenario's expected.json of that kind has a row, and every key of the `queue` objects (explain
pod's place, status's order) is named in its row. A key added to a report without a line in the doc fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "output.md").read_text()
ENVELOPE = {"apiVersion", "kind"}


def _sections() -> dict[str, str]:
    parts = re.split(r"^## `kind: (\w+)`", DOC, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _rows(section: str) -> dict[str, str]:
    """Documented key -> its row; a row may name several keys (`findings[]`, `unseen[]`, `semantics`)."""
    out = {}
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        first = line.split("|")[1]
        for key in re.findall(r"`([^`]+)`", first):
            out[re.split(r"[.\[]", key)[0]] = line
    return out


def _emitted() -> dict[str, dict[str, set]]:
    """kind -> top-level key -> the keys of its value where it is an object (union over the goldens)."""
    out: dict[str, dict[str, set]] = {}
    for f in sorted((ROOT / "tests" / "scenarios").glob("*/expected.json")):
        doc = json.loads(f.read_text())
        for x in doc.get("items") if doc.get("kind") == "List" else [doc]:
            if not isinstance(x, dict) or "kind" not in x:
                continue
            keys = out.setdefault(x["kind"], {})
            for k, v in x.items():
                keys.setdefault(k, set()).update(v.keys() if isinstance(v, dict) else ())
    return out


def test_every_emitted_key_has_a_row_in_its_kind_s_section():
    sections, emitted = _sections(), _emitted()
    missing = []
    for kind, keys in emitted.items():
        if kind not in sections:
            continue
        rows = _rows(sections[kind])
        missing += [f"{kind}.{k}" for k in sorted(set(keys) - ENVELOPE - set(rows))]
    assert not missing, f"docs/output.md does not document {missing}"


def test_the_queue_objects_name_every_key():
    sections, emitted = _sections(), _emitted()
    for kind in ("Diagnosis", "Status"):
        row = _rows(sections[kind])["queue"]
        unnamed = sorted(k for k in emitted[kind]["queue"] if f"`{k}" not in row)
        assert not unnamed, f"{kind}.queue: docs/output.md does not name {unnamed}"


def test_the_sections_are_the_kinds_the_goldens_emit():
    assert {"Diagnosis", "Status", "DeviceInventory", "MatchResult", "RequestFit"} <= set(_sections()), _sections()
