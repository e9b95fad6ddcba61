"""`kubectl dra devices`: every published device, who holds it, and what is free, from one snapshot.

The devices are the allocator's (Universe: pools gathered as this version's allocator gathers them, DeviceTaintRules
applied); a device's classes are the DeviceClasses whose selectors it passes (the CEL environment of this version,
memoised per device shape); its state comes from the allocated claims (AllocatedState), the taints the allocator
would not let an untolerating request past, the kubelet's health reports, and its pool. Headroom of partitionable
devices is the allocator's counter rule applied one device at a time (counters.first_exceeded), not a sum."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from kubectl_dra.analyze.allocator import device_id_str
from kubectl_dra.analyze.allocator.counters import add_consumption, first_exceeded
from kubectl_dra.analyze.devices.checks import evaluate_selectors, keyer
from kubectl_dra.analyze.devices.pool_status import counts_as_upstream, pool_status_findings, upstream_pool_status
from kubectl_dra.analyze.devices.universe import CounterView, DeviceEntry
from kubectl_dra.analyze.pod.dryrun import Analysis
from kubectl_dra.analyze.pod.kubelet import DRIVER_PIECE_READS
from kubectl_dra.analyze.pod.lifecycle import shown_phase
from kubectl_dra.analyze.reports.node_plugins import node_plugins
from kubectl_dra.errors import DraError
from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import SCHEMA_VERSION
from kubectl_dra.model.meta import name_of, ns_of
from kubectl_dra.model.snapshot import Snapshot
from kubectl_dra.quantity import format_quantity

STATES = ("free", "allocated", "shared", "exhausted", "tainted", "unhealthy", "unusable")
_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


class DeviceRow(NamedTuple):
    """One device as `devices` lists it (a tuple: 40,000 of them are built in a few milliseconds)."""

    driver: str
    pool: str
    device: str
    where: str  # "node-01", "all nodes", "nodes matching the slice's nodeSelector", ...
    node: str | None  # the node of a node-local device
    classes: tuple[str, ...]
    state: str  # one of STATES ("exhausted": not held, but the shared counters it needs are used up)
    detail: str  # one line: the claims, the shares, the counters, the taint, the health report, why unusable
    claims: tuple[str, ...] = ()
    pods: tuple[str, ...] = ()  # "ns/name (Phase)" of the pods the holding claims are reserved for
    taints: tuple[dict, ...] = ()
    raw: dict = {}  # the published device (never changed)

    @property
    def attributes(self) -> dict:
        """Attribute name -> its value (read only by -o wide and the structured outputs)."""
        return _attribute_values(self.raw)

    @property
    def capacity(self) -> dict:
        return _capacity_values(self.raw)

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"

    def to_dict(self) -> dict:
        return {
            "driver": self.driver,
            "pool": self.pool,
            "device": self.device,
            "node": self.node,
            "where": self.where,
            "classes": self.classes,  # tuples: both JSON encoders write them as arrays
            "state": self.state,
            "detail": self.detail,
            "claims": self.claims,
            "pods": self.pods,
            "taints": self.taints,
            "attributes": _attribute_values(self.raw),
            "capacity": _capacity_values(self.raw),
        }


def _attribute_values(raw: dict) -> dict:
    return {k: _value(v) for k, v in (raw.get("attributes") or {}).items() if isinstance(v, dict)}


def _capacity_values(raw: dict) -> dict:
    return {k: v.get("value") for k, v in (raw.get("capacity") or {}).items() if isinstance(v, dict)}


@dataclass(frozen=True)
class Headroom:
    """How many more devices of one partition type (one counter-consumption profile) fit in a pool, one after
    another, with the counters its allocated devices leave."""

    driver: str
    pool: str
    shape: str  # the consumption profile, e.g. "cs-0: memory=10Gi, slots=1"
    example: str  # one device of that profile
    free: int  # devices of that profile not allocated
    fit: int  # of those, how many can still be allocated together

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("driver", "pool", "shape", "example", "free", "fit")}


@dataclass(frozen=True)
class InventoryReport:
    rows: tuple[DeviceRow, ...]
    headroom: tuple[Headroom, ...]
    semantics: dict
    filters: dict
    total: int  # devices before the filters
    unseen: tuple[str, ...] = ()  # what could not be read (slices, classes, claims): the states may be incomplete
    where_errors: tuple[str, ...] = ()
    # per pool, counter set and counter: capacity, used by allocated devices, left
    counters: tuple[dict, ...] = ()
    # ResourcePoolStatusRequests' counts beside ours, counted as upstream counts them (analyze/devices/pool_status.py)
    pool_status: tuple[dict, ...] = ()
    # per node and driver of the listed node-local devices, the driver's kubelet plugin there (node_plugins.py)
    plugins: tuple = ()
    # --driver D that a DeviceClass names and no ResourceSlice publishes: is a plugin deployed, does it run
    # (driver.judge_publishing, the driver piece's own rule)
    publishing: tuple = ()
    # where a ResourcePoolStatusRequest's counts differ from ours (DRA023) or bound them (DRA106)
    findings: tuple = ()

    states = STATES

    @property
    def determined(self) -> bool:
        """Whether every kind the states read was read (else the inventory is incomplete: exit 2)."""
        return not self.unseen

    def plain(self) -> "InventoryReport":
        """This report as plain data, which a process pickles (a fleet scan's, cli/fleet.py): it is already."""
        return self

    def holders(self) -> list[dict]:
        """The pods using the listed devices and through which claims (with --node: what a drain or a driver
        upgrade of that node needs)."""
        out: dict = {}
        for r in self.rows:
            for p in r.pods:
                h = out.setdefault(p, {"pod": p, "claims": set(), "devices": []})
                h["claims"].update(r.claims)
                h["devices"].append(r.id)
        return [dict(h, claims=sorted(h["claims"])) for _, h in sorted(out.items())]

    def summary(self, by: str) -> list[dict]:
        """Counts per node, pool, class or driver: total and per state."""
        counts: Counter = Counter()
        if by == "class":
            for r in self.rows:
                for k in r.classes or ("<none>",):
                    counts[k, r.state] += 1
        else:
            key = {
                "node": lambda r: r.node or r.where,
                "pool": lambda r: f"{r.driver}/{r.pool}",
                "driver": lambda r: r.driver,
            }[by]
            counts.update((key(r), r.state) for r in self.rows)
        groups: dict[str, dict] = {}
        for (k, state), n in counts.items():
            g = groups.get(k)
            if g is None:
                g = groups[k] = {by: k, "devices": 0, **dict.fromkeys(STATES, 0)}
            g["devices"] += n
            g[state] += n
        return [groups[k] for k in sorted(groups)]

    def _with_plugins(self, by_node: list[dict]) -> list[dict]:
        """The node summary with each node's plugin status per driver (driver -> serving, not-ready, ...)."""
        per: dict = {}
        for p in self.plugins:
            per.setdefault(p.node, {})[p.driver] = p.status
        return [dict(g, plugins=per.get(g["node"], {})) for g in by_node]

    @cached_property
    def state_counts(self) -> dict[str, int]:
        """Devices per state (every state, zero included)."""
        n = Counter(r.state for r in self.rows)
        return {s: n[s] for s in STATES}

    def to_dict(self, items: bool = True) -> dict:
        """items=False leaves the device list out (render/devices.py streams it after the rest)."""
        out = {
            "apiVersion": SCHEMA_VERSION,
            "kind": "DeviceInventory",
            "filters": self.filters,
            "summary": {
                "devices": len(self.rows),
                "devicesBeforeFilters": self.total,
                **self.state_counts,
                "byNode": self._with_plugins(self.summary("node")),
                "byPool": self.summary("pool"),
                "byClass": self.summary("class"),
                "byDriver": self.summary("driver"),
            },
            "headroom": [h.to_dict() for h in self.headroom],
            "counters": list(self.counters),
            "poolStatusRequests": list(self.pool_status),
            **({"findings": [f.to_dict() for f in self.findings]} if self.pool_status else {}),
            "plugins": [p.to_dict() for p in self.plugins],
            "publishing": [
                {"driver": p.driver, "state": p.state, "message": p.message, "daemonset": p.daemonset}
                for p in self.publishing
            ],
            "unseen": list(self.unseen),
            "whereErrors": list(self.where_errors),
            "semantics": self.semantics,
        }
        if items:
            out["items"] = [r.to_dict() for r in self.rows]
        return out


def _value(a: dict):
    for k in ("string", "int", "bool", "version"):
        if k in a:
            return a[k]
    for k in ("strings", "ints", "bools", "versions"):
        if k in a:
            return list(a[k])
    return None


_DECIMAL = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))


