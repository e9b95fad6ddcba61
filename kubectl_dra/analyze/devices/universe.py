"""The device universe: every device of every slice, cluster-wide, as this version's allocator gathers pools
(DeviceEntry, Universe), which usable nodes reach each device (Reachability) and the counters left per counter scope
(CounterView). The per-request device matrix over it is devices.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from kubectl_dra.analyze.allocator import AllocatedState, device_id_str, slice_spec
from kubectl_dra.analyze.allocator.compat import baseline, first_incompatible
from kubectl_dra.analyze.allocator.counters import (
    CounterScope,
    add_consumption,
    available_counters,
    counter_scope,
    first_exceeded,
)
from kubectl_dra.analyze.allocator.pools import (
    Pool,
    ignored_devices_reason,
    pool_generations,
    slice_digest,
    slices_by_pool,
)
from kubectl_dra.analyze.devices.blocks import kept_blocks
from kubectl_dra.features import Semantics
from kubectl_dra.model.nodes import NodeSelectorError, node_matches
from kubectl_dra.quantity import format_quantity


@dataclass
class DeviceEntry:
    did: tuple
    device: dict
    slice: dict
    pool_key: tuple
    pool_state: str = ""  # shown: "", "incomplete: ...", "invalid: <reason>" (decisions read pool_invalid, pool_usable)
    node_name: str | None = None  # for node-local devices
    ignored: str = ""  # why the allocator of this version never looks at the device (pools.ignored_devices_reason)
    pool: Pool | None = None  # the pool (generation) it belongs to; an older one is used where no newer one reaches
    slice_where: str | None = None  # where() of every device of a slice without per-device node selection
    shape: tuple | None = field(default=None, compare=False, repr=False)  # what a CEL selector sees (checks.shape_key)

    @property
    def id(self) -> str:
        return device_id_str(self.did)

    @property
    def pool_invalid(self) -> bool:
        return self.pool is not None and self.pool.invalid

    @property
    def pool_usable(self) -> bool:
        """Neither invalid nor incomplete (a device the allocator ignores has no pool: see ignored)."""
        return self.pool is None or not (self.pool.invalid or self.pool.incomplete)

    def where(self) -> str:
        if self.slice_where is not None:
            return self.slice_where
        spec = slice_spec(self.slice)
        if spec.get("perDeviceNodeSelection"):
            if self.device.get("nodeName"):
                return f"node {self.device['nodeName']}"
            if self.device.get("allNodes"):
                return "all nodes"
            return "nodes selected per device"
        return _slice_where(spec)

    def reachable_from(self, node: dict) -> bool:
        spec = slice_spec(self.slice)
        try:
            if spec.get("perDeviceNodeSelection"):
                return node_matches(
                    node,
                    self.device.get("nodeName") or "",
                    bool(self.device.get("allNodes")),
                    self.device.get("nodeSelector"),
                )
            return node_matches(node, spec.get("nodeName") or "", bool(spec.get("allNodes")), spec.get("nodeSelector"))
        except NodeSelectorError:
            return False


def _slice_where(spec: dict) -> str:
    """Where the devices of a slice are (DeviceEntry.where), when the slice says it for all of them."""
    if spec.get("nodeName"):
        return f"node {spec['nodeName']}"
    if spec.get("allNodes"):
        return "all nodes"
    if spec.get("nodeSelector") is not None:
        return "nodes matching the slice's nodeSelector"
    return "no node"


class Universe:
    """Every device of every pool as this version's allocator gathers pools (allocator/pools.py
    gather_cluster_pools: newest generation, validity, counter slices), sorted by driver and pool, plus the
    devices of slices the allocator ignores (listed with the reason, never candidates). blocks: per (driver, pool),
    in that order, its pools and its entries (a slice of `entries`): what a pool is depends on its own slices only,
    so -w keeps the block of a pool whose slices are the same objects as at the answer before (blocks.py)."""

    def __init__(self, slices, sem: Semantics):
        self.sem = sem
        self.entries: list[DeviceEntry] = []
        self.pool_states: dict[tuple, str] = {}
        self.pools: dict[tuple, Pool] = {}
        self.blocks: list[Block] = []
        self._spans: dict[tuple, list] = {}  # pool key -> (start, end) ranges of its entries
        kept = kept_blocks(sem)
        groups = slices_by_pool(slices)
        for key in sorted(groups):
            group = groups[key]
            block = kept.get(key, group) if kept is not None else None
            if block is None:
                block = _block(key, group, sem)
                if kept is not None:
                    kept.put(key, group, block)
            self.blocks.append(block)
            for pool, state in block.newest:
                self.pools[key] = pool
                self.pool_states[key] = state
            if block.entries:
                self._spans[key] = [(len(self.entries), len(self.entries) + len(block.entries))]
                self.entries.extend(block.entries)

    def positions(self, dids) -> dict[tuple, int]:
        """Device ID -> index in entries (and so in every device matrix), for a few IDs: found within their pools'
        spans of entries, without an index of every device."""
        out = {}
        for did in dids:
            for start, end in self._spans.get(tuple(did[:2]), ()):
                for i in range(start, end):
                    if self.entries[i].did == did:
                        out.setdefault(did, i)
        return out

    def __len__(self) -> int:
        return len(self.entries)


@dataclass(frozen=True)
class Block:
    """One (driver, pool) of the universe: its entries in order (each generation's pool, then the devices of its
    slices that the allocator ignores) and, for the pool's newest generation, the pool and its state as shown."""

    key: tuple
    entries: tuple
    newest: tuple  # ((Pool, state),) or () when every slice is skipped


