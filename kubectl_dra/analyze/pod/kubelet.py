"""The kubelet's own words about a pod's devices (its FailedPrepareDynamicResources events, and the runtime's CDI
failures), classified by the piece they belong to, and the findings the driver piece makes of them with what
analyze/pod/driver.py finds about the driver's kubelet plugin.

Messages: k8s.io/kubernetes pkg/kubelet/cm/dra manager.go and plugin/dra_plugin_manager.go (1.34-1.37 say the same):
every error is wrapped as "prepare dynamic resources: %w" and reported by kuberuntime as the pod's Warning event
FailedPrepareDynamicResources "Failed to prepare dynamic resources: %v"; the pod worker retries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kubectl_dra.analyze.allocator.pools import NODE_OPERATIONS_FEATURE
from kubectl_dra.analyze.pod.daemonset import class_expressions, drivers_named
from kubectl_dra.analyze.pod.driver import (
    PREPARE,
    UNPREPARE,
    Plugin,
    drivers_of_claims,
    judge_on_node,
    judge_publishing,
    node_not_ready,
)
from kubectl_dra.analyze.pod.plugin_find import Seen, daemon_pods
from kubectl_dra.findings.model import Finding, make
from kubectl_dra.model.meta import ns_of
from kubectl_dra.model.snapshot import BOUND_PODS, DAEMONSET_EVENTS, NODE_EVENTS

# (class, piece, pattern) in the order they are tried, on the text after "prepare dynamic resources: "
KUBELET_CLASSES = (
    (
        "not-registered",
        "driver",
        re.compile(
            r"DRA driver (\S+) is not registered|DRA driver name is empty|"
            r"not found in the list of registered DRA plugins"
        ),
    ),  # fmt: skip
    ("rpc-error", "driver", re.compile(r"NodePrepareResources: .*rpc error: code = (\w+)")),
    ("driver-bug", "driver", re.compile(r"NodePrepareResources (returned result for unknown claim UID|skipped)")),
    ("driver-error", "driver", re.compile(r"NodePrepareResources failed for ResourceClaim")),
    ("reservation", "claim", re.compile(r"is not allowed to use ResourceClaim")),
    ("api", "claim", re.compile(r"fetch ResourceClaim ")),
    (
        "node-state",
        "node",
        re.compile(r"old ResourceClaim with same name|checkpoint ResourceClaim|is being unprepared"),
    ),
    # 1.37 claiminfo.go: the claim's devices skip node operations (skipNodeOperations) and the kubelet runs without
    # DRAOptionalNodeOperations
    ("skip-gate-off", "node", re.compile(r"DRAOptionalNodeOperations feature gate is disabled on kubelet")),
    ("allocation", "claim", re.compile(r"ResourceClaim \S+: ")),
)
CDI = re.compile(r"CDI device injection failed|unresolvable CDI devices")


@dataclass(frozen=True)
class KubeletWord:
    """One kubelet event about preparing the pod's devices, classified."""

    cls: str  # a KUBELET_CLASSES class, "cdi", or "other"
    piece: str  # "driver", "claim" or "node"
    driver: str | None  # the driver it names, when it names one
    detail: str  # the gRPC code of an rpc-error, else ""
    message: str
    count: int
    first: str
    last: str
    host: str

    def to_dict(self) -> dict:
        return {
            "class": self.cls,
            "piece": self.piece,
            "driver": self.driver,
            "detail": self.detail or None,
            "message": self.message,
            "count": self.count,
            "firstTimestamp": self.first,
            "lastTimestamp": self.last,
            "host": self.host or None,
        }


def classify(event: dict) -> KubeletWord | None:
    """A normalised event (model/normalize.py) -> its class, or None when it is not the kubelet's word on DRA."""
    msg = event.get("message") or ""
    common = dict(
        message=msg,
        count=int(event.get("count") or 1),
        first=event.get("firstTime") or event.get("time") or "",
        last=event.get("time") or "",
        host=(event.get("source") or {}).get("host") or "",
    )
    if event.get("reason") == "Failed" and CDI.search(msg):
        return KubeletWord("cdi", "driver", None, "", **common)
    if event.get("reason") != "FailedPrepareDynamicResources":
        return None
    for cls, piece, pat in KUBELET_CLASSES:
        m = pat.search(msg)
        if m:
            driver = m.group(1) if cls == "not-registered" else None
            detail = m.group(1) if cls == "rpc-error" else ""
            return KubeletWord(cls, piece, driver, detail, **common)
    return KubeletWord("other", "driver", None, "", **common)


