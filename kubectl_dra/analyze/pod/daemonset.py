"""A DaemonSet as the driver piece reads it (analyze/pod/driver.py): whether it may run a kubelet plugin, its link to
a driver, whether it covers a node, its pods' state and its rollout. Pure; the DaemonSets are read from every
namespace and walked only here: a field of the wrong shape reads as absent (untrusted input).

Facts (k8s.io/kubernetes pkg/controller/daemon, 1.37):
- The DaemonSet controller runs a pod on a node that passes the template's nodeSelector, required node affinity
  and taints, with the tolerations it adds itself (util AddOrUpdateDaemonPodTolerations).
- A rolling update replaces the pods whose template generation is not the DaemonSet's (util IsPodUpdated), at
  most maxUnavailable nodes at a time (update.go; maxSurge starts the new pod first).
"""

from __future__ import annotations

import re

from kubectl_dra.analyze.pod.plugin_pod import POD_GENERATION, container_strings, count, words_of
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


def drivers_named(expressions) -> set[str]:
    """The driver names CEL selectors pin with `device.driver == "x"` (what a DeviceClass usually says)."""
    out = set()
    for e in expressions:
        for m in _DRIVER_LITERAL.finditer(e if isinstance(e, str) else ""):
            out.add(m.group(1) or m.group(2))
    return out


def dict_of(x) -> dict:
    return x if isinstance(x, dict) else {}


def list_of(x) -> list:
    return x if isinstance(x, list) else []


def class_expressions(cls: dict | None) -> list[str]:
    return [
        e
        for s in list_of(dict_of(dict_of(cls).get("spec")).get("selectors"))
        if isinstance(e := dict_of(dict_of(s).get("cel")).get("expression"), str)
    ]


# ---------------------------------------------------------------------------------------------------
# The plugin: candidates, the link to a driver, coverage of a node (the pod's state: plugin_pod.py). The DaemonSets are read
# from every namespace and walked only here: a field of the wrong shape reads as absent (untrusted input).


def template_of(ds: dict) -> dict:
    return dict_of(dict_of(dict_of(ds.get("spec")).get("template")).get("spec"))


def _containers(ds: dict) -> list[dict]:
    t = template_of(ds)
    return [c for c in list_of(t.get("initContainers")) + list_of(t.get("containers")) if isinstance(c, dict)]


def _host_paths(ds: dict) -> list[str]:
    return [
        p
        for v in list_of(template_of(ds).get("volumes"))
        if isinstance(p := dict_of(dict_of(v).get("hostPath")).get("path"), str)
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
    a = dict_of(meta_of(obj).get("annotations"))
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
    t = template_of(ds)
    tolerations = [x for x in list_of(t.get("tolerations")) if isinstance(x, dict)] + list(_DS_TOLERATIONS)
    if t.get("hostNetwork") is True:
        tolerations.append(_NET)
    selector = {k: v for k, v in dict_of(t.get("nodeSelector")).items() if isinstance(v, str)}
    required = dict_of(dict_of(t.get("affinity")).get("nodeAffinity")).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    spec: dict = {"nodeSelector": selector, "tolerations": tolerations}
    if isinstance(required, dict) and all(isinstance(x, dict) for x in list_of(required.get("nodeSelectorTerms"))):
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}
    why = pod_node_rejection({"spec": spec}, node)
    return why.replace("the pod's ", "its ") if why else None


def owned_by(pod: dict, ds: dict) -> bool:
    uid = meta_of(ds).get("uid")
    refs = [r for r in list_of(meta_of(pod).get("ownerReferences")) if isinstance(r, dict)]
    if uid and any(r.get("uid") == uid for r in refs):
        return True
    return ns_of(pod) == ns_of(ds) and any(r.get("kind") == "DaemonSet" and r.get("name") == name_of(ds) for r in refs)


# The DaemonSet's template generation (apps/v1 DeprecatedTemplateGeneration) and the pod's label of the one it was
# made from (plugin_pod.POD_GENERATION): controller/daemon/util IsPodUpdated compares them
_DS_GENERATION = "deprecated.daemonset.template.generation"


