"""The per-request device matrix over the device universe (universe.py): for each request and each device, the
first reason it cannot be used, or that it is a candidate.

The allocator (analyze/allocator/) answers *whether* claims fit on a node; this module answers *why not*,
device by device, in the allocator's own order of checks."""

from __future__ import annotations

from dataclasses import dataclass, field

from kubectl_dra.analyze.allocator import (
    NODE_OPERATIONS_FEATURE,
    AllocatedState,
    Request,
    SelectorEvaluator,
    optional_node_operations_rejection,
    selector_expression,
    skips_node_operations,
    slice_spec,
    untolerated_taint,
)
from kubectl_dra.analyze.allocator.pools import InvalidPool
from kubectl_dra.analyze.devices.blocks import allocated_by_pool, kept_rows
from kubectl_dra.analyze.devices.holds import capacity_shortfall, in_use_reason
from kubectl_dra.analyze.devices.universe import CounterView, DeviceEntry, Reachability, Universe
from kubectl_dra.features import Semantics
from kubectl_dra.findings.stages import Stage
from kubectl_dra.runtime import IdMemo, is_long_running


@dataclass
class DeviceVerdict:
    entry: DeviceEntry
    outcome: str  # "selected", "candidate", "rejected"
    stage: Stage | None  # None: not rejected
    reason: str
    evidence: dict = field(default_factory=dict)
    nodes: tuple = ()  # usable nodes from which the device is reachable

    def to_dict(self) -> dict:
        e = self.entry
        out = {"driver": e.did[0], "pool": e.did[1], "device": e.did[2]}
        if e.node_name:
            out["node"] = e.node_name
        out["outcome"] = self.outcome
        out["reason"] = self.reason
        if self.stage:
            out["stage"] = self.stage.value
        if self.evidence:
            out["evidence"] = self.evidence
        return out


def cel_path(path) -> str:
    """('capacity', 'gpu.example.com', 'memory') -> device.capacity["gpu.example.com"].memory"""
    if not isinstance(path, (tuple, list)):
        return str(path)
    if len(path) == 3 and path[0] in ("attributes", "capacity"):
        return f'device.{path[0]}["{path[1]}"].{path[2]}'
    if len(path) == 2 and path[0] in ("attributes", "capacity"):
        return f'device.{path[0]}["{path[1]}"]'
    return "device." + ".".join(str(p) for p in path)


def _fmt_reads(res) -> dict:
    out = {}
    for path, value in getattr(res, "reads", ()) or ():
        if path == ("driver",) or path == ["driver"]:
            continue  # the driver is shown with the device already
        out[cel_path(path)] = value if value is None or isinstance(value, (str, int, float, bool)) else str(value)
    return out


def shape_key(entry: DeviceEntry) -> tuple:
    """Everything a CEL selector can see of a device: devices with equal keys get equal results.
    repr() of the raw maps is exact for JSON data and far cheaper than a canonical form; two equal
    maps written in a different order merely miss the cache."""
    key = entry.shape
    if key is None:
        d = entry.device
        key = (
            entry.did[0],
            repr(d.get("attributes")),
            repr(d.get("capacity")),
            bool(d.get("allowMultipleAllocations")),
        )
        entry.shape = key
    return key


_UNKEYED = object()


def _compiled_list(ev: SelectorEvaluator, selectors):
    """The selectors compiled (cached per list), or None when one is empty or does not compile."""
    plans = ev.matrix.read_plans
    compiled = plans.get(id(selectors), _UNKEYED)
    if compiled is _UNKEYED:
        compiled = []
        for sel in selectors:
            expr = selector_expression(sel)
            c = ev.compile(expr)[0] if expr else None
            if c is None:
                compiled = None
                break
            compiled.append(c)
        plans[id(selectors)] = compiled
        ev.matrix.keep[id(selectors)] = selectors  # keeps id(selectors) unique while cached
    return compiled


