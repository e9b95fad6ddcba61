"""Errors the scheduler meets where it meets them (issue 29, item 3): kube-scheduler runs the DynamicResources
Filter on a node only after the filters before it pass there (NodeResourcesFit among them: default plugin order),
and the allocator evaluates a device's selectors before its own node for a slice with perDeviceNodeSelection
(isSelectable, every minor), so a CEL error of a device of another node is met on every node that slice reaches."""

from __future__ import annotations

from dataclasses import replace

import builders
from builders import container, dclass, device, request

from kubectl_dra.analyze.reports.explain import explain_pod
from kubectl_dra.features import Semantics
from kubectl_dra.model.objects import snapshot_from_objects

S37 = Semantics.for_version((1, 37))
NS = "ml-team"
DRIVER = "gpu.example.com"
# a runtime error where the attribute is a string: no overload of > for (string, int)
SELECTOR = f'device.attributes["{DRIVER}"].n > 1'


def node(name, cpu="8", **labels):
    return builders.node(name, allocatable={"cpu": cpu}, hostname=False, **{"pool": "a", **labels})


def dev(name, n, **where):
    return device(name, attrs={"n": n}, **where)


def rslice(name, devices, **spec):
    return builders.rslice(name, devices, pool=name, driver=DRIVER, **spec)


def objects(pod_spec: dict, slices: list, nodes: list) -> list:
    cls = dclass("gpu", f'device.driver == "{DRIVER}"')
    claim = builders.claim("c", [request(selectors=[SELECTOR])], ns=NS, uid=False)
    app = container("a", "4")
    pod = builders.pod("p", [("gpu", "claim", "c")], ns=NS, uid="uid-p", containers=[app], **pod_spec)
    return [cls, claim, pod, *slices, *nodes]


def explain(objs):
    snap = replace(snapshot_from_objects(objs, NS), bound_pods=True)  # every bound pod listed: none
    return explain_pod(snap, S37, NS, "p")


def codes(r):
    return {f.code for f in r.findings}


def test_an_error_on_a_node_without_room_is_never_met():
    # node-01's device errors in CEL, but node-01 lacks the cpu: NodeResourcesFit rejects it before DynamicResources
    objs = objects({}, [rslice("s1", [dev("bad", "x")], nodeName="node-01"),
                        rslice("s2", [dev("ok", 5)], nodeName="node-02")],
                   [node("node-01", cpu="2"), node("node-02")])  # fmt: skip
    r = explain(objs)
    assert "DRA301" not in codes(r), r.findings
    assert r.verdict.determined and not r.verdict.blocked, r.verdict
    assert r.verdict.summary == "claims allocatable now on node node-02", r.verdict
    assert {f.code for f in r.findings} == {"DRA003", "DRA002"}, r.findings  # node-01 is no node where they fit


def test_an_error_on_a_node_with_room_ends_the_attempt():
    objs = objects({}, [rslice("s1", [dev("bad", "x")], nodeName="node-01"),
                        rslice("s2", [dev("ok", 5)], nodeName="node-02")],
                   [node("node-01"), node("node-02")])  # fmt: skip
    r = explain(objs)
    assert "DRA301" in codes(r) and r.verdict.blocked, r.findings


def test_a_per_device_node_selection_slice_errors_on_every_node_it_reaches():
    # The slice reaches node-01 (dev "x1") and node-03 ("bad"); the pod may not use node-03. On node-01 the
    # allocator evaluates "bad"'s selectors before its node, so the attempt ends there too.
    pdns = rslice("s1", [dev("x1", 0, nodeName="node-01"), dev("bad", "x", nodeName="node-03")],
                  perDeviceNodeSelection=True)  # fmt: skip
    objs = objects({"nodeSelector": {"pool": "a"}}, [pdns, rslice("s2", [dev("ok", 5)], nodeName="node-02")],
                   [node("node-01"), node("node-02"), node("node-03", pool="b")])  # fmt: skip
    r = explain(objs)
    assert "DRA301" in codes(r) and r.verdict.blocked, (r.findings, r.body["claims"][0].get("dryRun"))


