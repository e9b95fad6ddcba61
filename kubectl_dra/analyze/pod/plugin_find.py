"""Which DaemonSet runs a driver's kubelet plugin, on what evidence, and which are evidently another driver's: the
driver piece (analyze/pod/driver.py) names a DaemonSet as a driver's plugin only on evidence. Pure: reads what the
snapshot holds (Seen).

No API object says which workload serves a driver (../shared/reference/driver-piece.md §1.2). A kubelet plugin mounts
the kubelet's plugins_registry (its registration socket lives there), so the DaemonSets that mount it are the
candidates (minus CSI node plugins); the evidence that ties one to a driver, strongest first (daemonset.evidence):
the driver's name in its pod template; the Helm release, or the app.kubernetes.io/instance label, of a DeviceClass
that selects the driver; the binary that wrote the driver's ResourceSlices (their managedFields' manager, the
client's user agent) in a container's command. With no evidence for any driver, the one candidate there is may be
it ("only", said as likely); a candidate with evidence for another driver is that driver's, never this one's."""

from __future__ import annotations

from dataclasses import dataclass, field

from kubectl_dra.analyze.pod.daemonset import (
    class_expressions,
    dict_of,
    drivers_named,
    evidence,
    is_plugin_candidate,
    list_of,
    owned_by,
)
from kubectl_dra.model.meta import meta_of, name_of, ns_of

STRENGTH = {"named": 0, "helm": 1, "labels": 2, "manager": 3, "only": 4}
LINK_WORDS = {
    "named": "its pod template names the driver",
    "helm": "installed by the Helm release of the driver's DeviceClass",
    "labels": "its app.kubernetes.io/instance label is that of the driver's DeviceClass",
    "manager": "its command runs the binary that wrote the driver's ResourceSlices",
    "only": "the only DaemonSet that mounts the kubelet's plugins_registry; nothing in it names the driver",
}


@dataclass(frozen=True)
class Seen:
    """What the snapshot holds for the driver piece: the DaemonSets (or why not), the pods that may be plugin pods
    (or why not), the classes, the slices and the nodes."""

    daemonsets: tuple
    daemonsets_gap: str | None  # why the DaemonSets are not known ("cannot list ...", "the input has none")
    pods: dict  # the pods a DaemonSet controls, by its uid and by (namespace, name): daemon_pods
    pods_gap: str | None
    pods_listed: bool  # every bound pod was read (live, a bundle): no plugin pod there means none, not "left out"
    classes: tuple
    slices: tuple
    failed_creates: dict = field(default_factory=dict)  # the DaemonSets' FailedCreate events by (namespace, name)
    # why those events are not known (None: listed, or a file's own events): "cannot list ...", "not read"
    failed_creates_gap: str | None = None
    failed_creates_listed: bool = False  # every DaemonSet's FailedCreate events were read: none means none
    kubelet_starts: dict = field(default_factory=dict)  # the kubelets' Starting events by node name
    kubelet_starts_gap: str | None = None  # why they are not known (None: listed, or a file's own events)
    nodes: tuple = ()  # the Nodes (why a DaemonSet matches none of them)
    # the namespaces the input holds events and pods of (files: what was dumped; advice names only what it lacks)
    event_namespaces: frozenset = frozenset()
    pod_namespaces: frozenset = frozenset()


def daemon_pods(pods) -> dict:
    """The pods whose controller is a DaemonSet, grouped once by that DaemonSet's uid and (namespace, name): the
    driver piece looks up a DaemonSet's pods per explained pod without walking every pod (pods + pods, never their
    product)."""
    out: dict = {}
    for p in pods:
        for r in list_of(meta_of(p).get("ownerReferences")):
            if isinstance(r, dict) and r.get("kind") == "DaemonSet":
                for key in {r.get("uid"), (ns_of(p), r.get("name"))} - {None}:
                    out.setdefault(key, []).append(p)
    return out


