"""Upstream's own allocator test table (allocatortesting.TestAllocator of each minor), recorded through the real
allocator by tests/oracle/table/record.sh and compared like the generated scenarios (issue 11, docs/fidelity.md).
Marked `oracle`: it builds what it needs and never skips."""

from __future__ import annotations

import json

import pytest

from . import gates, upstream_table

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("version", list(gates.VERSIONS))
def test_engine_agrees_with_upstreams_own_allocator_tests(version):
    report = upstream_table.run([version], log=lambda _m: None)[version]
    tally, reasons, disagreements = report["tally"], report["reasons"], report["disagreements"]
    # The table has well over a hundred cases per minor, and their per-device reasons are compared too.
    assert sum(tally.values()) > 150, tally
    assert reasons["compared"] > 500 and reasons["skipped"] < reasons["compared"] / 50, reasons
    shown = "\n".join(f"{d['id']}: {json.dumps(d['diffs'][0])[:500]}" for d in disagreements[:10])
    assert not disagreements, f"{len(disagreements)} case(s) of upstream's own table disagree:\n{shown}"
    # Every case is decided: the alpha features upstream's table exercises (1.37/1.38 counter compatibility groups and
    # derived attributes, gates on and off) are modelled, so none is answered "undetermined" (DRA016).
    assert not tally.get("inconclusive"), tally
