"""From the per-device matrices and the dry-run to findings: which request, stage or constraint blocks.

A pure function of an Analysis (dryrun.py); the codes come from the stage a device was rejected at or from the
kind of allocator error, never from message text."""

from __future__ import annotations

from kubectl_dra.analyze.allocator import (
    ErrorKind,
    obj_ref,
)
from kubectl_dra.analyze.pod.claims import name_of as _name
from kubectl_dra.analyze.pod.constraint_findings import constraint_findings
from kubectl_dra.analyze.pod.dryrun import Analysis
from kubectl_dra.analyze.pod.dryrun_result import ClaimAnalysis, DryRun
from kubectl_dra.analyze.pod.request_findings import request_findings
from kubectl_dra.findings.model import Finding, make
from kubectl_dra.findings.stages import Stage
from kubectl_dra.model.snapshot import TAINT_RULES
from kubectl_dra.model.words import few

# Allocator error kind -> finding code.
ERROR_KIND_CODES = {
    ErrorKind.CEL_RUNTIME: "DRA301",
    ErrorKind.CEL_COMPILE: "DRA302",
    ErrorKind.INEXACT: "DRA303",
    ErrorKind.REQUEST: "DRA213",
    ErrorKind.CLASS: "DRA211",
    ErrorKind.FEATURE_DISABLED: "DRA212",
    ErrorKind.ALL_POOL: "DRA413",
    ErrorKind.INVALID_POOL: "DRA413",
    ErrorKind.CONSTRAINT: "DRA409",
    ErrorKind.ATTRIBUTE: "DRA416",
    ErrorKind.STATE: "DRA417",
    ErrorKind.TIMEOUT: "DRA414",
    ErrorKind.UPSTREAM_CRASH: "DRA415",
    ErrorKind.ERROR: "DRA413",
}


def device_findings(
    an: Analysis, analyses: list[ClaimAnalysis], dry: DryRun, pod: dict | None, plugin_resources: tuple = ()
) -> None:
    """Why the pending claims can or cannot be allocated: the first case that applies (the devices cannot be read,
    DRA103; the dry-run erred where the scheduler meets the error; it allocates, DRA002; no real nodes to decide
    on, DRA018; no node the pod may use, DRA503), else why no node works. Each appends its findings to an.findings
    in the report's order (an error the scheduler may not meet, DRA304, before the case that follows it).
    plugin_resources: the DRA-backed extended resources the pod asks for, which a node's device plugin may serve
    instead (only the Node objects tell)."""
    if (
        _unreadable(an, analyses, dry, pod)
        or _dry_run_error(an, analyses, dry, pod)
        or _allocatable(an, analyses, dry, pod)
        or _no_real_nodes(an, analyses, dry, pod, plugin_resources)
        or _no_usable_node(an, analyses, dry, pod)
    ):
        return
    _no_node_works(an, analyses, dry)


def _unreadable(an: Analysis, analyses, dry: DryRun, pod) -> bool:
    """DRA103: the slices, classes or claims could not be read, so nothing can be said about the devices (the claims
    hold them: unread, every device looks free), nor where the scheduler applies DeviceTaintRules and they could not
    be read (a rule may taint any device); DRA104: the input holds none of them (a kubectl get that left the kind
    out)."""
    blind = [
        g
        for g in an.idx.gaps
        if g.resource.startswith(("resourceslices", "deviceclasses", "resourceclaims.", "resource.k8s.io"))
        or (g.resource == TAINT_RULES and an.sem.taint_rules)
    ]
    if not blind:
        return False
    g = blind[0]
    if g.reason == "absent":
        an.findings.append(
            make("DRA104", f"cannot tell whether devices are available: {g.message}", resource=g.resource)
        )
        return True
    an.findings.append(
        make(
            "DRA103",
            f"cannot tell whether devices are available: {g.verb} {g.resource} was refused",
            verb=g.verb,
            resource=g.resource,
            namespace=g.namespace,
        )
    )
    return True


