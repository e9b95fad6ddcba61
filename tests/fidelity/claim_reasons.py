"""Claim-level reasons against upstream's own search (issue 29 item 4; the rule is in docs/fidelity.md).

When Allocate finds nothing, the engine's search records the deepest position (claim, request, device slot) it
reached and why the device visits there were rejected (kubectl_dra/analyze/allocator/why.py). The oracle records
the same from upstream's search (tests/oracle/src/trace.go deepestRecord): the deepest position allocateOne logged
("Allocating one device", or "no devices found" for a request for all devices) and the V(7) entries of every visit
of it. Upstream logs no reason class, so this module reads one from those entries by the engine's definition:
each visit's verdict (reasons.visits, as for the per-device reasons) becomes a class, and the class of the
position is the first of why.PRECEDENCE that occurs. Compared: the position (claim, request, slot) and the class;
the set of classes seen there is counted apart (how often that agrees too).
"""

from __future__ import annotations

import collections
from typing import Any

try:
    from . import reasons
except ImportError:  # run as a script (compare.py)
    import reasons  # type: ignore

from kubectl_dra.analyze.allocator.why import NAMES, PRECEDENCE

# A visit's verdict (reasons._stage) -> the class of why.py; in-use and shared-in-use depend on who holds the device.
_CLASS = {"capacity": "capacity", "counters": "counters", "constraint": "constraint", "compatibility": "compatibility"}


def _cluster_devices(scenario: dict) -> tuple[set, set]:
    """Device IDs allocated outside the search (allocatedClaims, as the oracle's allocatedState builds them):
    exclusively, and as shares (consumable capacity)."""
    consumable = bool((scenario.get("featureGates") or {}).get("DRAConsumableCapacity"))
    exclusive, shared = set(), set()
    for c in scenario.get("allocatedClaims") or []:
        for r in (((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []:
            if r.get("adminAccess"):
                continue
            did = f"{r.get('driver', '')}/{r.get('pool', '')}/{r.get('device', '')}"
            (shared if consumable and r.get("shareID") else exclusive).add(did)
    return exclusive, shared


def _resumes(version: tuple, implementation: str) -> bool:
    """A later slot resumes after the previous pick (1.36+ incubating/experimental, 1.38 stable too)."""
    return version >= (1, 36) and (implementation != "stable" or version >= (1, 38))


def _all_mode(scenario: dict, claim: int, request: int, sub: int) -> bool:
    try:
        req = ((scenario["claims"][claim].get("spec") or {}).get("devices") or {}).get("requests")[request]
    except (IndexError, KeyError, TypeError):
        return False
    body = (req.get("firstAvailable") or [])[sub] if req.get("firstAvailable") and sub >= 0 else req.get("exactly")
    return ((body or {}).get("allocationMode") or "ExactCount") == "All"


def upstream_outcome(rec: dict, scenario: dict, implementation: str) -> dict | None:
    """{"claim", "request", "slot", "reason", "classes"} from one deepestRecord; None when a visit's verdict is
    unknown (not comparable)."""
    version = tuple(int(x) for x in str(scenario.get("version", "1.37")).split(".")[:2])
    known = {
        f"{(s.get('spec') or {}).get('driver', '')}/{((s.get('spec') or {}).get('pool') or {}).get('name', '')}/"
        f"{d.get('name', '')}"
        for s in scenario.get("slices") or []
        for d in (s.get("spec") or {}).get("devices") or []
    }
    exclusive, shared = _cluster_devices(scenario)
    counts: collections.Counter = collections.Counter()
    for v in reasons.visits(rec.get("entries") or [], scenario.get("claims") or [], known, version < (1, 36)):
        st = v["stage"]
        if st == "unknown":
            return None
        if st == "allocated":
            continue
        if st == "in-use":
            counts["no-candidate" if v["device"] in exclusive else "distinct"] += 1
        elif st == "shared-in-use":
            counts["no-candidate" if v["device"] in shared else "distinct"] += 1
        else:
            counts[_CLASS.get(st, "no-candidate")] += 1
    slot, claim, request, sub = rec["slot"], rec["claim"], rec["request"], rec.get("subRequest", 0)
    all_mode = _all_mode(scenario, claim, request, sub)
    if slot > 0 and _resumes(version, implementation) and not all_mode:
        counts["distinct"] += 1  # the devices before the previous pick are not looked at again
    if all_mode and not rec.get("noDevices") and not counts:
        # allocateDevice rejected the request's next device without a log: a taint (its only silent check)
        counts["no-candidate"] += 1
    reason = next((NAMES[k] for k in PRECEDENCE if counts[NAMES[k]]), "no-candidate")
    return {"claim": claim, "request": request, "slot": slot, "reason": reason, "classes": sorted(counts)}


def compare_claim(oracle_out: dict[str, Any], ours: dict[str, Any], scenario: dict[str, Any]):
    """(disagreements, counts) of the claim-level outcome: compared when both searches found nothing."""
    stats: collections.Counter = collections.Counter()
    diffs: list[dict[str, Any]] = []
    if (oracle_out.get("allocation") or {}).get("outcome") != "unallocatable":
        return diffs, stats
    if (ours.get("allocation") or {}).get("outcome") != "unallocatable":
        return diffs, stats  # an outcome disagreement, reported as such
    recs = oracle_out.get("deepestAlternatives") or ([oracle_out["deepest"]] if oracle_out.get("deepest") else [])
    mine = ours.get("claimOutcome")
    if not recs or mine is None:
        stats["missing"] += 1
        return diffs, stats
    impl = oracle_out.get("implementation", "")
    ups = [upstream_outcome(r, scenario, impl) for r in recs]
    if any(u is None for u in ups):
        stats["skipped"] += 1
        return diffs, stats
    stats["compared"] += 1
    key = lambda o: (o["claim"], o["request"], o["slot"])  # noqa: E731
    same = [u for u in ups if key(u) == key(mine) and u["reason"] == mine["reason"]]
    if same:
        stats["agreed"] += 1
        if any(u["classes"] == sorted(mine["classes"]) for u in same):
            stats["classes-agreed"] += 1
        return diffs, stats
    kind = "position" if all(key(u) != key(mine) for u in ups) else "reason"
    stats["disagreed-" + kind] += 1
    diffs.append(
        {
            "kind": "claim-reason",
            "detail": {
                "what": kind,
                "upstream": ups[0],
                "upstreamAlternatives": len(ups),
                "ours": {k: mine[k] for k in ("claim", "request", "slot", "reason")}
                | {"classes": sorted(mine["classes"])},
                "deterministic": oracle_out.get("deterministic"),
            },
        }
    )
    return diffs, stats
