"""`explain deploy/NAME` (sts, rs, ds, job): kubectl's TYPE/NAME for the workloads that own pods and which pods it
covers, and the report for a workload with no pods.

The pods are the ones the workload controls, through the controller ownerReference chain the controllers write
(a Deployment's pods belong to its ReplicaSets), as `kubectl describe` finds them.

With no pods: the controller's FailedCreate events, the namespace's device quotas, and the pod template dry-run as a
new pod (its claims generated from their templates, as the resourceclaim controller would). Never "nothing blocks"
for pods that do not exist: with no visible reason the verdict is undetermined (DRA019)."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import TYPE_CHECKING

from kubectl_dra.errors import DraError
from kubectl_dra.model.kinds import POD, WORKLOADS
from kubectl_dra.model.meta import STAND_IN_UID, meta_of, name_of, ns_of
from kubectl_dra.model.scope import not_found

if TYPE_CHECKING:
    from kubectl_dra.features import Semantics
    from kubectl_dra.findings.model import Report
    from kubectl_dra.model.snapshot import Snapshot

# kubectl's names, short names and group-qualified names -> (kind, API base path, resource)
KINDS: dict[str, tuple[str, str, str]] = {
    alias: (k.kind, k.api_base, k.plural) for k in (POD, *WORKLOADS) for alias in k.aliases()
}


def parse_type_name(text: str) -> tuple[str, str]:
    """'deploy/web' -> ('Deployment', 'web'); a one-line error for a type kubectl-dra does not follow."""
    kind, _, name = text.partition("/")
    entry = KINDS.get(kind.lower())
    if entry is None or not name or "/" in name:
        known = ", ".join(["pod", *(k.short or k.kind.lower() for k in WORKLOADS)])
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
            "uid": f"{STAND_IN_UID}template-{name_of(workload)}",
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


# ---------------------------------------------------------------------------------------------------
# The report for a workload with no pods (explain_workload_without_pods)


def wanted_replicas(workload: dict) -> int | None:
    """How many pods the workload wants now (None: the controller decides per node, a DaemonSet)."""
    spec = workload.get("spec") or {}
    kind = workload.get("kind")
    if kind == "DaemonSet":
        return (workload.get("status") or {}).get("desiredNumberScheduled")
    if kind == "Job":
        return 0 if spec.get("suspend") else spec.get("parallelism", 1)
    return spec.get("replicas", 1)


# long: one case per way a controller may have made no pods (quota, FailedCreate, template)
def explain_workload_without_pods(snap: Snapshot, sem: Semantics, workload: dict) -> Report:
    # Imported here: the command line reads KINDS (parse_type_name) from this module before the gather, which
    # overlaps the loading of the analysis (analyze.preload).
    from kubectl_dra.analyze.pod.extended import pod_extended_resources
    from kubectl_dra.analyze.pod.pieces import pod_pieces
    from kubectl_dra.analyze.reports.explain import explain_pod
    from kubectl_dra.findings.model import Report, dedupe, make, verdict_from

    kind, ns, name = workload.get("kind"), ns_of(workload), name_of(workload)
    ref = f"{kind}/{name}"
    wanted = wanted_replicas(workload)
    pod = template_pod(workload)
    if pod is None:
        raise DraError(f"{ref} in namespace {ns} has no pods and no pod template")
    templates = {(ns_of(t), name_of(t)): t for t in snap.templates}
    claims = template_claims(pod, templates)
    snap2 = replace(snap, pods=snap.pods + (pod,), claims=snap.claims + tuple(claims))
    base = explain_pod(snap2, sem, ns, name_of(pod))
    findings = []
    for e in creation_failures(snap, workload)[-1:]:
        findings.append(
            make(
                "DRA208",
                f"{e['object']['kind']}/{e['object']['name']} could not create pods: {e['message']}",
                subject={"workload": ref},
                event={"reason": e["reason"], "message": e["message"], "time": e["time"], "count": e["count"]},
            )
        )
    classes = {
        (r.get("exactly") or r).get("deviceClassName")
        for c in claims
        for r in ((c.get("spec") or {}).get("devices") or {}).get("requests") or []
    }
    classes |= {
        s.get("deviceClassName")
        for c in claims
        for r in ((c.get("spec") or {}).get("devices") or {}).get("requests") or []
        for s in r.get("firstAvailable") or []
    }
    ext = pod_extended_resources(pod, list(snap.classes), sem)
    resources = {r.resource for r in ext.requests}
    resources |= {
        k
        for ctr in ((pod.get("spec") or {}).get("containers") or [])
        for k in (((ctr.get("resources") or {}).get("requests")) or {})
        if "/" in str(k)
    }
    for q in exhausted_quotas(snap, ns, {c for c in classes if c}, resources):
        findings.append(
            make(
                "DRA209",
                f"ResourceQuota {q['quota']}: {q['resource']} is used up ({q['used']} of {q['hard']}); a new pod of "
                f"{ref} is refused",
                subject={"workload": ref},
                **q,
            )
        )
    findings += base.findings
    if wanted != 0 and not any(f.blocking for f in findings):
        findings.append(
            make(
                "DRA019",
                f"{ref} wants {wanted if wanted is not None else 'some'} pod(s) and has none, and nothing visible "
                "says why: its pod template would get its devices now (dry-run), so the cause is elsewhere "
                "(the controller, admission)",
                subject={"workload": ref},
            )
        )
    findings = dedupe(findings)
    idle = "is suspended" if (workload.get("spec") or {}).get("suspend") else "is scaled to zero"
    ok = f"{ref} {idle}: it wants no pods" if wanted == 0 else base.verdict.summary
    verdict = verdict_from(findings, ok)
    body = dict(base.body)
    body["workload"] = {
        "kind": kind,
        "name": name,
        "namespace": ns,
        "wantedPods": wanted,
        "pods": 0,
        "templatePod": name_of(pod),
    }
    body["pieces"] = pod_pieces(findings, body)
    return Report("Diagnosis", tuple(findings), body, base.semantics, verdict)
