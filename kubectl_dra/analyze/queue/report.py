"""Pods compete, the entry point: the queue over the pending pods of a snapshot (judge_queue), and each pod's
place in its report (a finding, the verdict again, the body's `queue`)."""

from __future__ import annotations

import re
from dataclasses import replace

from kubectl_dra.analyze.pod.extended import uses_dra
from kubectl_dra.analyze.pod.pieces import pod_pieces
from kubectl_dra.analyze.queue.gang import gangs_of
from kubectl_dra.analyze.queue.judge import Place, Queue
from kubectl_dra.analyze.queue.order import Entry, attempted, entry_kind
from kubectl_dra.analyze.queue.outcomes import EntryKind, Outcome
from kubectl_dra.analyze.queue.preempted import opened_alone, pods_freers, room_others_may_free
from kubectl_dra.analyze.queue.simulate import nodealloc_unmodelled, simulate
from kubectl_dra.errors import DraError
from kubectl_dra.findings.model import UNDETERMINED, Finding, dedupe, make, verdict_from
from kubectl_dra.model.meta import gang_of, meta_of, name_of, ns_of, priority_of


def _pending(pod: dict) -> bool:
    spec = pod.get("spec") or {}
    return (
        not spec.get("nodeName")
        and not meta_of(pod).get("deletionTimestamp")
        and (pod.get("status") or {}).get("phase") in (None, "Pending")
    )


def _pending_dra(pod: dict, classes: list, sem) -> bool:
    return _pending(pod) and uses_dra(pod, classes, sem)


def _others(snap, sem, base):
    """The pending pods that use no DRA (others.py)."""
    from kubectl_dra.analyze.pod.fit import pod_fit
    from kubectl_dra.analyze.queue.others import others_of

    classes = list(snap.classes)
    pods = [p for p in snap.pods if _pending(p) and not uses_dra(p, classes, sem)]
    if not pods:
        return None

    def fit_of(p):
        try:
            return pod_fit(snap, base.cache, p, sem)
        except ValueError:  # a request that is not a quantity (a file; the API server admits none): left out
            return None

    return others_of(snap, base, pods, fit_of)


def judge_queue(snap, sem, base, alone: dict, explain) -> tuple[Queue, dict]:
    """The queue over every pending pod of the snapshot that uses DRA. alone: (namespace, name) -> (pod, report,
    the Analysis fork that made it) for the pods already explained alone; the others are explained here, briefly and
    without a body (no answer shows them), by explain (reports/explain.py explain_pod, which the reports that judge
    the queue pass: the queue sits below them and imports none). Every command judges the same queue, whichever
    pods it asks about (one answer per pod: a pod's place may depend on pods behind it, a retry of one that errs,
    tests/test_one_answer.py). Returns the queue and, per pod in alone, its report with its place."""

    classes = list(snap.classes)
    got = dict(alone)
    for p in snap.pods:
        key = (ns_of(p), name_of(p))
        if key in got or not _pending_dra(p, classes, sem):
            continue
        fork = base.fork()
        try:
            got[key] = (p, explain(snap, sem, key[0], key[1], fork, True, body=False), fork)
        except DraError:
            continue  # it cannot be explained: neither can the scheduler's view of it be modelled here
    entries, members, rest = [], {}, []
    for key, (p, report, fork) in got.items():
        plan = getattr(fork, "plan", None)
        kind = entry_kind(p, report, plan)
        if kind is None and plan is not None and _pending(p):
            rest.append((p, plan))  # (blocked alone: it may still preempt, preempted.py freer_rows)
        group = gang_of(p)
        if group is not None:
            v = report.verdict
            if kind == EntryKind.OPEN and not _open_but_for_the_gang(report):
                pass
            elif kind == EntryKind.OPEN:
                kind = (
                    EntryKind.OK
                )  # only the scheduler's word on the gang leaves it open alone: the group decides that
            blocked = kind is None and v.blocked and v.determined
            # a member left out for another reason (bound, an error) leaves the group's count unknown
            members.setdefault((key[0], group), []).append((p, kind if kind or blocked else EntryKind.OPEN, blocked))
        if kind is None:
            continue
        entries.append(
            Entry(p, report, plan, kind, priority_of(p), str(meta_of(p).get("creationTimestamp") or ""), attempted(p))
        )
    gangs = gangs_of(snap, sem, members)
    for e in entries:
        group = gang_of(e.pod)
        if group is not None:
            e.gang = gangs[(ns_of(e.pod), group)]
            if e.gang.unmodelled is not None:
                e.kind = EntryKind.OPEN  # it may or may not take devices: the group decides
    others = _others(snap, sem, base) if entries or rest else None  # (rest: the pods they may free room for)
    nodealloc_unmodelled(entries, others)
    queue = simulate(base, entries, others, rest)
    return queue, place_reports(snap, queue, alone)


