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


def test_every_component_fact_names_its_upstream_source_and_semantics_reads_its_minor():
    from kubectl_dra.behaviour import COMPONENT_FACTS, Components

    for name in COMPONENT_FACTS:
        assert "upstream" in (getattr(Components, name).__doc__ or ""), name
    assert not Semantics.for_version((1, 34)).components.implicit_extended_resource_names
    assert Semantics.for_version((1, 35)).components.implicit_extended_resource_names
    assert [Components((1, m)).kubelet_reads_skip_node_operations for m in (36, 37, 38)] == [False, True, True]


def test_the_analysis_compares_no_kubernetes_version_inline():
    """Version facts are named (behaviour.py), so that porting a minor is adding a column: no `version < (1, N)`
    in analyze/ outside the allocator port's own rule sets (which read sem.behaviour) and the queue's gangs."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "kubectl_dra" / "analyze"
    inline = re.compile(r"version\s*(\[\d\])?\s*[<>]=?\s*\(?\d|minor\s*[<>]=?\s*\d")
    found = [
        f"{p.relative_to(root)}:{i}"
        for p in sorted(root.rglob("*.py"))
        # (gang.py's preemption-policy rule reads the minor with PodGroupPreemptionPolicy, a gate fact: features.py)
        if "allocator" not in p.parts and p.name != "gang.py"
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if inline.search(line)
    ]
    assert not found, found
