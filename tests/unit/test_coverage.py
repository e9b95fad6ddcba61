"""coverage.py finds the unmodelled fields an object actually sets (the classification itself is checked against
the Go types in tests/fidelity/test_api_coverage.py)."""

from __future__ import annotations

from kubectl_dra.analyze.pod.coverage import coverage_findings, unmodelled_fields


def test_a_set_field_is_found_at_any_depth_and_an_empty_one_is_not():
    s = {
        "spec": {
            "devices": [
                {"name": "a"},
                {"name": "b", "nodeAllocatableResources": {"cpu": {"overhead": {"perPod": "1"}}}},
            ]
        }
    }
    assert unmodelled_fields("ResourceSlice", s) == ["spec.devices[].nodeAllocatableResources{}.overhead.perPod"]
    s["spec"]["devices"][1]["nodeAllocatableResources"]["cpu"]["overhead"]["perPod"] = ""
    assert unmodelled_fields("ResourceSlice", s) == []


def test_map_valued_fields():
    s = {"spec": {"devices": [{"nodeAllocatableResources": {"cpu": {"mapping": {"capacityKey": "cores"}}}}]}}
    assert unmodelled_fields("ResourceSlice", s) == ["spec.devices[].nodeAllocatableResources{}.mapping.capacityKey"]


def test_each_object_and_field_is_reported_once_with_code_dra016():
    s = {
        "metadata": {"name": "s"},
        "spec": {"devices": [{"name": "a", "nodeAllocatableResources": {"cpu": {"mapping": {"capacityKey": "c"}}}}]},
    }
    fs = coverage_findings([("ResourceSlice", s), ("ResourceSlice", s)])
    assert [f.code for f in fs] == ["DRA016"]
    assert "DRANodeAllocatableResources" in fs[0].message


def test_derived_attributes_and_compatibility_groups_are_modelled():
    """Both alpha fields of 1.37 are ported (allocator/derived.py, compat.py): no DRA016, gate on or off."""
    t = {
        "spec": {
            "spec": {
                "devices": {
                    "requests": [{"name": "r", "exactly": {"derivedAttributes": [{"name": "d/x", "expression": "1"}]}}]
                }
            }
        }
    }
    assert unmodelled_fields("ResourceClaimTemplate", t) == []
    s = {"spec": {"devices": [{"name": "b", "consumesCounters": [{"counterSet": "x", "compatibilityGroups": ["g"]}]}]}}
    assert unmodelled_fields("ResourceSlice", s) == []


def test_modelled_fields_are_not_reported():
    s = {"spec": {"skipNodeOperations": ["*"], "devices": [{"name": "a", "attributes": {"x": {"int": 1}}}]}}
    assert unmodelled_fields("ResourceSlice", s) == []
