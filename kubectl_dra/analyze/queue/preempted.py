"""Pods compete, preemption: a pod that, at its turn, finds its claims fit only on nodes without room for its cpu,
memory or pods preempts pods of lower priority there (DefaultPreemption, analyze/pod/preempt.py) and is placed on
the node it nominates once they are gone.

What follows is decided by time, not by the queue: the victims terminate (their grace period), their claims are
deallocated, and whichever pod the scheduler tries then gets the room and devices they free. The nomination
reserves the node's cpu, memory and pods for the preemptor against pods of its priority or lower, but not devices
(DynamicResources has no PreFilterExtensions), so a pod behind it can take the devices its claims would use. So:
- the preemptor's own place is certain only where no pod that may be ahead of it may use that node;
- a pod behind it that may use that node, or the devices the victims hold, is undetermined (DRA431);
- a pod blocked alone for room on that node (DRA504) or for devices the victims hold (DRA404) is undetermined too.
Pods of a lower priority placed ahead of a preemptor (a gated pod's turn comes after every ungated one) would be
victims in the scheduler's cache: not modelled, the preemptor is undetermined."""

from __future__ import annotations

from dataclasses import replace

from kubectl_dra.analyze.pod.preempt import Preempter, never_preempts, pods_of_lower, ref_of
from kubectl_dra.analyze.queue.outcomes import Outcome
from kubectl_dra.model.meta import priority_of

# nodes a preempting pod's search dry-runs its claims on (each an allocation): past that, the preemption is open
MAX_PREEMPT_NODES = 200
# DefaultPreemption's minCandidateNodesAbsolute (its percentage is 10): the candidates DryRunPreemption collects
# before it stops (preemption.go GetOffsetAndNumCandidates)
MIN_CANDIDATES = 100


