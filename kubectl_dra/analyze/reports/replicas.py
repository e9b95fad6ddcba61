"""`explain deploy/NAME --replicas N`: will N more pods of this workload get their devices? N copies of its pod
template (their claims generated from the templates, as the resourceclaim controller would) join the scheduler's
queue after the pods already waiting, and the queue's dry-run (queue/) places them one after another on top of what
is allocated and what the pods ahead take. The answer: how many fit, on which nodes, and for the first copy that does
not, why, from the per-pod analysis of that copy against the allocations of everything placed before it (so the
reason is the allocator's: devices allocated, counters used up, a constraint)."""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass, replace
from datetime import timedelta

from kubectl_dra.analyze.pod.dryrun import Analysis
from kubectl_dra.analyze.pod.pieces import pod_pieces
from kubectl_dra.analyze.queue import judge_queue, with_place
from kubectl_dra.analyze.queue.outcomes import Outcome
from kubectl_dra.analyze.queue.report import materialized
from kubectl_dra.analyze.reports.explain import explain_pod
from kubectl_dra.analyze.reports.workload import template_claims, template_pod
from kubectl_dra.errors import DraError
from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import Report, dedupe, make, verdict_from
from kubectl_dra.model.meta import STAND_IN_UID, name_of, ns_of
from kubectl_dra.model.snapshot import Snapshot
from kubectl_dra.model.times import reference_time

MAX_REPLICAS = 10_000


