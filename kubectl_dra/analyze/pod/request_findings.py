"""Why one request of a claim cannot be satisfied, from its per-device matrices: every device an allocationMode All
needs, a count that no node reaches (DRA408, beside the repairable stages that reject matching devices), or the
stage that rejected its devices (each Stage's code: findings/stages.py). Nothing when it could be satisfied alone.
"""

from __future__ import annotations

from dataclasses import replace

from kubectl_dra.analyze.allocator import Request, obj_ref
from kubectl_dra.analyze.devices.checks import DeviceVerdict
from kubectl_dra.analyze.pod.dryrun import Analysis
from kubectl_dra.analyze.pod.dryrun_result import ClaimAnalysis
from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import Finding, make
from kubectl_dra.findings.stages import Stage


def _matrix_stats(an: Analysis, m: list) -> tuple[list, dict, dict]:
    """A matrix's candidates, candidates per node and devices per stage, once per (shared) matrix."""
    hit = an.cache.stats.get(m)
    if hit is None:
        cands = [v for v in m if v.outcome in ("candidate", "selected")]
        per_node: dict[str, int] = {}
        for v in cands:
            for n in v.nodes or ("*",):
                per_node[n] = per_node.get(n, 0) + 1
        stages: dict[Stage | None, list[DeviceVerdict]] = {}  # None: candidates (and selected)
        for v in m:
            stages.setdefault(v.stage, []).append(v)
        hit = an.cache.stats.put(m, (cands, per_node, stages))
    return hit


# long: one case per rejection stage, in Stage order
def request_findings(an: Analysis, a: ClaimAnalysis, alts: list[Request], errors_met: bool = True) -> list[Finding]:
    """Why this request (all its subrequests) cannot be satisfied: nothing if it could on its own. errors_met: False
    when the dry-run searched every node where a selector errs and met no error there: the allocator skips a device
    in use before it evaluates selectors on it, and sees only the devices of the node it searches, so a selector
    error the matrix shows is then not why the request fails (upstream allocateOne: "Checking for 'in use' is cheap
    and thus gets done first")."""
    reasons = []
    subject = {"claim": obj_ref(a.claim), "request": alts[0].base_name}
    for r in alts:
        m = a.matrices.get(r.name)
        if m is None:
            return []  # class missing: reported already
        if r.mode == "All":
            # Every device that passes the selectors (and is reachable) must be allocatable at once.
            blockers = [v for v in m if v.stage is not None and v.stage.holds]
            if blockers and len(alts) == 1:
                v = blockers[0]
                return [
                    make(
                        v.stage.code,
                        f"request {r.name}: allocationMode All needs every matching device, but "
                        f"{len(blockers)} cannot be allocated ({v.entry.id}: {v.reason})",
                        subject=subject,
                        blocked=[f"{b.entry.id}: {b.reason}" for b in blockers[:10]],
                    )
                ]
        cands, per_node, _ = _matrix_stats(an, m)
        need = r.count if r.mode == "ExactCount" else max(1, len(cands))
        if cands and max(per_node.values()) >= need:
            return []
        reasons.append((r, m, cands, need, per_node))
    r, m, cands, need, per_node = reasons[0]
    if len(alts) > 1:
        subject["subrequests"] = [x.name for x in alts]
    stages = _matrix_stats(an, m)[2]
    named = sorted((((st.value if st else "candidate"), vs) for st, vs in stages.items()), key=lambda kv: kv[0])
    ev = {
        "devices": len(m),
        "byStage": {k: len(v) for k, v in named},
        "examples": {k: [x.entry.id + ": " + x.reason for x in v[:3]] for k, v in named},
    }
    label = f"request {r.name}" if len(alts) == 1 else f"request {alts[0].base_name} (every subrequest)"
    if not m:
        return [make("DRA401", f"{label}: no ResourceSlice in the cluster publishes any device", subject=subject, **ev)]
    if cands:
        best_node, best = max(per_node.items(), key=lambda kv: kv[1])
        # Matching devices that a repairable check rejects on that node (a taint, in use, counters, capacity) are
        # part of why the count falls short: each such stage gets its own finding beside the count.
        fixable = [
            v for v in m if v.stage and v.stage.repairable and (best_node == "*" or not v.nodes or best_node in v.nodes)
        ]
        more = ""
        if fixable:
            more = f"; {len(fixable)} more matching device(s) rejected ({fixable[0].entry.id}: {fixable[0].reason})"
        out = make(
            "DRA408",
            f"{label}: needs {need} device(s), at most {best} available on one node{more}",
            hint="Lower the count, add devices, or make the rejected matching devices usable (see the other findings)."
            if fixable
            else None,
            subject=subject,
            **ev,
        )
        by_stage: dict[Stage, list[DeviceVerdict]] = {}
        for v in fixable:
            by_stage.setdefault(v.stage, []).append(v)
        return [
            _stage_finding(st, label, vs, r, subject, ev, every=False, sem=an.sem) for st, vs in by_stage.items()
        ] + [out]
    present = [stage for stage in Stage.ordered() if stage in stages and (errors_met or stage is not Stage.CEL_ERROR)]
    if not present:
        return []
    primary = present[0]
    if primary is Stage.CEL_ERROR:
        v = stages[primary][0]
        return [make(primary.code, f"{label}: {v.reason} on device {v.entry.id}", subject=subject, **ev)]
    # "every matching device" only when the stage rejected all the devices that pass the selectors; when several
    # stages share them (two in use, one tainted), each gets a finding that counts its own.
    matching = sum(len(vs) for stage, vs in stages.items() if stage is None or not stage.selects)
    if primary.selects or len(stages[primary]) == matching:
        found = [_stage_finding(primary, label, stages[primary], r, subject, ev, every=True, sem=an.sem)]
        if primary is Stage.NODE:
            found = [_with_node_hint(an, found[0], stages[primary])]
        return found
    found = [
        _stage_finding(stage, label, stages[stage], r, subject, ev, every=False, sem=an.sem, of=matching)
        for stage in present
        if stage is primary or not stage.selects
    ]
    free = _free_where_unusable(an, stages.get(Stage.NODE, []))
    if not free:
        return found
    # Free matching devices exist, but only on nodes the pod cannot use (cordoned, NotReady, excluded): that is
    # what to look at first (MISSING node); the devices taken elsewhere are said behind it.
    where = _nodes_of(free)
    first = f"{where[0]}: {why}" if (why := free[0].evidence.get("nodeRejection")) else where[0]
    lead = make(
        Stage.NODE.code,
        f"{label}: {len(free)} of {matching} matching device(s) are free, but on node(s) the pod cannot use ("
        f"{first}{f' and {len(where) - 1} more' if len(where) > 1 else ''}); the others are taken",
        hint=node_hint(an, where),
        subject=subject,
        freeOnUnusableNodes=len(free),
        unusableNodes=where[:20],
        **ev,
    )
    return [lead] + [replace(f, evidence={**f.evidence, "behind": "node"}) for f in found if f.code != lead.code]


