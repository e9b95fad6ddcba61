"""Upstream's own allocator test table as a second source of scenarios (issue 11).

tests/oracle/table/record.sh runs `allocatortesting.TestAllocator` (the hand-written cases in
k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting) of each minor against the real allocator
and records every Allocate call: its features, classes, slices, node, claims and allocated state. Each becomes an
oracle scenario here, and goes through the same comparison as the generated ones (compare.judge: CEL, allocation,
per-device reasons).

    python tests/fidelity/upstream_table.py [--versions 1.37,1.38]
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE.parents[1]) not in sys.path:
    sys.path.insert(0, str(HERE.parents[1]))

# structured.Features field -> the feature gates the scheduler plugin builds it from (AllocatorFeatures).
FEATURE_GATES = {
    "AdminAccess": ["DRAAdminAccess"],
    "PrioritizedList": ["DRAPrioritizedList"],
    "PartitionableDevices": ["DRAPartitionableDevices"],
    "DeviceTaints": ["DRADeviceTaints"],
    "DeviceBinding": ["DRADeviceBindingConditions"],  # 1.34
    "DeviceStatus": ["DRAResourceClaimDeviceStatus"],  # 1.34
    "DeviceBindingAndStatus": ["DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"],
    "ConsumableCapacity": ["DRAConsumableCapacity"],
    "FractionalCapacityRange": ["DRAFractionalCapacityRange"],
    "ListTypeAttributes": ["DRAListTypeAttributes"],
    "OptionalNodeOperations": ["DRAOptionalNodeOperations"],
    "DerivedAttributes": ["DRADerivedAttributes"],
    "CompatibilityGroups": ["DRADeviceCompatibilityGroups"],
}


def record(version: str) -> Path:
    out = subprocess.run(
        ["bash", str(HERE.parent / "oracle" / "table" / "record.sh"), version],
        check=True,
        capture_output=True,
        text=True,
    )
    return Path(out.stdout.strip().splitlines()[-1])


def _result(d: dict, share: str | None = None, capacity: dict | None = None) -> dict:
    r = {"request": "req", "driver": d["driver"], "pool": d["pool"], "device": d["device"]}
    if share is not None:
        r["shareID"] = share
    if capacity:
        r["consumedCapacity"] = capacity
    return r


def _allocated_claims(case: dict) -> list[dict]:
    """The allocated state as claims (the oracle and the engine build the state from claims, as the plugin does):
    one claim per exclusively allocated device, one per share, the device's aggregated capacity on its first share."""
    results = [_result(d) for d in case.get("allocatedDevices") or []]
    capacity = {(c["driver"], c["pool"], c["device"]): c["capacity"] for c in case.get("aggregatedCapacity") or []}
    given = set()
    for d in case.get("allocatedSharedDevices") or []:
        key = (d["driver"], d["pool"], d["device"])
        results.append(
            _result(
                d,
                d["shareID"] or "00000000-0000-0000-0000-000000000000",
                capacity.get(key) if key not in given else None,
            )
        )
        given.add(key)
    for key, cap in capacity.items():
        if key not in given:
            d = dict(zip(("driver", "pool", "device"), key))
            results.append(_result(d, "00000000-0000-0000-0000-000000000001", cap))
    return [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": f"allocated-{i}", "namespace": "default", "uid": f"allocated-{i}"},
            "spec": {"devices": {"requests": [{"name": "req", "exactly": {"deviceClassName": "none"}}]}},
            "status": {"allocation": {"devices": {"results": [r]}}},
        }
        for i, r in enumerate(results)
    ]


def _kind(objs: list | None, kind: str, namespace: str | None = None) -> list[dict]:
    out = []
    for o in objs or []:
        o = dict(o)
        o.setdefault("apiVersion", "resource.k8s.io/v1")
        o.setdefault("kind", kind)
        if namespace and not (o.get("metadata") or {}).get("namespace"):
            o["metadata"] = {**(o.get("metadata") or {}), "namespace": namespace}
        out.append(o)
    return out


def scenarios(version: str) -> list[dict[str, Any]]:
    """One oracle scenario per recorded Allocate call, in a stable order, ids `table/<minor>/<n>`."""
    cases = [json.loads(line) for line in record(version).read_text().splitlines() if line.strip()]
    cases.sort(key=lambda c: json.dumps({k: v for k, v in c.items() if k not in ("results", "error")}, sort_keys=True))
    out = []
    for i, c in enumerate(cases):
        # DynamicResourceAllocation (GA, locked on) is gone in 1.38: DRA is always on.
        gates = {"DynamicResourceAllocation": True} if int(version.split(".")[1]) < 38 else {}
        for field, on in (c.get("features") or {}).items():
            for g in FEATURE_GATES.get(field, []):
                gates[g] = gates.get(g, True) and on
        node = dict(c.get("node") or {"metadata": {"name": "node-1"}})
        node.setdefault("apiVersion", "v1")
        node.setdefault("kind", "Node")
        out.append(
            {
                "id": f"table/{version}/{i}",
                "version": version,
                "featureGates": gates,
                "node": node,
                "deviceClasses": _kind(c.get("deviceClasses"), "DeviceClass"),
                "claims": _kind(c.get("claims"), "ResourceClaim", "default"),
                "allocatedClaims": _allocated_claims(c),
                "slices": _kind(c.get("slices"), "ResourceSlice"),
                "trace": True,
                "features": sorted(f for f, on in (c.get("features") or {}).items() if on) or ["none"],
            }
        )
    return out


def run(versions: list[str], log=print) -> dict[str, Any]:
    try:
        from . import compare
        from .oracle import Oracle
    except ImportError:
        sys.path.insert(0, str(HERE))
        import compare  # type: ignore
        from oracle import Oracle  # type: ignore

    report: dict[str, Any] = {}
    for v in versions:
        tally: collections.Counter = collections.Counter()
        reasons: collections.Counter = collections.Counter()
        disagreements = []
        with Oracle(v) as oracle:
            for s in scenarios(v):
                out = oracle.evaluate(s)
                status, diffs = compare.judge(s, out, reasons)
                if status == "disagreed" and compare.needs_recheck(out, diffs):
                    status, diffs = compare.judge(s, compare.with_more_runs(oracle, s, out))
                tally[status] += 1
                if status == "disagreed":
                    disagreements.append({"id": s["id"], "diffs": diffs, "scenario": s})
        report[v] = {"tally": dict(tally), "reasons": dict(reasons), "disagreements": disagreements}
        log(f"# {v}: {sum(tally.values())} upstream table cases: {dict(tally)}; reasons {dict(reasons)}")
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--versions", default="1.34,1.35,1.36,1.37,1.38")
    p.add_argument("--out", type=Path, default=None, help="write the disagreements as JSON here")
    a = p.parse_args(argv)
    report = run([v.strip() for v in a.versions.split(",") if v.strip()])
    for v, r in report.items():
        for d in r["disagreements"]:
            print(
                f"DISAGREEMENT {d['id']} {','.join(sorted({x['kind'] for x in d['diffs']}))}: {json.dumps(d['diffs'][0]['detail'])[:300]}"
            )
    if a.out:
        a.out.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
