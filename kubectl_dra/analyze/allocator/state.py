"""What is already allocated (upstream: AllocatedState, built by the scheduler from its claim cache)."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterable

from kubectl_dra.analyze.allocator.capacity import qualified
from kubectl_dra.analyze.allocator.common import DeviceID, _n, _qty, obj_ref
from kubectl_dra.features import Semantics
from kubectl_dra.quantity import format_quantity


@dataclass
class AllocatedState:
    devices: set = field(default_factory=set)  # exclusively allocated device IDs
    owners: dict = field(default_factory=dict)  # device ID -> [claim ref]
    aggregated_capacity: dict = field(default_factory=dict)  # device ID -> {capacity name: Fraction} (1.38: qualified)
    # 1.38: allocated claims with a negative consumed capacity, as the scheduler words them (consumedCapacityError);
    # while there is one, PreFilter fails every pod with claims (gather allocation state).
    invalid_capacity: list = field(default_factory=list)
    # claim refs whose allocation is the queue's estimate, not the cluster's (Snapshot.estimated): the same to the
    # allocator, worded "goes to" by the device rows
    estimated: frozenset = frozenset()
    # claim ref -> the pods (namespace/name) it is reserved for, where every one of them is being deleted: the same to
    # the allocator (their devices stay allocated until the kubelet unprepares them), worded "held by a terminating
    # pod" by the device rows
    terminating: dict = field(default_factory=dict)

    @classmethod
    def from_claims(
        cls, claims: Iterable[dict], sem: Semantics, estimated: frozenset = frozenset(), terminating: dict | None = None
    ) -> "AllocatedState":
        st = cls(estimated=estimated, terminating=terminating or {})
        check_negative = sem.behaviour.qualified_capacity_names and sem.consumable_capacity
        for c in claims:
            alloc = (c.get("status") or {}).get("allocation")
            if not alloc:
                continue
            if check_negative:
                st._check_consumed(c, alloc)
            st.add(obj_ref(c), ((alloc.get("devices") or {}).get("results")) or [], sem)
        return st

    def add(self, claim_ref: str, results: list, sem: Semantics) -> None:
        """One claim's allocation results (status.allocation.devices.results) become allocated: from_claims for
        each claim, and the queue's in-flight allocations (the scheduler's assume cache) one pod after another."""
        for r in results:
            if r.get("adminAccess"):
                continue
            did = (r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
            self.owners.setdefault(did, []).append(claim_ref)
            if sem.consumable_capacity and r.get("shareID"):
                agg = self.aggregated_capacity.setdefault(did, {})
                consumed = r.get("consumedCapacity") or {}
                if sem.behaviour.qualified_capacity_names:
                    # NewDeviceConsumedCapacity (1.38): keyed fully qualified, `<driver>/x` overwriting `x`
                    norm: dict = {}
                    for k in sorted(consumed, key=lambda k: "/" in k):
                        norm[qualified(k, did[0])] = consumed[k]
                    consumed = norm
                for k, v in consumed.items():
                    # API objects hold quantity strings; the allocator's own results (the queue's in-flight
                    # allocations) exact numbers, a Fraction for a fractional quantity
                    agg[k] = agg.get(k, 0) + (_n(v) if isinstance(v, Fraction) else _qty(v))
            else:
                self.devices.add(did)

    def copy(self) -> "AllocatedState":
        """A copy that add() may change without changing this one."""
        return AllocatedState(
            set(self.devices),
            {k: list(v) for k, v in self.owners.items()},
            {k: dict(v) for k, v in self.aggregated_capacity.items()},
            list(self.invalid_capacity),
            self.estimated,
            self.terminating,
        )

    def _check_consumed(self, claim: dict, alloc: dict) -> None:
        """allocateddevices.go consumedCapacityError (1.38): the first negative consumed capacity of the claim."""
        for r in ((alloc.get("devices") or {}).get("results")) or []:
            consumed = r.get("consumedCapacity") or {}
            for name in sorted(consumed):
                try:
                    negative = _qty(consumed[name]) < 0
                except Exception:  # an unparsable quantity is coverage's business (DRA016), not this check's
                    continue
                if negative:
                    did = "/".join((r.get("driver", ""), r.get("pool", ""), r.get("device", "")))
                    self.invalid_capacity.append(
                        f'claim {obj_ref(claim)}, device {did}: consumed capacity "{name}" must not be negative, '
                        f"got {format_quantity(_qty(consumed[name]))}"
                    )
                    return

    def capacity_error(self) -> str | None:
        """getCapacities (1.38): the error GatherAllocatedState returns while some claim is invalid."""
        if not self.invalid_capacity:
            return None
        errs = sorted(self.invalid_capacity)
        more = f" (and {len(errs) - 1} more claims with invalid consumed capacity)" if len(errs) > 1 else ""
        return f"gather allocation state: {errs[0]}{more}"

    def is_allocated(self, did: DeviceID) -> bool:
        return did in self.devices or did in self.aggregated_capacity
