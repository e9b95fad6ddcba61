"""Node-allocatable resources of DRA devices (analyze/pod/nodealloc.py, DRANodeAllocatableResources) against
upstream's own cases: kubernetes v1.37.2 pkg/scheduler/framework/plugins/dynamicresources/
nodeallocatabledynamicresources_test.go (TestBuildNodeAllocatableDRAInfo, TestNodeFitsNativeResources), and
component-helpers resource addDRANodeAllocatableClaimResources for a bound pod's status."""

from __future__ import annotations

from fractions import Fraction

import builders
import pytest
from builders import container as ctr

from kubectl_dra.analyze.pod.coverage import unmodelled_fields
from kubectl_dra.analyze.pod.fit import BoundPods, Fit
from kubectl_dra.analyze.pod.nodealloc import Demand, modelled, pod_demand, status_nano
from kubectl_dra.analyze.pod.resources import pod_requests, scheduler_units
from kubectl_dra.features import Semantics

ON37 = Semantics.for_version((1, 37), {"DRANodeAllocatableResources": True})
ON38 = Semantics.for_version((1, 38), {"DRANodeAllocatableResources": True})
OFF37 = Semantics.for_version((1, 37))
ON36 = Semantics.for_version((1, 36), {"DRANodeAllocatableResources": True})
DRV = "dra.example.com"
NODE = builders.node("test-node", allocatable={}, hostname=False)


def nar(**by_res):
    return {"nodeAllocatableResources": by_res}


def dev(name, **extra):
    return {"name": name, **extra}


def sl(name, *devices, driver=DRV, pool="pool1", node="test-node"):
    return {"metadata": {"name": name}, "spec": {"driver": driver, "pool": {"name": pool}, "nodeName": node,
                                                  "devices": list(devices)}}  # fmt: skip


def res(device, consumed=None, driver=DRV, pool="pool1"):
    r = {"request": "r", "driver": driver, "pool": pool, "device": device}
    if consumed is not None:
        r["consumedCapacity"] = consumed
    return r


def claim(name):
    return {"metadata": {"name": name, "namespace": "test-ns", "uid": f"{name}-uid"}, "status": {}}


def pod(*containers, inits=(), **spec):
    p = {"metadata": {"name": "test-pod", "namespace": "test-ns", "uid": "test-uid"},
         "spec": {"containers": list(containers), **spec}}  # fmt: skip
    if inits:
        p["spec"]["initContainers"] = list(inits)
    return p


def c(name, *claims, **requests):
    out = {"name": name, "resources": {"claims": [{"name": x} for x in claims]}}
    if requests:
        out["resources"]["requests"] = requests
    return out


CPU_PER_INSTANCE = dev("cpu0", **nar(cpu={"mapping": {"deviceMultiplier": "1"}}))
CPU_CAPACITY = dev("cpu0", **nar(cpu={"mapping": {"capacityKey": "dra.example.com/cpu"}}))
CPU_MEM_CAPACITY = dev(
    "device1",
    **nar(cpu={"mapping": {"capacityKey": "dra.example.com/cpu"}}, memory={"mapping": {"capacityKey": "dra.example.com/memory"}}),
)  # fmt: skip
GPU_AUX = dev(
    "gpu0", **nar(cpu={"mapping": {"deviceMultiplier": "2"}}, memory={"mapping": {"deviceMultiplier": "4Gi"}})
)
COMBINED = dev(
    "combined-device",
    **nar(cpu={"mapping": {"deviceMultiplier": "2"}, "overhead": {"perPod": "1", "perContainer": "500m"}}),
)

Gi, Mi = 2**30, 2**20


def statuses(p, allocations, slices, sem=ON37):
    """buildNodeAllocatableDRAInfo through pod_demand: allocations (claim name, results) in the pod's claim order."""
    d = pod_demand(p, [(n, claim(n), rs) for n, rs in allocations], slices, NODE, sem)
    assert not d.unknown, d.unknown
    return [s.to_dict() for s in d.statuses]


def st(name, containers, mapping=(), overhead=()):
    return {"resourceClaimName": name, "containers": list(containers), "mapping": [{"name": k, "quantity": v} for k, v in mapping],
            "overhead": [dict(name=k, **o) for k, o in overhead]}  # fmt: skip


# --- TestBuildNodeAllocatableDRAInfo ---


