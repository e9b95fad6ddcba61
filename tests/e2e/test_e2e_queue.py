"""Pods compete, against the real kube-scheduler (v1.37.2 control plane, default gates): gated pods that want more
devices than there are, one of them in a second namespace. kubectl-dra predicts, from the live cluster, which get
devices in the queue's order (analyze/queue/); the gates are then removed in that order, one pod at a time, and the
real scheduler must give each predicted pod the predicted device and leave the last one Pending."""

from __future__ import annotations

import time

import pytest
import yaml
from builders import device, request
from dra_objects import claim, pod
from e2e_helpers import clusterlib, wait_for

pytestmark = pytest.mark.e2e


def _rows(result) -> dict:
    return {(r["namespace"], r["pod"]): r for r in result.json["items"]}


def test_gated_pods_compete_in_creation_order(cluster, scenario):
    sc = scenario("queue")
    sc.device_class()
    sc.slice([device("dev-0"), device("dev-1")])
    other = cluster.create_namespace("queue-other")
    try:
        # p0 in another namespace, then p1 and p2 here, each created in a later second than the one before.
        order = [(other, "p0"), (sc.ns, "p1"), (sc.ns, "p2")]
        for ns, name in order:
            sc.api.post(
                f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims",
                claim(f"{name}-gpu", [request("gpu", sc.cls)]),
            )
            sc.api.post(f"/api/v1/namespaces/{ns}/pods", pod(name, {"gpu": f"{name}-gpu"}, gated=True))
            time.sleep(1.1)

        # status -n: only this namespace's rows, but p0 (elsewhere, created first) is ahead of them.
        st = cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json")
        assert st.code == 1, str(st)
        rows = _rows(st)
        assert set(rows) == {(sc.ns, "p1"), (sc.ns, "p2")}, str(st)
        p1, p2 = rows[(sc.ns, "p1")]["queue"], rows[(sc.ns, "p2")]["queue"]
        assert p1["gated"] and p1["outcome"] == "fits", str(st)
        assert p2["outcome"] == "taken", str(st)
        # p0, elsewhere and not a row, is named where it is ahead: in p1's place
        assert [a["pod"] for a in p1["ahead"]] == [f"{other}/p0"] and p1["position"] == 2, str(st)
        assert st.json["queue"]["order"] == [f"{sc.ns}/p1", f"{sc.ns}/p2"], str(st)
        # explain pod names what p2 would get alone and the pod ahead it goes to.
        ex = cluster.kubectl_dra("explain", "pod", "p2", "-n", sc.ns, "-o", "json")
        assert ex.code == 1, str(ex)
        f430 = next(f for f in ex.json["findings"] if f["code"] == "DRA430")
        assert "would go to" in f430["message"], f430
        alone = cluster.kubectl_dra("explain", "pod", "p2", "-n", sc.ns, "--alone", "-o", "json")
        assert not any(f["code"] == "DRA430" for f in alone.json["findings"]), str(alone)
        predicted = {
            (other, "p0"): None,
            (sc.ns, "p1"): p1["devices"],
        }
        ex0 = cluster.kubectl_dra("explain", "pod", "p0", "-n", other, "-o", "json")
        predicted[(other, "p0")] = ex0.json["queue"]["devices"]
        assert ex0.json["queue"]["outcome"] == "fits", str(ex0)

        # The gates go in the predicted order; the real scheduler gives each the predicted device.
        for ns, name in order[:2]:
            sc.api.patch(
                f"/api/v1/namespaces/{ns}/pods/{name}", [{"op": "remove", "path": "/spec/schedulingGates"}], kind="json"
            )
            cluster.wait_bound(ns, name, timeout=60)
            real = ["/".join(d) for d in cluster.allocated_devices(ns, f"{name}-gpu")]
            assert real == predicted[(ns, name)], f"{ns}/{name}: real {real}, predicted {predicted[(ns, name)]}"
        sc.ungate("p2")
        cluster.wait_unschedulable(sc.ns, "p2", "cannot allocate all claims")
        after = cluster.kubectl_dra("explain", "pod", "p2", "-n", sc.ns, "-o", "json")
        assert after.code == 1 and after.json["verdict"]["missing"] == "device", str(after)
    finally:
        cluster.delete_namespace(other)