def _dry_run_error(an: Analysis, analyses, dry: DryRun, pod) -> bool:
    """The allocator's error that ends the dry-run, as the code of its kind; or, when the scheduler may not meet it
    (errors_met.py) and the claims fit elsewhere, DRA304, and the cases after it go on."""
    if dry.error is None:
        return False
    err = dry.error
    code = ERROR_KIND_CODES[err.kind]
    if not dry.error_decides:  # the scheduler may not meet it (errors_met.py), and the claims fit elsewhere
        an.findings.append(
            make(
                "DRA304",
                f"on node {dry.error_node} the allocator meets an error that ends the scheduler's attempt "
                f"({err.message}), and the scheduler may not meet it: {dry.error_maybe}",
                node=dry.error_node,
                errorCode=code,
                error=err.message,
                why=dry.error_maybe,
                **err.evidence,
            )
        )
        return False
    hint = None
    if code == "DRA301" and "no such key" not in err.message:
        hint = "Fix the expression or the attribute types; the error aborts scheduling until then."
    message = err.message
    if dry.also_met:  # Filter runs on the nodes in parallel: the first error met is the one reported
        node, other = next(iter(dry.also_met.items()))
        more = f" (or one of {len(dry.also_met) - 1} more)" if len(dry.also_met) > 1 else ""
        message += (
            f"; the scheduler filters nodes in parallel and may report instead the error it meets on node {node}"
            f"{more}: {other}"
        )
    also = {"alsoMet": dict(dry.also_met)} if dry.also_met else {}
    an.findings.append(make(code, message, hint=hint, node=dry.error_node, **also, **err.evidence))
    return True


def _allocatable(an: Analysis, analyses, dry: DryRun, pod) -> bool:
    """DRA002 per claim the dry-run allocates on the first node, each followed by the subrequests it fell back to."""
    if not dry.allocatable:
        return False
    nodes = dry.placeable_nodes or dry.allocatable_nodes  # NodeResourcesFit rejects the others (fit.py)
    more = " (and possibly more)" if dry.capped else ""
    # a claim the scheduler does not allocate on some nodes (the extended-resource claim where a device plugin
    # serves the resource) is named with the nodes where it is allocated only
    where = {x.node: {p.claim for p in x.claims} for x in dry.allocatable}
    for entry in dry.allocatable[0].claims:
        picks = ", ".join(f"{r['request']} -> {r['driver']}/{r['pool']}/{r['device']}" for r in entry.results)
        on = [n for n in nodes if entry.claim in where.get(n, ())]
        an.findings.append(
            make(
                "DRA002",
                f"claim {entry.claim} is allocatable now on node(s) {few(on)}{more}: {picks}",
                subject={"claim": entry.claim},
                nodes=on,
                results=entry.results,
            )
        )
        for r in entry.results:
            if "/" in r["request"]:
                base, sub = r["request"].split("/", 1)
                _fallback_info(an, entry.claim, analyses, base, sub)
    return True


def _no_real_nodes(an: Analysis, analyses, dry: DryRun, pod, plugin_resources: tuple = ()) -> bool:
    """DRA018: no node fits, but the nodes were inferred from the slices (the input has no Node objects): every
    pending request has a device that fails no check or only where it is (which the real nodes' labels, taints
    and declared features decide), or a node's device plugin may serve the pod's extended resources instead."""
    unknown = an.idx.nodes_synthetic or an.idx.nodes_statusless
    if not (unknown and (plugin_resources or _has_candidates(analyses, Stage.NODE))):
        return False
    if not an.idx.nodes_synthetic:
        bare = an.idx.nodes_statusless
        an.findings.append(
            make(
                "DRA018",
                f"no node fits the claims, but node(s) {few(bare)} have no "
                "status in the input (cut or edited: the API server always writes one): whether the claims fit "
                "there needs it (the node's declared features"
                + (f", whether its device plugin serves {', '.join(plugin_resources)}" if plugin_resources else "")
                + "), so it is undetermined",
                statuslessNodes=bare,
                failures=dry.failures,
                rejectedNodes=dry.rejected_nodes,
            )
        )
        return True
    inferred = [_name(n) for n in an.idx.nodes]
    an.findings.append(
        make(
            "DRA018",
            (
                "the input has no Node objects, and no node inferred from the slices' nodeName ("
                + ", ".join(inferred[:5])
                + (" ..." if len(inferred) > 5 else "")
                + ") fits the claims"
                if inferred
                else "the input has no Node objects, and no node can be inferred from the slices"
            )
            + ": whether the claims fit needs the real nodes (their labels for nodeSelector and allNodes "
            "devices, and the pod's node constraints"
            + (f"; whether a node's device plugin serves {', '.join(plugin_resources)}" if plugin_resources else "")
            + "), so it is undetermined",
            inferredNodes=inferred,
            failures=dry.failures,
            rejectedNodes=dry.rejected_nodes,
        )
    )
    return True


