"""allocateDevice of each rule set (upstream: allocator_<channel>.go allocateDevice; 1.34/1.35 and 1.36+ differ
in their rollback), counters and capacity bookkeeping. A part of the search run (_Run), as a mixin."""

from __future__ import annotations

from typing import Callable

from kubectl_dra.analyze.allocator.checks import UnsupportedAttribute, untolerated_taint
from kubectl_dra.analyze.allocator.common import AllocationError, DeviceID, ErrorKind, device_id_str, obj_ref
from kubectl_dra.analyze.allocator.counters import add_consumption, available_counters, counter_scope, first_exceeded
from kubectl_dra.analyze.allocator.pools import (
    Pool,
    optional_node_operations_rejection,
    skips_node_operations,
    slice_spec,
)
from kubectl_dra.analyze.allocator.requests import Request
from kubectl_dra.analyze.allocator.why import CAPACITY, COMPATIBILITY, CONSTRAINT, COUNTERS, DISTINCT, NO_CANDIDATE


class DeviceAllocation:
    """allocateDevice and its bookkeeping; mixed into search._Run, which owns the state."""

    def allocate_device(self, r: Request, did, d, s, pool: Pool, must: bool, di: int):
        """di: the position of this device within its request (0 for the first device)."""
        if self.sem.behaviour.legacy_allocate_device:
            return self._allocate_device_legacy(r, did, d, s, pool, must, di)
        sem = self.sem
        ci = r.claim_index
        admitted = self._admit(r, did, d, s, pool)
        if admitted is None:
            return False, None
        multi, _, counters_reserved, restore_groups = admitted
        undo_steps: list[Callable[[], None]] = []
        if restore_groups is not None:
            undo_steps.append(restore_groups)
        if counters_reserved:
            undo_steps.append(lambda: self._release_counters(d, s, pool))

        def rollback():
            for fn in reversed(undo_steps):
                fn()

        if sem.device_taints and untolerated_taint(d, r.tolerations, sem) is not None:
            rollback()
            self.reject = NO_CANDIDATE
            return False, None
        derive = self.derived.provider(r) if r.spec.get("derivedAttributes") else None
        for i, c in enumerate(self.constraints[ci]):
            c.derive = derive  # set for every add: a request without derived attributes sets None
            try:
                added = c.add(r.base_name, r.sub_name, d, did)
            except AllocationError:  # a derived attribute's CEL error: rolled back, then the allocation aborts
                rollback()
                raise
            except UnsupportedAttribute as e:  # 1.38: rolled back, then the allocation aborts
                rollback()
                named = sem.behaviour.attribute_error_names_claim
                raise AllocationError(
                    f"claim {obj_ref(self.claims[ci])}, request {r.sub_name or r.base_name}: {e}" if named else str(e),
                    kind=ErrorKind.ATTRIBUTE,
                    device=device_id_str(did),
                    attribute=c.attribute,
                ) from None
            if not added:
                rollback()
                if must:
                    raise self._constraint_error(r, did)
                self.reject, self.reject_constraint = CONSTRAINT, i
                return False, None
            undo_steps.append(lambda c=c: c.remove(r.base_name, r.sub_name, d, did))
        if not multi:
            self.allocating.setdefault(did, set()).add(ci)
            undo_steps.append(lambda: self.allocating[did].discard(ci))
        consumed = None
        if sem.consumable_capacity:
            ok, _ = self._capacity_ok(r, d, did)
            if not ok:
                rollback()
                self.reject = CAPACITY
                return False, None
            if multi:
                consumed = self._consumed(r, d, did)
                existed = did in self.allocating_capacity
                self._capacity_insert(did, consumed)

                def _undo_cap(consumed=consumed, existed=existed):
                    self._capacity_remove(did, consumed)
                    if existed and did not in self.allocating_capacity:
                        self.allocating_capacity[did] = {}

                undo_steps.append(_undo_cap)
        res = {"request": r.name, "driver": did[0], "pool": did[1], "device": did[2], "_device": d, "_slice": s}
        if r.admin_access:
            res["adminAccess"] = True
        if consumed:
            res["consumedCapacity"] = consumed
        if multi:
            res["_shared"] = True
        self.results[ci].append(res)
        undo_steps.append(lambda: self.results[ci].pop())
        return True, rollback

    def _admit(self, r: Request, did, d, s, pool: Pool):
        """The checks every allocateDevice starts with: in use, counters gate, counters (reserved here).
        Returns None to reject, else (multi-allocatable, consumesCounters, counters reserved, the function that
        restores the compatibility groups' state or None)."""
        sem = self.sem
        ci = r.claim_index
        multi = sem.consumable_capacity and bool(d.get("allowMultipleAllocations"))
        # self.reject: the class of a rejection (why.py), for the search's record of why it fails
        if not multi and r.admin_access and ci in self.allocating.get(did, ()):
            self.reject = DISTINCT
            return None
        if not r.admin_access and self._in_use(did):
            self.reject = NO_CANDIDATE if did in self.a.allocated.devices else DISTINCT
            return None
        if (
            sem.behaviour.active_share_blocks_exclusive
            and not r.admin_access
            and not multi
            and (did in self.a.allocated.aggregated_capacity or did in self.allocating_capacity)
        ):
            # 1.38: a share still on the device (allowMultipleAllocations turned off since)
            self.reject = NO_CANDIDATE if did in self.a.allocated.aggregated_capacity else DISTINCT
            return None
        self.reject = NO_CANDIDATE
        if (
            sem.optional_node_operations_code
            and skips_node_operations(s)
            and optional_node_operations_rejection(sem, self.node) is not None
        ):
            return None
        consumes = d.get("consumesCounters") or []
        if not sem.partitionable and consumes:
            return None
        skip_counters = multi and (did in self.a.allocated.aggregated_capacity or did in self.allocating_capacity)
        if consumes and not (sem.behaviour.shared_device_skips_counters and skip_counters):
            restore = None
            if self.groups is not None:  # DRADeviceCompatibilityGroups (compat.py), before the counters
                restore = self.groups.check_and_consume(d, pool)
                if restore is None:
                    self.reject = COMPATIBILITY
                    return None
            if not self._reserve_counters(d, s, pool):
                if restore is not None:
                    restore()
                self.reject = COUNTERS
                return None
            return multi, consumes, True, restore
        return multi, consumes, False, None

    def _constraint_error(self, r: Request, did) -> AllocationError:
        return AllocationError(
            f"claim {obj_ref(self.claims[r.claim_index])}, request {r.sub_name or r.base_name}: cannot add device "
            f"{device_id_str(did)} because a claim constraint would not be satisfied",
            kind=ErrorKind.CONSTRAINT,
        )

    def _allocate_device_legacy(self, r: Request, did, d, s, pool: Pool, must: bool, di: int):
        """allocateDevice before 1.36, including its bookkeeping leaks (kept on purpose, they decide
        outcomes): counters reserved for a device stay reserved when its taint or constraint check fails;
        a failed capacity check leaves the constraints and the in-flight mark behind; undoing a shared
        (multi-allocatable) device never releases its counters."""
        sem = self.sem
        ci = r.claim_index
        admitted = self._admit(r, did, d, s, pool)
        if admitted is None:
            return False, None
        multi, consumes, _, _ = admitted
        if sem.device_taints and untolerated_taint(d, r.tolerations, sem) is not None:
            self.reject = NO_CANDIDATE
            return False, None
        cons = self.constraints[ci]
        for i, c in enumerate(cons):
            if not c.add(r.base_name, r.sub_name, d, did):
                if must:
                    raise self._constraint_error(r, did)
                for e in range(i):
                    cons[e].remove(r.base_name, r.sub_name, d, did)
                self.reject, self.reject_constraint = CONSTRAINT, i
                return False, None
        mark = not (multi and sem.code_consumable_capacity)
        if mark:
            self.allocating.setdefault(did, set()).add(ci)
        consumed = None
        if sem.consumable_capacity:
            ok, _ = (
                self._capacity_ok(r, *self._capacity_device_1_34(s, did, di))
                if sem.behaviour.capacity_of_indexed_device
                else self._capacity_ok(r, d, did)
            )
            if not ok:
                self.reject = CAPACITY
                return False, None
            if multi:
                consumed = self._consumed(r, d, did)
                self._capacity_insert(did, consumed)
        res = {"request": r.name, "driver": did[0], "pool": did[1], "device": did[2], "_device": d, "_slice": s}
        if r.admin_access:
            res["adminAccess"] = True
        if consumed:
            res["consumedCapacity"] = consumed
        if multi:
            res["_shared"] = True
        results = self.results[ci]
        n = len(results)
        results.append(res)

        def undo():
            for c in cons:
                c.remove(r.base_name, r.sub_name, d, did)
            self.allocating.get(did, set()).discard(ci)
            if multi:
                self._capacity_remove(did, consumed or {})
            elif sem.partitionable and consumes:
                self._release_counters(d, s, pool)
            del results[n:]

        return True, undo

    def _capacity_device_1_34(self, s: dict, did, di: int) -> tuple[dict, DeviceID]:
        """1.34's allocateDevice (DRAConsumableCapacity on) checks the capacity of the wrong device:
        slice.Spec.Devices[i] with i = the position of the device within its request, not the candidate
        itself (fixed in 1.35). Where i is past the end of the slice kube-scheduler 1.34 panics."""
        devices = slice_spec(s).get("devices") or []
        if di >= len(devices):
            raise AllocationError(
                f"kube-scheduler 1.34 would crash here: runtime error: index out of range [{di}] with length "
                f"{len(devices)} (upstream bug in its DRAConsumableCapacity capacity check while allocating device "
                f"{device_id_str(did)}, fixed in 1.35)",
                kind=ErrorKind.UPSTREAM_CRASH,
                device=device_id_str(did),
            )
        wrong = devices[di]
        return wrong, (did[0], did[1], wrong.get("name", ""))

    # -- in-flight consumable capacity (ConsumedCapacityCollection Insert/Remove) ------------------
    def _capacity_insert(self, did, consumed: dict) -> None:
        agg = self.allocating_capacity.get(did)
        if agg is None:
            self.allocating_capacity[did] = dict(consumed)
            return
        for k, v in consumed.items():
            agg[k] = agg.get(k, 0) + v

    def _capacity_remove(self, did, consumed: dict) -> None:
        agg = self.allocating_capacity.get(did)
        if agg is None:
            return
        for k, v in consumed.items():
            if k in agg:
                agg[k] -= v
        if all(v == 0 for v in agg.values()):
            del self.allocating_capacity[did]

    # -- counters (counters.py) -------------------------------------------------------------------
    def _reserve_counters(self, d: dict, s: dict, pool: Pool) -> bool:
        key, sets, scope_slices = counter_scope(pool, s, self.sem)
        avail = self.available_counters.get(key)
        if avail is None:
            avail = self.available_counters[key] = available_counters(
                key, sets, scope_slices, self.a.allocated, self.sem.behaviour.shared_allocations_consume_counters
            ).available
        consumed = self.consumed_counters.setdefault(key, {})
        add_consumption(consumed, d, +1)
        if first_exceeded(avail, consumed) is not None:
            add_consumption(consumed, d, -1)
            return False
        return True

    def _release_counters(self, d: dict, s: dict, pool: Pool) -> None:
        key, _, _ = counter_scope(pool, s, self.sem)
        add_consumption(self.consumed_counters.setdefault(key, {}), d, -1)