def test_match_count_queues_its_copies_after_the_pods_waiting_in_other_namespaces(cluster, scenario, tmp_path):
    """match claim -f FILE --count N, live: the copies go after the pods already waiting, in any namespace (seen
    live: "1 of 2 copies get their devices for certain" while two pods created earlier elsewhere would take both
    free devices; the gather listed no pod). Then the real scheduler, held by its Lease until all three pods are in its
    queue: the two pods get the devices, and a real copy created after them gets none."""
    sc = scenario("matchq")
    sc.device_class()
    sc.slice([device("dev-0"), device("dev-1")])
    other = cluster.create_namespace("matchq-other")
    manifest = tmp_path / "claim.yaml"
    manifest.write_text(yaml.safe_dump(claim("probe", [request("gpu", sc.cls)])))
    try:
        # a real queue: a0, a1 and the copy all queued (creation order) before the scheduler tries any of them
        with cluster.scheduler_held():
            for name in ("a0", "a1"):
                sc.api.post(
                    f"/apis/resource.k8s.io/v1/namespaces/{other}/resourceclaims",
                    claim(f"{name}-gpu", [request("gpu", sc.cls)]),
                )
                sc.api.post(f"/api/v1/namespaces/{other}/pods", pod(name, {"gpu": f"{name}-gpu"}))
            time.sleep(1.1)
            m = cluster.kubectl_dra("match", "claim", "-f", str(manifest), "--count", "2", "-n", sc.ns, "-o", "json")
            assert m.code == 1 and m.json["count"]["fit"] == 0, str(m)
            alone = cluster.kubectl_dra("match", "claim", "-f", str(manifest), "-n", sc.ns, "-o", "json")
            assert alone.code == 0, str(alone)  # the claim alone fits: nothing is allocated yet
            sc.create(claim("copy-gpu", [request("gpu", sc.cls)]))
            sc.create(pod("copy", {"gpu": "copy-gpu"}))
        for name in ("a0", "a1"):
            cluster.wait_bound(other, name, timeout=60)
        cluster.wait_unschedulable(sc.ns, "copy", "cannot allocate all claims")
    finally:
        cluster.delete_namespace(other)


def test_the_held_scheduler_queues_every_pod_before_it_schedules_one(cluster, scenario):
    """cluster.scheduler_held(): three pods want the one device, two of priority 0 created first, the third of
    priority 1000 last. The scheduler holds off while the test holds its Lease (no binding, no event), so when it
    takes the Lease all three are in its queue and the last-created one goes first by priority, as kubectl-dra's queue
    predicted; a scheduler that saw p0 before the others would have given it the device."""
    sc = scenario("held")
    sc.device_class()
    sc.slice([device("dev-0")])
    high = "kubectl-dra-e2e-held-high"
    sc.priority_class(high, 1000)
    with cluster.scheduler_held() as hold:
        for name in ("p0", "p1", "urgent"):
            sc.create(claim(f"{name}-gpu", [request("gpu", sc.cls)]))
            p = pod(name, {"gpu": f"{name}-gpu"})
            if name == "urgent":
                p["spec"]["priorityClassName"] = high
            sc.create(p)
            time.sleep(1.1)  # a second apart: an order the API shows
        st = cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json")
        assert st.json["queue"]["order"] == [f"{sc.ns}/urgent", f"{sc.ns}/p0", f"{sc.ns}/p1"], str(st)
        rows = {r["pod"]: r for r in st.json["items"]}
        assert rows["urgent"]["state"] == "OK" and rows["p0"]["state"] == rows["p1"]["state"] == "Blocked", str(st)
        time.sleep(3)  # held: nothing is scheduled, nothing is said
        assert not any(cluster.pod(sc.ns, n)["spec"].get("nodeName") for n in ("p0", "p1", "urgent"))
        assert not [e for e in cluster.events(sc.ns) if e["reason"] in ("Scheduled", "FailedScheduling")]
    assert hold.released_in < 5, hold.released_in
    cluster.wait_bound(sc.ns, "urgent", timeout=60)
    assert ["/".join(d) for d in cluster.allocated_devices(sc.ns, "urgent-gpu")] == rows["urgent"]["queue"]["devices"]
    for name in ("p0", "p1"):
        cluster.wait_unschedulable(sc.ns, name, "cannot allocate all claims")