def _no_usable_node(an: Analysis, analyses, dry: DryRun, pod: dict | None) -> bool:
    """DRA503: the pod's own node constraints leave no node."""
    if pod is None or dry.usable:
        return False
    an.findings.append(
        make(
            "DRA503",
            "no node passes the pod's own node constraints (" + _why_nodes(dry.rejected_nodes) + ")",
            rejectedNodes=dry.rejected_nodes,
        )
    )
    return True


def _no_node_works(an: Analysis, analyses: list[ClaimAnalysis], dry: DryRun) -> None:
    """No node works. Errors that failed single nodes (1.35+: invalid pools; 1.38: allocationMode All over an
    incomplete or invalid pool) are what the scheduler reports for those nodes: said first, as it says them. Then
    the first explanation that finds something: per request from the matrices, the allocator's own search
    (allocator/why.py), the joint count, the constraints, else DRA413."""
    if dry.node_errors:
        nodes = sorted(dry.node_errors)
        first = dry.node_errors[nodes[0]]
        more = f" and {len(nodes) - 1} more" if len(nodes) > 1 else ""
        an.findings.append(
            make(
                ERROR_KIND_CODES[first.kind],
                f"on node {nodes[0]}{more}: {first.message}",
                node=nodes[0],
                nodes=nodes,
                **first.evidence,
            )
        )
    explained = False
    met = dry.error is not None or dry.capped  # (else no selector error was met where the dry-run looked)
    for a in analyses:
        if a.allocated:
            continue
        for alts in a.requests:
            found = request_findings(an, a, alts, met)
            an.findings.extend(found)
            explained = explained or bool(found)
    if not explained:
        # Why the allocator's own search found nothing (allocator/why.py): the claim-level reason.
        found = search_findings(an, analyses, dry)
        an.findings.extend(found)
        explained = bool(found)
    if not explained:
        joint = _joint_count_finding(analyses)
        if joint is not None:
            an.findings.append(joint)
            explained = True
    if not explained:
        _unexplained(an, analyses, dry)


def _unexplained(an: Analysis, analyses: list[ClaimAnalysis], dry: DryRun) -> None:
    """Nothing above explains it: the claims' constraints, else DRA413 (with the counters before 1.36)."""
    has_constraints = any(
        ((a.claim.get("spec") or {}).get("devices") or {}).get("constraints") for a in analyses if not a.allocated
    )
    if has_constraints:
        for a in analyses:
            if not a.allocated:
                an.findings.extend(constraint_findings(a, an.ev))
        return
    msg = "cannot allocate all claims on any node the pod may use"
    hint = None
    counters = any(
        v.entry.device.get("consumesCounters")
        for a in analyses
        for m in a.matrices.values()
        for v in m
        if v.outcome == "candidate"
    )
    if counters and an.sem.behaviour.legacy_allocate_device:
        msg += (
            " (the devices share counters: before 1.36 the allocator does not give back the counters of"
            " devices it tried and rejected, so it can run out although enough are free)"
        )
        hint = "Upgrade kube-scheduler to 1.36+, or request devices so that fewer candidates are rejected."
    an.findings.append(make("DRA413", msg, hint=hint, triedNodes=dry.tried_nodes, failures=dry.failures))


