"""The analysis shared by explain pod / explain claim / match: per-device matrices for every request and an
allocator dry-run over the nodes the pod may use."""

from __future__ import annotations

from dataclasses import replace

from kubectl_dra.analyze.allocator import (
    AllocatedState,
    Allocator,
    SelectorEvaluator,
    SliceIndex,
    apply_taint_rules,
    obj_ref,
    slice_spec,
    taint_rule_select,
)
from kubectl_dra.analyze.devices.checks import MatrixContext, device_matrix
from kubectl_dra.analyze.devices.universe import CounterView, Reachability, Universe
from kubectl_dra.analyze.pod.cache import Cache
from kubectl_dra.analyze.pod.claims import Index, build_requests, terminating_holders
from kubectl_dra.analyze.pod.claims import name_of as _name
from kubectl_dra.analyze.pod.dryrun_result import (
    ClaimAnalysis,
    DryRun,
    PodPlan,
    Skip,
)
from kubectl_dra.analyze.pod.dryrun_search import DryRunSearch, skip_key
from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import Finding
from kubectl_dra.findings.stages import Stage
from kubectl_dra.jsonio import value_key
from kubectl_dra.model.nodes import (
    NodeSelectorError,
    node_selector_matches,
    node_state_lifted,
    pod_node_rejection,
)
from kubectl_dra.model.snapshot import Snapshot


def constraints_key(pod: dict | None) -> str | bytes | None:
    """What of the pod decides which nodes it may use (pod_node_rejection reads these)."""
    if pod is None:
        return None
    spec = pod.get("spec") or {}
    parts = tuple(spec.get(k) for k in ("nodeName", "nodeSelector", "affinity", "tolerations"))
    if not any(parts):  # a pod with no node constraint at all (most pods of a fleet): one key, no encoding
        return "-"
    return value_key(dict(zip(("nodeName", "nodeSelector", "affinity", "tolerations"), parts)))