def test_a_restarted_scheduler_queues_the_waiting_pods_in_list_order(cluster, scenario):
    """DRA431's caveat, seen: zz then aa (priority 0, a second apart) want the one device while the scheduler is held;
    a scheduler started after both exist lists them (namespace, then name) and stamps them in that order, so aa,
    created last, gets the device. kubectl-dra, which orders by creation, put zz first."""
    sc = scenario("relist")
    sc.device_class()
    sc.slice([device("dev-0")])
    with cluster.scheduler_held():
        for name in ("zz", "aa"):
            sc.create(claim(f"{name}-gpu", [request("gpu", sc.cls)]))
            sc.create(pod(name, {"gpu": f"{name}-gpu"}))
            time.sleep(1.1)
        st = cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json")
        assert st.json["queue"]["order"] == [f"{sc.ns}/zz", f"{sc.ns}/aa"], str(st)
        clusterlib.restart_scheduler(cluster.state)  # the Lease stays the test's: the new scheduler waits too
    # whichever is bound first (a loaded machine has taken over 60 s), then which one it is, with what happened
    bound = wait_for(
        "aa or zz to be bound",
        lambda: next((n for n in ("aa", "zz") if cluster.pod(sc.ns, n)["spec"].get("nodeName")), None),
        120,
    )
    said = {n: [(e["reason"], e.get("message")) for e in cluster.events(sc.ns, n)] for n in ("aa", "zz")}
    assert bound == "aa", f"{bound} got the device; the scheduler's events: {said}"
    cluster.wait_unschedulable(sc.ns, "zz", "cannot allocate all claims")


def test_priority_goes_first(cluster, scenario):
    sc = scenario("queueprio")
    sc.device_class()
    sc.slice([device("dev-0")])
    high = "kubectl-dra-e2e-high"
    sc.priority_class(high, 1000)
    for name, prio in (("low", None), ("high", high)):
        sc.create(claim(f"{name}-gpu", [request("gpu", sc.cls)]))
        p = pod(name, {"gpu": f"{name}-gpu"}, gated=True)
        if prio:
            p["spec"]["priorityClassName"] = prio
        sc.create(p)
        time.sleep(1.1)
    st = cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json")
    rows = _rows(st)
    assert rows[(sc.ns, "high")]["queue"]["outcome"] == "fits", str(st)
    low = rows[(sc.ns, "low")]["queue"]
    assert low["outcome"] == "taken" and low["ahead"][0]["why"] == "priority 1000 > 0", str(st)
    sc.ungate("high")
    cluster.wait_bound(sc.ns, "high", timeout=60)
    assert ["/".join(d) for d in cluster.allocated_devices(sc.ns, "high-gpu")] == rows[(sc.ns, "high")]["queue"][
        "devices"
    ]
    sc.ungate("low")
    cluster.wait_unschedulable(sc.ns, "low", "cannot allocate all claims")