def _free_where_unusable(an: Analysis, vs: list[DeviceVerdict]) -> list[DeviceVerdict]:
    """Of the devices rejected only for where they are (Stage.NODE, the first check that fails), those that nothing
    else holds (not allocated: the analysis's allocated state) on a node that only its state keeps the pod off,
    cordoned or NotReady (Analysis.held_nodes). A node the pod's own constraints exclude (its nodeSelector,
    affinity, tolerations) is the pod's choice: the devices it can use being taken stays the reason."""
    if not vs or an.cache.allocated is None:
        return []
    taken = an.cache.allocated[0].devices
    return [v for v in vs if v.entry.did not in taken and v.entry.node_name in an.held_nodes]


def _nodes_of(vs: list[DeviceVerdict]) -> list[str]:
    return sorted({v.entry.node_name for v in vs if v.entry.node_name}) or [vs[0].entry.where()]


def node_hint(an: Analysis, names: list[str]) -> str | None:
    """The hint for devices on nodes the pod cannot use, from the nodes themselves: cordoned (spec.unschedulable),
    NotReady or unreachable (their Ready condition, the node lifecycle controller's taints). None: the generic one."""
    by_name = {n["metadata"]["name"]: n for n in an.idx.nodes if not n.get("synthetic")}
    cordoned = [n for n in names if ((by_name.get(n) or {}).get("spec") or {}).get("unschedulable")]
    down = [n for n in names if n in by_name and node_down(by_name[n])]
    parts = []
    if cordoned:
        parts.append(
            f"{_list(cordoned)} {'is' if len(cordoned) == 1 else 'are'} cordoned: uncordon when the drain or "
            f"maintenance is over (kubectl uncordon {cordoned[0]})"
        )
    if down:
        parts.append(
            f"{_list(down)} {'is' if len(down) == 1 else 'are'} NotReady or unreachable: its kubelet does not report "
            f"(kubectl describe node {down[0]})"
        )
    if not parts:
        return None
    return "; ".join(parts) + ". Or free devices on a node the pod may use."


