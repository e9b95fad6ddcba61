"""Shared counters (upstream: allocator_<channel>.go checkAvailableCounters and its cache of available counters):
what the already-allocated devices leave of each counter set, and whether one more device fits. The search and
the per-device explanation both call these, so a counter verdict exists once."""

from __future__ import annotations

from dataclasses import dataclass, field

from kubectl_dra.analyze.allocator.common import _n, _qty
from kubectl_dra.analyze.allocator.pools import Pool, _counter_sets_of, _slice_name, slice_spec
from kubectl_dra.analyze.allocator.state import AllocatedState
from kubectl_dra.features import Semantics


@dataclass
class CounterScope:
    """The counters of one scope (a pool from 1.35, a slice in 1.34) left after the allocated devices, and which
    allocated devices consumed them (set name -> [device ID])."""

    key: str
    available: dict  # set name -> {counter: number}
    consumers: dict = field(default_factory=dict)


def counter_scope(pool: Pool, s: dict, sem: Semantics) -> tuple[str, dict, list]:
    """(scope key, counter sets, slices whose allocated devices consume them) for a device of slice s in pool."""
    if not sem.behaviour.old_rules_1_34:
        return pool.id, pool.counter_sets, pool.slices + pool.not_targeting
    sets, _ = _counter_sets_of([s])
    return f"{pool.id}/{_slice_name(s)}", sets, [s]


def available_counters(
    key: str, sets: dict, scope_slices: list, allocated: AllocatedState, shared_consume: bool = True
) -> CounterScope:
    """The counter sets minus what the allocated devices of scope_slices consume (shared_consume: devices allocated
    only as shares count too, Behaviour.shared_allocations_consume_counters)."""
    avail = {name: {k: _n(v) for k, v in cs.items()} for name, cs in sets.items()}
    consumers: dict = {}
    for sl in scope_slices:
        spec = slice_spec(sl)
        for dev in spec.get("devices") or []:
            did = (spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""), dev.get("name", ""))
            if not dev.get("consumesCounters") or not (
                allocated.is_allocated(did) if shared_consume else did in allocated.devices
            ):
                continue
            for cc in dev.get("consumesCounters") or []:
                cs = avail.get(cc.get("counterSet", ""))
                if cs is None:
                    continue
                consumers.setdefault(cc.get("counterSet", ""), []).append(did)
                for name, c in (cc.get("counters") or {}).items():
                    if name in cs:
                        cs[name] -= _qty((c or {}).get("value", "0"))
    return CounterScope(key, avail, consumers)


def add_consumption(consumed: dict, d: dict, sign: int) -> None:
    """Adds (sign +1) or removes (-1) a device's consumesCounters to an in-flight consumption map."""
    for cc in d.get("consumesCounters") or []:
        cs = consumed.setdefault(cc.get("counterSet", ""), {})
        for name, c in (cc.get("counters") or {}).items():
            cs[name] = cs.get(name, 0) + sign * _qty((c or {}).get("value", "0"))


def first_exceeded(avail: dict, consumed: dict) -> tuple[str, str, object, object] | None:
    """The first counter (set, counter, consumed, available) whose consumption exceeds what is available, in
    checkAvailableCounters' order; None when everything fits."""
    for set_name, counters in avail.items():
        used = consumed.get(set_name, {})
        for cname, value in counters.items():
            if value < used.get(cname, 0):
                return set_name, cname, used.get(cname, 0), value
    return None