def test_replicas_predicts_a_scale_up(cluster, scenario):
    """explain deploy/NAME --replicas 3 with one pod running and three devices: two more fit, the third does not;
    then the Deployment is scaled by three and the real controllers and scheduler must bind exactly two more."""
    sc = scenario("queuerep")
    sc.device_class()
    sc.slice([device("dev-0"), device("dev-1")])
    sc.slice([device("dev-0")], node="node-02")
    sc.gpu_template()
    sc.deployment("rep", 1)
    path = f"/apis/apps/v1/namespaces/{sc.ns}/deployments"
    first = wait_for(
        "the first pod bound", lambda: [p for p in cluster.pods(sc.ns, "app=rep") if p["spec"].get("nodeName")], 90
    )[0]["metadata"]["name"]

    r = cluster.kubectl_dra("explain", "deploy/rep", "-n", sc.ns, "--replicas", "3", "-o", "json")
    assert r.code == 1, str(r)
    rep = r.json["replicas"]
    assert (rep["asked"], rep["fit"]) == (3, 2), str(r)
    assert r.json["verdict"]["missing"] == "device" and any(f["code"] == "DRA404" for f in r.json["findings"]), str(r)
    ok = cluster.kubectl_dra("explain", "deploy/rep", "-n", sc.ns, "--replicas", "2", "-o", "json")
    assert ok.code == 0 and ok.json["replicas"]["fit"] == 2, str(ok)

    sc.api.patch(f"{path}/rep", {"spec": {"replicas": 4}}, kind="merge")
    wait_for("four pods", lambda: len(cluster.pods(sc.ns, "app=rep")) == 4, 90)
    bound = wait_for(
        "three pods bound",
        lambda: (b := [p for p in cluster.pods(sc.ns, "app=rep") if p["spec"].get("nodeName")]) and len(b) == 3 and b,
        90,
    )
    left = next(p["metadata"]["name"] for p in cluster.pods(sc.ns, "app=rep") if not p["spec"].get("nodeName"))
    cluster.wait_unschedulable(sc.ns, left, "cannot allocate all claims", timeout=90)
    # The two new pods went where the prediction put its two copies (the only free devices: one per node).
    new = {}
    for p in bound:
        if p["metadata"]["name"] != first:
            new[p["spec"]["nodeName"]] = new.get(p["spec"]["nodeName"], 0) + 1
    assert new == rep["nodes"], (new, rep)


def test_priority_does_not_preempt_for_devices(cluster, scenario):
    """A pod of priority 1000 wants the one device, which a running pod of priority 0 holds: the real scheduler
    leaves it Pending and evicts nobody ('Preemption is not helpful'); kubectl-dra says priority does not help."""
    sc = scenario("queuepre")
    sc.device_class()
    sc.slice([device("dev-0")])
    high = "kubectl-dra-e2e-urgent"
    sc.priority_class(high, 1000)
    sc.create(claim("low-gpu", [request("gpu", sc.cls)]))
    sc.create(pod("low", {"gpu": "low-gpu"}))
    cluster.wait_bound(sc.ns, "low", timeout=60)
    sc.create(claim("urgent-gpu", [request("gpu", sc.cls)]))
    p = pod("urgent", {"gpu": "urgent-gpu"})
    p["spec"]["priorityClassName"] = high
    sc.create(p)
    ev = cluster.wait_unschedulable(sc.ns, "urgent", "cannot allocate all claims")
    assert "Preemption is not helpful" in ev["message"], ev
    r = cluster.kubectl_dra("explain", "pod", "urgent", "-n", sc.ns, "-o", "json")
    assert r.code == 1 and r.json["verdict"]["missing"] == "device", str(r)
    f = next(f for f in r.json["findings"] if f["code"] == "DRA434")
    # explain reads the pods bound to nodes (NodeResourcesFit): the holder's priority is known, not only its name
    assert f"{sc.ns}/low (priority 0) holds" in f["message"] and "does not preempt" in f["message"], f
    st = cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json")  # status reads the namespace's pods
    rows = {x["pod"]: x for x in st.json["items"]}
    assert rows["urgent"]["state"] == "Blocked" and rows["low"]["state"] == "OK", str(st)
    time.sleep(2)
    assert cluster.pod(sc.ns, "low")["spec"].get("nodeName") and not cluster.pod(sc.ns, "low")["metadata"].get(
        "deletionTimestamp"
    ), "the low-priority pod was preempted"


