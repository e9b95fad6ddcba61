"""Gangs on the real scheduler (v1.37.2 with GenericWorkload, the one gate PodGroups need in 1.37: with it the
scheduler adds its GangScheduling plugin to the default profile, and cluster.py serves scheduling.k8s.io/v1beta1;
see conftest.gang_cluster).

Every pod is created while kube-scheduler is stopped (Cluster.scheduler_paused), not gated: the scheduler then
meets them as pods that were never attempted, which is the queue kubectl-dra assumes (analyze/queue/). Once it runs
again it may schedule the first pod delivered before the next one reaches its queue, so the tests create the pods
in the order the queue takes them. kubectl-dra predicts while the scheduler is held; then the scheduler runs and
every pod's outcome (bound or not, and which devices) is compared with the prediction."""

from __future__ import annotations

import time

import pytest
from builders import device, request
from dra_objects import claim, pod
from e2e_helpers import wait_for

pytestmark = pytest.mark.e2e

PODGROUPS = "/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups"


def _podgroup(sc, name: str, min_count: int) -> None:
    sc.api.post(
        PODGROUPS.format(ns=sc.ns),
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
        },
    )


HIGH = "kubectl-dra-e2e-gang-high"  # a PriorityClass of value 1000


def _four_gpus(sc, group: str, min_count: int):
    """sc with its DeviceClass, 4 GPUs on node-01, the PriorityClass HIGH and the PodGroup GROUP."""
    sc.device_class()
    sc.slice([device(f"dev-{i}") for i in range(4)])
    sc.priority_class(HIGH, 1000)
    _podgroup(sc, group, min_count)
    return sc


def _pods_of_terminating_namespaces(cluster) -> list[str]:
    gone = {n["metadata"]["name"] for n in cluster.api.get("/api/v1/namespaces")["items"]
            if n["metadata"].get("deletionTimestamp")}  # fmt: skip
    return [
        f"{p['metadata']['namespace']}/{p['metadata']['name']}"
        for p in cluster.api.get("/api/v1/pods")["items"]
        if p["metadata"]["namespace"] in gone
    ]


def _gpu_pod(sc, name: str, group: str | None = None, priority_class: str | None = None) -> None:
    """A claim of one GPU and a pod that uses it (a member of GROUP, if given)."""
    sc.create(claim(f"{name}-gpu", [request("gpu", sc.cls)]))
    p = pod(name, {"gpu": f"{name}-gpu"})
    if group:
        p["spec"]["schedulingGroup"] = {"podGroupName": group}
    if priority_class:
        p["spec"]["priorityClassName"] = priority_class
    created = sc.create(p)
    if group:
        assert created["spec"].get("schedulingGroup") == {"podGroupName": group}, created["spec"]


def _devices(cluster, ns: str, name: str) -> list[str]:
    return ["/".join(d) for d in cluster.allocated_devices(ns, f"{name}-gpu")]


def _settled(cluster, ns: str, names: list[str], bound: set[str], timeout: float = 90) -> None:
    """Wait until the pods in BOUND are bound and every other one has been tried and left Pending
    (FailedScheduling), then check the left ones stay unbound."""
    for n in sorted(bound):
        cluster.wait_bound(ns, n, timeout=timeout)
    for n in names:
        if n not in bound:
            cluster.wait_event(ns, n, "FailedScheduling", timeout=timeout)
    time.sleep(2)  # (a late bind would show here)
    late = [n for n in names if n not in bound and cluster.pod(ns, n)["spec"].get("nodeName")]
    assert not late, f"bound although predicted to get nothing: {late}"


