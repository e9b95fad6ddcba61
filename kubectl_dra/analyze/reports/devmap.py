"""The device map (`devices -o map`, the HTML report): every device of the inventory as one cell, one row per node
or per group of nodes whose devices are in the same states, so that thousands of nodes fit on a screen.

The states are the inventory's (inventory.py: free, allocated, shared, exhausted, tainted, unhealthy, unusable), with
two the inventory does not tell apart refined from the same snapshot:
- binding: allocated, and the allocation's bindingConditions for it are not all True yet (the pod waits in PreBind;
  the conditions read as pod/binding.py reads them);
- reserved: not held, but a pending pod would take it in the queue's dry-run (analyze/queue: the scheduler's queue
  order and in-flight allocations): an estimate, marked so.
Per row, the counters of its partitionable devices' counter sets as "used/capacity" (inventory.counter_usage).
No rendering here: render/devmap.py draws the cells, the report writes them into HTML."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from kubectl_dra.analyze.pod.binding import device_status, status_conditions
from kubectl_dra.analyze.queue.outcomes import EntryKind
from kubectl_dra.findings.stages import Stage
from kubectl_dra.model.meta import name_of, ns_of

# The map's states in the order a row's cells are drawn: held first, then what keeps a device from use, free last
# (a row reads as a bar: "●●●○○○○○" is 3 of 8 held).
MAP_STATES = ("allocated", "binding", "shared", "reserved", "exhausted", "tainted", "unhealthy", "unusable", "free")


@dataclass(frozen=True)
class Cell:
    device: str  # driver/pool/device
    state: str  # one of MAP_STATES
    holder: str = ""  # the pods (or claims) holding it, the pending pod that would take it
    detail: str = ""  # the inventory's one line: the claims, the shares, the taint, the health report, why unusable

    def to_dict(self) -> dict:
        return {"device": self.device, "state": self.state, "holder": self.holder, "detail": self.detail}


@dataclass(frozen=True)
class MapRow:
    nodes: tuple[str, ...]  # the node (or "all nodes", ...) or the nodes of a group, sorted
    cells: tuple[Cell, ...]  # the first node's devices, in MAP_STATES order (a group's nodes have the same states)
    counters: tuple[str, ...] = ()  # "gpu-0 memory 25Gi/40Gi" per counter set and counter of its devices

    @property
    def counts(self) -> dict[str, int]:
        n = Counter(c.state for c in self.cells)
        return {s: n[s] for s in MAP_STATES if n[s]}

    def to_dict(self) -> dict:
        return {
            "nodes": list(self.nodes),
            "counts": self.counts,
            "counters": list(self.counters),
            "cells": [c.to_dict() for c in self.cells],
        }


@dataclass(frozen=True)
class DeviceMap:
    rows: tuple[MapRow, ...]
    grouped: bool
    estimated: tuple[str, ...] = ()  # the pending pods whose dry-run takes are drawn as reserved
    open: tuple[str, ...] = ()  # why the queue's estimate is incomplete (a pod's own answer undetermined)
    totals: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "kind": "DeviceMap",
            "grouped": self.grouped,
            "states": list(MAP_STATES),
            "totals": self.totals,
            "estimatedFrom": list(self.estimated),
            "rows": [r.to_dict() for r in self.rows],
        }


def device_map(report, snap, sem, grouped: bool = True, queue=True) -> DeviceMap:
    """report: the InventoryReport of the same snapshot (its filters already applied). queue: True runs the queue's
    dry-run, a Queue already judged on the same snapshot (status's scan) is read, False or None leaves the pending
    pods' estimated takes out."""
    binding = _binding(snap) if sem.binding_conditions else {}
    reserved, pods, open_ = ({}, (), ()) if not queue else _reserved(snap, sem, None if queue is True else queue)
    per_node: dict[str, list[Cell]] = {}
    pools: dict[tuple, str] = {}
    for r in report.rows:
        key = r.node or r.where
        pools.setdefault((r.driver, r.pool), key)
        holder = ", ".join(r.pods) or ", ".join(r.claims)
        state = r.state
        if state == "allocated" and r.id in binding:
            state, holder = "binding", holder or binding[r.id]
        elif state in ("free", "tainted", "exhausted") and r.id in reserved:
            # the dry-run placed a pending pod on it: a taint it tolerates, counters the pods ahead leave
            state, holder = "reserved", reserved[r.id]
        per_node.setdefault(key, []).append(Cell(r.id, state, holder, r.detail))
    counters: dict[str, list[str]] = {}
    for c in report.counters:
        where = pools.get((c["driver"], c["pool"]))
        if where is not None:
            counters.setdefault(where, []).append(f"{c['counterSet']} {c['counter']} {c['used']}/{c['capacity']}")
    totals = Counter(c.state for cells in per_node.values() for c in cells)
    rows = _rows(per_node, counters, grouped, MAP_STATES)
    return DeviceMap(rows, grouped, pods, open_, {s: totals[s] for s in MAP_STATES})


def _rows(per_node: dict, counters: dict, grouped: bool, states: tuple) -> tuple[MapRow, ...]:
    """A row per node, or per group of nodes whose cells are in the same states (and counters): cells in the order
    of states, then by device."""
    order = {s: i for i, s in enumerate(states)}
    rows: dict[tuple, list] = {}
    for node in sorted(per_node):
        cells = tuple(sorted(per_node[node], key=lambda c: (order[c.state], c.device)))
        ctr = tuple(counters.get(node, ()))
        key = (tuple(c.state for c in cells), ctr) if grouped else (node,)
        rows.setdefault(key, [node, cells, ctr, []])[3].append(node)
    return tuple(MapRow(tuple(names), cells, ctr) for _, cells, ctr, names in rows.values())


# The pod's map: each device's first failed check for the pod (findings/stages.py, as the per-request device
# matrices of the explain report give it), the device the dry-run picks first; the best across the pod's requests
# (a device one request can use is a candidate, whatever another request's selector says of it). In this order.
_CHECKS = tuple(s.value for s in reversed(Stage))  # the later the check a device fails, the nearer it is to use
# "ahead": in use by a claim of a pod ahead in the queue (the dry-run's estimate), not allocated yet
POD_STATES = (
    "selected",
    "candidate",
    *_CHECKS[: _CHECKS.index("in-use")],
    "ahead",
    *_CHECKS[_CHECKS.index("in-use") :],
)
NOT_NODE_LOCAL = "(not node-local)"


def pod_map(report, grouped: bool = True, cache: dict | None = None) -> DeviceMap:
    """The map of one explained pod (explain pod's Report, its claims' request matrices in the body): empty when
    the report carries no matrix (its claims are allocated, or brief).

    cache: kept by the caller for the maps of several reports of one analysis, whose pods of one shape share their
    rows (bodies.py claim_body): a request's rows are read once, and the map they make once; each pod then changes
    only the devices its place in the queue changes (the pods ahead's, its pick). So the maps of many pods cost
    devices + their places, not pods x devices; and, grouped, only the node that stands for a row gets cells."""
    cache = {} if cache is None else cache
    wheres: list[str] = []
    best: dict | None = None
    for claim in (report.body or {}).get("claims") or []:
        for req in claim.get("requests") or []:
            devices = req.get("devices") or []
            if not devices:
                continue
            k = len(wheres)
            wheres.append(f"request {claim.get('name')}/{req.get('name')}: ")
            mine = _request_states(devices, cache)
            if best is None:
                best = mine  # (shared: never changed)
                continue
            if k == 1:
                best = dict(best)
            for did, (r, why, node, _) in mine.items():
                had = best.get(did)
                if had is None or r < had[0]:
                    best[did] = (r, why, node, k)
    base = _base(best or {}, cache)
    changes = _in_queue(best or {}, base, (report.body or {}).get("queue"))
    return _pod_rows(base, changes, wheres, grouped)


def _request_states(devices: list, cache: dict) -> dict:
    """A request's rows as the map reads them (device -> (rank of its state, why, node, 0)), once per list of rows."""
    hit = cache.get(("request", id(devices)))
    if hit is not None and hit[0] is devices:
        return hit[1]
    out: dict = {}
    for v in devices:
        state = v.get("outcome") if v.get("outcome") in ("selected", "candidate") else v.get("stage")
        if state == "in-use" and (v.get("evidence") or {}).get("ahead"):
            state = "ahead"
        r = _RANK.get(state)
        if r is None:
            continue
        did = f"{v.get('driver')}/{v.get('pool')}/{v.get('device')}"
        had = out.get(did)
        if had is None or r < had[0]:
            out[did] = (r, v.get("reason") or state, v.get("node"), 0)
    cache[("request", id(devices))] = (devices, out)
    return out


_RANK = {s: i for i, s in enumerate(POD_STATES)}


@dataclass(frozen=True)
class _Base:
    """The map of a pod's devices before its place in the queue: per node its devices (rank, device) sorted, the
    nodes' states (what groups them), the devices in each state."""

    best: dict  # device -> (rank, why, node, which request's why)
    per_node: dict  # node -> tuple of (rank, device)
    sig: dict  # node -> tuple of ranks
    nodes: tuple  # sorted
    selected: tuple  # devices the pod's own dry-run picks
    totals: Counter


def _base(best: dict, cache: dict) -> _Base:
    hit = cache.get(("base", id(best)))
    if hit is not None and hit[0] is best:
        return hit[1]
    per: dict[str, list] = {}
    for did, (r, _, node, _) in best.items():
        per.setdefault(node or NOT_NODE_LOCAL, []).append((r, did))
    per_node = {n: tuple(sorted(v)) for n, v in per.items()}
    base = _Base(
        best,
        per_node,
        {n: tuple(r for r, _ in v) for n, v in per_node.items()},
        tuple(sorted(per_node)),
        tuple(did for did, x in best.items() if x[0] == _RANK["selected"]),
        Counter(POD_STATES[x[0]] for x in best.values()),
    )
    cache[("base", id(best))] = (best, base)
    return base


def _in_queue(best: dict, base: _Base, place: dict | None) -> dict:
    """A pending pod placed in the queue (the report's body["queue"]): its pick is what it gets there, not what it
    would get alone, and the devices the pods ahead take are theirs (the matrices are the pod's alone). Returns the
    devices it changes: device -> (rank, why or None for the request's as it was, node, None)."""
    if not place or place.get("devices") is None:
        return {}
    changes: dict = {}
    usable = (_RANK["selected"], _RANK["candidate"])
    for ahead in place.get("ahead") or []:
        for did in ahead.get("devices") or []:
            had = best.get(did)
            if had is not None and had[0] in usable and did not in changes:
                why = f"goes to {ahead.get('pod')}, ahead in the queue (estimated)"
                changes[did] = (_RANK["ahead"], why, had[2], None)
    picked = set(place.get("devices") or [])
    for did in base.selected:
        if did not in picked and did not in changes:  # (one the pods ahead take stays theirs)
            changes[did] = (_RANK["candidate"], None, best[did][2], None)  # why: the request's, as it was
    why = f"its pick in the queue's estimated order ({place.get('reason')})"
    for did in picked:
        if did in best:
            changes[did] = (_RANK["selected"], why, best[did][2], None)
    return changes


def _pod_rows(base: _Base, changes: dict, wheres: list, grouped: bool) -> DeviceMap:
    """The rows (as _rows makes them: a row per node, or per group of nodes in the same states), with the changes;
    cells only for the node that stands for a row."""
    best_why = {}
    per_node, sig = base.per_node, base.sig
    totals = Counter(base.totals)
    if changes:
        per_node, sig = dict(per_node), dict(sig)
        touched: dict[str, dict] = {}
        for did, (r, why, node, _) in changes.items():
            key = node or NOT_NODE_LOCAL
            devs = touched.get(key)
            if devs is None:
                devs = touched[key] = {d: rr for rr, d in per_node[key]}
            totals[POD_STATES[devs[did]]] -= 1
            totals[POD_STATES[r]] += 1
            devs[did] = r
            best_why[did] = why
        for key, devs in touched.items():
            per_node[key] = tuple(sorted((r, d) for d, r in devs.items()))
            sig[key] = tuple(r for r, _ in per_node[key])
    rows: dict[tuple, list] = {}
    for node in base.nodes:
        key = sig[node] if grouped else (node,)
        row = rows.get(key)
        if row is None:
            rows[key] = [node, [node]]
        else:
            row[1].append(node)
    out = []
    for first, names in rows.values():
        cells = []
        for r, did in per_node[first]:
            why = best_why.get(did)
            if why is None:
                _, why, _, k = base.best[did]
                why = wheres[k] + why
            cells.append(Cell(did, POD_STATES[r], "", why))
        out.append(MapRow(tuple(names), tuple(cells)))
    return DeviceMap(tuple(out), grouped, totals={s: totals[s] for s in POD_STATES})


def _binding(snap) -> dict[str, str]:
    """Devices whose allocation waits for binding conditions not yet True: device id -> the claim."""
    out = {}
    for c in snap.claims:
        alloc = (c.get("status") or {}).get("allocation") or {}
        for r in (alloc.get("devices") or {}).get("results") or []:
            if not isinstance(r, dict) or not r.get("bindingConditions"):
                continue
            conds = status_conditions(device_status(c, r))
            if any((conds.get(t) or {}).get("status") != "True" for t in r["bindingConditions"]):
                out[f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}"] = f"claim {ns_of(c)}/{name_of(c)}"
    return out


def _reserved(snap, sem, queue=None) -> tuple[dict[str, str], tuple[str, ...], tuple[str, ...]]:
    """The queue's dry-run (queue: one already judged): device id -> the pending pod that would take it, the pods
    that take some, and the pods whose own answer is undetermined (they may take devices the map shows free)."""
    if queue is None:
        from kubectl_dra.analyze.pod.dryrun import Analysis
        from kubectl_dra.analyze.queue import judge_queue
        from kubectl_dra.analyze.reports.explain import explain_pod

        queue, _ = judge_queue(snap, sem, Analysis(snap, sem), {}, explain_pod)
    taken, pods, open_ = {}, [], []
    for e in queue.entries:
        if e.node is not None and e.takes:
            pods.append(e.ref)
            for did in e.takes:
                taken.setdefault("/".join(did), f"{e.ref} (pending, estimated)")
        elif e.kind == EntryKind.OPEN:
            open_.append(e.ref)
    return taken, tuple(pods), tuple(open_)