def keyer(ev: SelectorEvaluator, *selector_lists):
    """The function entry -> what the selector lists can see of a device, as the values their expressions read
    (each compiled selector's memo key), so that devices which differ only in what no selector reads (a uuid, a PCI
    address) share one result. An attribute that fails conversion fails every selector alike: its error is the key.
    A list with a selector that does not compile (or is empty) falls back to the device's whole shape. Built once
    per combination of lists (hot loops call it per device)."""
    plans = ev.matrix.keyers
    ids = tuple(map(id, selector_lists))
    fn = plans.get(ids)
    if fn is None:
        fn = plans[ids] = _make_keyer(ev, selector_lists)
        ev.matrix.keep[ids] = selector_lists  # keeps the ids unique while cached
    return fn


def _make_keyer(ev: SelectorEvaluator, selector_lists):
    lists = [_compiled_list(ev, s) for s in selector_lists]
    if any(c is None for c in lists):
        return lambda entry: ("shape",) + shape_key(entry)
    compiled = [c for cs in lists for c in cs]
    if not compiled:
        return lambda entry: ()
    merged = type(compiled[0]).merged_read_key(compiled) if len(compiled) > 1 else None
    fns = (merged,) if merged is not None else tuple(c.raw_key for c in compiled)
    # From the published device, as CEL sees it (SelectorEvaluator.cel_device), without building that view: the
    # conversion verdict reads the attributes map only, the keys the driver, the attributes, the capacity and
    # allowMultipleAllocations where this version's CEL device has it.
    conversion_error = ev.env.conversion_error
    multi_visible = ev.sem.behaviour.cel_sees_multi_allocations
    empty: dict = {}
    if len(fns) == 1:
        (only,) = fns

        def key1(entry: DeviceEntry) -> tuple:
            d = entry.device
            conv = conversion_error(d)
            if conv is not None:
                return ("conversion", conv)
            multi = multi_visible and bool(d.get("allowMultipleAllocations"))
            return (only(entry.did[0], multi, d.get("attributes") or empty, d.get("capacity") or empty),)

        return _remembered(key1, _read_keys(ev, lists, multi_visible))

    def key(entry: DeviceEntry) -> tuple:
        d = entry.device
        conv = conversion_error(d)
        if conv is not None:
            return ("conversion", conv)
        parts = (
            entry.did[0],
            multi_visible and bool(d.get("allowMultipleAllocations")),
            d.get("attributes") or empty,
            d.get("capacity") or empty,
        )
        return tuple([f(*parts) for f in fns])

    return _remembered(key, _read_keys(ev, lists, multi_visible))


# -w: the read key of each device object, across answers (an unchanged slice keeps its device objects between
# snapshots, so an update computes the keys of the changed slices' devices only). One memo per what the key
# depends on besides the device: the CEL version, the list-attributes conversion, whether CEL sees
# allowMultipleAllocations, the expressions; the slice's driver is stored with the key and compared.
_READ_KEYS: dict[tuple, IdMemo] = {}
_READ_KEY_MEMOS = 32  # distinct selector combinations remembered; then the oldest goes
_READ_KEYS_KEPT = 262144  # devices per combination (IdMemo: then it starts afresh)


def _read_keys(ev: SelectorEvaluator, lists: list, multi_visible: bool) -> IdMemo | None:
    if not is_long_running():
        return None
    sig = (
        ev.env.version,
        ev.env.list_attributes,
        multi_visible,
        tuple(tuple(c.expression for c in cs) for cs in lists),
    )
    memo = _READ_KEYS.pop(sig, None)
    if memo is None:  # (not `or`: an IdMemo whose generation just turned is empty, so falsy)
        memo = IdMemo(_READ_KEYS_KEPT)
    _READ_KEYS[sig] = memo  # the most recently used last
    while len(_READ_KEYS) > _READ_KEY_MEMOS:
        _READ_KEYS.pop(next(iter(_READ_KEYS)))
    return memo


def _remembered(fn, memo: IdMemo | None):
    """fn (entry -> read key), remembered per device object in memo (None: as it is)."""
    if memo is None:
        return fn

    def remembered(entry: DeviceEntry) -> tuple:
        hit = memo.get(entry.device)
        if hit is not None and hit[0] == entry.did[0]:
            return hit[1]
        key = fn(entry)
        memo.put(entry.device, (entry.did[0], key))
        return key

    return remembered