def _like(value, template) -> str:
    """value spelled in the format of the device's capacity (decimal suffixes for "100G", binary for "80Gi")."""
    if isinstance(template, str) and template and not template.endswith("i") and value.denominator == 1 and value:
        for suffix, mult in _DECIMAL:
            if value.numerator % mult == 0:
                return f"{value.numerator // mult}{suffix}"
    return format_quantity(value)


def _health(snap: Snapshot) -> dict[str, tuple[str, str]]:
    """Device ID -> (health, message) for every device a pod's status reports as not Healthy (KEP-4680)."""
    out: dict = {}
    for p in snap.pods:
        st = p.get("status") or {}
        for key in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"):
            for cs in st.get(key) or []:
                for ars in (cs.get("allocatedResourcesStatus") or []) if isinstance(cs, dict) else []:
                    for res in (ars.get("resources") or []) if isinstance(ars, dict) else []:
                        if isinstance(res, dict) and (res.get("health") or "Unknown") != "Healthy":
                            out[str(res.get("resourceID", ""))] = (
                                res.get("health") or "Unknown",
                                res.get("message") or "",
                            )
    return out


def _blocking_taints(device: dict, sem: Semantics) -> list[dict]:
    if not sem.device_taints:
        return []
    return [t for t in device.get("taints") or [] if isinstance(t, dict) and t.get("effect") in _BLOCKING_EFFECTS]


