"""The exporter's metrics (`status -w --metrics-bind-address`), computed from the answers the commands give: the
status scan (one row per pod that uses DRA, the queue's dry-run) and the device inventory of `devices` (every
device's state, each node's kubelet plugin). Pure: reports in, metric families out; the HTTP side (cli/exporter.py)
hands them to prometheus-client, which writes the exposition format.

Label values are bounded by what the cluster holds, never by free text: a pod's verdict (state), the piece that is
missing and the finding code come from fixed sets (findings/registry.py); device states from inventory.STATES plus
`reserved`; plugin statuses from node_plugins.STATUSES. docs/exporter.md gives each family's cardinality."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from kubectl_dra.analyze.reports.inventory import STATES as INVENTORY_STATES
from kubectl_dra.analyze.reports.node_plugins import STATUSES as PLUGIN_STATUSES
from kubectl_dra.analyze.reports.status import STATES as POD_STATES

PREFIX = "kubectl_dra_"
RESERVED = "reserved"  # a free device the queue's dry-run gives to a pending pod ahead of any other
DEVICE_STATES = INVENTORY_STATES + (RESERVED,)
MISSING = ("claim", "class", "device", "node", "driver")  # the pieces (analyze/pod/pieces.py), "" when none


@dataclass(frozen=True)
class Family:
    """One metric family: its name without PREFIX, gauge or counter, help, label names and samples (label values
    in that order, value)."""

    name: str
    kind: str
    help: str
    labels: tuple[str, ...]
    samples: tuple[tuple[tuple[str, ...], float], ...]


def answer_families(scan, inventory) -> tuple[Family, ...]:
    """The families one answer gives: scan is a status ScanReport of every namespace, inventory the unfiltered
    InventoryReport of the same snapshot."""
    return (
        *_pods(scan),
        _devices(inventory, _reserved(scan)),
        _plugins(inventory),
        Family(
            "answer_determined",
            "gauge",
            "1 when the answer is complete (every list read, no pod undetermined), else 0.",
            (),
            (((), 1.0 if scan.determined and not inventory.unseen else 0.0),),
        ),
    )


def _pods(scan) -> tuple[Family, Family]:
    per_pod = []
    counts: Counter = Counter()
    for r in scan.rows:
        state = r.state.lower()
        missing = r.missing if r.missing in MISSING else ""
        code = r.codes[0] if r.codes else ""
        per_pod.append(((r.namespace, r.pod, state, missing, code), 1.0))
        counts[state, missing] += 1
    for state in POD_STATES:  # every state, zero included: an alert on "no blocked pod" needs the zero
        counts.setdefault((state.lower(), ""), 0)
    return (
        Family(
            "pod_status",
            "gauge",
            "1 for each pod that uses DRA: its verdict (blocked, unknown, ok), the first missing piece when blocked "
            "and the code of its first blocking (or undetermined) finding.",
            ("namespace", "pod", "state", "missing", "code"),
            tuple(per_pod),
        ),
        Family(
            "pods",
            "gauge",
            "Pods that use DRA, by verdict and missing piece.",
            ("state", "missing"),
            tuple(((s, m), float(n)) for (s, m), n in sorted(counts.items())),
        ),
    )


def _reserved(scan) -> frozenset:
    """The devices the queue's dry-run gives to pending pods that fit (driver/pool/device)."""
    queue = scan.queue
    if queue is None:
        return frozenset()
    return frozenset(d for place in queue.places.values() if place.outcome == "fits" for d in place.devices)


def _devices(inventory, reserved: frozenset) -> Family:
    counts: Counter = Counter()
    groups = set()
    for r in inventory.rows:
        state = RESERVED if r.state == "free" and r.id in reserved else r.state
        for cls in r.classes or ("",):
            key = (cls, r.node or "", r.driver)
            groups.add(key)
            counts[key, state] += 1
    samples = tuple(
        ((*key, state), float(counts[key, state])) for key in sorted(groups) for state in DEVICE_STATES
    )  # every state of a group, zero included: "no free device in a class" is a sum that must see the zeros
    return Family(
        "devices",
        "gauge",
        'Published devices by DeviceClass (a device every class it matches; "" for none), node ("" for a pool '
        "that selects nodes) , driver and state; reserved: free, and taken by a pending pod in the queue's dry-run.",
        ("class", "node", "driver", "state"),
        samples,
    )


def _plugins(inventory) -> Family:
    samples = []
    for p in sorted(inventory.plugins, key=lambda p: (p.node, p.driver)):
        for status in PLUGIN_STATUSES:
            samples.append(((p.node, p.driver, status), 1.0 if p.status == status else 0.0))
    return Family(
        "kubelet_plugin",
        "gauge",
        "1 for the status of each driver's kubelet plugin on each node with devices of that driver (serving, "
        "not-ready, no-pod, unknown), 0 for the others.",
        ("node", "driver", "status"),
        tuple(samples),
    )