class Analysis(DryRunSearch):
    def __init__(self, snap: Snapshot, sem: Semantics):
        self.snap = snap
        self.sem = sem
        self.idx = Index(snap)
        self.ev = SelectorEvaluator(sem)
        self.slices = list(snap.slices)
        # DeviceTaintRules whose 1.34 CEL selectors cannot be judged here (rule name -> why): DRA016.
        self.held_nodes: frozenset = frozenset()  # nodes only their state (a cordon, NotReady) keeps the pod off
        self.taint_rule_gaps: dict[str, str] = {}
        if sem.taint_rules and snap.taint_rules:
            select = None
            if sem.behaviour.taint_rule_cel_selectors:
                select = taint_rule_select(self.ev, self.idx.classes, self.taint_rule_gaps)
            self.slices = apply_taint_rules(
                self.slices, snap.taint_rules, sem.behaviour.nil_taint_selector_matches_all, select
            )
        self.universe = Universe(self.slices, sem)
        self.findings: list[Finding] = []
        # Shared by every fork: what does not depend on the pod beyond the keys it is kept under (the cluster's
        # allocations, per pod-constraint node sets and their reachability, per request-shape device matrices).
        self.cache = Cache()

    # What every fork shares (the snapshot's context, built once); the rest is one pod's run: its findings, plan,
    # held_nodes and mark_selected, fresh in each fork.
    SHARED = ("snap", "sem", "idx", "ev", "slices", "taint_rule_gaps", "universe", "cache")

    def fork(self) -> "Analysis":
        """A fresh analysis of another pod that shares this one's indexes, CEL cache, device inventory and Cache,
        so that explaining many pods costs pods + devices, not pods x devices."""
        other = object.__new__(Analysis)
        for k in self.SHARED:
            setattr(other, k, getattr(self, k))
        other.findings = []
        other.plan = None
        other.held_nodes = frozenset()
        other.mark_selected = True
        return other

    plan: "PodPlan | None" = None  # the last analyse_claims' inputs to the dry-run (the queue re-runs it)
    # Copy a matrix to mark the dry-run's picks "selected" (explain's device rows); the scan's brief reports show no
    # rows, and a copy of a cluster-sized matrix per pod is what made the scan's memory grow with pods x devices.
    mark_selected: bool = True

    def allocated_state(self, exclude: set = frozenset()) -> AllocatedState:
        return AllocatedState.from_claims(
            (c for c in self.snap.claims if obj_ref(c) not in exclude),
            self.sem,
            self.snap.estimated,
            terminating_holders(self.idx),
        )

    def usable_nodes(self, pod: dict | None, allocated_claims: list[dict]) -> tuple[list[dict], dict, list[dict]]:
        """Nodes the pod may use (pod constraints + already-allocated claims' node selectors), why others not, and
        the nodes refused only by an allocated claim's node selector: the DynamicResources Filter finds that after
        it ran the allocator for the pending claims there, so an error of theirs is met on those nodes too."""
        usable, rejected, claim_only = [], {}, []
        held = set()
        for n in self.idx.nodes:
            why = pod_node_rejection(pod, n) if pod is not None else None
            if why is not None and pod_node_rejection(pod, node_state_lifted(n)) is None:
                held.add(_name(n))  # only the node's state (a cordon, NotReady) keeps the pod off it
            if why is None:
                for c in allocated_claims:
                    sel = ((c.get("status") or {}).get("allocation") or {}).get("nodeSelector")
                    try:
                        if sel is not None and not node_selector_matches(sel, n):
                            why = f"claim {_name(c)} is allocated to devices not reachable from this node"
                            claim_only.append(n)
                            break
                    except NodeSelectorError as e:
                        why = f"claim {_name(c)} has an invalid allocation node selector: {e}"
                        break
            if why is None:
                usable.append(n)
            else:
                rejected[_name(n)] = why
        self.held_nodes = frozenset(held)
        return usable, rejected, claim_only

    def analyse_claims(
        self,
        claims: list[dict],
        pod: dict | None,
        pcnames: list,
        fit=None,
        skip: Skip | None = None,
    ) -> tuple[list[ClaimAnalysis], DryRun]:
        """Matrices for every request of every claim, then an allocator dry-run for the unallocated ones.
        fit: the pod's NodeResourcesFit (analyze/pod/fit.py Fit), checked on each node where the claims fit. skip: a
        claim not allocated on some nodes (the extended-resource claim where a device plugin serves them)."""
        allocated = [c for c in claims if (c.get("status") or {}).get("allocation")]
        pending = [c for c in claims if not (c.get("status") or {}).get("allocation")]
        state, counters = self.allocated_now()
        nodes_key = (
            constraints_key(pod),
            tuple(
                (_name(c), value_key(((c.get("status") or {}).get("allocation") or {}).get("nodeSelector")))
                for c in allocated
            ),
        )
        cache = self.cache
        if nodes_key not in cache.node_sets:
            u, rj, co = self.usable_nodes(pod, allocated)
            names = [_name(n) for n in u]
            # Pods whose constraints differ but leave the same nodes usable, refused for the same reasons (a pod
            # with the default tolerations and one without, on nodes with no such taint), share device matrices.
            ids = cache.reach_ids
            reach_id = ids.setdefault((tuple(names), tuple(sorted(rj.items()))), len(ids))
            cache.node_sets[nodes_key] = (u, rj, Reachability(u, rj), names, co, reach_id, self.held_nodes)
        usable, rejected, reach, usable_names, claim_only, reach_id, held = cache.node_sets[nodes_key]
        self.held_nodes = held  # (the nodes only their state keeps the pod off: request_findings.py)
        if pod is None and self.idx.nodes_synthetic:  # no nodes to reach devices from: matrices without them
            reach_id = None
        mctx = MatrixContext(self.universe, state, self.sem, self.ev, None if reach_id is None else reach, counters)
        analyses = []
        for ci, (claim, pcn) in enumerate(zip(claims, pcnames)):
            reqs, cls_findings = build_requests(claim, ci, self.idx, allocated=claim in allocated)
            self.findings.extend(cls_findings)
            ca = ClaimAnalysis(claim, pcn, reqs, allocated=claim in allocated)
            own = frozenset(
                (r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
                for r in (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results")
                or []
            )
            for alts in reqs:
                for r in alts:
                    if r.class_obj is None:
                        continue
                    key = (r.name, r.class_name, id(r.class_obj), value_key(r.spec), reach_id, own)
                    m = cache.matrices.get(key)
                    if m is None:  # one per request shape: a Deployment's replicas share it
                        m = cache.matrices[key] = device_matrix(r, replace(mctx, own_devices=own))
                    if ca.allocated:
                        chosen = {
                            (x.get("driver"), x.get("pool"), x.get("device"))
                            for x in (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get(
                                "results"
                            )
                            or []
                            if x.get("request") == r.name
                        }
                        m = self._marked(m, chosen, "allocated to this claim", clear_stage=True)
                    ca.matrices[r.name] = m
            analyses.append(ca)
        dry = DryRun(usable_names, rejected)  # shared by the pods of one node constraint: never changed
        if pending and not any(f.blocking for f in self.findings):
            nominated = ((pod or {}).get("status") or {}).get("nominatedNodeName") or None
            self._dry_run(pending, analyses, reach, state, dry, fit, claim_only, skip, nominated)
        shape = (self.spec_keys(pending), id(reach), skip_key(pending, skip))
        self.plan = PodPlan(tuple(pending), tuple(analyses), reach, shape, dry, fit, skip)
        return analyses, dry

    def _marked(self, m: list, chosen: set, reason: str, clear_stage: bool = False) -> list:
        """A copy of the (shared, never changed) matrix m with the devices in chosen marked selected."""
        pos = self.universe.positions(chosen)  # a matrix lists the universe's devices in its order
        out = list(m)
        changed = []
        for did in chosen:
            i = pos.get(did)
            if i is not None and (i >= len(m) or m[i].entry.did != did):
                i = next((j for j, v in enumerate(m) if v.entry.did == did), None)  # not in the universe's order
            if i is not None:
                v = out[i]
                out[i] = replace(v, outcome="selected", reason=reason, stage=None if clear_stage else v.stage)
                changed.append(i)
        self.cache.origin.put(out, (m, tuple(changed)))  # what is derived from m serves the copy too
        return out

    def _candidate_nodes(self, m: list, reach: Reachability) -> set:
        """Nodes from which some device of the matrix is a candidate (or errors in CEL): worth a search."""
        hit = self.cache.worth.get(m)
        if hit is None:
            names: set = set()
            for v in m:
                if v.outcome in ("candidate", "selected"):  # selected: by the dry-run, when the queue runs it again
                    names.update(v.nodes or reach.nodes_for(v.entry))  # no nodes: matrix without a pod
                elif v.stage is Stage.CEL_ERROR:
                    names.update(reach.nodes_for(v.entry))
            hit = self.cache.worth.put(m, names)
        return hit

    def allocator(self, state: AllocatedState) -> Allocator:
        """The allocator port over this analysis's slices and classes, against state."""
        return Allocator(self.sem, self.idx.classes, self.slices, state, self.ev, self.slice_index())

    def slice_index(self) -> SliceIndex:
        """The allocator's index of this analysis's slices, built once for every fork."""
        if self.cache.slice_index is None:
            self.cache.slice_index = SliceIndex(self.slices)
        return self.cache.slice_index

    def allocated_now(self) -> tuple:
        """(AllocatedState, CounterView) of the cluster's allocations as the input holds them, built once for every
        fork (the queue and `devices --request` copy the state before they add to it)."""
        if self.cache.allocated is None:
            st = self.allocated_state()
            self.cache.allocated = (st, CounterView(self.universe, st, self.sem))
        return self.cache.allocated

    def nodes_by_name(self) -> dict:
        """Node name -> the input's Node object (not the ones made up from slices where the input has none), once
        for every fork."""
        if self.cache.nodes_by_name is None:
            self.cache.nodes_by_name = {_name(n): n for n in self.idx.nodes if not n.get("synthetic")}
        return self.cache.nodes_by_name

    def worth_nodes(self, pending, analyses, reach: Reachability, skip: Skip | None = None) -> list[dict]:
        """The usable nodes worth a search for the pending claims, in the order the search tries them."""
        by_claim = {id(a.claim): a for a in analyses}
        # Only nodes from which every pending request has at least one candidate are worth a search.
        # A device whose selector errors counts too: the search reaching it is what aborts scheduling.
        usable = reach.usable
        worth_names = None
        own_names = None  # the same for the claims allocated on the nodes of skip
        for c in pending:
            for alts in by_claim[id(c)].requests:
                names: set = set()
                for r in alts:
                    names |= self._candidate_nodes(by_claim[id(c)].matrices.get(r.name, []), reach)
                worth_names = names if worth_names is None else worth_names & names
                if skip is not None and c is not skip.claim:
                    own_names = names if own_names is None else own_names & names
        if skip is not None:
            on_plugin = skip.nodes & (reach.names if own_names is None else own_names)
            worth_names = on_plugin if worth_names is None else worth_names | on_plugin
        if worth_names is None:
            worth = usable
        else:  # in the order of usable, without a pass over every usable node when few are worth it
            pos = reach.positions()
            worth = [usable[i] for i in sorted(pos[x] for x in worth_names if x in pos)]
        # The scheduler filters every node, and an error on any of them aborts the attempt: the nodes where one may
        # come are tried first, so that allocatable nodes found before them cannot end the search early.
        aborting = self._aborting_nodes(pending, by_claim, reach)
        if aborting:
            pos = reach.positions()
            first = [usable[i] for i in sorted(pos[x] for x in aborting if x in pos)]
            worth = first + [n for n in worth if _name(n) not in aborting]
        return worth

    def _aborting_nodes(self, pending, by_claim: dict, reach: Reachability) -> set:
        """Nodes whose allocation may end in an error that aborts the attempt: a device whose selector errors in
        CEL for a pending request, and, up to 1.37, every node that reaches an incomplete or invalid pool when a
        pending request asks for all devices (validateDeviceRequest checks every pool of the node, whatever its
        driver; 1.38 fails only that node, Behaviour.all_mode_unusable_pool_fails_node)."""
        out: set = set()
        all_mode = False
        for c in pending:
            for alts in by_claim[id(c)].requests:
                for r in alts:
                    all_mode = all_mode or r.mode == "All"
                    for v in by_claim[id(c)].matrices.get(r.name, []):
                        if v.stage is Stage.CEL_ERROR:
                            out.update(reach.nodes_for(v.entry))
                            if slice_spec(v.entry.slice).get("perDeviceNodeSelection"):
                                # isSelectable evaluates a device's selectors before its own node: every node the
                                # slice reaches (GatherPools: one of its devices is there) meets this error
                                out.update(reach.nodes_of_slice(v.entry.slice))
        if all_mode and not self.sem.behaviour.all_mode_unusable_pool_fails_node:
            for e in self.universe.entries:
                if not e.ignored and not e.pool_usable:
                    out.update(reach.nodes_for(e))
        return out

    def _mark_dry_run(self, dry: DryRun, analyses) -> None:
        """The first allocatable node's picks: each claim's dry_run, its devices marked selected."""
        if dry.allocatable:
            first = dry.allocatable[0]
            for entry in first.claims:
                for a in analyses:
                    if obj_ref(a.claim) == entry.claim:
                        a.dry_run = entry
                        if not self.mark_selected:
                            continue
                        for rname, m in list(a.matrices.items()):
                            picked = {
                                (r["driver"], r["pool"], r["device"]) for r in entry.results if r["request"] == rname
                            }
                            if picked:
                                a.matrices[rname] = self._marked(
                                    m, picked, f"selected by the dry-run on node {first.node}"
                                )