def evaluate_selectors(ev: SelectorEvaluator, selectors, entry: DeviceEntry, read=None):
    """Returns (ok, failed_index, detail): ok True/False, or None on a CEL error (detail has the error).
    Results are shared by every device with the same read key within one evaluator (read: keyer(ev, selectors),
    when the caller has it at hand)."""
    cache = ev.matrix.shapes
    k = (id(selectors), (read or keyer(ev, selectors))(entry))
    hit = cache.get(k)
    if hit is None:
        hit = cache[k] = _evaluate_selectors(ev, selectors, entry)
    return hit


def _evaluate_selectors(ev: SelectorEvaluator, selectors, entry: DeviceEntry):
    ev.matrix.keep[id(selectors)] = selectors  # keeps id(selectors) unique while cached
    for i, sel in enumerate(selectors):
        expr = selector_expression(sel)
        if not expr:
            return None, i, {"error": "CEL expression empty (unsupported selector type?)"}
        compiled, cerr = ev.compile(expr)
        if compiled is None:
            return None, i, {"error": cerr, "expression": expr, "compile": True}
        res = compiled.evaluate(ev.cel_device(entry.did, entry.device))
        if res.error is not None:
            return None, i, {"error": res.error, "expression": expr, "read": _fmt_reads(res)}
        if not res.value:
            return False, i, {"expression": expr, "read": _fmt_reads(res)}
    return True, -1, {}


@dataclass(frozen=True)
class MatrixContext:
    """What the per-device checks of one request read besides the device: built once per analysis."""

    universe: Universe
    allocated: AllocatedState
    sem: Semantics
    ev: SelectorEvaluator
    reach: Reachability | None  # None: "any node" (no pod context)
    counters: CounterView
    own_devices: frozenset = frozenset()


def device_matrix(req: Request, ctx: MatrixContext) -> list[DeviceVerdict]:
    """For one request (or subrequest), the first reason each device cannot be used (device_checks), or that it
    is a candidate."""
    out: list[DeviceVerdict] = []
    class_sel = ((req.class_obj or {}).get("spec") or {}).get("selectors") or []
    read = keyer(ctx.ev, class_sel, req.selectors)  # (also compiles every selector: ev.inexact is complete)
    kept = kept_rows(req, ctx)
    used = allocated_by_pool(ctx.allocated, ctx.own_devices) if kept is not None else {}
    for block in ctx.universe.blocks:
        if kept is not None:
            facts = used.get(block.key, ())
            rows = kept.get(id(block), lambda was, block=block, facts=facts: was[0] is block and was[1] == facts)
            if rows is not None:  # (-w: the pool, and all its rows read, as at the answer before: blocks.py)
                out.extend(rows)
                continue
        rows = []
        for e in block.entries:
            stage, reason, evidence, nodes = next(device_checks(req, class_sel, e, ctx, read))
            if stage is None:
                rows.append(DeviceVerdict(e, "candidate", None, reason, evidence, nodes))
            else:
                rows.append(DeviceVerdict(e, "rejected", stage, reason, evidence, nodes))
        out.extend(rows)
        if kept is not None:
            kept.put(id(block), (block, facts), rows)
    return out