def test_a_gang_that_does_not_fit_gets_nothing_and_the_pod_behind_it_does(gang_cluster, gang_scenario):
    """Gang scheduling on (GenericWorkload, v1.37.2): a PodGroup of 3 workers with minCount 3, one GPU each, and 2
    GPUs. kubectl-dra predicts, while every pod is gated, that the group gets nothing (DRA435) and the notebook
    behind it gets a GPU; the gates go, the real scheduler's group cycle places none of the workers, and the
    notebook is bound to a GPU."""
    sc = gang_scenario("gang")
    sc.device_class()
    sc.slice([device("dev-0"), device("dev-1")])
    sc.api.post(
        f"/apis/scheduling.k8s.io/v1beta1/namespaces/{sc.ns}/podgroups",
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "train"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}},
        },
    )
    workers = [f"worker-{i}" for i in range(3)]
    for name in [*workers, "notebook"]:
        sc.create(claim(f"{name}-gpu", [request("gpu", sc.cls)]))
        p = pod(name, {"gpu": f"{name}-gpu"}, gated=True)
        if name != "notebook":
            p["spec"]["schedulingGroup"] = {"podGroupName": "train"}
        created = sc.create(p)
        if name != "notebook":
            assert created["spec"].get("schedulingGroup") == {"podGroupName": "train"}, created["spec"]
        time.sleep(1.1)

    st = gang_cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json")
    assert st.code == 1, str(st)
    rows = {r["pod"]: r for r in st.json["items"]}
    for w in workers:
        q = rows[w]["queue"]
        assert q["outcome"] == "gang" and q["gated"], str(st)
        assert "minCount 3" in q["reason"] and "2 fit" in q["reason"], q
    nb = rows["notebook"]["queue"]
    assert nb["outcome"] == "fits", str(st)
    ex = gang_cluster.kubectl_dra("explain", "pod", "worker-1", "-n", sc.ns, "-o", "json")
    assert ex.code == 1 and ex.json["findings"][0]["code"] == "DRA435", str(ex)

    for w in workers:
        sc.ungate(w)
    for w in workers:
        gang_cluster.wait_event(sc.ns, w, "FailedScheduling", timeout=60)
    time.sleep(2)
    assert not any(gang_cluster.pod(sc.ns, w)["spec"].get("nodeName") for w in workers)
    sc.ungate("notebook")
    gang_cluster.wait_bound(sc.ns, "notebook", timeout=60)
    real = ["/".join(d) for d in gang_cluster.allocated_devices(sc.ns, "notebook-gpu")]
    assert real == nb["devices"], f"real {real}, predicted {nb['devices']}"
    assert not any(gang_cluster.pod(sc.ns, w)["spec"].get("nodeName") for w in workers)
    # after the attempt, the workers are still blocked by their group (tried pods: certain, alone in their component)
    after = gang_cluster.kubectl_dra("explain", "pod", "worker-0", "-n", sc.ns, "-o", "json")
    assert after.code == 1, str(after)