def test_a_gang_that_fits_alone_gets_nothing_after_the_pods_ahead(gang_scenario):
    """4 GPUs on node-01. Ahead of the gang: `urgent` (priority 1000) and `early` (priority 0, created before the
    workers), one GPU each; then the PodGroup `train` (minCount 3) of 3 workers, one GPU each; then `notebook`, one
    GPU. Alone the gang fits (4 >= 3); after the two pods ahead only 2 GPUs are left, so the group cycle places none
    of the workers and the notebook behind it gets one. kubectl-dra says so, certain, before the scheduler has seen
    any pod; the scheduler then binds urgent, early and notebook to the predicted devices and leaves every worker
    Pending.

    urgent is created first: after SIGCONT the scheduler may take the first pod delivered before the next one
    reaches its queue (seen: early created first got dev-0, though urgent's priority puts it ahead in the queue
    kubectl-dra models), so a pod of higher priority created later is not reliably ahead here."""
    sc = _four_gpus(gang_scenario("gangahead"), "train", 3)
    cluster = sc.cluster
    workers = [f"worker-{i}" for i in range(3)]
    names = ["urgent", "early", *workers, "notebook"]
    with cluster.scheduler_paused():
        # each a second after the one before (creationTimestamp counts seconds): an order, not a tie; the workers
        # within one second (the group cycle orders them by name then)
        _gpu_pod(sc, "urgent", priority_class=HIGH)
        time.sleep(1.1)
        _gpu_pod(sc, "early")
        time.sleep(1.1)
        for w in workers:
            _gpu_pod(sc, w, group="train")
        time.sleep(1.1)
        _gpu_pod(sc, "notebook")

        alone = cluster.kubectl_dra("explain", "pod", "worker-0", "-n", sc.ns, "--alone", "-o", "json")
        assert alone.code == 0 and alone.json["verdict"]["blocked"] is False, str(alone)  # the gang alone fits
        st = cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json")
        ex = {n: cluster.kubectl_dra("explain", "pod", n, "-n", sc.ns, "-o", "json") for n in names}
        assert not any(e["reason"] == "Scheduled" for e in cluster.events(sc.ns)), "the scheduler acted meanwhile"

    rows = {r["pod"]: r for r in st.json["items"]}
    assert set(rows) == set(names), str(st)
    assert st.json["queue"]["order"][:2] == [f"{sc.ns}/urgent", f"{sc.ns}/early"], str(st)
    for n in ("urgent", "early", "notebook"):
        q = rows[n]["queue"]
        assert q["outcome"] == "fits" and not q["gated"] and len(q["devices"]) == 1, (n, str(st))
        assert ex[n].code == 0 and ex[n].json["queue"] == q, (n, str(ex[n]))
    for w in workers:
        q = rows[w]["queue"]
        assert q["outcome"] == "gang" and not q["devices"], (w, str(st))
        assert "minCount 3); 2 fit, and worker-2 finds no device" in q["reason"], q
        assert ex[w].code == 1 and ex[w].json["queue"] == q, (w, str(ex[w]))
        assert ex[w].json["findings"][0]["code"] == "DRA435", str(ex[w])
    predicted = {n: rows[n]["queue"]["devices"] for n in names}

    _settled(cluster, sc.ns, names, {"urgent", "early", "notebook"})
    real = {n: _devices(cluster, sc.ns, n) for n in names}
    assert real == predicted, f"real {real}\npredicted {predicted}"
    # the group cycle's own words: two workers placed, the third found no GPU, so minCount 3 was not met
    ev = cluster.wait_event(sc.ns, "worker-0", "FailedScheduling", "minCount (3) cannot be satisfied: 2 scheduled")
    assert "pod group is unschedulable" in ev["message"], ev
    # afterwards (the notebook holds a GPU, 1 left), kubectl-dra still says the group gets nothing, in the group's
    # words alone: the scheduler's "minCount cannot be satisfied" on a member is the group's story (DRA435), not a
    # reason outside DRA (DRA021)
    for w in workers:
        r = cluster.kubectl_dra("explain", "pod", w, "-n", sc.ns, "-o", "json")
        assert r.code == 1 and r.json["queue"]["outcome"] == "gang", str(r)
        assert "1 fit" in r.json["queue"]["reason"], str(r)
        codes = [f["code"] for f in r.json["findings"]]
        assert codes[0] == "DRA435" and "DRA021" not in codes, str(r)