def copies(snap: Snapshot, workload: dict, n: int) -> tuple[list[dict], list[dict]]:
    """n new pods from the workload's template, created one second apart after the snapshot's newest time (so
    they queue after every pod already waiting), and the claims generated for them."""
    pod = template_pod(workload)
    if pod is None:
        raise DraError(f"{workload.get('kind')}/{name_of(workload)} has no pod template")
    templates = {(ns_of(t), name_of(t)): t for t in snap.templates}
    t0 = reference_time(snap)
    _admitted(pod)
    pods, claims = [], []
    for i in range(1, n + 1):
        p = copy.deepcopy(pod)
        name = f"{name_of(workload)}-new-{i}"
        p["metadata"].update(
            name=name,
            uid=f"{STAND_IN_UID}replica-{ns_of(workload)}-{name}",
            creationTimestamp=(t0 + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
        pods.append(p)
        claims += template_claims(p, templates)
    return pods, claims


@dataclass
class Placed:
    """N copies placed by the queue: the queue, each copy's place, how many fit and where, the first that does
    not (index), and the snapshot with the copies."""

    snap: Snapshot
    base: Analysis  # of snap: forks of it share the device matrices the queue computed
    queue: object
    places: list
    fit: int
    where: Counter
    first_out: int | None

    def nodes_text(self) -> str:
        top = sorted(self.where.items(), key=lambda kv: (-kv[1], kv[0]))
        text = ", ".join(f"{k}: {v}" for k, v in top[:5])
        return text + (f" and {len(top) - 5} more nodes" if len(top) > 5 else "")

    def against_the_others(self, sem: Semantics, pod: dict) -> Snapshot:
        """The snapshot with everything placed before the pod allocated as the dry-run placed it."""
        entry = next(e for e in self.queue.entries if e.ref == f"{ns_of(pod)}/{name_of(pod)}")
        return materialized(self.snap, self.queue, entry.index)


def place_copies(snap: Snapshot, sem: Semantics, pods: list[dict], claims: list[dict]) -> Placed:
    """The copies (pods and their claims) added to the snapshot and placed by the queue after the pods waiting."""
    snap2 = replace(snap, pods=snap.pods + tuple(pods), claims=snap.claims + tuple(claims))
    base = Analysis(snap2, sem)
    got = {}
    for p in pods:
        fork = base.fork()
        got[(ns_of(p), name_of(p))] = (p, explain_pod(snap2, sem, ns_of(p), name_of(p), fork, True), fork)
    queue, _placed = judge_queue(snap2, sem, base, got, explain_pod)
    places = [queue.places.get(f"{ns_of(p)}/{name_of(p)}") for p in pods]
    fit = [pl for pl in places if pl is not None and pl.outcome == Outcome.FITS]
    first_out = next((i for i, pl in enumerate(places) if pl is None or pl.outcome != Outcome.FITS), None)
    # (a copy certain to fit on a node that the order of the pods ahead decides is counted under no node's name)
    filled = _filled(places, first_out, pods)
    where = Counter(pl.node if pl.exact or filled else ORDER_DECIDES for pl in fit)
    return Placed(snap2, base, queue, places, len(fit), where, first_out)


ORDER_DECIDES = "a node the order decides"


def _filled(places: list, first_out: int | None, pods: list[dict]) -> bool:
    """Whether the copies that fit are where the estimated order puts them, per node, whichever node each one picks:
    a copy after them certainly gets nothing, and only copies' own picks of a node are open, on node-local devices.
    Identical copies on one node take the same devices in the same order whoever comes first, so a node holds as
    many as it can (the next one fits nowhere) in every order: the count per node is the estimated order's."""
    last = places[first_out] if first_out is not None else None
    if last is None or last.outcome != Outcome.TAKEN or not last.certain:
        return False
    copies = {f"{ns_of(p)}/{name_of(p)}" for p in pods}
    return all(pl.exact or pl.open_by in copies for pl in places[:first_out])


# What the DefaultTolerationSeconds admission plugin (on by default) adds to every pod created: a pod of the
# workload's template gets them, so the copies must have them too (they decide which nodes a pod may use, and a
# copy that differs from the pods already created would not be one of their kind in the queue).
DEFAULT_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
)


def _admitted(pod: dict) -> None:
    """The template pod as admission leaves it: the default tolerations unless it tolerates those taints itself
    (DefaultTolerationSeconds skips a pod that has a NoExecute toleration for the key, or tolerates everything)."""
    spec = pod.setdefault("spec", {})
    tolerations = list(spec.get("tolerations") or [])
    for t in DEFAULT_TOLERATIONS:
        if not any(
            x.get("effect") in ("NoExecute", "", None) and x.get("key") in (t["key"], "", None) for x in tolerations
        ):
            tolerations.append(dict(t))
    spec["tolerations"] = tolerations


def explain_replicas(snap: Snapshot, sem: Semantics, workload: dict, n: int) -> Report:
    if not 1 <= n <= MAX_REPLICAS:
        raise DraError(f"--replicas must be between 1 and {MAX_REPLICAS}, got {n}")
    kind, ns, wname = workload.get("kind"), ns_of(workload), name_of(workload)
    ref = f"{kind}/{wname}"
    pods, claims = copies(snap, workload, n)
    got = place_copies(snap, sem, pods, claims)
    snap2, places, first_out = got.snap, got.places, got.first_out
    nodes = got.nodes_text()
    summary = {
        "workload": {"kind": kind, "name": wname, "namespace": ns},
        "asked": n,
        "fit": got.fit,
        "nodes": dict(sorted(got.where.items())),
        "firstNotFitting": None if first_out is None else name_of(pods[first_out]),
    }
    if first_out is None:  # all fit: the last copy's report in full (the queue's is brief), the verdict about the N
        last = with_place(explain_pod(snap2, sem, ns, name_of(pods[-1]), got.base.fork()), places[-1])
        ok = f"all {n} more pods of {ref} get their devices ({nodes})" if n > 1 else f"1 more pod of {ref} fits"
        return _with(last, summary, verdict_from(list(last.findings), ok))
    pod = pods[first_out]
    place = places[first_out]
    open_ = place is not None and place.outcome == Outcome.UNDETERMINED
    # (not exact: no single order is the reason, alternatives.py; the queue's reason is)
    if place is None or open_ or not place.exact:  # blocked alone, even before the others (its own report says why)
        report = explain_pod(snap2, sem, ns, name_of(pod), got.base.fork())
        if place is not None:  # the count is open, or not in the estimated order: the queue's reason
            report = with_place(report, place)
    else:  # against what the pods ahead of it take, materialized as allocations: the allocator's own reasons
        report = explain_pod(got.against_the_others(sem, pod), sem, ns, name_of(pod))
    open_ = open_ or not report.verdict.determined  # its own answer is open (an input that lacks a kind, ...)
    kth = _ordinal(first_out + 1)
    lead = make(
        "DRA436" if open_ else "DRA433",
        f"{got.fit} of {n} more pods of {ref} get their devices"
        + (" for certain" if open_ else "")
        + (f" ({nodes})" if got.fit else "")
        + (f"; for the {kth} the answer is open: " if open_ else f"; the {kth} does not: ")
        + report.verdict.summary,
        subject={"workload": ref},
        asked=n,
        fit=got.fit,
        nodes=dict(sorted(got.where.items())),
    )
    findings = dedupe([lead, *report.findings])
    return _with(report, summary, verdict_from(findings, report.verdict.summary), findings)


def _with(report: Report, summary: dict, verdict, findings=None) -> Report:
    """The copy's report with the replicas' summary (verdict None: the copy's own)."""
    body = dict(report.body)
    body["replicas"] = summary
    findings = tuple(findings if findings is not None else report.findings)
    body["pieces"] = pod_pieces(findings, body)
    return replace(report, findings=findings, body=body, verdict=verdict or report.verdict)


def _ordinal(i: int) -> str:
    suffix = "th" if 10 <= i % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(i % 10, "th")
    return f"{i}{suffix}"


def match_count(snap: Snapshot, sem: Semantics, claim: dict, n: int) -> Report:
    """match claim NAME (or -f FILE) --count N: N copies of the claim (a template as the claim it generates), each
    for a pod of its own with no node constraints, placed by the queue after the pods waiting, on top of what is
    allocated (the claim itself as if released, as match does). The match report of the first copy that does not
    fit, against what the others took (or of the claim when all fit), with how many fit and where."""
    from kubectl_dra.analyze.reports.claim import match_claim

    if not 1 <= n <= MAX_REPLICAS:
        raise DraError(f"--count must be between 1 and {MAX_REPLICAS}, got {n}")
    claim = as_claim(claim)
    ns, name = ns_of(claim), name_of(claim)
    me = (ns, name)
    base_snap = replace(snap, claims=tuple(c for c in snap.claims if (ns_of(c), name_of(c)) != me))
    t0 = reference_time(snap)
    pods, claims = [], []
    for i in range(1, n + 1):
        cname = f"{name}-copy-{i}"
        c = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": cname, "namespace": ns, "uid": f"kubectl-dra-copy-{ns}-{cname}"},
            "spec": copy.deepcopy(claim.get("spec") or {}),
        }
        stamp = (t0 + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": cname, "namespace": ns, "uid": f"kubectl-dra-copy-pod-{ns}-{cname}",
                             "creationTimestamp": stamp},
                "spec": {"resourceClaims": [{"name": "c", "resourceClaimName": cname}], "containers": []},
                "status": {"phase": "Pending"},
            }
        )  # fmt: skip
        claims.append(c)
    got = place_copies(base_snap, sem, pods, claims)
    summary = {
        "asked": n,
        "fit": got.fit,
        "nodes": dict(sorted(got.where.items())),
        "firstNotFitting": None if got.first_out is None else name_of(claims[got.first_out]),
    }
    if got.first_out is None:
        report = match_claim(snap, sem, claim)
        body = dict(report.body, count=summary)
        return replace(report, body=body)
    k = got.first_out
    place = got.places[k]
    against = (
        got.snap if place is None or place.outcome == Outcome.UNDETERMINED else got.against_the_others(sem, pods[k])
    )
    report = match_claim(against, sem, claims[k])
    open_ = place is not None and place.outcome == Outcome.UNDETERMINED
    lead = make(
        "DRA436" if open_ else "DRA433",
        f"{got.fit} of {n} copies of claim {ns}/{name} get their devices"
        + (" for certain" if open_ else "")
        + (f" ({got.nodes_text()})" if got.fit else "")
        + (f"; for the {_ordinal(k + 1)} the answer is open: {place.reason}" if open_ else "")
        + ("" if open_ else f"; the {_ordinal(k + 1)} does not"),
        subject={"claim": f"{ns}/{name}"},
        asked=n,
        fit=got.fit,
        nodes=dict(sorted(got.where.items())),
    )
    determined = report.body.get("determined", True) and not open_
    body = dict(report.body, count=summary, satisfiable=False, determined=determined)
    return replace(report, findings=tuple(dedupe([lead, *report.findings])), body=body)


def as_claim(claim: dict) -> dict:
    """A ResourceClaimTemplate as the claim it generates (as match does)."""
    if claim.get("kind") != "ResourceClaimTemplate":
        return claim
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name_of(claim), "namespace": ns_of(claim)},
        "spec": (claim.get("spec") or {}).get("spec") or {},
    }