def _block(key: tuple, group: list[dict], sem: Semantics) -> Block:
    entries: list[DeviceEntry] = []
    newest = ()
    for pool in pool_generations(key, group, sem):
        if pool.invalid:
            state = f"invalid: {pool.invalid_reason}"
        elif pool.incomplete:
            state = f"incomplete: {pool.published} of {pool.wanted} slices published"
        else:
            state = ""
        if not pool.superseded_by:  # the newest generation describes the pool
            newest = ((pool, state),)
        for sl in pool.slices + pool.not_targeting:
            _add(entries, sl, key, state, pool=pool)
    for sl in group:
        why = ignored_devices_reason(sl, sem)
        if why:
            _add(entries, sl, key, "", ignored=why)
    return Block(key, tuple(entries), newest)


def _add(entries: list, sl: dict, key: tuple, state: str, ignored: str = "", pool: Pool | None = None) -> None:
    spec = slice_spec(sl)
    per_device = spec.get("perDeviceNodeSelection")
    node = spec.get("nodeName") or None
    driver, name = key
    append = entries.append
    slice_where = None if per_device else _slice_where(spec)
    for d, dname in zip(spec.get("devices") or [], slice_digest(sl).names):
        where = (d.get("nodeName") or None) if per_device else node
        append(DeviceEntry((driver, name, dname), d, sl, key, state, where, ignored, pool, slice_where))


class Reachability:
    """Which usable nodes reach a device: computed once per slice (or per device with per-device node
    selection), shared by every request, so the cost is O(slices x nodes) only for selector-based slices."""

    def __init__(self, usable_nodes: list[dict], rejected: dict | None = None):
        self.usable = usable_nodes
        self.rejected = rejected or {}  # node name -> why the pod cannot use it
        self.names = {n["metadata"]["name"] for n in usable_nodes}
        self.all = tuple(n["metadata"]["name"] for n in usable_nodes)
        self._by_name = {n["metadata"]["name"]: n for n in usable_nodes}
        self._by_slice: dict[int, tuple] = {}
        self._positions: dict[str, int] | None = None

    def node(self, name: str) -> dict | None:
        return self._by_name.get(name)

    def positions(self) -> dict[str, int]:
        """Node name -> its index among the usable nodes."""
        if self._positions is None:
            self._positions = {n: i for i, n in enumerate(self.all)}
        return self._positions

    def _select(self, node_name, all_nodes, selector) -> tuple:
        if node_name:
            return (node_name,) if node_name in self.names else ()
        if all_nodes:
            return self.all
        if selector is not None:
            out = []
            for n in self.usable:
                try:
                    if node_matches(n, "", False, selector):
                        out.append(n["metadata"]["name"])
                except NodeSelectorError:
                    return ()
            return tuple(out)
        return ()

    def nodes_for(self, e: DeviceEntry) -> tuple:
        nodes = self._nodes_for(e.slice, e.device)
        if e.pool is not None and e.pool.superseded_by and nodes:
            newer: set = set()
            for sl in e.pool.superseded_by:
                newer.update(self.nodes_of_slice(sl))
            nodes = tuple(n for n in nodes if n not in newer)
        return nodes

    def nodes_of_slice(self, sl: dict) -> tuple:
        spec = slice_spec(sl)
        if spec.get("perDeviceNodeSelection"):
            out: set = set()
            for d in spec.get("devices") or []:
                out.update(self._nodes_for(sl, d))
            return tuple(out)
        return self._nodes_for(sl, {})

    def _nodes_for(self, sl: dict, device: dict) -> tuple:
        spec = slice_spec(sl)
        if spec.get("perDeviceNodeSelection"):
            return self._select(device.get("nodeName") or "", bool(device.get("allNodes")), device.get("nodeSelector"))
        key = id(sl)
        hit = self._by_slice.get(key)
        if hit is None:
            hit = self._by_slice[key] = self._select(
                spec.get("nodeName") or "", bool(spec.get("allNodes")), spec.get("nodeSelector")
            )
        return hit


