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


# skipNodeOperations (1.37 alpha DRAOptionalNodeOperations): the node operations a result's devices skip
PREPARE, UNPREPARE, SKIP_ALL = "NodePrepareResources", "NodeUnprepareResources", "*"


def drivers_of_claims(claims, skip: str | None = None) -> list[str]:
    """The drivers the kubelet must call for these allocated claims (every result's driver), in first-seen order.
    With skip (PREPARE or UNPREPARE), without the drivers the kubelet skips that call for: in one claim, a driver
    whose every result lists the operation or "*" in skipNodeOperations (k8s.io/kubernetes 1.37
    pkg/kubelet/cm/dra claiminfo.go computeDriverStates; an unknown value skips nothing). A driver is called when
    any claim calls it."""
    out: list[str] = []
    for c in claims:
        by: dict[str, bool] = {}  # driver -> every result of it in this claim skips the operation
        for r in (((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []:
            d = r.get("driver") if isinstance(r, dict) else None
            if isinstance(d, str) and d:
                ops = r.get("skipNodeOperations")
                skips = skip is not None and isinstance(ops, list) and (SKIP_ALL in ops or skip in ops)
                by[d] = by.get(d, True) and skips
        out += [d for d, skipped in by.items() if not skipped and d not in out]
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
    out = []
    for c in _containers(ds):
        out += [s for s in _lst(c.get("command")) + _lst(c.get("args")) if isinstance(s, str)]
        out += [v for e in _lst(c.get("env")) if isinstance(v := _d(e).get("value"), str)]
    return out + _host_paths(ds)


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
    words = {w.rsplit("/", 1)[-1] for s in strings for w in s.split()}
    if managers & words:
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


def _int(x) -> int:
    """A count from a status field, 0 when it is not one (the input is untrusted)."""
    return x if isinstance(x, int) and not isinstance(x, bool) else 0


def pod_state(pod: dict) -> dict:
    """The plugin pod as `kubectl get pod` shows it: phase, ready, restarts, why it waits, its last termination.
    Fields of the wrong shape read as absent (the input is untrusted)."""
    d, lst = _d, _lst
    st = d(pod.get("status"))
    cs = [c for c in lst(st.get("initContainerStatuses")) + lst(st.get("containerStatuses")) if isinstance(c, dict)]
    ready = any(d(c).get("type") == "Ready" and d(c).get("status") == "True" for c in lst(st.get("conditions")))
    waiting = next((d(d(c.get("state")).get("waiting")) for c in cs if d(c.get("state")).get("waiting")), {})
    last = next(
        (d(d(c.get("lastState")).get("terminated")) for c in cs if d(c.get("lastState")).get("terminated")), None
    )
    started = [s for c in cs if isinstance(s := d(d(c.get("state")).get("running")).get("startedAt"), str)]
    return {
        "pod": f"{ns_of(pod)}/{name_of(pod)}",
        "phase": st.get("phase") or "Pending",
        "ready": ready,
        "restarts": sum(_int(c.get("restartCount")) for c in cs),
        "waiting": waiting.get("reason"),
        "lastTerminated": (
            {"reason": last.get("reason"), "exitCode": last.get("exitCode"), "finishedAt": last.get("finishedAt")}
            if last
            else None
        ),
        "startedAt": max((s for s in started if s), default=None),
        "deleting": bool(meta_of(pod).get("deletionTimestamp")),
    }


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
    return [p for i, p in enumerate(got) if owned_by(p, ds) and all(p is not q for q in got[:i])]


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
    if not linked and len(cands) == 1:
        linked = [(cands[0], "only")]
    if not linked:
        return []
    best = min(_STRENGTH[w] for _, w in linked)
    return [(d, w) for d, w in linked if _STRENGTH[w] == best]


def _ref(o: dict) -> str:
    return f"{ns_of(o)}/{name_of(o)}"


def _not_found(seen: Seen, driver: str, node: str | None) -> Plugin:
    if seen.daemonsets_gap:
        return Plugin(driver, node, "not-looked", f"the kubelet plugin of {driver} was not looked for: "
                      f"{seen.daemonsets_gap}")  # fmt: skip
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


def _state_words(st: dict) -> str:
    words = [st["waiting"] or st["phase"]]
    if st["restarts"]:
        words.append(f"{st['restarts']} restart{'s' if st['restarts'] != 1 else ''}")
    last = st["lastTerminated"]
    if last:
        words.append(
            f"last exit {last.get('exitCode')} ({last.get('reason') or 'terminated'}) at {last.get('finishedAt')}"
        )
    return ", ".join(str(w) for w in words)


def judge_on_node(seen: Seen, driver: str, node: dict | None, node_name: str, word) -> Plugin:
    """The plugin of driver on the pod's node, after the kubelet said `word` (a kubelet.KubeletWord) about it, or
    nothing yet (None)."""
    found = find_plugins(seen, driver)
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
            return Plugin(driver, node_name, "not-found", msg, problem=True)
        return p
    ds, how = found[0]
    also = f" (also {', '.join(_ref(d) for d, _ in found[1:])})" if len(found) > 1 else ""
    head = f"DaemonSet {_ref(ds)}{also}{_rollout(ds)}"
    if node is not None:
        gap = coverage_gap(ds, node)
        if gap is not None:
            return Plugin(driver, node_name, "not-covered", f"{head} runs no pod on {node_name}: {gap}",
                          _ref(ds), how, problem=True)  # fmt: skip
    mine = [p for p in _owned(seen, ds) if (p.get("spec") or {}).get("nodeName") == node_name]
    if not mine:
        unseen = seen.pods_gap or (
            None
            if seen.pods_listed or _owned(seen, ds)
            else f"the input has no pod of it (add `kubectl get pods -n {ns_of(ds)} -o yaml` to it)"
        )
        if unseen:
            return Plugin(driver, node_name, "not-looked", f"{head} serves {driver}; its pod on {node_name} was not "
                          f"looked for: {unseen}", _ref(ds), how)  # fmt: skip
        why = (
            "its spec admits the node: see its events (FailedCreate: PodSecurity, quota) with kubectl describe ds"
            if node is not None
            else "the input has no Node object to compare its spec with"
        )
        return Plugin(
            driver, node_name, "no-pod", f"{head} has no pod on {node_name}; {why}", _ref(ds), how, problem=True
        )
    st = pod_state(mine[0])
    if not st["ready"] or st["deleting"]:
        state = "terminating" if st["deleting"] else _state_words(st)
        return Plugin(driver, node_name, "pod-not-ready", f"its plugin pod on {node_name}, {st['pod']} of {head}, is "
                      f"not ready: {state}", _ref(ds), how, st, problem=True)  # fmt: skip
    started = st["startedAt"] or ""
    msg = f"its plugin pod on {node_name}, {st['pod']} of {head}, is Ready"
    if word is not None and word.cls == "not-registered":
        if started and started > word.last:
            msg += (
                f" and started at {started}, after the kubelet's last report ({word.last}): the kubelet retries and "
                "should find the driver registered"
            )
            return Plugin(driver, node_name, "pod-ready", msg, _ref(ds), how, st)
        here = _slices_on(seen, driver, node_name)
        publishes = (
            f"; it publishes {len(here)} ResourceSlice{'s' if len(here) != 1 else ''} for the node" if here else ""
        )
        msg += (
            f" since {started or 'an unknown time'}, before the kubelet's last report ({word.last}){publishes}: the "
            "plugin runs but the kubelet has not registered it (a kubelet --root-dir other than the plugin's "
            "registrar directory, an unsupported gRPC service, or a rejected registration); read the plugin's log"
        )
        return Plugin(driver, node_name, "pod-ready", msg, _ref(ds), how, st, problem=True)
    return Plugin(driver, node_name, "pod-ready", msg + (f" since {started}" if started else ""), _ref(ds), how, st)


def judge_publishing(seen: Seen, driver: str) -> Plugin:
    """No ResourceSlice of the driver exists anywhere: is a plugin deployed, does it run, does it publish?"""
    found = find_plugins(seen, driver)
    if not found:
        return _not_found(seen, driver, None)
    ds, how = found[0]
    head = f"DaemonSet {_ref(ds)}"
    st = _d(ds.get("status"))
    desired, ready = _int(st.get("desiredNumberScheduled")), _int(st.get("numberReady"))
    if desired == 0:
        sel = _d(_template(ds).get("nodeSelector"))
        why = f" (its nodeSelector {', '.join(f'{k}={v}' for k, v in sel.items())})" if sel else ""
        return Plugin(driver, None, "not-covered", f"{head} runs the kubelet plugin of {driver} but matches no "
                      f"node{why}: desiredNumberScheduled is 0", _ref(ds), how, problem=True)  # fmt: skip
    if ready < desired:
        bad = [pod_state(p) for p in _owned(seen, ds)]
        bad = [s for s in bad if not s["ready"]]
        eg = f"; e.g. {bad[0]['pod']}: {_state_words(bad[0])}" if bad else ""
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