def node_down(node: dict) -> bool:
    """The node's Ready condition is not True, or the node lifecycle controller tainted it not-ready/unreachable."""
    conds = ((node.get("status") or {}).get("conditions")) or []
    if any(isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") != "True" for c in conds):
        return True
    return any(
        isinstance(t, dict) and t.get("key") in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
        for t in ((node.get("spec") or {}).get("taints")) or []
    )


def _list(names: list[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _with_node_hint(an: Analysis, f: Finding, vs: list[DeviceVerdict]) -> Finding:
    hint = node_hint(an, _nodes_of(vs))
    return replace(f, hint_override=hint) if hint else f


TERMINATING_HINT = (
    "The pods holding them are being deleted: their devices are freed once the kubelet unprepares them and the pods "
    "are gone. Look at what keeps each one (kubectl dra explain pod on it): a finalizer (metadata.finalizers), a "
    "node whose kubelet is gone or NotReady, or the driver's kubelet plugin missing on the node (DRA612)."
)


def _going_ahead(label: str, every: bool, some: str, first: str, only: bool) -> tuple[str, str]:
    """DRA404's message and hint when the pods ahead in the queue take matching devices in the estimated order
    (only: all of them; else some are allocated too)."""
    if every:
        state = "goes to a pod ahead in the queue" if only else "is allocated or goes to a pod ahead"
        msg = f"{label}: every matching device {state} ({first})"
    else:
        state = "go to pods ahead in the queue" if only else "are allocated or go to pods ahead"
        msg = f"{label}: {some} {state} ({first})"
    if only:
        return msg, "Wait for the pods ahead in the queue to finish, add devices, or give this pod a higher priority."
    return msg, "Free a device (delete the pods holding it), add devices, or wait for the pods ahead in the queue."


def _stage_finding(
    stage: Stage,
    label: str,
    vs: list,
    r: Request,
    subject: dict,
    ev: dict,
    every: bool,
    sem: Semantics,
    of: int | None = None,
) -> Finding:
    """The finding for the devices a stage rejected: every matching device (every=True), or some of them beside a
    count shortfall or beside other stages (of: how many devices match in all)."""
    first = f"{vs[0].entry.id}: {vs[0].reason}"
    some = f"{len(vs)}{f' of {of}' if of else ''} matching device(s)"
    if stage is Stage.NODE:
        why = vs[0].evidence.get("nodeRejection")
        msg = f"{label}: {some}, none on a node the pod may use ({vs[0].entry.where()}" + (f": {why})" if why else ")")
    elif stage is Stage.REQUEST:
        msg = f"{label}: no device passes the request's selectors ({first})"
    elif stage is Stage.CLASS:
        msg = f"{label}: no device passes the selectors of class {r.class_name} ({len(vs)} device(s) checked)"
    elif stage is Stage.IN_USE:
        ahead = sum(1 for v in vs if v.evidence.get("ahead"))  # the queue's estimate (checks.py): not allocated
        if ahead:
            msg, hint = _going_ahead(label, every, some, first, ahead == len(vs))
            return make(stage.code, msg, hint=hint, subject=subject, **ev)
        going = sum(1 for v in vs if v.evidence.get("terminating"))
        if going == len(vs):  # every one is held by pods being deleted: what keeps them is the question
            state = (
                "every matching device is held by a terminating pod"
                if every
                else f"{some} are held by terminating pods"
            )
            return make(
                stage.code,
                f"{label}: {state} ({first})",
                hint=TERMINATING_HINT,
                subject=subject,
                terminating=going,
                **ev,
            )
        msg = f"{label}: {'every matching device is' if every else some + ' are'} already allocated ({first})"
    elif stage is Stage.POOL:
        e = vs[0].entry
        msg = f"{label}: no usable device ({vs[0].reason})"
        if e.ignored or e.pool_invalid:
            if e.pool_invalid and sem.behaviour.skips_unusable_pools:
                msg += '; the scheduler reports "invalid resource pools were encountered"'
            return make(
                stage.code,
                msg,
                hint="Fix the driver's ResourceSlices as the reason says (usually a driver upgrade or its configuration).",
                subject=subject,
                **ev,
            )
    elif stage is Stage.TAINT:
        msg = (
            f"{label}: {'every matching device has' if every else some + ' have'} a taint the request does not "
            f"tolerate ({first})"
        )
    elif stage is Stage.COMPATIBILITY:
        msg = (
            f"{label}: {'every matching device draws' if every else some + ' draw'} from a counter set whose allocated "
            f"devices share no compatibility group with {'it' if every else 'them'} ({first})"
        )
    elif stage is Stage.COUNTERS:
        msg = f"{label}: the shared counters of {'every matching device' if every else some} are used up ({first})"
    elif stage is Stage.CAPACITY:
        msg = f"{label}: {'no matching device has' if every else some + ' do not have'} enough capacity left ({first})"
    elif stage is Stage.BINDING:
        msg = f"{label}: every device has binding conditions, which the assumed feature gates do not support"
    else:
        msg = f"{label}: every matching device is rejected ({first})"
    return make(stage.code, msg, subject=subject, **ev)