def test_an_error_on_a_node_an_allocated_claim_rules_out_still_ends_the_attempt():
    # Claim "a" is allocated on node-02. On node-01 the Filter allocates the pending claim "c" before it reports
    # "a" unavailable there: "bad"'s CEL error is met on node-01 and ends the attempt.
    objs = objects({}, [rslice("s1", [dev("bad", "x")], nodeName="node-01"),
                        rslice("s2", [dev("ok", 5), dev("held", 5)], nodeName="node-02")],
                   [node("node-01"), node("node-02")])  # fmt: skip
    held = builders.claim("a", [request()], results=[("gpu", "s2", "held")], node="node-02", ns=NS, uid=False)
    held["status"]["reservedFor"] = [{"resource": "pods", "name": "p", "uid": "uid-p"}]
    pod = next(o for o in objs if o["kind"] == "Pod")
    pod["spec"]["resourceClaims"].append({"name": "held", "resourceClaimName": "a"})
    r = explain([*objs, held])
    assert "DRA301" in codes(r) and r.verdict.blocked, (r.findings, r.verdict)
    assert next(f for f in r.findings if f.code == "DRA301").evidence.get("node") == "node-01"


# Whether the scheduler meets the error at all (analyze/pod/errors_met.py): DRA304, undetermined, where it may not.


def test_num_feasible_nodes_to_find_as_the_scheduler_computes_it():
    from kubectl_dra.analyze.pod.errors_met import num_feasible_nodes_to_find as k

    # schedule_one.go: every node below 100; else max(100, n x max(5, 50 - n/125) / 100)
    assert [k(n) for n in (3, 99, 100, 150, 1000, 5000, 6000, 20000)] == [3, 99, 100, 100, 420, 500, 300, 1000]
    assert k(1000, percentage=100) == 1000


def _many(total: int, feasible: int, bound=True):
    """node-000 holds the device that errs; nodes 1..feasible hold a good one; the rest hold none."""
    nodes = [node(f"node-{i:03d}") for i in range(total)]
    slices = [rslice("s000", [dev("bad", "x")], nodeName="node-000")]
    slices += [rslice(f"s{i:03d}", [dev("ok", 5)], nodeName=f"node-{i:03d}") for i in range(1, feasible + 1)]
    objs = objects({}, slices, nodes)
    snap = replace(snapshot_from_objects(objs, NS), bound_pods=bound)
    return explain_pod(snap, S37, NS, "p")


def test_in_a_large_cluster_the_error_may_not_be_met():
    # 150 nodes: the scheduler stops once it has 100 feasible ones, and 149 may be: node-000 may come after them
    r = _many(150, 149)
    assert "DRA304" in codes(r) and "DRA301" not in codes(r), r.findings
    assert not r.verdict.blocked and not r.verdict.determined, r.verdict
    f = next(f for f in r.findings if f.code == "DRA304")
    assert f.evidence["node"] == "node-000" and f.evidence["errorCode"] == "DRA301"
    assert "at 100 feasible nodes of 150" in f.message and "up to 149 may be feasible" in f.message, f.message


def test_in_a_large_cluster_with_few_feasible_nodes_every_node_is_filtered_and_the_error_is_met():
    r = _many(150, 99)  # fewer feasible nodes than the scheduler looks for: it filters them all
    assert "DRA301" in codes(r) and "DRA304" not in codes(r) and r.verdict.blocked, r.findings
    r = _many(99, 98)  # below 100 nodes every node is filtered, however many fit
    assert "DRA301" in codes(r) and r.verdict.blocked, r.findings


