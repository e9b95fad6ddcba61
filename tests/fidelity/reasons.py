"""Per-device reasons against upstream's own per-device decisions (issue 11; the rule is in docs/fidelity.md).

The oracle records the V(7) log of the allocator's first run (tests/oracle/src/trace.go): one entry per decision
about a device, tagged with the search position (claim, request, subrequest, device slot) it was made at. The
engine answers, for the same node, every check that rejects each device for each request
(`kubectl_dra.analyze.devices.checks.device_checks`, what `explain` shows the first of). This module cuts the trace into
visits (one look of the search at one device for one request), reads upstream's verdict of each first visit and
checks it against the engine's checks taken in upstream's order.
"""

from __future__ import annotations

import collections
from typing import Any

# Messages that end a visit of the search loop (allocateOne) to a device.
_LOOP_END = {
    "Device not selectable",
    "Device not usable",
    "Skip comparing device capacity request",  # 1.34-1.36: a capacity that cannot be compared skips the device
}
# "Device allocated" does not end a visit: 1.37's allocateDevice logs it before rechecking the capacity of a shared
# device ("Device capacity not enough", logged with the device object) and rolling back without a log.
# Bookkeeping of an allocation or its undo, logged after the visit that made it: not part of any visit.
_BOOKKEEPING = {"Device removed from constraint set", "Device capacity allocated"}

# Messages naming the check that rejected the device, as the engine's stage names.
_REJECTIONS = {
    "Device in use": "in-use",
    "Device in use in same claim": "in-use",
    # 1.38 allocateDevice, right after its "Device in use": a device that does not allow multiple allocations (any
    # more) while a share of it is allocated or being allocated (deviceCapacityInUse); after allocateOne's capacity
    # check, so its own place in UPSTREAM_ORDER.
    "Device has an active shared allocation, cannot be allocated exclusively": "shared-in-use",
    "Device capacity not enough": "capacity",
    "Skip comparing device capacity request": "capacity",
    "Failed to compare device capacity request": "capacity",
    "Failed to compare device capacity request on allocateDevice": "capacity",
    "Device consumes counters, but the partitionable devices feature is not enabled": "feature",
    "Device requires optional node operations, but the optional node operations feature is not enabled": "feature",
    "Device requires DRAOptionalNodeOperations but node lacks it": "node-operations",
    "Incompatible compatibility groups": "compatibility",
    "Insufficient counters": "counters",
}

# What a capacity check logs when it rejects a device after "Device allocated" (1.34/1.35: an error comparing).
_CAPACITY_AFTER = ("Device capacity not enough", "Failed to compare device capacity request")

# Checks whose answer depends on what the search has in flight (the engine sees the cluster's allocations only).
STATEFUL = {"in-use", "shared-in-use", "counters", "capacity", "compatibility"}


# The order upstream checks a device in, the same in every minor and channel (allocator_<channel>.go allocateOne:
# in use, isSelectable (binding conditions gate, class and request selectors, per-device node selection), consumable
# capacity; then allocateDevice: in use, optional node operations, partitionable gate, compatibility groups, counters,
# taints, constraints).
UPSTREAM_ORDER = [
    "in-use",
    "binding",
    "class",
    "cel-error",
    "request",
    "node",
    "capacity",
    "shared-in-use",  # allocateDevice (1.38): no exclusive allocation of a device with an active share
    "node-operations",  # allocateDevice (1.37 experimental): the node must declare DRAOptionalNodeOperations
    "feature",
    "compatibility",  # allocateDevice (1.37+ with DRADeviceCompatibilityGroups), before the counters
    "counters",
    "taint",
    "capacity-indexed",  # 1.34's second capacity check, in allocateDevice after the constraints
]
# From 1.37 a request for all devices checks only each device's static capacity while its list is made
# (validateDeviceRequest, "Device static capacity insufficient": left out of the visits), and what shares in use take
# of it in allocateDevice, after the counters, taints and constraints: there the engine's "capacity" is that check.
ALL_MODE_ORDER = [s for s in UPSTREAM_ORDER if s != "capacity"]
ALL_MODE_ORDER.insert(ALL_MODE_ORDER.index("taint") + 1, "capacity")


