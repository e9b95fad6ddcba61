"""Pool gathering and validity, node reachability of slices, DeviceTaintRules, optional node operations.

upstream: structured/internal/*/pools_<channel>.go GatherPools, slice tracker (DeviceTaintRules)."""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from typing import Iterable, NamedTuple

from kubectl_dra.analyze.allocator.common import AllocationError
from kubectl_dra.features import Semantics
from kubectl_dra.model.nodes import NodeSelectorError, node_matches
from kubectl_dra.quantity import parse_quantity
from kubectl_dra.runtime import IdMemo


class InvalidPool(Enum):
    """Why buildPool finds a pool invalid: decisions read this, never invalid_reason (the text shown)."""

    DUPLICATE_DEVICE = "duplicate-device"  # a device name published twice among the slices (per node: see devices)
    COUNTERS = "counters"  # a counter set named twice, or a consumption naming a set or counter that is not there


@dataclass
class Pool:
    driver: str
    name: str
    slices: list = field(default_factory=list)  # slices targeting the node, sorted by name
    not_targeting: list = field(default_factory=list)
    counter_sets: dict = field(default_factory=dict)  # name -> {counter: Fraction}
    incomplete: bool = False
    invalid_kind: InvalidPool | None = None  # None: valid
    invalid_reason: str = ""
    has_binding_conditions: bool = False
    superseded_by: list = field(default_factory=list)  # gather_cluster_pools: slices of newer generations
    published: int = 0  # gather_cluster_pools: slices of this generation that count for completeness
    wanted: int = 0  # their resourceSliceCount

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"

    @property
    def invalid(self) -> bool:
        return self.invalid_kind is not None


def slice_spec(s: dict) -> dict:
    return s.get("spec") or {}


def _slice_name(s: dict) -> str:
    return (s.get("metadata") or {}).get("name", "")


def _pool_key(s: dict) -> tuple[str, str]:
    spec = slice_spec(s)
    return spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")


def _generation(s: dict) -> int:
    return int((slice_spec(s).get("pool") or {}).get("generation") or 0)


def _slice_count(s: dict) -> int:
    return int((slice_spec(s).get("pool") or {}).get("resourceSliceCount") or 0)


def _counter_sets_of(slices: Iterable[dict]) -> tuple[dict, str | None]:
    sets: dict[str, dict[str, Fraction]] = {}
    for s in slices:
        for cs in slice_spec(s).get("sharedCounters") or []:
            name = cs.get("name", "")
            if name in sets:
                return sets, f"duplicate counter set name {name}"
            sets[name] = {k: parse_quantity((v or {}).get("value", "0")) for k, v in (cs.get("counters") or {}).items()}
    return sets, None


def _validate_consumption(counter_sets: dict, slices: Iterable[dict]) -> str | None:
    for s in slices:
        if not slice_digest(s).consumes:
            continue
        for d in slice_spec(s).get("devices") or []:
            for cc in d.get("consumesCounters") or []:
                cs = counter_sets.get(cc.get("counterSet", ""))
                if cs is None:
                    return f"counter set {cc.get('counterSet', '')} not found"
                for cname in cc.get("counters") or {}:
                    if cname not in cs:
                        return f"counter {cname} not found in counter set {cc.get('counterSet', '')}"
    return None


def _duplicate_device(slices: list[dict]) -> str | None:
    """The first device name seen twice in the pool's slices, in their order (upstream's validation)."""
    if len(slices) == 1:
        return None if slice_digest(slices[0]).distinct else _first_duplicate(slices)
    seen: set[str] = set()
    count = 0
    for s in slices:
        names = slice_digest(s).names
        seen.update(names)
        count += len(names)
        if len(seen) != count:  # some name twice: find the first, one device at a time
            return _first_duplicate(slices)
    return None


def _first_duplicate(slices: list[dict]) -> str | None:
    seen: set[str] = set()
    for s in slices:
        for d in slice_spec(s).get("devices") or []:
            n = d.get("name", "")
            if n in seen:
                return f"duplicate device name {n}"
            seen.add(n)
    return None


def _has_binding_conditions(slices: Iterable[dict]) -> bool:
    return any(slice_digest(s).binding for s in slices)


class SliceDigest(NamedTuple):
    """What pool gathering asks of a slice's devices, found in one pass over them (slice_digest)."""

    names: tuple  # the device names, in order
    distinct: bool  # no name twice
    consumes: bool  # some device consumes counters
    binding: bool  # some device has bindingConditions (set, even empty)
    compat: bool  # some counter consumption names compatibility groups (sliceUsesCompatibilityGroups, 1.37)