class CounterView:
    """Counters left per counter scope (a pool from 1.35, a slice in 1.34) after the allocated devices, computed
    by the allocator's own counters.available_counters, with the allocated devices that consumed each set."""

    def __init__(self, universe: Universe, allocated: AllocatedState, sem: Semantics):
        self.sem = sem
        self.universe = universe
        self.allocated = allocated
        self._scopes: dict[str, CounterScope] = {}
        self._groups: dict[tuple, tuple] = {}  # pool -> (pool, compat.baseline)

    def scope(self, e: DeviceEntry) -> CounterScope:
        pool = e.pool or self.universe.pools[e.pool_key]
        key, sets, scope_slices = counter_scope(pool, e.slice, self.sem)
        hit = self._scopes.get(key)
        if hit is None:
            hit = self._scopes[key] = available_counters(
                key, sets, scope_slices, self.allocated, self.sem.behaviour.shared_allocations_consume_counters
            )
        return hit

    def shortfall(self, e: DeviceEntry) -> tuple[str, dict] | None:
        """(reason, evidence) when the device's consumption does not fit in what is left, else None."""
        sc = self.scope(e)
        consumed: dict = {}
        add_consumption(consumed, e.device, +1)
        over = first_exceeded(sc.available, consumed)
        if over is None:
            return None
        set_name, counter, need, have = over
        holders = sorted(
            {c for did in sc.consumers.get(set_name, []) for c in self.allocated.owners.get(did, ()) or ["?"]}
        )
        reason = (
            f"counter set {set_name} counter {counter}: needs {format_quantity(Fraction(need))}, "
            f"{format_quantity(max(Fraction(have), Fraction(0)))} left"
        )
        if holders:
            ahead = [h for h in holders if h in self.allocated.estimated]  # the queue's estimate, not allocated
            reason += (
                f" (consumed by claim {', '.join(holders[:3])}"
                + (f" and {len(holders) - 3} more" if len(holders) > 3 else "")
                + (
                    ""
                    if not ahead
                    else "; of pods ahead in the queue, in the estimated order"
                    if len(ahead) == len(holders)
                    else f"; {len(ahead)} of them of pods ahead in the queue, in the estimated order"
                )
                + ")"
            )
        return reason, {"counterSet": set_name, "counter": counter, "claims": holders}

    def incompatible(self, e: DeviceEntry) -> tuple[str, dict] | None:
        """DRADeviceCompatibilityGroups (allocator/compat.py): (reason, evidence) when the compatibility groups of a
        counter set the device consumes do not go with those of the allocated devices on that set, else None."""
        pool = e.pool or self.universe.pools[e.pool_key]
        hit = self._groups.get((pool.driver, pool.name, id(pool)))
        if hit is None or hit[0] is not pool:
            hit = self._groups[(pool.driver, pool.name, id(pool))] = (pool, baseline(pool, self.allocated))
        bad = first_incompatible(e.device, hit[1])
        if bad is None:
            return None
        name, members = bad
        mine = sorted(
            {
                g
                for c in e.device.get("consumesCounters") or []
                if c.get("counterSet") == name
                for g in c.get("compatibilityGroups") or ()
            }
        )
        holders = sorted(
            {
                o
                for s in pool.slices
                for d in slice_spec(s).get("devices") or []
                if any(c.get("counterSet") == name for c in d.get("consumesCounters") or [])
                for o in self.allocated.owners.get((pool.driver, pool.name, d.get("name", "")), ())
            }
        )
        theirs = (
            "declare no groups"
            if members.all_empty
            else f"have {', '.join(sorted(members.groups)) or 'no group'} in common"
        )
        reason = (
            f"counter set {name}: its compatibility groups ({', '.join(mine) if mine else 'none'}) do not go with "
            f"those of the devices allocated from the set, which {theirs}"
            + (
                f" (claim {', '.join(holders[:3])}{f' and {len(holders) - 3} more' if len(holders) > 3 else ''})"
                if holders
                else ""
            )
        )
        return reason, {
            "counterSet": name,
            "groups": mine,
            "allocatedGroups": [] if members.all_empty else sorted(members.groups),
            "claims": holders,
        }
