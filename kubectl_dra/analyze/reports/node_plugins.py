"""`kubectl dra devices`: whether a kubelet plugin serves each driver on each node whose devices are listed. A
node's slices outlive its plugin where nothing wipes them (a never-registered plugin, a NotReady node), and their
devices look free while the kubelet cannot prepare them: a user looking for free devices needs to see it.

The plugin is found and judged by analyze/pod/driver.py, the code the driver piece of `explain pod` uses (one
implementation): the DaemonSets that mount the kubelet's plugins_registry, linked to the driver, and the plugin's
pod on the node. Only node-local devices (a slice's spec.nodeName) have a node to judge; devices of pools that
select nodes (nodeSelector, allNodes) are prepared by the plugin of whichever node the pod lands on."""

from __future__ import annotations

from dataclasses import dataclass, replace

from kubectl_dra.analyze.pod.driver import Plugin, judge_nodes
from kubectl_dra.analyze.pod.kubelet import seen_of
from kubectl_dra.model.meta import name_of

# The plugin's status on a node, from driver.Plugin's state
SERVING, NOT_READY, NO_POD, UNKNOWN = "serving", "not-ready", "no-pod", "unknown"
_STATUS = {
    "pod-ready": SERVING,
    "pod-not-ready": NOT_READY,
    "not-covered": NO_POD,
    "no-pod": NO_POD,
    "not-looked": UNKNOWN,
    "not-found": UNKNOWN,
}
STATUSES = (SERVING, NOT_READY, NO_POD, UNKNOWN)


@dataclass(frozen=True)
class NodePlugin:
    """The kubelet plugin of one driver on one node. status: serving (its pod on the node is Ready: whether the
    kubelet registered it, no API object says), not-ready (the pod is there and not Ready), no-pod (the DaemonSet
    runs none there, and why), unknown (the DaemonSets or pods were not read, or no DaemonSet runs the driver's
    plugin: it may run as a host service or in a namespace that cannot be listed). reason: why, in a few words."""

    node: str
    driver: str
    status: str
    reason: str
    plugin: Plugin

    @property
    def likely(self) -> bool:
        """The verdict rests on a heuristic link: the DaemonSet is the only kubelet plugin there is, or the pod is
        not Ready and the container that likely serves the driver is (plugin_pod.py)."""
        pod = self.plugin.pod or {}
        return self.plugin.link == "only" or (self.status == SERVING and not pod.get("podReady", True))

    def words(self) -> str:
        """One line: "gpu.example.com plugin not ready (CrashLoopBackOff, 12 restarts)"."""
        what = {SERVING: "plugin serving", NOT_READY: "plugin not ready", NO_POD: "no plugin pod",
                UNKNOWN: "plugin unknown"}[self.status]  # fmt: skip
        if self.likely and self.status == SERVING:
            what = "plugin likely serving"
        why = f" ({self.reason})" if self.reason else ""
        ds = ""
        if self.plugin.link == "only":
            ds = f"; likely DaemonSet {self.plugin.daemonset}, the only kubelet plugin found"
        return f"{self.driver} {what}{why}{ds}"

    def to_dict(self) -> dict:
        p = self.plugin.to_dict()
        return {
            "node": self.node,
            "driver": self.driver,
            "status": self.status,
            "reason": self.reason or None,
            "likely": self.likely,
            "message": self.plugin.message,
            **{k: p[k] for k in ("daemonset", "link", "linkWords", "pod")},
        }


def node_plugins(snap, rows) -> list[NodePlugin]:
    """For each (node, driver) of the listed node-local devices, in node then driver order."""
    drivers: dict[str, set] = {}
    for r in rows:
        if r.node:
            drivers.setdefault(r.driver, set()).add(r.node)
    if not drivers:
        return []
    seen = seen_of(snap)
    refused = [g for g in snap.gaps if g.resource == "pods"]
    if refused and not snap.bound_pods and seen.pods_gap is None:
        # pods listed namespace by namespace, some refused: a plugin pod may be among the unseen
        where = ", ".join(sorted({g.namespace or "every namespace" for g in refused}))
        seen = replace(seen, pods_gap=f"cannot list pods in {where}: {refused[0].message}")
    objs = {name_of(n): n for n in snap.nodes}
    out = []
    for d in sorted(drivers):
        judged = judge_nodes(seen, d, {n: objs.get(n) for n in sorted(drivers[d])})
        out += [NodePlugin(n, d, _STATUS[p.state], p.reason, p) for n, p in judged.items()]
    return sorted(out, key=lambda x: (x.node, x.driver))
