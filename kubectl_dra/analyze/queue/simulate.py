"""Pods compete, step 2: the dry-run in queue order (one allocated state that each placed pod adds to, as the
scheduler's in-flight allocations), over components of pods that can use the same devices."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import replace
from functools import partial

from kubectl_dra.analyze.allocator import AllocationError, NodeFailure, gather_pools, obj_ref
from kubectl_dra.analyze.pod.extended import IN_MEMORY_NAME
from kubectl_dra.analyze.pod.score import add_use, scores_of
from kubectl_dra.analyze.queue.alternatives import Alternatives, first_outsiders
from kubectl_dra.analyze.queue.exposed import may_err
from kubectl_dra.analyze.queue.gang import member_order
from kubectl_dra.analyze.queue.judge import Component, Queue, did, isolated, shortfall, uniform_until
from kubectl_dra.analyze.queue.order import BASIS, Entry, order
from kubectl_dra.analyze.queue.outcomes import EntryKind, queue_key
from kubectl_dra.analyze.queue.preempted import room_freed_by_others, search_preemption, sim_rows
from kubectl_dra.analyze.queue.retry import retries, retry_reason
from kubectl_dra.analyze.queue.rules import Round, judge, run_second_round
from kubectl_dra.analyze.queue.shapes import Shapes
from kubectl_dra.analyze.queue.ties import with_ties
from kubectl_dra.model.meta import meta_of, priority_of


def claim_key(c: dict) -> str:
    """A pending claim's identity across pods (a claim two pods name is one claim): its namespace/name, but each
    pod's own for the scheduler's in-memory claim of its extended resources (every one is named
    <extended-resources>, as upstream's specialClaimInMemName)."""
    ref = obj_ref(c)
    meta = c.get("metadata") or {}
    if meta.get("name") != IN_MEMORY_NAME:
        return ref
    owner = (meta.get("ownerReferences") or [{}])[0]
    return f"{ref} of {owner.get('uid') or owner.get('name')}"


def _components(entries: list[Entry], shapes: Shapes) -> dict:
    """shape -> component id: shapes whose keys overlap, transitively (union-find over shapes, not pods)."""
    parent: dict = {}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    owner: dict = {}
    for e in entries:
        s = e.plan.shape
        if s in parent:
            continue
        parent[s] = s
        for k in shapes.keys[s]:
            o = owner.setdefault(k, s)
            if o != s:
                a, b = find(o), find(s)
                if a != b:
                    parent[b] = a
    return {s: find(s) for s in parent}


MAX_ONLY = 16  # nodes searched past the one a pod goes to, to tell whether it is the only one (_Sim._only)


class _Sim:
    """The dry-run in queue order: one allocated state that each placed pod adds to, per-shape cursors over the
    nodes worth a search (a node a shape failed on stays failed: the state only grows)."""

    def __init__(self, base, forced: dict | None = None):
        self.base = base
        # ref -> the node its preemption nominates where DefaultPreemption's criteria tie several (ties.py tries
        # each); the ties met without one: ref -> the tied nodes
        self.forced = forced or {}
        self.ties: dict = {}
        self.scores = scores_of(base)  # which of the nodes a pod passes the scheduler picks (pod/score.py)
        self.state = base.allocated_now()[0].copy()
        self.alloc = base.allocator(self.state)
        self.worth: dict = {}
        self.cursor: dict = {}
        self.taken_by: dict = {}  # device ID -> Entry
        self.node_use: dict = {}  # node -> (requests, pod count) of the pods placed there (NodeResourcesFit)
        self.claims: dict = {}  # claim_key -> (Entry, node) for pending claims allocated in the dry-run
        self.entries: list = []  # every Entry, in queue order
        self._preemptors: list | None = None  # the entries that preempt at their turn, in order (preemptor_ahead)
        self._open_nodes: list | None = None  # the entries whose node is open, in order (score_movers)
        self._last_of_tie: dict | None = None
        self._groups: dict | None = None  # crowd_proof's prefix sums
        self.others = None  # the pending pods that use no DRA (others.py Others), or None
        self.rest = ()  # (pod, PodPlan) of the pending pods with DRA blocked alone (simulate's rest)
        # allocate() per (shape, node, claims) with the generations of the node's pools it saw: a pod of the same
        # shape asks again (a Deployment's replicas try the same second choice), and only a placement in one of
        # those pools (state.add) can change the answer
        self._tried: dict = {}
        self._pool_gen: dict = {}  # (driver, pool) -> placements in it so far
        # whether a pool no placement has touched is as the cluster has it (until a failed group's placements are
        # reverted: then the generations start again from a state that holds the pods placed before it)
        self._pristine = True
        self._did_names: dict = {}  # device ID -> driver/pool/device, made once (did_names)
        self._nominees: list | None = None  # nominated()

    def _allocate(self, shape, n: dict, here: list):
        alloc = self.alloc
        try:
            pools = gather_pools(alloc.slices, n, alloc.sem, alloc.index)
        except AllocationError:
            return alloc.allocate(n, here)
        gens = tuple(self._pool_gen.get((p.driver, p.name), 0) for p in pools)
        key = (shape, n["metadata"]["name"], len(here))
        if self._pristine and not any(gens):  # the node's pools as they are: the count proof's answer too
            return base_allocate(self.base, key, n, here)
        hit = self._tried.get(key)
        if hit is not None and hit[0] == gens:
            if isinstance(hit[1], Exception):
                raise hit[1]
            return hit[1]
        try:
            res = alloc.allocate(n, here)
        except NodeFailure as err:  # (an AllocationError is not kept: its message names this pod's claim)
            self._tried[key] = (gens, err)
            raise
        self._tried[key] = (gens, res)
        return res

    def place(self, e: Entry, want_choices: bool) -> None:
        """The pod's turn: its search on the state so far, and what it takes added to the state."""
        if e.unmodelled is not None:  # (nodealloc_unmodelled)
            e.error = e.unmodelled
            return
        found = self.search(e, want_choices)
        if found is not None:
            self.commit(e, *found)

    # long: one pod's turn in the scheduler's steps (NodeResourcesFit, allocator, errors, preemption, scores)
    def search(self, e: Entry, want_choices: bool) -> tuple | None:
        """Where the pod goes at this point of the queue: (node, allocation results) or None, with e.node,
        e.choices and e.error (its attempt errs, or is not modelled) set; the state is not changed."""
        plan = e.plan
        e.node_open, e.choices_scored = None, False
        shared = [c for c in plan.pending if claim_key(c) in self.claims]
        if shared:
            q, node = self.claims[claim_key(shared[0])]
            if len(shared) == len(plan.pending) and node in plan.reach.names and q.plan.reach is plan.reach:
                e.follows, e.node, e.choices = q, node, 1
                e.node_open = q.node_open and f"it follows {q.ref}, whose node is open ({q.node_open})"
            else:
                e.error = (
                    f"shares pending claim {obj_ref(shared[0])} with {q.ref}, ahead of it: their joint placement is "
                    "not modelled"
                )
            return None
        s = plan.shape
        if s not in self.worth:
            self.worth[s] = self.base.worth_nodes(plan.pending, plan.analyses, plan.reach, plan.skip)
            self.cursor[s] = 0
        worth = self.worth[s]
        i = self.cursor[s]
        found = []
        # where its scores are modelled, every node it passes is found, and it goes to one of the highest score (a
        # pod group's members are placed by the group's own cycle: not scored here)
        scored = e.gang is None and self.scores.modelled(e.pod, plan.fit, plan.reach.names, plan.pending)
        maybe = ""  # the first error the search may meet (on a node the scheduler may not filter)
        first_dead = True
        rejected = []  # the nodes NodeResourcesFit refuses: where it may preempt (preempted.py)
        while i < len(worth):
            n = worth[i]
            fit = plan.fit
            use = self.node_use.get(n["metadata"]["name"]) if fit is not None else None
            if fit is not None and fit.check(n, use).fits is False:
                # NodeResourcesFit (with the pods ahead placed there): the node is out for this pod (not for its
                # shape: the cursor stays). Where it has room for the pod alone the dry-run alone did not know:
                # the pods ahead decide (undetermined).
                if use is not None and fit.check(n).fits is not False:
                    e.crowded = n["metadata"]["name"]
                rejected.append(n)
                first_dead = False
                i += 1
                continue
            here = plan.claims_on(n["metadata"]["name"])
            try:
                res = self._allocate(s, n, here) if here else []
            except NodeFailure:
                res = None
            except AllocationError as err:
                met = plan.dry.meet
                if met is None or met.uncertainty(n["metadata"]["name"], fit.check(n) if fit else None) == "":
                    e.error = (
                        f"at its turn, after the pods ahead take theirs, the scheduler's attempt errs: {err.message}"
                    )
                    e.erred = (err.message, True)
                    return None
                # the scheduler never filters the node, or may not (the pod's own DRA304 says so): the search goes on
                maybe = maybe or err.message
                res = None
            if res is None:
                if first_dead:
                    self.cursor[s] = i + 1
            else:
                first_dead = False
                found.append((n, res))
                if not scored and (not want_choices or len(found) >= 2):
                    break
            i += 1
        rest = i + 1  # the nodes after the last one searched (found or not)
        # (the count the rules read: as many as a search for want_choices finds, at most 2)
        e.choices = min(len(found), 2 if want_choices else 1)
        if not found and not maybe and e.error is None:
            got = search_preemption(self, e, rejected)
            if got is not None:
                return got
            why = room_freed_by_others(self, e, rejected) if e.error is None else None
            if why is not None:
                e.error = why
                return None
        if not found:
            if maybe:  # no device, and an error it may meet: a retry may not meet it once others take devices
                e.erred = (maybe, False)
            return None
        if scored and len(found) > 1:
            names = [n["metadata"]["name"] for n, _res in found]
            best = self.scores.best(e.pod, plan.fit, plan.reach.names, plan.pending, names, self.node_use)
            found = [x for x in found if x[0]["metadata"]["name"] in best]
            e.choices_scored = True
            if len(found) > 1:  # selectHost picks one of the highest score at random
                e.node_open = f"the scheduler's scores tie between {len(found)} nodes it passes"
        elif not scored and (len(found) > 1 or not self._only(e, worth, rest)):
            e.node_open = "it passes other nodes too, and its scores, which pick one, are not modelled for it"
        e.node = found[0][0]["metadata"]["name"]
        return found[0]

    def _only(self, e: Entry, worth: list, rest: int) -> bool:
        """Whether none of worth[rest:] takes the pod (NodeResourcesFit with the pods ahead placed, then its claims)
        once it has been found a node: looked at only where they are few (MAX_ONLY); else False, as where one errs."""
        if len(worth) - rest > MAX_ONLY:
            return False
        plan = e.plan
        for n in worth[rest:]:
            name = n["metadata"]["name"]
            if plan.fit is not None and plan.fit.check(n, self.node_use.get(name)).fits is False:
                continue
            here = plan.claims_on(name)
            try:
                if not here or self._allocate(plan.shape, n, here) is not None:
                    return False
            except NodeFailure:
                continue
            except AllocationError:
                return False
        return True

    def commit(self, e: Entry, n: dict, res: list) -> None:
        """What the pod takes on node n (the allocator's results for its claims there) added to the state."""
        e.node = n["metadata"]["name"]
        e.allocs = tuple((obj_ref(c), r) for c, r in zip(e.plan.claims_on(e.node), res))
        e.takes = self.take(e)

    def take(self, e: Entry) -> tuple:
        """e's allocations (e.allocs, on e.node) added to the state, the device IDs they take returned: at its turn
        (commit), or once more in a second pass over the queue (retry.py)."""
        takes = []
        for c, (ref, r) in zip(e.plan.claims_on(e.node), e.allocs):
            self.state.add(ref, r.results, self.base.sem)
            self.claims[claim_key(c)] = (e, e.node)
            for x in r.results:
                did = (x.get("driver", ""), x.get("pool", ""), x.get("device", ""))
                self._pool_gen[did[:2]] = self._pool_gen.get(did[:2], 0) + 1
                takes.append(did)
                self.taken_by.setdefault(did, e)
        if e.plan.fit is not None:
            req, count = self.node_use.get(e.node, ({}, 0))
            req = dict(req)
            for k, v in e.plan.fit.request.items():
                req[k] = req.get(k, 0) + v
            add_use(req, e.pod)  # (what it adds to the node's scores: pod/score.py)
            self.node_use[e.node] = (req, count + 1)
        return tuple(takes)

    def place_gang(self, g, ms: list[Entry]) -> None:
        """The group cycle: every member in member order against one state; below minCount, all reverted (a group
        the scheduler rejects before the cycle: none tried)."""
        g.members = member_order(ms)
        if g.rejected is not None:
            g.fit, g.failed, g.short = 0, True, [e.ref for e in g.members]
            for e in g.members:
                e.node, e.takes, e.allocs, e.choices = None, (), (), 0
            return
        saved = (self.state.copy(), dict(self.claims), dict(self.taken_by), dict(self.cursor), dict(self.node_use))
        for e in g.members:
            self.place(e, want_choices=False)
        g.fit = sum(1 for e in g.members if e.node is not None)
        g.failed = g.min_count > 0 and g.fit < g.need
        g.short = [e.ref for e in g.members if e.node is None]
        if g.failed:
            self.state, self.claims, self.taken_by = saved[:3]
            self.node_use = saved[4]
            self.cursor = {**{s: 0 for s in self.cursor}, **saved[3]}  # (shapes first searched in the cycle: anew)
            self.alloc = self.base.allocator(self.state)
            self._tried, self._pool_gen, self._pristine = {}, {}, False
            for e in g.members:
                e.node, e.takes, e.allocs = None, (), ()
        for e in g.members:  # pods behind: a member went one way for certain, or may have gone another
            e.choices = (0 if e.node is None else 1) if g.certain else 2

    def fits_on(self, e: Entry, limit: int) -> int:
        """Nodes (up to limit) on which the pod alone fits, against the cluster as it is (its devices and, where it
        is known, NodeResourcesFit). The search of one shape goes on where the last asked one stopped: every pod of
        a Deployment asks with a larger limit, and all of them together cost one pass over its nodes."""
        plan = e.plan
        hit = len(plan.dry.placeable_nodes) if plan.fit is not None else len(plan.dry.allocatable)
        if not plan.dry.capped or hit >= limit:
            return hit
        key = (plan.shape, plan.fit.key() if plan.fit is not None else None)
        got = self.base.cache.fits_on.get(key)
        if got is None:
            worth = self.base.worth_nodes(plan.pending, plan.analyses, plan.reach, plan.skip)
            got = self.base.cache.fits_on[key] = [
                0,
                0,
                worth,
            ]  # nodes found, next node to try, the nodes in search order
        while got[0] < limit and got[1] < len(got[2]):
            n = got[2][got[1]]
            got[1] += 1
            if plan.fit is not None and plan.fit.check(n).fits is not True:
                continue
            here = plan.claims_on(n["metadata"]["name"])
            try:
                key = (plan.shape, n["metadata"]["name"], len(here))
                if not here or base_allocate(self.base, key, n, here) is not None:
                    got[0] += 1
            except (NodeFailure, AllocationError):
                continue
        return min(got[0], limit)

    def crowd_proof(self, e: Entry, node: str | None = None) -> bool:
        """Whether NodeResourcesFit admits e on the node the dry-run placed it on (or on node) whatever node each pod
        ahead of it picks: with every pod that may be ahead of it and may use that node placed there at once (the
        dry-run's own choices for them are one of many). Per group of pods of the same usable nodes, prefix sums in
        queue order: pods x groups, not pods x pods."""
        plan = e.plan
        node = node or e.node
        if plan.fit is None or node is None:
            return True
        if self._groups is None:
            self._groups = {}
            for q in self.entries:
                if q.plan.fit is None:
                    continue
                g = self._groups.setdefault(id(q.plan.reach), (q.plan.reach, [], [({}, 0)]))
                last, count = g[2][-1]
                req = dict(last)
                for k, v in q.plan.fit.request.items():
                    req[k] = req.get(k, 0) + v
                g[1].append(q.index)
                g[2].append((req, count + 1))
        upto = self.may_be_ahead(e)
        total: dict = {}
        count = 0
        for reach, idxs, sums in self._groups.values():
            if node not in reach.names:
                continue
            req, c = sums[bisect_right(idxs, upto)]
            for k, v in req.items():
                total[k] = total.get(k, 0) + v
            count += c
        for k, v in plan.fit.request.items():  # e itself is among them
            total[k] = total.get(k, 0) - v
        if self.others is not None:  # and the pending pods that use no DRA, of the same or a higher priority
            req, c = self.others.ahead(queue_key(e.gated, e.priority, e.created), node)
            for k, v in req.items():
                total[k] = total.get(k, 0) + v
            count += c
        node = plan.reach.usable[plan.reach.positions()[node]]
        return plan.fit.check(node, (total, count - 1)).fits is not False

    def crowders(self, e: Entry, limit: int = 3, scan: int = 400) -> list[str]:
        """A few pods that may be ahead of e and may use its node, the nearest first (looked for among scan)."""
        upto = self.may_be_ahead(e)
        out = []
        for q in reversed(self.entries[max(0, upto + 1 - scan) : upto + 1]):
            if q is not e and q.plan.fit is not None and e.node in q.plan.reach.names:
                out.append(q.ref)
                if len(out) >= limit:
                    break
        if self.others is not None and len(out) < limit:
            out.extend(self.others.names_ahead(queue_key(e.gated, e.priority, e.created), e.node, limit - len(out)))
        return out

    def others_ahead(self, e: Entry) -> int:
        """How many pending pods that use no DRA may be ahead of e (each may fill one node)."""
        return self.others.count_ahead(queue_key(e.gated, e.priority, e.created)) if self.others is not None else 0

    def score_movers(self, e: Entry) -> str | None:
        """Why the scores that picked e's node may differ when its turn comes (None: they may not): a pending pod
        without DRA that may be ahead may use one of its nodes (the dry-run places none of those), or a pod ahead
        that may use them goes to a node the scheduler picks in a way not modelled (Entry.node_open)."""
        names = e.plan.reach.names
        mine = queue_key(e.gated, e.priority, e.created)
        for g in self.others.groups if self.others is not None else ():
            if g.keys and g.keys[0] <= mine and not names.isdisjoint(g.names):
                return "pods without DRA that may be ahead of it may change the scores that pick its node"
        if self._open_nodes is None:  # (asked once the dry-run is over: the rules judge its result)
            self._open_nodes = [q for q in self.entries if q.node_open]
        last = self.may_be_ahead(e)
        for i, q in enumerate(self._open_nodes):
            if q.index > last or i >= MAX_ONLY * 4:
                return None if q.index > last else f"{q.ref} and other pods that may be ahead go to nodes not fixed"
            if q is not e and not names.isdisjoint(q.plan.reach.names):
                return f"{q.ref}, which may be ahead of it, goes to a node not fixed, and with it the scores"
        return None

    def preemptor_ahead(self, e: Entry) -> Entry | None:
        """The first pod other than e that preempts at its turn (Entry.preempts, or a nomination DefaultPreemption's
        criteria tie: self.ties) and may be placed before e: its victims leave at times the API does not show, and
        the room they free changes the nodes the pods after it pass, and their scores."""
        if self._preemptors is None:  # (asked once the dry-run is over: the rules judge its result)
            self._preemptors = [q for q in self.entries if q.preempts is not None or q.ref in self.ties]
        last = self.may_be_ahead(e)
        return next((q for q in self._preemptors[:2] if q is not e and q.index <= last), None)

    def nominated(self) -> list:
        """(priority, node, ref) of the pending pods nominated to a node (status.nominatedNodeName, after a
        preemption): the scheduler counts them there for every pod of their priority or a lower one
        (RunFilterPluginsWithNominatedPods), though the dry-run in order places none of them there."""
        if self._nominees is None:
            pods = [(q.pod, q.ref) for q in self.entries]
            for g in self.others.groups if self.others is not None else ():
                pods += [(pod, ref) for ref, (pod, _fit) in zip(g.refs, g.pods)]
            self._nominees = [
                (priority_of(pod), (pod.get("status") or {}).get("nominatedNodeName"), ref)
                for pod, ref in pods
                if (pod.get("status") or {}).get("nominatedNodeName")
            ]
        return self._nominees

    def room_in_flux(self, e: Entry) -> bool:
        """Whether room on e's nodes is held or freed at times the API does not show: a pending pod of its priority
        or a higher one nominated there, or a bound pod there being deleted (its cpu is the scheduler's until it is
        gone)."""
        names = e.plan.reach.names
        if any(prio >= e.priority and ref != e.ref and node in names for prio, node, ref in self.nominated()):
            return True
        by_node = e.plan.fit.bound.by_node if e.plan.fit is not None else {}
        return any(meta_of(p).get("deletionTimestamp") for n in names for p in by_node.get(n, ()))

    def did_names(self, ids) -> tuple:
        """The first 8 of the device IDs as driver/pool/device (judge.did), each string made once: the places of
        thousands of pods name the same devices of the pods ahead of them."""
        names = self._did_names
        out = []
        for d in ids:
            n = names.get(d)
            out.append(n if n is not None else names.setdefault(d, did(d)))
            if len(out) == 8:
                break
        return tuple(out)

    def may_be_ahead(self, e: Entry) -> int:
        """How many pods of the whole queue may be placed before e: every one before it and its ties after it."""
        if self._last_of_tie is None:
            self._last_of_tie = {}
            for q in self.entries:
                self._last_of_tie[q.tie] = max(q.index, self._last_of_tie.get(q.tie, q.index))
        return self._last_of_tie.get(e.tie, e.index)


def base_allocate(base, key: tuple, n: dict, here: list):
    """allocate(n, here) against the allocations as they are (base.allocated_now), once per key ((pod shape, node
    name, claims there)): the dry-run's first look at a node and the count proof's walk over the same nodes ask the
    same question. A NodeFailure is kept and raised again; an AllocationError is not kept (its message names the
    asking pod's claim)."""
    cache = base.cache
    memo = cache.base_allocs
    hit = memo.get(key)
    if hit is None:
        if cache.base_allocator is None:
            cache.base_allocator = base.allocator(base.allocated_now()[0])
        try:
            hit = memo[key] = (cache.base_allocator.allocate(n, here),)
        except NodeFailure as err:
            memo[key] = err
            raise
    if isinstance(hit, NodeFailure):
        raise hit
    return hit[0]


def _gang_members(ordered: list[Entry]) -> dict:
    """Gang (modelled) -> its member Entries."""
    out: dict = {}
    for e in ordered:
        if e.gang is not None and e.gang.unmodelled is None:
            out.setdefault(e.gang, []).append(e)
    return out


def _gang_certainty(g, ms: list[Entry], ahead: list[Entry], shapes, kind_of) -> bool:
    """The group's outcome is certain when each pod ahead of it that can use the same devices was placed one way
    only (no choice of nodes, not undetermined, not tied with another), and its members are of one kind on
    node-local devices (then how many fit does not depend on the nodes the scheduler picks among equals: the
    count argument of identical pods)."""
    forced = all(q.kind not in (EntryKind.OPEN, EntryKind.ERROR) and q.error is None and q.choices <= 1 for q in ahead)
    untied = len({q.tie for q in ahead}) == len(ahead)
    return forced and untied and len({kind_of(e) for e in ms}) == 1 and shapes.local[ms[0].plan.shape]


def nodealloc_unmodelled(ordered: list[Entry], others) -> None:
    """DRANodeAllocatableResources (pod/nodealloc.py): what a pod's devices add to its cpu and memory is modelled for
    its own dry-run, not in queue order (the devices it gets at its turn, and what the pods placed ahead add to a
    node, may differ). Where another pod competes, every pod that may use a node where a pod's devices add node
    resources is left open."""
    mapped = [e for e in ordered if e.plan.fit is not None and any(d.active for d in e.plan.fit.na.values())]
    if not mapped or (len(ordered) < 2 and not (others is not None and others.groups)):
        return
    nodes = {n for e in mapped for n in e.plan.reach.names}
    for e in ordered:
        if e.unmodelled is None and not nodes.isdisjoint(e.plan.reach.names):
            e.unmodelled = (
                "the devices of a pod that may use its nodes add cpu, memory or other node resources "
                "(DRANodeAllocatableResources): in queue order that is not modelled"
            )


def simulate(base, entries: list[Entry], others=None, rest=()) -> Queue:
    """The queue's dry-run over entries (each with kind set); base: the Analysis the entries' forks share; others:
    the pending pods without DRA (others.py), counted where they may take a node's cpu, memory or pods; rest: (pod,
    PodPlan) of those with DRA that take no part (blocked alone), which may still preempt (preempted.py Freers).
    Where a preemption's nomination is a tie, each tied node is dry-run too (ties.py)."""
    return with_ties(entries, lambda es, forced: _simulate(base, es, others, rest, forced))


# long: the queue's steps in order (dry-run, retries, alternatives, judging, the second round), each a call
def _simulate(base, entries: list[Entry], others, rest, forced: dict) -> tuple[Queue, dict]:
    """simulate's one dry-run, with the preemptions' nominations in forced (ref -> node); returns the queue and the
    ties met without a nomination in forced (ref -> the tied nodes)."""
    ordered = order(entries)
    shapes = Shapes(base.universe)
    for e in ordered:
        shapes.add(e.plan)
    comp = _components(ordered, shapes)
    members: dict = {}
    for e in ordered:
        members.setdefault(comp[e.plan.shape], []).append(e)
    # Of one kind: the same pending claim specs and the same usable nodes (pods whose constraints are written
    # differently but leave the same nodes, e.g. one with a toleration no node's taint needs, are interchangeable)
    nodes_of: dict = {}

    def kind_of(e: Entry) -> tuple:
        r = e.plan.reach
        if id(r) not in nodes_of:
            nodes_of[id(r)] = frozenset(r.names)
        return (e.plan.shape[0], nodes_of[id(r)])

    alike_until = uniform_until(members, len(ordered), shapes, base, kind_of)
    uniform = {c: alike_until[c] == len(ordered) for c in members}
    gangs = _gang_members(ordered)
    gang_comps = {comp[e.plan.shape] for ms in gangs.values() for e in ms}
    sim = _Sim(base, forced)
    sim.entries = ordered
    sim.others, sim.rest = others, rest
    for e in ordered:
        c = comp[e.plan.shape]
        g = e.gang
        if g is not None and g.unmodelled is None:
            if g in gangs:  # at its first member's turn, the whole group
                ms = gangs.pop(g)
                comps = {comp[q.plan.shape] for q in ms}
                ahead = [q for q in ordered[: e.index] if q.gang is not g and comp[q.plan.shape] in comps]
                g.certain = g.rejected is not None or (
                    _gang_certainty(g, ms, ahead, shapes, kind_of) and not may_err(ms[0].plan, base.sem, base.cache)
                )
                sim.place_gang(g, ms)
            continue
        sim.place(e, want_choices=(c in gang_comps or not uniform[c]) and len(members[c]) > 1)
    again = retries(
        lambda: _Sim(base, forced), ordered, shapes
    )  # the scheduler's retries of the pods whose attempt errs
    for e in ordered:
        if e.ref in again:
            e.error = retry_reason(e, again[e.ref])
    places, shortfalls = {}, []
    alternatives = Alternatives(sim, shapes, claim_key)  # (the orders and node choices the API does not fix)
    outsiders = first_outsiders(members, comp, sim)
    for e in ordered:
        # a group's count is certain only where no pod outside the members' components (without DRA, or of another
        # component) may take the cpu, memory or pod slots of their nodes first: those are not dry-run here
        g = e.gang
        if g is not None and g.certain and g.rejected is None and not isolated(outsiders[comp[e.plan.shape]], e, sim):
            g.certain = False
    for c, es in members.items():
        # A pod whose attempt errs alone and gets nothing at its turn (it errs as it does alone, at every retry too,
        # or finds no device without the error: blocked either way) takes nothing and has no place: its own answer
        # stands
        es = [e for e in es if e.kind != EntryKind.ERROR or (e.error is None and e.node is not None) or e.ref in again]
        view = Component(es)
        view.outsiders = outsiders[c]
        # (a gang's count is its own message; a count that pods outside may change is none)
        if uniform[c] and not any(e.gang is not None for e in es) and es and view.isolated(es[-1], sim):
            fit = sum(1 for e in es if e.node is not None)
            if fit < len(es):
                shortfalls.append(shortfall(es, fit))
        for pos, e in enumerate(es):
            alike = alike_until[c] > sim.may_be_ahead(e)  # (it and every pod that may be ahead of it)
            p = alternatives.settle(e, judge(e, view, pos, alike, shapes, sim))
            # (a stuck pod takes devices, a competitor of the pods behind, and its own answer stands)
            if e.kind != EntryKind.STUCK:
                places[e.ref] = p
    preemptions = run_second_round(Round(base, shapes, ordered, again, places, shortfalls))
    # ... nor a position: the others are numbered without it, as without a pod blocked alone
    kept = [e for e in ordered if e.ref in places]
    for i, e in enumerate(kept):
        if places[e.ref].position != i + 1:
            places[e.ref] = replace(places[e.ref], position=i + 1)
    refs = tuple(e.ref for e in kept)
    queue = Queue(BASIS, refs, places, tuple(shortfalls), tuple(ordered), tuple(preemptions), partial(sim_rows, sim))
    return queue, sim.ties
