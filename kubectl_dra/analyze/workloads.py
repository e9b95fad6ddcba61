"""kubectl's TYPE/NAME for the workloads that own pods: which pods `explain deploy/NAME` (sts, rs, ds, job) covers.

The pods are the ones the workload controls, through the controller ownerReference chain the controllers write
(a Deployment's pods belong to its ReplicaSets), as `kubectl describe` finds them."""

from __future__ import annotations

import copy

from kubectl_dra.analyze.meta import meta_of, name_of, ns_of
from kubectl_dra.errors import DraError
from kubectl_dra.model.scope import not_found

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
    raise not_found(snap, kind, name, namespace)


def pods_of(snap, workload: dict) -> list[tuple[str, str]]:
    """(namespace, name) of the pods the workload controls, sorted."""
    owners = [workload]
    if workload.get("kind") == "Deployment":
        owners = [rs for rs in snap.workloads if rs.get("kind") == "ReplicaSet" and _controlled_by(rs, workload)]
    ns = ns_of(workload)
    return sorted((ns, name_of(p)) for p in snap.pods if ns_of(p) == ns and any(_controlled_by(p, o) for o in owners))


# ---------------------------------------------------------------------------------------------------
# A workload whose pods do not exist (yet): what the API shows about why, and its pod template dry-run


TEMPLATE_POD_SUFFIX = "(template)"  # the name of the stand-in pod: never a real pod's (parentheses are invalid)
_QUOTA_SUFFIX = ".deviceclass.resource.k8s.io/devices"


def template_pod(workload: dict) -> dict | None:
    """The pod the workload's controller would create, from spec.template (None without one)."""
    tpl = (workload.get("spec") or {}).get("template")
    if not isinstance(tpl, dict):
        return None
    meta = tpl.get("metadata") or {}
    name = f"{name_of(workload)}-{TEMPLATE_POD_SUFFIX}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": ns_of(workload),
            "uid": f"kubectl-dra-template-{name_of(workload)}",
            "labels": dict(meta.get("labels") or {}),
            "ownerReferences": [
                {
                    "kind": workload.get("kind"),
                    "name": name_of(workload),
                    "uid": meta_of(workload).get("uid"),
                    "controller": True,
                }
            ],
        },
        "spec": copy.deepcopy(tpl.get("spec") or {}),
        "status": {"phase": "Pending"},
    }


def template_claims(pod: dict, templates: dict) -> list[dict]:
    """The claims the resourceclaim controller would generate for the stand-in pod (templates that exist), recorded
    in its status as the controller does; a missing template is left for the claim checks to report (DRA202)."""
    out, statuses = [], []
    for pc in (pod.get("spec") or {}).get("resourceClaims") or []:
        tname = pc.get("resourceClaimTemplateName")
        t = templates.get((ns_of(pod), tname)) if tname else None
        if t is None:
            continue
        cname = f"{name_of(pod)}-{pc.get('name')}"
        out.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {
                    "name": cname,
                    "namespace": ns_of(pod),
                    "uid": f"kubectl-dra-template-claim-{cname}",
                    "annotations": {"resource.kubernetes.io/pod-claim-name": pc.get("name")},
                    "ownerReferences": [
                        {"kind": "Pod", "name": name_of(pod), "uid": meta_of(pod)["uid"], "controller": True}
                    ],
                },
                "spec": copy.deepcopy((t.get("spec") or {}).get("spec") or {}),
            }
        )
        statuses.append({"name": pc.get("name"), "resourceClaimName": cname})
    if statuses:
        pod["status"]["resourceClaimStatuses"] = statuses
    return out


def creation_failures(snap, workload: dict) -> list[dict]:
    """FailedCreate events of the workload's controller (for a Deployment: of its ReplicaSets), newest last."""
    owners = [workload]
    if workload.get("kind") == "Deployment":
        owners += [rs for rs in snap.workloads if rs.get("kind") == "ReplicaSet" and _controlled_by(rs, workload)]
    keys = {(o.get("kind"), ns_of(o), name_of(o)) for o in owners}
    evs = [
        e
        for e in snap.events
        if e["reason"] in ("FailedCreate", "FailedCreatePodSandBox", "FailedResourceClaimCreation")
        and (e["object"]["kind"], e["object"]["namespace"], e["object"]["name"]) in keys
    ]
    return sorted(evs, key=lambda e: e["time"])


def exhausted_quotas(snap, namespace: str, classes: set[str], resources: set[str]) -> list[dict]:
    """Hard limits of the namespace's ResourceQuotas on devices of these classes (`<class>.deviceclass.resource.k8s.io/
    devices`) or on these extended resources (`requests.<name>`) that are used up: one more pod's claim is refused."""
    from kubectl_dra.quantity import QuantityError, parse_quantity

    out = []
    for q in snap.quotas:
        if ns_of(q) != namespace:
            continue
        hard = (q.get("status") or {}).get("hard") or (q.get("spec") or {}).get("hard") or {}
        used = (q.get("status") or {}).get("used") or {}
        for key, limit in sorted(hard.items()):
            cls = key[: -len(_QUOTA_SUFFIX)] if key.endswith(_QUOTA_SUFFIX) else None
            res = key[len("requests.") :] if key.startswith("requests.") else None
            if not ((cls and cls in classes) or (res and res in resources)):
                continue
            try:
                full = parse_quantity(str(used.get(key, "0"))) >= parse_quantity(str(limit))
            except QuantityError:
                continue
            if full:
                out.append({"quota": name_of(q), "resource": key, "hard": str(limit), "used": str(used.get(key, "0"))})
    return out
