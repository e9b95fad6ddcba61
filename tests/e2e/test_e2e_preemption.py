"""DefaultPreemption for cpu against the real kube-scheduler (v1.37.2 control plane): the only GPU is on node-01, and
a pod of lower priority bound there holds its cpu. kubectl-dra, from the live cluster, must say the pod of higher
priority is placed once that pod is preempted (DRA507, naming it), not blocked; once the gate is removed the
scheduler must evict it and bind the pod to node-01. With preemptionPolicy Never both must agree the other way:
blocked at the node (DRA504), and the pod of lower priority stays.

The fake nodes have 16 cpu each and no kubelet: a pod the scheduler evicts stays Terminating until someone finishes
it, so the test does the kubelet's part (deletes it with a grace period of 0) once the scheduler has marked it."""

from __future__ import annotations

import pytest
from builders import device, request
from dra_objects import PAUSE, builders, claim, pod, release
from e2e_helpers import wait_for

pytestmark = pytest.mark.e2e


def _setup(sc, policy: str | None = None) -> None:
    sc.device_class()
    sc.slice([device("gpu-0")], node="node-01")
    sc.priority_class(f"{sc.ns}-low", 100)
    sc.priority_class(f"{sc.ns}-high", 10000)
    etl = {"name": "etl", "image": PAUSE, "resources": {"requests": {"cpu": "15500m"}}}
    low = builders.pod(
        "etl-low", (), "node-01", ns=None, containers=[etl], phase=None, priorityClassName=f"{sc.ns}-low"
    )
    del low["spec"]["resourceClaims"]
    low["spec"]["terminationGracePeriodSeconds"] = 30  # a victim terminates gracefully: the scheduler waits for it
    sc.api.post(f"/api/v1/namespaces/{sc.ns}/pods", low)
    sc.create(claim("trainer-gpu", [request("gpu", sc.cls)]))
    p = pod("trainer-0", {"gpu": "trainer-gpu"}, gated=True)
    p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    p["spec"]["priorityClassName"] = f"{sc.ns}-high"
    if policy:  # the priority admission plugin sets spec.preemptionPolicy from the class (a pod may not set it)
        sc._create_cluster(
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": f"{sc.ns}-high-never"},
                "value": 10000,
                "preemptionPolicy": policy,
            },
        )
        p["spec"]["priorityClassName"] = f"{sc.ns}-high-never"
    sc.create(p)


def test_a_pod_of_higher_priority_preempts_the_cpu_holder_and_is_placed(scenario):
    sc = scenario("preempt")
    _setup(sc)
    try:
        r = sc.cluster.kubectl_dra("explain", "pod", "trainer-0", "-n", sc.ns, "-o", "json")
        assert r.code == 1, str(r)  # the gate, and nothing else blocks
        assert [f["code"] for f in r.json["findings"] if f["blocking"]] == ["DRA006"], str(r)
        pre = next(f for f in r.json["findings"] if f["code"] == "DRA507")
        assert pre["evidence"]["node"] == "node-01" and pre["evidence"]["nodeCertain"], pre
        assert [v["pod"] for v in pre["evidence"]["victims"]] == [f"{sc.ns}/etl-low"], pre
        assert "DRA504" not in {f["code"] for f in r.json["findings"]}, str(r)

        sc.ungate("trainer-0")
        path = f"/api/v1/namespaces/{sc.ns}/pods/etl-low"
        # the scheduler marks the victim (DisruptionTarget) and deletes it: the graceful deletion waits for a kubelet
        gone = wait_for(
            "the scheduler to preempt etl-low",
            lambda: (p := sc.api.get(path, ok404=True)) is None or p["metadata"].get("deletionTimestamp") or None,
            60,
            0.5,
        )
        assert gone is not None
        nominated = sc.cluster.pod(sc.ns, "trainer-0")["status"].get("nominatedNodeName")
        # while the victim terminates, the pod waits for it: the answer says so (DRA507, waiting)
        w = sc.cluster.kubectl_dra("explain", "pod", "trainer-0", "-n", sc.ns, "-o", "json")
        if nominated == "node-01" and sc.api.get(path, ok404=True) is not None:
            assert w.code == 0 and w.json["verdict"]["determined"], str(w)
            waiting = next(f for f in w.json["findings"] if f["code"] == "DRA507")
            assert "terminating now" in waiting["message"], waiting
        sc.api.delete(path + "?gracePeriodSeconds=0")  # the kubelet's part
        bound = sc.cluster.wait_bound(sc.ns, "trainer-0", timeout=90)
        assert bound["spec"]["nodeName"] == "node-01", bound["spec"]
    finally:
        sc.api.delete(f"/api/v1/namespaces/{sc.ns}/pods/etl-low?gracePeriodSeconds=0")


def test_preemption_policy_never_blocked_and_the_holder_stays(scenario):
    sc = scenario("nopreempt")
    _setup(sc, policy="Never")
    try:
        r = sc.cluster.kubectl_dra("explain", "pod", "trainer-0", "-n", sc.ns, "-o", "json")
        f504 = next(f for f in r.json["findings"] if f["code"] == "DRA504")
        assert "its preemptionPolicy is Never" in f504["message"], f504
        assert "DRA507" not in {f["code"] for f in r.json["findings"]}, str(r)
        sc.ungate("trainer-0")
        ev = sc.cluster.wait_unschedulable(sc.ns, "trainer-0", "Insufficient cpu")
        assert "Insufficient cpu" in ev["message"], ev
        low = sc.cluster.pod(sc.ns, "etl-low")
        assert not low["metadata"].get("deletionTimestamp"), "the scheduler preempted a pod for a Never pod"
        after = sc.cluster.kubectl_dra("explain", "pod", "trainer-0", "-n", sc.ns, "-o", "json")
        v = after.json["verdict"]
        assert after.code == 1 and v["blocked"] and v["determined"] and v["missing"] == "node", str(after)
    finally:
        release(sc, "etl-low")
