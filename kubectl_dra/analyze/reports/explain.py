"""The three public entry points: explain pod, explain claim and match claim (Snapshot + Semantics -> Report); the
parts of their bodies they share are bodies.py's. Pure: no I/O."""

from __future__ import annotations

from dataclasses import replace

from kubectl_dra.analyze.allocator import obj_ref
from kubectl_dra.analyze.pod.binding import binding_findings, prebind_failure, unseen_binding_findings
from kubectl_dra.analyze.pod.claims import edited_finding, read_gap_findings, resolve_pod_claims
from kubectl_dra.analyze.pod.claims import meta_of as _meta
from kubectl_dra.analyze.pod.claims import name_of as _name
from kubectl_dra.analyze.pod.claims import ns_of as _ns
from kubectl_dra.analyze.pod.coverage import analyses_coverage, taint_rule_findings
from kubectl_dra.analyze.pod.dryrun import Analysis
from kubectl_dra.analyze.pod.dryrun_result import DryRun, Skip
from kubectl_dra.analyze.pod.extended import (
    extended_claims,
    prebind_defect_finding,
    unmapped_extended,
    via_plugin_finding,
)
from kubectl_dra.analyze.pod.extended import plan as extended_plan
from kubectl_dra.analyze.pod.fit import fit_findings, pod_fit
from kubectl_dra.analyze.pod.health import eviction_findings, health_findings
from kubectl_dra.analyze.pod.kubelet import DRIVER_PIECE_READS, kubelet_findings, publishing_findings
from kubectl_dra.analyze.pod.lifecycle import terminating_finding
from kubectl_dra.analyze.pod.nodealloc import allocated_demand_findings
from kubectl_dra.analyze.pod.patches import patch_findings
from kubectl_dra.analyze.pod.pieces import pod_pieces
from kubectl_dra.analyze.pod.podgroup import (
    GANG_HINT,
    owner_group,
    reserved_for_pod,
    reserved_groups,
    shared_claim_findings,
)
from kubectl_dra.analyze.pod.scheduler import (
    agreement_finding,
    changed_since,
    outside_dra_finding,
    pod_gate_findings,
    scheduler_word,
)
from kubectl_dra.analyze.pod.verdicts import device_findings, pool_findings
from kubectl_dra.analyze.queue.outcomes import Outcome
from kubectl_dra.analyze.reports.bodies import assumed_note, claim_body, ok_summary, semantics_finding
from kubectl_dra.errors import DraError
from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import (
    Report,
    dedupe,
    make,
    verdict_from,
)
from kubectl_dra.model.normalize import event_sort_key
from kubectl_dra.model.scope import not_found
from kubectl_dra.model.snapshot import Snapshot
from kubectl_dra.model.times import human_age, parse_time


def events_for_pod(snap: Snapshot, pod: dict, cache=None) -> list[dict]:
    """The pod's events in time order. cache (an Analysis's, pod/cache.py): the snapshot's pod events indexed by
    name once."""
    uid = _meta(pod).get("uid")
    if cache is None:
        candidates = snap.events
    else:
        if cache.events_by_pod is None:
            by: dict[str, list] = {}
            for e in snap.events:
                if e["object"]["kind"] == "Pod":
                    by.setdefault(e["object"]["name"], []).append(e)
            cache.events_by_pod = by
        candidates = cache.events_by_pod.get(_name(pod), ())
    evs = [
        e
        for e in candidates
        if e["object"]["kind"] == "Pod"
        and e["object"]["name"] == _name(pod)
        and (e["object"]["namespace"] or _ns(pod)) == _ns(pod)
        and (not uid or not e["object"]["uid"] or e["object"]["uid"] == uid)
    ]
    return sorted(evs, key=event_sort_key)