def slice_digest(s: dict) -> SliceDigest:
    """The slice's SliceDigest, remembered per slice object (gathering asks per pool, per node and per device
    check; a live gather computes it as the slice's page arrives). The entry holds the object, so its id() cannot
    be reused while cached."""
    hit = _DIGESTS.get(s)
    if hit is not None:
        return hit
    devices = slice_spec(s).get("devices") or []
    names = tuple(d.get("name", "") for d in devices)
    consuming = [d["consumesCounters"] for d in devices if d.get("consumesCounters")]
    digest = SliceDigest(
        names,
        len(set(names)) == len(names),
        bool(consuming),
        any(d.get("bindingConditions") is not None for d in devices),
        any(cc.get("compatibilityGroups") for ccs in consuming for cc in ccs),
    )
    _DIGESTS.put(s, digest)
    return digest


_DIGESTS = IdMemo(262144)


def slice_targets_node(s: dict, node: dict, sem: Semantics) -> bool | None:
    """Whether a slice is relevant for the node (None: the slice is ignored entirely for this version)."""
    spec = slice_spec(s)
    if compat_ignored(s, sem):
        return None
    per_device = spec.get("perDeviceNodeSelection")
    if not sem.partitionable and (
        per_device is not None or (sem.behaviour.separate_counter_slices and spec.get("sharedCounters"))
    ):
        return None
    if sem.behaviour.counter_slices_reach_every_node and spec.get("sharedCounters"):
        return True  # 1.35/1.36: counter slices always belong; 1.37 selects them by node like the others
    node_name, all_nodes, selector = spec.get("nodeName") or "", bool(spec.get("allNodes")), spec.get("nodeSelector")
    if node_name or all_nodes or selector is not None:
        try:
            return node_matches(node, node_name, all_nodes, selector)
        except NodeSelectorError as e:
            raise AllocationError(f"failed to perform node selection for slice {_slice_name(s)}: {e}") from None
    if per_device:
        for d in spec.get("devices") or []:
            try:
                if node_matches(node, d.get("nodeName") or "", bool(d.get("allNodes")), d.get("nodeSelector")):
                    return True
            except NodeSelectorError as e:
                raise AllocationError(
                    f"failed to perform node selection for device {d.get('name', '')} in slice {_slice_name(s)}: {e}"
                ) from None
        return False
    return None


NODE_OPERATIONS_FEATURE = (
    "DRAOptionalNodeOperations"  # component-helpers nodedeclaredfeatures draoptionalnodeoperations
)


def skips_node_operations(s: dict) -> bool:
    return bool(slice_spec(s).get("skipNodeOperations"))


def optional_node_operations_rejection(sem: Semantics, node: dict | None) -> str | None:
    """upstream: allocator_experimental.go allocateDevice (1.37) for a device whose slice sets skipNodeOperations:
    the feature must be on and the node must list it in status.declaredFeatures. None when the device may be used."""
    if not sem.gate("DRAOptionalNodeOperations"):
        return "its slice skips node operations (skipNodeOperations); DRAOptionalNodeOperations is off"
    declared = ((node or {}).get("status") or {}).get("declaredFeatures") or []
    if NODE_OPERATIONS_FEATURE not in declared:
        return f"its slice skips node operations, but the node does not declare {NODE_OPERATIONS_FEATURE}"
    return None


def apply_taint_rules(slices: list[dict], rules, nil_matches_all: bool = False, select=None) -> list[dict]:
    """What kube-scheduler's slice tracker does with DeviceTaintRules (gate DRADeviceTaintRules; in 1.34
    DRADeviceTaints): each rule's taint is appended to every device its selector (driver, pool, device; all
    optional) matches. A rule without a selector matches nothing, or, with nil_matches_all
    (Behaviour.nil_taint_selector_matches_all), every device. select(rule, slice spec, device) -> bool judges the
    1.34 selector's deviceClassName and CEL selectors (v1alpha3; 1.35 dropped them) and is asked only of the rules
    that set them; without it (1.35 on) those fields are ignored, as upstream's types no longer have them. Slices
    are copied only when a rule applies. upstream: resourceslice/tracker/tracker.go applyPatches."""
    if nil_matches_all:
        rules = [
            r
            if (r.get("spec") or {}).get("deviceSelector") is not None
            else dict(r, spec=dict(r.get("spec") or {}, deviceSelector={}))
            for r in rules
        ]
    rules = [r for r in rules if (r.get("spec") or {}).get("deviceSelector") is not None]
    if not rules:
        return slices
    out = []
    for sl in slices:
        spec = slice_spec(sl)
        patched = None
        for rule in rules:
            sel = rule["spec"]["deviceSelector"]
            taint = rule["spec"].get("taint") or {}
            if sel.get("driver") is not None and sel["driver"] != spec.get("driver"):
                continue
            if sel.get("pool") is not None and sel["pool"] != (spec.get("pool") or {}).get("name"):
                continue
            by_cel = select is not None and (sel.get("deviceClassName") is not None or bool(sel.get("selectors")))
            for i, d in enumerate(spec.get("devices") or []):
                if sel.get("device") is not None and sel["device"] != d.get("name"):
                    continue
                if by_cel and not select(rule, spec, d):
                    continue
                if patched is None:
                    patched = {**sl, "spec": {**spec, "devices": [dict(x) for x in spec.get("devices") or []]}}
                dev = patched["spec"]["devices"][i]
                dev["taints"] = list(dev.get("taints") or []) + [
                    dict(taint, rule=(rule.get("metadata") or {}).get("name"))
                ]
        out.append(patched or sl)
    return out