# long: one generator yields the checks in the allocator's order; split, the order would live in two places
def device_checks(req: Request, class_sel: list, e: DeviceEntry, ctx: MatrixContext, read=None):
    """Every check of the allocator that rejects device e for the request, as (stage, reason, evidence, nodes), in
    the order shown to users: what the device is (pool, binding gate, selectors) before where it is (node) and
    what holds it (in use, feature gates, taints, counters, capacity), ending with (None, ...) and the nodes of a
    candidate. The explanation shows the first; the fidelity suite takes them all and checks that, in upstream's
    order of checks, the first is the one upstream's own trace reports (docs/fidelity.md). Checks after a node
    rejection see no nodes. read: keyer(ctx.ev, class_sel, req.selectors), when the caller has it at hand."""
    sem, reach, d = ctx.sem, ctx.reach, e.device
    unusable = e.pool_invalid or (not e.pool_usable and sem.behaviour.skips_unusable_pools)
    valid_on: tuple | None = None  # nodes on which a pool invalid by duplicate names is valid after all
    if unusable and reach is not None and e.pool is not None and e.pool.invalid_kind is InvalidPool.DUPLICATE_DEVICE:
        valid_on = _nodes_without_duplicates(e, reach)
        unusable = not valid_on
    if e.ignored or unusable:
        # Upstream never looks at the device, so no further check applies; one outside the request's class is
        # reported as that (it would not be a candidate anyway, and device tables leave those out).
        rejected = selector_verdict(ctx.ev, req, class_sel, e, read)
        if rejected is not None and rejected[0] is Stage.CLASS:
            yield rejected[0], rejected[1], rejected[2], ()
        else:
            yield Stage.POOL, e.ignored or f"pool {e.pool_key[1]} is {e.pool_state}", {}, ()
        return
    if d.get("bindingConditions") and not sem.binding_conditions:
        yield (
            Stage.BINDING,
            "device has binding conditions; DRADeviceBindingConditions/DRAResourceClaimDeviceStatus are off",
            {},
            (),
        )
    rejected = selector_verdict(ctx.ev, req, class_sel, e, read)
    if rejected is not None:
        yield rejected[0], rejected[1], rejected[2], ()
    nodes = ()
    if reach is not None:
        nodes = reach.nodes_for(e)
        if valid_on is not None:
            nodes = tuple(n for n in nodes if n in valid_on)
        if not nodes:
            why = reach.rejected.get(e.node_name) if e.node_name else None
            yield (
                Stage.NODE,
                f"on {e.where()}, which the pod cannot use" + (f" ({why})" if why else ""),
                {"nodeRejection": why} if why else {},
                (),
            )
    if not req.admin_access and e.did in ctx.allocated.devices and e.did not in ctx.own_devices:
        owners = ctx.allocated.owners.get(e.did) or []
        yield (Stage.IN_USE, *in_use_reason(owners, ctx.allocated.estimated, ctx.allocated.terminating), nodes)
    active_share = (
        sem.behaviour.active_share_blocks_exclusive
        and not req.admin_access
        and not (sem.consumable_capacity and d.get("allowMultipleAllocations"))
        and e.did in ctx.allocated.aggregated_capacity
    )
    if active_share:
        owners = ctx.allocated.owners.get(e.did) or []
        yield (
            Stage.IN_USE,
            f"still holds a share for claim {', '.join(owners) or '?'}, and allows no multiple allocations now: "
            "no exclusive allocation while a share is active",
            {"claims": owners, "activeShare": True},
            nodes,
        )
    if sem.optional_node_operations_code and skips_node_operations(e.slice):
        if not sem.gate("DRAOptionalNodeOperations"):
            yield Stage.FEATURE, optional_node_operations_rejection(sem, None), {}, nodes
        elif reach is not None and nodes:
            declaring = tuple(n for n in nodes if optional_node_operations_rejection(sem, reach.node(n)) is None)
            if not declaring:
                who = f"node {nodes[0]} does not" if len(nodes) == 1 else "no node the pod may use does"
                yield (
                    Stage.NODE,
                    f"its slice skips node operations, but {who} declare {NODE_OPERATIONS_FEATURE} in "
                    "status.declaredFeatures",
                    {"nodeOperations": True},
                    (),
                )
            nodes = declaring
    if d.get("consumesCounters") and not sem.partitionable:
        yield Stage.FEATURE, "device consumes shared counters; DRAPartitionableDevices is off", {}, nodes
    if sem.device_taints:
        taint = untolerated_taint(d, req.tolerations, sem)
        if taint is not None:
            yield (
                Stage.TAINT,
                f"untolerated taint {taint.get('key')}={taint.get('value', '')}:{taint.get('effect')}"
                + (f" from DeviceTaintRule {taint['rule']}" if taint.get("rule") else ""),
                {"taint": taint},
                nodes,
            )
    shared = sem.consumable_capacity and bool(d.get("allowMultipleAllocations"))
    skips_counters = (
        shared and sem.behaviour.shared_device_skips_counters and e.did in ctx.allocated.aggregated_capacity
    )
    if d.get("consumesCounters") and sem.partitionable and e.did not in ctx.own_devices and not skips_counters:
        if sem.compatibility_groups:  # before the counters (allocator/compat.py)
            clash = ctx.counters.incompatible(e)
            if clash:
                yield Stage.COMPATIBILITY, clash[0], clash[1], nodes
        short = ctx.counters.shortfall(e)
        if short:
            yield Stage.COUNTERS, short[0], short[1], nodes
    indexed = sem.consumable_capacity and sem.behaviour.capacity_of_indexed_device
    # allocationMode All checks the capacity in use only in allocateDevice (all_mode_static_capacity), after the
    # active-share check: a device that fails that one never gets there.
    all_mode_late = req.mode == "All" and sem.behaviour.all_mode_static_capacity
    if sem.consumable_capacity and not (indexed and req.mode == "All") and not (active_share and all_mode_late):
        why = capacity_shortfall(req, e, ctx)
        if why:
            yield Stage.CAPACITY, why, {}, nodes
    if indexed:
        why = capacity_shortfall(req, e, ctx, indexed=True)
        if why:
            yield Stage.CAPACITY, why, {"indexedCheck": True}, nodes
    yield None, "passes every check", {}, nodes  # the end: with no rejection before it, a candidate on these nodes


