"""DefaultPreemption for the node's resources (analyze/pod/preempt.py) against upstream v1.37.2's rules:
default_preemption.go SelectVictimsOnNode (remove every pod of lower priority, fit with the nominated pods, reprieve
the most important), PodEligibleToPreemptOthers, preemption.go pickOneNodeForPreemption."""

from __future__ import annotations

import builders
from builders import container as ctr

from kubectl_dra.analyze.pod.fit import BoundPods, Fit
from kubectl_dra.analyze.pod.preempt import preemption
from kubectl_dra.features import Semantics

S37 = Semantics.for_version((1, 37))


def pod(name, cpu, priority, node=None, started=None, **spec):
    p = builders.pod(
        name, (), node, ns="batch", uid=f"uid-{name}", containers=[ctr("c", cpu)], priority=priority, **spec
    )
    if started:
        p["status"]["startTime"] = started
    return p


def node(name, **alloc):
    return builders.node(name, allocatable=alloc, hostname=False)


def run(me, others, nodes):
    bound = BoundPods([me, *others], complete=True, live=True)
    return preemption(Fit(me, bound, [], S37), nodes)


def test_pod_slots_are_freed_and_the_more_important_pod_is_reprieved():
    # node-01 runs 2 pods of its 2 slots; removing both fits, adding back the more important (priority 50) still fits
    me = pod("me", "100m", 1000)
    a = pod("a", "100m", 50, "node-01", "2026-12-01T00:00:00Z")
    b = pod("b", "100m", 10, "node-01", "2026-12-01T00:00:00Z")
    got = run(me, [a, b], [node("node-01", cpu="8", pods="2")])
    assert got.chosen is not None and [v["metadata"]["name"] for v in got.chosen.victims] == ["b"]


def test_of_one_priority_the_pod_started_first_is_reprieved_first():
    me = pod("me", "2", 1000)
    old = pod("old", "6", 100, "node-01", "2026-11-01T00:00:00Z")
    new = pod("new", "6", 100, "node-01", "2026-12-01T00:00:00Z")
    got = run(me, [new, old], [node("node-01", cpu="8")])
    assert [v["metadata"]["name"] for v in got.chosen.victims] == ["new"]


def test_a_pod_nominated_there_of_a_priority_not_below_counts_and_leaves_no_room():
    me = pod("me", "2", 1000)
    low = pod("low", "7", 100, "node-01")
    nominated = pod("other", "7", 5000)
    nominated["status"]["nominatedNodeName"] = "node-01"
    got = run(me, [low, nominated], [node("node-01", cpu="8")])
    assert got.chosen is None and not got.open_
    nominated["spec"]["priority"] = 500  # below the pod's: the scheduler does not count it
    got = run(me, [low, pod("other", "7", 500)], [node("node-01", cpu="8")])
    assert got.chosen is not None


def test_the_node_with_the_lowest_highest_priority_victim_is_picked_and_the_choice_is_uncertain():
    me = pod("me", "2", 1000)
    a = pod("a", "7", 500, "node-01")
    b = pod("b", "7", 100, "node-02")
    got = run(me, [a, b], [node("node-01", cpu="8"), node("node-02", cpu="8")])
    assert got.chosen.node == "node-02" and not got.node_certain


def test_nodes_that_tie_on_every_criterion_are_all_named_and_none_is_the_pick():
    # pickOneNodeForPreemption ends in "the first candidate", a Go map's order: neither node is the answer
    me = pod("me", "2", 1000)
    a = pod("a", "7", 100, "node-01", "2026-12-01T00:00:00Z")
    b = pod("b", "7", 100, "node-02", "2026-12-01T00:00:00Z")
    c = pod("c", "7", 300, "node-03", "2026-12-01T00:00:00Z")
    nodes = [node("node-01", cpu="8"), node("node-02", cpu="8"), node("node-03", cpu="8")]
    got = run(me, [a, b, c], nodes)
    assert got.tied == ("node-01", "node-02") and got.where == "one of node-01, node-02" and not got.node_certain
    b["status"]["startTime"] = "2026-12-02T00:00:00Z"  # node-02's victim started later: node-02 wins outright
    got = run(me, [a, b, c], nodes)
    assert got.tied == () and got.where == "node-02"


