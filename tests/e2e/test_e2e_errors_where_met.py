"""Errors where the real kube-scheduler (v1.37.2) meets them (issue 29, item 3). A CEL runtime error in the allocator
ends the whole scheduling attempt, but only on a node where the DynamicResources Filter runs and reaches the device:
- not on a node NodeResourcesFit rejects first (it comes before DynamicResources in the default Filter order);
- on every node a perDeviceNodeSelection slice reaches (isSelectable evaluates a device's selectors before its node);
- on a node an allocated claim of the pod rules out (the Filter allocates the pending claims before it says so).
kubectl-dra is asked first (the pod gated), then the gate is removed and the scheduler must do what it said."""

from __future__ import annotations

import pytest
from builders import device, request
from dra_objects import RES, claim, hog, pod, release

pytestmark = pytest.mark.e2e


def _selector(sc) -> str:
    # no overload of > for (string, int): a runtime error on a device whose "n" is a string
    return f'device.attributes["{sc.driver}"].n > 1'


def _codes(r) -> set:
    return {f["code"] for f in r.json["findings"]}


def test_an_error_on_a_node_without_room_is_not_met_and_the_pod_goes_elsewhere(scenario):
    sc = scenario("errfit")
    sc.device_class()
    sc.slice([device("bad", attrs={"n": "x"})], node="node-01")
    sc.slice([device("ok", attrs={"n": 5})], node="node-02")
    held_cpu = hog(sc, "15500m")
    try:
        sc.create(claim("c", [request("gpu", sc.cls, selectors=[_selector(sc)])]))
        p = pod("trainer", {"gpu": "c"}, gated=True)
        p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
        sc.create(p)
        r = sc.cluster.kubectl_dra("explain", "pod", "trainer", "-n", sc.ns, "-o", "json")
        assert "DRA301" not in _codes(r), str(r)
        assert [f["code"] for f in r.json["findings"] if f["blocking"]] == ["DRA006"], str(r)  # only the gate
        dry = next(c for c in r.json["claims"] if c["name"] == "c")["dryRun"]
        assert [x["device"] for x in dry["results"]] == ["ok"], str(r)
        sc.ungate("trainer")
        bound = sc.cluster.wait_bound(sc.ns, "trainer", timeout=60)
        assert bound["spec"]["nodeName"] == "node-02"
        assert sc.cluster.allocated_devices(sc.ns, "c") == [(sc.driver, "node-02", "ok")]
    finally:
        release(sc, held_cpu)


def test_a_per_device_node_selection_error_is_met_on_every_node_its_slice_reaches(scenario):
    sc = scenario("errpdns")
    sc.device_class()
    # one slice, devices on node-01 (fine, but false) and node-03 (errors); the pod may not use node-03
    sc._create_cluster(
        f"{RES}/resourceslices",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{sc.name}-shared"},
            "spec": {
                "driver": sc.driver,
                "pool": {"name": "shared", "generation": 1, "resourceSliceCount": 1},
                "perDeviceNodeSelection": True,
                "devices": [
                    device("x1", attrs={"n": 0}, nodeName="node-01"),
                    device("bad", attrs={"n": "x"}, nodeName="node-03"),
                ],
            },
        },
    )
    sc.slice([device("ok", attrs={"n": 5})], node="node-02")
    sc.create(claim("c", [request("gpu", sc.cls, selectors=[_selector(sc)])]))
    p = pod("trainer", {"gpu": "c"}, gated=True)
    p["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-01", "node-02"]}]}
    ]}}}  # fmt: skip
    sc.create(p)
    before = sc.cluster.kubectl_dra("explain", "pod", "trainer", "-n", sc.ns, "-o", "json")
    assert before.code == 1 and "DRA301" in _codes(before), str(before)
    sc.ungate("trainer")
    ev = sc.cluster.wait_event(sc.ns, "trainer", "FailedScheduling", "no such overload", timeout=60)
    assert not sc.cluster.pod(sc.ns, "trainer")["spec"].get("nodeName"), ev
    after = sc.cluster.kubectl_dra("explain", "pod", "trainer", "-n", sc.ns, "-o", "json")
    assert after.code == 1 and "DRA301" in _codes(after), str(after)


