"""`kubectl dra report`: everything the HTML report shows, from one snapshot, as the other commands compute it: the
pods that use DRA with their verdicts (status's scan, blocked first), the explain report and device map of each
blocked or undetermined pod (explain pod --map), the device inventory and the map of every node (devices -o map,
a row per node), the findings met. No rendering here (render/html.py writes it)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from kubectl_dra.analyze.reports.devmap import DeviceMap, device_map, pod_map
from kubectl_dra.analyze.reports.explain import explain_pods
from kubectl_dra.analyze.reports.inventory import inventory
from kubectl_dra.analyze.reports.status import ScanReport, scan
from kubectl_dra.features import Semantics
from kubectl_dra.model.snapshot import Snapshot

# blocked or undetermined pods explained in full (the first, in status's order; the rest are rows): each costs a
# device matrix of every device (40,000 on a large cluster) in its explanation and its map
EXPLAINED = 20


@dataclass(frozen=True)
class Explained:
    report: object  # explain pod's Report
    map: DeviceMap  # pod_map of it


@dataclass(frozen=True)
class Overview:
    scan: ScanReport
    explained: tuple[Explained, ...]
    more: int  # blocked or undetermined pods not explained in full (beyond EXPLAINED)
    inventory: object  # InventoryReport
    map: DeviceMap  # every node's devices, a row per node
    findings: tuple[tuple[str, int], ...]  # (code, how many of the explained reports carry it), by code

    @property
    def blocked(self) -> bool:
        return self.scan.blocked

    @property
    def determined(self) -> bool:
        return self.scan.determined and not self.inventory.unseen


def overview(snap: Snapshot, sem: Semantics, namespace: str | None, labels=None, alone: bool = False) -> Overview:
    """The queue is judged once, by the scan (status's own verdicts, row for row), and that judgement placed the
    pods explained in full and marks the devices the pending pods would take."""
    report = scan(snap, sem, namespace, labels, alone=alone, keep=True)
    judged, report = report.judged, replace(report, judged=None)  # (the entries hold every pod's analysis)
    wanted = [(r.namespace, r.pod) for r in report.rows if r.state != "OK"]
    reports = explain_pods(snap, sem, wanted[:EXPLAINED], alone, judged) if wanted else []
    rows: dict = {}  # the device rows the explained reports share, each read once (devmap.py pod_map)
    explained = tuple(Explained(r, pod_map(r, cache=rows)) for r in reports)
    inv = inventory(snap, sem, base=judged.base if judged is not None else None)
    counts: dict[str, int] = {}
    for r in reports:
        for code in sorted({f.code for f in r.findings}):
            counts[code] = counts.get(code, 0) + 1
    return Overview(
        report,
        explained,
        max(0, len(wanted) - EXPLAINED),
        inv,
        device_map(inv, snap, sem, grouped=False, queue=judged.queue if judged is not None else False),
        tuple(sorted(counts.items())),
    )