def test_a_pod_of_other_devices_ahead_may_take_the_cpu_the_pod_needs(scenario):
    """nic-pod (10 cpu) may go to node-01 or node-02, gpu-pod (8 cpu) only to node-02, the node with its GPU. The
    queue's dry-run puts nic-pod on node-01, the first in its order, and gpu-pod then fits on node-02; kubectl-dra
    used to say so, certain. The real scheduler scores node-02 higher for nic-pod (node-01 runs a 4-cpu pod) and
    gpu-pod stays Pending. The answer was then undetermined; with the scheduler's scores modelled (pod/score.py:
    the cluster's nodes are as large, node-01 is the busier) kubectl-dra says gpu-pod gets nothing, certain, and
    the real scheduler agrees."""
    from dra_objects import hog, release

    sc = scenario("crowd")
    sc.device_class()
    sc.slice([device("nic-0", attrs={"kind": "nic"})], node="node-01")
    sc.slice([device("nic-1", attrs={"kind": "nic"}), device("gpu-0", attrs={"kind": "gpu"})],
             node="node-02")  # fmt: skip
    held = hog(sc, "4")
    try:
        for name, kind, cpu in (("nic-pod", "nic", "10"), ("gpu-pod", "gpu", "8")):
            sel = f'device.attributes["{sc.driver}"].kind == "{kind}"'
            sc.create(claim(f"{name}-c", [request("dev", sc.cls, selectors=[sel])]))
            p = pod(name, {"dev": f"{name}-c"}, gated=True)
            p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu
            sc.create(p)
            time.sleep(1.1)  # created a second apart: an order, not a tie
        r = sc.cluster.kubectl_dra("explain", "pod", "gpu-pod", "-n", sc.ns, "-o", "json")
        # (exit 1: the gate blocks it, and the queue gives node-02's room to nic-pod)
        assert r.json["queue"]["outcome"] == "taken", str(r)
        assert "in every order and choice of nodes" in r.json["queue"]["reason"], str(r)
        assert "DRA431" not in {f["code"] for f in r.json["findings"]}, str(r)
        sc.ungate("nic-pod")
        assert sc.cluster.wait_bound(sc.ns, "nic-pod", timeout=60)["spec"]["nodeName"] == "node-02"
        sc.ungate("gpu-pod")
        sc.cluster.wait_event(sc.ns, "gpu-pod", "FailedScheduling", "Insufficient cpu", timeout=60)
        assert not sc.cluster.pod(sc.ns, "gpu-pod")["spec"].get("nodeName")
    finally:
        for name in ("nic-pod", "gpu-pod", held):
            release(sc, name)


def test_a_pending_pod_without_devices_ahead_takes_the_cpu_the_pod_needs(scenario):
    """batch (10 cpu, no claims, its nodeSelector node-02) was created first; gpu-pod (8 cpu) can only go to
    node-02, the node with its GPU. Alone, gpu-pod fits; the scheduler takes batch from the same queue first, and
    kubectl-dra must not say OK. It tries the orders and nodes the API leaves open (analyze/queue/alternatives.py):
    batch has one node, and there it leaves too little cpu for gpu-pod, with no pod of a lower priority on it to
    preempt: the devices' room goes to the pod ahead for certain (DRA430), naming batch. The real scheduler binds
    batch to node-02 and gpu-pod stays Pending with Insufficient cpu. (Before the alternatives: undetermined.)"""
    from dra_objects import PAUSE, release

    sc = scenario("plainahead")
    sc.device_class()
    sc.slice([device("gpu-0")], node="node-02")
    batch = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "batch", "namespace": sc.ns},
        "spec": {
            "nodeSelector": {"kubernetes.io/hostname": "node-02"},
            "schedulingGates": [{"name": "example.com/wait"}],
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "b", "image": PAUSE, "resources": {"requests": {"cpu": "10"}}}],
        },
    }
    sc.create(batch)
    time.sleep(1.1)  # created a second apart: an order, not a tie
    try:
        sc.create(claim("gpu-pod-c", [request("dev", sc.cls)]))
        p = pod("gpu-pod", {"dev": "gpu-pod-c"}, gated=True)
        p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "8"
        sc.create(p)
        r = sc.cluster.kubectl_dra("explain", "pod", "gpu-pod", "-n", sc.ns, "-o", "json")
        assert r.json["queue"]["outcome"] == "taken", str(r)
        assert "in every order" in r.json["queue"]["reason"] and f"{sc.ns}/batch" in r.json["queue"]["reason"]
        alone = sc.cluster.kubectl_dra("explain", "pod", "gpu-pod", "-n", sc.ns, "--alone", "-o", "json")
        assert "node-02" in str(alone.json["pieces"]), str(alone)  # alone, its devices and cpu are on node-02
        sc.ungate("batch")
        assert sc.cluster.wait_bound(sc.ns, "batch", timeout=60)["spec"]["nodeName"] == "node-02"
        sc.ungate("gpu-pod")
        sc.cluster.wait_event(sc.ns, "gpu-pod", "FailedScheduling", "Insufficient cpu", timeout=60)
        assert not sc.cluster.pod(sc.ns, "gpu-pod")["spec"].get("nodeName")
        after = sc.cluster.kubectl_dra("explain", "pod", "gpu-pod", "-n", sc.ns, "-o", "json")
        assert after.code == 1, str(after)  # batch is bound now: node-02's cpu is gone for certain
    finally:
        for name in ("batch", "gpu-pod"):
            if sc.api.get(f"/api/v1/namespaces/{sc.ns}/pods/{name}", ok404=True) is not None:
                release(sc, name)