def _pod_claims(an: Analysis, pod: dict, events: list[dict]) -> list:
    """The pod's claims, with the controller's own words when it reported why it could not create one."""
    pcs = resolve_pod_claims(pod, an.idx, an.sem)
    created = [e for e in events if e["reason"] == "FailedResourceClaimCreation"]
    for pc in pcs:
        for f in pc.findings:
            if f.code in ("DRA201", "DRA202") and created:
                f = make(
                    f.code,
                    f.message,
                    subject=f.subject,
                    **dict(f.evidence, event={"message": created[-1]["message"], "time": created[-1]["time"]}),
                )
            an.findings.append(f)
    return pcs


def _claim_findings(an: Analysis, pod: dict, analyses, dry: DryRun, events: list[dict], ext) -> None:
    """Device findings for pending claims (dry-run), binding and kubelet findings for allocated ones."""
    node_name = (pod.get("spec") or {}).get("nodeName")
    blocked_before = any(f.blocking for f in an.findings)
    failed_prebind = prebind_failure(events, [a.claim for a in analyses])
    if failed_prebind is not None:
        an.findings.append(failed_prebind)
    if blocked_before:
        return
    if any(not a.allocated for a in analyses):
        plugin = tuple(ext.resources) if ext is not None and not ext.created else ()
        device_findings(an, analyses, dry, pod, plugin)
        if any(f.code in ("DRA401", "DRA402") for f in an.findings):  # a driver publishes nothing: is it deployed?
            classes = {id(r.class_obj): r.class_obj for a in analyses for alts in a.requests for r in alts}
            an.findings.extend(publishing_findings(an.snap, [c for c in classes.values() if c is not None], an.cache))
        if dry.allocatable and failed_prebind is None:
            an.findings.extend(unseen_binding_findings(an.snap, dry.allocatable[0].claims))
        if ext is not None and dry.allocatable:
            via = via_plugin_finding(ext, dry.allocatable[0].node)
            if via is not None:
                an.findings.append(via)
        return
    for a in analyses:
        picks = ", ".join(
            f"{r.get('request')} -> {r.get('driver')}/{r.get('pool')}/{r.get('device')}"
            for r in ((a.claim["status"]["allocation"].get("devices") or {}).get("results") or [])
        )
        an.findings.append(
            make(
                "DRA001",
                f"claim {_name(a.claim)} is allocated: {picks or 'no devices'}",
                subject={"claim": obj_ref(a.claim)},
            )
        )
    an.findings.extend(binding_findings([a.claim for a in analyses], pod, an.sem, an.snap.observed_at, events))
    if node_name:
        _kubelet_findings(an, pod, analyses, events)


def _pod_findings(an: Analysis, pod: dict, analyses, dry: dict) -> None:
    """What holds or follows the pod itself: claims on unusable nodes, PodGroups, gates, health, evictions, pools
    and fields the analysis does not model."""
    idx = an.idx
    node_name = (pod.get("spec") or {}).get("nodeName")
    for a in analyses:
        if a.allocated and not node_name and not dry.usable and idx.nodes and not idx.nodes_synthetic:
            an.findings.append(
                make(
                    "DRA502",
                    f"claim {_name(a.claim)} is allocated to devices on a node the pod cannot use",
                    hint=GANG_HINT if reserved_groups(a.claim) or owner_group(a.claim) else None,
                    subject={"claim": obj_ref(a.claim)},
                    rejectedNodes=dry.rejected_nodes,
                )
            )
    if not node_name and idx.nodes_synthetic and analyses and all(a.allocated for a in analyses):
        an.findings.append(
            make(
                "DRA018",
                "the input has no Node objects: whether the pod may use a node its allocated claims reach (the "
                "node's labels and taints against the pod's node constraints, its free resources) needs the real "
                "nodes, so it is undetermined",
                inferredNodes=[_name(n) for n in idx.nodes[:20]],
            )
        )
    claims = [a.claim for a in analyses]
    an.findings.extend(shared_claim_findings(pod, claims, an.snap.pods, an.sem))
    an.findings.extend(pod_gate_findings(pod))
    an.findings.extend(health_findings(pod))
    an.findings.extend(eviction_findings(pod, claims, an.slices))
    pool_findings(an)
    an.findings.extend(patch_findings(an, analyses))
    an.findings.extend(taint_rule_findings(an.taint_rule_gaps))
    an.findings.extend(analyses_coverage(analyses, an.sem, an.cache))