def place_reports(snap, queue: Queue, alone: dict) -> dict:
    """Per pod in alone ((namespace, name) -> (pod, report, fork), as judge_queue takes it), its report with its
    place in a queue judged on the same snapshot (judge_queue's, or one already judged and kept: a report that also
    explains some pods in full judges the queue once)."""
    placed = {}
    freers = None
    for key, (p, report, fork) in alone.items():
        place = queue.places.get(f"{key[0]}/{key[1]}")
        if place is not None:
            placed[key] = with_place(report, place)
            continue
        why = opened_alone(report, getattr(fork, "plan", None), p, queue.preemptions) if queue.preemptions else None
        if why is None and report.verdict.blocked:
            freers = freers or pods_freers(snap.pods, _pending, queue.freer_rows() if queue.freer_rows else ())
            why = room_others_may_free(report, p, freers)
        if why is None and report.verdict.blocked:
            why = _nodealloc_unsure(report, getattr(fork, "plan", None), p, queue)
            if why is not None:
                placed[key] = _opened(report, why, nodealloc=True)
                continue
        if why is not None:
            placed[key] = _opened(report, why)
    return placed


def _nodealloc_unsure(report, plan, pod: dict, queue: Queue) -> str | None:
    """A pod blocked alone (DRA504) on nodes where the devices the dry-run picked add more cpu or memory than is left
    (DRANodeAllocatableResources, pod/nodealloc.py), while pods of the queue that may use those nodes take devices
    first: with other devices picked it may fit (the scheduler picks devices without looking at what they add).
    The reason, or None."""
    if plan is None or plan.fit is None or not report.verdict.determined:
        return None
    if not any(f.blocking and f.code == "DRA504" for f in report.findings):
        return None
    nodes = {n for n, d in plan.fit.na.items() if d.active and getattr(plan.dry.fit.get(n), "fits", None) is False}
    if not nodes:
        return None
    me = f"{ns_of(pod)}/{name_of(pod)}"
    ahead = [e for e in queue.entries if e.ref != me and not nodes.isdisjoint(e.plan.reach.names)]
    if not ahead:
        return None
    return (
        f"the devices it gets on {', '.join(sorted(nodes)[:3])} add cpu, memory or other node resources "
        f"(DRANodeAllocatableResources), and {ahead[0].ref}, pending, may take devices there first: with other "
        "devices it may fit; in queue order that is not modelled"
    )


def _opened(report, why: str, **evidence):
    """A pod blocked alone whose block a preemption ahead of it (or, nodealloc: other devices) may lift:
    undetermined (DRA431)."""
    findings = dedupe([*report.findings, make("DRA431", why, **(evidence or {"preemption": True}))])
    verdict = verdict_from(findings, report.verdict.summary)
    body = dict(report.body)
    if "pieces" in body:  # (not in a brief report: explain_pod)
        body["pieces"] = pod_pieces(findings, body)
    return replace(report, findings=tuple(findings), body=body, verdict=verdict)


# The scheduler's words when a gang's cycle fails (1.36+): a member placed in the cycle gets the group's status
# behind "pod group is unschedulable, " ("... minCount (3) cannot be satisfied: 2 scheduled, 0 remaining", seen on
# v1.37.2); a member the cycle never tried, because the GangScheduling PlacementFeasible check ended it early, gets
# the group's reasons alone ("minCount (3) cannot be satisfied: 1 scheduled, 1 remaining": a clone of the status
# without its error, schedule_one_podgroup.go completePodGroupAlgorithmResult; seen on v1.37.2), or "minCount (3)
# is not yet satisfied: ..." where the cycle ran out of members while waiting
GANG_WORD = "pod group is unschedulable"
GANG_REASON = re.compile(r"\bminCount \(\d+\) (cannot be|is not yet) satisfied: ")


def _gang_word(f) -> bool:
    """The scheduler's latest word on a gang member that its group's cycle explains: the group failed (DRA021),
    or the member's claims could not be allocated in the cycle after the members before it took devices (DRA005:
    alone they can)."""
    if f.code == "DRA021":
        return GANG_WORD in f.message or GANG_REASON.search(f.message) is not None
    return f.code == "DRA005" and "cannot allocate all claims" in f.message


def _cannot_allocate_word(f) -> bool:
    """DRA005 over the scheduler's "cannot allocate all claims" (its DynamicResources Filter on every node), which the
    pod's own dry-run, without the pods ahead, contradicts."""
    word = f.evidence.get("scheduler") or {} if f.code == "DRA005" else {}
    return word.get("state") == "unschedulable" and "cannot allocate all claims" in (word.get("message") or "")


def _open_but_for_the_gang(report) -> bool:
    """Alone, the pod is undetermined only because of the scheduler's word on its group's last cycle."""
    opens = [f for f in report.findings if f.code in UNDETERMINED or f.code == "DRA021"]
    return bool(opens) and all(_gang_word(f) for f in opens)


