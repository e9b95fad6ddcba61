"""Pods compete, step 3b: the orders and node choices that the API does not fix, tried one by one.

The rule: kube-scheduler takes the pods of one tie class (one priority, created in the same second, or
already tried) in an order the API does not show, and it binds each pod to one of the nodes that pass its filters,
picked by its scores: where they are modelled for a pod ahead (pod/score.py), only the nodes of the highest score,
computed with the pods placed before it in that alternative; else every node. Where rules.py leaves a pod open, every such alternative for the pods that
may be ahead of it and interact with it is dry-run (the allocator on each node, NodeResourcesFit with the pods placed
there, as simulate.py's dry-run does), and the pod's answer is certain when every alternative gives it the same
outcome: it gets devices in each (the node and devices may differ: then the certain claim names none), or in none.

Who takes part: the pods that may be ahead of it (before it in the queue, or tied with it), closed over "can use a
device or counter that a member could use" and, where NodeResourcesFit is modelled for both, "may use a node a member
may use". The others take nothing a member could use, on no node a member could use: their placement cannot change
the pod's. Each member must be modelled one way only: its own answer certain alone (not open, not an error, not a
gang or a follower of a shared claim, not exposed to an error once others take devices: exposed.py), no pending
claim shared with another member, and no pending pod without DRA that may be ahead on a member's node (others.py
counts those as a bound only).

Soundness rests on: the allocator picks the devices on a node deterministically from the state (the scheduler's
search); a pod with no node left takes nothing and its retries find no more room (pods ahead only take); identical
members (the same pending claim specs, nodes and requests) are interchangeable, so one order of them stands for all.
An alternative where a member, or the pod, fails a node on cpu, memory or pod count alone while its devices fit
there ends the attempt open where DefaultPreemption may free that room: for it, or for whichever pod comes next once
another pending pod's victims are gone (preempted.py Freers). An unknown NodeResourcesFit answer (the node's
bound pods are not in the input), an error met by a search, or an exhausted budget leaves the pod open as well.

Cost: at most MAX_POOL pods scanned and MAX_PODS members per pod, MAX_LEAVES alternatives per pod, and MAX_WORK
node searches per queue in all: a bounded addition to the queue's own dry-run, whatever the number of pods."""

from __future__ import annotations

from dataclasses import replace

from kubectl_dra.analyze.allocator import AllocationError, NodeFailure, obj_ref
from kubectl_dra.analyze.pod.score import add_use
from kubectl_dra.analyze.queue.exposed import may_err
from kubectl_dra.analyze.queue.order import attempted
from kubectl_dra.analyze.queue.outcomes import EntryKind, Outcome, queue_key
from kubectl_dra.analyze.queue.preempted import sim_freers
from kubectl_dra.model.meta import priority_of

MAX_POOL = 48  # pods that may be ahead of the pod (with DRA or without), scanned for the ones that take part
MAX_PODS = 16  # pods that take part besides the pod
MAX_LEAVES = 128  # alternative dry-runs per pod
MAX_WORK = 4096  # node checks per queue, every pod's alternatives together


class _Open(Exception):
    """The alternatives cannot be judged (budget, an unknown, an error, a possible preemption): the pod stays open.
    why: what to add to its reason (the preemption that may free room for it), or ""."""

    def __init__(self, what: str, why: str = ""):
        super().__init__(what)
        self.why = why


class _Other:
    """A pending pod without DRA that takes part: its NodeResourcesFit, the nodes it may use, its place in the
    queue (outcomes.py queue_key)."""

    def __init__(self, ref: str, pod: dict, fit, names: frozenset, key: tuple):
        self.ref, self.pod, self.fit, self.names, self.key = ref, pod, fit, names, key
        self.attempted = attempted(pod)


