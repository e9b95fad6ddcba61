"""NodeResourcesFit (analyze/pod/fit.py) against upstream's rules: component-helpers resource.PodRequests for the
arithmetic, noderesources/fit.go fitsRequest for the check, the scheduler cache for what a node has given away."""

from __future__ import annotations

from dataclasses import replace

import builders
from builders import claim, dclass, device, event, request, rslice
from builders import container as ctr

from kubectl_dra.analyze.pod.fit import BoundPods, Fit
from kubectl_dra.analyze.pod.resources import pod_requests, scheduler_units
from kubectl_dra.analyze.pod.scheduler import SchedulerWord, agreement_finding
from kubectl_dra.analyze.reports.explain import explain_pod
from kubectl_dra.features import Semantics
from kubectl_dra.model.objects import snapshot_from_objects
from kubectl_dra.model.snapshot import BOUND_PODS, Gap

S37 = Semantics.for_version((1, 37))
S34 = Semantics.for_version((1, 34))
NS = "ml-team"


def pod(name="p", containers=(), inits=(), node=None, phase="Pending", ns=NS, **spec):
    c, i = list(containers), list(inits)
    return builders.pod(name, (), node, ns=ns, uid=f"uid-{name}", containers=c, phase=phase, initContainers=i, **spec)


def node(name="node-01", **alloc):
    return builders.node(name, allocatable=alloc, hostname=False)


def units(p, bound=False):
    return scheduler_units(pod_requests(p, bound=bound))


# --- the pod's requests (component-helpers resource.PodRequests) ---


def test_containers_add_up_and_an_init_container_counts_only_when_larger():
    p = pod(containers=[ctr("a", "1", "1Gi"), ctr("b", "2", "1Gi")], inits=[ctr("i", "4", "512Mi")])
    assert units(p) == {"cpu": 4000, "memory": 2 * 2**30}


def test_sidecars_add_to_the_containers_and_to_every_init_container_after_them():
    # KEP-753: InitContainerUse(i) = sum(sidecars before i) + init i; the pod = max(containers + sidecars, those)
    p = pod(
        containers=[ctr("app", "3")],
        inits=[ctr("side1", "1", restart="Always"), ctr("init2", "6"), ctr("side3", "2", restart="Always")],
    )
    assert units(p) == {"cpu": 7000}  # init2 with side1 (7) beats app + side1 + side3 (6)
    p["spec"]["initContainers"][1]["resources"]["requests"]["cpu"] = "4"
    assert units(p) == {"cpu": 6000}


def test_overhead_is_added_and_pod_level_requests_replace_cpu_and_memory_only():
    p = pod(
        containers=[ctr("a", "1", "1Gi", **{"example.com/foo": "2"})],
        overhead={"cpu": "250m", "memory": "100Mi"},
        resources={"requests": {"cpu": "3", "memory": "4Gi"}},
    )
    assert units(p) == {"cpu": 3250, "memory": 4 * 2**30 + 100 * 2**20, "example.com/foo": 2}


def test_limits_without_requests_are_the_requests_and_quantities_round_up():
    p = pod(containers=[{"name": "a", "image": "x", "resources": {"limits": {"cpu": "500m", "memory": "1.5"}}}])
    assert pod_requests(p) == {"cpu": 500_000_000, "memory": 1_500_000_000}  # exact, in nano-units
    assert units(p) == {"cpu": 500, "memory": 2}


def test_a_bound_pod_counts_the_larger_of_spec_and_what_its_containers_were_given():
    p = pod(containers=[ctr("a", "1")], node="node-01", phase="Running")
    p["status"]["containerStatuses"] = [{"name": "a", "allocatedResources": {"cpu": "3"}}]
    assert units(p) == {"cpu": 1000}  # the pending pod's own request: spec only
    assert units(p, bound=True) == {"cpu": 3000}  # resized up: the node gave it 3
    p["status"]["containerStatuses"] = [
        {"name": "a", "allocatedResources": {"cpu": "500m"}, "resources": {"requests": {"cpu": "500m"}}}
    ]
    assert units(p, bound=True) == {"cpu": 1000}  # a resize down not yet actuated: spec still counts
    p["status"]["conditions"] = [{"type": "PodResizePending", "reason": "Infeasible"}]
    assert units(p, bound=True) == {"cpu": 500}  # an infeasible resize: only what it was given


