"""DRANodeAllocatableResources against the real kube-scheduler (the v1.37.2 and v1.38.0-beta.0 control planes, each
started with the gate on): a
device that maps 8 of the node's cpu (nodeAllocatableResources, deviceMultiplier) makes the pod that gets it ask for
8 cpu more. kubectl-dra, told the gate (`--feature-gates`: it does not read the server's gates), must say what the
scheduler then does: blocked where the node lacks that cpu, placed on another node where one has room, and a bound
pod's status.nodeAllocatableResourceClaimStatuses counted against the node.

The fake nodes have 16 cpu each (tests/cluster/cluster.py node_object). The API server's NodeDeclaredFeatureValidator
admits a slice with nodeAllocatableResources only for a node that declares the feature (status.declaredFeatures),
which a kubelet would: the test declares it on the fake node."""

from __future__ import annotations

import pytest
from builders import device, request
from dra_objects import claim, hog, pod, release

pytestmark = pytest.mark.e2e

GATE = ("--feature-gates", "DRANodeAllocatableResources=true")
FEATURE = "DRANodeAllocatableResources"
MAPPED = {"cpu": {"mapping": {"deviceMultiplier": "8"}}}


def _declare(sc, node: str, on: bool) -> None:
    path = f"/api/v1/nodes/{node}"
    features = sc.api.get(path)["status"].get("declaredFeatures") or []
    want = sorted({*features, FEATURE}) if on else [f for f in features if f != FEATURE]
    sc.api.patch(path + "/status", {"status": {"declaredFeatures": want}})


@pytest.fixture
def mapped_gpu(nodealloc_scenario):
    """A scenario with a GPU on node-01 that maps 8 cpu; skipped where the API server drops the field."""
    sc = nodealloc_scenario("nar")
    _declare(sc, "node-01", True)
    try:
        sc.device_class()
        sc.slice([device("gpu-0", nodeAllocatableResources=MAPPED)], node="node-01")
        got = sc.api.get(f"/apis/resource.k8s.io/v1/resourceslices/{sc.name}-node-01")
        if not got["spec"]["devices"][0].get("nodeAllocatableResources"):
            pytest.skip("the API server dropped spec.devices[].nodeAllocatableResources with the gate on")
        yield sc
    finally:
        _declare(sc, "node-01", False)


def _trainer(sc, cpu: str, name: str = "trainer-0") -> None:
    sc.create(claim(f"{name}-gpu", [request("gpu", sc.cls)]))
    p = pod(name, {"gpu": f"{name}-gpu"}, gated=True)
    p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu
    sc.create(p)


def _explain(sc, name: str = "trainer-0", *more: str):
    return sc.cluster.kubectl_dra("explain", "pod", name, "-n", sc.ns, "-o", "json", *GATE, *more)


def test_the_device_maps_more_cpu_than_is_left_blocked_and_the_scheduler_agrees(mapped_gpu):
    sc = mapped_gpu
    held = hog(sc, "6")  # 10 of node-01's 16 cpu left: the pod's 4 fit, its 4 + the device's 8 do not
    try:
        _trainer(sc, "4")
        r = _explain(sc, "trainer-0", "--alone")
        assert r.code == 1 and r.json["verdict"]["determined"], str(r)
        server = sc.cluster.state["version"]  # the minor kubectl-dra models is the server's
        assert server.startswith(f"v{r.json['semantics']['kubernetesVersion']}."), (server, r.json["semantics"])
        f504 = next(f for f in r.json["findings"] if f["code"] == "DRA504")
        short = f504["evidence"]["fit"]["node-01"]["shortfalls"][0]
        assert short["resource"] == "cpu" and short["requested"] == 12000 and short["nodeAllocatable"] == 8000, f504
        sc.ungate("trainer-0")
        ev = sc.cluster.wait_unschedulable(sc.ns, "trainer-0", "Insufficient cpu")
        assert "Insufficient cpu" in ev["message"], ev["message"]
        after = _explain(sc)
        assert after.code == 1, str(after)
        v = after.json["verdict"]
        assert v["blocked"] and v["determined"] and v["missing"] == "node", str(after)
        codes = {f["code"] for f in after.json["findings"]}
        assert "DRA504" in codes and not codes & {"DRA005", "DRA022", "DRA016"}, codes
        # without the gate the field is not modelled: undetermined, as before
        off = sc.cluster.kubectl_dra("explain", "pod", "trainer-0", "-n", sc.ns, "-o", "json")
        assert off.code == 2 and "DRA016" in {f["code"] for f in off.json["findings"]}, str(off)
    finally:
        release(sc, held)


def test_another_node_has_room_placed_there(mapped_gpu):
    sc = mapped_gpu
    sc.slice([device("gpu-0")], node="node-02")  # maps nothing
    held = hog(sc, "6")
    try:
        _trainer(sc, "4")
        r = _explain(sc)
        assert r.code == 1, str(r)  # the gate, and nothing else
        assert [f["code"] for f in r.json["findings"] if f["blocking"]] == ["DRA006"], str(r)
        # where the dry-run tried node-01 too (its order of nodes is the scheduler's), it dropped it for the cpu
        f505 = [f for f in r.json["findings"] if f["code"] == "DRA505"]
        assert all(f["evidence"]["nodes"] == ["node-01"] for f in f505), f505
        sc.ungate("trainer-0")
        bound = sc.cluster.wait_bound(sc.ns, "trainer-0", timeout=60)
        assert bound["spec"]["nodeName"] == "node-02"
    finally:
        release(sc, held)


def test_a_bound_pods_mapped_cpu_counts_against_the_node(mapped_gpu):
    """With room, the scheduler binds the pod to node-01 and patches its status with the 8 cpu the device maps; a
    second pod that asks for 3 cpu there then finds 16 - 4 - 8 - 2 = 2 left: NodeResourcesFit rejects it, and
    kubectl-dra, counting the first pod's status, says so."""
    sc = mapped_gpu
    held = hog(sc, "2")
    try:
        _trainer(sc, "4")
        sc.ungate("trainer-0")
        bound = sc.cluster.wait_bound(sc.ns, "trainer-0", timeout=60)
        assert bound["spec"]["nodeName"] == "node-01"
        status = sc.cluster.pod(sc.ns, "trainer-0")["status"].get("nodeAllocatableResourceClaimStatuses")
        assert status and status[0]["mapping"] == [{"name": "cpu", "quantity": "8"}], status

        sc.slice([device("gpu-1")], node="node-01", suffix="-plain", pool="node-01-plain")
        p = pod("second", {"gpu": "second-gpu"}, gated=True, node_selector={"kubernetes.io/hostname": "node-01"})
        p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "3"
        sc.create(claim("second-gpu", [request("gpu", sc.cls)]))
        sc.create(p)
        r = _explain(sc, "second")
        assert r.code == 1, str(r)
        f504 = next(f for f in r.json["findings"] if f["code"] == "DRA504")
        short = f504["evidence"]["fit"]["node-01"]["shortfalls"][0]
        assert short["resource"] == "cpu" and short["used"] == 14000, f504
        sc.ungate("second")
        ev = sc.cluster.wait_unschedulable(sc.ns, "second", "Insufficient cpu")
        assert "Insufficient cpu" in ev["message"], ev["message"]
        assert _explain(sc, "second").json["verdict"]["determined"]
    finally:
        release(sc, held)