def explain_pods(
    snap: Snapshot, sem: Semantics, pods: list[tuple[str, str]], alone: bool = False, judged=None
) -> list[Report]:
    """explain pod for each (namespace, name), sharing one analysis base (indexes, CEL cache, devices). Unless
    alone, a pending pod is judged in the scheduler's queue with every pending pod of the snapshot that may be
    ahead of it (analyze/queue/). judged: the queue already judged on the same snapshot (status.py Judged, a scan's
    kept with keep=True): each pod takes its place there, the queue is not judged again."""
    base = judged.base if judged is not None else Analysis(snap, sem)
    got = {}
    for ns, name in pods:
        fork = base.fork()
        got[(ns, name)] = (an_pod(fork, ns, name), explain_pod(snap, sem, ns, name, base=fork), fork)
    if alone:
        return [got[k][1] for k in pods]
    from kubectl_dra.analyze.queue import judge_queue, place_reports

    if judged is not None:
        queue, placed = judged.queue, place_reports(snap, judged.queue, got)
    else:
        queue, placed = judge_queue(snap, sem, base, got, explain_pod)
    from kubectl_dra.analyze.queue.report import materialized, with_place

    for k in pods:
        place = queue.places.get(f"{k[0]}/{k[1]}")
        if place is not None and place.outcome == Outcome.TAKEN and place.exact:
            # The devices as they are once the pods ahead are placed: each one's reason is then the allocator's
            # (allocated to a claim of a pod ahead, a counter used up), not the cluster's as it is now.
            entry = next(e for e in queue.entries if e.ref == f"{k[0]}/{k[1]}")
            placed[k] = with_place(explain_pod(materialized(snap, queue, entry.index), sem, k[0], k[1]), place)
    return [placed.get(k, got[k][1]) for k in pods]


def _plugin_skip(ext) -> Skip | None:
    """The scheduler's extended-resource claim (the one it would build) is not allocated on the nodes whose device
    plugin serves the resources: there only the pod's own claims are (and NodeResourcesFit counts the rest)."""
    if ext is None or ext.created or ext.claim is None or not ext.plugin_nodes:
        return None
    return Skip(ext.claim, frozenset(ext.plugin_nodes))


def an_pod(an: Analysis, ns: str, name: str) -> dict | None:
    return an.idx.pods.get((ns, name))


