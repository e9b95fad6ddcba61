"""Pods compete, gangs: the pods of one PodGroup with a gang policy are placed all or nothing.

Upstream (read in k8s.io/kubernetes v1.36.3 and v1.37.2, pkg/scheduler; gate GenericWorkload, off by default):
- A pod names its group in `spec.schedulingGroup.podGroupName`; the PodGroup (scheduling.k8s.io v1alpha2 in 1.36,
  v1beta1 in 1.37) has `spec.schedulingPolicy.gang.minCount` (or `basic`: no all-or-nothing).
- 1.36: when a member reaches the head of the queue, ScheduleOne pulls every unscheduled member out of the queue,
  sorts them by priority then initial attempt time (schedule_one_podgroup.go), and runs Filter, assume and Reserve
  for each in turn against one snapshot, so the in-flight allocations add up across members; the GangScheduling
  Permit counts the members scheduled (and those bound before); below minCount the whole cycle is reverted and
  every member goes back unschedulable; otherwise the feasible members are bound.
- 1.37: the queue holds the group as one entity (the PodGroup's priority, the first member's timestamp); members
  in order of priority, attempts, timestamp, name; Permit as in 1.36.
- 1.35's gang scheduling (spec.workloadRef, a Workload's minCount) is per pod with members waiting at Permit for
  up to 5 minutes, holding their devices: not modelled.
- The gang PreEnqueue keeps members out of the queue until minCount of them exist: fewer members than minCount
  never start (the same answer: none is placed).

- 1.37+: before it tries any member, the scheduler validates the group (validatePodGroup; 1.38's
  validatePodGroupHierarchy): every member, pending or bound, has the PodGroup's priority, and the members share
  one preemption policy (the PodGroup's, where PodGroupPreemptionPolicy reads it); otherwise the cycle fails with
  that error at every attempt and no member is placed (seen on v1.37.2, tests/e2e/test_e2e_gangs.py).

Modelled here: the group placed at the turn of its first member in the queue's order, members in order of
priority, creation and name, all or nothing against minCount minus the members already bound; a group that fails
validation places none, certain. Not modelled (the members stay undetermined, DRA431, naming why): composite
groups, scheduling constraints (topology), group claims, a group only some of whose members are gated (all gated:
placed as if ungated together, after the pods that are not), a member undetermined alone, 1.35.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubectl_dra.analyze.queue.outcomes import EntryKind
from kubectl_dra.model.meta import meta_of, name_of, ns_of
from kubectl_dra.model.words import few


@dataclass(eq=False)
class Gang:
    ns: str
    name: str
    min_count: int  # 0: basic policy (placed together, no all-or-nothing)
    bound: int  # members already bound: they count toward minCount
    blocked_alone: tuple = ()  # refs of pending members that get no device even alone (not queue entries)
    unmodelled: str | None = None
    rejected: str | None = None  # why the scheduler rejects the group before placing any member (certain: none)
    # filled by the simulation
    fit: int = 0
    failed: bool = False
    certain: bool = False
    members: list = field(default_factory=list)  # the Entries, in member order
    short: list = field(default_factory=list)  # refs of the members the cycle found no device for

    @property
    def ref(self) -> str:
        return f"{self.ns}/{self.name}"

    @property
    def need(self) -> int:
        return max(0, self.min_count - self.bound)


def _group_priority(pg: dict) -> int | None:
    p = (pg.get("spec") or {}).get("priority")
    return p if isinstance(p, int) else None


def gangs_of(snap, sem, members: dict) -> dict:
    """members: (namespace, group name) -> [(pod, entry kind or None, blocked alone?)] for its pending pods.
    Returns (namespace, group name) -> Gang."""
    groups = {(ns_of(g), name_of(g)): g for g in snap.podgroups}
    bound: dict = {}  # (namespace, group name) -> its members bound to nodes
    for p in snap.pods:
        spec = p.get("spec") or {}
        g = (spec.get("schedulingGroup") or {}).get("podGroupName")
        if isinstance(g, str) and g and spec.get("nodeName") and not meta_of(p).get("deletionTimestamp"):
            bound.setdefault((ns_of(p), g), []).append(p)
    out = {}
    facts = sem.components
    for key, ms in members.items():
        pg = groups.get(key)
        spec = (pg or {}).get("spec") or {}
        policy = spec.get("schedulingPolicy") or {}
        gang = policy.get("gang")
        min_count = int((gang or {}).get("minCount") or 0) if gang is not None else 0
        why = rejected = None
        if not facts.gang_in_one_cycle:
            why = (
                "in 1.35 a gang's members wait at Permit for up to 5 minutes, holding their devices, until minCount "
                "of them are placed; the queue does not model that"
            )
        elif pg is None:
            why = f"PodGroup {key[1]} is not in the snapshot: its gang policy (minCount) is unknown"
        elif spec.get("parentCompositePodGroupName"):
            why = f"PodGroup {key[1]} is part of composite group {spec['parentCompositePodGroupName']}, not modelled"
        elif spec.get("schedulingConstraints"):
            why = f"PodGroup {key[1]} has scheduling constraints (topology), not modelled"
        elif spec.get("resourceClaims"):
            why = f"PodGroup {key[1]} has claims of its own (DRAWorkloadResourceClaims), not modelled with the queue"
        elif gang is None and "basic" not in policy:
            why = f"PodGroup {key[1]} has a scheduling policy the queue does not know"
        elif 0 < sum(kind == EntryKind.GATED for _, kind, _ in ms) < sum(kind is not None for _, kind, _ in ms):
            why = "some of its members are still gated and some are not: when the rest join is not modelled"
        elif facts.validates_pod_groups and (rejected := _invalid(pg, [p for p, _, _ in ms] + bound.get(key, []), sem)):
            pass
        elif any(kind in (EntryKind.OPEN, EntryKind.ERROR) for _, kind, _ in ms):
            why = "a member is undetermined on its own"
        out[key] = Gang(
            key[0],
            key[1],
            min_count,
            len(bound.get(key, [])),
            tuple(f"{ns_of(p)}/{name_of(p)}" for p, kind, blocked in ms if kind is None and blocked),
            why,
            rejected if why is None else None,
        )
    return out


def _invalid(pg: dict, pods: list, sem) -> str | None:
    """Why the scheduler rejects the group before it tries any member (1.37+: validatePodGroup; 1.38:
    validatePodGroupHierarchy), at every attempt while the objects stay as they are: a member (pending or bound)
    whose priority is not the PodGroup's, or members of different preemption policies (the PodGroup's own policy,
    where PodGroupPreemptionPolicy reads it). Seen on v1.37.2: "all pods in a single pod group should have the same
    priority as the pod group's priority, got 1000 and 0", every member Pending."""
    from kubectl_dra.model.meta import priority_of

    group = _group_priority(pg) or 0
    odd = sorted((name_of(p), priority_of(p)) for p in pods if priority_of(p) != group)
    if odd:
        other = ", ".join(str(x) for x in sorted({x for _, x in odd}))
        return (
            f"pod group {name_of(pg)} is rejected before any member is placed: the PodGroup's priority is {group} and "
            f"{few(n for n, _ in odd)} {'has' if len(odd) == 1 else 'have'} priority {other}; the scheduler places a "
            "group only when every member has the group's priority, so none is placed while they differ"
        )
    policies = {(p.get("spec") or {}).get("preemptionPolicy") or "PreemptLowerPriority" for p in pods}
    own = (pg.get("spec") or {}).get("preemptionPolicy")
    if sem.version[1] >= 38 or sem.gate("PodGroupPreemptionPolicy"):
        if own or sem.version[1] == 37:  # (1.37 with the gate: the group's, PreemptLowerPriority if unset)
            policies.add(own or "PreemptLowerPriority")
    if len(policies) > 1:
        return (
            f"pod group {name_of(pg)} is rejected before any member is placed: its members and the PodGroup have "
            f"different preemption policies ({', '.join(sorted(policies))}), and the scheduler places a group only "
            "when they agree, so none is placed while they differ"
        )
    return None


