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
from typing import NamedTuple

from kubectl_dra.analyze.pod.plugin_pod import POD_GENERATION, container_strings, count, words_of
from kubectl_dra.model.meta import meta_of, name_of, ns_of
from kubectl_dra.model.nodes import (
    NodeSelectorError,
    node_selector_matches,
    node_selector_words,
    pod_node_rejection,
    tolerates,
)

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


# The recommended labels (kubernetes.io/docs/concepts/overview/working-with-objects/common-labels) a chart or a
# kustomization puts on everything it installs: app.kubernetes.io/instance names the installation (Helm: the release)
_INSTANCE, _APP = "app.kubernetes.io/instance", "app.kubernetes.io/name"


def _instance(obj: dict) -> tuple | None:
    labels = dict_of(meta_of(obj).get("labels"))
    inst = labels.get(_INSTANCE)
    return (inst, labels.get(_APP)) if isinstance(inst, str) and inst else None


def _binaries(strings, managers: set[str]) -> list[str]:
    return sorted(managers & words_of(strings))


def evidence(ds: dict, driver: str, classes, managers: set[str]) -> tuple[str, str] | None:
    """How the DaemonSet is tied to the driver, strongest first, with the evidence in words: "named" (its name in the
    template's command, args, env or host paths), "helm" (the Helm release of a DeviceClass that selects the
    driver), "labels" (the app.kubernetes.io/instance and name labels of such a DeviceClass), "manager" (the slices'
    field manager, the plugin binary's name, in a container's command or args), else None."""
    strings = _strings(ds)
    if any(driver in s for s in strings):
        return "named", f"its pod template names {driver}"
    mine = [c for c in classes if driver in drivers_named(class_expressions(c))]
    release = _helm(ds)
    by_helm = [c for c in mine if release is not None and _helm(c) == release]
    if by_helm:
        return "helm", f"Helm release {release[0]}, as DeviceClass {name_of(by_helm[0])}"
    inst = _instance(ds)
    by_labels = [c for c in mine if inst is not None and _instance(c) == inst]
    if by_labels:
        return "labels", f"{_INSTANCE}={inst[0]}, as DeviceClass {name_of(by_labels[0])}"
    ran = _binaries(strings, managers)
    if ran:
        return "manager", f"it runs {ran[0]}, which wrote the ResourceSlices of {driver}"
    return None


def link(ds: dict, driver: str, classes, managers: set[str]) -> str | None:
    """The kind of evidence() that ties the DaemonSet to the driver, None when nothing does."""
    got = evidence(ds, driver, classes, managers)
    return got[0] if got else None


def node_of(pod: dict) -> str | None:
    """The node a DaemonSet's pod is for: its spec.nodeName once bound, else the one node its required node
    affinity names by metadata.name, as the DaemonSet controller pins a pod it creates
    (controller/daemon/util ReplaceDaemonSetPodNodeNameNodeAffinity) before the scheduler binds it."""
    spec = dict_of(pod.get("spec"))
    if isinstance(spec.get("nodeName"), str) and spec["nodeName"]:
        return spec["nodeName"]
    required = dict_of(dict_of(dict_of(spec.get("affinity")).get("nodeAffinity")).get(
        "requiredDuringSchedulingIgnoredDuringExecution"))  # fmt: skip
    names = {
        v
        for t in list_of(required.get("nodeSelectorTerms"))
        for f in list_of(dict_of(t).get("matchFields"))
        if dict_of(f).get("key") == "metadata.name" and dict_of(f).get("operator") == "In"
        for v in list_of(dict_of(f).get("values"))
        if isinstance(v, str) and v
    }
    return names.pop() if len(names) == 1 else None


class Gap(NamedTuple):
    """Why the DaemonSet runs no pod on a node, said of one node or of several: "node-01 does not match its
    nodeSelector k=v", "node-01 and node-02 do not match ...". verbs: (one, several); () when rest is a sentence."""

    verbs: tuple
    rest: str

    def of(self, who: str, several: bool = False) -> str:
        return f"{who} {self.verbs[several]} {self.rest}" if self.verbs else f"{who}: {self.rest}"


def coverage(ds: dict, node: dict) -> Gap | None:
    """Why the DaemonSet controller runs no pod of ds on node (its nodeSelector, required node affinity and what it
    wants, a cordon, an untolerated taint), or None when it would run one. The scheduler's node filters decide
    (model/nodes.py pod_node_rejection), on the fields that decide it, each read as absent when it has the wrong
    shape; the filter that rejects is found by asking them one at a time, in their order."""
    t = template_of(ds)
    tolerations = [x for x in list_of(t.get("tolerations")) if isinstance(x, dict)] + list(_DS_TOLERATIONS)
    if t.get("hostNetwork") is True:
        tolerations.append(_NET)
    selector = {k: v for k, v in dict_of(t.get("nodeSelector")).items() if isinstance(v, str)}
    required = dict_of(dict_of(t.get("affinity")).get("nodeAffinity")).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    affinity = {}
    if isinstance(required, dict) and all(isinstance(x, dict) for x in list_of(required.get("nodeSelectorTerms"))):
        affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}
    why = pod_node_rejection(
        {"spec": {"nodeSelector": selector, "tolerations": tolerations, "affinity": affinity}}, node
    )
    if why is None:
        return None
    labels = dict_of(meta_of(node).get("labels"))
    missing = next(((k, v) for k, v in selector.items() if labels.get(k) != v), None)
    if missing is not None:
        return Gap(("does not match", "do not match"), f"its nodeSelector {missing[0]}={missing[1]}")
    try:
        admits = not affinity or node_selector_matches(required, node)
    except NodeSelectorError as e:
        return Gap((), f"its required node affinity is invalid: {e}")
    if not admits:
        wants = node_selector_words(required)
        nfd = "; Node Feature Discovery sets the feature.node.kubernetes.io/ labels" if _NFD in wants else ""
        return Gap(("does not match", "do not match"), f"its required node affinity (it wants {wants}{nfd})")
    taint = next(
        (x for x in list_of(dict_of(node.get("spec")).get("taints")) if isinstance(x, dict)
         and x.get("effect") in ("NoSchedule", "NoExecute") and not any(tolerates(o, x) for o in tolerations)),
        None,
    )  # fmt: skip
    if taint is None:  # the one filter left: a cordoned node whose taint the DaemonSet's pods tolerate
        return Gap(("is", "are"), "unschedulable (cordoned)")
    return Gap(
        ("has", "have"), f"the untolerated taint {taint.get('key')}={taint.get('value', '')}:{taint.get('effect')}"
    )


def coverage_gap(ds: dict, node: dict) -> str | None:
    """coverage() of one node in words: "node does not match its nodeSelector k=v", or None."""
    gap = coverage(ds, node)
    return gap.of("node") if gap is not None else None


# Node Feature Discovery's label prefix: NVIDIA's chart requires a node with an NVIDIA PCI device found by NFD
_NFD = "feature.node.kubernetes.io/"


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