# long: one case per reason class of the allocator's record (allocator/why.py)
def search_findings(an: Analysis, analyses: list[ClaimAnalysis], dry: DryRun) -> list[Finding]:
    """The claim-level finding from the search's own record of why it failed (allocator/why.py): the request at
    the deepest position it reached on the node where it got deepest, and the class of the rejections there."""
    if not dry.why:
        return []
    node, why, alike = dry.why
    where = f"node {node}" + (f" (and {alike} more node(s) alike)" if alike else "")
    pending = [a for a in analyses if not a.allocated]
    if why.claim >= len(pending):
        return []
    a = pending[why.claim]
    reason = why.reason
    subject = {"claim": obj_ref(a.claim), "request": why.request_name}
    ev = {"search": dict(why.to_dict(), node=node, alikeNodes=alike)}
    label = f"claim {_name(a.claim)}, request {why.request_name}"
    if why.sub >= 0 and why.request < len(a.requests) and len(a.requests[why.request]) > 1:
        label += " (every subrequest)"
    if reason == "distinct":
        joint = _joint_count_finding(analyses)
        if joint is not None:
            return [joint]
        holders = []
        for _, h in why.taken:
            ci, _, req = h.partition("/")
            other = pending[int(ci)] if ci.isdigit() and int(ci) < len(pending) else None
            name = "of the same claim" if other is a else f"of claim {_name(other.claim)}" if other else ""
            text = f"request {req} {name}".strip()
            if text not in holders:
                holders.append(text)
        taken = ", ".join(d for d, _ in why.taken)
        by = f" are taken by {', '.join(holders)}" if holders else " are taken by earlier requests"
        return [
            make(
                "DRA408",
                f"{label} needs a device of its own, but on {where} the devices it can use"
                + (f" ({taken})" if taken else "")
                + f"{by}: the requests need more distinct devices than there are",
                hint="Add devices, lower the counts, or split the requests: one allocation never gives the same "
                "device to two requests.",
                subject=subject,
                **ev,
            )
        ]
    if reason == "constraint":
        found = constraint_findings(a, an.ev)
        if why.constraint is not None:
            found = [f for f in found if (f.subject or {}).get("constraint") == why.constraint] or found
        return found
    if reason == "compatibility":
        return [
            make(
                "DRA418",
                f"{label}: on {where} the devices it can use draw from counter sets whose other devices (allocated, or "
                "picked earlier in this allocation) share no compatibility group with them",
                subject=subject,
                **ev,
            )
        ]
    if reason in ("counters", "capacity"):
        held = ""
        if why.taken:
            held = f" (earlier requests hold {', '.join(d for d, _ in why.taken)})"
        if reason == "counters":
            msg = f"{label}: on {where} the shared counters of the devices it can use are used up{held}"
            hint = None
            if an.sem.behaviour.legacy_allocate_device:
                msg += (
                    " (before 1.36 the allocator does not give back the counters of devices it tried and rejected,"
                    " so it can run out although enough are free)"
                )
                hint = "Upgrade kube-scheduler to 1.36+, or request devices so that fewer candidates are rejected."
            return [make("DRA406", msg, hint=hint, subject=subject, **ev)]
        return [
            make(
                "DRA407",
                f"{label}: on {where} the devices it can use do not have enough capacity left{held}",
                subject=subject,
                **ev,
            )
        ]
    return [
        make(
            "DRA413",
            f"cannot allocate all claims on any node the pod may use: on {where} the search ends at {label}, "
            "where no device passes the checks",
            triedNodes=dry.tried_nodes,
            failures=dry.failures,
            subject=subject,
            **ev,
        )
    ]


