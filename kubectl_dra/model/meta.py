"""Object metadata: the accessors every layer reads, and whose controller a pod is (owner_of)."""

from __future__ import annotations


def meta_of(o: dict) -> dict:
    return o.get("metadata") or {}


def name_of(o: dict) -> str:
    return meta_of(o).get("name", "")


def ns_of(o: dict) -> str:
    return meta_of(o).get("namespace", "") or ""


def owner_of(pod: dict, workloads: tuple = ()) -> str | None:
    """Kind/name of the pod's controller; a ReplicaSet's Deployment when the ReplicaSet is known or its name is the
    Deployment's plus the pod-template-hash (as the Deployment controller names it)."""
    ref = next((r for r in meta_of(pod).get("ownerReferences") or [] if r.get("controller")), None)
    if ref is None:
        return None
    kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
    if kind == "ReplicaSet":
        for w in workloads:
            if w.get("kind") == "ReplicaSet" and name_of(w) == name and ns_of(w) == ns_of(pod):
                up = next((r for r in meta_of(w).get("ownerReferences") or [] if r.get("controller")), None)
                if up is not None:
                    return f"{up.get('kind')}/{up.get('name')}"
                return f"{kind}/{name}"
        h = (meta_of(pod).get("labels") or {}).get("pod-template-hash")
        if h and name.endswith("-" + h) and len(name) > len(h) + 1:
            return f"Deployment/{name[: -len(h) - 1]}"
    return f"{kind}/{name}"


def priority_of(pod: dict) -> int:
    """corev1helpers.PodPriority: spec.priority, else 0."""
    p = (pod.get("spec") or {}).get("priority")
    return p if isinstance(p, int) and not isinstance(p, bool) else 0


def gang_of(pod: dict) -> str | None:
    """The pod group the pod names: spec.schedulingGroup.podGroupName (1.36+) or spec.workloadRef (1.35). The API
    server keeps these fields only with the GenericWorkload gate on, so a pod that has one tells that the cluster
    schedules gangs (all or nothing: gang.py)."""
    spec = pod.get("spec") or {}
    group = (spec.get("schedulingGroup") or {}).get("podGroupName")
    if isinstance(group, str) and group:
        return group
    ref = spec.get("workloadRef") or {}
    if isinstance(ref, dict) and ref.get("name"):
        return f"{ref.get('name')}/{ref.get('podGroup') or ''}".rstrip("/")
    return None


# The uid of a pod kubectl-dra makes up (a workload's pod template as its controller would create it, a replica of
# it: analyze/reports/workload.py, replicas.py), never an API server's (a UUID)
STAND_IN_UID = "kubectl-dra-"


def is_stand_in(pod: dict) -> bool:
    """Whether the pod is one kubectl-dra made up from a pod template, not one the input holds."""
    uid = meta_of(pod).get("uid")
    return isinstance(uid, str) and uid.startswith(STAND_IN_UID)