def test_never_and_equal_priority_do_not_preempt():
    low = pod("low", "7", 100, "node-01")
    got = run(pod("me", "2", 1000, preemptionPolicy="Never"), [low], [node("node-01", cpu="8")])
    assert got.chosen is None and got.why_not
    got = run(pod("me", "2", 100), [low], [node("node-01", cpu="8")])
    assert got.chosen is None and not got.why_not


def test_pods_of_one_priority_and_start_with_different_requests_are_a_tie_the_scheduler_breaks():
    me = pod("me", "2", 1000)
    x = pod("x", "3", 100, "node-01", "2026-12-01T00:00:00Z")
    y = pod("y", "4", 100, "node-01", "2026-12-01T00:00:00Z")
    got = run(me, [x, y], [node("node-01", cpu="8")])
    assert got.chosen is not None and got.chosen.ties


def test_freers_name_another_pending_pod_that_outranks_a_pod_bound_on_the_node():
    from kubectl_dra.analyze.queue.preempted import pods_freers

    me = pod("me", "2", 5000, preemptionPolicy="Never")
    low = pod("low", "7", 100, "node-01")
    done = pod("done", "1", 10, "node-02")
    done["status"]["phase"] = "Succeeded"  # not counted by NodeResourcesFit: never a victim
    mid = pod("mid", "3", 1000)
    never = pod("never", "3", 90000, preemptionPolicy="Never")
    f = pods_freers([me, low, done, mid, never], lambda p: not p["spec"].get("nodeName"))
    why = f.on("node-01", "batch/me")
    assert why is not None and "batch/mid (priority 1000)" in why and "batch/low" in why
    assert f.on("node-02", "batch/me") is None  # only a Succeeded pod there
    assert f.on("node-03", "batch/me") is None  # nothing bound there
    # mid itself: no other pod that may preempt outranks low (me and never never preempt)
    assert f.on("node-01", "batch/mid") is None
    low["spec"]["priority"] = 1000  # equal to mid's: no victim
    assert pods_freers([me, low, mid], lambda p: not p["spec"].get("nodeName")).on("node-01", "batch/me") is None


def test_freers_respect_the_nodes_a_pod_may_use():
    from kubectl_dra.analyze.queue.preempted import Freers

    low = pod("low", "7", 100, "node-01")
    only_two = frozenset({"node-02"})
    f = Freers([(1000, "batch/mid", only_two)], {"node-01": [low]})
    assert f.on("node-01", "batch/me") is None
    f = Freers([(1000, "batch/mid", only_two), (500, "batch/any", None)], {"node-01": [low]})
    assert "batch/any" in f.on("node-01", "batch/me")


def test_room_without_lower_is_false_only_where_no_preemption_can_make_room():
    from kubectl_dra.analyze.pod.preempt import Preempter

    me = pod("me", "3", 1000)
    low = pod("low", "1", 100, "node-01")
    high = pod("high", "6", 5000, "node-01")
    two = node("node-01", cpu="8")
    bound = BoundPods([me, low, high], complete=True, live=True)
    # without low, 2 of 8 cpu are free: high (of a higher priority) is never a victim
    assert Preempter(Fit(me, bound, [], S37)).room_without_lower(two) is False
    assert Preempter(Fit(pod("me", "2", 1000), bound, [], S37)).room_without_lower(two) is True
    # nothing of a lower priority there: "No preemption victims found"
    assert Preempter(Fit(pod("me", "1", 100), bound, [], S37)).room_without_lower(two) is False


def test_freers_leave_out_a_pod_where_it_certainly_cannot_preempt():
    from kubectl_dra.analyze.queue.preempted import Freers

    low = pod("low", "7", 100, "node-01")
    f = Freers([(1000, "batch/mid", None, lambda n: n != "node-01")], {"node-01": [low], "node-02": [low]})
    assert f.on("node-01", "batch/me") is None
    assert "batch/mid" in f.on("node-02", "batch/me")
    # the next one that may preempt there is named instead
    f = Freers(
        [(1000, "batch/mid", None, lambda n: False), (500, "batch/other", None, lambda n: True)], {"node-01": [low]}
    )
    assert "batch/other" in f.on("node-01", "batch/me")


