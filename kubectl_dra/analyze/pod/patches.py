"""DRA020: the server runs a patch that predates an allocator fix (kubectl_dra/patches.py) in a situation the bug
needs. Each condition is a pure function of the analysis; the finding leaves a verdict that the older scheduler
could reach differently open (undetermined), and says what it may do instead and which patch fixes it."""

from __future__ import annotations

from kubectl_dra.analyze.pod.dryrun import Analysis
from kubectl_dra.findings.model import Finding, make
from kubectl_dra.patches import missing_fixes

MAX_INT64 = 2**63 - 1


def _past_selectors(analyses):
    for a in analyses:
        for rname, m in a.matrices.items():
            for v in m:
                if v.stage is None or not v.stage.selects:
                    yield a, rname, v


def _all_mode_counters(an: Analysis, analyses) -> bool:
    if not an.sem.partitionable:
        return False
    modes = {r.name: r.mode for a in analyses for alts in a.requests for r in alts}
    return any(
        modes.get(rn) == "All" and v.entry.device.get("consumesCounters") for _, rn, v in _past_selectors(analyses)
    )


def _candidates_consume_counters(an: Analysis, analyses) -> bool:
    return an.sem.partitionable and any(v.entry.device.get("consumesCounters") for _, _, v in _past_selectors(analyses))


def _shared_counters(an: Analysis, analyses) -> bool:
    if not an.sem.partitionable:
        return False
    shared_pools = {
        e.pool_key
        for e in an.universe.entries
        if e.did in an.allocated_state().aggregated_capacity and e.device.get("consumesCounters")
    }
    return any(
        v.entry.pool_key in shared_pools and v.entry.device.get("consumesCounters")
        for _, _, v in _past_selectors(analyses)
    )


def _pool_name_shared(an: Analysis, analyses) -> bool:
    if not an.sem.partitionable:
        return False
    drivers: dict[str, set] = {}
    for e in an.universe.entries:
        if e.device.get("consumesCounters"):
            drivers.setdefault(e.pool_key[1], set()).add(e.pool_key[0])
    clash = {name for name, ds in drivers.items() if len(ds) > 1}
    return any(v.entry.pool_key[1] in clash for _, _, v in _past_selectors(analyses))


def _count_overflow(an: Analysis, analyses) -> bool:
    for a in analyses:
        total = sum(max((r.count for r in alts if r.mode == "ExactCount"), default=0) for alts in a.requests)
        if total > MAX_INT64:
            return True
    return False


def _nil_taint_rule(an: Analysis, analyses) -> bool:
    return an.sem.taint_rules and any(
        (r.get("spec") or {}).get("deviceSelector") is None
        and ((r.get("spec") or {}).get("taint") or {}).get("effect") in ("NoSchedule", "NoExecute")
        for r in an.snap.taint_rules
    )


CONDITIONS = {
    "all-mode-counters": _all_mode_counters,
    "shared-counters": _shared_counters,
    "candidates-consume-counters": _candidates_consume_counters,
    "pool-name-shared-by-drivers": _pool_name_shared,
    "count-overflow": _count_overflow,
    "taint-rule-without-selector": _nil_taint_rule,
}


def patch_findings(an: Analysis, analyses) -> list[Finding]:
    """DRA020 for each fix the server's patch lacks whose situation the analysed claims are in."""
    if an.sem.version_source != "server":
        return []  # a version given by flag has no patch
    out = []
    for fix in missing_fixes(an.snap.server_version):
        if not CONDITIONS[fix.when](an, analyses):
            continue
        out.append(
            make(
                "DRA020",
                f"the server is {an.snap.server_version}, older than {fix.fixed_version}: its kube-scheduler (if it "
                f"runs the same patch) may {fix.older}; kubectl-dra answers as {fix.fixed_version}+ does "
                f"(kubernetes/kubernetes{', '.join(fix.prs)})",
                fix=fix.id,
                fixedIn=fix.fixed_version,
                pullRequests=list(fix.prs),
                serverVersion=an.snap.server_version,
            )
        )
    return out