def _order_slices(group: list[dict], sem: Semantics) -> list[dict]:
    """Slice order inside a pool: sorted by name in 1.36+ incubating/experimental; before that the order
    the scheduler's informer listed them (kept as given), with slices holding binding-condition devices
    moved last by the experimental channels of 1.34/1.35."""
    if sem.behaviour.resume_search:
        return sorted(group, key=_slice_name)
    if sem.behaviour.binding_slices_last:
        plain = [s for s in group if not _has_binding_conditions([s])]
        return plain + [s for s in group if _has_binding_conditions([s])]
    return list(group)


def _build_pool(key: tuple[str, str], group: list[dict], all_for_pool: list[dict], incomplete: bool, sem: Semantics):
    """buildPool: the pool's device slices (those in group), its counter sets and its validity. group holds the
    slices of the current generation that target the node, all_for_pool every slice of that generation."""
    pool = Pool(driver=key[0], name=key[1], incomplete=incomplete)
    if sem.partitionable and sem.behaviour.separate_counter_slices:
        device_slices = [s for s in group if not slice_spec(s).get("sharedCounters")]
        counter_slices = [s for s in group if slice_spec(s).get("sharedCounters")]
    else:
        device_slices, counter_slices = group, []
    pool.slices = device_slices
    dup = _duplicate_device(device_slices)
    if dup:
        pool.invalid_kind, pool.invalid_reason = InvalidPool.DUPLICATE_DEVICE, dup
    elif sem.partitionable and sem.behaviour.separate_counter_slices:
        names = {_slice_name(s) for s in group}
        if sem.behaviour.pool_wide_counter_sets:
            # 1.37 takes the counter sets of the whole pool, also from slices for other nodes.
            counter_slices = counter_slices + [
                x for x in all_for_pool if _slice_name(x) not in names and slice_spec(x).get("sharedCounters")
            ]
        counter_sets, err = _counter_sets_of(counter_slices)
        err = err or _validate_consumption(counter_sets, group)
        others = [s for s in all_for_pool if _slice_name(s) not in names and not slice_spec(s).get("sharedCounters")]
        err = err or _validate_consumption(counter_sets, others)
        if err:
            pool.invalid_kind, pool.invalid_reason = InvalidPool.COUNTERS, err
        pool.counter_sets = counter_sets
        pool.not_targeting = sorted(others, key=_slice_name)
    if pool.invalid and sem.behaviour.skips_unusable_pools:
        pool.slices, pool.not_targeting = [], []  # upstream returns an invalid pool without its slices
    pool.has_binding_conditions = _has_binding_conditions(pool.slices)
    return pool


def uses_compatibility_groups(s: dict) -> bool:
    """sliceUsesCompatibilityGroups (1.37): a device's counter consumption names compatibility groups."""
    return slice_digest(s).compat


def compat_ignored(s: dict, sem: Semantics) -> bool:
    """1.37 GatherPools: with DRADeviceCompatibilityGroups off a slice using them is ignored, also when counting the
    pool's slices, so its pool is incomplete."""
    return not sem.gate("DRADeviceCompatibilityGroups") and uses_compatibility_groups(s)