def test_a_gang_of_16_with_room_for_12_binds_12(gang_scenario):
    """8 GPUs on node-01 and 8 on node-02, of which a bound pod holds 4: 12 free. The PodGroup `big` has 16 workers
    (w-00..w-15, one GPU each) and minCount 12, then `late` wants one GPU. kubectl-dra predicts, before the
    scheduler has seen any of them, that the group is placed with 12 of its members (the first 12 in member order:
    priority, creation, name), the other 4 and `late` get nothing; the scheduler binds exactly those 12, on the 12
    free GPUs, and leaves the other 5 Pending."""
    sc = gang_scenario("gang16")
    cluster = sc.cluster
    # The test before this one deletes its namespace in the background, and its pods on node-01 would still count
    # in the scheduler's scores (analyze/pod/score.py) when status is asked, and be gone when explain is: wait
    wait_for("the pods of namespaces being deleted gone", lambda: not _pods_of_terminating_namespaces(cluster), 90)
    sc.device_class()
    sc.slice([device(f"dev-{i}") for i in range(8)], node="node-01")
    sc.slice([device(f"dev-{i}") for i in range(8)], node="node-02")
    sc.create(claim("holder-gpu", [request("gpu", sc.cls, count=4)]))
    sc.create(pod("holder", {"gpu": "holder-gpu"}, node_selector={"kubernetes.io/hostname": "node-02"}))
    cluster.wait_bound(sc.ns, "holder", timeout=60)
    held = _devices(cluster, sc.ns, "holder")
    assert len(held) == 4 and all("/node-02/" in d for d in held), held
    _podgroup(sc, "big", 12)
    workers = [f"w-{i:02d}" for i in range(16)]
    names = [*workers, "late"]
    with cluster.scheduler_paused():
        for w in workers:  # in name order: the order the group cycle tries them
            _gpu_pod(sc, w, group="big")
        time.sleep(1.1)
        _gpu_pod(sc, "late")
        st = cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json")
        ex = {n: cluster.kubectl_dra("explain", "pod", n, "-n", sc.ns, "-o", "json") for n in ("w-00", "w-15", "late")}
        assert not any(e["reason"] == "Scheduled" and e["involvedObject"]["name"] != "holder"
                       for e in cluster.events(sc.ns)), "the scheduler acted meanwhile"  # fmt: skip

    rows = {r["pod"]: r for r in st.json["items"]}
    assert set(rows) == {"holder", *names}, str(st)
    for w in workers[:12]:
        q = rows[w]["queue"]
        assert q["outcome"] == "fits" and len(q["devices"]) == 1, (w, str(st))
        assert "12 of its 16 pending members fit at once (minCount 12)" in q["reason"], q
    for w in workers[12:]:
        q = rows[w]["queue"]
        assert q["outcome"] == "taken" and not q["devices"], (w, str(st))
        assert "placed without it (12 of 16 members fit, minCount 12)" in q["reason"], q
    assert rows["late"]["queue"]["outcome"] == "taken" and rows["holder"]["state"] == "OK", str(st)
    for n, r in ex.items():
        assert r.json["queue"] == rows[n]["queue"], (n, str(r))
    assert ex["w-00"].code == 0 and ex["w-15"].code == 1 and ex["late"].code == 1, str(ex)
    assert ex["w-15"].json["verdict"]["missing"] == "device", str(ex["w-15"])
    # which of the two nodes a member goes to is the scheduler's scoring, not the dry-run's node order (seen: w-00 on
    # node-02, the dry-run's on node-01): kubectl-dra gives the node and devices as the estimated order's, not as
    # an answer
    f432 = next(f for f in ex["w-00"].json["findings"] if f["code"] == "DRA432")
    assert "in the estimated order" in f432["message"], f432
    predicted = {n: rows[n]["queue"]["devices"] for n in names}

    _settled(cluster, sc.ns, names, set(workers[:12]))
    real = {n: _devices(cluster, sc.ns, n) for n in names}
    assert not any(real[n] for n in [*workers[12:], "late"]), real
    # every free GPU went to the group, 8 on node-01 and 4 on node-02, as the prediction places them
    got = sorted(d for n in workers[:12] for d in real[n])
    assert got == sorted(d for n in workers[:12] for d in predicted[n]), f"real {real}\npredicted {predicted}"
    assert len(set(got)) == 12 and not set(got) & set(held), got
    # afterwards, a member left out is blocked for want of a device, and so is late
    for n in ("w-12", "late"):
        r = cluster.kubectl_dra("explain", "pod", n, "-n", sc.ns, "-o", "json")
        assert r.code == 1 and r.json["verdict"]["missing"] == "device", str(r)