# ---------------------------------------------------------------------------------------------------
# Findings


# What the live gather reads for the driver piece alone: a refusal is said in DRA607, not as DRA101
DRIVER_PIECE_READS = ("daemonsets.apps", DAEMONSET_EVENTS, NODE_EVENTS)
_PLAIN = {
    "rpc-error": "the driver's kubelet plugin did not answer",
    "driver-error": "the driver's kubelet plugin returned an error",
    "driver-bug": "the driver's kubelet plugin broke the protocol",
    "other": "preparing the devices failed",
}
# kubelets with a known DRA defect: (version prefix, what happens, the fix)
KUBELET_DEFECTS = (
    (
        ("v1.34.0", "v1.34.1"),
        "the kubelet's connection to a DRA driver deadlocks after 30 idle minutes: claims stay allocated and reserved "
        "with no kubelet DRA event (kubernetes/kubernetes#133920); restart the kubelet, fixed in v1.34.2",
    ),
)


def _times(w: KubeletWord) -> str:
    where = f"kubelet on {w.host}" if w.host else "kubelet"
    if w.count > 1:
        return f" ({where}, {w.count} times since {w.first}, last {w.last})"
    return f" ({where}, {w.last})" if w.last else ""


def seen_of(snap, cache=None) -> Seen:
    """What the snapshot holds for the driver piece (see driver.Seen), built once per snapshot when cache (an
    Analysis's, shared by its forks: pod/cache.py) is given. Live and in a bundle, the DaemonSets are known where they were
    listed (Snapshot.listed), the plugin pods with the bound pods; in files, DaemonSets present are taken as all."""
    if cache is not None:
        got = cache.driver_seen
        if got is not None and got[0] is snap:
            return got[1]
    dss = tuple(w for w in snap.workloads if w.get("kind") == "DaemonSet")
    gap = next((g for g in snap.gaps if g.resource == "daemonsets.apps"), None)
    if gap is not None:
        ds_gap = f"cannot list daemonsets.apps: {gap.message}"
    elif "daemonsets" in snap.listed or (snap.source == "files" and dss):
        ds_gap = None
    elif snap.source == "live":
        ds_gap = "the DaemonSets were not read (explain pod reads them)"
    else:
        ds_gap = "the input has no DaemonSet (add `kubectl get daemonsets -A -o yaml` to it)"
    pgap = next((g for g in snap.gaps if g.resource == BOUND_PODS), None)
    creates: dict = {}
    starts: dict = {}
    for e in snap.events:
        o = e["object"]
        if o["kind"] == "DaemonSet" and e["reason"] == "FailedCreate":
            creates.setdefault((o["namespace"], o["name"]), []).append(e)
        elif o["kind"] == "Node" and e["reason"] == "Starting" and e["source"]["component"] == "kubelet":
            starts.setdefault(o["name"] or e["source"]["host"], []).append(e)
    seen = Seen(
        dss,
        ds_gap,
        daemon_pods(snap.pods),
        f"cannot list the pods bound to nodes: {pgap.message}" if pgap is not None else None,
        snap.bound_pods,
        tuple(snap.classes),
        tuple(snap.slices),
        creates,
        _events_gap(snap, DAEMONSET_EVENTS, "daemonset_events", "events in every namespace"),
        "daemonset_events" in snap.listed,
        starts,
        None if starts else _events_gap(snap, NODE_EVENTS, "node_events", "events in namespace default"),
        tuple(snap.nodes),
        frozenset(e["object"]["namespace"] for e in snap.events),
        frozenset(ns_of(p) for p in snap.pods),
    )
    if cache is not None:
        cache.driver_seen = (snap, seen)
    return seen