def _taint_text(t: dict) -> str:
    src = f" (DeviceTaintRule {t['rule']})" if t.get("rule") else ""
    return f"{t.get('key')}={t.get('value', '')}:{t.get('effect')}{src}"


def inventory(
    snap: Snapshot, sem: Semantics, filters: dict | None = None, base: Analysis | None = None
) -> InventoryReport:
    """filters: node, driver, class, pool, free, labels (a node-label matcher), where (a device selector CEL
    expression): applied after the states are known (a filter never changes a state). base: an analysis of the
    same snapshot to share (its indexes, devices and CEL results; the report's, which judged the queue on it)."""
    filters = dict(filters or {})
    an = base.fork() if base is not None else Analysis(snap, sem)
    where = None
    errors: list[str] = []
    if filters.get("where"):
        compiled, err = an.ev.compile(filters["where"])
        if compiled is None:
            raise DraError(f"--where: {' '.join(str(err).split())}")
        selectors = [{"cel": {"expression": filters["where"]}}]

        def where(e: DeviceEntry) -> bool:
            ok, _, detail = evaluate_selectors(an.ev, selectors, e)
            if ok is None and len(errors) < 3:
                errors.append(f"{e.id}: {detail.get('error')}")
            return bool(ok)

    state = an.allocated_state()
    counters = CounterView(an.universe, state, sem)
    health = _health(snap)
    claims = {f"{ns_of(c)}/{name_of(c)}": c for c in snap.claims}
    pods = {(ns_of(p), name_of(p)): p for p in snap.pods}
    nodes = {name_of(n): n for n in snap.nodes}
    classes = [(n, (c.get("spec") or {}).get("selectors") or []) for n, c in sorted(an.idx.classes.items())]
    classes = [(n, sels, keyer(an.ev, sels)) for n, sels in classes]
    filtered = any(filters.values())  # _keep reads an empty value as no filter
    rows: list[DeviceRow] = []
    for e in an.universe.entries:
        row = _row(e, an, classes, state, health, claims, pods, counters)
        if not filtered or _keep(row, e, filters, nodes, where):
            rows.append(row)
    listed_pools = {(r.driver, r.pool) for r in rows}
    # the driver piece's reads (DaemonSets) are not the inventory's: refused, the plugins say "unknown" and why
    # of the kinds a dump may lack, templates and events tell nothing about devices
    gaps = [g for g in snap.gaps if g.resource not in DRIVER_PIECE_READS and g.resource not in UNUSED_ABSENT]
    pool_status = ()
    if snap.pool_status_requests:  # counted over every device, whatever the filters list
        counts = counts_as_upstream(snap.slices, an.universe.entries, state)
        pool_status = tuple(upstream_pool_status(snap.pool_status_requests, counts))
    return InventoryReport(
        tuple(rows),
        tuple(headroom(an, counters, state, listed_pools)),
        sem.to_dict(),
        {k: v for k, v in filters.items() if v and k != "labels"},
        len(an.universe.entries),
        tuple(unseen_words(g) for g in gaps),
        tuple(errors),
        tuple(counter_usage(an, counters, listed_pools)),
        pool_status,
        tuple(node_plugins(snap, rows)),
        _publishing(snap, filters.get("driver")),
        tuple(pool_status_findings(pool_status, gaps)),
    )


