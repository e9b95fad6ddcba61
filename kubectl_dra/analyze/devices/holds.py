"""What holds a matching device, worded for the device matrix (checks.py device_checks): its consumable capacity left
(CmpRequestOverCapacity) and who holds it when it is in use."""

from __future__ import annotations

from kubectl_dra.analyze.allocator import (
    CapacityNotRepresentable,
    Request,
    capacity_fits,
    device_id_str,
    slice_spec,
)
from kubectl_dra.analyze.allocator.capacity import capacity_demand
from kubectl_dra.analyze.devices.universe import DeviceEntry


def capacity_shortfall(req: Request, e: DeviceEntry, ctx, indexed: bool = False) -> str | None:
    """CmpRequestOverCapacity for the request's first device. indexed: 1.34's second check in allocateDevice
    (Behaviour.capacity_of_indexed_device), which reads the device at the request's device index of the candidate's
    slice (for the first device: the slice's first device) instead of the candidate."""
    sem = ctx.sem
    dev, did, note = e.device, e.did, ""
    if indexed:
        dev = (slice_spec(e.slice).get("devices") or [{}])[0]
        did = (e.did[0], e.did[1], dev.get("name", ""))
        if did != e.did:
            note = f" (1.34 checks {device_id_str(did)}, the first device of the slice)"
    fractional = "FractionalCapacityRange" in sem.allocator_features
    aborts = sem.behaviour.capacity_errors_abort
    driver = did[0] if sem.behaviour.qualified_capacity_names else None
    # What one allocation of the request takes of each capacity depends on the request and the device's capacity
    # map only: computed once per distinct map (devices of one model share it), then held against what is in use.
    memo = ctx.ev.matrix.capacity_demand
    key = (id(req.capacity_requests), driver, repr(dev.get("capacity")))
    demand = memo.get(key)
    if demand is None:
        ctx.ev.matrix.keep[id(req.capacity_requests)] = req.capacity_requests
        try:
            demand = capacity_demand(req.capacity_requests, dev, fractional, aborts, driver)
        except CapacityNotRepresentable as exc:
            demand = exc
        memo[key] = demand
    if isinstance(demand, CapacityNotRepresentable):
        return str(demand) + note
    try:
        fits, why = capacity_fits(
            req.capacity_requests,
            dev,
            ctx.allocated.aggregated_capacity.get(did),
            None,
            demand=demand,
            fractional=fractional,
            aborts=aborts,
            driver=driver,
        )
    except CapacityNotRepresentable as exc:
        fits, why = False, str(exc)
    return None if fits else why + note


def in_use_reason(owners: list, estimated: frozenset, terminating: dict | None = None) -> tuple[str, dict]:
    """The reason and evidence of a device held by owners: allocated to them (held by a terminating pod where every
    pod a claim is reserved for is being deleted, AllocatedState.terminating), or, where the queue's estimate
    placed a pod ahead (AllocatedState.estimated), going to them; nothing says the estimate is allocated."""
    ahead = [o for o in owners if o in estimated]
    going = [p for o in owners for p in (terminating or {}).get(o, ())]
    if going and all(o in (terminating or {}) for o in owners):
        return (
            f"allocated to claim {', '.join(owners)}, held by terminating pod {', '.join(going)}",
            {"claims": owners, "terminating": going},
        )
    if not ahead:
        return f"allocated to claim {', '.join(owners) or '?'}", {"claims": owners}
    held = [o for o in owners if o not in estimated]
    why = f"goes to claim {', '.join(ahead)} of a pod ahead in the queue, in the estimated order"
    return (f"allocated to claim {', '.join(held)}; " if held else "") + why, {"claims": owners, "ahead": ahead}