def test_freers_where_only_the_pod_itself_may_preempt_first_count_every_other_pod():
    # the tests read the snapshot's pods: once `me` has preempted there, pods of a priority below its own are gone,
    # and another pod may then preempt what is left, so whoever outranks a bound pod counts, tested or not
    from kubectl_dra.analyze.queue.preempted import Freers

    low = pod("low", "7", 100, "node-01")
    f = Freers(
        [(5000, "batch/me", None, lambda n: True), (1000, "batch/mid", None, lambda n: False)], {"node-01": [low]}
    )
    assert "batch/mid" in f.on("node-01", "batch/me")
    assert f.on("node-01", "batch/other") is not None  # me may free room for it


def _may(pods, names=("node-01", "node-02", "node-03")):
    from types import SimpleNamespace

    from kubectl_dra.analyze.queue.may_preempt import MayPreempt

    bound = BoundPods(pods, complete=True, live=True)
    nodes = {n: node(n, cpu="8") for n in names}
    pending = [p for p in pods if not p["spec"].get("nodeName")]
    known = {f"batch/{p['metadata']['name']}": (p, set(names), Fit(p, bound, [], S37), None, False) for p in pending}
    return MayPreempt(SimpleNamespace(gaps=(), bound_pods=True, pods=pods), None, nodes, known), known


def _created(p, t):
    p["metadata"]["creationTimestamp"] = t
    return p


def test_a_pod_that_fits_somewhere_whatever_the_pods_ahead_do_never_preempts():
    # node-01 is full of a pod of lower priority; node-02 and node-03 have 2 cpu free each. One pod ahead of `me`
    # can block one of them, not both: `me` fits at its first attempt, PostFilter never runs, it frees nothing
    bound = [pod("low", "7", 100, "node-01"), pod("x", "6", 100, "node-02"), pod("y", "6", 100, "node-03")]
    me = _created(pod("me", "2", 1000), "2026-12-01T10:00:05Z")
    a = _created(pod("a", "1", 5000), "2026-12-01T10:00:09Z")
    test, known = _may([*bound, me, a])
    assert test.can("batch/me", me, known["batch/me"][2], None, "node-01") is False
    # two pods ahead may block both nodes: it may fail everywhere and preempt on node-01
    b = _created(pod("b", "1", 1000), "2026-12-01T10:00:01Z")  # (its priority, created earlier: ahead)
    test, known = _may([*bound, me, a, b])
    assert test.can("batch/me", me, known["batch/me"][2], None, "node-01") is True
    # behind it (created later, of its priority) it is not: certain again
    c = _created(pod("c", "1", 1000), "2026-12-01T10:00:07Z")
    test, known = _may([*bound, me, a, c])
    assert test.can("batch/me", me, known["batch/me"][2], None, "node-01") is False
    # pods ahead that never preempt and that NodeResourcesFit refuses node-02 and node-03 now never go there first
    big = [_created(pod(f"n{i}", "3", 5000, preemptionPolicy="Never"), "2026-12-01T10:00:00Z") for i in range(3)]
    test, known = _may([*bound, me, *big])
    assert test.can("batch/me", me, known["batch/me"][2], None, "node-01") is False
    # ... unless a preemption is under way (a nominated pod): room may be freed for them
    big[0]["status"]["nominatedNodeName"] = "node-02"
    test, known = _may([*bound, me, *big])
    assert test.can("batch/me", me, known["batch/me"][2], None, "node-01") is True
    # a pod tried already may be retried at any time: never certain
    tried = _created(pod("me", "2", 1000), "2026-12-01T10:00:05Z")
    tried["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    test, known = _may([*bound, tried, a])
    assert test.can("batch/me", tried, known["batch/me"][2], None, "node-01") is True
