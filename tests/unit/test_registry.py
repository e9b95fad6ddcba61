"""Every finding code is reached by a test: a scenario golden or a test that names it (as ruff's registry test
requires docs for every rule). A new code without a test, or a code no test reaches any more, fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path

from kubectl_dra.findings.registry import REGISTRY

TESTS = Path(__file__).resolve().parents[1]
CODE = re.compile(r"\bDRA\d{3}\b")


def emitted_by_goldens() -> set[str]:
    out = set()
    for p in (TESTS / "scenarios").glob("*/expected.json"):
        out |= {f["code"] for f in json.loads(p.read_text()).get("findings", [])}
    return out


def named_by_tests() -> set[str]:
    out = set()
    for p in TESTS.rglob("test_*.py"):
        if p.name != Path(__file__).name:
            out |= set(CODE.findall(p.read_text()))
    return out


def test_every_code_is_reached_by_a_golden_or_named_by_a_test():
    live = {c for c, r in REGISTRY.items() if not r.retired}
    missing = sorted(live - emitted_by_goldens() - named_by_tests())
    assert not missing, f"finding codes no test reaches: {missing}"


def test_a_retired_code_is_never_emitted():
    """Its number stays in the registry (codes are never reused) and in docs/codes, but no code makes it."""
    src = TESTS.parent / "kubectl_dra"
    retired = {c for c, r in REGISTRY.items() if r.retired}
    for p in src.rglob("*.py"):
        if p.name != "registry.py":
            assert not retired & set(CODE.findall(p.read_text())), p
    assert not retired & emitted_by_goldens()


def test_tests_name_only_registered_codes():
    unknown = sorted(named_by_tests() - set(REGISTRY))
    assert not unknown, f"tests name codes the registry does not have: {unknown}"