class Alternatives:
    """The alternatives of the pods that rules.py leaves open, over one queue's dry-run (sim: simulate.py _Sim)."""

    def __init__(self, sim, shapes, claim_key):
        self.sim = sim
        self.claim_key = claim_key  # a pending claim's identity across pods (simulate.py claim_key)
        self.shapes = shapes
        self.base = sim.base
        self.work = MAX_WORK
        self._worth: dict = {}
        self._nodes: dict | None = None
        self._loose: set | None = None
        self._e = None  # the pod whose alternatives are enumerated
        self._pruned = False  # the scores left a pod ahead fewer nodes than it passes, in the pod's alternatives

    def settle(self, e, p):
        """The pod's Place: p where it is certain, or the alternatives do not settle it; else the certain one."""
        if p.certain or p.outcome != Outcome.UNDETERMINED or self.work <= 0 or not self._modelled(e):
            return p
        members = self._members(e)
        if members is None:
            return p
        self._pruned = False
        try:
            outcomes, seen, leaves = self._enumerate(e, members)
        except _Open as x:
            return replace(p, reason=f"{p.reason}; and where they leave it no room, {x.why}") if x.why else p
        n = len(members)
        names = ", ".join(q.ref for q in members[:3]) + (f" and {n - 3} more" if n > 3 else "")
        tried = f"{leaves} {'alternative' if leaves == 1 else 'alternatives'} tried"
        if self._pruned:
            tried += ", the pods ahead on the nodes the scheduler's scores pick"
        who = (
            f"the {n} pods that may be ahead of it and compete with it ({names})"
            if n != 1
            else f"{names}, ahead of it,"
        )
        if outcomes == {True}:
            if len(seen) == 1 and seen == {(e.node, _devices(e.allocs))}:
                return replace(
                    p,
                    outcome=Outcome.FITS,
                    certain=True,
                    reason=f"gets the same devices in every order and choice of nodes of {who} that the cluster has "
                    f"not fixed ({tried})",
                )
            # (the estimated order's node, where it has one: the dry-run in queue order does not place the pods
            # without DRA, which the alternatives do)
            where = f" (node {e.node} in the estimated order)" if e.node is not None else ""
            return replace(
                p,
                outcome=Outcome.FITS,
                certain=True,
                node=e.node or min(seen)[0],
                devices=(),
                claims=(),
                exact=False,
                reason=f"fits in every order and choice of nodes of {who} that the cluster has not fixed ({tried}); "
                f"which node and devices it gets depends on them{where}",
            )
        return replace(
            p,
            outcome=Outcome.TAKEN,
            certain=True,
            node=None,
            devices=(),
            claims=(),
            exact=e.node is None,
            reason=f"in every order and choice of nodes of {who} that the cluster has not fixed ({tried}), the "
            "devices it could use, or the room on their nodes, are taken first",
        )

    def _modelled(self, q) -> bool:
        """Whether the pod takes part one way only: its own answer certain alone, nothing that makes it open."""
        return (
            q.kind in (EntryKind.OK, EntryKind.GATED)
            and q.plan is not None
            and q.error is None
            and q.erred is None
            and q.gang is None
            and q.follows is None
            and not may_err(q.plan, self.base.sem, self.base.cache)
        )

    def _members(self, e) -> list | None:
        """The pods that may be ahead of e and may change what it gets, or None where they cannot be judged."""
        sim, keys_of = self.sim, self.shapes.keys
        upto = sim.may_be_ahead(e)
        if upto + 1 > MAX_POOL + 1:
            return None
        others = self._others_ahead(e, MAX_POOL - upto)
        if others is None:
            return None
        rest = [*(q for q in sim.entries[: upto + 1] if q is not e), *others]
        keys = set(keys_of[e.plan.shape])
        nodes = set(e.plan.reach.names) if e.plan.fit is not None else set()
        members: list = []
        grew = True
        while grew:
            grew = False
            for q in list(rest):
                if isinstance(q, _Other):
                    if nodes.isdisjoint(q.names):
                        continue
                    nodes |= q.names
                else:
                    qk = keys_of[q.plan.shape]
                    if keys.isdisjoint(qk) and (q.plan.fit is None or nodes.isdisjoint(q.plan.reach.names)):
                        continue
                    if not self._modelled(q):
                        return None
                    keys |= qk
                    if q.plan.fit is not None:
                        nodes |= q.plan.reach.names
                members.append(q)
                rest.remove(q)
                grew = True
            if len(members) > MAX_PODS:
                return None
        if any(prio >= e.priority and ref != e.ref and node in nodes for prio, node, ref in self.sim.nominated()):
            return None  # its room on that node is held for it before its turn (RunFilterPluginsWithNominatedPods)
        claim_key = self.claim_key
        claims = {claim_key(c) for c in e.plan.pending}
        for q in members:
            mine = set() if isinstance(q, _Other) else {claim_key(c) for c in q.plan.pending}
            if claims & mine:
                return None  # a pending claim two of them share: their joint placement is not modelled
            claims |= mine
        return members

    def _others_ahead(self, e, room: int) -> list | None:
        """The pending pods without DRA that may be ahead of e (None: more than room)."""
        others = self.sim.others
        if others is None:
            return []
        key, out = queue_key(e.gated, e.priority, e.created), []
        loose = (e.gated, e.priority) in self._loose_groups()
        for g in others.groups:
            for k, ref, (pod, fit) in zip(g.keys, g.refs, g.pods):
                same = k[:2] == key[:2]
                if k <= key or (same and (loose or attempted(pod))):
                    out.append(_Other(ref, pod, fit, g.names, k))
                    if len(out) > room:
                        return None
        return out

    def _loose_groups(self) -> set:
        """(gated, priority) of the queue's groups of which a pod was already tried (order.py: one tie class)."""
        if self._loose is None:
            self._loose = {(q.gated, q.priority) for q in self.sim.entries if q.attempted}
            for g in self.sim.others.groups if self.sim.others is not None else ():
                for k, (pod, _fit) in zip(g.keys, g.pods):
                    if attempted(pod):
                        self._loose.add((k[0], -k[1]))
        return self._loose

    def _class_key(self, q) -> tuple:
        """Pods of one key are taken in an order the API does not show; the keys' order is the queue's."""
        if isinstance(q, _Other):
            gated, priority, created = q.key[0], -q.key[1], q.key[2]
            tried = q.attempted
        else:
            gated, priority, created, tried = q.gated, q.priority, q.created, q.attempted
        if tried or (gated, priority) in self._loose_groups():
            return (gated, -priority, "")
        return (gated, -priority, created[:19])

    def _enumerate(self, e, members: list) -> tuple[set, set, int]:
        """({True: it gets devices, False: it does not} over the alternatives, the (node, devices) it may get, how
        many alternatives were tried). Raises _Open."""
        classes: list = []
        for q in sorted([*members, e], key=self._class_key):
            if classes and self._class_key(classes[-1][0]) == self._class_key(q):
                classes[-1].append(q)
            else:
                classes.append([q])
        outcomes: set = set()
        seen: set = set()
        leaves = [0]
        done: set = set()  # (what is placed where, who is left): the same subtree, whatever the path to it

        def visit(state, use: dict, todo: list, placed: frozenset) -> None:
            key = (placed, tuple(tuple(sorted(map(self._kind, c), key=repr)) for c in todo))
            if key in done:
                return
            done.add(key)
            cls, later = todo[0], todo[1:]
            kinds = set()
            for q in cls:
                k = self._kind(q)
                if k in kinds:
                    continue  # an identical pod tried at this step already stands for it
                kinds.add(k)
                left = [x for x in cls if x is not q]
                nxt = [left, *later] if left else later
                if q is e:
                    leaves[0] += 1
                    if leaves[0] > MAX_LEAVES:
                        raise _Open("leaves")
                    opts = self._feasible(e, state, use)
                    outcomes.add(bool(opts))
                    seen.update((name, devs) for name, _res, devs in opts)
                    if len(outcomes) > 1:
                        raise _Open("differ")  # (no need to look further)
                    continue
                opts = self._scored(q, self._feasible(q, state, use), use)
                if not opts:
                    visit(state, use, nxt, placed)  # it takes nothing
                for name, res, devs in opts:
                    visit(*self._placed(q, name, res, state, use), nxt, placed | {(k, name, devs)})

        self._e = e
        visit(self.base.allocated_now()[0], {}, classes, frozenset())
        return outcomes, seen, leaves[0]

    def _kind(self, q) -> tuple:
        """Pods of one kind are interchangeable: the same pending claim specs and nodes, the same requests (the pod
        judged is of a kind of its own)."""
        if q is self._e:
            return ("e",)
        if isinstance(q, _Other):
            return ("other", q.fit.key(), q.names)
        return (q.plan.shape, q.plan.fit.key() if q.plan.fit is not None else None, id(q.plan.skip))

    def _node(self, name: str) -> dict:
        if self._nodes is None:
            self._nodes = {n["metadata"]["name"]: n for n in self.base.idx.nodes}
        return self._nodes[name]

    def _spend(self) -> None:
        self.work -= 1
        if self.work < 0:
            raise _Open("work")

    def _feasible(self, q, state, use: dict) -> list:
        """The nodes that pass q's filters on this state: [(node name, allocation results, device IDs)]. Raises
        _Open where the answer is not certain, or where nothing is left but nodes that only NodeResourcesFit
        rejects (DefaultPreemption may free the room there)."""
        if isinstance(q, _Other):
            out, resolvable = [], False
            for name in sorted(q.names):
                self._spend()
                fits = q.fit.check(self._node(name), use.get(name)).fits
                if fits is None:
                    raise _Open("fit unknown")
                if fits:
                    out.append((name, None, ()))
                else:
                    resolvable = resolvable or self._freed(q, q.fit, name)
            if not out and resolvable:
                raise _Open("resolvable")
            return out
        plan = q.plan
        worth = self._worth.get(plan.shape)
        if worth is None:
            worth = self._worth[plan.shape] = self.base.worth_nodes(plan.pending, plan.analyses, plan.reach, plan.skip)
        alloc = self.base.allocator(state)
        out, resolvable = [], False
        for n in worth:
            name = n["metadata"]["name"]
            fits = plan.fit.check(n, use.get(name)).fits if plan.fit is not None else True
            if fits is None:
                raise _Open("fit unknown")
            here = plan.claims_on(name)
            self._spend()
            try:
                res = alloc.allocate(n, here) if here else []
            except NodeFailure:
                res = None
            except AllocationError:
                raise _Open("error") from None
            if res is None:
                continue
            if not fits:
                resolvable = resolvable or self._freed(q, plan.fit, name)
                continue
            out.append((name, res, _devices(zip(here, res))))
        if not out and resolvable:
            raise _Open("resolvable", resolvable if q is self._e and isinstance(resolvable, str) else "")
        return out

    def _scored(self, q, opts: list, use: dict) -> list:
        """Of the nodes q passes (opts), those the scheduler's scores may pick (pod/score.py); else every one."""
        if len(opts) < 2:
            return opts
        if isinstance(q, _Other):
            best = self.sim.scores.best(q.pod, q.fit, q.names, (), [o[0] for o in opts], use)
        else:
            plan = q.plan
            best = self.sim.scores.best(q.pod, plan.fit, plan.reach.names, plan.pending, [o[0] for o in opts], use)
        if len(best) == len(opts):
            return opts
        self._pruned = True
        keep = set(best)
        return [o for o in opts if o[0] in keep]

    def _freed(self, q, fit, name: str) -> bool | str:
        """Whether room on node name may be freed for q by a preemption: its own (_victims: True), or another
        pending pod's (preempted.py Freers: the reason); then where q goes is not decided by the pods placed before
        it. False where neither."""
        return _victims(q.pod, fit, name) or sim_freers(self.sim, fit.bound.by_node).on(name, q.ref) or False

    def _placed(self, q, name: str, res, state, use: dict) -> tuple:
        """The state and node use once q is placed on node name with the allocation results res."""
        fit = q.fit if isinstance(q, _Other) else q.plan.fit
        if res:
            state = state.copy()
            for c, r in zip(q.plan.claims_on(name), res):
                state.add(obj_ref(c), r.results, self.base.sem)
        if fit is not None:
            req, count = use.get(name, ({}, 0))
            req = dict(req)
            for k, v in fit.request.items():
                req[k] = req.get(k, 0) + v
            add_use(req, q.pod)  # (what it adds to the node's scores: pod/score.py)
            use = {**use, name: (req, count + 1)}
        return state, use


