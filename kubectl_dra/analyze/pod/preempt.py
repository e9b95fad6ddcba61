"""DefaultPreemption for the node's resources: where NodeResourcesFit rejects every node on which the claims fit, the
scheduler's PostFilter looks for pods of lower priority to evict, and the pod is placed once they are gone.

upstream (1.34-1.38, the same rules each minor for pods that are not in a PodGroup):
pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go (PodEligibleToPreemptOthers,
SelectVictimsOnNode, calculateNumCandidates) and pkg/scheduler/framework/preemption/preemption.go (findCandidates,
DryRunPreemption, pickOneNodeForPreemption), util.go (MoreImportantVictim, PodTerminatingByPreemption).

- Eligible: not `preemptionPolicy: Never`; a pod nominated to a node where a pod of lower priority it preempted is
  still terminating waits for it instead of preempting again.
- Potential nodes: those whose Filter failure is resolvable. Every DRA failure is UnschedulableAndUnresolvable
  (DRA434, device_preemption_finding below), so only the nodes where the claims fit and NodeResourcesFit alone rejects count.
  Victims' devices stay allocated in the dry-run: the claims fit there with them, so they fit without them.
- On a node: every bound pod of lower priority removed; the pod must then fit, with the pods nominated there of a
  priority not below its own counted (RunFilterPluginsWithNominatedPods). Then the victims are reprieved one by one,
  the most important first (higher priority, then the earlier status.startTime), PodDisruptionBudget-violating ones
  before the others: what still fits with a pod added back keeps it.
- The node: the fewest PDB violations, the lowest highest victim priority, the lowest sum of priorities, the fewest
  victims, the latest start of the highest-priority victims; past that, whichever the parallel search met first
  (random).

What the input cannot tell: PodDisruptionBudgets are not read, so which pods are evicted, and which node is chosen
among several, may differ from what is named (the pod is placed either way); pods of one priority started in the same
second are reprieved in an order Go's sort leaves open. With GenericWorkload on, a victim in a PodGroup is evicted
with its whole group (not modelled: the answer is open)."""

from __future__ import annotations

from dataclasses import dataclass

from kubectl_dra.analyze.pod.claims import name_of
from kubectl_dra.findings.model import make
from kubectl_dra.findings.stages import Stage
from kubectl_dra.model.meta import gang_of, priority_of
from kubectl_dra.model.times import parse_time

_INT32 = 2**31


def _meta(p: dict) -> dict:
    return p.get("metadata") or {}


def ref_of(p: dict) -> str:
    return f"{_meta(p).get('namespace')}/{_meta(p).get('name')}"


def never_preempts(pod: dict) -> bool:
    return (pod.get("spec") or {}).get("preemptionPolicy") == "Never"


