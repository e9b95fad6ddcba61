"""The search (upstream: allocator_<channel>.go Allocate, validateDeviceRequest, allocateOne): Allocator and
one run of it for a node."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kubectl_dra.analyze.allocator.capacity import (
    CapacityNotRepresentable,
    capacity_fits,
)
from kubectl_dra.analyze.allocator.common import (
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocationError,
    DeviceID,
    ErrorKind,
    NodeFailure,
    device_id_str,
    obj_ref,
)
from kubectl_dra.analyze.allocator.compat import CompatibilityGroups
from kubectl_dra.analyze.allocator.constraints import (
    DistinctAttribute138,
    DistinctAttributeSet138,
    MatchAttribute138,
    MatchAttributeSet138,
    _Constraint,
    _DistinctAttribute,
    _DistinctAttributeAll,
    _DistinctAttributePointers,
    _DistinctAttributeSet,
    _MatchAttribute,
    _MatchAttributeSet,
)
from kubectl_dra.analyze.allocator.derived import DerivedValues, check_derived_allowed
from kubectl_dra.analyze.allocator.device import DeviceAllocation
from kubectl_dra.analyze.allocator.device_checks import DeviceChecks
from kubectl_dra.analyze.allocator.pools import Pool, SliceIndex, gather_pools, slice_spec
from kubectl_dra.analyze.allocator.requests import Request, claim_requests, request_alternatives
from kubectl_dra.analyze.allocator.result import AllocationResult, ResultBuilding
from kubectl_dra.analyze.allocator.selection import SelectorEvaluator, selector_expression
from kubectl_dra.analyze.allocator.state import AllocatedState
from kubectl_dra.analyze.allocator.why import CAPACITY, CONSTRAINT, DISTINCT, MAX_EXAMPLES, NO_CANDIDATE, SearchFailure
from kubectl_dra.features import Semantics


class Allocator:
    """structured.NewAllocator(...) for a set of slices, classes and allocated claims."""

    def __init__(
        self,
        sem: Semantics,
        classes: dict[str, dict],
        slices: list[dict],
        allocated: AllocatedState,
        evaluator: SelectorEvaluator | None = None,
        index: SliceIndex | None = None,
    ):
        self.sem = sem
        self.classes = classes
        self.slices = slices
        self.index = index  # of these slices by node: GatherPools visits only those that may target the node
        self.allocated = allocated
        self.evaluator = evaluator or SelectorEvaluator(sem)
        self.steps = 0
        self.max_steps = 2_000_000
        # Why the last allocate() that returned None failed, as its search saw it (why.py); None otherwise.
        self.last_failure: SearchFailure | None = None

    # -- entry point ------------------------------------------------------------------------------
    def allocate(self, node: dict, claims: list[dict]) -> list[AllocationResult] | None:
        """Returns one AllocationResult per claim, None when the claims do not fit on the node, or raises
        AllocationError with upstream's error text."""
        self.last_failure = None
        run = _Run(self, node, claims)
        return run.run()


