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
    missing = sorted(set(REGISTRY) - emitted_by_goldens() - named_by_tests())
    assert not missing, f"finding codes no test reaches: {missing}"


def test_tests_name_only_registered_codes():
    unknown = sorted(named_by_tests() - set(REGISTRY))
    assert not unknown, f"tests name codes the registry does not have: {unknown}"
