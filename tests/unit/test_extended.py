"""DRA-backed extended resources: the claim kube-scheduler builds from container requests, per minor.

Expected values follow upstream's createRequestsAndMappings (1.35-1.37) and createDeviceRequests (1.34), read in
pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go and its _test.go."""

from __future__ import annotations

import builders
from builders import container as ctr
from builders import dclass

from kubectl_dra.analyze.pod.extended import (
    build_requests,
    class_mapping,
    find_claim,
    is_dra_extended_resource_name,
    is_extended_resource_name,
    pod_extended_resources,
)
from kubectl_dra.analyze.pod.extended_nodes import device_plugin_nodes
from kubectl_dra.features import Semantics

S37 = Semantics.for_version((1, 37))
S34 = Semantics.for_version((1, 34), {"DRAExtendedResource": True})
S35_OFF = Semantics.for_version((1, 35))


def cls(name, ern=None, created="2026-01-01T00:00:00Z"):
    c = dclass(name, "", **({"extendedResourceName": ern} if ern else {}))
    c["metadata"]["creationTimestamp"] = created
    return c


def pod(containers, init=()):
    c, i = list(containers), list(init)
    return builders.pod("p", (), uid="u1", containers=c, phase=None, initContainers=i)


def plan(p, classes, sem=S37):
    ext = pod_extended_resources(p, classes, sem)
    return build_requests(ext, ext.resources, sem)


def test_extended_resource_names_follow_the_core_helper():
    assert is_extended_resource_name("example.com/gpu")
    assert not is_extended_resource_name("cpu")
    assert not is_extended_resource_name("kubernetes.io/gpu")
    assert not is_extended_resource_name("deviceclass.resource.kubernetes.io/gpu")
    assert not is_extended_resource_name("example.com/bad name")
    # 1.35+ accepts the implicit class name, 1.34's scheduler does not.
    assert is_dra_extended_resource_name("deviceclass.resource.kubernetes.io/gpu", S37)
    assert not is_dra_extended_resource_name("deviceclass.resource.kubernetes.io/gpu", S34)


def test_newest_class_wins_a_shared_name_and_equal_timestamps_go_to_the_lower_name():
    old, new = (
        cls("a-old", "example.com/gpu", "2026-01-01T00:00:00Z"),
        cls("z-new", "example.com/gpu", "2026-02-01T00:00:00Z"),
    )
    m = class_mapping([new, old], S37)
    assert m["example.com/gpu"]["metadata"]["name"] == "z-new"
    assert m["deviceclass.resource.kubernetes.io/a-old"] is old  # every class keeps its implicit name
    tie = class_mapping([cls("b", "example.com/gpu"), cls("a", "example.com/gpu")], S37)
    assert tie["example.com/gpu"]["metadata"]["name"] == "a"


def test_1_34_maps_only_the_explicit_name_when_one_is_set():
    m = class_mapping([cls("gpu", "example.com/gpu"), cls("fpga")], S34)
    assert set(m) == {"example.com/gpu", "deviceclass.resource.kubernetes.io/fpga"}


def test_request_names_count_init_containers_first_and_the_sorted_request_keys():
    p = pod([ctr("app", cpu="1", example_com__gpu="2")])
    reqs, maps = plan(p, [cls("gpu", "example.com/gpu")])
    assert reqs == [
        {
            "name": "container-0-request-1",
            "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2},
        }
    ]
    assert maps == [{"containerName": "app", "resourceName": "example.com/gpu", "requestName": "container-0-request-1"}]


def test_an_init_container_reuses_later_requests_and_asks_only_for_the_rest():
    p = pod([ctr("app", example_com__gpu="1")], init=[ctr("warmup", example_com__gpu="3")])
    reqs, maps = plan(p, [cls("gpu", "example.com/gpu")])
    assert [(r["name"], r["exactly"]["count"]) for r in reqs] == [
        ("container-0-request-0", 2),
        ("container-1-request-0", 1),
    ]
    assert [(m["containerName"], m["requestName"]) for m in maps] == [
        ("app", "container-1-request-0"),
        ("warmup", "container-1-request-0"),
        ("warmup", "container-0-request-0"),
    ]


def test_only_the_largest_init_request_is_kept_and_mappings_follow_it():
    p = pod([ctr("app", example_com__gpu="1")], init=[ctr("i0", example_com__gpu="2"), ctr("i1", example_com__gpu="4")])
    reqs, maps = plan(p, [cls("gpu", "example.com/gpu")])
    assert [(r["name"], r["exactly"]["count"]) for r in reqs] == [
        ("container-1-request-0", 3),
        ("container-2-request-0", 1),
    ]
    assert {m["requestName"] for m in maps if m["containerName"] == "i0"} == {
        "container-2-request-0",
        "container-1-request-0",
    }


def test_a_sidecar_gets_its_own_request_like_a_regular_container():
    p = pod([ctr("app", example_com__gpu="1")], init=[ctr("side", restart="Always", example_com__gpu="1")])
    reqs, _ = plan(p, [cls("gpu", "example.com/gpu")])
    assert [r["name"] for r in reqs] == ["container-0-request-0", "container-1-request-0"]


def test_1_34_makes_one_request_per_container_without_reuse():
    p = pod([ctr("app", example_com__gpu="1")], init=[ctr("warmup", example_com__gpu="3")])
    reqs, _ = plan(p, [cls("gpu", "example.com/gpu")], S34)
    assert sorted((r["name"], r["exactly"]["count"]) for r in reqs) == [
        ("container-0-request-0", 3),
        ("container-1-request-0", 1),
    ]


def test_fractional_zero_and_unmapped_requests_are_not_dra():
    p = pod([ctr("a", example_com__gpu="500m"), ctr("b", example_com__gpu="0"), ctr("c", other_com__x="1")])
    assert pod_extended_resources(p, [cls("gpu", "example.com/gpu")], S37).requests == []


def test_the_gate_off_is_reported_on_the_plan():
    ext = pod_extended_resources(pod([ctr("app", example_com__gpu="1")]), [cls("gpu", "example.com/gpu")], S35_OFF)
    assert ext.requests and not ext.gate


def test_nodes_with_the_resource_in_allocatable_use_the_device_plugin():
    dp = {"metadata": {"name": "n1"}, "status": {"allocatable": {"example.com/gpu": "4"}}}
    zero = {"metadata": {"name": "n2"}, "status": {"allocatable": {"example.com/gpu": "0"}}}
    none = {"metadata": {"name": "n3"}, "status": {"allocatable": {}}}
    assert set(device_plugin_nodes([dp, zero, none], ["example.com/gpu"], S37)) == {"n1"}
    # 1.34 looks only at whether the key is there.
    assert set(device_plugin_nodes([dp, zero, none], ["example.com/gpu"], S34)) == {"n1", "n2"}


def test_the_scheduler_created_claim_is_found_by_status_or_by_annotation_and_owner():
    p = pod([ctr("app", example_com__gpu="1")])
    c = {
        "metadata": {
            "name": "p-extended-resources-abcde",
            "namespace": "default",
            "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
            "ownerReferences": [{"kind": "Pod", "name": "p", "uid": "u1", "controller": True}],
        }
    }
    claims = {("default", "p-extended-resources-abcde"): c}
    assert find_claim(p, claims)[0] is c
    p["status"] = {"extendedResourceClaimStatus": {"resourceClaimName": 7}}
    found, _, findings = find_claim(p, claims)
    assert found is c and [f.code for f in findings] == ["DRA222"]