def unseen_words(g) -> str:
    """What could not be seen, as the answer's unseen[] says it: a read refused, or a kind the input holds none of."""
    return g.message if g.reason == "absent" else f"could not {g.verb} {g.resource}: {g.message}"


# The kinds a dump may lack (gather/files.py absent_gaps) that the inventory does not read.
UNUSED_ABSENT = ("resourceclaimtemplates.resource.k8s.io", "events")


def _publishing(snap: Snapshot, driver: str | None) -> tuple:
    """The driver asked for publishes no ResourceSlice at all (check_device_filters let it through because a
    DeviceClass names it): why, as the driver piece says it."""
    if not driver or any((s.get("spec") or {}).get("driver") == driver for s in snap.slices):
        return ()
    from kubectl_dra.analyze.pod.driver import judge_publishing
    from kubectl_dra.analyze.pod.kubelet import seen_of

    return (judge_publishing(seen_of(snap), driver),)


def _row(e: DeviceEntry, an: Analysis, classes, state, health, claims, pods, counters: CounterView) -> DeviceRow:
    d = e.device
    ev = an.ev
    member = tuple([n for n, sels, key in classes if evaluate_selectors(ev, sels, e, key)[0]])
    owned = state.owners.get(e.did)
    owners = tuple(owned) if owned else ()
    holders = []
    for ref in owners:
        c = claims.get(ref)
        for rf in ((c or {}).get("status") or {}).get("reservedFor") or []:
            if rf.get("resource") == "pods":
                p = pods.get((ref.split("/", 1)[0], rf.get("name", "")))
                phase = shown_phase(p) if p is not None else "not found"  # Terminating as kubectl shows it
                holders.append(f"{ref.split('/', 1)[0]}/{rf.get('name', '')} ({phase})")
    taints = tuple(_blocking_taints(d, an.sem)) if d.get("taints") else ()
    hurt = health.get(device_id_str(e.did)) if health else None
    if e.ignored or not e.pool_usable:
        st, detail = "unusable", e.ignored or f"pool {e.pool_key[1]} is {e.pool_state}"
    elif hurt is not None:
        st, detail = "unhealthy", f"{hurt[0]}{': ' + hurt[1] if hurt[1] else ''}"
    elif e.did in state.devices:
        st, detail = "allocated", "claim " + ", ".join(owners)
    elif e.did in state.aggregated_capacity:
        used = state.aggregated_capacity[e.did]
        cap = {k: (v or {}).get("value") for k, v in (d.get("capacity") or {}).items() if isinstance(v, dict)}
        parts = [f"{k} {_like(v, cap.get(k))} of {cap.get(k, '?')}" for k, v in sorted(used.items())]
        st, detail = (
            "shared",
            f"{len(owners)} share(s) ({', '.join(owners)})" + (f"; consumed {', '.join(parts)}" if parts else ""),
        )
    elif d.get("consumesCounters") and an.sem.partitionable and (short := counters.shortfall(e)):
        st, detail = "exhausted", short[0]
    elif taints:
        st, detail = "tainted", "; ".join(_taint_text(t) for t in taints)
    else:
        st, detail = "free", ""
    return DeviceRow(
        e.did[0],
        e.did[1],
        e.did[2],
        e.where(),
        e.node_name,
        member,
        st,
        detail,
        owners,
        tuple(holders),
        taints,
        d,
    )


