"""The queue's named values: how a pending pod takes part in the queue (EntryKind, from its answer alone), what
its place in the queue gives it (Outcome), and the one key that orders the queue (queue_key). The enums are str
enums: their values are the ones `-o json` prints (`queue.outcome`), and they compare equal to those strings."""

from __future__ import annotations

from enum import StrEnum


class EntryKind(StrEnum):
    """How a pod takes part in the dry-run in queue order (order.py entry_kind)."""

    OK = "ok"  # alone it gets devices
    OPEN = "open"  # alone its answer is undetermined: it may or may not take devices
    GATED = "gated"  # it gets devices alone, but its scheduling gates hold it (it goes behind every ungated pod)
    # alone the scheduler's attempt errs, but at its turn the pods ahead may have taken the device the search errs on
    ERROR = "error"
    STUCK = "stuck"  # its claims get devices and stay allocated, but the pod stays Pending (DRA228's PreBind defect)


class Outcome(StrEnum):
    """What the dry-run in queue order gives a pod (judge.py Place.outcome)."""

    FITS = "fits"  # it gets devices
    TAKEN = "taken"  # the devices it could use, or the room on their nodes, go to pods ahead
    GANG = "gang"  # its pod group does not fit
    UNDETERMINED = "undetermined"  # which of those depends on what the cluster has not decided


def queue_key(gated: bool, priority: int, created: str) -> tuple:
    """Where a pod stands in the scheduler's queue: PrioritySort's Less (pkg/scheduler/framework/plugins/queuesort:
    the higher priority first, then the earlier time it was queued, here its creation time), behind every pod
    without scheduling gates if it has some (a gated pod is answered as if its gates were gone, after the others).
    Pods of equal keys may be taken either way."""
    return (gated, -priority, created)