def _nodes_without_duplicates(e: DeviceEntry, reach: Reachability) -> tuple:
    """GatherPools checks device names only among the pool's slices that target the node: a pool that repeats a
    name across slices for different nodes is valid on a node that sees one of them."""
    out = []
    for n in reach.nodes_for(e):
        seen: set = set()
        dup = False
        for sl in e.pool.slices:
            if n not in reach.nodes_of_slice(sl):
                continue
            for d in slice_spec(sl).get("devices") or []:
                dup = dup or d.get("name") in seen
                seen.add(d.get("name"))
        if not dup:
            out.append(n)
    return tuple(out)


def selector_verdict(ev: SelectorEvaluator, req: Request, class_sel: list, e: DeviceEntry, read=None):
    """None if the device passes the class's and the request's selectors, else (stage, reason, evidence).
    Cached per read key (keyer): 40,000 devices that differ only in what no selector reads cost a few evaluations."""
    cache = ev.matrix.verdicts
    key = (id(req), (read or keyer(ev, class_sel, req.selectors))(e))
    if key in cache:
        return cache[key]
    ev.matrix.keep[id(req)] = req  # keeps id(req) unique while cached
    out = None
    ok, idx, detail = evaluate_selectors(ev, class_sel, e)
    if ok is None:
        out = (
            Stage.CEL_ERROR,
            f"class {req.class_name} selector #{idx}: CEL error: {detail.get('error')}",
            dict(detail, source="class", selector=idx),
        )
    elif not ok:
        out = (Stage.CLASS, f"class {req.class_name} selector #{idx} is false", dict(detail, selector=idx))
    else:
        ok, idx, detail = evaluate_selectors(ev, req.selectors, e)
        if ok is None:
            out = (
                Stage.CEL_ERROR,
                f"request {req.name} selector #{idx}: CEL error: {detail.get('error')}",
                dict(detail, source="request", selector=idx),
            )
        elif not ok:
            out = (
                Stage.REQUEST,
                f"request {req.name} selector #{idx} is false{_read_suffix(detail)}",
                dict(detail, selector=idx),
            )
    if out is not None:
        out[2].pop("expression", None)  # listed once per request, not per device
    cache[key] = out
    return out


def _read_suffix(detail: dict) -> str:
    read = detail.get("read") or {}
    if not read:
        return ""
    parts = [f"{k} = {'<missing>' if v is None else v}" for k, v in read.items()]
    return " (" + ", ".join(parts) + ")"
