"""Counter compatibility groups (DRADeviceCompatibilityGroups, alpha in 1.37 and 1.38; upstream:
structured/internal/<channel>/compatibility_groups.go and allocator_<channel>.go checkAndConsumeCompatibilityGroups,
compatibilityGroupsBaselineForPool).

Devices drawing from one counter set may be allocated together only when the compatibilityGroups of their
consumptions of that set intersect; a consumption without groups goes only with others without groups. The state per
(pool, counter set) starts from the allocated devices of the pool's slices for the node (read from the slices, in
their order, without checking them against each other), and every device the search allocates is checked against it
and folded in. With the gate off GatherPools ignores a slice that uses groups (pools.py), so there is nothing to check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kubectl_dra.analyze.allocator.pools import Pool, slice_spec
from kubectl_dra.analyze.allocator.state import AllocatedState


@dataclass(frozen=True)
class Intersection:
    """compatibilityGroupIntersection: no members yet (any device admitted); every member without groups
    (all_empty: only devices without groups admitted); else the running intersection of the members' groups."""

    has_members: bool = False
    all_empty: bool = False
    groups: frozenset = frozenset()

    def admits(self, groups: frozenset) -> bool:
        if not self.has_members:
            return True
        if not groups:
            return self.all_empty
        if self.all_empty:
            return False
        return bool(self.groups & groups)

    def add(self, groups: frozenset) -> "Intersection":
        if not self.has_members:
            return Intersection(True, not groups, groups)
        if self.all_empty or not groups:
            return self
        return Intersection(True, False, self.groups & groups)


def groups_of(consumption: dict) -> frozenset:
    return frozenset(consumption.get("compatibilityGroups") or ())


def baseline(pool: Pool, allocated: AllocatedState) -> dict[str, Intersection]:
    """Per counter set of the pool, the intersection of the allocated devices' groups (compatibilityGroupsBaseline
    ForPool: the slices targeting the node, then those that do not)."""
    out: dict[str, Intersection] = {}
    for s in [*pool.slices, *pool.not_targeting]:
        spec = slice_spec(s)
        for d in spec.get("devices") or []:
            if not allocated.is_allocated(
                (spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""), d.get("name", ""))
            ):
                continue
            for c in d.get("consumesCounters") or []:
                name = c.get("counterSet", "")
                out[name] = out.get(name, Intersection()).add(groups_of(c))
    return out


def first_incompatible(device: dict, state: dict[str, Intersection]) -> tuple[str, Intersection] | None:
    """The first counter set whose members the device's groups do not go with (what the state admits), or None."""
    for c in device.get("consumesCounters") or []:
        name = c.get("counterSet", "")
        cur = state.get(name, Intersection())
        if not cur.admits(groups_of(c)):
            return name, cur
    return None


class CompatibilityGroups:
    """The search's rolling state (consumedCompatibilityGroups), per pool, seeded from the baseline per counter set."""

    def __init__(self, allocated: AllocatedState):
        self.allocated = allocated
        self.baselines: dict[str, dict[str, Intersection]] = {}
        self.running: dict[str, dict[str, Intersection]] = {}

    def check_and_consume(self, device: dict, pool: Pool) -> Callable[[], None] | None:
        """checkAndConsumeCompatibilityGroups: None when the device does not go with a counter set's members (the
        state unchanged), else the function that restores the state."""
        base = self.baselines.get(pool.id)
        if base is None:
            base = self.baselines[pool.id] = baseline(pool, self.allocated)
        running = self.running.setdefault(pool.id, {})
        saved: list[tuple[str, Intersection | None]] = []

        def restore():
            for name, prev in reversed(saved):
                if prev is None:
                    running.pop(name, None)
                else:
                    running[name] = prev

        for c in device.get("consumesCounters") or []:
            name = c.get("counterSet", "")
            existed = name in running
            cur = running[name] if existed else base.get(name, Intersection())
            groups = groups_of(c)
            if not cur.admits(groups):
                restore()
                return None
            saved.append((name, cur if existed else None))
            running[name] = cur.add(groups)
        return restore

    def state(self) -> tuple:
        """A hashable snapshot of the running state (search._Run._boundary_state)."""
        return tuple(sorted((p, tuple(sorted(sets.items()))) for p, sets in self.running.items() if sets))