def test_one_container_one_claim_per_instance_quantity():
    p = pod(c("c1", "node-allocatable-claim"))
    got = statuses(p, [("node-allocatable-claim", [res("cpu0")])], [sl("slice1", CPU_PER_INSTANCE)])
    assert got == [st("node-allocatable-claim", ["c1"], [("cpu", "1")])]


def test_standard_and_dra_cpu_and_memory_request():
    p = pod(c("c1", "node-allocatable-claim", cpu="100m", memory="100Mi"))
    consumed = {"dra.example.com/cpu": "4", "dra.example.com/memory": "8Gi"}
    got = statuses(p, [("node-allocatable-claim", [res("device1", consumed)])], [sl("slice1", CPU_MEM_CAPACITY)])
    assert got == [st("node-allocatable-claim", ["c1"], [("cpu", "4"), ("memory", str(8 * Gi))])]


def test_fungible_claim_gpu_selected_adds_nothing_cpu_selected_adds_its_capacity():
    p = pod(c("c1", "fungible-claim", cpu="1"))
    assert statuses(p, [("fungible-claim", [res("gpu0")])], [sl("gpu-slice", dev("gpu0"))]) == []
    got = statuses(p, [("fungible-claim", [res("cpu0", {"dra.example.com/cpu": "30"})])], [sl("cpu", CPU_CAPACITY)])
    assert got == [st("fungible-claim", ["c1"], [("cpu", "30")])]


def test_combined_cpu_request_and_auxiliary_request():
    p = pod(c("c1", "gpu-claim", "cpu-claim", cpu="100m"))
    slices = [sl("cpu-slice", CPU_CAPACITY), sl("gpu-slice", GPU_AUX)]
    got = statuses(
        p, [("cpu-claim", [res("cpu0", {"dra.example.com/cpu": "10"})]), ("gpu-claim", [res("gpu0")])], slices
    )
    assert got == [
        st("cpu-claim", ["c1"], [("cpu", "10")]),
        st("gpu-claim", ["c1"], [("cpu", "2"), ("memory", str(4 * Gi))]),
    ]


def test_shared_cpu_claim_names_every_container_that_references_it():
    p = pod(c("c1", "cpu-claim"), c("c2", "cpu-claim"), c("sidecar1"), c("sidecar2"))
    got = statuses(p, [("cpu-claim", [res("cpu0", {"dra.example.com/cpu": "10"})])], [sl("cpu-slice", CPU_CAPACITY)])
    assert got == [st("cpu-claim", ["c1", "c2"], [("cpu", "10")])]


def test_multiple_claims_per_container():
    p = pod(c("c1", "claim1", "claim2", cpu="100m"))
    slices = [sl("slice1", CPU_CAPACITY), sl("slice2", CPU_MEM_CAPACITY)]
    got = statuses(
        p,
        [("claim1", [res("cpu0", {"dra.example.com/cpu": "4"})]), ("claim2", [res("device1", {"dra.example.com/memory": "8Gi"})])],
        slices,
    )  # fmt: skip
    assert got == [st("claim1", ["c1"], [("cpu", "4")]), st("claim2", ["c1"], [("memory", str(8 * Gi))])]


def test_unreferenced_claims_count_with_no_container():
    p = pod(c("c1"))
    got = statuses(p, [("unref-claim", [res("cpu0", {"dra.example.com/cpu": "4"})])], [sl("slice1", CPU_CAPACITY)])
    assert got == [st("unref-claim", [], [("cpu", "4")])]
    mem = dev("device1", **nar(memory={"overhead": {"perPod": "1Gi", "perContainer": "500Mi"}}))
    d = pod_demand(p, [("unref-claim", claim("unref-claim"), [res("device1")])], [sl("slice1", mem)], NODE, ON37)
    assert d.to_dict()["statuses"] == [
        st("unref-claim", [], overhead=[("memory", {"perPod": str(Gi), "perContainer": str(500 * Mi)})])
    ]
    assert d.amounts() == {"memory": Gi}  # perContainer x 0 containers


def test_capacity_multiplier_multiplies_the_consumed_capacity():
    cores = dev("device1", **nar(cpu={"mapping": {"capacityKey": "dra.example.com/cores", "capacityMultiplier": "2"}}))
    p = pod(c("c1", "claim1"))
    got = statuses(p, [("claim1", [res("device1", {"dra.example.com/cores": "4"})])], [sl("slice1", cores)])
    assert got == [st("claim1", ["c1"], [("cpu", "8")])]