class _Run(DeviceAllocation, DeviceChecks, ResultBuilding):
    """One Allocate() call for one node: the state of the search."""

    def __init__(self, a: Allocator, node: dict, claims: list[dict]):
        self.a = a
        self.sem = a.sem
        self.fractional = "FractionalCapacityRange" in a.sem.allocator_features
        self.capacity_aborts = a.sem.behaviour.capacity_errors_abort
        self.node = node
        self.claims = claims
        self.pools: list[Pool] = []
        self.requests: dict[tuple[int, int, int], Request] = {}
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.constraints: list[list[_Constraint]] = []
        self.match_cache: dict[tuple, bool] = {}
        self.demand_cache: dict[tuple, Any] = {}  # (claim, request, subrequest, device) -> capacity_demand
        self.consumed_cache: dict[tuple, dict] = {}  # same key -> consumed_capacity
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self.consumed_counters: dict[str, dict[str, dict[str, Fraction]]] = {}
        self.available_counters: dict[str, dict[str, dict[str, Fraction]]] = {}
        self.results: list[list[dict]] = [[] for _ in claims]
        self.failed_from: set[tuple] = set()  # _boundary_state keys whose search failed
        # The deepest position (claim, request, slot) the search reached and why devices were rejected there.
        self.deepest: tuple = (-1, -1, -1)
        self.why: SearchFailure | None = None
        self.reject = NO_CANDIDATE  # set by allocateDevice when it rejects a device: the class (why.py)
        self.reject_constraint: int | None = None
        # 1.37+ alpha features of the channel (compat.py, derived.py)
        self.groups = CompatibilityGroups(a.allocated) if a.sem.compatibility_groups else None
        self.derived = DerivedValues(a.evaluator)

    # -- setup -------------------------------------------------------------------------------------
    # long: mirrors upstream's Allocate step for step (read side by side with allocator_*.go)
    def run(self):
        sem = self.sem
        try:
            self.pools = gather_pools(self.a.slices, self.node, sem, self.a.index)
        except AllocationError as e:
            raise AllocationError(f"gather pool information: {e.message}") from None
        for ci, claim in enumerate(self.claims):
            ref = obj_ref(claim)
            min_per_claim = 0
            for ri, req in enumerate(claim_requests(claim)):
                subs = req.get("firstAvailable") or []
                exactly = req.get("exactly")
                if subs and not sem.prioritized_list:
                    raise AllocationError(
                        f"claim {ref}, request {req.get('name', '')}: has subrequests, but the DRAPrioritizedList feature is disabled",
                        kind=ErrorKind.FEATURE_DISABLED,
                    )
                if sem.code_consumable_capacity and not sem.consumable_capacity:
                    if sem.behaviour.capacity_gate_names_request and any(
                        sub.get("capacity") is not None for sub in subs
                    ):
                        raise AllocationError(
                            f"claim {ref}, request {req.get('name', '')}: has capacity requests, but the DRAConsumableCapacity feature is disabled",
                            kind=ErrorKind.FEATURE_DISABLED,
                        )
                    if exactly is not None and exactly.get("capacity") is not None:
                        raise AllocationError(
                            f"claim {ref}, request {req.get('name', '')}: has capacity requests, but the DRAConsumableCapacity feature is disabled",
                            kind=ErrorKind.FEATURE_DISABLED,
                        )
                    for sub in subs:
                        if sub.get("capacity") is not None:
                            raise AllocationError(
                                f"claim {ref}, subrequest {sub.get('name', '')}: has capacity requests, but the DRAConsumableCapacity feature is disabled",
                                kind=ErrorKind.FEATURE_DISABLED,
                            )
                if subs:
                    min_req = None
                    for si, r in enumerate(request_alternatives(req, ci, ri)):
                        self._validate(r, ref)
                        self.requests[(ci, ri, si)] = r
                        min_req = r.num_devices if min_req is None else min(min_req, r.num_devices)
                    min_req = min_req or 0
                else:
                    r = request_alternatives(req, ci, ri)[0]
                    if exactly is None:
                        raise AllocationError(
                            f"claim {ref}, request {req.get('name', '')}: missing device class name (unsupported request type?)",
                            kind=ErrorKind.REQUEST,
                        )
                    self._validate(r, ref)
                    self.requests[(ci, ri, -1)] = r
                    min_req = r.num_devices
                if min_req > ALLOCATION_RESULTS_MAX_SIZE - min_per_claim:
                    raise AllocationError(
                        f"claim {ref}, request {req.get('name', '')}: adding {min_req} devices exceeds the claim limit "
                        f"of {ALLOCATION_RESULTS_MAX_SIZE}, with {min_per_claim} already accounted for",
                        kind=ErrorKind.REQUEST,
                    )
                min_per_claim += min_req
            cons = []
            # Set semantics for list-typed attributes: only where the allocator gets ListTypeAttributes
            # (1.37 "experimental"; 1.36's plugin never passes it).
            as_sets = "ListTypeAttributes" in self.sem.allocator_features
            converted = self.sem.behaviour.attributes_converted_once
            for i, c in enumerate(((claim.get("spec") or {}).get("devices") or {}).get("constraints") or []):
                if c.get("matchAttribute"):
                    if converted:
                        cls = MatchAttributeSet138 if as_sets else MatchAttribute138
                    else:
                        cls = _MatchAttributeSet if as_sets else _MatchAttribute
                    cons.append(cls(set(c.get("requests") or []), c["matchAttribute"]))
                elif c.get("distinctAttribute") and self.sem.code_consumable_capacity:
                    if converted:
                        cls = DistinctAttributeSet138 if as_sets else DistinctAttribute138
                    elif as_sets:
                        cls = _DistinctAttributeSet
                    else:
                        cls = {
                            "pointer": _DistinctAttributePointers,
                            "per-request": _DistinctAttribute,
                            "all": _DistinctAttributeAll,
                        }[self.sem.behaviour.distinct_attribute]
                    cons.append(cls(set(c.get("requests") or []), c["distinctAttribute"]))
                else:
                    raise AllocationError(
                        f"claim {ref}, constraint #{i}: empty constraint (unsupported constraint type?)",
                        kind=ErrorKind.REQUEST,
                    )
            self.constraints.append(cons)
        # Upstream starts the search with a fresh selector cache (deviceMatchesRequest = make(...)): what
        # validation cached, possibly under another subrequest's key (see above), is dropped.
        self.match_cache = {}
        try:
            done = self.allocate_one(0, 0, -1, 0, False, (0, 0, 0))
        except _MaxSizeExceeded:
            raise AllocationError("allocation max size exceeded") from None
        if not done:
            self._finish_why()
            if self.sem.behaviour.skips_unusable_pools and any(p.invalid for p in self.pools):
                fail = NodeFailure if self.sem.behaviour.invalid_pools_fail_node else AllocationError
                raise fail("invalid resource pools were encountered", kind=ErrorKind.INVALID_POOL)
            return None
        return [self._result(ci) for ci in range(len(self.claims))]

    # long: mirrors upstream's per-claim validation loop in Allocate, in its order
    def _validate(self, r: Request, ref: str) -> None:
        check_derived_allowed(self.sem, r, ref)
        for i, sel in enumerate(r.selectors):
            if not selector_expression(sel):
                raise AllocationError(
                    f"claim {ref}, request {r.base_name}, selector #{i}: CEL expression empty (unsupported selector type?)",
                    kind=ErrorKind.REQUEST,
                )
        if not self.sem.admin_access and r.sub_index < 0 and r.spec.get("adminAccess") is not None:
            raise AllocationError(
                f"claim {ref}, request {r.base_name}: admin access is requested, but the feature is disabled",
                kind=ErrorKind.FEATURE_DISABLED,
            )
        if not r.class_name:
            raise AllocationError(
                f"claim {ref}, request {r.name}: missing device class name (unsupported request type?)",
                kind=ErrorKind.REQUEST,
            )
        cls = self.a.classes.get(r.class_name)
        if cls is None:
            raise AllocationError(
                f"claim {ref}, request {r.name}: could not retrieve device class {r.class_name}: "
                f'deviceclass.resource.k8s.io "{r.class_name}" not found',
                kind=ErrorKind.CLASS,
            )
        r.class_obj = cls
        if r.mode == "ExactCount":
            r.num_devices = r.count
        elif r.mode == "All":
            r.all_devices = []
            for pool in self.pools:
                # 1.38 fails only this node (kubernetes/kubernetes#141898); before, the attempt aborts.
                fail = NodeFailure if self.sem.behaviour.all_mode_unusable_pool_fails_node else AllocationError
                if pool.incomplete:
                    raise fail(
                        f"claim {ref}, request {r.sub_name or r.base_name}: asks for all devices, but resource pool {pool.id} is currently being updated",
                        kind=ErrorKind.ALL_POOL,
                    )
                if pool.invalid:
                    raise fail(
                        f"claim {ref}, request {r.sub_name or r.base_name}: asks for all devices, but resource pool {pool.id} is currently invalid",
                        kind=ErrorKind.ALL_POOL,
                    )
                # Before 1.36 the selector cache key of subrequest i is still that of subrequest i-1 while it
                # is validated (requestKey.subRequestIndex is set after validateDeviceRequest): results are
                # shared with, and stored for, the previous subrequest.
                key_sub = r.sub_index - 1 if self.sem.behaviour.subrequest_key_lags and r.sub_index > 0 else r.sub_index
                for s in pool.slices:
                    for d in slice_spec(s).get("devices") or []:
                        did = (pool.driver, pool.name, d.get("name", ""))
                        if not self.is_selectable(r, s, d, did, key_sub):
                            continue
                        if self.sem.consumable_capacity:
                            if self.sem.behaviour.all_mode_static_capacity:
                                # 1.37 checks the static capacity only: shares in use are not subtracted
                                # here, so they make the allocation fail later.
                                try:
                                    ok, _ = capacity_fits(
                                        r.capacity_requests,
                                        d,
                                        None,
                                        None,
                                        fractional=self.fractional,
                                        aborts=self.capacity_aborts,
                                        driver=self._cap_driver(did),
                                    )
                                except CapacityNotRepresentable as e:
                                    raise AllocationError(
                                        f"claim {ref}, request {r.sub_name or r.base_name}: checking capacity for "
                                        f"device {d.get('name', '')}: {e}",
                                        kind=ErrorKind.REQUEST,
                                    ) from None
                            else:
                                ok, _ = self._capacity_ok(r, d, did)
                            if not ok:
                                continue
                        r.all_devices.append((did, d, s, pool))
            r.num_devices = len(r.all_devices)
        else:
            raise AllocationError(
                f"claim {ref}, request {r.name}: unsupported count mode {r.mode}", kind=ErrorKind.REQUEST
            )

    # -- search ------------------------------------------------------------------------------------
    # long: mirrors upstream's allocateOne, whose backtracking order is the behaviour being ported
    def allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: tuple) -> bool:
        self.a.steps += 1
        if self.a.steps > self.a.max_steps:
            raise AllocationError(
                "filter operation aborted: search exceeded kubectl-dra's step budget", kind=ErrorKind.TIMEOUT
            )
        if ci >= len(self.claims):
            return True
        reqs = claim_requests(self.claims[ci])
        if ri >= len(reqs):
            if ci + 1 >= len(self.claims):
                return True
            # Upstream searches the later claims again for every allocation of the earlier ones. A later
            # search that failed (no error) from the very same state fails again, so it is not repeated:
            # same outcome and devices as upstream, far fewer steps when a late claim cannot be satisfied.
            key = self._boundary_state(ci + 1)
            if key in self.failed_from:
                return False
            try:
                done = self.allocate_one(ci + 1, 0, -1, 0, False, (0, 0, 0))
            except _MaxSizeExceeded:
                done = False
            if not done:
                self.failed_from.add(key)
            return done
        if not in_sub and (reqs[ri].get("firstAvailable") or []):
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.requests:
                try:
                    ok = self.allocate_one(ci, ri, sub, 0, True, (0, 0, 0))
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.selected_sub[(ci, ri)] = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded()
            return False
        r = self.requests[(ci, ri, si)]
        if r.mode == "All" and not r.all_devices:
            if (ci, ri, 0) >= self.deepest:
                self._reach((ci, ri, 0), si, False)  # upstream: "... no devices found", nothing to look at
            return False
        if di >= r.num_devices:
            return self.allocate_one(ci, ri + 1, -1, 0, False, (0, 0, 0))
        if r.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE - len(self.results[ci]):
            raise _MaxSizeExceeded()
        # Where upstream logs "Allocating one device": the position counts as reached (why.py).
        pos = (ci, ri, di)
        why = None if pos < self.deepest else self._reach(pos, si, di > 0 and r.mode != "All")
        if r.mode == "All":
            did, d, s, pool = r.all_devices[di]
            ok, undo = self.allocate_device(r, did, d, s, pool, True, di)
            if not ok:
                if why is not None:
                    self._rejected(self.reject, did)
                return False
            # Before 1.36 the next "all" device is looked up without the subrequest index, i.e. as a device
            # of the first subrequest (allocateOne's deviceIndices literal omits subRequestIndex).
            next_si = 0 if self.sem.behaviour.subrequest_key_lags and si > 0 else si
            try:
                done = self.allocate_one(ci, ri, next_si, di + 1, in_sub, (0, 0, 0))
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        resume = self.sem.behaviour.resume_search
        p0, s0, d0 = start if resume else (0, 0, 0)
        for pi in range(p0, len(self.pools)):
            pool = self.pools[pi]
            if pool.invalid:
                if not self.sem.behaviour.skips_unusable_pools:
                    raise AllocationError(
                        f"pool {pool.name} is invalid: {pool.invalid_reason}", kind=ErrorKind.INVALID_POOL
                    )
                continue
            if pool.incomplete and self.sem.behaviour.skips_unusable_pools:
                continue
            for sj in range(s0 if pi == p0 else 0, len(pool.slices)):
                s = pool.slices[sj]
                devices = slice_spec(s).get("devices") or []
                for dj in range(d0 if (pi == p0 and sj == s0) else 0, len(devices)):
                    d = devices[dj]
                    did = (pool.driver, pool.name, d.get("name", ""))
                    # `why` is not None while this is the deepest position reached: rejections are counted.
                    if r.admin_access and ci in self.allocating.get(did, ()):
                        if why is not None:
                            self._rejected(DISTINCT, did)
                        continue
                    if not r.admin_access and self._in_use(did):
                        if why is not None:
                            if did in self.a.allocated.devices:
                                why.counts[NO_CANDIDATE] += 1
                            elif len(why.taken) < MAX_EXAMPLES:
                                self._rejected(DISTINCT, did)
                            else:
                                why.counts[DISTINCT] += 1
                        continue
                    if not self.is_selectable(r, s, d, did):
                        if why is not None:
                            why.counts[NO_CANDIDATE] += 1
                        continue
                    if self.sem.consumable_capacity:
                        ok, _ = self._capacity_ok(r, d, did)
                        if not ok:
                            if why is not None:
                                why.counts[CAPACITY] += 1
                            continue
                    ok, undo = self.allocate_device(r, did, d, s, pool, False, di)
                    if not ok:
                        if why is not None:
                            self._rejected(self.reject, did)
                        continue
                    try:
                        done = self.allocate_one(ci, ri, si, di + 1, in_sub, (pi, sj, dj + 1))
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
                    if why is not None and self.why is not why:
                        why = None  # the search got deeper than this position
        return False

    # -- why the search fails (why.py) --------------------------------------------------------------
    def _reach(self, pos: tuple, si: int, later_slot: bool) -> SearchFailure:
        """The search is at pos (claim, request, slot), the deepest position so far or as deep: its record.
        later_slot: a later slot of an ExactCount request, which from 1.36 resumes after the previous pick."""
        why = self.why
        if pos > self.deepest:
            self.deepest = pos
            why = self.why = SearchFailure(pos[0], pos[1], pos[2])
        why.sub = si
        if later_slot and self.sem.behaviour.resume_search:
            why.skipped = True
        return why

    def _rejected(self, k: int, did: DeviceID) -> None:
        """A device visit at the deepest position was rejected, for class k."""
        why = self.why
        why.counts[k] += 1
        if k == DISTINCT and len(why.taken) < MAX_EXAMPLES:
            holder = next(
                (
                    f"{c}/{res['request']}"
                    for c, rs in enumerate(self.results)
                    for res in rs
                    if res["device"] == did[2] and res["driver"] == did[0] and res["pool"] == did[1]
                ),
                "",
            )
            why.taken.append((device_id_str(did), holder))
        elif k == CONSTRAINT and why.constraint is None:
            why.constraint = self.reject_constraint

    def _finish_why(self) -> None:
        why = self.why
        if why is None:
            return
        why.claim_ref = obj_ref(self.claims[why.claim])
        reqs = claim_requests(self.claims[why.claim])
        why.request_name = reqs[why.request].get("name", "") if why.request < len(reqs) else ""
        self.a.last_failure = why

    def _boundary_state(self, c: int) -> tuple:
        """Everything the search of claims c.. reads that earlier claims change, including what the
        pre-1.36 bookkeeping leaks (in-flight marks, counters, constraint state of later claims)."""
        return (
            c,
            # in use, and by which later claim (a pre-1.36 leak; admin access looks at its own claim)
            frozenset((did, frozenset(x for x in cs if x >= c)) for did, cs in self.allocating.items() if cs),
            frozenset((did, frozenset(v.items())) for did, v in self.allocating_capacity.items()),
            frozenset(
                (scope, name, frozenset((k, v) for k, v in cs.items() if v))
                for scope, sets in self.consumed_counters.items()
                for name, cs in sets.items()
            ),
            tuple(con.state() for cons in self.constraints[c:] for con in cons),
            tuple(len(self.results[i]) for i in range(c, len(self.claims))),
            self.groups.state() if self.groups is not None else (),
        )


class _MaxSizeExceeded(Exception):
    pass
