"""Shared by every part of the allocator: device IDs, object references, quantities, the error it returns."""

from __future__ import annotations

from enum import Enum
from functools import lru_cache
from typing import Any

from kubectl_dra.quantity import parse_quantity


def _n(v):
    """An exact number as an int when it is integral (most quantities are): the search adds and
    compares capacities and counters millions of times, and int arithmetic is far cheaper than Fraction's."""
    return v.numerator if v.denominator == 1 else v


@lru_cache(maxsize=65536)
def _qty_str(text: str) -> Any:
    return _n(parse_quantity(text))


def _qty(text) -> Any:
    """parse_quantity normalised with _n, cached for strings (quantity strings repeat across devices)."""
    return _qty_str(text) if isinstance(text, str) else _n(parse_quantity(text))


ALLOCATION_RESULTS_MAX_SIZE = 32

DeviceID = tuple  # (driver, pool, device)


def device_id_str(did: DeviceID) -> str:
    return "/".join(did)


def obj_ref(obj: dict) -> str:
    """klog.KObj: "namespace/name", or "name" for cluster-scoped objects."""
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace") or ""
    return f"{ns}/{meta.get('name', '')}" if ns else meta.get("name", "")


class ErrorKind(str, Enum):
    """What kind of error Allocate() returned: the finding is chosen from this, never from the message text."""

    CEL_RUNTIME = "cel-runtime"
    CEL_COMPILE = "cel-compile"
    INEXACT = "inexact"  # an expression Kubernetes accepts that the local CEL engine cannot run
    INVALID_POOL = "invalid-pool"
    ALL_POOL = "all-pool"  # allocationMode All over an incomplete or invalid pool
    CONSTRAINT = "constraint"
    STATE = "allocated-state"  # 1.38: an allocated claim with a negative consumed capacity fails PreFilter
    ATTRIBUTE = "attribute"  # 1.38: a constraint met an attribute value the conversion could not keep
    REQUEST = "request"
    CLASS = "class"
    FEATURE_DISABLED = "feature-disabled"  # a request uses a feature whose gate is off
    TIMEOUT = "timeout"  # the engine's step budget
    UPSTREAM_CRASH = "upstream-crash"  # upstream would panic
    ERROR = "error"


class AllocationError(Exception):
    """An error Allocate() returns: in kube-scheduler it aborts the scheduling attempt."""

    def __init__(self, message: str, kind: ErrorKind | str = ErrorKind.ERROR, **evidence: Any):
        super().__init__(message)
        self.message = message
        self.kind = ErrorKind(kind)
        self.evidence = evidence


class NodeFailure(AllocationError):
    """1.38: an error that fails only the node being tried (internal.ErrFailedAllocationOnNode): the plugin's Filter
    turns it into Unschedulable for that node with the error's text, and other nodes are still tried."""