def _skipped_slice_reason(s: dict, sem: Semantics) -> str | None:
    """Why GatherPools skips a slice on every node (it then counts for no pool), else None."""
    spec = slice_spec(s)
    if compat_ignored(s, sem):
        return (
            "its slice uses counter compatibility groups; DRADeviceCompatibilityGroups is off, so the slice is ignored "
            "and its pool is incomplete"
        )
    if not sem.partitionable and spec.get("perDeviceNodeSelection") is not None:
        return "its slice uses perDeviceNodeSelection; DRAPartitionableDevices is off"
    if not sem.partitionable and sem.behaviour.separate_counter_slices and spec.get("sharedCounters"):
        return "its slice publishes sharedCounters; DRAPartitionableDevices is off"
    if not (spec.get("nodeName") or spec.get("allNodes") or spec.get("nodeSelector") is not None) and not spec.get(
        "perDeviceNodeSelection"
    ):
        return "its slice sets none of nodeName, allNodes, nodeSelector, perDeviceNodeSelection"
    return None


def ignored_devices_reason(s: dict, sem: Semantics) -> str | None:
    """Why this version's allocator never looks at the devices of a slice, on any node (None: it may)."""
    skipped = _skipped_slice_reason(s, sem)
    if skipped:
        return skipped
    spec = slice_spec(s)
    if sem.behaviour.separate_counter_slices and spec.get("sharedCounters") and spec.get("devices"):
        return (
            "its slice also publishes sharedCounters (the 1.34 layout); from 1.35 such a slice is a counter slice "
            "and its devices are ignored"
        )
    return None


def gather_cluster_pools(slices: list[dict], sem: Semantics) -> list[Pool]:
    """GatherPools as if one node reached every slice: per pool its newest generation, with the validity, counter
    sets and device slices that the per-node gathering computes (through the same _build_pool), sorted by driver
    and pool. It answers "which devices can this version use at all, and why not" for the per-device explanation.
    The device slices of an invalid pool are kept (upstream drops them) so that they can be listed.
    An older generation that is complete by itself is a pool too, with `superseded_by` the newer slices: a node
    that no newer slice reaches still uses it (upstream keeps the newest generation among the slices that target
    the node), as during a driver's rolling update of a pool that spans nodes."""
    groups = slices_by_pool(slices)
    return [pool for key in sorted(groups) for pool in pool_generations(key, groups[key], sem)]


def slices_by_pool(slices: list[dict]) -> dict[tuple[str, str], list[dict]]:
    """(driver, pool) -> the slices that name it, in their order."""
    out: dict[tuple[str, str], list[dict]] = {}
    for s in slices:
        out.setdefault(_pool_key(s), []).append(s)
    return out


def pool_generations(key: tuple[str, str], slices: list[dict], sem: Semantics) -> list[Pool]:
    """gather_cluster_pools for one pool's slices (all of them name key): its generations that count, newest first;
    none when every slice is skipped. What a pool is depends on its own slices only."""
    by_gen: dict[int, list[dict]] = {}
    counted: dict[int, int] = {}  # generation -> slices that count for completeness (checkSlicesInPool)
    for s in slices:
        gen = _generation(s)
        if not compat_ignored(s, sem):
            counted[gen] = counted.get(gen, 0) + 1
        if _skipped_slice_reason(s, sem):
            continue
        by_gen.setdefault(gen, []).append(s)
    pools = []
    newer: list[dict] = []
    for gen in sorted(by_gen, reverse=True):
        group = sorted(by_gen[gen], key=_slice_name)
        want = _slice_count(group[0])
        # Complete when the kept slices add up, or else (checkSlicesInPool) when every slice of the generation,
        # also those skipped above, does.
        incomplete = len(group) != want and counted.get(gen, 0) != want
        if newer and incomplete and sem.behaviour.skips_unusable_pools:
            newer = newer + group
            continue  # an older, incomplete generation is never used (1.34 still uses incomplete pools)
        pool = _build_pool(key, group, group, incomplete, sem)
        pool.published, pool.wanted = counted.get(gen, 0), want
        if pool.invalid and sem.behaviour.skips_unusable_pools:
            pool.slices = [
                s for s in group if not (sem.behaviour.separate_counter_slices and slice_spec(s).get("sharedCounters"))
            ]
        if pool.invalid_kind is InvalidPool.DUPLICATE_DEVICE and sem.partitionable:
            # A name published twice may be so only cluster-wide: on a node that one of the two slices does not
            # target the pool is valid (devices/checks.py valid_on), and its devices meet the shared counters there.
            pool.counter_sets, _ = _counter_sets_of([s for s in group if slice_spec(s).get("sharedCounters")])
        pool.superseded_by = list(newer)
        pools.append(pool)
        newer = newer + group
    return pools