def owned(seen: Seen, ds: dict) -> list:
    """The pods of ds (owned_by decides; the index only narrows)."""
    got = seen.pods.get(meta_of(ds).get("uid"), []) + seen.pods.get((ns_of(ds), name_of(ds)), [])
    out, once = [], set()  # a pod is under both keys: each once (by identity: linear in the DaemonSet's pods)
    for p in got:
        if id(p) not in once:
            once.add(id(p))
            if owned_by(p, ds):
                out.append(p)
    return out


def managers(seen: Seen) -> dict[str, set[str]]:
    """The field managers of each driver's ResourceSlices (the binaries that wrote them), by driver."""
    out: dict[str, set[str]] = {}
    for s in seen.slices:
        d = dict_of(s.get("spec")).get("driver")
        if isinstance(d, str) and d:
            got = out.setdefault(d, set())
            got |= {
                m
                for mf in list_of(meta_of(s).get("managedFields"))
                if isinstance(m := dict_of(mf).get("manager"), str) and m
            }
    return out


def ref(o: dict) -> str:
    return f"{ns_of(o)}/{name_of(o)}"


def candidates(seen: Seen) -> list[dict]:
    return [d for d in seen.daemonsets if is_plugin_candidate(d)]


def find_plugins(seen: Seen, driver: str) -> list[tuple[dict, str]]:
    """The DaemonSets that serve the driver, with the link's strength: the strongest links only."""
    cands = candidates(seen)
    by_driver = managers(seen)
    linked = [(d, w[0]) for d in cands if (w := evidence(d, driver, seen.classes, by_driver.get(driver, set())))]
    if not linked and len(cands) == 1 and not others(seen, cands[0], driver, by_driver):
        linked = [(cands[0], "only")]
    if not linked:
        return []
    best = min(STRENGTH[w] for _, w in linked)
    return [(d, w) for d, w in linked if STRENGTH[w] == best]


def others(seen: Seen, ds: dict, driver: str, by_driver: dict | None = None) -> list[tuple[str, str, str]]:
    """The other drivers the cluster has (its slices' or its classes') that evidence ties the DaemonSet to, as
    (driver, kind, words): it is their plugin, not this driver's by default."""
    by_driver = managers(seen) if by_driver is None else by_driver
    known = set(by_driver) | {d for c in seen.classes for d in drivers_named(class_expressions(c))}
    out = []
    for o in sorted(k for k in known - {driver} if isinstance(k, str) and k):
        got = evidence(ds, o, seen.classes, by_driver.get(o, set()))
        if got is not None:
            out.append((o, *got))
    return out


def absent(seen: Seen, driver: str) -> tuple[str, list[dict]]:
    """No DaemonSet runs the driver's plugin: what the candidates are, in words, and those that are other drivers'
    plugins, with the evidence, for -o json (empty: no candidate is evidently another driver's)."""
    cands = candidates(seen)
    if not cands:
        return "no DaemonSet other than a CSI node plugin mounts the kubelet's plugins_registry", []
    by_driver = managers(seen)
    theirs = [(d, got) for d in cands if (got := others(seen, d, driver, by_driver))]
    if not theirs:
        return f"{len(cands)} DaemonSets mount the kubelet's plugins_registry; none names it", []
    facts = [{"daemonset": ref(d), "drivers": [{"driver": o, "link": k, "evidence": w} for o, k, w in got]}
             for d, got in theirs]  # fmt: skip
    said = "; ".join(f"{ref(d)}{',' if len(cands) == 1 else ''} is the plugin of "
                     f"{' and '.join(f'{o} ({w})' for o, _, w in got)}" for d, got in theirs)  # fmt: skip
    if len(cands) == 1:
        return f"the only DaemonSet that mounts the kubelet's plugins_registry, {said}", facts
    rest = len(cands) - len(theirs)
    more = f"; {rest} other{'s name' if rest != 1 else ' names'} no driver" if rest else ""
    return f"{len(cands)} DaemonSets mount the kubelet's plugins_registry: {said}{more}", facts