def _keep(row: DeviceRow, e: DeviceEntry, f: dict, nodes: dict, where) -> bool:
    if (
        f.get("node")
        and row.node != f["node"]
        and not (row.node is None and f["node"] in nodes and e.reachable_from(nodes[f["node"]]))
    ):
        return False
    if f.get("driver") and row.driver != f["driver"]:
        return False
    if f.get("pool") and row.pool != f["pool"]:
        return False
    if f.get("class") and f["class"] not in row.classes:
        return False
    if f.get("free") and row.state != "free":
        return False
    if f.get("labels") is not None:
        reach = [n for n in nodes.values() if f["labels"]((n.get("metadata") or {}).get("labels"))]
        if not any(e.reachable_from(n) for n in reach):
            return False
    return where is None or where(e)


def headroom(an: Analysis, counters: CounterView, state, pools: set) -> list[Headroom]:
    """Per pool with shared counters and per partition type (the counters a device consumes), how many more of
    that type can be allocated one after another: each candidate is checked against the counters left as the
    allocator checks it (first_exceeded), then consumes them. Types compete for the same counters, so the figures
    are alternatives ("3 more of these, or 1 more of those"), not a sum."""
    by_type: dict[tuple, list[DeviceEntry]] = {}
    for e in an.universe.entries:
        d = e.device
        if not d.get("consumesCounters") or (e.did[0], e.did[1]) not in pools or e.ignored or not e.pool_usable:
            continue
        shape = json.dumps(d.get("consumesCounters"), sort_keys=True)
        by_type.setdefault((e.did[0], e.did[1], shape), []).append(e)
    out = []
    for (driver, pool, shape), entries in sorted(by_type.items()):
        free = [e for e in entries if not state.is_allocated(e.did)]
        if not free:
            out.append(Headroom(driver, pool, _shape_text(shape), entries[0].did[2], 0, 0))
            continue
        scope = counters.scope(free[0])
        consumed: dict = {}
        fit = 0
        for e in free:
            add_consumption(consumed, e.device, +1)
            if first_exceeded(scope.available, consumed) is None:
                fit += 1
            else:
                add_consumption(consumed, e.device, -1)
        out.append(Headroom(driver, pool, _shape_text(shape), free[0].did[2], len(free), fit))
    return out


def counter_usage(an: Analysis, counters: CounterView, pools: set) -> list[dict]:
    """Each shared counter of the listed pools: its capacity, what allocated devices consume, what is left."""
    out = []
    seen: set = set()
    for e in an.universe.entries:
        pool = e.pool
        if pool is None or not pool.counter_sets or (e.did[0], e.did[1]) not in pools or e.ignored or not e.pool_usable:
            continue
        if not e.device.get("consumesCounters"):
            continue
        scope = counters.scope(e)
        if scope.key in seen:
            continue
        seen.add(scope.key)
        for set_name, caps in sorted(pool.counter_sets.items()):
            left = scope.available.get(set_name, {})
            for counter, cap in sorted(caps.items()):
                rest = left.get(counter, cap)
                out.append(
                    {
                        "driver": e.did[0],
                        "pool": e.did[1],
                        "counterSet": set_name,
                        "counter": counter,
                        "capacity": format_quantity(cap),
                        "used": format_quantity(cap - rest),
                        "left": format_quantity(max(rest, 0 * rest)),
                    }
                )
    return out


def _shape_text(shape: str) -> str:
    parts = []
    for cc in json.loads(shape):
        counters = ", ".join(f"{k}={(v or {}).get('value')}" for k, v in sorted((cc.get("counters") or {}).items()))
        parts.append(f"{cc.get('counterSet')}: {counters}")
    return "; ".join(parts)
