"""A pod's place in its lifecycle as kubectl shows it: Terminating (a deletionTimestamp) and what keeps a pod there.

kubectl get shows a pod with a deletionTimestamp as Terminating whatever its phase (kubectl's printers). Its devices
stay allocated to its claims until the kubelet unprepares them and the pod object is gone, so the pods waiting for
them wait on what keeps it: its finalizers, a node whose kubelet is gone (nothing can finish the pod there), or the
driver's kubelet plugin missing on the node (DRA612, kubelet.py)."""

from __future__ import annotations

from kubectl_dra.analyze.pod.driver import node_not_ready
from kubectl_dra.findings.model import Finding, make
from kubectl_dra.model.meta import meta_of


def terminating(pod: dict) -> bool:
    return bool(meta_of(pod).get("deletionTimestamp"))


def shown_phase(pod: dict) -> str:
    """The phase as kubectl get shows it: Terminating for a pod being deleted, else status.phase."""
    if terminating(pod):
        return "Terminating"
    return str((pod.get("status") or {}).get("phase") or "Unknown")


def terminating_finding(pod: dict, node: dict | None, devices: list[str], plugins: list[str] = ()) -> Finding | None:
    """DRA613 for a pod being deleted: since when, what can keep it (finalizers, its node's kubelet, the drivers whose
    kubelet plugin is missing there: plugins, from DRA612), and the devices it holds until it is gone."""
    meta = meta_of(pod)
    since = meta.get("deletionTimestamp")
    if not since:
        return None
    keeps = []
    finalizers = [f for f in meta.get("finalizers") or [] if isinstance(f, str)]
    if finalizers:
        keeps.append(f"finalizer(s) {', '.join(finalizers)} (the controller that owns each removes it)")
    down = node_not_ready(node) if node is not None else None
    node_name = (pod.get("spec") or {}).get("nodeName")
    if down:
        keeps.append(f"its node {node_name}: {down}, so its kubelet cannot finish the pod")
    if plugins:
        keeps.append(f"the kubelet plugin of {', '.join(plugins)}, missing on the node (DRA612)")
    held = f"; it holds {', '.join(devices)} until it is gone" if devices else ""
    grace = meta.get("deletionGracePeriodSeconds")
    within = f" (grace period {grace}s)" if isinstance(grace, int) else ""
    return make(
        "DRA613",
        f"the pod is being deleted since {since}{within}{held}"
        + (f"; what can keep it: {'; '.join(keeps)}" if keeps else ""),
        since=since,
        finalizers=finalizers,
        devices=devices,
        **({"node": node_name} if node_name else {}),
    )