def test_a_gang_whose_members_have_another_priority_than_its_podgroup_is_never_placed(gang_scenario):
    """The PodGroup `mixed` (minCount 2, no priority class: priority 0) and its 2 members of priority 1000, 4 GPUs,
    then `after`. The scheduler validates the group before its cycle (validatePodGroup: every member must have the
    group's priority) and fails it at every attempt: no member is placed, and `after` gets a GPU. kubectl-dra used to
    say undetermined (DRA431); the cluster has decided, and kubectl-dra says so (DRA435, certain)."""
    sc = _four_gpus(gang_scenario("gangprio"), "mixed", 2)
    cluster = sc.cluster
    workers = ["m-0", "m-1"]
    with cluster.scheduler_paused():
        for w in workers:
            _gpu_pod(sc, w, group="mixed", priority_class=HIGH)
        time.sleep(1.1)
        _gpu_pod(sc, "after")
        st = cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json")
        ex = cluster.kubectl_dra("explain", "pod", "m-1", "-n", sc.ns, "-o", "json")
    rows = {r["pod"]: r["queue"] for r in st.json["items"]}
    for w in workers:
        assert rows[w]["outcome"] == "gang" and not rows[w]["devices"], str(st)
        assert "the PodGroup's priority is 0 and m-0, m-1 have priority 1000;" in rows[w]["reason"], rows[w]
    assert rows["after"]["outcome"] == "fits", str(st)
    assert ex.code == 1 and ex.json["findings"][0]["code"] == "DRA435" and ex.json["queue"] == rows["m-1"], str(ex)

    _settled(cluster, sc.ns, [*workers, "after"], {"after"})
    assert _devices(cluster, sc.ns, "after") == rows["after"]["devices"]
    for w in workers:
        ev = cluster.wait_event(sc.ns, w, "FailedScheduling", "should have the same priority as the pod group's")
        assert "got 1000 and 0" in ev["message"], ev
    pg = sc.api.get(PODGROUPS.format(ns=sc.ns) + "/mixed")
    assert [c["reason"] for c in pg["status"]["conditions"]] == ["SchedulerError"], pg["status"]


def test_a_gang_whose_nodes_a_pod_without_dra_may_fill_is_never_called_placed(gang_scenario):
    """One GPU on node-01 and one on node-02 (16 cpu each); `batch` (no DRA, 8 cpu, node-01 or node-02), created
    first; then the PodGroup `pair` (minCount 2) of two workers asking a GPU and 10 cpu each. The queue's dry-run
    does not place pods without DRA: before, the group's count was certain (both fit: OK) while batch, placed first,
    leaves 8 cpu on its node and the pair cannot be placed together. kubectl-dra now leaves both workers open
    (Unknown, exit 2); the scheduler binds batch and leaves the workers Pending."""
    sc = gang_scenario("gangcpu")
    cluster = sc.cluster
    sc.device_class()
    sc.slice([device("dev-0")], node="node-01")
    sc.slice([device("dev-0")], node="node-02")
    _podgroup(sc, "pair", 2)
    two = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-01", "node-02"]}]}]}  # fmt: skip
    workers = ["pair-0", "pair-1"]
    with cluster.scheduler_paused():
        b = pod("batch")
        b["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "8"
        b["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": two}}
        sc.create(b)
        time.sleep(1.1)
        for w in workers:
            sc.create(claim(f"{w}-gpu", [request("gpu", sc.cls)]))
            p = pod(w, {"gpu": f"{w}-gpu"})
            p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "10"
            p["spec"]["schedulingGroup"] = {"podGroupName": "pair"}
            sc.create(p)
        st = cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json")
        assert not any(e["reason"] == "Scheduled" for e in cluster.events(sc.ns)), "the scheduler acted meanwhile"
    rows = {r["pod"]: r for r in st.json["items"]}
    assert set(rows) == set(workers), str(st)
    for w in workers:
        assert rows[w]["state"] == "Unknown", (w, str(st))
    assert st.code == 2, str(st)
    cluster.wait_bound(sc.ns, "batch", timeout=90)
    _settled(cluster, sc.ns, workers, set())
