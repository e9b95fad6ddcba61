"""The driver piece: the kubelet's own words about a pod's devices, classified, and the kubelet plugin that serves
each driver the node must serve, found among the DaemonSets and judged on that node. Pure: reads the snapshot.

Facts (../shared/reference/driver-piece.md, and k8s.io/kubernetes pkg/kubelet/cm/dra of 1.34-1.37):
- The kubelet prepares every driver of a claim's `status.allocation.devices.results` before the pod's sandbox; a
  failure is the event FailedPrepareDynamicResources "Failed to prepare dynamic resources: prepare dynamic
  resources: <error>", retried by the pod worker. Its errors come from manager.go and plugin/dra_plugin_manager.go.
- No API object says which workload serves a driver, nor whether the kubelet registered it. A kubelet plugin must
  mount the kubelet's `plugins_registry` directory (its registration socket lives there), so the DaemonSets that
  mount a hostPath ending in `plugins_registry` are the candidates (minus CSI node plugins); the link to a driver
  is as strong as the evidence for it: the driver's name in the pod template, the Helm release of a DeviceClass
  that selects the driver, or the slices' field manager in a container's command.
- The DaemonSet controller runs a pod on a node that passes the template's nodeSelector, required node affinity
  and taints, with the tolerations it adds itself (controller/daemon/util AddOrUpdateDaemonPodTolerations).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kubectl_dra.analyze.pod.plugin_pod import (
    CONTAINER_LINK_WORDS,
    container_strings,
    count,
    pod_state,
    serving_container,
    state_words,
    words_of,
)
from kubectl_dra.model.meta import meta_of, name_of, ns_of
from kubectl_dra.model.nodes import pod_node_rejection

# What the DaemonSet controller tolerates on every daemon pod (and network-unavailable with hostNetwork)
_DS_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)
_NET = {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"}
_DRIVER_LITERAL = re.compile(r"device\.driver\s*==\s*[\"']([^\"']+)[\"']|[\"']([^\"']+)[\"']\s*==\s*device\.driver")


def drivers_of_claims(claims) -> list[str]:
    """The drivers the kubelet must call for these allocated claims (every result's driver), in first-seen order."""
    out: list[str] = []
    for c in claims:
        for r in (((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []:
            d = r.get("driver")
            if isinstance(d, str) and d and d not in out:
                out.append(d)
    return out


def drivers_named(expressions) -> set[str]:
    """The driver names CEL selectors pin with `device.driver == "x"` (what a DeviceClass usually says)."""
    out = set()
    for e in expressions:
        for m in _DRIVER_LITERAL.finditer(e if isinstance(e, str) else ""):
            out.add(m.group(1) or m.group(2))
    return out


def _d(x) -> dict:
    return x if isinstance(x, dict) else {}


def _lst(x) -> list:
    return x if isinstance(x, list) else []


def class_expressions(cls: dict | None) -> list[str]:
    return [
        e
        for s in _lst(_d(_d(cls).get("spec")).get("selectors"))
        if isinstance(e := _d(_d(s).get("cel")).get("expression"), str)
    ]


# ---------------------------------------------------------------------------------------------------
# The plugin: candidates, the link to a driver, coverage of a node, the pod's state. The DaemonSets are read
# from every namespace and walked only here: a field of the wrong shape reads as absent (untrusted input).


def _template(ds: dict) -> dict:
    return _d(_d(_d(ds.get("spec")).get("template")).get("spec"))


def _containers(ds: dict) -> list[dict]:
    t = _template(ds)
    return [c for c in _lst(t.get("initContainers")) + _lst(t.get("containers")) if isinstance(c, dict)]


def _host_paths(ds: dict) -> list[str]:
    return [
        p for v in _lst(_template(ds).get("volumes")) if isinstance(p := _d(_d(v).get("hostPath")).get("path"), str)
    ]


def is_plugin_candidate(ds: dict) -> bool:
    """A DaemonSet whose pods mount the kubelet's plugins_registry (where a kubelet plugin registers), that is not
    a CSI node plugin (those register there too, through csi-node-driver-registrar)."""
    if not any(p.rstrip("/").endswith("plugins_registry") for p in _host_paths(ds)):
        return False
    return not any(
        "csi-node-driver-registrar" in str(c.get("image") or "") or c.get("name") == "csi-node-driver-registrar"
        for c in _containers(ds)
    )


def _strings(ds: dict) -> list[str]:
    return [s for c in _containers(ds) for s in container_strings(c)] + _host_paths(ds)


def _helm(obj: dict) -> tuple | None:
    a = _d(meta_of(obj).get("annotations"))
    name, ns = a.get("meta.helm.sh/release-name"), a.get("meta.helm.sh/release-namespace")
    return (name, ns) if isinstance(name, str) and name else None


def link(ds: dict, driver: str, classes, managers: set[str]) -> str | None:
    """How the DaemonSet is tied to the driver: "named" (its name in the template's command, args, env or host
    paths), "helm" (the Helm release of a DeviceClass that selects the driver), "manager" (the slices' field
    manager, the plugin binary's name, in a container's command or args), else None."""
    strings = _strings(ds)
    if any(driver in s for s in strings):
        return "named"
    release = _helm(ds)
    if release is not None and any(
        _helm(c) == release and driver in drivers_named(class_expressions(c)) for c in classes
    ):
        return "helm"
    if managers & words_of(strings):
        return "manager"
    return None


def coverage_gap(ds: dict, node: dict) -> str | None:
    """Why the DaemonSet controller runs no pod of ds on node (its nodeSelector, required node affinity, an
    untolerated taint), or None when it would run one. Only the fields that decide it are passed on, each read as
    absent when it has the wrong shape."""
    t = _template(ds)
    tolerations = [x for x in _lst(t.get("tolerations")) if isinstance(x, dict)] + list(_DS_TOLERATIONS)
    if t.get("hostNetwork") is True:
        tolerations.append(_NET)
    selector = {k: v for k, v in _d(t.get("nodeSelector")).items() if isinstance(v, str)}
    required = _d(_d(t.get("affinity")).get("nodeAffinity")).get("requiredDuringSchedulingIgnoredDuringExecution")
    spec: dict = {"nodeSelector": selector, "tolerations": tolerations}
    if isinstance(required, dict) and all(isinstance(x, dict) for x in _lst(required.get("nodeSelectorTerms"))):
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}
    why = pod_node_rejection({"spec": spec}, node)
    return why.replace("the pod's ", "its ") if why else None


def owned_by(pod: dict, ds: dict) -> bool:
    uid = meta_of(ds).get("uid")
    refs = [r for r in _lst(meta_of(pod).get("ownerReferences")) if isinstance(r, dict)]
    if uid and any(r.get("uid") == uid for r in refs):
        return True
    return ns_of(pod) == ns_of(ds) and any(r.get("kind") == "DaemonSet" and r.get("name") == name_of(ds) for r in refs)


# ---------------------------------------------------------------------------------------------------
# Judging: the plugin of one driver, on one node (the kubelet spoke) or across the cluster (no slices at all)

_STRENGTH = {"named": 0, "helm": 1, "manager": 2, "only": 3}
_LINK_WORDS = {
    "named": "its pod template names the driver",
    "helm": "installed by the Helm release of the driver's DeviceClass",
    "manager": "its command runs the binary that wrote the driver's ResourceSlices",
    "only": "the only DaemonSet that mounts the kubelet's plugins_registry; nothing in it names the driver",
}
UNSEEN = "a kubelet plugin may also run as a host service (Bottlerocket) or in a namespace kubectl-dra cannot list"


@dataclass(frozen=True)
class Plugin:
    """What was found about the kubelet plugin of one driver: `state` says what, `message` says it in words."""

    driver: str
    node: str | None
    state: (
        str  # not-looked, not-found, not-covered, no-pod, pod-not-ready, pod-ready, pods-not-ready, publishing-nothing
    )
    message: str
    daemonset: str | None = None
    link: str | None = None
    pod: dict | None = None
    problem: bool = False  # the state explains the failure (else it is context)
    reason: str = ""  # the state's cause in a few words (devices' per-node line): the gap, the pod's state, ...

    def to_dict(self) -> dict:
        return {
            "driver": self.driver,
            "node": self.node,
            "state": self.state,
            "daemonset": self.daemonset,
            "link": self.link,
            "linkWords": _LINK_WORDS.get(self.link or ""),
            "pod": self.pod,
        }


@dataclass(frozen=True)
class Seen:
    """What the snapshot holds for the driver piece: the DaemonSets (or why not), the pods that may be plugin pods
    (or why not), the classes and the slices."""

    daemonsets: tuple
    daemonsets_gap: str | None  # why the DaemonSets are not known ("cannot list ...", "the input has none")
    pods: dict  # the pods a DaemonSet controls, by its uid and by (namespace, name): daemon_pods
    pods_gap: str | None
    pods_listed: bool  # every bound pod was read (live, a bundle): no plugin pod there means none, not "left out"
    classes: tuple
    slices: tuple


def daemon_pods(pods) -> dict:
    """The pods whose controller is a DaemonSet, grouped once by that DaemonSet's uid and (namespace, name): the
    driver piece looks up a DaemonSet's pods per explained pod without walking every pod (pods + pods, never their
    product)."""
    out: dict = {}
    for p in pods:
        for r in _lst(meta_of(p).get("ownerReferences")):
            if isinstance(r, dict) and r.get("kind") == "DaemonSet":
                for key in {r.get("uid"), (ns_of(p), r.get("name"))} - {None}:
                    out.setdefault(key, []).append(p)
    return out


def _owned(seen: Seen, ds: dict) -> list:
    """The pods of ds (owned_by decides; the index only narrows)."""
    got = seen.pods.get(meta_of(ds).get("uid"), []) + seen.pods.get((ns_of(ds), name_of(ds)), [])
    out, once = [], set()  # a pod is under both keys: each once (by identity: linear in the DaemonSet's pods)
    for p in got:
        if id(p) not in once:
            once.add(id(p))
            if owned_by(p, ds):
                out.append(p)
    return out


def _managers(seen: Seen, driver: str) -> set[str]:
    return {
        m
        for s in seen.slices
        if (s.get("spec") or {}).get("driver") == driver
        for mf in _lst(meta_of(s).get("managedFields"))
        if isinstance(m := _d(mf).get("manager"), str) and m
    }


def find_plugins(seen: Seen, driver: str) -> list[tuple[dict, str]]:
    """The DaemonSets that serve the driver, with the link's strength: the strongest links only."""
    cands = [d for d in seen.daemonsets if is_plugin_candidate(d)]
    managers = _managers(seen, driver)
    linked = [(d, w) for d in cands if (w := link(d, driver, seen.classes, managers)) is not None]
    if not linked and len(cands) == 1 and not _names_another(seen, cands[0], driver):
        linked = [(cands[0], "only")]
    if not linked:
        return []
    best = min(_STRENGTH[w] for _, w in linked)
    return [(d, w) for d, w in linked if _STRENGTH[w] == best]


def _names_another(seen: Seen, ds: dict, driver: str) -> bool:
    """The DaemonSet's template names another driver the cluster has (its slices' or its classes'): it is that
    driver's plugin, not this one's by default."""
    known = {(s.get("spec") or {}).get("driver") for s in seen.slices}
    known |= {d for c in seen.classes for d in drivers_named(class_expressions(c))}
    return any(isinstance(o, str) and o and link(ds, o, (), set()) == "named" for o in known - {driver})


def _ref(o: dict) -> str:
    return f"{ns_of(o)}/{name_of(o)}"


def _not_found(seen: Seen, driver: str, node: str | None) -> Plugin:
    if seen.daemonsets_gap:
        return Plugin(driver, node, "not-looked", f"the kubelet plugin of {driver} was not looked for: "
                      f"{seen.daemonsets_gap}", reason=seen.daemonsets_gap)  # fmt: skip
    n = sum(1 for d in seen.daemonsets if is_plugin_candidate(d))
    some = (
        f"{n} DaemonSets mount the kubelet's plugins_registry; none names it"
        if n
        else "no DaemonSet but CSI node plugins mounts the kubelet's plugins_registry"
    )
    return Plugin(
        driver,
        node,
        "not-found",
        f"no DaemonSet found that runs the kubelet plugin of {driver} ({some}): it is likely not installed ({UNSEEN})",
        problem=True,
        reason=f"no DaemonSet found that runs it ({some})",
    )


def _slices_on(seen: Seen, driver: str, node_name: str) -> list:
    return [
        s
        for s in seen.slices
        if (s.get("spec") or {}).get("driver") == driver and (s.get("spec") or {}).get("nodeName") == node_name
    ]


def _rollout(ds: dict) -> str:
    """ ", mid-rollout (K of N pods updated)" while the DaemonSet's pods are being replaced, else ""."""
    st = _d(ds.get("status"))
    desired, updated = st.get("desiredNumberScheduled"), st.get("updatedNumberScheduled")
    if isinstance(desired, int) and isinstance(updated, int) and updated < desired:
        return f", mid-rollout ({updated} of {desired} pods updated)"
    return ""


def node_not_ready(node: dict | None) -> str | None:
    """Why the node's kubelet may not answer at all: its Ready condition, when it is not True."""
    for c in _lst(_d(_d(node).get("status")).get("conditions")):
        if isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") != "True":
            since = f" since {c['lastTransitionTime']}" if c.get("lastTransitionTime") else ""
            return f"node is NotReady{since} ({c.get('reason') or 'no reason given'})"
    return None


# long: one verdict per state of the plugin on the node, each with its words
def judge_on_node(seen: Seen, driver: str, node: dict | None, node_name: str, word, pre=None) -> Plugin:
    """The plugin of driver on the pod's node, after the kubelet said `word` (a kubelet.KubeletWord) about it, or
    nothing yet (None). pre: what does not depend on the node (prepare()'s), given by judge_nodes once for every
    node. In a pod of several containers, the container that likely serves the driver is judged (plugin_pod.py)."""
    found, by_node, pick = prepare(seen, driver) if pre is None else pre
    if not found:
        p = _not_found(seen, driver, node_name)
        here = _slices_on(seen, driver, node_name)
        if p.state == "not-found" and here:
            # slices of the node that no visible plugin wrote: their publisher is out of sight (rule 5 of the research)
            made = min(meta_of(s).get("creationTimestamp") or "" for s in here) or "an unknown time"
            by = sorted(_managers(seen, driver))
            who = f" by {', '.join(by)}" if by else ""
            msg = (
                f"no DaemonSet found that runs the kubelet plugin of {driver}, yet {len(here)} ResourceSlice"
                f"{'s' if len(here) != 1 else ''} of it for {node_name} {'exist' if len(here) != 1 else 'exists'} (written{who} since "
                f"{made}): their "
                f"publisher is out of sight ({UNSEEN}), or a plugin the kubelet never registered (a never-registered "
                "plugin's slices are not wiped)"
            )
            return Plugin(driver, node_name, "not-found", msg, problem=True, reason=p.reason)
        return p
    ds, how = found[0]
    also = f" (also {', '.join(_ref(d) for d, _ in found[1:])})" if len(found) > 1 else ""
    head = f"DaemonSet {_ref(ds)}{also}{_rollout(ds)}"
    if node is not None:
        gap = coverage_gap(ds, node)
        if gap is not None:
            return Plugin(driver, node_name, "not-covered", f"{head} runs no pod on {node_name}: {gap}",
                          _ref(ds), how, problem=True, reason=gap)  # fmt: skip
    mine = by_node.get(node_name, [])
    if not mine:
        unseen = seen.pods_gap or (
            None
            if seen.pods_listed or by_node
            else f"the input has no pod of it (add `kubectl get pods -n {ns_of(ds)} -o yaml` to it)"
        )
        if unseen:
            return Plugin(driver, node_name, "not-looked", f"{head} serves {driver}; its pod on {node_name} was not "
                          f"looked for: {unseen}", _ref(ds), how, reason=unseen)  # fmt: skip
        why = (
            "its spec admits the node: see its events (FailedCreate: PodSecurity, quota) with kubectl describe ds"
            if node is not None
            else "the input has no Node object to compare its spec with"
        )
        return Plugin(driver, node_name, "no-pod", f"{head} has no pod on {node_name}; {why}", _ref(ds), how,
                      problem=True, reason=why)  # fmt: skip
    st = pod_state(mine[0], pick[0] if pick else None)
    c = st["container"]
    pod = f"its plugin pod on {node_name}, {st['pod']} of {head}"
    own = f"its container {c}, which likely serves {driver} ({CONTAINER_LINK_WORDS[pick[1]]})," if c else ""
    if not st["ready"] or st["deleting"]:
        state = "terminating" if st["deleting"] else state_words(st)
        short = "terminating" if st["deleting"] else (f"container {c}: " if c else "") + state_words(st, when=False)
        said = f"{pod}: {own} is not ready: {state}" if c and not st["deleting"] else f"{pod}, is not ready: {state}"
        return Plugin(driver, node_name, "pod-not-ready", said, _ref(ds), how, st, problem=True,
                      reason=short)  # fmt: skip
    note = ""
    if not st["podReady"]:  # its container is ready, another is not: Ready is the pod's, readiness each container's
        others = ", ".join(n for n in st["notReady"] if n != c) or "a readiness gate"
        note = f"container {c} ready; the pod is not Ready: {others} not ready"
        msg = f"{pod}, is not Ready ({others} not ready), but {own} is ready"
    else:
        msg = f"{pod}, is Ready"
    started = st["startedAt"] or ""
    if word is not None and word.cls == "not-registered":
        if started and started > word.last:
            msg += (
                f" and started at {started}, after the kubelet's last report ({word.last}): the kubelet retries and "
                "should find the driver registered"
            )
            return Plugin(driver, node_name, "pod-ready", msg, _ref(ds), how, st, reason=note)
        here = _slices_on(seen, driver, node_name)
        publishes = (
            f"; it publishes {len(here)} ResourceSlice{'s' if len(here) != 1 else ''} for the node" if here else ""
        )
        msg += (
            f" since {started or 'an unknown time'}, before the kubelet's last report ({word.last}){publishes}: the "
            "plugin runs but the kubelet has not registered it (a kubelet --root-dir other than the plugin's "
            "registrar directory, an unsupported gRPC service, or a rejected registration); read the plugin's log"
        )
        return Plugin(driver, node_name, "pod-ready", msg, _ref(ds), how, st, problem=True, reason=note)
    since = f" since {started}" if started else ""
    return Plugin(driver, node_name, "pod-ready", msg + since, _ref(ds), how, st, reason=note)


def pods_by_node(pods) -> dict[str, list]:
    """Pods by spec.nodeName (the pods of one DaemonSet: at most one a node, unless one is being replaced)."""
    out: dict = {}
    for p in pods:
        node = _d(p.get("spec")).get("nodeName")
        if isinstance(node, str) and node:
            out.setdefault(node, []).append(p)
    return out


def judge_nodes(seen: Seen, driver: str, nodes: dict) -> dict[str, Plugin]:
    """The plugin of driver on each node (name -> its Node, or None when the input has none), judged as
    judge_on_node judges it before the kubelet speaks: the DaemonSets are searched once and the plugin pods
    grouped by node once (devices asks this for every node with devices)."""
    pre = prepare(seen, driver)
    if not pre[0]:
        p = _not_found(seen, driver, None)
        return {n: Plugin(driver, n, p.state, p.message, problem=p.problem, reason=p.reason) for n in nodes}
    return {n: judge_on_node(seen, driver, node, n, None, pre) for n, node in nodes.items()}


def prepare(seen: Seen, driver: str) -> tuple:
    """What judging the plugin of driver on a node needs that no node changes: the DaemonSets that run it
    (find_plugins), the first one's pods by node, and its container that likely serves the driver (or None)."""
    found = find_plugins(seen, driver)
    if not found:
        return found, {}, None
    ds = found[0][0]
    return found, pods_by_node(_owned(seen, ds)), serving_container(_template(ds), driver, _managers(seen, driver))


def judge_publishing(seen: Seen, driver: str) -> Plugin:
    """No ResourceSlice of the driver exists anywhere: is a plugin deployed, does it run, does it publish?"""
    found = find_plugins(seen, driver)
    if not found:
        return _not_found(seen, driver, None)
    ds, how = found[0]
    head = f"DaemonSet {_ref(ds)}"
    st = _d(ds.get("status"))
    desired, ready = count(st.get("desiredNumberScheduled")), count(st.get("numberReady"))
    if desired == 0:
        sel = _d(_template(ds).get("nodeSelector"))
        why = f" (its nodeSelector {', '.join(f'{k}={v}' for k, v in sel.items())})" if sel else ""
        return Plugin(driver, None, "not-covered", f"{head} runs the kubelet plugin of {driver} but matches no "
                      f"node{why}: desiredNumberScheduled is 0", _ref(ds), how, problem=True)  # fmt: skip
    if ready < desired:
        bad = [pod_state(p) for p in _owned(seen, ds)]
        bad = [s for s in bad if not s["ready"]]
        eg = f"; e.g. {bad[0]['pod']}: {state_words(bad[0])}" if bad else ""
        return Plugin(driver, None, "pods-not-ready", f"{head} runs the kubelet plugin of {driver}: {ready} of "
                      f"{desired} pods ready{eg}", _ref(ds), how, bad[0] if bad else None, problem=True)  # fmt: skip
    return Plugin(
        driver,
        None,
        "publishing-nothing",
        f"{head} runs the kubelet plugin of {driver} with {ready} of {desired} pods ready, yet no ResourceSlice of "
        f"{driver} exists: the plugin runs and publishes nothing (a driver-specific prerequisite: read its log)",
        _ref(ds),
        how,
        problem=True,
    )