def test_an_error_on_a_node_an_allocated_claim_rules_out_ends_the_attempt(scenario):
    sc = scenario("errheld")
    sc.device_class()
    sc.slice([device("held", attrs={"n": 5})], node="node-02")
    sc.create(claim("a", [request("gpu", sc.cls)]))
    sc.create(pod("first", {"gpu": "a"}))
    sc.cluster.wait_bound(sc.ns, "first", timeout=60)  # claim a: allocated on node-02
    sc.slice([device("bad", attrs={"n": "x"})], node="node-01")
    sc.slice([device("ok", attrs={"n": 5})], node="node-02", suffix="-b", pool="node-02-b")
    sc.create(claim("c", [request("gpu", sc.cls, selectors=[_selector(sc)])]))
    sc.create(pod("second", {"held": "a", "gpu": "c"}, gated=True))
    before = sc.cluster.kubectl_dra("explain", "pod", "second", "-n", sc.ns, "-o", "json")
    assert before.code == 1 and "DRA301" in _codes(before), str(before)
    sc.ungate("second")
    ev = sc.cluster.wait_event(sc.ns, "second", "FailedScheduling", "no such overload", timeout=60)
    assert not sc.cluster.pod(sc.ns, "second")["spec"].get("nodeName"), ev


def test_a_pod_nominated_to_a_node_where_it_fits_never_meets_an_error_elsewhere(scenario):
    """kube-scheduler tries a pod's nominated node (status.nominatedNodeName, set by a preemption) first and places
    it there when every filter passes, without filtering another node: node-01's CEL error is never met. Nominated
    to a node where it cannot fit, the pass over every node meets the error."""
    sc = scenario("errnom")
    sc.device_class()
    sc.slice([device("bad", attrs={"n": "x"})], node="node-01")
    sc.slice([device("ok", attrs={"n": 5})], node="node-02")
    for name, nominated in (("lost", "node-03"), ("trainer", "node-02")):
        sc.create(claim(f"c-{name}", [request("gpu", sc.cls, selectors=[_selector(sc)])]))
        sc.create(pod(name, {"gpu": f"c-{name}"}, gated=True))
        sc.api.patch(f"/api/v1/namespaces/{sc.ns}/pods/{name}/status", {"status": {"nominatedNodeName": nominated}},
                     kind="merge")  # fmt: skip
    lost = sc.cluster.kubectl_dra("explain", "pod", "lost", "-n", sc.ns, "-o", "json")
    assert lost.code == 1 and "DRA301" in _codes(lost), str(lost)
    sc.ungate("lost")
    ev = sc.cluster.wait_event(sc.ns, "lost", "FailedScheduling", "no such overload", timeout=60)
    assert not sc.cluster.pod(sc.ns, "lost")["spec"].get("nodeName"), ev
    r = sc.cluster.kubectl_dra("explain", "pod", "trainer", "-n", sc.ns, "-o", "json")
    assert not _codes(r) & {"DRA301", "DRA304"}, str(r)
    assert [f["code"] for f in r.json["findings"] if f["blocking"]] == ["DRA006"], str(r)  # only the gate
    sc.ungate("trainer")
    assert sc.cluster.wait_bound(sc.ns, "trainer", timeout=60)["spec"]["nodeName"] == "node-02"
    assert sc.cluster.allocated_devices(sc.ns, "c-trainer") == [(sc.driver, "node-02", "ok")]


def test_a_selector_error_on_a_device_in_use_is_never_met(scenario):
    """The allocator skips a device in use before it evaluates selectors on it (allocateOne: "Checking for 'in use'
    is cheap and thus gets done first"): a selector that errs only on an allocated device fails the pod for want of
    a device, not with the error (seen live, stop 41: kubectl-dra said DRA301 where the scheduler said "cannot
    allocate all claims")."""
    sc = scenario("errinuse")
    sc.device_class()
    sc.slice([device("bad", attrs={"n": "x"}), device("low", attrs={"n": 0})], node="node-01")
    sc.create(claim("a", [request("gpu", sc.cls, selectors=[f'device.attributes["{sc.driver}"].n == "x"'])]))
    sc.create(pod("holder", {"gpu": "a"}))
    sc.cluster.wait_bound(sc.ns, "holder", timeout=60)  # claim a: allocated the bad device
    sc.create(claim("c", [request("gpu", sc.cls, selectors=[_selector(sc)])]))
    sc.create(pod("late", {"gpu": "c"}, gated=True))
    before = sc.cluster.kubectl_dra("explain", "pod", "late", "-n", sc.ns, "-o", "json")
    assert before.code == 1, str(before)
    blocking = [f["code"] for f in before.json["findings"] if f["blocking"]]
    assert "DRA301" not in blocking and "DRA403" in blocking, str(before)
    sc.ungate("late")
    ev = sc.cluster.wait_event(sc.ns, "late", "FailedScheduling", "cannot allocate all claims", timeout=60)
    assert "no such overload" not in ev["message"] and not sc.cluster.pod(sc.ns, "late")["spec"].get("nodeName"), ev
    after = sc.cluster.kubectl_dra("explain", "pod", "late", "-n", sc.ns, "-o", "json")
    assert after.code == 1 and "DRA005" not in _codes(after), str(after)  # agrees with the scheduler's word
