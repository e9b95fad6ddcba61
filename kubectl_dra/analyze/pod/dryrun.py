"""The analysis shared by explain pod / explain claim / match: per-device matrices for every request and an
allocator dry-run over the nodes the pod may use."""

from __future__ import annotations

from dataclasses import replace

from kubectl_dra.analyze.allocator import (
    AllocatedState,
    AllocationError,
    Allocator,
    ErrorKind,
    NodeFailure,
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
    ClaimPlacement,
    DryRun,
    NodeAllocation,
    PodPlan,
    Skip,
    claims_on,
)
from kubectl_dra.analyze.pod.errors_met import ErrorsMet
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

MAX_DRYRUN_NODES = 200


def _skip_key(pending, skip) -> tuple | None:
    if skip is None:
        return None
    return (next((i for i, c in enumerate(pending) if c is skip.claim), None), tuple(sorted(skip.nodes)))


def constraints_key(pod: dict | None) -> str | bytes | None:
    """What of the pod decides which nodes it may use (pod_node_rejection reads these)."""
    if pod is None:
        return None
    spec = pod.get("spec") or {}
    parts = tuple(spec.get(k) for k in ("nodeName", "nodeSelector", "affinity", "tolerations"))
    if not any(parts):  # a pod with no node constraint at all (most pods of a fleet): one key, no encoding
        return "-"
    return value_key(dict(zip(("nodeName", "nodeSelector", "affinity", "tolerations"), parts)))


MAX_ALLOCATABLE_NODES = 5


def _met(dry: "DryRun", e: AllocationError, node: str, maybe: str) -> bool:
    """Record an error met on node: the first the scheduler meets for certain replaces any it only may meet (and ends
    the search: True); of those it may meet, the first is kept."""
    if not maybe:
        dry.error, dry.error_node, dry.error_maybe = e, node, ""
        return True
    if dry.error is None:
        dry.error, dry.error_node, dry.error_maybe = e, node, maybe
    return False


def _deepest(kept: tuple, node: str, w) -> tuple:
    """The record to keep of kept (node, SearchFailure, alike) and node's w: the deeper one (the first of equals),
    counting the nodes whose search ended at the same request for the same reason."""
    if not kept or w.depth() > kept[1].depth():
        return (node, w, 0)
    k = kept[1]
    if (w.claim, w.request, w.reason) == (k.claim, k.request, k.reason):
        return (kept[0], k, kept[2] + 1)
    return kept