def _request_name(claims: list[dict], ci: int, ri: int, si: int) -> str | None:
    try:
        req = ((claims[ci].get("spec") or {}).get("devices") or {}).get("requests")[ri]
    except (IndexError, TypeError):
        return None
    subs = req.get("firstAvailable") or []
    if subs:
        return f"{req.get('name', '')}/{subs[si].get('name', '')}" if 0 <= si < len(subs) else None
    return req.get("name", "")


def _all_mode_requests(claims: list[dict]) -> set[tuple[int, str]]:
    """(claim index, request name as visits name it) of every request or subrequest for all devices."""
    out = set()
    for ci, c in enumerate(claims):
        for req in ((c.get("spec") or {}).get("devices") or {}).get("requests") or []:
            if (req.get("exactly") or {}).get("allocationMode") == "All":
                out.add((ci, req.get("name", "")))
            for sub in req.get("firstAvailable") or []:
                if sub.get("allocationMode") == "All":
                    out.add((ci, f"{req.get('name', '')}/{sub.get('name', '')}"))
    return out


def _decided(msgs: list[dict]) -> bool:
    """The visit already has upstream's verdict (a rejection or the allocation): a constraint's device-less
    verdict after it is the next device's (allocateDevice checks the constraints after in use, counters and taints,
    before "Device allocated")."""
    for m in msgs:
        n = m.get("msg", "")
        if n == "Device allocated" or n in _REJECTIONS or n in _LOOP_END:
            return True
        if n == "CEL result" and (m.get("err") or m.get("matches") is False):
            return True
    return False


def visits(trace: list[dict], claims: list[dict], known: set[str], legacy: bool = False) -> list[dict]:
    """The trace cut into visits: {"claim", "request", "device", "stage", "inFlight"}, in order. Entries made while
    the claims are validated (claim -1: allocationMode All) are left out. An entry without a known device (a
    constraint's verdict, a capacity recheck that logs the device object) belongs to the visit it is part of.
    legacy: the allocator is a 1.34/1.35 one, whose failed capacity check after "Device allocated" leaves the
    device marked in use (Behaviour.legacy_allocate_device)."""
    out: list[dict] = []
    in_flight: collections.Counter = collections.Counter()
    cur: dict | None = None
    pending: list[tuple] = []  # device-less entries waiting for the visit they precede

    def close():
        nonlocal cur
        if cur is not None:
            out.append(cur)
        cur = None

    for e in trace:
        msg = e.get("msg", "")
        if msg in _BOOKKEEPING:
            continue
        if msg == "Device deallocated":
            close()
            in_flight[e.get("device")] -= 1
            continue
        if e.get("claim", -1) < 0:
            continue
        dev = e.get("device") if e.get("device") in known else None
        pos = (e.get("claim"), e.get("request"), e.get("subRequest"), e.get("slot"))
        if cur is not None and dev is None and (pos != cur["_pos"] or _decided(cur["_msgs"])):
            # A device-less verdict at another position (the recursion's first device), or after the visit's own
            # verdict ("Device in use", "Device allocated"), opens the next visit.
            close()
        if cur is None or (dev is not None and (dev != cur["device"] or pos != cur["_pos"])):
            close()
            if dev is None:
                # A verdict logged before the device's first own entry (a constraint of an admin-access request
                # that has no selectors): it opens the device's visit.
                if not pending or pending[-1][0] == pos:
                    pending.append((pos, e))
                else:
                    pending[:] = [(pos, e)]
                continue
            cur = {
                "claim": pos[0],
                "request": _request_name(claims, pos[0], pos[1], pos[2]),
                "device": dev,
                "slot": pos[3],
                "_pos": pos,
                "_msgs": [],
                "inFlight": sum(1 for v in in_flight.values() if v > 0),
            }
            cur["_msgs"].extend(x for p, x in pending if p == pos)
            pending.clear()
        cur["_msgs"].append(e)
        if msg == "Device allocated":
            in_flight[cur["device"]] += 1
        elif not legacy and msg.startswith(_CAPACITY_AFTER) and "Device allocated" in (m["msg"] for m in cur["_msgs"]):
            in_flight[cur["device"]] -= 1  # rolled back (before 1.36 the mark stays: a leak upstream)
        if msg in _LOOP_END:
            close()
    close()
    for v in out:
        v["stage"] = _stage(v.pop("_msgs"))
        v.pop("_pos")
    return out