def queue_finding(place: Place, ahead: list | None = None) -> Finding | None:
    """The finding a pod's place adds to its own report (None: nothing to say). ahead: the place's pods ahead as
    Place.to_dict lists them, where the caller has them (the report's body and the finding then share the list)."""
    if ahead is None:
        ahead = [a.to_dict() for a in place.ahead]
    if place.outcome == Outcome.GANG:
        return make("DRA435", place.reason, position=place.position, ahead=ahead)
    if place.outcome == Outcome.TAKEN:
        return make(
            "DRA430",
            f"no device left once the pods ahead in the queue are placed: {place.reason}",
            position=place.position,
            ahead=ahead,
        )
    if place.outcome == Outcome.UNDETERMINED:
        return make("DRA431", place.reason, position=place.position, ahead=ahead)
    unnamed = not place.exact and not place.devices  # no one order's devices stand for all (alternatives.py)
    if place.ahead or place.gated or place.by_group or unnamed:
        when = "once its gates are removed, it " if place.gated else "it "
        if unnamed:
            return make(
                "DRA432",
                f"{when}gets its claims in every order the cluster leaves open: {place.reason}",
                position=place.position,
                ahead=ahead,
            )
        got = ", ".join(place.devices[:3]) + (f" and {len(place.devices) - 3} more" if len(place.devices) > 3 else "")
        return make(
            "DRA432",
            f"{when}gets {got or 'its claims'} on node {place.node} in the estimated order: {place.reason}",
            position=place.position,
            ahead=ahead,
        )
    return None


def with_place(report, place: Place):
    """The pod's report with its place in the queue: the finding, the verdict again, the body's queue."""
    body = dict(report.body)
    body["queue"] = place.to_dict()
    f = queue_finding(place, body["queue"]["ahead"])
    if place.certain and place.by_group and _open_but_for_the_gang(report):
        # the group's answer replaces the scheduler's word on the group's last cycle
        report = replace(report, findings=tuple(x for x in report.findings if not _gang_word(x)))
    elif place.certain and place.outcome == Outcome.TAKEN:
        # the pods ahead take its devices: the scheduler's "cannot allocate all claims", which the pod's own dry-run
        # contradicts, is what the queue explains (explain pod, run against their allocations, agrees with it)
        report = replace(report, findings=tuple(x for x in report.findings if not _cannot_allocate_word(x)))
    if f is None:
        return replace(report, body=body)
    # devices taken by the pods ahead: that is the headline, before the device findings it explains
    findings = dedupe(
        [f, *report.findings] if place.outcome in (Outcome.TAKEN, Outcome.GANG) else [*report.findings, f]
    )
    v = report.verdict
    ok = v.summary if not v.blocked and v.determined else ""
    now_on = v.now_on if ok else None
    unnamed = not place.exact and not place.devices
    if now_on is not None and place.outcome == Outcome.FITS and (unnamed or place.node != now_on):
        # the pods ahead take the node where its claims are allocatable now: where it goes depends on them
        where = (
            f"node {place.node} in the estimated order"
            if place.node and not unnamed
            else "where depends on their order"
        )
        ok, now_on = f"claims allocatable once the pods ahead of it in the queue are placed ({where}){v.now_rest}", None
    verdict = verdict_from(findings, ok, now_on)
    if "pieces" in body:  # (not in a brief report: explain_pod)
        body["pieces"] = pod_pieces(findings, body)
    return replace(report, findings=tuple(findings), body=body, verdict=verdict)


def materialized(snap, queue: Queue, before: int):
    """The snapshot as the scheduler's cache would hold it once the pods at positions before `before` (0-based) are
    placed as the dry-run placed them: their pending claims allocated (results and node selector). The per-pod
    analysis of a pod against it says, with the allocator's own reasons, what is left for it."""
    from kubectl_dra.analyze.allocator import obj_ref

    alloc, bind = {}, {}
    for e in queue.entries:
        if e.index < before and e.node is not None:
            bind[id(e.pod)] = e.node
            for ref, r in e.allocs:
                alloc[ref] = (r.results, r.node_selector)
    claims, estimated = [], set()
    for c in snap.claims:
        hit = alloc.get(obj_ref(c))
        if hit is not None and not (c.get("status") or {}).get("allocation"):
            allocation = {"devices": {"results": list(hit[0])}}
            if hit[1] is not None:
                allocation["nodeSelector"] = hit[1]
            c = {**c, "status": {**(c.get("status") or {}), "allocation": allocation}}
            estimated.add(obj_ref(c))
        claims.append(c)
    # and the pods bound where the dry-run put them (the scheduler's cache holds an assumed pod on its node): their
    # cpu, memory and pod slots count there for NodeResourcesFit, as their devices do for the allocator
    pods = tuple(
        p if id(p) not in bind else {**p, "spec": {**(p.get("spec") or {}), "nodeName": bind[id(p)]}} for p in snap.pods
    )
    return replace(snap, claims=tuple(claims), pods=pods, estimated=snap.estimated | estimated)
