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
from kubectl_dra.model.meta import priority_of

# nodes a preempting pod's search dry-runs its claims on (each an allocation): past that, the preemption is open
MAX_PREEMPT_NODES = 200


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
    best = min(found, key=lambda x: x[0].score())
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


def behind_preemptors(base, ordered: list, places: dict, shortfalls: list) -> list:
    """Pods behind a preemptor that may use its node or the devices its victims hold: undetermined, and a shortfall
    of a group with such a pod or a preemptor in it is no longer certain (dropped from shortfalls). Returns the
    preemptions, (entry, the victims' device IDs), for the pods blocked alone (opened_alone)."""
    out = []
    opened = set()
    for e in ordered:
        if getattr(e, "preempts", None) is None:
            continue
        freed = victim_devices(base, e.preempts.victims)
        out.append((e, freed))
        node = e.preempts.node
        for q in ordered[e.index + 1 :]:
            p = places.get(q.ref)
            if p is None or not p.certain or q.plan is None:
                continue
            if node in q.plan.reach.names or (freed and _uses(q.plan, freed)):
                opened.add(q.ref)
                places[q.ref] = replace(
                    p,
                    outcome="undetermined",
                    certain=False,
                    reason=f"{e.ref}, ahead of it, {preempt_words(e)[3:]}: which pod gets the room and devices "
                    "they free depends on when the scheduler tries it",
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


def room_others_may_free(report, pod: dict, pods, pending) -> str | None:
    """A pod blocked alone for room (DRA504) on nodes where a bound pod of a lower priority than some other pending
    pod's runs: that pod, DRA or not, may preempt it at its turn, and the room it frees may go to this one once the
    victims are gone (the nomination reserves it only against pods of the preemptor's priority or lower, and not
    for long): undetermined, the reason. None when no pending pod could preempt there. (A pod that preempts only
    for itself is this one's own answer, DRA507; one of the queue's with DRA, opened_alone.)"""
    from kubectl_dra.analyze.pod.preempt import never_preempts

    if not report.verdict.blocked or not report.verdict.determined:
        return None
    f = next((x for x in report.findings if x.blocking and x.code == "DRA504"), None)
    if f is None:
        return None
    nodes = set(f.evidence.get("nodes") or ())
    others = [(priority_of(p), p) for p in pods if p is not pod and pending(p) and not never_preempts(p)]
    if not others or not nodes:
        return None
    top, who = max(others, key=lambda x: x[0])
    for p in pods:
        spec = p.get("spec") or {}
        if (
            spec.get("nodeName") in nodes
            and priority_of(p) < top
            and (p.get("status") or {}).get("phase")
            not in (
                "Succeeded",
                "Failed",
            )
        ):
            return (
                f"pending pod {ref_of(who)} (priority {top}) may preempt pods of lower priority on {spec['nodeName']} "
                f"(such as {ref_of(p)}), and the room that frees may go to this pod once they are gone"
            )
    return None