def test_capacity_key_missing_in_the_allocation_is_ignored():
    p = pod(c("c1", "claim1"))
    assert statuses(p, [("claim1", [res("cpu0", {"dra.example.com/wrong": "4"})])], [sl("slice1", CPU_CAPACITY)]) == []


@pytest.mark.parametrize(
    "overhead, containers, amount",
    [
        ({"perPod": "1Gi", "perContainer": "500Mi"}, ["c1"], Gi + 500 * Mi),
        ({"perPod": "1Gi"}, ["c1"], Gi),
        ({"perContainer": "500Mi"}, ["c1"], 500 * Mi),
        ({"perPod": "1Gi", "perContainer": "500Mi"}, ["c1", "c2"], Gi + 1000 * Mi),
    ],
)
def test_overhead_mappings(overhead, containers, amount):
    mem = dev("device1", **nar(memory={"overhead": overhead}))
    p = pod(*(c(n, "claim1") for n in containers))
    d = pod_demand(p, [("claim1", claim("claim1"), [res("device1")])], [sl("slice1", mem)], NODE, ON37)
    want = {k: str(Gi if k == "perPod" else 500 * Mi) for k in overhead}
    assert d.to_dict()["statuses"] == [st("claim1", containers, overhead=[("memory", want)])]
    assert d.amounts() == {"memory": amount}


def test_mapping_and_overhead_for_the_same_resource_add_up():
    mem = dev("device1", **nar(memory={"mapping": {"deviceMultiplier": "2Gi"}, "overhead": {"perPod": "1Gi", "perContainer": "500Mi"}}))  # fmt: skip
    d = pod_demand(pod(c("c1", "claim1")), [("claim1", claim("claim1"), [res("device1")])], [sl("s", mem)], NODE, ON37)
    assert d.amounts() == {"memory": 2 * Gi + Gi + 500 * Mi}
    d = pod_demand(pod(c("c1", "claim1")), [("claim1", claim("claim1"), [res("combined-device")])], [sl("s", COMBINED)], NODE, ON37)  # fmt: skip
    assert d.to_dict()["statuses"] == [
        st("claim1", ["c1"], [("cpu", "2")], [("cpu", {"perPod": "1", "perContainer": "0.5"})])
    ]
    assert d.amounts() == {"cpu": Fraction(7, 2)}


def test_driver_name_collision_with_same_pool_and_device_name():
    a = sl("slice-a", dev("cpu0", **nar(cpu={"mapping": {"deviceMultiplier": "1"}})), driver="driver-a.example.com")
    b = sl("slice-b", dev("cpu0", **nar(cpu={"mapping": {"deviceMultiplier": "8"}})), driver="driver-b.example.com")
    got = statuses(pod(c("c1", "claim1")), [("claim1", [res("cpu0", driver="driver-b.example.com")])], [a, b])
    assert got == [st("claim1", ["c1"], [("cpu", "8")])]


def test_device_not_found_is_an_error_the_analysis_cannot_judge():
    # upstream: buildNodeAllocatableDRAInfo errs (the Filter's Error); a claim none of whose devices maps anything is
    # skipped before it, so the error needs a claim with a mapped device and another that is not there
    slices = [sl("slice1", CPU_PER_INSTANCE)]
    d = pod_demand(
        pod(c("c1", "claim1")), [("claim1", claim("claim1"), [res("cpu0"), res("gone")])], slices, NODE, ON37
    )
    assert d.active and "not on the node's slices" in d.unknown
    d = pod_demand(pod(c("c1", "claim1")), [("claim1", claim("claim1"), [res("gone")])], slices, NODE, ON37)
    assert not d.active


def test_capacity_key_on_a_result_without_consumed_capacity_is_unknown():
    d = pod_demand(
        pod(c("c1", "claim1")), [("claim1", claim("claim1"), [res("cpu0")])], [sl("s", CPU_CAPACITY)], NODE, ON37
    )
    assert "no consumedCapacity" in d.unknown