def _events_gap(snap, resource: str, listed: str, what: str) -> str | None:
    """Why the driver piece's events of one list are not known: refused, or not read; None when they were listed
    (live, a bundle) or the input is files (whose own events are what there is)."""
    gap = next((g for g in snap.gaps if g.resource == resource), None)
    if gap is not None:
        return f"cannot list {what} ({gap.message})"
    if listed in snap.listed or snap.source == "files":
        return None
    return "they were not read" if snap.source == "live" else "the bundle was made without them"


def _plugin_finding(p: Plugin) -> Finding:
    return make("DRA607", p.message, node=p.node, plugin=p.to_dict())


def kubelet_skips(node: dict | None, version: tuple) -> bool:
    """Whether the kubelet of node honours the results' skipNodeOperations. The field is in the API from 1.37; an
    older minor's types have no such field, so its kubelet reads none (as every field a minor lacks is dropped by
    its decoder). A 1.37 kubelet skips only with DRAOptionalNodeOperations on, which it declares in the Node's
    status.declaredFeatures (an older kubelet declares no such feature and calls the driver); without the Node
    object, the allocation is the evidence (the scheduler gives such devices only to a node that declares it)."""
    from kubectl_dra.behaviour import Components

    if not Components(tuple(version[:2])).kubelet_reads_skip_node_operations:
        return False
    if node is None:
        return True
    declared = (node.get("status") or {}).get("declaredFeatures")
    return isinstance(declared, list) and NODE_OPERATIONS_FEATURE in declared


def called_drivers(claims, op: str, node: dict | None, version: tuple) -> tuple[list[str], list[str]]:
    """(the drivers the kubelet calls for op on these claims, the drivers whose devices skip it there)."""
    every = drivers_of_claims(claims)
    called = drivers_of_claims(claims, op) if kubelet_skips(node, version) else every
    return called, [d for d in every if d not in called]


def _skipped_words(skipped: list[str], op: str) -> str:
    if not skipped:
        return ""
    return (
        f"; the kubelet calls no plugin of {', '.join(skipped)} for them (every device of "
        f"{'it' if len(skipped) == 1 else 'each'} skips {op}: its ResourceSlice's skipNodeOperations)"
    )


def kubelet_findings(
    snap, node: dict | None, pod: dict, claims, events: list[dict], cache=None, version: tuple = (1, 37)
) -> list[Finding]:
    """The kubelet's latest word since the pod was bound (DRA601 not registered, DRA602 the plugin failed, DRA608
    CDI, DRA609 a claim-side error), or DRA604 none yet; then the plugin of each driver the kubelet calls (DRA607)
    and a kubelet with a known DRA defect (DRA611). version: the Kubernetes minor the input is read as."""
    node_name = (pod.get("spec") or {}).get("nodeName") or ""
    phase = (pod.get("status") or {}).get("phase")
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return _unprepare_findings(snap, node, pod, claims, cache, version)
    if phase in ("Running", "Succeeded", "Failed"):
        return []
    last_sched = max((e["time"] for e in events if e["reason"] == "Scheduled"), default="")
    words = [w for e in events if e["time"] >= last_sched and (w := classify(e)) is not None]
    out: list[Finding] = []
    drivers, skipped = called_drivers(claims, PREPARE, node, version)
    word = words[-1] if words else None
    unseen = snap.absent("events")
    if word is None and unseen is not None and phase in (None, "Pending"):
        out.append(
            make(
                "DRA104",
                f"pod is bound to {node_name}; whether its kubelet reported an error preparing its devices cannot be "
                f"told: {unseen.message}",
                node=node_name,
                resource=unseen.resource,
            )
        )
    elif word is None:
        if phase in (None, "Pending"):
            out.append(
                make(
                    "DRA604",
                    f"pod is bound to {node_name}; no kubelet report on preparing its devices yet"
                    + _skipped_words(skipped, PREPARE)
                    + (f"; {down}: its kubelet may not be running" if (down := node_not_ready(node)) else ""),
                    node=node_name,
                    **({"skipped": skipped} if skipped else {}),
                )
            )
    else:
        ev = {"reason": "FailedPrepareDynamicResources" if word.cls != "cdi" else "Failed", "time": word.last,
              "source": {"component": "kubelet", "host": word.host}}  # fmt: skip
        detail = {"node": node_name, "event": ev, "kubelet": word.to_dict()}
        if word.cls == "not-registered":
            out.append(make("DRA601", word.message + _times(word), **detail))
            drivers = [word.driver] if word.driver else drivers
        elif word.cls == "cdi":
            out.append(make("DRA608", word.message + _times(word) + _runtime_note(node), **detail))
        elif word.piece == "driver":
            code = f" ({word.detail})" if word.detail else ""
            said = word.message.split("prepare dynamic resources: ")[-1]
            out.append(make("DRA602", f"{_PLAIN[word.cls]}{code}: {said}{_times(word)}", **detail))
        else:
            why = (
                "; the claim's devices skip node operations (their ResourceSlice's skipNodeOperations), which a "
                "kubelet without the DRAOptionalNodeOperations feature gate refuses"
                if word.cls == "skip-gate-off"
                else ""
            )
            out.append(make("DRA609", word.message + _times(word) + why, **detail))
            return out
    seen = seen_of(snap, cache)
    for d in drivers:
        p = judge_on_node(seen, d, node, node_name, word)
        if word is not None or p.problem:  # before the kubelet speaks, only what would stop it
            out.append(_plugin_finding(p))
    info = ((node or {}).get("status") or {}).get("nodeInfo")
    version = info.get("kubeletVersion") if isinstance(info, dict) else None
    version = version if isinstance(version, str) else ""
    for versions, what in KUBELET_DEFECTS:
        if version.split("+")[0].split("-")[0] in versions and (word is None or word.cls == "rpc-error"):
            out.append(
                make(
                    "DRA611", f"node {node_name} runs kubelet {version}: {what}", node=node_name, kubeletVersion=version
                )
            )
    return out