class Analysis:
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
        shape = (tuple(value_key(c.get("spec")) for c in pending), id(reach), _skip_key(pending, skip))
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

    def _dry_run(
        self,
        pending,
        analyses,
        reach: Reachability,
        state,
        dry: DryRun,
        fit=None,
        claim_only=(),
        skip=None,
        nominated=None,
    ) -> None:
        # Pods judged against the same allocations whose pending claims have the same specs (a Deployment's
        # replicas) get the same search: it runs once. An error names its claim, so it is never reused.
        key = (
            "dry",
            tuple(value_key(c.get("spec")) for c in pending),
            id(reach),
            fit.key() if fit is not None else None,
            fit.na_key(analyses) if fit is not None else None,
            _skip_key(pending, skip),
            nominated,
        )
        dry.meet = ErrorsMet(
            len(self.idx.nodes),
            lambda: self._feasible_bound(pending, analyses, reach, self.worth_nodes(pending, analyses, reach, skip)),
            nominated,
        )
        hit = self.cache.searches.get(key)
        if hit is not None and hit[0] is reach:
            failures, node_errors, tried, considered, capped, found, fits, why, na = hit[1]
            if na:
                fit.na.update(na)  # (nodealloc.py: the same demand, na_key in the key)
            dry.why = why
            dry.fit.update(fits)
            dry.failures.update(failures)
            dry.node_errors.update(node_errors)
            dry.tried_nodes, dry.considered_nodes, dry.capped = tried, considered, capped
            dry.allocatable.extend(
                NodeAllocation(node, tuple(ClaimPlacement(obj_ref(pending[i]), *r) for i, *r in res))
                for node, res in found
            )
            self._preempt_first(dry, fit)
            self._mark_dry_run(dry, analyses)
            return
        self._search(pending, analyses, reach, state, dry, fit, claim_only, skip)
        if dry.error is None:
            index = {obj_ref(c): i for i, c in enumerate(pending)}  # replayed for the same specs, other claims
            found = [
                (x.node, [(index[p.claim], p.results, p.node_selector) for p in x.claims]) for x in dry.allocatable
            ]
            self.cache.searches[key] = (
                reach,
                (
                    dict(dry.failures),
                    dict(dry.node_errors),
                    dry.tried_nodes,
                    dry.considered_nodes,
                    dry.capped,
                    found,
                    dict(dry.fit),
                    dry.why,
                    dict(fit.na) if fit is not None else None,
                ),
            )
        self._preempt_first(dry, fit)
        self._mark_dry_run(dry, analyses)

    def _preempt_first(self, dry: DryRun, fit) -> None:
        """Where NodeResourcesFit rejects every node the claims fit on, and it knows so for each (DRA504's case):
        whether DefaultPreemption makes room (preempt.py), and the node it nominates first in dry.allocatable (its
        devices are the ones the report shows)."""
        if fit is None or dry.error_decides or dry.capped or dry.placeable_nodes or dry.fit_unknown:
            return
        rejected = dry.fit_rejected
        if not rejected:
            return
        from kubectl_dra.analyze.pod.preempt import preemption

        nodes = self.nodes_by_name()
        dry.preemption = got = preemption(
            fit, [nodes[x.node] for x in dry.allocatable if x.node in rejected and x.node in nodes]
        )
        if got.chosen is not None:
            dry.allocatable.sort(key=lambda x: x.node != got.chosen.node)

    # long: the scheduler's per-node Filter loop in one place (errors, NodeResourcesFit, the node budget)
    def _search(
        self, pending, analyses, reach: Reachability, state, dry: DryRun, fit=None, claim_only=(), skip=None
    ) -> None:
        invalid = state.capacity_error()
        if invalid is not None:  # 1.38 PreFilter: no node is tried
            dry.error = AllocationError(invalid, kind=ErrorKind.STATE)
            return
        alloc = self.allocator(state)
        worth = self.worth_nodes(pending, analyses, reach, skip)
        meet = dry.meet
        if meet.nominated is not None and meet.nominated in reach.names:  # tried first: where it fits, nothing else is
            worth = self._nominated_first(pending, analyses, reach, alloc, fit, skip, meet, worth)
        if claim_only and self._error_where_unavailable(pending, analyses, claim_only, alloc, fit, skip, meet, dry):
            return
        dry.considered_nodes = len(worth)
        for i, n in enumerate(worth[:MAX_DRYRUN_NODES]):
            dry.tried_nodes += 1
            here = claims_on(pending, skip, _name(n))
            try:
                # no claim left to allocate there: the Filter passes the node (its device plugin serves the rest)
                res = alloc.allocate(n, here) if here else []
            except NodeFailure as e:  # 1.35+: Unschedulable on this node, with the error's text
                dry.failures[_name(n)] = e.message
                dry.node_errors[_name(n)] = e
                continue
            except AllocationError as e:
                nf = fit.check(n) if fit is not None else None
                if nf is not None and nf.fits is False:
                    # NodeResourcesFit comes before DynamicResources in the scheduler's Filter order and rejects
                    # the node: DynamicResources never runs there, so the scheduler never meets this error.
                    dry.failures[_name(n)] = ", ".join(dict.fromkeys(s.reason for s in nf.shortfalls))
                    continue
                why = meet.uncertainty(_name(n), nf)
                if why is not None and _met(dry, e, _name(n), why):
                    self._also_met(dry, worth[i + 1 :], pending, analyses, reach, alloc, fit, skip)
                    break
                continue  # the scheduler may not meet it (or never filters the node): the search goes on
            if res is None:
                dry.failures[_name(n)] = "cannot allocate all claims"
                if alloc.last_failure is not None:
                    dry.why = _deepest(dry.why, _name(n), alloc.last_failure)
                continue
            dry.allocatable.append(
                NodeAllocation(
                    _name(n),
                    tuple(ClaimPlacement(obj_ref(c), r.results, r.node_selector) for c, r in zip(here, res)),
                )
            )
            if fit is not None:  # NodeResourcesFit: a node it rejects does not count, the search goes on
                self.node_demand(fit, n, analyses, here, res)
                dry.fit[_name(n)] = fit.check(n)
            if len(dry.placeable_nodes) >= MAX_ALLOCATABLE_NODES:
                dry.capped = True
                break
        if len(worth) > MAX_DRYRUN_NODES and not dry.placeable_nodes:
            dry.capped = True
        rank = {True: 0, None: 1, False: 2}
        dry.allocatable.sort(key=lambda x: rank[dry._fit_state(x.node)])  # stable: the search's order within each

    def _error_where_unavailable(
        self, pending, analyses, nodes: list[dict], alloc: Allocator, fit, skip, meet: ErrorsMet, dry: DryRun
    ) -> bool:
        """Record in dry the errors the allocator meets for the pending claims on the nodes refused only by an
        allocated claim (the DynamicResources Filter allocates them before it reports the allocated claim
        unavailable there: the error ends the attempt); True when the scheduler meets one for certain. Only nodes a
        device that errors in CEL reaches are tried, and none that NodeResourcesFit rejects (it runs first)."""
        there = Reachability(nodes)
        by_claim = {id(a.claim): a for a in analyses}
        names = self._aborting_nodes(pending, by_claim, there)
        for n in nodes:
            nf = fit.check(n) if fit is not None and _name(n) in names else None
            if _name(n) not in names or (nf is not None and nf.fits is False):
                continue
            here = claims_on(pending, skip, _name(n))
            if not here:
                continue
            try:
                alloc.allocate(n, here)
            except NodeFailure:
                continue
            except AllocationError as e:
                why = meet.uncertainty(_name(n), nf)
                if why is not None and _met(dry, e, _name(n), why):
                    return True
        return False

    def _also_met(self, dry: DryRun, rest: list, pending, analyses, reach, alloc, fit, skip) -> None:
        """The other errors the scheduler may meet first, one per distinct message (a few): Filter runs on the nodes in
        parallel and the first error met ends the attempt, so it may report any of them."""
        aborting = self._aborting_nodes(pending, {id(a.claim): a for a in analyses}, reach)
        seen = {dry.error.message}
        for n in rest:
            if len(dry.also_met) >= 3:
                return
            if _name(n) not in aborting or (fit is not None and fit.check(n).fits is False):
                continue
            here = claims_on(pending, skip, _name(n))
            try:
                if here:
                    alloc.allocate(n, here)
            except AllocationError as e:
                if e.message not in seen:
                    seen.add(e.message)
                    dry.also_met[_name(n)] = e.message
            except NodeFailure:
                continue

    def _nominated_first(
        self, pending, analyses, reach: Reachability, alloc, fit, skip, meet: ErrorsMet, worth: list
    ) -> list:
        """worth with the pod's nominated node first, and meet told whether the pod passes every filter there (the
        scheduler then places it there without filtering another node: schedule_one.go evaluateNominatedNode)."""
        n = reach.usable[reach.positions()[meet.nominated]]
        here = claims_on(pending, skip, meet.nominated)
        try:
            res = alloc.allocate(n, here) if here else []
        except (NodeFailure, AllocationError):
            res = None
        if res is not None:
            if fit is not None:
                self.node_demand(fit, n, analyses, here, res)
            meet.nominated_fits = fit.check(n).fits if fit is not None else True
        return [n] + [x for x in worth if _name(x) != meet.nominated]

    def node_demand(self, fit, n: dict, analyses, here: list, res: list) -> None:
        """DRANodeAllocatableResources (nodealloc.py): what the devices of the pod's claims on node n (the allocated
        claims' and, for here, the pending claims the dry-run allocated there: res) add to its requests, kept in
        the pod's Fit for its check of n."""
        if not fit.nalloc:
            return
        from kubectl_dra.analyze.pod.nodealloc import pod_demand

        picked = {id(c): r.results for c, r in zip(here, res)}
        claims = []
        for a in analyses:
            if a.allocated:
                results = (((a.claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results")
            else:
                results = picked.get(id(a.claim))
            claims.append((a.pod_claim_name, a.claim, results or None))
        fit.na[_name(n)] = pod_demand(fit.pod, claims, self.slices, n, self.sem)

    def _feasible_bound(self, pending, analyses, reach: Reachability, worth: list[dict]) -> int:
        """How many nodes may pass every filter: those worth a search where no error may come."""
        aborting = self._aborting_nodes(pending, {id(a.claim): a for a in analyses}, reach)
        return sum(1 for n in worth if _name(n) not in aborting)

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