def _stage(msgs: list[dict]) -> str:
    """Upstream's verdict of one visit, from its messages."""
    names = [m.get("msg", "") for m in msgs]
    if "Device allocated" in names:
        after = names[names.index("Device allocated") + 1 :]
        return "capacity" if any(n.startswith(_CAPACITY_AFTER) for n in after) else "allocated"
    for m in msgs:
        if m.get("msg") == "CEL result":
            if m.get("err"):
                return "cel-error"
            if m.get("matches") is False:
                return "class" if m.get("source") == "class" else "request"
    for n in names:
        if n in _REJECTIONS:
            return _REJECTIONS[n]
    if "Device not selectable" in names:
        return "unselectable"  # neither selector said no: binding conditions gate, or per-device node selection
    # Constraint verdicts: 1.34-1.37 "<Type> values different/duplicated", "... type unknown", "Unknown attribute type"
    # (a list value without DRAListTypeAttributes, e.g. a derived one); 1.38 "Attribute values don't match", "Attribute
    # types don't match", "Attribute values have no common elements", "<Type> values duplicated".
    if any(
        "onstraint" in n
        or "values" in n
        or "types don't match" in n
        or "common elements" in n
        or "type unknown" in n
        or n == "Unknown attribute type"
        for n in names
    ):
        return "constraint"
    if "Device not usable" in names:
        return "taint"  # allocateDevice's only check that logs nothing
    return "unknown"


