"""The allocator's named facts: each says where upstream it comes from, and the matrix covers every channel."""

from __future__ import annotations

from kubectl_dra.behaviour import FACTS, Behaviour
from kubectl_dra.features import Semantics


def test_every_fact_names_its_upstream_source():
    for name in FACTS:
        doc = getattr(Behaviour, name).__doc__ or ""
        assert "upstream" in doc, name


def test_semantics_reads_the_facts_of_its_channel():
    s = Semantics.for_version((1, 36), {"DRAConsumableCapacity": False, "DRADeviceBindingConditions": False})
    assert s.channel == "stable" and not s.behaviour.resume_search
    assert Semantics.for_version((1, 36)).behaviour.resume_search
    assert Behaviour((1, 35), "stable").old_rules_1_34 and not Behaviour((1, 35), "incubating").old_rules_1_34
    assert [Behaviour((1, m), "incubating").distinct_attribute for m in (34, 35, 36, 37)] == [
        "pointer",
        "per-request",
        "per-request",
        "all",
    ]