def test_a_pod_ahead_with_a_choice_of_nodes_leaves_enough_either_way(scenario):
    """anywhere (one GPU, created first) may go to node-01 (3 GPUs) or node-02 (1 GPU), as the scheduler's scores
    pick; pair (one claim of two requests, a GPU each, pinned to node-01) comes after it. Two of node-01's GPUs are
    left whichever node anywhere gets: kubectl-dra tries both (analyze/queue/alternatives.py) and says pair fits
    for certain, naming no devices (which ones depends on anywhere's node). The real scheduler binds both.
    (Before the alternatives: undetermined, "a pod ahead may go to more than one node".)"""
    sc = scenario("eitherway")
    sc.device_class()
    sc.slice([device("gpu-0"), device("gpu-1"), device("gpu-2")], node="node-01")
    sc.slice([device("gpu-0")], node="node-02")
    sc.create(claim("anywhere-gpu", [request("gpu", sc.cls)]))
    sc.create(pod("anywhere", {"gpu": "anywhere-gpu"}, gated=True))
    time.sleep(1.1)  # created a second apart: an order, not a tie
    sc.create(claim("pair-gpus", [request("a", sc.cls), request("b", sc.cls)]))
    sc.create(pod("pair", {"gpu": "pair-gpus"}, gated=True, node_selector={"kubernetes.io/hostname": "node-01"}))
    r = sc.cluster.kubectl_dra("explain", "pod", "pair", "-n", sc.ns, "-o", "json")
    place = r.json["queue"]
    assert place["outcome"] == "fits" and place["devices"] == [] and place["estimated"], str(r)
    assert "in every order and choice of nodes" in place["reason"] and f"{sc.ns}/anywhere" in place["reason"], str(r)
    st = sc.cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json")
    assert {row["pod"]: row["queue"]["outcome"] for row in st.json["items"]} == {"anywhere": "fits", "pair": "fits"}
    for name in ("anywhere", "pair"):
        sc.ungate(name)
        sc.cluster.wait_bound(sc.ns, name, timeout=60)
    assert sc.cluster.pod(sc.ns, "pair")["spec"]["nodeName"] == "node-01"