def explain_pod(
    snap: Snapshot,
    sem: Semantics,
    namespace: str,
    name: str,
    base: Analysis | None = None,
    brief: bool = False,
    body: bool = True,
) -> Report:
    """brief: the verdict and findings only, without the per-device rows of the body (the scan's rows) nor its pieces.
    body=False: no body at all (a row of `status`, a pending pod the queue places ahead of the ones asked about: they
    read the verdict, the findings and the analysis only).

    The steps, in the order their findings appear in the report: what could not be read and the semantics; the
    pod's claims (and the scheduler's extended-resource claim); the dry-run; the claims' findings; the node's
    resources (NodeResourcesFit); what holds the pod itself; preemption; the scheduler's word against the
    dry-run's. Then the verdict and the body."""
    an = base or Analysis(snap, sem)
    an.mark_selected = not brief
    pod = asked(an, snap, "Pod", namespace, name)
    # (what the driver piece could not read, it says in its own finding, DRA607)
    an.findings.extend(read_gap_findings(snap.gaps, DRIVER_PIECE_READS))
    an.findings.append(semantics_finding(sem, snap, an.cache))
    events = events_for_pod(snap, pod, an.cache)
    if not pod.get("status"):  # the API server always writes one: a cut or edited input
        an.findings.append(edited_finding(pod, "status"))
    pcs = _pod_claims(an, pod, events)
    resolved = [pc for pc in pcs if pc.claim is not None and not pc.skipped]
    claims, names = [pc.claim for pc in resolved], [pc.pod_claim_name for pc in resolved]
    ext = _extended(an, snap, sem, pod, claims, names)
    fit = pod_fit(snap, an.cache, pod, sem)
    analyses, dry = an.analyse_claims(claims, pod, names, fit=fit, skip=_plugin_skip(ext))
    node_name = (pod.get("spec") or {}).get("nodeName")
    word = scheduler_word(pod, events)
    _claim_findings(an, pod, analyses, dry, events, ext)
    if not node_name:
        defect = prebind_defect_finding(ext, dry, bool(resolved), sem)
        if defect is not None:
            an.findings.append(defect)
    _fit_findings(an, dry, fit)
    if not node_name and fit is not None and fit.nalloc and analyses and all(a.allocated for a in analyses):
        an.findings.extend(allocated_demand_findings([a.claim for a in analyses], an.slices))
    _pod_findings(an, pod, analyses, dry)
    if not node_name:
        from kubectl_dra.analyze.pod.preempt import device_preemption_finding

        lower = device_preemption_finding(an, pod, analyses, an.findings)
        if lower is not None:
            an.findings.append(lower)
    _scheduler_findings(an, snap, word, dry, any(not a.allocated for a in analyses))
    findings = dedupe(an.findings)
    ok, now_on = _pod_ok_summary(analyses, dry, node_name, findings, ext, word)
    verdict = verdict_from(findings, assumed_note(sem, ok), now_on)
    if not body:
        return Report("Diagnosis", tuple(findings), {}, sem.to_dict(), verdict)
    shown = _pod_body(an, pod, namespace, name, pcs, ext, analyses, dry, word, events, brief)
    if not brief:  # (no one shows a brief report's pieces: --replicas recomputes its copy's)
        shown["pieces"] = pod_pieces(findings, shown)
    return Report("Diagnosis", tuple(findings), shown, sem.to_dict(), verdict)


# A pod claim's findings that say its claim is not in the input (DRA104, DRA215) or could not be read (DRA103).
UNSEEN_CLAIM = ("DRA103", "DRA104", "DRA215")


def asked(an: Analysis, snap: Snapshot, kind: str, namespace: str, name: str) -> dict:
    """The pod or claim asked about; not found (or not readable: the gap says why) is an error."""
    index, resource = (an.idx.pods, "pods") if kind == "Pod" else (an.idx.claims, "resourceclaims")
    obj = index.get((namespace, name))
    if obj is None:
        gaps = an.idx.gap_for(resource)
        if gaps:
            raise DraError(f'cannot get {kind.lower()} "{name}" in namespace "{namespace}": {gaps[0].message}')
        raise not_found(snap, kind, name, namespace)
    return obj


def _extended(an: Analysis, snap: Snapshot, sem: Semantics, pod: dict, claims: list, names: list):
    """DRA-backed extended resources: the scheduler's own claim, appended to claims (analysed last, as upstream
    allocates it last), and its findings. None: the pod asks for none."""
    idx = an.idx
    if an.cache.annotated_claims is None:
        an.cache.annotated_claims = extended_claims(idx.claims)
    # (the snapshot's tuples as they are: a copy per pod of 5,000 slices costs more than the plan that reads them)
    ext = extended_plan(pod, snap.classes, idx.claims, idx.nodes, snap.slices, sem, an.cache.annotated_claims)
    unseen = snap.absent("deviceclasses.resource.k8s.io")
    if (
        ext is None
        and unseen is not None
        and sem.gate("DRAExtendedResource")
        and (names := unmapped_extended(pod, sem))
    ):
        an.findings.append(
            make(
                "DRA104",
                f"whether a DeviceClass maps {', '.join(names)} (a DRA-backed extended resource) cannot be told: "
                f"{unseen.message}",
                resource=unseen.resource,
                resources=names,
            )
        )
    if ext is not None:
        an.findings.extend(ext.findings)
        if ext.claim is not None:
            claims.append(ext.claim)
            names.append(None)
    return ext


