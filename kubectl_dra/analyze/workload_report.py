"""`explain deploy/NAME` (sts, rs, ds, job) for a workload with no pods: the controller's FailedCreate events, the
namespace's device quotas, and the pod template dry-run as a new pod (its claims generated from their templates, as
the resourceclaim controller would). Never "nothing blocks" for pods that do not exist: with no visible reason the
verdict is undetermined (DRA019)."""

from __future__ import annotations

from dataclasses import replace

from kubectl_dra.analyze.explain import explain_pod
from kubectl_dra.analyze.extended import pod_extended_resources
from kubectl_dra.analyze.meta import name_of, ns_of
from kubectl_dra.analyze.pieces import pod_pieces
from kubectl_dra.analyze.report import dedupe
from kubectl_dra.analyze.workloads import creation_failures, exhausted_quotas, template_claims, template_pod
from kubectl_dra.errors import DraError
from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import Report, make, verdict_from
from kubectl_dra.model.snapshot import Snapshot


def wanted_replicas(workload: dict) -> int | None:
    """How many pods the workload wants now (None: the controller decides per node, a DaemonSet)."""
    spec = workload.get("spec") or {}
    kind = workload.get("kind")
    if kind == "DaemonSet":
        return (workload.get("status") or {}).get("desiredNumberScheduled")
    if kind == "Job":
        return 0 if spec.get("suspend") else spec.get("parallelism", 1)
    return spec.get("replicas", 1)


def explain_workload_without_pods(snap: Snapshot, sem: Semantics, workload: dict) -> Report:
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