def test_a_node_the_scheduler_picks_is_estimated_and_a_pinned_one_is_not(scenario):
    """first and second (labelled: a workload's pods, whose scores kubectl-dra does not model) may each go to
    node-01 or node-02, one GPU each; pinned (created last, held to node-03 by its nodeSelector) has one node. The
    places of first and second name the estimated order's nodes and devices as estimated (the scheduler's pick is
    open), and both fit for certain; pinned's place is exact. The real scheduler binds first and second to the two
    nodes, one each, and pinned to node-03 with the device named."""
    sc = scenario("nodepick")
    sc.device_class()
    for n in ("node-01", "node-02", "node-03"):
        sc.slice([device("gpu-0")], node=n)
    names = ("first", "second", "pinned")
    for name in names:
        sc.create(claim(f"{name}-gpu", [request("gpu", sc.cls)]))
        obj = pod(name, {"gpu": f"{name}-gpu"}, gated=True,
                  node_selector={"kubernetes.io/hostname": "node-03"} if name == "pinned" else None)  # fmt: skip
        if name != "pinned":
            obj["metadata"]["labels"] = {"app": "nodepick"}
            obj["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                                              "values": ["node-01", "node-02"]}]}]}}}  # fmt: skip
        sc.create(obj)
        time.sleep(1.1)  # created a second apart: an order, not a tie
    st = sc.cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json")
    rows = {row["pod"]: row["queue"] for row in st.json["items"]}
    for name in ("first", "second"):
        q = rows[name]
        assert q["outcome"] == "fits" and q["estimated"] and q["node"] in ("node-01", "node-02"), str(st)
        assert len(q["devices"]) == 1 and "the node is the estimated order's" in q["reason"], str(st)
    assert "it passes other nodes too" in rows["first"]["reason"], str(st)
    assert f"the node of {sc.ns}/first, ahead of it, is open" in rows["second"]["reason"], str(st)
    assert rows["pinned"]["outcome"] == "fits" and not rows["pinned"]["estimated"], str(st)
    assert rows["pinned"]["node"] == "node-03" and "estimated order's" not in rows["pinned"]["reason"], str(st)
    for name in names:
        sc.ungate(name)
        sc.cluster.wait_bound(sc.ns, name, timeout=60)
    bound = {name: sc.cluster.pod(sc.ns, name)["spec"]["nodeName"] for name in names}
    assert sorted((bound["first"], bound["second"])) == ["node-01", "node-02"], bound
    assert bound["pinned"] == "node-03", bound
    real = ["/".join(d) for d in sc.cluster.allocated_devices(sc.ns, "pinned-gpu")]
    assert real == rows["pinned"]["devices"], (real, rows["pinned"])


def test_identical_pods_that_fill_the_nodes_cpu_are_counted_whichever_nodes_they_get(scenario):
    """Twenty identical pods (7 cpu and one GPU each, created a second apart) on the three 16-cpu nodes, four GPUs
    each: two fit on a node by cpu, so six get devices, whichever nodes the scheduler's tied scores send them to, and
    the others stay Pending. Past 16 pods ahead the orders are not tried one by one (alternatives.py), and each node
    may be filled by any pod ahead: kubectl-dra said undetermined for the last copies ("has room for it alone, but
    not once the pods ahead are placed there"). The identical pods' count (rules.py identical_pods) now answers every
    one, certain; the real scheduler binds exactly the pods said to fit."""
    sc = scenario("cpufill")
    sc.device_class()
    for n in ("node-01", "node-02", "node-03"):
        sc.slice([device(f"gpu-{i}") for i in range(4)], node=n)
    names = [f"w{i:02d}" for i in range(20)]
    for name in names:
        sc.create(claim(f"{name}-gpu", [request("gpu", sc.cls)]))
        p = pod(name, {"gpu": f"{name}-gpu"}, gated=True)
        p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "7"
        sc.create(p)
        time.sleep(1.1)  # created a second apart: an order, not a tie
    st = sc.cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json")
    rows = {row["pod"]: row for row in st.json["items"]}
    assert {r["state"] for r in rows.values()} <= {"OK", "Blocked"}, str(st)  # every answer certain
    fits = [n for n in names if rows[n]["queue"]["outcome"] == "fits"]
    assert fits == names[: len(fits)] and 0 < len(fits) < len(names), str(st)
    for name in names:  # the gates removed in creation order: the queue's order
        sc.ungate(name)
    for name in fits:
        sc.cluster.wait_bound(sc.ns, name, timeout=60)
    for name in names[len(fits) :]:
        sc.cluster.wait_event(sc.ns, name, "FailedScheduling", "Insufficient cpu", timeout=60)
        assert not sc.cluster.pod(sc.ns, name)["spec"].get("nodeName"), name
