"""coverage.py finds the unmodelled fields an object actually sets (the classification itself is checked against
the Go types in tests/fidelity/test_api_coverage.py)."""

from __future__ import annotations

from kubectl_dra.analyze.pod.coverage import coverage_findings, unmodelled_fields


def test_a_set_field_is_found_at_any_depth_and_an_empty_one_is_not():
    s = {
        "spec": {
            "devices": [
                {"name": "a"},
                {"name": "b", "consumesCounters": [{"counterSet": "x", "compatibilityGroups": ["g"]}]},
            ]
        }
    }
    assert unmodelled_fields("ResourceSlice", s) == ["spec.devices[].consumesCounters[].compatibilityGroups[]"]
    s["spec"]["devices"][1]["consumesCounters"][0]["compatibilityGroups"] = []
    assert unmodelled_fields("ResourceSlice", s) == []


def test_map_valued_fields_and_templates():
    s = {"spec": {"devices": [{"nodeAllocatableResources": {"cpu": {"mapping": {"capacityKey": "cores"}}}}]}}
    assert unmodelled_fields("ResourceSlice", s) == ["spec.devices[].nodeAllocatableResources{}.mapping.capacityKey"]
    t = {
        "spec": {
            "spec": {
                "devices": {
                    "requests": [{"name": "r", "exactly": {"derivedAttributes": [{"name": "d", "expression": "1"}]}}]
                }
            }
        }
    }
    assert unmodelled_fields("ResourceClaimTemplate", t) == [
        "spec.spec.devices.requests[].exactly.derivedAttributes[].expression",
        "spec.spec.devices.requests[].exactly.derivedAttributes[].name",
    ]


def test_each_object_and_field_is_reported_once_with_code_dra016():
    c = {
        "metadata": {"name": "c"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "r",
                        "firstAvailable": [{"name": "s", "derivedAttributes": [{"name": "d", "expression": "1"}]}],
                    }
                ]
            }
        },
    }
    fs = coverage_findings([("ResourceClaim", c), ("ResourceClaim", c)])
    assert [f.code for f in fs] == ["DRA016", "DRA016"]  # expression and name, once each
    assert "DRADerivedAttributes" in fs[0].message


def test_modelled_fields_are_not_reported():
    s = {"spec": {"skipNodeOperations": ["*"], "devices": [{"name": "a", "attributes": {"x": {"int": 1}}}]}}
    assert unmodelled_fields("ResourceSlice", s) == []