# --- the check on a node (noderesources fitsRequest) ---


def fit_on(p, pods, n, complete=True, sem=S37, classes=()):
    return Fit(p, BoundPods(pods, complete), classes, sem).check(n)


def test_bound_pods_take_cpu_finished_ones_do_not_and_deleting_ones_still_do():
    me = pod(containers=[ctr("a", "2")])
    running = pod("r", [ctr("x", "5")], node="node-01", phase="Running", ns="batch")
    done = pod("d", [ctr("x", "8")], node="node-01", phase="Succeeded", ns="batch")
    deleting = pod("g", [ctr("x", "1500m")], node="node-01", phase="Running", ns="batch")
    deleting["metadata"]["deletionTimestamp"] = "2026-12-01T00:00:00Z"
    other = pod("o", [ctr("x", "8")], node="node-02", phase="Running", ns="batch")
    nf = fit_on(me, [running, done, deleting, other], node())
    assert nf.fits is False
    (s,) = nf.shortfalls
    assert (s.reason, s.requested, s.used, s.capacity) == ("Insufficient cpu", 2000, 6500, 8000)
    assert nf.describe() == "1.5 of 8 cpu free (the pod requests 2)"
    assert fit_on(me, [running, done, other], node()).fits is True


def test_too_many_pods_counts_every_bound_pod_even_without_requests():
    me = pod(containers=[ctr("a")])
    bound = [pod(f"b{i}", [ctr("x")], node="node-01", phase="Running", ns="batch") for i in range(3)]
    nf = fit_on(me, bound, node(pods="3"))
    assert nf.fits is False and nf.shortfalls[0].reason == "Too many pods"
    assert fit_on(me, bound, node(pods="4")).fits is True


def test_unknown_bound_pods_leave_the_fit_open_unless_the_pod_alone_is_too_big():
    me = pod(containers=[ctr("a", "2")])
    assert fit_on(me, [], node(), complete=False).fits is None
    assert fit_on(me, [], node(), complete=True).fits is True  # a live read: no pod there
    big = pod(containers=[ctr("a", "9")])
    nf = fit_on(big, [], node(), complete=False)
    assert nf.fits is False and nf.describe() == "8 cpu in all (the pod requests 9)"


def test_an_extended_resource_a_class_maps_goes_to_dra_only_on_nodes_without_it():
    gpu_class = dclass("gpu", "", extendedResourceName="example.com/gpu")
    me = pod(containers=[ctr("a", "1", **{"example.com/gpu": "1"})])
    assert fit_on(me, [], node(), classes=[gpu_class]).fits is True  # DRA serves it: NodeResourcesFit skips it
    nf = fit_on(me, [], node(), classes=[])  # no class maps it: the node has none
    assert nf.fits is False and nf.shortfalls[0].reason == "Insufficient example.com/gpu"
    plugin = node(**{"example.com/gpu": "1"})  # a device plugin advertises it: counted against allocatable
    used = pod("u", [ctr("x", **{"example.com/gpu": "1"})], node="node-01", phase="Running", ns="batch")
    assert fit_on(me, [used], plugin, classes=[gpu_class]).fits is False
    assert fit_on(me, [], node(), classes=[gpu_class], sem=S34).fits is False  # the gate is off in 1.34


# --- through explain ---

DRIVER = "gpu.example.com"
CLUSTER = [
    dclass("gpu", ""),
    rslice("s1", [device("gpu-0")], "node-01", driver=DRIVER),
    claim("c", [request()], ns=NS, uid="uid-c"),
    node(),
]