def test_1_38_looks_the_capacity_key_up_by_qualified_name_and_refuses_negatives():
    short = dev("cpu0", **nar(cpu={"mapping": {"capacityKey": "cpu"}}))
    p = pod(c("c1", "claim1"))
    # the allocation names the capacity with the driver's domain; the mapping without: 1.38 finds it, 1.37 does not
    got = [("claim1", claim("claim1"), [res("cpu0", {"dra.example.com/cpu": "3"})])]
    assert pod_demand(p, got, [sl("s", short)], NODE, ON38).amounts() == {"cpu": 3}
    assert pod_demand(p, got, [sl("s", short)], NODE, ON37).statuses == ()
    neg = [("claim1", claim("claim1"), [res("cpu0", {"cpu": "-1"})])]
    assert "negative" in pod_demand(p, neg, [sl("s", short)], NODE, ON38).unknown


def test_what_cannot_be_told_pod_level_resources_shared_mapped_claim_extended_claim():
    slices = [sl("s", CPU_PER_INSTANCE)]
    p = pod(c("c1", "claim1"), resources={"requests": {"cpu": "4"}})
    assert "pod-level" in pod_demand(p, [("claim1", claim("claim1"), [res("cpu0")])], slices, NODE, ON37).unknown
    held = claim("claim1")
    held["status"] = {"allocation": {"devices": {"results": [res("cpu0")]}}, "reservedFor": [{"resource": "pods", "name": "other", "uid": "other-uid"}]}  # fmt: skip
    assert "held by another pod" in pod_demand(pod(c("c1", "claim1")), [("claim1", held, [res("cpu0")])], slices, NODE, ON37).unknown  # fmt: skip
    assert (
        "extended resources"
        in pod_demand(pod(c("c1")), [(None, claim("x"), [res("cpu0")])], slices, NODE, ON37).unknown
    )


def test_the_slices_of_another_node_are_not_read():
    slices = [sl("s", CPU_PER_INSTANCE, node="other-node")]
    assert pod_demand(
        pod(c("c1", "claim1")), [("claim1", claim("claim1"), [res("cpu0")])], slices, NODE, ON37
    ) == Demand(False)


# --- the gate, per minor ---


def test_modelled_with_the_gate_on_in_1_37_and_1_38_only():
    assert modelled(ON37) and modelled(ON38)
    assert not modelled(OFF37) and not modelled(ON36) and not modelled(Semantics.for_version((1, 38)))
    s = {"spec": {"devices": [{"name": "a", **nar(cpu={"mapping": {"deviceMultiplier": "1"}})}]}}
    assert unmodelled_fields("ResourceSlice", s, ON37) == []
    assert unmodelled_fields("ResourceSlice", s, OFF37) == [
        "spec.devices[].nodeAllocatableResources{}.mapping.deviceMultiplier"
    ]
    assert unmodelled_fields("ResourceSlice", s, ON36) == [
        "spec.devices[].nodeAllocatableResources{}.mapping.deviceMultiplier"
    ]
    old = {"spec": {"devices": [{"name": "a", "nodeAllocatableResourceMappings": {"cpu": {"capacityKey": "c"}}}]}}
    assert unmodelled_fields("ResourceSlice", old, ON37) == [
        "spec.devices[].nodeAllocatableResourceMappings{}.capacityKey"
    ]


# --- a pod's status (addDRANodeAllocatableClaimResources) and the node's requested amounts ---


def bound_pod(name, cpu, claim_statuses, node="test-node"):
    p = builders.pod(name, (), node, ns="batch", uid=f"uid-{name}", containers=[ctr("app", cpu)], phase="Running")
    p["status"]["nodeAllocatableResourceClaimStatuses"] = claim_statuses
    return p


def test_a_pods_status_adds_mapping_per_pod_and_per_container_overhead():
    p = bound_pod(
        "a", "1", [st("c", ["x", "y"], [("cpu", "2")], [("cpu", {"perPod": "500m", "perContainer": "250m"})])]
    )
    assert status_nano(p) == {"cpu": 3 * 10**9}
    assert scheduler_units(pod_requests(p, bound=True, dra=status_nano(p))) == {"cpu": 4000}


def test_bound_pods_count_their_status_only_with_the_gate_modelled():
    p = bound_pod("a", "1", [st("c", ["app"], [("cpu", "3")])])
    assert BoundPods([p], True, nalloc=True).used("test-node") == {"cpu": 4000}
    assert BoundPods([p], True, nalloc=False).used("test-node") == {"cpu": 1000}


