"""NodeResourcesFit against the real kube-scheduler (v1.37.2 control plane): the only GPU is on node-01, and a pod
bound there (created with spec.nodeName: the fake nodes have no kubelet, the scheduler's cache counts it as any
assigned pod) holds node-01's cpu. kubectl-dra, from the live cluster, must say the gated pod is blocked at the node
naming cpu (exit 1), not "OK: nothing blocks"; once the gate is removed the scheduler must say Insufficient cpu and
leave it Pending. With room left on node-01 both must agree the other way: OK, then bound to node-01.

The fake nodes have 16 cpu each (tests/cluster/cluster.py node_object)."""

from __future__ import annotations

import pytest
from builders import device, request
from dra_objects import claim, hog, pod, release

pytestmark = pytest.mark.e2e


def _trainer(sc, cpu: str) -> None:
    sc.create(claim("trainer-gpu", [request("gpu", sc.cls)]))
    p = pod("trainer-0", {"gpu": "trainer-gpu"}, gated=True)
    p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu
    sc.create(p)


def test_the_only_node_with_the_gpu_lacks_cpu_blocked_and_the_scheduler_agrees(scenario):
    sc = scenario("fitcpu")
    sc.device_class()
    sc.slice([device("gpu-0")], node="node-01")
    held = hog(sc, "15500m")
    try:
        _trainer(sc, "2")
        # Gated: the gate holds it first (DRA006), and the node piece names what holds it once the gate is gone.
        r = sc.cluster.kubectl_dra("explain", "pod", "trainer-0", "-n", sc.ns, "-o", "json")
        assert r.code == 1 and r.json["verdict"]["determined"], str(r)
        f504 = next(f for f in r.json["findings"] if f["code"] == "DRA504")
        assert f504["message"].startswith("node-01 is the only node where the claims fit"), f504
        assert "cpu free (the pod requests 2)" in f504["message"], f504
        assert f504["evidence"]["fit"]["node-01"]["shortfalls"][0]["resource"] == "cpu", f504
        node_piece = next(p for p in r.json["pieces"] if p["piece"] == "node")
        assert node_piece["state"] == "missing", r.json["pieces"]
        st = sc.cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json")
        assert st.code == 1, str(st)
        row = next(x for x in st.json["items"] if x["pod"] == "trainer-0")
        assert row["state"] == "Blocked" and "DRA504" in row["codes"], row

        # A dump replays the same answer offline: it holds the pods bound to the nodes.
        bundle = sc.cluster.kubectl_dra("dump", "-n", sc.ns, "-o", "json")
        assert bundle.code == 0, str(bundle)
        assert bundle.json["items"][0]["boundPods"] is True, bundle.json["items"][0]
        assert any(o.get("metadata", {}).get("name") == held for o in bundle.json["items"]), "hog not in the dump"

        sc.ungate("trainer-0")
        ev = sc.cluster.wait_unschedulable(sc.ns, "trainer-0", "Insufficient cpu")
        assert "1 Insufficient cpu" in ev["message"], ev["message"]
        after = sc.cluster.kubectl_dra("explain", "pod", "trainer-0", "-n", sc.ns, "-o", "json")
        assert after.code == 1, str(after)
        v = after.json["verdict"]
        assert v["blocked"] and v["determined"] and v["missing"] == "node", str(after)
        assert v["summary"].startswith("node-01 is the only node where the claims fit"), v
        codes = {f["code"] for f in after.json["findings"]}
        assert "DRA504" in codes and not codes & {"DRA005", "DRA022"}, codes
        text = sc.cluster.kubectl_dra("explain", "pod", "trainer-0", "-n", sc.ns)
        assert "Blocked" in text.stdout and "OK: nothing blocks" not in text.stdout, str(text)
    finally:
        release(sc, held)


def test_room_left_on_the_node_ok_and_the_scheduler_binds_there(scenario):
    sc = scenario("fitok")
    sc.device_class()
    sc.slice([device("gpu-0")], node="node-01")
    held = hog(sc, "10")
    try:
        _trainer(sc, "2")
        r = sc.cluster.kubectl_dra("explain", "pod", "trainer-0", "-n", sc.ns, "-o", "json")
        assert r.code == 1, str(r)  # the gate, and nothing else
        codes = {f["code"] for f in r.json["findings"]}
        assert "DRA002" in codes and not codes & {"DRA504", "DRA505", "DRA506"}, str(r)
        assert [f["code"] for f in r.json["findings"] if f["blocking"]] == ["DRA006"], str(r)
        sc.ungate("trainer-0")
        bound = sc.cluster.wait_bound(sc.ns, "trainer-0", timeout=60)
        assert bound["spec"]["nodeName"] == "node-01"
    finally:
        release(sc, held)