def first_outsiders(members: dict, comp: dict, sim) -> dict:
    """Component id -> (the first index in the queue of a pod of another component that may take cpu, memory or a
    pod slot on a node where a member's NodeResourcesFit is modelled, the first rank of a pending pod without DRA
    that may), or (None, None): before those, the component's pods are placed by the component alone. rules.py's
    counts (identical pods, one choice each) hold only for a pod that no such outsider may be ahead of: an
    outsider's node choice moves the cpu left for the members, and with it which of them fit where. Outsiders do
    not count where no node of the component can run short: every member fits each node with every pending pod
    that may use it placed there at once. Cost: distinct node sets x components, and the nodes of a component
    with outsiders (at most MAX_SHORT_NODES of them) x its distinct requests."""
    nodes: dict = {}
    for c, es in members.items():
        seen, names = set(), set()
        for q in es:
            if q.plan.fit is not None and id(q.plan.reach) not in seen:
                seen.add(id(q.plan.reach))
                names |= q.plan.reach.names
        nodes[c] = names
    reaches: dict = {}  # id(reach) -> (names, {component: first index}, [requests, pods] of all its pods)
    for q in sim.entries:
        if q.plan.fit is None:
            continue
        r = reaches.setdefault(id(q.plan.reach), (q.plan.reach.names, {}, [{}, 0]))
        r[1].setdefault(comp[q.plan.shape], q.index)
        _add(r[2], q.plan.fit.request)
    groups = sim.others.groups if sim.others is not None else ()
    out = {}
    for c, names in nodes.items():
        first, rank_ = None, None
        if names:
            for reach_names, by_comp, _use in reaches.values():
                outside = [i for c2, i in by_comp.items() if c2 != c]
                if outside and not names.isdisjoint(reach_names):
                    first = min(outside) if first is None else min(first, *outside)
            for g in groups:
                if g.keys and not names.isdisjoint(g.names):
                    rank_ = g.keys[0] if rank_ is None else min(rank_, g.keys[0])
        if (first, rank_) != (None, None) and _never_short(members[c], names, reaches, groups, sim):
            first, rank_ = None, None
        out[c] = (first, rank_)
    return out