def member_order(es: list) -> list:
    """Members in the order the group cycle tries them: priority, then creation (the first attempt, estimated),
    then name."""
    return sorted(es, key=lambda e: (-e.priority, e.created, name_of(e.pod)))


def gang_reason(g: Gang, e) -> str:
    """Why this member gets what it gets: the group's need against what fits."""
    if g.rejected is not None:
        return g.rejected
    total = len(g.members) + len(g.blocked_alone)
    bound = f", {g.bound} already bound" if g.bound else ""
    if g.failed:
        short = [r.split("/", 1)[1] for r in g.short] + [r.split("/", 1)[1] for r in g.blocked_alone]
        names = ", ".join(short[:4]) + (f" and {len(short) - 4} more" if len(short) > 4 else "")
        return (
            f"pod group {g.name} is placed all or nothing: it needs {g.need} of its {total} pending members at once "
            f"(minCount {g.min_count}{bound}); {g.fit} fit, and {names} {'finds' if len(short) == 1 else 'find'} "
            f"no device left on the nodes {'its claims' if len(short) == 1 else 'their claims'} can reach, so the "
            "scheduler places none of them"
        )
    if e.node is None:
        return (
            f"pod group {g.name} is placed without it ({g.fit} of {total} members fit, minCount {g.min_count}{bound})"
        )
    return f"pod group {g.name}: {g.fit} of its {total} pending members fit at once (minCount {g.min_count}{bound})"