def search_preemption(sim, e, rejected: list) -> tuple | None:
    """At e's turn its claims fit on no node with room (rejected: the nodes NodeResourcesFit refused, in search
    order): where preempting pods of lower priority makes room on a node its claims fit on, (node, results) of the
    node the scheduler nominates, with e.preempts set; else None (e.error set where it cannot be told)."""
    from kubectl_dra.analyze.allocator import AllocationError, NodeFailure

    plan = e.plan
    if plan.fit is None or never_preempts(e.pod) or not rejected:
        return None
    pre = Preempter(plan.fit)
    bound = plan.fit.bound
    if not any(priority_of(p) < e.priority for n in rejected for p in bound.by_node.get(n["metadata"]["name"], ())):
        return None
    if len(rejected) > MAX_PREEMPT_NODES:
        e.error = f"it may preempt pods of lower priority on one of {len(rejected)} nodes: not searched that far"
        return None
    found = []
    for n in rejected:
        name = n["metadata"]["name"]
        if any(q.node == name and q.priority < e.priority for q in sim.entries[: e.index]):
            e.error = f"a pod of lower priority ahead of it in the queue is placed on {name}: it would preempt it"
            return None
        here = plan.claims_on(name)
        try:
            res = sim._allocate(plan.shape, n, here) if here else []
        except (NodeFailure, AllocationError):
            continue
        if res is None:
            continue
        got = pre.on_node(n, sim.node_use.get(name))
        if isinstance(got, str):
            e.error = f"whether preempting pods of lower priority makes room cannot be told: {got}"
            return None
        if got is not None:
            found.append((got, n, res))
    if not found:
        return None
    if len(found) > max(MIN_CANDIDATES, len(rejected) // 10):
        # DryRunPreemption stops once it has that many candidates, from a random offset in the nodes
        e.error = (
            f"it may preempt pods of lower priority on {len(found)} nodes, more than DefaultPreemption looks at "
            "(it stops at 100 candidates from a random node): which one it nominates is not fixed"
        )
        return None
    best = min(found, key=lambda x: x[0].score())
    tied = [x[0].node for x in found if x[0].score() == best[0].score()]
    pick = sim.forced.get(e.ref)
    if len(tied) > 1 and pick in tied:  # one of the tied nominations, dry-run as if made (ties.py)
        best = next(x for x in found if x[0].node == pick)
    elif len(tied) > 1:
        sim.ties[e.ref] = tuple(tied)
        # pickOneNodeForPreemption's criteria end in "the first candidate": the order of a Go map (and a start time
        # of now for a victim not started yet), which nothing in the API fixes
        e.error = (
            f"it may preempt pods of lower priority on {' or '.join(tied[:3])}"
            + (f" (and {len(tied) - 3} more)" if len(tied) > 3 else "")
            + ": DefaultPreemption's criteria tie them, and which one the scheduler nominates is not fixed"
        )
        return None
    e.preempts = best[0]
    e.choices = len(found)
    return best[1], best[2]


def preempt_words(e) -> str:
    c = e.preempts
    names = ", ".join(ref_of(p) for p in c.victims[:3]) + (
        f" and {len(c.victims) - 3} more" if len(c.victims) > 3 else ""
    )
    gone = "it is gone" if len(c.victims) == 1 else "they are gone"
    return f"it preempts {pods_of_lower(len(c.victims))} on node {c.node} ({names}) and is placed there once {gone}"


def victim_devices(base, victims) -> set:
    """The device IDs the victims' claims hold (freed once the victims are gone and their claims deallocated)."""
    refs = {ref_of(p) for p in victims}
    out = set()
    for c in base.idx.claims.values():
        st = c.get("status") or {}
        ns = (c.get("metadata") or {}).get("namespace")
        if not any(f"{ns}/{r.get('name')}" in refs for r in st.get("reservedFor") or [] if r.get("resource") == "pods"):
            continue
        for r in ((st.get("allocation") or {}).get("devices") or {}).get("results") or []:
            out.add((r.get("driver", ""), r.get("pool", ""), r.get("device", "")))
    return out


def _uses(plan, devices: set) -> bool:
    for a in plan.analyses:
        for m in a.matrices.values():
            for v in m:
                if v.entry.did in devices:
                    return True
    return False


def _beside(base, e, q, node: str) -> bool:
    """Whether NodeResourcesFit may let q onto node beside the preemptor e once e's victims are gone (the Filter
    counts e there, nominated, against pods of its priority or lower): False only where it certainly does not."""
    n = base.nodes_by_name().get(node)
    fit, mine = q.plan.fit, e.plan.fit
    if n is None or fit is None or mine is None:
        return True
    req = dict(mine.request)
    for v in e.preempts.victims:
        for k, x in fit.bound.requests(v).items():
            req[k] = req.get(k, 0) - x
    return fit.check(n, (req, 1 - len(e.preempts.victims))).fits is not False


def behind_preemptors(base, ordered: list, places: dict, shortfalls: list) -> list:
    """Pods behind a preemptor that may use its node or the devices its victims hold: undetermined; the preemptor
    itself too where one of them may take devices it could use on its node; a shortfall of a group with such a pod
    or a preemptor in it is no longer certain (dropped from shortfalls). Returns the preemptions, (entry, the
    victims' device IDs), for the pods blocked alone (opened_alone)."""
    out = []
    opened = set()
    for e in ordered:
        if getattr(e, "preempts", None) is None:
            continue
        freed = victim_devices(base, e.preempts.victims)
        out.append((e, freed))
        node = e.preempts.node
        needs = {v.entry.did for a in e.plan.analyses for m in a.matrices.values() for v in m}
        taker = None  # a pod behind it that may take the devices it needs on its node while it waits
        for q in ordered[e.index + 1 :]:
            if taker is None and q.plan is not None and node in q.plan.reach.names and _uses(q.plan, needs):
                taker = q if _beside(base, e, q, node) else None
            p = places.get(q.ref)
            if p is None or not p.certain or q.plan is None:
                continue
            if node in q.plan.reach.names or (freed and _uses(q.plan, freed)):
                opened.add(q.ref)
                places[q.ref] = replace(
                    p,
                    outcome=Outcome.UNDETERMINED,
                    certain=False,
                    reason=f"{e.ref}, ahead of it, {preempt_words(e)[3:]}: which pod gets the room and devices "
                    "they free depends on when the scheduler tries it",
                )
        p = places.get(e.ref)
        if taker is not None and p is not None and p.certain:
            # the nomination holds the node's cpu, memory and pods against pods of its priority or lower, not devices
            # (DynamicResources has no PreFilterExtensions): a pod behind it tried while its victims terminate may
            # take them, and its next attempt finds no device there (the queue agreement suite's seed 44)
            places[e.ref] = replace(
                p,
                outcome=Outcome.UNDETERMINED,
                certain=False,
                reason=f"in the estimated order {preempt_words(e)}; but {taker.ref}, behind it, may take the devices "
                "it needs there while they terminate (the nomination holds cpu, memory and pods for it, not devices)",
            )
    opened.update(e.ref for e, _ in out)
    shortfalls[:] = [s for s in shortfalls if not opened & set(s.pods)]
    return out


def opened_alone(report, plan, pod: dict, preemptions: list):
    """A pod blocked alone for room on a preemptor's node (DRA504) or for devices its victims hold (DRA404): the
    reason it is undetermined, or None."""
    if plan is None or not report.verdict.blocked or not report.verdict.determined:
        return None
    codes = {f.code: f for f in report.findings if f.blocking}
    for e, freed in preemptions:
        if e.pod is pod:
            continue
        if "DRA504" in codes and e.preempts.node in (codes["DRA504"].evidence.get("nodes") or ()):
            return f"{e.ref} {preempt_words(e)[3:]}: the room they free may go to this pod"
        if "DRA404" in codes and freed and _uses(plan, freed):
            return f"{e.ref} {preempt_words(e)[3:]}: the devices they hold, once freed, may go to this pod"
    return None


class Freers:
    """The pending pods that may preempt (every one but preemptionPolicy: Never), with the nodes each may use: where
    one of them outranks a pod bound on a node, DefaultPreemption may free room there at its turn, and the room may go
    to whichever pod the scheduler tries next once the victims are gone (the nomination holds it only against pods
    of the preemptor's priority or lower, and not for long), before or after the preemptor's turn. A pod counts on a
    node only where upstream could preempt there (may_preempt.py, its can: False where it certainly cannot). Built
    once per queue: per node, its lowest bound priority and the first two pods that may preempt there, once."""

    MAX_TRIED = 16  # pods tested on one node; past that the next one counts as a freer untested

    def __init__(self, rows, by_node: dict):
        """rows: (priority, ref, names: the nodes it may use, or None for any, can: node -> False where it certainly
        does not preempt there, or None: untested) per pending pod that may preempt; by_node: node -> the pods bound
        there (fit.py BoundPods.by_node)."""
        self._rows = sorted((r if len(r) == 4 else (*r, None) for r in rows), key=lambda r: -r[0])
        self._by_node = by_node
        self._low: dict = {}
        self._first: dict = {}  # node -> (the first two (priority, ref) that may preempt there, the same untested)

    def _lowest(self, node: str):
        if node not in self._low:
            pods = self._by_node.get(node) or ()
            self._low[node] = min(((priority_of(p), ref_of(p)) for p in pods), default=None)
        return self._low[node]

    def _freers(self, node: str, low: int) -> tuple:
        got = self._first.get(node)
        if got is None:
            tested, untested, tried = [], [], 0
            for prio, ref, names, can in self._rows:
                if prio <= low or (len(tested) >= 2 and len(untested) >= 2):
                    break
                if names is not None and node not in names:
                    continue
                if len(untested) < 2:
                    untested.append((prio, ref))
                if len(tested) < 2:
                    tried += can is not None
                    if can is None or tried > self.MAX_TRIED or can(node):
                        tested.append((prio, ref))
            got = self._first[node] = (tested, untested)
        return got

    def on(self, node: str, but: str) -> str | None:
        """Why room on node may be freed for pod `but` by another pod's preemption, or None."""
        low = self._lowest(node)
        if low is None:
            return None
        tested, untested = self._freers(node, low[0])
        # where `but` alone may preempt there first, whoever may preempt once its victims are gone counts, tested or
        # not (the tests read the snapshot's pods, which bound only the first preemption on a node)
        first = tested if [r for _p, r in tested] != [but] else untested
        for prio, ref in first:
            if ref != but:
                return (
                    f"pending pod {ref} (priority {prio}) may preempt pods of lower priority on {node} (such as "
                    f"{low[1]}), and the room that frees may go to this pod once they are gone"
                )
        return None


def freer_rows(base, entries, others, rest=()) -> list:
    """Freers' rows for the pending pods of a queue that may preempt: those with DRA (entries, and rest: (pod, plan)
    of those blocked alone; the nodes they may use, their claims and room tested on each) and those without
    (others.py's groups), each with may_preempt.py's test."""
    from kubectl_dra.analyze.queue.may_preempt import MayPreempt

    src, known = [], {}
    for p, plan in [(q.pod, q.plan) for q in entries] + list(rest):
        ref = ref_of(p)
        fit = plan.fit if plan is not None else None
        names = plan.reach.names if fit is not None else None
        known[ref] = (p, names, fit, plan, True)
        src.append((priority_of(p), ref, names, p, fit, plan))
    for g in others.groups if others is not None else ():
        for ref, (p, fit) in zip(g.refs, g.pods):
            known[ref] = (p, g.names, fit, None, False)
            src.append((priority_of(p), ref, g.names, p, fit, None))
    test = MayPreempt(base.snap, base, base.nodes_by_name(), known)
    rows = []
    for prio, ref, names, p, fit, plan in src:
        if never_preempts(p):
            continue
        can = None
        if fit is not None or plan is not None:

            def can(node, ref=ref, p=p, fit=fit, plan=plan):
                return test.can(ref, p, fit, plan, node)

        rows.append((prio, ref, names, can))
    return rows


def sim_rows(sim) -> list:
    """The queue's freer_rows, once."""
    got = getattr(sim, "freer_rows", None)
    if got is None:
        got = sim.freer_rows = freer_rows(sim.base, sim.entries, sim.others, sim.rest)
    return got


def sim_freers(sim, by_node: dict) -> Freers:
    """The queue's Freers: its pending pods with DRA (the nodes they reach) and without (the nodes they may use)."""
    got = getattr(sim, "freers", None)
    if got is None:
        got = sim.freers = Freers(sim_rows(sim), by_node)
    return got


def pods_freers(pods, pending, known=()) -> Freers:
    """The Freers of a snapshot's pods (pending(p): whether p waits for a node): each as the queue's rows have it
    (known: Freers rows, freer_rows), else taken as free to use any node, untested; bound pods by node as
    NodeResourcesFit counts them (not Succeeded or Failed)."""
    rows, by_node = [], {}
    tested = {r[1]: r for r in known}
    for p in pods:
        node = (p.get("spec") or {}).get("nodeName")
        if node:
            if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                by_node.setdefault(node, []).append(p)
        elif pending(p) and not never_preempts(p):
            rows.append(tested.get(ref_of(p)) or (priority_of(p), ref_of(p), None, None))
    return Freers(rows, by_node)


def room_freed_by_others(sim, e, rejected: list) -> str | None:
    """At e's turn its claims fit only on nodes NodeResourcesFit refuses (rejected), and e does not preempt there
    itself: where another pending pod may free room on one of them by preempting, why e is undetermined; else
    None."""
    from kubectl_dra.analyze.allocator import AllocationError, NodeFailure

    plan = e.plan
    if plan.fit is None or not rejected:
        return None
    freers = sim_freers(sim, plan.fit.bound.by_node)
    for n in rejected[:MAX_PREEMPT_NODES]:
        name = n["metadata"]["name"]
        why = freers.on(name, e.ref)
        if why is None:
            continue
        here = plan.claims_on(name)
        try:
            res = sim._allocate(plan.shape, n, here) if here else []
        except (NodeFailure, AllocationError):
            continue
        if res is not None:
            return f"its claims fit on {name}, which lacks room for it; {why}"
    return None


def room_others_may_free(report, pod: dict, freers: Freers) -> str | None:
    """A pod blocked alone for room (DRA504) on nodes where another pending pod, DRA or not, may preempt pods of a
    lower priority (Freers.on): undetermined, the reason. None when no pending pod could preempt there. (A pod
    that preempts only for itself is this one's own answer, DRA507; one of the queue's with DRA, opened_alone.)"""
    if not report.verdict.blocked or not report.verdict.determined:
        return None
    f = next((x for x in report.findings if x.blocking and x.code == "DRA504"), None)
    if f is None:
        return None
    me = ref_of(pod)
    for node in sorted(f.evidence.get("nodes") or ()):
        why = freers.on(node, me)
        if why is not None:
            return why
    return None