def terminating_by_preemption(p: dict) -> bool:
    """PodTerminatingByPreemption: being deleted, with DisruptionTarget=True for PreemptionByScheduler."""
    if not _meta(p).get("deletionTimestamp"):
        return False
    for c in (p.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "DisruptionTarget":
            return c.get("status") == "True" and c.get("reason") == "PreemptionByScheduler"
    return False


def _start(p: dict) -> float:
    """GetPodStartTime: status.startTime, else now (a pod bound but not started): the latest of all."""
    t = parse_time((p.get("status") or {}).get("startTime"))
    return t.timestamp() if t is not None else float("inf")


@dataclass(frozen=True)
class Candidate:
    node: str
    victims: tuple  # the pods evicted, most important first
    ties: bool = False  # pods of one priority and start time but different requests: which of them go is open

    def score(self) -> tuple:
        """pickOneNodeForPreemption's criteria 2-5 (1, PDB violations, is not known), smaller is better."""
        top = max(priority_of(v) for v in self.victims)
        latest = min(_start(v) for v in self.victims if priority_of(v) == top)
        return (top, sum(priority_of(v) + _INT32 for v in self.victims), len(self.victims), -latest)


@dataclass(frozen=True)
class Preemption:
    """chosen: the node the scheduler nominates (None: preemption does not help); node_certain: no other candidate
    could be picked. waiting: the pod preempted already and waits for its victims (named) to terminate. open_: why
    the outcome cannot be told ("" when it can)."""

    chosen: Candidate | None = None
    candidates: tuple = ()
    waiting: bool = False
    open_: str = ""
    why_not: str = ""  # why it does not preempt although pods of lower priority would make room
    # the best candidates' nodes when several tie on every criterion pickOneNodeForPreemption compares: it then takes
    # the first of a Go map, so which of them is nominated is not fixed (chosen is one of them)
    tied: tuple = ()

    @property
    def node_certain(self) -> bool:
        return len(self.candidates) == 1 or self.waiting

    @property
    def where(self) -> str:
        """The node it is placed on, or "one of A, B" for a tie."""
        if not self.tied:
            return self.chosen.node
        shown = ", ".join(self.tied[:3])
        return f"one of {shown}" + (f" and {len(self.tied) - 3} more" if len(self.tied) > 3 else "")


class Preempter:
    """The preemption dry-run for one pod over the nodes NodeResourcesFit rejected (fit.Fit, whose BoundPods lists
    every node's bound pods and the pods nominated to it)."""

    def __init__(self, fit):
        self.fit = fit
        self.pod = fit.pod
        self.mine = priority_of(fit.pod)

    def _nominated(self, node: str) -> tuple[dict, int]:
        """The pods nominated to the node of a priority not below the pod's (not the pod itself)."""
        req: dict = {}
        n = 0
        for p in self.fit.bound.nominated.get(node, ()):
            if p is self.pod or ref_of(p) == ref_of(self.pod) or priority_of(p) < self.mine:
                continue
            n += 1
            for k, v in self.fit.bound.requests(p).items():
                req[k] = req.get(k, 0) + v
        return req, n

    def _fits_without(self, node: dict, nominated: tuple[dict, int], out: list) -> bool | None:
        """nominated: what counts on the node beside its bound pods (the nominated pods, the queue's pods ahead)."""
        req = dict(nominated[0])
        for p in out:
            for k, v in self.fit.bound.requests(p).items():
                req[k] = req.get(k, 0) - v
        return self.fit.check(node, (req, nominated[1] - len(out))).fits

    def room_without_lower(self, node: dict) -> bool | None:
        """SelectVictimsOnNode's first steps at their most generous (every bound pod of lower priority removed,
        nothing nominated counted, nothing the queue places there): False where preemption can never make room for
        the pod on the node (no pod of lower priority to remove: "No preemption victims found"; or NodeResourcesFit
        still refuses it once they are all gone), True or None (cannot be told: a pod of lower priority in a PodGroup,
        evicted with its group; what its devices add, DRANodeAllocatableResources) otherwise."""
        lower = [p for p in self.fit.bound.by_node.get(name_of(node), ()) if priority_of(p) < self.mine]
        if not lower:
            return False
        if self.fit.na or any(gang_of(p) for p in lower):
            return None
        return self._fits_without(node, ({}, 0), lower)

    def on_node(self, node: dict, extra: tuple | None = None) -> Candidate | None | str:
        """SelectVictimsOnNode: the victims on the node, None where preemption does not help there, or a string:
        why it cannot be told. extra: (requests, pod count) the queue's pods ahead placed there add (of a priority
        not below the pod's: the queue's order; never victims)."""
        name = name_of(node)
        lower = [p for p in self.fit.bound.by_node.get(name, ()) if priority_of(p) < self.mine]
        if not lower:
            return None
        # a pod naming a group tells that GenericWorkload is on (order.gang_of): it is evicted with its group
        if any(gang_of(p) for p in lower):
            return f"a pod of lower priority on {name} is in a PodGroup, evicted with its whole group (not modelled)"
        nominated = self._nominated(name)
        if extra is not None:
            req = dict(nominated[0])
            for k, v in extra[0].items():
                req[k] = req.get(k, 0) + v
            nominated = (req, nominated[1] + extra[1])
        fits = self._fits_without(node, nominated, lower)
        if fits is None:
            return f"the pods bound to {name} are not all in the input"
        if not fits:
            return None
        order = sorted(lower, key=lambda p: (-priority_of(p), _start(p)))
        victims: list = []
        kept = list(order)  # the pods out of the node; the reprieve adds them back one by one
        for p in order:
            kept.remove(p)
            if not self._fits_without(node, nominated, kept):
                kept.append(p)
                victims.append(p)
        seen: dict = {}
        ties = False
        for p in order:
            key = (priority_of(p), _start(p))
            r = tuple(sorted(self.fit.bound.requests(p).items()))
            ties = ties or seen.setdefault(key, r) != r
        return Candidate(name, tuple(victims), ties)


def preemption(fit, rejected: list[dict]) -> Preemption:
    """The preemption outcome for a pod every node of which (rejected: the Node objects where the claims fit) lacks
    room for its requests."""
    pod = fit.pod
    nominated = (pod.get("status") or {}).get("nominatedNodeName")
    if nominated:
        waiting = [
            p
            for p in fit.bound.by_node.get(nominated, ())
            if terminating_by_preemption(p) and priority_of(p) < priority_of(pod)
        ]
        if waiting:
            node = next((n for n in rejected if name_of(n) == nominated), None)
            # (where the claims do not fit on it, its filters fail for good: PodEligibleToPreemptOthers lets it go on)
            if node is not None:
                pre = Preempter(fit)
                if pre._fits_without(node, pre._nominated(nominated), waiting):
                    c = Candidate(nominated, tuple(waiting))
                    return Preemption(c, (c,), waiting=True)
                return Preemption(open_=f"it waits for the pods it preempted on {nominated} to terminate")
    pre = Preempter(fit)
    found, unknown = [], []
    for node in rejected:
        got = pre.on_node(node)
        if isinstance(got, str):
            unknown.append(got)
        elif got is not None:
            found.append(got)
    if never_preempts(pod):
        if found or unknown:
            return Preemption(why_not="its preemptionPolicy is Never")
        return Preemption()
    if unknown:
        return Preemption(candidates=tuple(found), open_=unknown[0])
    if not found:
        return Preemption()
    best = min(found, key=Candidate.score)
    tied = tuple(c.node for c in found if c.score() == best.score())
    return Preemption(best, tuple(found), tied=tied if len(tied) > 1 else ())


def pods_of_lower(n: int) -> str:
    return f"{n} pod{'' if n == 1 else 's'} of lower priority"


def _names(pods) -> str:
    shown = ", ".join(ref_of(p) for p in pods[:3])
    return shown + (f" and {len(pods) - 3} more" if len(pods) > 3 else "")


def preemption_findings(got: Preemption, names: list[str], msg: str, evidence: dict) -> list | None:
    """What replaces DRA504 (msg: its message) when preemption decides: DRA507 (placed once the victims are gone),
    DRA508 (open); DRA504 with the reason when pods of lower priority would make room but the pod never preempts.
    None: preemption does not help, DRA504 stands."""
    if got.why_not:
        return [
            make(
                "DRA504",
                f"{msg}; preempting pods of lower priority would make room, but {got.why_not}, so the scheduler does "
                "not preempt them",
                nodes=names,
                **evidence,
            )
        ]
    if got.open_:
        return [
            make(
                "DRA508",
                f"{msg}; whether preempting pods of lower priority makes room cannot be told: {got.open_}",
                nodes=names,
                **evidence,
            )
        ]
    c = got.chosen
    if c is None:
        return None
    victims = [{"pod": ref_of(p), "priority": priority_of(p)} for p in c.victims]
    gone = "it is gone" if len(c.victims) == 1 else "they are gone"
    if got.waiting:
        text = (
            f"{msg}; the pod preempted {pods_of_lower(len(c.victims))} on {c.node} ({_names(c.victims)}), "
            f"terminating now: the scheduler places it on {c.node} once {gone}"
        )
    elif got.tied:
        text = (
            f"{msg}; the scheduler preempts {pods_of_lower(len(c.victims))} on {got.where}, which tie on every "
            f"criterion it compares, so which it nominates is not fixed (on {c.node}: {_names(c.victims)}; "
            f"PodDisruptionBudgets, not read, may also change the pick), and places the pod there once {gone}"
        )
    else:
        unread = (
            "unless PodDisruptionBudgets, not read, make it pick others"
            if got.node_certain
            else "PodDisruptionBudgets, not read, may make it pick other pods or "
            + ", ".join(x.node for x in got.candidates if x is not c)[:120]
        )
        text = (
            f"{msg}; the scheduler preempts {pods_of_lower(len(c.victims))} on {c.node} "
            f"({_names(c.victims)}; {unread}) and places the pod there once {gone}"
        )
        if c.ties:
            text += " (which of the pods of one priority started in the same second go is the scheduler's pick)"
    return [
        make(
            "DRA507",
            text,
            nodes=names,
            node=c.node,
            victims=victims,
            nodeCertain=got.node_certain,
            **({"tiedNodes": list(got.tied), "where": got.where} if got.tied else {}),
            **evidence,
        )
    ]


# Priority does not free devices: kube-scheduler 1.34-1.38 never preempts pods to free devices. The DynamicResources
# plugin has no PreFilterExtensions (a victim's devices stay allocated in the preemption dry-run) and every DRA Filter
# failure is UnschedulableAndUnresolvable, which DefaultPreemption skips ("Preemption is not helpful for
# scheduling"). A pod blocked by devices that lower-priority pods hold waits for them to finish; saying so keeps a
# user from raising its priority for nothing.
def device_preemption_finding(an, pod: dict, analyses, findings):
    """DRA434 when the pod is blocked by devices in use (DRA404) and some of them are held by pods of lower
    priority than its own."""
    if not any(f.code == "DRA404" for f in findings) or an.cache.allocated is None:
        return None
    mine = priority_of(pod)
    owners = an.cache.allocated[0].owners
    held: dict = {}  # claim ref -> a device it holds that the pod could use
    for a in analyses:
        if a.allocated:
            continue
        for m in a.matrices.values():
            for v in m:
                if v.stage is Stage.IN_USE:
                    for ref in owners.get(v.entry.did, ()):
                        held.setdefault(ref, v.entry.id)
    lower, unseen = [], []
    for ref, device in held.items():
        ns, _, name = ref.partition("/")
        claim = an.idx.claims.get((ns, name)) or {}
        for r in (claim.get("status") or {}).get("reservedFor") or []:
            if r.get("resource") != "pods":
                continue
            holder = an.idx.pods.get((ns, r.get("name")))
            if holder is None:  # live, explain pod reads its own pod and the pending ones, not every running pod
                unseen.append((f"{ns}/{r.get('name')}", device))
            elif priority_of(holder) < mine:
                lower.append((f"{ns}/{r.get('name')}", priority_of(holder), device))
    if not lower:
        if not unseen or mine <= 0:
            return None
        shown = ", ".join(f"{p} holds {d}" for p, d in unseen[:3]) + (" ..." if len(unseen) > 3 else "")
        return make(
            "DRA434",
            f"devices it could use are held by other pods ({shown}); whatever their priority, kube-scheduler does "
            f"not preempt pods to free devices, so this pod's priority ({mine}) does not help",
            holders=[{"pod": p, "priority": None, "device": d} for p, d in unseen[:20]],
        )
    shown = ", ".join(f"{p} (priority {prio}) holds {d}" for p, prio, d in lower[:3])
    more = f" and {len(lower) - 3} more" if len(lower) > 3 else ""
    return make(
        "DRA434",
        f"devices it could use are held by pods of lower priority: {shown}{more}; kube-scheduler does not preempt "
        f"pods to free devices, so its priority ({mine}) does not help",
        holders=[{"pod": p, "priority": prio, "device": d} for p, prio, d in lower[:20]],
    )
