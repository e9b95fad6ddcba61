"""What kube-scheduler itself last said about a pod, and the pod-level facts that keep it from looking at
the pod at all: scheduling gates and another scheduler.

The scheduler's word is the newest of its events (FailedScheduling, BindingConditionsPending, Scheduled) or,
without events, the PodScheduled condition (dra-facts §3.1). The dry-run is compared with it, so that the
analysis never silently contradicts the component that decides."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kubectl_dra.analyze.pod.claims import name_of
from kubectl_dra.findings.model import Finding, make
from kubectl_dra.model.normalize import event_sort_key, norm_time
from kubectl_dra.model.words import few

DEFAULT_SCHEDULER = "default-scheduler"
SCHEDULER_REASONS = ("FailedScheduling", "BindingConditionsPending", "Scheduled")

# Texts of the DynamicResources plugin (dra-facts §3.2) and of the scheduler around it. A per-node reason in
# the "0/N nodes are available" histogram that contains one of these was decided by DRA.
DRA_MARKERS = (
    "cannot allocate all claims",
    "resourceclaim not available on the node",
    "invalid resource pools were encountered",
    "timed out trying to allocate devices",
    "asked by caller to stop allocating devices",
    "cannot schedule extended resource claim",
    "cannot fit resource",
    '"DynamicResources"',
    "ResourceClaim",
    "resourceclaim",
    "resource claim",
    "device class",
    "binding condition",
    "device binding",
)

# The scheduler's per-node reasons (its filter plugins' FitError texts) for what the analysis checks on every node
# from objects the API shows whole: TaintToleration, NodeAffinity, NodeUnschedulable, NodeName (model/nodes.py
# pod_node_rejection). A disagreement that leaves only these is one of the analysis, not a filter it lacks.
# (NodeResourcesFit's reasons stay the scheduler's: its view holds pods in flight that no list shows.)
MODELLED_REASONS = (
    "had untolerated taint",
    "didn't match Pod's node affinity/selector",
    "were unschedulable",
    "didn't match the requested node name",
)

_HISTOGRAM = re.compile(r"^0/(\d+) nodes are available: (.*)$", re.S)
_ENTRY = re.compile(r"^(\d+) (.+)$")


def is_dra_text(text: str) -> bool:
    return any(m in text for m in DRA_MARKERS)


@dataclass(frozen=True)
class SchedulerWord:
    """state: "unschedulable" (a FitError), "error" (a plugin error, e.g. PreBind), "binding" (waiting for
    binding conditions), "scheduled" (bound or PodScheduled=True)."""

    state: str
    message: str
    time: str
    source: str  # "event <reason>" or "condition PodScheduled"
    nodes_total: int | None = None  # from the "0/N nodes are available" histogram
    dra_nodes: int | None = None  # how many of them DRA rejected (None: every node, or not a histogram)

    @property
    def about_dra(self) -> bool:
        return self.state == "binding" or is_dra_text(self.message)

    @property
    def retrying(self) -> bool:
        """PostFilter freed claims for the next attempt (`deallocation of ResourceClaim completed`, `deletion of
        ResourceClaim completed`): the word describes a state the scheduler has already changed."""
        return "of ResourceClaim completed" in self.message

    @property
    def blocked(self) -> bool:
        return self.state in ("unschedulable", "error")

    @property
    def non_dra_reasons(self) -> list[str]:
        """The histogram's entries that are not DRA's ("1 Insufficient cpu", "2 node(s) didn't match pod
        anti-affinity rules")."""
        m = _HISTOGRAM.match(self.message.strip()) if self.nodes_total is not None else None
        if not m:
            return []
        body = m.group(2).split(". ", 1)[0].rstrip(".")
        return [p.strip() for p in body.split(", ") if _ENTRY.match(p.strip()) and not is_dra_text(p)]

    @property
    def unmodelled_reasons(self) -> list[str]:
        """Of non_dra_reasons, those of a filter the analysis does not run (pod affinity, volumes, ports, ...)."""
        return [r for r in self.non_dra_reasons if not any(m in r for m in MODELLED_REASONS)]

    @property
    def non_dra_nodes(self) -> int:
        """Nodes the scheduler rejected for reasons other than DRA: each may be where the dry-run found room."""
        if self.nodes_total is None or self.dra_nodes is None:
            return 0
        return max(0, self.nodes_total - self.dra_nodes)

    def to_dict(self) -> dict:
        return {
            "state": self.state,
            "message": self.message,
            "time": self.time,
            "source": self.source,
            "nodesTotal": self.nodes_total,
            "draRejectedNodes": self.dra_nodes,
        }


def _histogram(message: str) -> tuple[int | None, int | None]:
    m = _HISTOGRAM.match(message.strip())
    if not m:
        return None, None
    total = int(m.group(1))
    body = m.group(2).split(". ", 1)[0].rstrip(".")
    dra = 0
    for part in body.split(", "):
        e = _ENTRY.match(part.strip())
        if not e:
            # A PreFilter rejection: no per-node counts, the reason applies to every node.
            return total, (total if is_dra_text(body) else 0)
        if is_dra_text(e.group(2)):
            dra += int(e.group(1))
    return total, dra


def scheduler_word(pod: dict, events: list[dict]) -> SchedulerWord | None:
    """The scheduler's latest word on the pod, or None if it has said nothing (yet)."""
    if (pod.get("spec") or {}).get("nodeName"):
        return SchedulerWord("scheduled", f"bound to {pod['spec']['nodeName']}", "", "spec.nodeName")
    evs = sorted((e for e in events if e.get("reason") in SCHEDULER_REASONS), key=event_sort_key)
    if evs and evs[-1]["reason"] == "Scheduled":
        # Binding is what sets spec.nodeName: a Scheduled event without it is from an earlier pod of the same
        # name or an inconsistent dump, and the events before it are older still.
        return None
    if evs:
        e = evs[-1]
        state = "binding" if e["reason"] == "BindingConditionsPending" else "unschedulable"
        msg = e.get("message") or ""
        if state == "unschedulable" and msg.startswith("running "):
            state = "error"
        total, dra = _histogram(msg) if state == "unschedulable" else (None, None)
        return SchedulerWord(state, msg, e.get("time") or "", f"event {e['reason']}", total, dra)
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") != "PodScheduled":
            continue
        msg = c.get("message") or ""
        if c.get("status") == "True":
            return SchedulerWord(
                "scheduled", msg or "PodScheduled=True", c.get("lastTransitionTime") or "", "condition PodScheduled"
            )
        if c.get("status") == "False" and c.get("reason") in ("Unschedulable", "SchedulerError"):
            state = "error" if c.get("reason") == "SchedulerError" else "unschedulable"
            total, dra = _histogram(msg) if state == "unschedulable" else (None, None)
            return SchedulerWord(
                state,
                msg,
                c.get("lastTransitionTime") or c.get("lastProbeTime") or "",
                "condition PodScheduled",
                total,
                dra,
            )
    return None


def pod_gate_findings(pod: dict) -> list[Finding]:
    """Scheduling gates (the scheduler does not look at the pod until they are removed) and another scheduler
    (the analysis models kube-scheduler)."""
    out = []
    spec = pod.get("spec") or {}
    gates = [g.get("name", "") for g in spec.get("schedulingGates") or [] if isinstance(g, dict)]
    if gates and not spec.get("nodeName"):
        out.append(
            make(
                "DRA006",
                f"the pod is held by scheduling gate(s) {', '.join(gates)}: the scheduler does "
                "not try to schedule it until they are removed",
                gates=gates,
            )
        )
    sched = spec.get("schedulerName") or DEFAULT_SCHEDULER
    if sched != DEFAULT_SCHEDULER:
        out.append(
            make(
                "DRA007",
                f"the pod names scheduler {sched!r}; the analysis models kube-scheduler "
                f"({DEFAULT_SCHEDULER}) and its DynamicResources plugin",
                schedulerName=sched,
            )
        )
    return out


def agreement_finding(
    word: SchedulerWord | None,
    blocked: bool,
    allocatable_nodes: list[str],
    device_blocked: bool,
    snap_changes: list[str],
) -> Finding | None:
    """DRA005 when the scheduler's latest word and the analysis disagree about DRA.

    blocked: the analysis found a blocking finding; allocatable_nodes: nodes where the dry-run found devices;
    device_blocked: the blocking finding is a device-level result of the dry-run."""
    if word is None:
        return None
    causes = [
        "a feature or field the analysis does not model",
        "a version or feature-gate skew between kube-scheduler and the assumed semantics",
        "allocations the scheduler has in flight (not in the API)",
    ]
    if snap_changes:
        causes.insert(
            0,
            "the scheduler has not tried again since objects changed after its last attempt ("
            + "; ".join(snap_changes[:3])
            + ")",
        )
    else:
        causes.append("a snapshot taken between two scheduler attempts")
    if word.blocked and word.about_dra and not blocked and not word.retrying:
        if allocatable_nodes and word.non_dra_nodes and word.unmodelled_reasons:
            # The scheduler rejected some nodes for other reasons, and the dry-run's nodes pass every filter the
            # analysis models (NodeResourcesFit included): a filter it does not model may be what rejects them.
            # (Reasons of the filters it runs, a taint on a node without devices, are its own: DRA005 below.)
            others = word.unmodelled_reasons
            return make(
                "DRA022",
                f"the dry-run finds the claims allocatable on {few(allocatable_nodes)}, but the scheduler "
                f"rejects {word.non_dra_nodes} node(s) for reasons outside DRA that the analysis does not find "
                f"there ({'; '.join(others) if others else word.message}): "
                f"{word.message!r} ({word.source}{', ' + word.time if word.time else ''})",
                scheduler=word.to_dict(),
                reasons=others,
            )
        found = (
            f"the dry-run finds the claims allocatable on {few(allocatable_nodes)}"
            if allocatable_nodes
            else "the analysis finds nothing that blocks"
        )
        return make(
            "DRA005",
            f"the scheduler says {word.message!r} ({word.source}{', ' + word.time if word.time else ''}), but {found}",
            scheduler=word.to_dict(),
            likelyCauses=causes,
        )
    if word.state == "scheduled" and blocked and device_blocked:
        return make(
            "DRA005",
            f"the scheduler placed the pod ({word.message}), but the dry-run finds its devices not allocatable",
            scheduler=word.to_dict(),
            likelyCauses=causes,
        )
    return None


def outside_dra_finding(word: SchedulerWord | None) -> Finding | None:
    """DRA021 when the scheduler's latest word rejects the pod and names no DRA reason: what keeps it Pending is
    outside what the analysis models, and the answer says so instead of a bare "nothing blocks"."""
    if word is None or not word.blocked or word.about_dra or word.retrying:
        return None
    return make(
        "DRA021",
        f"the scheduler's latest attempt failed on grounds outside DRA: {word.message!r} "
        f"({word.source}{', ' + word.time if word.time else ''})",
        scheduler=word.to_dict(),
    )


def changed_since(snap, when: str) -> list[str]:
    """Slices and claims created after the scheduler's last word: it may not have re-evaluated the pod yet."""
    if not when:
        return []
    t = norm_time(when)
    out = []
    for kind, objs in (("ResourceSlice", snap.slices), ("ResourceClaim", snap.claims), ("DeviceClass", snap.classes)):
        for o in objs:
            ts = (o.get("metadata") or {}).get("creationTimestamp")
            if ts and norm_time(ts) > t:
                out.append(f"{kind} {name_of(o)} created {ts}")
    return sorted(out)