def _fit_findings(an: Analysis, dry: DryRun, fit) -> None:
    """NodeResourcesFit's findings; when the node's resources decide (DRA504, DRA506), DRA002's hint says so."""
    fitted = fit_findings(dry, fit)
    if any(f.code in ("DRA504", "DRA506", "DRA507", "DRA508") for f in fitted):
        # DRA002's "wait for the scheduler's next attempt" does not hold: the node's resources are what decide
        code = fitted[0].code
        an.findings = [
            replace(f, hint_override=f"The devices fit; the node's resources decide ({code}).")
            if f.code == "DRA002"
            else f
            for f in an.findings
        ]
    an.findings.extend(fitted)


# DefaultPreemption's word when it nominates a node (preemption.go Preempt, 1.34-1.38): appended to the FitError
PREEMPTED = "preemption: found a potential placement for pod on node"


def _scheduler_findings(an: Analysis, snap: Snapshot, word, dry: DryRun, pending: bool) -> None:
    """The scheduler's latest word against the dry-run's: with the fit unknown (DRA506) and reasons outside DRA,
    its words join DRA506's message; else whether it agrees, and the reasons outside DRA that hold the pod."""
    fit_open = next((f for f in an.findings if f.code == "DRA506"), None)
    if fit_open is not None and word is not None and word.blocked and word.non_dra_nodes:
        # The fit is unknown here and the scheduler names reasons outside DRA: its words are the best evidence
        an.findings = [
            replace(f, message=f"{f.message}; the scheduler's latest attempt: {word.message!r}") if f is fit_open else f
            for f in an.findings
        ]
        return
    # (nothing to agree with where the analysis cannot tell: what it could not read leaves the answer open)
    if word is None or any(f.code in ("DRA006", "DRA018", "DRA103", "DRA104") for f in an.findings):
        return
    blocking = [f for f in an.findings if f.blocking]
    # a pod that preempts (DRA507) failed its attempt where it preempted: the scheduler's "Insufficient cpu" agrees
    preempts = any(f.code in ("DRA507", "DRA508") for f in an.findings)
    agree = agreement_finding(
        word,
        bool(blocking) or preempts,
        dry.placeable_nodes or (dry.allocatable_nodes if fit_open is not None else []),
        pending and any(f.code.startswith(("DRA3", "DRA4")) for f in blocking),
        changed_since(snap, word.time),
    )
    if agree is None and PREEMPTED in word.message and any(f.code == "DRA504" for f in an.findings):
        # the scheduler's PostFilter found victims where the analysis finds preemption does not help
        agree = make(
            "DRA005",
            f"the scheduler preempts pods for this pod ({word.message!r}, {word.source}), but the analysis finds "
            "that preempting pods of lower priority does not make room",
            scheduler=word.to_dict(),
        )
    if agree is not None:
        an.findings.append(agree)
    outside = outside_dra_finding(word)
    placeable = dry.placeable_nodes if dry.fit else []
    if outside is not None and placeable and word.non_dra_reasons and not any(f.blocking for f in an.findings):
        # The scheduler rejects every node for reasons outside DRA, and on some the claims fit and every
        # filter the analysis models (NodeResourcesFit included) passes: it cannot say which is right.
        outside = make(
            "DRA022",
            f"the dry-run finds the claims allocatable on {', '.join(placeable)}, with room for the pod's "
            f"requests there, but the scheduler rejects every node for reasons outside DRA that the analysis "
            f"does not find there: {word.message!r} ({word.source}{', ' + word.time if word.time else ''})",
            scheduler=word.to_dict(),
            reasons=list(word.non_dra_reasons),
        )
    if outside is not None:
        # DRA002's "wait for the scheduler's next attempt" does not hold: its last attempt failed elsewhere
        an.findings = [
            replace(f, hint_override="The claims are allocatable; what holds the pod is outside DRA (DRA021).")
            if f.code == "DRA002"
            else f
            for f in an.findings
        ]
        an.findings.append(outside)


