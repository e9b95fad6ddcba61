"""The parts the reports of explain.py share (explain pod, explain claim, match claim): a claim's body and state,
the assumed semantics (DRA003), and the summary used when nothing blocks."""

from __future__ import annotations

from kubectl_dra.analyze.pod.claims import meta_of as _meta
from kubectl_dra.analyze.pod.claims import name_of as _name
from kubectl_dra.analyze.pod.claims import ns_of as _ns
from kubectl_dra.analyze.pod.dryrun_result import ClaimAnalysis
from kubectl_dra.analyze.pod.extended import IN_MEMORY_NAME
from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import Finding, make, now_head
from kubectl_dra.model.snapshot import Snapshot


def claim_body(a: ClaimAnalysis, all_devices: bool = True, shared: dict | None = None) -> dict:
    """shared: the device rows already written (id of a matrix's DeviceVerdict -> (it, its row)), kept by the
    caller for several reports of one analysis: pods of one shape share their matrices (the dry-run's marked copy
    shares every verdict it does not mark), so each verdict is written once, not once per pod."""
    c = a.claim
    status = c.get("status") or {}
    alloc = status.get("allocation")
    body = {
        "name": _name(c),
        "namespace": _ns(c),
        "podClaimName": a.pod_claim_name,
        "state": claim_state(c),
        "allocation": None,
        "reservedFor": [f"{r.get('resource', '')}/{r.get('name', '')}" for r in status.get("reservedFor") or []],
        "requests": [],
    }
    if alloc:
        body["allocation"] = {
            "results": [
                {k: r.get(k) for k in ("request", "driver", "pool", "device") if k in r}
                for r in ((alloc.get("devices") or {}).get("results") or [])
            ],
            "nodeSelector": alloc.get("nodeSelector"),
        }
    elif a.dry_run:
        body["dryRun"] = a.dry_run.to_dict()
    for alts in a.requests:
        for r in alts:
            m = a.matrices.get(r.name)
            body["requests"].append(
                {
                    "name": r.name,
                    "deviceClassName": r.class_name,
                    "allocationMode": r.mode,
                    "count": r.count if r.mode == "ExactCount" else None,
                    "selectors": [((s.get("cel") or {}).get("expression")) for s in r.selectors],
                    "classSelectors": [
                        ((s.get("cel") or {}).get("expression"))
                        for s in ((r.class_obj or {}).get("spec") or {}).get("selectors") or []
                    ],
                    "classFound": r.class_obj is not None,
                    "devices": _rows(m, shared) if m is not None and all_devices else [],
                }
            )
    return body


def _rows(m: list, shared: dict | None) -> list[dict]:
    """The matrix's verdicts as rows (shared between the reports that hold them: no one changes a row)."""
    if shared is None:
        return [v.to_dict() for v in m]
    whole = shared.get(("matrix", id(m)))
    if whole is not None and whole[0] is m:
        return whole[1]  # the same matrix, the same list (what reads it may keep what it read of it: devmap.py)
    out = []
    for v in m:
        hit = shared.get(id(v))
        if hit is None or hit[0] is not v:
            hit = shared[id(v)] = (v, v.to_dict())
        out.append(hit[1])
    shared[("matrix", id(m))] = (m, out)
    return out


def claim_state(c: dict) -> str:
    st = c.get("status") or {}
    if _meta(c).get("deletionTimestamp"):
        return "deleted"
    if st.get("allocation"):
        return "allocated,reserved" if st.get("reservedFor") else "allocated"
    if _name(c) == IN_MEMORY_NAME:
        return "not-created"  # the scheduler builds it from the containers' extended-resource requests
    return "pending"


def semantics_finding(sem: Semantics, snap: Snapshot, cache=None) -> Finding:
    """DRA003, the semantics assumed. cache (an Analysis's, pod/cache.py): made once for the reports of an answer."""
    if cache is not None:
        if cache.semantics_finding is None or cache.semantics_finding[0] is not sem:
            cache.semantics_finding = (sem, semantics_finding(sem, snap))
        return cache.semantics_finding[1]
    gates = ", ".join(f"{k}={'true' if sem.gates[k] else 'false'}" for k in sorted(sem.overridden)) or "defaults"
    src = {
        "flag": "from --kubernetes-version",
        "server": "the API server's version",
        "default": "newest released; pass --kubernetes-version",
    }[sem.version_source]
    extra = ""
    if sem.newer_server:
        src = (
            f"the API server is {sem.newer_server}, newer than the newest supported minor {sem.version_str}: "
            f"its DRA semantics are assumed to be {sem.version_str}'s and may differ"
        )
    if snap.source in ("live", "bundle"):
        extra = "; the scheduler's own feature gates and in-flight allocations are not visible through the API"
    return make(
        "DRA003",
        f"assumed Kubernetes {sem.version_str} ({src}), feature gates: {gates}{extra}",
        kubernetesVersion=sem.version_str,
        featureGates=dict(sem.gates),
        serverVersion=sem.newer_server,
    )


def assumed_note(sem: Semantics, summary: str) -> str:
    """A verdict reached with a newer server's semantics assumed says so."""
    if sem.newer_server:
        return f"{summary} (assuming Kubernetes {sem.version_str} semantics for a {sem.newer_server} server)"
    return summary


def ok_summary(analyses, dry, node_name, findings) -> tuple[str, str | None]:
    """The verdict's summary when nothing blocks, and the node it says the claims are allocatable on now (None
    where it says something else)."""
    unseen = sum(1 for f in findings if f.code == "DRA215")
    if unseen:  # a Running pod: its devices are prepared, whatever the input holds of its claims
        on = f" on node {node_name}" if node_name else ""
        return f"the pod is Running{on}: its devices are prepared ({unseen} claim(s) not in the input)", None
    if any(f.code == "DRA613" for f in findings):  # being deleted: nothing of DRA holds it, it holds devices
        return "the pod is Terminating: it holds its devices until it is gone (DRA613 says what can keep it)", None
    if not analyses:
        return "the pod has no ResourceClaims to allocate", None
    if any(f.code == "DRA604" for f in findings):
        return f"claims allocated and reserved; waiting for the kubelet on {node_name} to prepare the devices", None
    if all(a.allocated for a in analyses):
        where = f" on node {node_name}" if node_name else ""
        return f"all {len(analyses)} claim(s) allocated{where}", None
    pre = next((f for f in findings if f.code == "DRA507"), None)
    if pre is not None:
        from kubectl_dra.analyze.pod.preempt import pods_of_lower

        n = len(pre.evidence.get("victims") or ())
        where = pre.evidence.get("where") or f"node {pre.evidence['node']}"  # "one of A, B" for a tie
        return (
            f"the pod is placed on {where} once the {pods_of_lower(n)} it preempts there {'is' if n == 1 else 'are'} gone",
            None,
        )
    if dry.allocatable:
        first = dry.allocatable[0]
        via = next((f for f in findings if f.code == "DRA227" and f.evidence.get("node") == first.node), None)
        if via is not None:  # the extended resources come from the node's device plugin
            served = ", ".join(via.evidence.get("resources") or [])
            return f"the pod fits on node {first.node}, whose device plugin serves {served}" + (
                "; its claims are allocatable there" if first.claims else ""
            ), None
        return now_head(first.node), first.node
    return "nothing blocks", None
