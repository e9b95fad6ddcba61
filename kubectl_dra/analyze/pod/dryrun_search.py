"""The dry-run's search over the nodes (a part of analyze/pod/dryrun.py's Analysis, which inherits it): the
allocator on each node worth a search in the scheduler's order, the nominated node first, the errors the scheduler
may meet, and what each node lacks."""

from __future__ import annotations

from kubectl_dra.analyze.allocator import (
    AllocationError,
    Allocator,
    ErrorKind,
    NodeFailure,
    obj_ref,
)
from kubectl_dra.analyze.devices.universe import Reachability
from kubectl_dra.analyze.pod.claims import name_of as _name
from kubectl_dra.analyze.pod.dryrun_result import (
    ClaimPlacement,
    DryRun,
    NodeAllocation,
    claims_on,
)
from kubectl_dra.analyze.pod.errors_met import ErrorsMet
from kubectl_dra.jsonio import value_key

MAX_DRYRUN_NODES = 200
MAX_ALLOCATABLE_NODES = 5


def skip_key(pending, skip) -> tuple | None:
    """The part of a Skip (a claim left out on some nodes) that a cached search depends on."""
    if skip is None:
        return None
    return (next((i for i, c in enumerate(pending) if c is skip.claim), None), tuple(sorted(skip.nodes)))


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


class DryRunSearch:
    """Analysis's dry-run search (the methods read the analysis's indexes, caches and allocator)."""

    def spec_keys(self, pending) -> tuple:
        """The pending claims' spec keys (jsonio.value_key), each kept once however many pods' claims have it: a
        Deployment's thousands of pods share one (a pod's shape holds them)."""
        keys = self.cache.spec_keys
        return tuple(keys.setdefault(k, k) for k in (value_key(c.get("spec")) for c in pending))

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
            self.spec_keys(pending),
            id(reach),
            fit.key() if fit is not None else None,
            fit.na_key(analyses) if fit is not None else None,
            skip_key(pending, skip),
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
            self._scores_first(dry, fit, pending, reach)
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
        self._scores_first(dry, fit, pending, reach)
        self._mark_dry_run(dry, analyses)

    def _scores_first(self, dry: DryRun, fit, pending, reach: Reachability) -> None:
        """Where the search found every node the pod passes (not capped) and the scheduler's scores are modelled for
        it (score.py), the nodes of the highest score first in dry.allocatable, in the search's order among
        themselves: the dry-run's pick is then a node the scheduler may bind it to. Not for a pod whose nominated
        node it passes (the scheduler takes that node without scoring: evaluateNominatedNode)."""
        placeable = dry.placeable_nodes
        if fit is None or dry.capped or dry.error_decides or len(placeable) < 2:
            return
        if dry.meet is not None and dry.meet.nominated is not None:
            return
        from kubectl_dra.analyze.pod.score import scores_of

        best = set(scores_of(self).best(fit.pod, fit, reach.names, pending, placeable, {}))
        if len(best) < len(placeable):
            # (the placeable nodes come first, as _search sorts them: the best of them move to the front, stable)
            n = len(placeable)
            dry.allocatable[:n] = sorted(dry.allocatable[:n], key=lambda x: x.node not in best)

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