def compare_reasons(
    oracle_out: dict[str, Any], ours: dict[str, Any], scenario: dict[str, Any]
) -> tuple[list[dict[str, Any]], collections.Counter]:
    """Disagreements between upstream's first visit of each (claim, request, device) and the engine's checks, and
    counts: visits compared and agreed, devices the engine says the allocator never looks at."""
    stats: collections.Counter = collections.Counter()
    diffs: list[dict[str, Any]] = []
    trace = oracle_out.get("trace")
    reasons = ours.get("reasons")
    if trace is None or reasons is None:
        return diffs, stats
    if oracle_out.get("traceTruncated"):
        stats["truncated"] += 1
    ourmap = {(r["claim"], r["request"], r["device"]): r["stages"] for r in reasons}
    known = {r["device"] for r in reasons}
    rank = {s: i for i, s in enumerate(UPSTREAM_ORDER)}
    version = tuple(int(x) for x in str(scenario.get("version", "1.37")).split(".")[:2])
    all_rank = {s: i for i, s in enumerate(ALL_MODE_ORDER)} if version >= (1, 37) else rank
    all_mode = _all_mode_requests(scenario.get("claims") or [])
    legacy = version < (1, 36)
    seen: set = set()
    sets_of = _counter_sets(scenario) if legacy else {}
    shared = _shared_devices(scenario) if legacy else set()
    leaked: set = set()  # counter sets that rejected candidates left consumed (1.34/1.35)
    for v in visits(trace, scenario.get("claims") or [], known, legacy):
        key = (v["claim"], v["request"], v["device"])
        first_visit = key not in seen and v["request"] is not None
        leak = v["stage"] == "counters" and bool(sets_of.get(v["device"], set()) & leaked)
        if legacy and (v["stage"] in ("taint", "constraint") or (v["stage"] == "allocated" and v["device"] in shared)):
            # Before 1.36 allocateDevice reserves the device's counters before the taint and constraint checks
            # and does not give them back when one of those rejects it, nor when it deallocates a device that
            # allows multiple allocations (only the else branch of its undo releases counters): later devices of
            # the set find them used.
            leaked |= sets_of.get(v["device"], set())
        if not first_visit:
            continue
        seen.add(key)
        if v["stage"] == "unknown":
            stats["skipped"] += 1
            stats["skipped-" + v["stage"]] += 1
            continue
        stages = ourmap.get(key)
        if version == (1, 34) and stages is not None and (v["slot"] > 0 or v["stage"] == "constraint"):
            # 1.34's second capacity check reads the device at the request's slot (an upstream bug), after the
            # constraints and after logging "Device allocated"; the engine's checks are those of the first slot.
            stages = [x for x in stages if x != "capacity-indexed"]
            if v["slot"] > 0 and v["stage"] == "capacity" and not stages:
                stats["skipped"] += 1
                stats["skipped-1.34-slot-capacity"] += 1
                continue
        stats["compared"] += 1
        if stages is None:
            ok, expected = False, "no such request or device"
        elif "pool" in stages:
            ok, expected = False, "never looked at (pool)"
        else:
            order = all_rank if (v["claim"], v["request"]) in all_mode else rank
            checks = sorted((s for s in stages if s in order), key=order.get)
            expected = checks[0] if checks else "passes"
            ok = _agrees(v["stage"], checks, order, v["inFlight"] or leak)
        if ok:
            stats["agreed"] += 1
        else:
            diffs.append(
                {
                    "kind": "reason",
                    "detail": {
                        "claim": v["claim"],
                        "request": v["request"],
                        "device": v["device"],
                        "upstream": v["stage"],
                        "ours": expected,
                        "oursAll": stages,
                        "inFlight": v["inFlight"],
                    },
                }
            )
    return diffs, stats


def _counter_sets(scenario: dict) -> dict[str, set]:
    """Device ID -> the (driver, pool, counter set) keys it consumes, from the scenario's slices."""
    out: dict[str, set] = {}
    for sl in scenario.get("slices") or []:
        spec = sl.get("spec") or {}
        driver, pool = spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")
        for d in spec.get("devices") or []:
            sets = {(driver, pool, c.get("counterSet", "")) for c in d.get("consumesCounters") or []}
            if sets:
                out.setdefault(f"{driver}/{pool}/{d.get('name', '')}", set()).update(sets)
    return out


def _shared_devices(scenario: dict) -> set[str]:
    """IDs of the devices that allow multiple allocations."""
    out = set()
    for sl in scenario.get("slices") or []:
        spec = sl.get("spec") or {}
        driver, pool = spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")
        out |= {
            f"{driver}/{pool}/{d.get('name', '')}"
            for d in spec.get("devices") or []
            if d.get("allowMultipleAllocations")
        }
    return out


def _agrees(up: str, checks: list[str], rank: dict, in_flight: int) -> bool:
    """Upstream's verdict of a visit against the engine's failing checks in upstream's order.
    What the search has in flight only adds to what is in use and consumed, so a check upstream passed the engine
    passes too; a stateful rejection upstream made with devices in flight need not be the engine's."""
    if up in ("allocated", "constraint"):
        return not checks  # every check before the constraints passed upstream
    first = checks[0] if checks else None
    if first == "capacity-indexed":  # 1.34's second capacity check logs as the first does
        if up == "capacity":
            return True
        if up in STATEFUL and in_flight:
            return True  # it comes last
    if up == "unselectable":
        return first in ("binding", "node")
    if up in STATEFUL and in_flight:
        return first is None or rank[first] >= rank[up]
    return first == up