class SliceIndex:
    """The slices that may target a node, in their original order: those naming it (spec.nodeName) and every slice
    that names no node (allNodes, a node selector, per-device selection) or carries shared counters (which 1.35/1.36
    give to every node). A slice naming another node never targets this one (NodeMatches checks nodeName first),
    so GatherPools over these is GatherPools over all, at the cost of the node's own slices."""

    def __init__(self, slices: list[dict]):
        self.slices = slices
        self._local: dict[str, list[int]] = {}
        self._general: list[int] = []
        # id(node) -> (node, sem, its pools): GatherPools of one node, for every allocator over these slices (the
        # queue runs one per pending pod on the same nodes). Pools are read, never changed, by a search.
        self.pools: dict[int, tuple] = {}
        for i, s in enumerate(slices):
            spec = slice_spec(s)
            name = spec.get("nodeName")
            if name and isinstance(name, str) and not spec.get("sharedCounters"):
                self._local.setdefault(name, []).append(i)
            else:
                self._general.append(i)

    def for_node(self, node: dict) -> list[dict]:
        local = self._local.get((node.get("metadata") or {}).get("name") or "", ())
        return [self.slices[i] for i in heapq.merge(local, self._general)]

    def has_own(self, node_name: str) -> bool:
        """Whether some slice names this node (spec.nodeName)."""
        return node_name in self._local

    def general(self) -> list[int]:
        """Indexes of the slices that name no node: the ones that may target several nodes."""
        return self._general


def gather_pools(slices: list[dict], node: dict, sem: Semantics, index: SliceIndex | None = None) -> list[Pool]:
    """GatherPools for one node (index: a SliceIndex of the same slices, to visit only those that may target it,
    and that remembers each node's pools)."""
    if index is None:
        return _gather_pools(slices, node, sem, None)
    hit = index.pools.get(id(node))
    if hit is not None and hit[0] is node and hit[1] is sem:
        return hit[2]
    pools = _gather_pools(slices, node, sem, index)
    index.pools[id(node)] = (node, sem, pools)
    return pools


def _gather_pools(slices: list[dict], node: dict, sem: Semantics, index: SliceIndex | None) -> list[Pool]:
    grouped: dict[tuple[str, str], list[dict]] = {}
    order: list[tuple[str, str]] = []
    plain_order: dict[tuple[str, str], int] = {}  # first seen through a slice without binding conditions
    for s in index.for_node(node) if index is not None else slices:
        if not slice_targets_node(s, node, sem):
            continue
        key = _pool_key(s)
        if key not in plain_order and (
            (sem.behaviour.separate_counter_slices and slice_spec(s).get("sharedCounters"))
            or not _has_binding_conditions([s])
        ):
            plain_order[key] = len(plain_order)
        cur = grouped.get(key)
        if cur is None:
            grouped[key] = [s]
            order.append(key)
        elif _generation(s) > _generation(cur[0]):
            grouped[key] = [s]
        elif _generation(s) == _generation(cur[0]):
            cur.append(s)
    pools: list[Pool] = []
    for key in order:
        group = _order_slices(grouped[key], sem)
        gen = _generation(group[0])
        complete = len(group) == _slice_count(group[0])
        all_for_pool = group
        incomplete = False
        if sem.behaviour.skips_unusable_pools and not complete:
            all_for_pool = [
                s for s in slices if _pool_key(s) == key and _generation(s) == gen and not compat_ignored(s, sem)
            ]
            if any(_pool_key(s) == key and _generation(s) > gen for s in slices):
                continue  # obsolete: a newer generation exists somewhere
            if len(all_for_pool) != _slice_count(group[0]):
                pools.append(Pool(driver=key[0], name=key[1], incomplete=True))
                continue
        elif not sem.behaviour.skips_unusable_pools and not complete:
            incomplete = True
        pools.append(_build_pool(key, group, all_for_pool, incomplete, sem))
    if sem.behaviour.resume_search:
        # 1.36+ incubating/experimental: sorted by driver and pool name, pools with binding conditions last.
        pools.sort(key=lambda p: (p.has_binding_conditions, p.driver, p.name))
    elif sem.behaviour.binding_slices_last:
        # Slices with binding conditions are added to the pool map after all others, and pools with
        # binding conditions are moved after the others (keeping the map order within both groups).
        pools.sort(key=lambda p: (p.has_binding_conditions, plain_order.get((p.driver, p.name), len(plain_order))))
    # Otherwise upstream ranges over a Go map keyed by pool. For up to 8 pools (one swiss-table group)
    # the order is a rotation of the insertion order, and the insertion order itself is the most
    # likely one: it is kept, so the engine's choice is always one upstream can make.
    return pools