MAX_SHORT_NODES = 256


def _never_short(es: list, names: set, reaches: dict, groups, sim) -> bool:
    """Whether NodeResourcesFit admits every member on each of the component's nodes with every pending pod that
    may use the node (with DRA or without) placed there at once: then no order and no node choice of the others
    changes where a member fits."""
    if len(names) > MAX_SHORT_NODES:
        return False
    fits = {q.plan.fit.key(): q.plan.fit for q in es if q.plan.fit is not None}
    nodes = {n["metadata"]["name"]: n for q in es if q.plan.fit is not None for n in q.plan.reach.usable}
    for name in names:
        total = [{}, 0]
        for reach_names, _by_comp, use in reaches.values():
            if name in reach_names:
                _add(total, *use)
        for g in groups:
            if name in g.names:
                _add(total, *g.sums[-1])
        for fit in fits.values():
            rest = ({k: v - fit.request.get(k, 0) for k, v in total[0].items()}, total[1] - 1)
            if fit.check(nodes[name], rest).fits is not True:
                return False
    return True


def _add(total: list, request: dict, count: int = 1) -> None:
    """Add a pod's (or pods') requests to total, [requests, pods]."""
    for k, v in request.items():
        total[0][k] = total[0].get(k, 0) + v
    total[1] += count


def _victims(pod: dict, fit, node: str) -> bool:
    """Whether DefaultPreemption may find victims for the pod on the node: a pod bound there of a lower priority
    (the pods the queue places before it are of its priority or higher), unless the pod never preempts."""
    if (pod.get("spec") or {}).get("preemptionPolicy") == "Never":
        return False
    mine = priority_of(pod)
    return any(priority_of(b) < mine for b in fit.bound.by_node.get(node, ()))


def _devices(allocs) -> tuple:
    """The device IDs of (claim, AllocationResult) pairs, sorted."""
    return tuple(
        sorted((x.get("driver", ""), x.get("pool", ""), x.get("device", "")) for _c, r in allocs for x in r.results)
    )