def _joint_count_finding(analyses: list[ClaimAnalysis]) -> Finding | None:
    """Each request fits on its own, but together the pending requests need more distinct devices than any node
    has candidates for (a pigeonhole bound; devices that several allocations can share, admin access and
    allocationMode All are left to the dry-run)."""
    need, per_node, names = 0, {}, []
    for a in analyses:
        if a.allocated:
            continue
        for alts in a.requests:
            if any(r.mode != "ExactCount" or r.admin_access for r in alts):
                return None
            need += min(r.count for r in alts)
            names.append(f"{_name(a.claim)}/{alts[0].base_name}")
            for r in alts:
                for v in a.matrices.get(r.name, ()):
                    if v.outcome != "candidate":
                        continue
                    if v.entry.device.get("allowMultipleAllocations"):
                        return None
                    for n in v.nodes or ("*",):
                        per_node.setdefault(n, set()).add(v.entry.did)
    if len(names) < 2 or not per_node:
        return None
    best_node, best = max(((n, len(d)) for n, d in per_node.items()), key=lambda kv: kv[1])
    if best >= need:
        return None
    where = "" if best_node == "*" else f" (node {best_node})"
    return make(
        "DRA408",
        f"requests {', '.join(names)} fit one at a time, but together need {need} distinct device(s): at most {best} "
        f"candidate(s) on one node{where}",
        hint="Lower the counts, add devices, or free some: one allocation never gives the same device to two requests.",
        requests=names,
        needed=need,
        bestNode=best_node,
        candidates=sorted("/".join(d) for d in per_node[best_node]),
    )


def _has_candidates(analyses: list[ClaimAnalysis], but: Stage | None = None) -> bool:
    """Every pending request has a device that passes the per-device checks (so only node placement is left);
    but: a device rejected at that stage counts as one that passes."""
    pending = [a for a in analyses if not a.allocated]
    return bool(pending) and all(
        any(
            v.outcome == "candidate" or (but is not None and v.stage is but)
            for r in alts
            for v in a.matrices.get(r.name, ())
        )
        for a in pending
        for alts in a.requests
    )


def _fallback_info(an: Analysis, claim_ref, analyses, base, sub) -> None:
    for a in analyses:
        if obj_ref(a.claim) != claim_ref:
            continue
        for alts in a.requests:
            if alts and alts[0].base_name == base and alts[0].sub_name != sub:
                skipped = [r.sub_name for r in alts if r.sub_name != sub]
                idx = [r.sub_name for r in alts].index(sub) if sub in [r.sub_name for r in alts] else 0
                if idx > 0:
                    an.findings.append(
                        make(
                            "DRA004",
                            f"request {base} falls back to subrequest {sub} (earlier: {', '.join(skipped[:idx])})",
                            subject={"claim": claim_ref, "request": base},
                        )
                    )


def pool_findings(an: Analysis) -> None:
    """DRA410/DRA411 for the snapshot's incomplete and invalid pools (the same for every pod: computed once)."""
    if an.cache.pool_findings is None:
        out = []
        for key, pool in sorted(an.universe.pools.items()):
            state = an.universe.pool_states[key]
            if pool.invalid:
                out.append(make("DRA411", f"resource pool {key[0]}/{key[1]} is {state}", pool=f"{key[0]}/{key[1]}"))
            elif pool.incomplete:
                out.append(make("DRA410", f"resource pool {key[0]}/{key[1]} is {state}", pool=f"{key[0]}/{key[1]}"))
        an.cache.pool_findings = out
    an.findings.extend(an.cache.pool_findings)


def _why_nodes(rejected: dict, limit: int = 3) -> str:
    """`node-01: untolerated taint ...; node-02: ...` for the first few rejected nodes, grouped by reason."""
    by_reason: dict[str, list[str]] = {}
    for node, why in rejected.items():
        by_reason.setdefault(why, []).append(node)
    parts = []
    for why, nodes in list(by_reason.items())[:limit]:
        more = f" and {len(nodes) - 2} more" if len(nodes) > 2 else ""
        parts.append(f"{', '.join(nodes[:2])}{more}: {why}")
    if len(by_reason) > limit:
        parts.append(f"{len(by_reason) - limit} more reason(s) in the evidence")
    return "; ".join(parts) or "no nodes"