# --- TestNodeFitsNativeResources, through Fit.check with the demand of the pod's devices ---


def fit_with(p, demand_amounts, sem=ON37, bound=(), **alloc):
    f = Fit(p, BoundPods(list(bound), True, nalloc=modelled(sem)), [], sem)
    n = builders.node("test-node", allocatable=alloc, hostname=False)
    mapping = [(k, str(v)) for k, v in demand_amounts.items()]
    d = pod_demand(
        p,
        [("claim1", claim("claim1"), [res("d")])],
        [sl("s", dev("d", **nar(**{k: {"mapping": {"deviceMultiplier": q}} for k, q in mapping})))],
        n,
        sem,
    )
    f.na["test-node"] = d
    return f.check(n)


def test_sufficient_cpu_and_memory():
    assert fit_with(pod(c("a", "claim1", cpu="500m")), {"cpu": "500m", "memory": "1Gi"}, cpu="2", memory="2Gi").fits


def test_insufficient_cpu_with_the_device_unless_the_gate_is_off():
    p = pod(c("a", "claim1", cpu="1"))
    got = fit_with(p, {"cpu": "2"}, cpu="2", memory="2Gi")
    assert got.fits is False and [(s.resource, s.requested, s.mapped) for s in got.shortfalls] == [("cpu", 3000, 2000)]
    assert fit_with(p, {"cpu": "2"}, sem=OFF37, cpu="2", memory="2Gi").fits is True


def test_insufficient_memory_counts_what_bound_pods_hold():
    other = builders.pod(
        "o", (), "test-node", ns="batch", uid="uid-o", containers=[ctr("x", None, "4Gi")], phase="Running"
    )
    got = fit_with(pod(c("a", "claim1")), {"memory": "3Gi"}, bound=[other], memory="5Gi", cpu="1")
    assert got.fits is False and got.shortfalls[0].reason == "Insufficient memory"


def test_hugepages_sufficient_and_insufficient():
    assert fit_with(pod(c("a", "claim1")), {"hugepages-2Mi": "1"}, **{"hugepages-2Mi": "1", "cpu": "1"}).fits
    got = fit_with(pod(c("a", "claim1")), {"hugepages-2Mi": "2"}, **{"hugepages-2Mi": "1", "cpu": "1"})
    assert got.fits is False and got.shortfalls[0].reason == "Insufficient hugepages-2Mi"


def test_rounding_happens_once_on_the_sum():
    # 0.4m of the pod and 0.4m of the device: 0.8m, one millicore (not two, as rounding each would give)
    assert fit_with(pod(c("a", "claim1", cpu="400u")), {"cpu": "400u"}, cpu="1m").fits
    assert fit_with(pod(c("a", "claim1", cpu="700u")), {"cpu": "400u"}, cpu="1m").fits is False


def test_an_unknown_demand_leaves_the_node_unknown():
    p = pod(c("a", "claim1"), resources={"requests": {"cpu": "1"}})
    got = fit_with(p, {"cpu": "1"}, cpu="8")
    assert got.fits is None and got.missing == "nodealloc" and "pod-level" in got.why


# --- in an explain: the bound pods without a status, and the queue ---


def _objs(*pods, mapped=True, cpu="8"):
    nar_ = nar(cpu={"mapping": {"deviceMultiplier": "4"}}) if mapped else {}
    return [
        *pods,
        builders.dclass(),
        builders.rslice("node-01-gpus", [dev("gpu-0", **nar_), dev("gpu-1", **nar_)], "node-01"),
        builders.node("node-01", allocatable={"cpu": cpu}),
    ]