def _pod_ok_summary(analyses, dry: DryRun, node_name, findings, ext, word) -> tuple[str, str | None]:
    """The verdict's summary when nothing blocks, with what may still hold the pod there (bodies.ok_summary: and
    the node where the claims are allocatable now)."""
    ok, now_on = ok_summary(analyses, dry, node_name, findings)
    if not analyses and ext is not None:
        ok, now_on = f"no DRA allocation: {', '.join(ext.resources)} is left to device plugins", None
    if any(f.code == "DRA607" for f in findings) and not any(f.blocking for f in findings):
        ok += "; but the driver's kubelet plugin may not run there (DRA607)"
    if any(f.code == "DRA604" and "is NotReady" in f.message for f in findings):
        ok += f"; but node {node_name} is NotReady (DRA604)"
    if any(f.code == "DRA021" for f in findings):
        ok += f"; but the scheduler rejects the pod on grounds outside DRA ({word.message.split('. ', 1)[0].strip()})"
    return ok, now_on


def _pod_body(an: Analysis, pod: dict, namespace: str, name: str, pcs, ext, analyses, dry, word, events, brief) -> dict:
    """The report's body (without its pieces, which read the findings)."""
    return {
        "pod": {
            "name": name,
            "namespace": namespace,
            "node": (pod.get("spec") or {}).get("nodeName"),
            "phase": (pod.get("status") or {}).get("phase"),
            "uid": _meta(pod).get("uid"),
            **({"deletionTimestamp": _meta(pod)["deletionTimestamp"]} if _meta(pod).get("deletionTimestamp") else {}),
        },
        "podClaims": [
            {
                "name": pc.pod_claim_name,
                "source": pc.source,
                "sourceName": pc.source_name,
                "claim": _name(pc.claim) if pc.claim else None,
                "skipped": pc.skipped,
                # the claim may exist but is not in the input (or could not be read): not "not created"
                **({"unseen": True} if any(f.code in UNSEEN_CLAIM for f in pc.findings) else {}),
            }
            for pc in pcs
        ]
        + (
            [
                {
                    "name": "<extended resources>",
                    "source": "extended",
                    "sourceName": ", ".join(ext.resources),
                    "claim": _name(ext.claim) if ext.created else None,
                    "skipped": False,
                }
            ]
            if ext is not None
            else []
        ),
        "claims": [claim_body(a, not brief, an.cache.device_rows) for a in analyses],
        "extendedResources": ext.to_dict() if ext is not None else None,
        "nodes": {"usable": dry.usable, "rejected": dry.rejected_nodes, "synthetic": an.idx.nodes_synthetic},
        "scheduler": word.to_dict() if word else None,
        "events": events if brief else _aged(an, events),
    }


def _aged(an: Analysis, events: list) -> list:
    """The events with their age as kubectl describe shows it (LAST SEEN: "12s", "3m"), against now (live) or
    the dump's newest time; the time stays beside it."""
    if not events:
        return events
    now = an.cache.reference_time(an.snap)
    out = []
    for e in events:
        t = parse_time(e.get("time"))
        out.append(dict(e, age=human_age((now - t).total_seconds())) if t is not None else e)
    return out


def _kubelet_findings(an: Analysis, pod: dict, analyses, events) -> None:
    node = pod["spec"]["nodeName"]
    uid = _meta(pod).get("uid")
    for a in analyses:
        reserved = [r for r in ((a.claim.get("status") or {}).get("reservedFor") or [])]
        if uid and not reserved_for_pod(pod, a.claim):
            an.findings.append(
                make(
                    "DRA603",
                    f"pod is not in claim {_name(a.claim)}'s reservedFor",
                    subject={"claim": obj_ref(a.claim)},
                    reservedFor=reserved,
                )
            )
    node_obj = an.nodes_by_name().get(node)  # (shared by the forks: one dict per snapshot, not a walk per pod)
    an.findings.extend(
        kubelet_findings(an.snap, node_obj, pod, [a.claim for a in analyses], events, an.cache, an.sem.version)
    )
    devices = [
        f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}"
        for a in analyses
        for r in (((a.claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
    ]
    plugins = [f.evidence.get("driver") for f in an.findings if f.code == "DRA612"]
    going = terminating_finding(pod, node_obj, devices, plugins)
    if going is not None:
        an.findings.append(going)