def trainer():
    return pod("trainer-0", [ctr("app", "2")], resourceClaims=[{"name": "gpu", "resourceClaimName": "c"}])


def test_a_live_read_that_may_not_list_the_bound_pods_is_undetermined_and_says_so():
    snap = snapshot_from_objects([trainer(), *CLUSTER], NS)
    gap = Gap("list", BOUND_PODS, None, "forbidden", 'pods is forbidden: User "u" cannot list resource "pods"')
    snap = replace(snap, source="live", bound_pods=True, gaps=(gap,))
    r = explain_pod(snap, S37, NS, "trainer-0")
    assert not r.verdict.determined and not r.verdict.blocked
    assert "DRA506" in [f.code for f in r.findings]
    assert "could not be listed (pods is forbidden" in r.verdict.summary


def test_the_only_node_without_cpu_blocks_and_a_live_read_without_a_gap_fits():
    hog = pod("etl", [ctr("x", "7")], node="node-01", phase="Running", ns="batch")
    snap = replace(snapshot_from_objects([trainer(), hog, *CLUSTER], NS), source="live", bound_pods=True)
    r = explain_pod(snap, S37, NS, "trainer-0")
    assert r.verdict.blocked and r.verdict.missing == "node"
    assert (
        r.verdict.summary
        == "node-01 is the only node where the claims fit, and it has 1 of 8 cpu free (the pod requests 2)"
    )
    snap = replace(snapshot_from_objects([trainer(), *CLUSTER], NS), source="live", bound_pods=True)
    r = explain_pod(snap, S37, NS, "trainer-0")
    assert not r.verdict.blocked and r.verdict.determined


# --- the scheduler's word (scheduler.py) ---


def test_a_filter_the_analysis_does_not_model_leaves_the_verdict_open_with_the_schedulers_words():
    msg = "0/3 nodes are available: 1 node(s) didn't match pod anti-affinity rules, 2 cannot allocate all claims."
    word = SchedulerWord("unschedulable", msg, "t", "event FailedScheduling", 3, 2)
    assert word.non_dra_reasons == ["1 node(s) didn't match pod anti-affinity rules"]
    f = agreement_finding(word, False, ["node-01"], False, [])
    assert f is not None and f.code == "DRA022"
    assert "didn't match pod anti-affinity rules" in f.message
    assert agreement_finding(word, True, [], False, []) is None  # our own block (DRA504) explains it


# --- what the input says about the bound pods ---


def test_a_bundle_header_restores_whether_every_node_s_bound_pods_were_listed():
    from kubectl_dra.gather.bundle import read_header

    assert read_header({"boundPods": True})["bound_pods"] is True
    assert read_header({})["bound_pods"] is False  # a bundle of an older kubectl-dra: nodes known by their pods


def test_a_pod_in_two_live_lists_is_counted_once_on_its_node():
    from kubectl_dra.gather.assemble import live_snapshot

    hog = pod("etl", [ctr("x", "5")], node="node-01", phase="Running", ns="batch")
    meta = {"gaps": (), "server_version": None, "resource_api_version": "v1", "namespace": NS, "bound_pods": True}
    snap = live_snapshot([trainer(), hog, dict(hog), *CLUSTER], meta)
    assert [p["metadata"]["name"] for p in snap.pods].count("etl") == 1
    r = explain_pod(snap, S37, NS, "trainer-0")
    assert not r.verdict.blocked and r.verdict.determined, r.verdict  # 8 - 5 = 3 cpu left for 2


def test_without_node_objects_the_fit_on_an_inferred_node_is_unknown():
    snap = snapshot_from_objects([trainer(), *CLUSTER[:-1]], NS)  # the slices name node-01; no Node object
    r = explain_pod(snap, S37, NS, "trainer-0")
    assert not r.verdict.determined, r.verdict
    assert "the input has no Node objects (node-01 inferred from the slices)" in r.verdict.summary


