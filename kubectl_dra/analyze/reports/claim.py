"""`explain claim` and `match claim`: one claim, with no pod (the devices it has or would get now, and why not).

Their analysis is explain pod's (reports/explain.py) without a pod: no node constraints of a pod, no kubelet."""

from __future__ import annotations

from dataclasses import replace

from kubectl_dra.analyze.allocator import obj_ref
from kubectl_dra.analyze.pod.claims import meta_of as _meta
from kubectl_dra.analyze.pod.claims import name_of as _name
from kubectl_dra.analyze.pod.claims import ns_of as _ns
from kubectl_dra.analyze.pod.claims import read_gap_findings
from kubectl_dra.analyze.pod.coverage import analysed_objects, coverage_findings, taint_rule_findings
from kubectl_dra.analyze.pod.dryrun import Analysis
from kubectl_dra.analyze.pod.patches import patch_findings
from kubectl_dra.analyze.pod.verdicts import device_findings, pool_findings
from kubectl_dra.analyze.reports.bodies import assumed_note, claim_body, ok_summary, semantics_finding
from kubectl_dra.analyze.reports.explain import asked
from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import OPENS_BLOCKED, UNDETERMINED, Report, dedupe, make, verdict_from
from kubectl_dra.model.snapshot import Snapshot


def explain_claim(snap: Snapshot, sem: Semantics, namespace: str, name: str) -> Report:
    an = Analysis(snap, sem)
    claim = asked(an, snap, "ResourceClaim", namespace, name)
    an.findings.extend(read_gap_findings(snap.gaps))
    an.findings.append(semantics_finding(sem, snap))
    if _meta(claim).get("deletionTimestamp"):
        an.findings.append(
            make("DRA204", f'resourceclaim "{namespace}/{name}" is being deleted', claim=f"{namespace}/{name}")
        )
    analyses, dry = an.analyse_claims([claim], None, [None])
    a = analyses[0]
    if not any(f.blocking for f in an.findings):
        if a.allocated:
            picks = ", ".join(
                f"{r.get('request')} -> {r.get('driver')}/{r.get('pool')}/{r.get('device')}"
                for r in ((claim["status"]["allocation"].get("devices") or {}).get("results") or [])
            )
            an.findings.append(
                make("DRA001", f"claim {name} is allocated: {picks or 'no devices'}", subject={"claim": obj_ref(claim)})
            )
        else:
            device_findings(an, analyses, dry, None)
    pool_findings(an)
    an.findings.extend(patch_findings(an, analyses))
    an.findings.extend(taint_rule_findings(an.taint_rule_gaps))
    an.findings.extend(coverage_findings(analysed_objects(analyses), an.sem))
    findings = dedupe(an.findings)
    ok, now_on = ok_summary(analyses, dry, None, findings)
    verdict = verdict_from(findings, assumed_note(sem, ok), now_on)
    owners = [f"{o.get('kind')}/{o.get('name')}" for o in _meta(claim).get("ownerReferences") or []]
    body = {
        "claim": {"name": name, "namespace": namespace, "owners": owners},
        "claims": [claim_body(a)],
        "nodes": {"usable": dry.usable, "synthetic": an.idx.nodes_synthetic},
    }
    return Report("Diagnosis", tuple(findings), body, sem.to_dict(), verdict)


def match_claim(snap: Snapshot, sem: Semantics, claim: dict) -> Report:
    """Which devices would satisfy the claim now. A template is matched as the claim it would generate.
    An already-allocated claim is matched as if its own allocation were released."""
    if claim.get("kind") == "ResourceClaimTemplate":
        claim = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": _name(claim), "namespace": _ns(claim)},
            "spec": (claim.get("spec") or {}).get("spec") or {},
        }
    me = obj_ref(claim)
    snap2 = replace(snap, claims=tuple(c for c in snap.claims if obj_ref(c) != me))
    probe = dict(claim)
    probe.pop("status", None)
    an = Analysis(snap2, sem)
    an.findings.extend(read_gap_findings(snap.gaps))
    an.findings.append(semantics_finding(sem, snap))
    analyses, dry = an.analyse_claims([probe], None, [None])
    if not any(f.blocking for f in an.findings):
        device_findings(an, analyses, dry, None)
    an.findings.extend(patch_findings(an, analyses))
    an.findings.extend(taint_rule_findings(an.taint_rule_gaps))
    an.findings.extend(coverage_findings(analysed_objects(analyses), an.sem))
    findings = dedupe(an.findings)
    satisfiable = bool(dry.allocatable) and not any(f.blocking for f in findings)
    # A field the analysis does not model leaves even a "satisfiable" open.
    determined = not any(f.code in OPENS_BLOCKED for f in findings) and (
        satisfiable or not any(f.code in UNDETERMINED for f in findings)
    )
    a = analyses[0]
    requests = []
    for alts in a.requests:
        for r in alts:
            m = a.matrices.get(r.name) or []
            requests.append({"name": r.name, "deviceClassName": r.class_name, "devices": [v.to_dict() for v in m]})
    body = {
        "claim": {"name": _name(claim), "namespace": _ns(claim)},
        "satisfiable": satisfiable,
        "determined": determined,
        "nodes": dry.allocatable_nodes,
        "requests": requests,
        "dryRun": a.dry_run.to_dict() if a.dry_run else None,
    }
    return Report("MatchResult", tuple(findings), body, sem.to_dict(), None)