def rollout(ds: dict) -> str:
    """ ", mid-rollout (K of N pods updated)" while some of the DaemonSet's pods are of an older template
    (updatedNumberScheduled below currentNumberScheduled), else "". Fewer updated than desired alone is no rollout:
    a node whose pod cannot be created (FailedCreate) counts in neither."""
    st = dict_of(ds.get("status"))
    desired, current, updated = (st.get(k) for k in ("desiredNumberScheduled", "currentNumberScheduled",
                                                      "updatedNumberScheduled"))  # fmt: skip
    if all(isinstance(x, int) for x in (desired, current, updated)) and updated < current:
        return f", mid-rollout ({updated} of {desired} pods updated)"
    return ""


def template_generation(ds: dict) -> str | None:
    """The DaemonSet's template generation (the annotation the API server keeps), None when it has none."""
    g = dict_of(meta_of(ds).get("annotations")).get(_DS_GENERATION)
    return g if isinstance(g, str) else None


def template_age(ds: dict, pod: dict) -> tuple[str, str]:
    """("old", "pod-template-generation G, the DaemonSet's H") when the pod was made from an older template than
    the DaemonSet's, ("current", "") when from its template, ("unknown", "") when either number is missing. (The
    controller also counts a pod as updated whose controller-revision-hash is the current revision's, as after a
    rollback; that hash is not on the DaemonSet, so "old" is likely, not certain.)"""
    want = dict_of(meta_of(ds).get("annotations")).get(_DS_GENERATION)
    have = dict_of(meta_of(pod).get("labels")).get(POD_GENERATION)
    if not (isinstance(want, str) and isinstance(have, str) and want.isdigit() and have.isdigit()):
        return "unknown", ""
    return ("current", "") if want == have else ("old", f"{POD_GENERATION} {have}, the DaemonSet's {want}")


def _scaled(v, total: int) -> int | None:
    """intstr GetScaledValueFromIntOrPercent(roundUp=true): an int, or a percentage of total rounded up."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str) and v.endswith("%") and v[:-1].isdigit():
        return -(-int(v[:-1]) * total // 100)
    if isinstance(v, str) and v.isdigit():
        return int(v)
    return None


def max_unavailable(ds: dict) -> str:
    """How many nodes may lose the DaemonSet's pod at once during a rolling update, in words (maxUnavailable,
    maxSurge; the apps/v1 defaults 1 and 0; controller/daemon update.go updatedDesiredNodeCounts: both 0 is 1)."""
    strategy = dict_of(dict_of(ds.get("spec")).get("updateStrategy"))
    if strategy.get("type") == "OnDelete":
        return "updateStrategy OnDelete: a pod is replaced only when it is deleted"
    ru = dict_of(strategy.get("rollingUpdate"))
    mu, ms = ru.get("maxUnavailable", 1), ru.get("maxSurge", 0)
    desired = count(dict_of(ds.get("status")).get("desiredNumberScheduled"))
    at_once = _scaled(mu, desired)
    if _scaled(ms, desired) and not at_once:
        return f"maxSurge {ms}: the new pod starts on a node before the old one stops"
    if mu == "100%" or (desired and at_once is not None and at_once >= desired):
        return f"maxUnavailable {mu}: every node may lose its plugin at once"
    many = f"up to {max(at_once, 1)} of {desired} nodes" if at_once is not None and desired else "that many nodes"
    return f"maxUnavailable {mu}: {many} lose their plugin at a time"


def update_note(ds: dict, pod: dict | None) -> str:
    """Why the plugin on this node may be down for the DaemonSet's update: '; ...' or ''. pod: its pod on the
    node, None when it has none."""
    rolling = bool(rollout(ds))
    age, words = template_age(ds, pod) if pod is not None else ("none", "")
    if age == "old":
        what = f"its pod here is of an older template ({words}) and is replaced by the update"
    elif rolling and age == "none":
        what = "the rollout may have deleted its pod here to replace it"
    elif rolling and age == "unknown":
        what = "its pod here may be the old one, to be replaced, or the new one"
    else:
        return ""  # not rolling, or the pod is of the current template: the rollout has passed this node
    return f"; {what}: the plugin on this node may be down for the update ({max_unavailable(ds)})"
