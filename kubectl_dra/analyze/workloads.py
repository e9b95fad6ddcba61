"""kubectl's TYPE/NAME for the workloads that own pods: which pods `explain deploy/NAME` (sts, rs, ds, job) covers.

The pods are the ones the workload controls, through the controller ownerReference chain the controllers write
(a Deployment's pods belong to its ReplicaSets), as `kubectl describe` finds them."""

from __future__ import annotations

from kubectl_dra.analyze.meta import meta_of, name_of, ns_of
from kubectl_dra.errors import DraError

# kubectl's names, short names and group-qualified names -> (kind, API base path, resource)
KINDS: dict[str, tuple[str, str, str]] = {}
for _kind, _group, _plural, _short in (
    ("Pod", "", "pods", "po"),
    ("Deployment", "apps", "deployments", "deploy"),
    ("StatefulSet", "apps", "statefulsets", "sts"),
    ("ReplicaSet", "apps", "replicasets", "rs"),
    ("DaemonSet", "apps", "daemonsets", "ds"),
    ("Job", "batch", "jobs", ""),
):
    _entry = (_kind, f"/apis/{_group}/v1" if _group else "/api/v1", _plural)
    for _alias in (_kind.lower(), _plural, _short, f"{_kind.lower()}.{_group}", f"{_plural}.{_group}"):
        if _alias and not _alias.endswith("."):
            KINDS[_alias] = _entry


def parse_type_name(text: str) -> tuple[str, str]:
    """'deploy/web' -> ('Deployment', 'web'); a one-line error for a type kubectl-dra does not follow."""
    kind, _, name = text.partition("/")
    entry = KINDS.get(kind.lower())
    if entry is None or not name or "/" in name:
        known = "pod, deploy, sts, rs, ds, job"
        raise DraError(f"{text!r}: expected TYPE/NAME with TYPE one of {known} (or their kubectl names)")
    return entry[0], name


def _controlled_by(obj: dict, owner: dict) -> bool:
    uid = meta_of(owner).get("uid")
    for ref in meta_of(obj).get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == owner.get("kind") and ref.get("name") == name_of(owner):
            return not uid or not ref.get("uid") or ref.get("uid") == uid
    return False


def find_workload(snap, kind: str, namespace: str, name: str) -> dict:
    for w in snap.workloads:
        if w.get("kind") == kind and ns_of(w) == namespace and name_of(w) == name:
            return w
    raise DraError(f'{kind.lower()}s "{name}" not found in namespace "{namespace}"')


def pods_of(snap, workload: dict) -> list[tuple[str, str]]:
    """(namespace, name) of the pods the workload controls, sorted."""
    owners = [workload]
    if workload.get("kind") == "Deployment":
        owners = [rs for rs in snap.workloads if rs.get("kind") == "ReplicaSet" and _controlled_by(rs, workload)]
    ns = ns_of(workload)
    return sorted((ns, name_of(p)) for p in snap.pods if ns_of(p) == ns and any(_controlled_by(p, o) for o in owners))