def publishing_findings(snap, classes, cache=None) -> list[Finding]:
    """No ResourceSlice of a driver the pod's classes pin exists: for each such driver, the plugin (DRA607)."""
    have = {(s.get("spec") or {}).get("driver") for s in snap.slices}
    drivers = sorted({d for c in classes for d in drivers_named(class_expressions(c))} - have)
    seen = seen_of(snap, cache)
    found = [judge_publishing(seen, d) for d in drivers]
    return [_plugin_finding(p) for p in found if p.state != "not-looked"]  # (no DaemonSet in a file: no news)


def _runtime_note(node: dict | None) -> str:
    """What the node's container runtime is known to do with CDI devices (status.nodeInfo.containerRuntimeVersion)."""
    info = ((node or {}).get("status") or {}).get("nodeInfo")
    rt = info.get("containerRuntimeVersion") if isinstance(info, dict) else None
    rt = rt if isinstance(rt, str) else ""
    if rt.startswith("docker://"):
        return f"; the node runs {rt}: cri-dockerd does not inject DRA CDI devices (Mirantis/cri-dockerd#558)"
    if rt.startswith("containerd://1.7") or rt.startswith("containerd://1.6"):
        return f"; the node runs {rt}: containerd before 2.0 injects CDI devices only with enable_cdi = true"
    return f"; the node runs {rt}" if rt else ""


def _unprepare_findings(snap, node: dict | None, pod: dict, claims, cache=None, version=(1, 37)) -> list[Finding]:
    """A pod being deleted on a node: the kubelet calls NodeUnprepareResources through each driver's plugin before
    it lets the pod go, retries while it cannot, and reports nothing (no event; kubernetes/kubernetes#129402, as
    designed). Where the plugin of a driver is missing or not ready on the node, that is why the pod stays
    Terminating (DRA612), with what was found (DRA607)."""
    node_name = (pod.get("spec") or {}).get("nodeName") or ""
    if not node_name or not any(((c.get("status") or {}).get("allocation")) for c in claims):
        return []
    seen = seen_of(snap, cache)
    out: list[Finding] = []
    for d in called_drivers(claims, UNPREPARE, node, version)[0]:
        p = judge_on_node(seen, d, node, node_name, None)
        if p.problem:
            out.append(
                make(
                    "DRA612",
                    f"the pod is being deleted, and the kubelet on {node_name} must unprepare its devices of {d} "
                    "through the driver's kubelet plugin first, which is not running there: the pod stays "
                    "Terminating until it is (the kubelet retries and reports nothing)",
                    node=node_name,
                    driver=d,
                )
            )
            out.append(_plugin_finding(p))
    return out