def test_an_error_on_a_node_whose_fit_is_unknown_may_not_be_met():
    objs = objects({}, [rslice("s1", [dev("bad", "x")], nodeName="node-01"),
                        rslice("s2", [dev("ok", 5)], nodeName="node-02")],
                   [node("node-01"), node("node-02")])  # fmt: skip
    pod = next(o for o in objs if o["kind"] == "Pod")
    app = [{"name": "a", "image": "x"}]
    bound = builders.pod("other", (), "node-02", ns=NS, uid=False, containers=app, phase="Running")
    # a dump without every bound pod: node-02 has one listed (known), node-01 none (unknown: maybe left out)
    r = explain_pod(snapshot_from_objects([*objs, bound], NS), S37, NS, "p")
    f = next((f for f in r.findings if f.code == "DRA304"), None)
    assert f is not None and not r.verdict.determined, r.findings
    assert "NodeResourcesFit runs first and may reject node-01" in f.message, f.message
    # and where the claims fit on no other node, the pod is blocked either way: the error finding as before
    pod["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "node-01"}
    objs[-1]["metadata"]["labels"]["kubernetes.io/hostname"] = "node-02"
    objs[-2]["metadata"]["labels"]["kubernetes.io/hostname"] = "node-01"
    r = explain_pod(snapshot_from_objects([*objs, bound], NS), S37, NS, "p")
    assert "DRA301" in codes(r) and "DRA304" not in codes(r) and r.verdict.blocked, r.findings


def test_a_pod_nominated_to_a_node_where_it_fits_never_meets_an_error_elsewhere():
    objs = objects({}, [rslice("s1", [dev("bad", "x")], nodeName="node-01"),
                        rslice("s2", [dev("ok", 5)], nodeName="node-02")],
                   [node("node-01"), node("node-02"), node("node-03")])  # fmt: skip
    pod = next(o for o in objs if o["kind"] == "Pod")
    pod["status"]["nominatedNodeName"] = "node-02"
    r = explain(objs)
    assert "DRA301" not in codes(r) and "DRA304" not in codes(r), r.findings
    assert r.verdict.determined and not r.verdict.blocked, r.verdict
    assert r.verdict.summary == "claims allocatable now on node node-02", r.verdict
    # nominated to a node where it does not fit: the scheduler filters every node and meets the error
    pod["status"]["nominatedNodeName"] = "node-03"
    r = explain(objs)
    assert "DRA301" in codes(r) and r.verdict.blocked, r.findings


def test_errors_on_several_nodes_are_named_as_the_ones_the_scheduler_may_report():
    """Filter runs on the nodes in parallel and the first error met ends the attempt: which one the scheduler reports
    is a race, so the finding names the others it may report instead."""
    objs = objects({}, [rslice("s1", [dev("bad", "x")], nodeName="node-01"),
                        rslice("s2", [dev("worse", "y")], nodeName="node-02"),
                        rslice("s3", [dev("ok", 5)], nodeName="node-03")],
                   [node("node-01"), node("node-02"), node("node-03")])  # fmt: skip
    r = explain(objs)
    f = next(f for f in r.findings if f.code == "DRA301")
    assert r.verdict.blocked and f.evidence["node"] == "node-01", r.findings
    assert list(f.evidence["alsoMet"]) == ["node-02"] and "s2/worse" in f.evidence["alsoMet"]["node-02"]
    assert "may report instead the error it meets on node node-02" in f.message, f.message


def test_an_error_on_a_device_in_use_is_never_met():
    """The allocator skips a device in use before it evaluates selectors on it: with no other device that passes,
    the pod fails for want of a device (DRA403), not with the error (seen live, stop 41; e2e
    test_a_selector_error_on_a_device_in_use_is_never_met)."""
    held = builders.claim("held", [request()], ns=NS, uid=False, results=[("gpu", "s1", "bad")], node="node-01")
    held["status"]["allocation"]["devices"]["results"][0]["driver"] = DRIVER
    objs = objects({}, [rslice("s1", [dev("bad", "x"), dev("low", 0)], nodeName="node-01")], [node("node-01")])
    r = explain([*objs, held])
    blocking = [f.code for f in r.findings if f.blocking]
    assert blocking == ["DRA403"] and r.verdict.determined, r.findings


def test_an_error_on_a_device_no_usable_node_reaches_is_never_met():
    objs = objects({"nodeSelector": {"pool": "a"}}, [rslice("s1", [dev("bad", "x")], nodeName="node-02"),
                                                     rslice("s2", [dev("low", 0)], nodeName="node-01")],
                   [node("node-01"), node("node-02", pool="b")])  # fmt: skip
    r = explain(objs)
    assert "DRA301" not in {f.code for f in r.findings if f.blocking} and r.verdict.blocked, r.findings
