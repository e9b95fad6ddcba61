"""Pods compete, step 1: which pending pods take part in the queue and in which order (PrioritySort), with
the classes of pods whose relative order the API does not show."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from kubectl_dra.analyze.allocator.common import ErrorKind
from kubectl_dra.analyze.queue.outcomes import EntryKind, queue_key
from kubectl_dra.findings.model import UNDETERMINED
from kubectl_dra.model.meta import meta_of, name_of, ns_of
from kubectl_dra.model.times import human_age

BASIS = (
    "kube-scheduler's queue order estimated from the API: higher priority first, then creation time; pods still "
    "gated after the others, as if ungated in that order. The real queue may differ after backoff or re-queueing."
)


@dataclass
class Entry:
    """One pending pod that uses DRA, with its own (alone) answer and the inputs of its dry-run."""

    pod: dict
    report: object  # the pod's Report from explain_pod (alone)
    plan: object  # the PodPlan of its analysis (dryrun.py), or None
    kind: EntryKind  # how it takes part, from its answer alone (outcomes.py)
    priority: int = 0
    created: str = ""
    attempted: bool = False
    index: int = 0  # place in the order
    tie: int = 0  # index of its tie class: pods of one class are taken in an order the API does not show
    # filled by the simulation
    node: str | None = None
    takes: tuple = ()  # device IDs it takes in the dry-run in queue order
    allocs: tuple = ()  # (claim ref, AllocationResult) per pending claim it allocates in that dry-run
    choices: int = 0  # nodes it fits on at its turn (0, 1 or 2 = "more than one"), when searched for that
    # why the node it goes to at its turn is one of several the scheduler may pick (its scores are not modelled, or
    # the highest score ties), or None: the only node it passes, or the one of the highest score (simulate.py)
    node_open: str | None = None
    choices_scored: bool = False  # its scores picked its node among several it passes (pods placed ahead count)
    error: str | None = None  # why its place is not modelled (a shared claim) or its attempt errs at its turn
    # (message, certain): the error its attempt meets at its turn (certain), or may meet where it gets no devices
    # (the scheduler may not filter the node that errs: errors_met.py); the scheduler retries it (retry.py)
    erred: tuple | None = None
    follows: "Entry | None" = None  # the pod ahead whose shared claim it follows
    crowded: str | None = None  # a node NodeResourcesFit rejects only once the pods ahead are placed there
    gang: object = None  # its pod group (gang.Gang: spec.schedulingGroup, 1.35's spec.workloadRef), or None
    preempts: object = None  # at its turn it preempts pods of lower priority (preempt.Candidate): preempted.py
    unmodelled: str | None = None  # why its turn is not modelled at all (simulate.py): e.error at its turn

    @property
    def gated(self) -> bool:
        """Its scheduling gates are still on: not in the scheduler's queue yet."""
        return bool((self.pod.get("spec") or {}).get("schedulingGates"))

    @cached_property
    def ref(self) -> str:  # (once: the rules and the places read it for every pod ahead)
        return f"{ns_of(self.pod)}/{name_of(self.pod)}"


def attempted(pod: dict) -> bool:
    """The scheduler tried the pod and put it back (PodScheduled=False, not for its gates)."""
    for c in (pod.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "PodScheduled" and c.get("status") == "False":
            return c.get("reason") != "SchedulingGated"
    return False


# The errors met on a device the search evaluates, which the queue's search meets as the pod's own dry-run does: what
# the pods ahead (or, at a retry, behind) take decides whether it is met. The others stay the pod's own answer: an
# error of the claim (a selector that does not compile, a class, a disabled feature) or of the allocated state
# (1.38's PreFilter), which no pod's placement changes.
_DEVICE_ERRORS = frozenset({ErrorKind.CEL_RUNTIME, ErrorKind.CONSTRAINT, ErrorKind.ATTRIBUTE})


def entry_kind(pod: dict, report, plan) -> EntryKind | None:
    """How a pod takes part in the queue: None when it does not (bound, nothing pending, blocked alone: it takes
    nothing), else its EntryKind (outcomes.py; an error is not monotonic: the pods ahead may take the device the
    search errs on, and at its turn it gets devices)."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName") or meta_of(pod).get("deletionTimestamp"):
        return None
    if (pod.get("status") or {}).get("phase") not in (None, "Pending"):
        return None
    if plan is None or not plan.pending:
        return None
    v = report.verdict
    blocking = [f for f in report.findings if f.blocking]
    if plan.dry.error_decides:  # (an error it may not meet, with nodes where the claims fit: undetermined)
        # (not an error of the allocated state, 1.38's PreFilter: it fails every pod whatever the pods ahead take)
        # (a gated pod takes part as if ungated, behind the others, as gated pods do)
        if plan.dry.error.kind not in _DEVICE_ERRORS or not v.determined:
            return None
        return EntryKind.ERROR
    if not plan.dry.allocatable:
        return None
    if blocking:
        codes = {f.code for f in blocking}
        if "DRA228" in codes and codes <= {"DRA228", "DRA006"} and v.determined:
            # PreBind fails at every attempt after its own claims were allocated, and they stay allocated: it
            # takes devices as a pod that fits does, and stays Pending (the queue agreement suite's seed 53)
            return EntryKind.STUCK
        if not (all(f.code == "DRA006" for f in blocking) and v.determined):
            return None
        # behind its gates, its answer alone: the gate decides the verdict, but a finding that leaves the rest open
        # (DRA506: the room on its nodes unknown) leaves open whether it takes devices once ungated
        return EntryKind.OPEN if any(f.code in UNDETERMINED for f in report.findings) else EntryKind.GATED
    return EntryKind.OK if v.determined else EntryKind.OPEN


def order(entries: list[Entry]) -> list[Entry]:
    """In the queue's order, with tie classes: pods of one priority created in the same second, or of one priority
    of which any was already tried (re-queued at a time the API does not show), form one class."""
    out = sorted(entries, key=lambda e: (*queue_key(e.gated, e.priority, e.created), e.ref))
    tie = -1
    prev = None
    groups: dict = {}
    for e in out:
        groups.setdefault((e.gated, e.priority), []).append(e)
    loose = {k for k, es in groups.items() if any(e.attempted for e in es)}
    for i, e in enumerate(out):
        g = (e.gated, e.priority)
        key = g if g in loose else (g, e.created[:19])
        if key != prev:
            tie += 1
            prev = key
        e.index, e.tie = i, tie
    return out


def why_ahead(q: Entry, p: Entry) -> str:
    if not q.gated and p.gated:
        return "not gated"
    if q.priority != p.priority:
        return f"priority {q.priority} > {p.priority}"
    if q.tie == p.tie:
        return f"same priority, order not known ({tie_words(q if q.attempted else p)})"
    age = _seconds_between(q.created, p.created)
    return f"same priority, created {human_age(age)} earlier" if age is not None else "same priority, created earlier"


def _seconds_between(a: str, b: str) -> float | None:
    try:
        ta = datetime.fromisoformat(a.replace("Z", "+00:00"))
        tb = datetime.fromisoformat(b.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (tb - ta).total_seconds()


def tie_words(e: Entry) -> str:
    if e.attempted:
        return "already tried, re-queued at times the API does not show"
    return "created in the same second" if e.created else "no creation time"