def _pending(name, cpu="1"):
    p = builders.pod(name, [("gpu", "claim", f"{name}-gpu")], uid=f"uid-{name}", containers=[ctr("app", cpu)])
    p["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    return [p, builders.claim(f"{name}-gpu", [builders.request()])]


def _explain(objs, name, sem=ON37):
    from dataclasses import replace

    from kubectl_dra.analyze.reports.explain import explain_pods
    from kubectl_dra.model import objects

    snap = replace(objects.snapshot_from_objects(objs, builders.NS), bound_pods=True)
    return explain_pods(snap, sem, [(builders.NS, name)])[0]


def test_alone_the_pod_fits_with_what_its_device_maps():
    r = _explain(_objs(*_pending("a", "3")), "a")
    assert r.verdict.determined and not r.verdict.blocked, r.verdict
    r = _explain(_objs(*_pending("a", "5")), "a")
    assert r.verdict.determined and r.verdict.blocked and "DRA504" in {f.code for f in r.findings}


def test_a_bound_pod_without_status_leaves_the_node_unknown():
    other = bound_pod("o", "1", [], node="node-01")
    del other["status"]
    r = _explain(_objs(*_pending("a", "3"), other), "a")
    f = next(f for f in r.findings if f.code == "DRA506")
    assert not r.verdict.determined and "has no status" in f.message


def test_in_queue_order_a_pod_whose_devices_map_cpu_is_left_open():
    # two pods, each alone fits (1 + 4 of 8); in queue order what the first one's device maps is not modelled
    objs = _objs(*_pending("a"), *_pending("b"))
    for name in ("a", "b"):
        r = _explain(objs, name)
        assert not r.verdict.determined and "DRA431" in {f.code for f in r.findings}, (name, r.verdict)
    # without the gate (and without the field) the queue answers as before
    plain = _objs(*_pending("a"), *_pending("b"), mapped=False)
    assert all(_explain(plain, n, OFF37).verdict.determined for n in ("a", "b"))


def test_blocked_alone_by_what_its_device_maps_is_open_when_another_pod_may_take_devices_first():
    # c is blocked alone (1 + 4 > 4 left by a bound pod); a pending pod that may take gpu-0 first may leave it gpu-1,
    # which maps the same here, but kubectl-dra does not follow the queue's picks with node-allocatable resources
    held = builders.pod("h", (), "node-01", ns="batch", uid="uid-h", containers=[ctr("x", "4")], phase="Running")
    objs = _objs(*_pending("a", "0"), *_pending("c", "1"), held)
    r = _explain(objs, "c")
    assert not r.verdict.determined, r.verdict


def test_a_pending_pod_whose_claims_are_all_allocated_to_a_mapping_device_is_unknown():
    # no dry-run runs for it, and the scheduler's Filter still checks what the device maps on its node
    objs = _objs(*_pending("a", "5"))
    objs[1]["status"] = {
        "allocation": builders.allocation([("gpu", "node-01", "gpu-0")]),
        "reservedFor": [{"resource": "pods", "name": "a", "uid": "uid-a"}],
    }
    r = _explain(objs, "a")
    assert not r.verdict.determined and "DRA506" in {f.code for f in r.findings}, r.verdict
    assert _explain(objs, "a", OFF37).verdict.determined is False  # DRA016, as before


def test_replicas_share_one_dry_run_and_each_keeps_what_its_devices_map():
    from dataclasses import replace

    from kubectl_dra.analyze.reports.explain import explain_pods
    from kubectl_dra.model import objects

    objs = _objs(*_pending("a", "5"), *_pending("b", "5"))
    snap = replace(objects.snapshot_from_objects(objs, builders.NS), bound_pods=True)
    reports = explain_pods(snap, ON37, [(builders.NS, "a"), (builders.NS, "b")], alone=True)
    for r in reports:
        f = next(f for f in r.findings if f.code == "DRA504")
        assert f.evidence["fit"]["node-01"]["shortfalls"][0]["nodeAllocatable"] == 4000, f.evidence


def test_at_1_36_with_the_gate_on_a_bound_pods_statuses_leave_its_node_unknown():
    # 1.36's status shape (a resources map) and scheduler are not ported: its node's free cpu is not told
    other = bound_pod("o", "1", [{"resourceClaimName": "c", "resources": {"cpu": "2"}}], node="node-01")
    p = builders.pod("a", (), uid="uid-a", containers=[ctr("app", "1")])
    objs = [p, other, builders.node("node-01", allocatable={"cpu": "8"})]
    from kubectl_dra.analyze.pod.cache import Cache
    from kubectl_dra.analyze.pod.fit import pod_fit
    from kubectl_dra.model import objects

    snap = objects.snapshot_from_objects(objs, builders.NS)
    node = objs[-1]
    got = pod_fit(snap, Cache(), p, ON36).check(node)
    assert got.fits is None and "does not model" in got.why
    assert pod_fit(snap, Cache(), p, Semantics.for_version((1, 36))).check(node).fits is not None