def test_when_the_dry_run_stops_at_its_node_budget_every_node_it_tried_being_full_is_not_a_block():
    from kubectl_dra.analyze.pod.dryrun_search import MAX_DRYRUN_NODES

    objs = [trainer(), CLUSTER[0], CLUSTER[2]]
    for i in range(MAX_DRYRUN_NODES + 5):
        n = f"node-{i:03d}"
        objs.append(node(n))
        objs.append(pod(f"etl-{i}", [ctr("x", "7")], node=n, phase="Running", ns="batch"))
        objs.append(rslice(f"s-{n}", [device("gpu-0")], n, driver=DRIVER))
    snap = replace(snapshot_from_objects(objs, NS), source="live", bound_pods=True)
    r = explain_pod(snap, S37, NS, "trainer-0")
    assert not r.verdict.blocked and not r.verdict.determined, r.verdict
    f = next(f for f in r.findings if f.code == "DRA506")
    assert f"stopped after {MAX_DRYRUN_NODES} of {MAX_DRYRUN_NODES + 5} nodes" in f.message, f.message
    assert "and 197 more" in f.message  # three named, the rest counted


def test_a_quantity_the_api_server_would_refuse_is_a_one_line_error_naming_its_pod():
    import pytest

    from kubectl_dra.errors import DraError

    bad = pod("etl", [ctr("x", "lots")], node="node-01", phase="Running", ns="batch")
    snap = replace(snapshot_from_objects([trainer(), bad, *CLUSTER], NS), source="live", bound_pods=True)
    with pytest.raises(DraError, match=r"pod bound to node-01 batch/etl: cpu: 'lots' is not a valid quantity"):
        explain_pod(snap, S37, NS, "trainer-0")


def test_malformed_statuses_and_resources_are_read_as_absent_not_a_crash():
    p = pod(containers=[ctr("a", "1")], node="node-01", phase="Running", resources=[1])
    p["status"]["containerStatuses"] = "x"
    assert units(p, bound=True) == {"cpu": 1000}
    p["status"]["containerStatuses"] = [{"name": "a", "resources": [1], "allocatedResources": None}]
    assert units(p, bound=True) == {"cpu": 1000}


def test_unknown_fit_and_a_scheduler_that_names_cpu_is_undetermined_with_its_words_not_a_disagreement():
    message = "0/3 nodes are available: 1 Insufficient cpu, 2 cannot allocate all claims."
    said = event("trainer-0", "FailedScheduling", message, "2026-12-01T09:00:00Z", ns=NS, pod_uid="uid-trainer-0")
    snap = snapshot_from_objects([trainer(), said, *CLUSTER], NS)  # a file: no pod bound to node-01
    r = explain_pod(snap, S37, NS, "trainer-0")
    codes = [f.code for f in r.findings]
    assert "DRA506" in codes and "DRA005" not in codes and "DRA022" not in codes, codes
    assert "the scheduler's latest attempt: '0/3 nodes are available: 1 Insufficient cpu" in r.verdict.summary


def test_a_summary_names_a_few_of_many_nodes_and_counts_the_rest():
    """200 nodes without status.allocatable (a dump that cut them): the summary names three and counts the rest, so
    it fits a terminal line; the evidence keeps them all."""
    names = [f"gpu-{i:03d}" for i in range(200)]
    objs = [trainer(), claim("c", [request()], ns=NS, uid="uid-c"), dclass()]
    for n in names:
        objs.append(rslice(f"{n}-gpus", [device("gpu-0")], n, pool=n))
        bare = node(n)
        bare["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}  # no allocatable
        objs.append(bare)
    report = explain_pod(snapshot_from_objects(objs, NS), S37, NS, "trainer-0")
    f = next(f for f in report.findings if f.code == "DRA506")
    assert "gpu-000, gpu-001, gpu-002 and 197 more" in f.message, f.message
    assert "gpu-199" not in f.message and len(f.message) < 400, f.message
    assert f.evidence["nodes"] == sorted(names)
