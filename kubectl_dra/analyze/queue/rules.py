"""Pods compete, step 3: the rules that decide what of the dry-run in queue order is certain for one pod, as an
ordered tuple (RULES) of named functions, each documented by the scheduler behaviour it models. judge() tries them in
order; the first that answers gives the pod's Place (judge.py: the Place, the proofs the rules use, the queue's
data). The second round, the rules that open a pod again once every pod has its Place (a retry ahead of it, a
preemption, a leader whose answer is open), is SECOND_ROUND, run by simulate.py once the first is done."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from kubectl_dra.analyze.queue.exposed import may_err
from kubectl_dra.analyze.queue.gang import gang_reason
from kubectl_dra.analyze.queue.judge import (
    Ahead,
    Component,
    Place,
    count_proof,
    did,
    most_devices,
    room_proof,
)
from kubectl_dra.analyze.queue.order import Entry, tie_words, why_ahead
from kubectl_dra.analyze.queue.outcomes import EntryKind, Outcome
from kubectl_dra.analyze.queue.preempted import behind_preemptors, preempt_words
from kubectl_dra.analyze.queue.retry import behind_retry_reason
from kubectl_dra.findings.model import UNDETERMINED


@dataclass
class Ctx:
    """One pod's judgement: the pod, its component's view of the queue, and what the rules share."""

    e: Entry
    view: Component
    pos: int  # its index in the component
    uniform: bool  # its component is identical pods on node-local devices, one tie class at a time (uniform_until)
    shapes: object
    sim: object
    n_ahead: int  # pods ahead of it (and tied with it) in its component
    shown: list  # the pods ahead listed in its Place
    mine: set  # the device and counter keys its shape could use
    listed: tuple  # Ahead per pod shown

    def place(self, outcome: Outcome, certain: bool, reason: str, by_group: bool = False) -> Place:
        e = self.e
        unsure = {}
        if outcome == Outcome.FITS and e.node is not None:
            why, by = self.why_node_unsure()
            if why is not None:  # the outcome stands; the node and the devices there are the estimated order's
                reason = f"{reason} (the node is the estimated order's: {why})"
                unsure = {"exact": False, "open_by": by if self.shapes.local[e.plan.shape] else ""}
        return Place(
            position=e.index + 1,
            gated=e.gated,
            outcome=outcome,
            certain=certain,
            node=e.node,
            devices=tuple(did(d) for d in e.takes),
            ahead=self.listed,
            reason=reason,
            claims=e.allocs,
            by_group=by_group,
            **unsure,
        )

    def why_node_unsure(self) -> tuple[str | None, str]:
        """Why the node the pod goes to is not certain (None: it is), and the pod whose pick of a node is open ("": a
        pod without DRA): its own (Entry.node_open), a competitor's ahead of it, or a pod without DRA that may be
        ahead may use its nodes (its scores and room are not in the dry-run)."""
        e = self.e
        if e.node_open:
            return e.node_open, e.ref
        q = self.view.node_open_ahead(e, self.pos)
        if q is not None:
            return f"the node of {q.ref}, ahead of it, is open, and with it what is left for it", q.ref
        if e.choices_scored:
            why = self.sim.score_movers(e)
            if why is not None:
                return why, ""
        q = self.sim.preemptor_ahead(e) if len(e.plan.reach.names) > 1 else None
        if q is not None:
            return f"{q.ref}, which may be ahead of it, preempts pods, and the room they leave may change its node", ""
        return None, ""

    def counted(self) -> bool:
        """Identical pods (uniform) on whose nodes no pod outside them may be ahead (isolated) and no room is held or
        freed by a nomination or a deletion (room_in_flux): each node holds as many of them as it holds alone (its
        cpu, memory, pod count and devices, each copy asking the same), whichever copies go where, so how many fit
        does not depend on the nodes the scheduler picks for them (identical_pods answers)."""
        return self.uniform and self.view.isolated(self.e, self.sim) and not self.sim.room_in_flux(self.e)

    def undetermined(self, reason: str) -> Place:
        return self.place(Outcome.UNDETERMINED, False, reason)

    def names(self) -> str:
        n = self.n_ahead
        return ", ".join(q.ref for q in self.shown[:3]) + (f" and {n - 3} more" if n > 3 else "")


def error_cleared(c: Ctx) -> Place | None:
    """Alone the scheduler's attempt errs (an Error status from a Filter ends the attempt: schedule_one.go
    findNodesThatPassFilters), but in the estimated order the pods ahead take the device the search errs on first
    (the allocator skips a device in use before it evaluates selectors on it): undetermined, its retries
    (the backoff queue) come at times the API does not show."""
    e = c.e
    if e.kind != EntryKind.ERROR or e.error is not None:
        return None
    got = f"gets {', '.join(did(d) for d in e.takes) or 'its claims'} on node {e.node}"
    return c.undetermined(
        f"alone, the scheduler's attempt errs ({e.plan.dry.error.message}); in the estimated order the pods "
        f"ahead ({c.names()}) take devices first, and then the search no longer errs and it {got}",
    )


def not_modelled(c: Ctx) -> Place | None:
    """The dry-run in queue order could not model its turn (a pending claim shared with a pod ahead in a way not
    modelled, an error at its turn, room another pod's preemption may free: simulate.py sets e.error): undetermined,
    with that reason."""
    return None if c.e.error is None else c.undetermined(c.e.error)


def crowded_out(c: Ctx) -> Place | None:
    """NodeResourcesFit (fit.go) admits it on a node alone but not once the pods ahead are placed there: which pods
    go there first decides it; but not for identical pods that nothing else may crowd, whose count is certain
    whichever pods go where (identical_pods)."""
    if c.e.crowded is None or c.counted():
        return None
    return c.undetermined(
        f"node {c.e.crowded} has room for it alone, but not for its cpu, memory or pod count once the pods ahead "
        "of it are placed there; which pods go there first is not certain",
    )


def preempts(c: Ctx) -> Place | None:
    """At its turn it preempts pods of lower priority (DefaultPreemption, default_preemption.go; preempted.py):
    certain only where no pod may be ahead of it and none may fill the nominated node first."""
    e = c.e
    if e.preempts is None:
        return None
    if not c.n_ahead and not c.sim.crowders(e):
        return c.place(Outcome.FITS, True, preempt_words(e))
    return c.undetermined(
        f"in the estimated order {preempt_words(e)}; but pods that may be ahead of it and may use that node decide "
        "where it goes",
    )


def gang_member(c: Ctx) -> Place | None:
    """A member of a pod group: the scheduler places the group all or nothing (gang.py): the group's answer."""
    e = c.e
    g = e.gang
    if g is None:
        return None
    if g.unmodelled is not None:
        return c.undetermined(f"the pod belongs to pod group {g.name}: {g.unmodelled}")
    reason = gang_reason(g, e)
    if not g.certain:
        return c.undetermined(
            f"in the estimated order, {reason}; but pods ahead of the group that can use the same devices or take "
            "the cpu, memory or pod slots of its nodes, or members of different kinds, decide how many fit",
        )
    if g.failed:
        return c.place(Outcome.GANG, True, reason, by_group=True)
    return c.place(Outcome.FITS if e.node is not None else Outcome.TAKEN, True, reason, by_group=True)


def open_behind_gates(c: Ctx) -> Place | None:
    """A gated pod whose own answer behind its gates is open (order.py entry_kind: EntryKind.OPEN; its gates decide
    its verdict, not whether it takes devices once they are removed): so is its place, whatever the pods ahead do.
    (An ungated pod's own verdict says so already: undetermined.)"""
    e = c.e
    if e.kind != EntryKind.OPEN or e.gang is not None or not e.gated:
        return None
    why = next((f.message for f in e.report.findings if f.code in UNDETERMINED), "its own answer is undetermined")
    return c.undetermined(f"alone, whether it gets devices is open: {why}")


def follows_shared_claim(c: Ctx) -> Place | None:
    """Its pending claims are all shared with a pod ahead: the first pod's allocation reserves them for both
    (a claim is allocated once), so it goes where that pod goes."""
    e = c.e
    if e.follows is None:
        return None
    return c.place(Outcome.FITS, True, f"shares its claims with {e.follows.ref}, ahead of it, and goes where it goes")


def node_may_fill(c: Ctx) -> Place | None:
    """It fits in the estimated order, but the pods that may be ahead and may use its node could fill the node's
    cpu, memory or pod slots first (NodeResourcesFit), whichever devices they take; certain only by the count proof."""
    e, sim = c.e, c.sim
    if e.node is None or sim.crowd_proof(e):
        return None
    if c.counted():
        return None  # identical pods, with no other pod that may be ahead on their nodes: identical_pods counts them
    local = c.shapes.local[e.plan.shape]
    proof = count_proof(e, sim, c.n_ahead) if local and not may_err(e.plan, sim.base.sem, sim.base.cache) else None
    if proof is not None:
        return c.place(Outcome.FITS, True, proof)
    names = sim.crowders(e)
    who = f" ({', '.join(names)})" if names else ""
    return c.undetermined(
        f"fits on node {e.node} in the estimated order, but the pods ahead that may also go there{who} could fill "
        "its cpu, memory or pod count first; which nodes they pick is not certain",
    )


def first_in_line(c: Ctx) -> Place | None:
    """No pod ahead of it (PrioritySort, queue_key) can use the devices it can: its dry-run alone holds."""
    if c.n_ahead:
        return None
    return c.place(Outcome.FITS, True, "no pod ahead of it in the queue can use the same devices")


def identical_pods(c: Ctx) -> Place | None:
    """Identical pods on node-local devices, with no pod of another component or without DRA that may move the cpu
    left on their nodes: how many of them fit does not depend on where each goes, so the count is certain; which
    ones of a tie class get devices depends on the scheduler's order (undetermined)."""
    e, view = c.e, c.view
    if not (c.uniform and view.isolated(e, c.sim)):  # (never where exposed: simulate.py)
        return None
    total, fit_in_class = view.tie_total[e.tie], view.tie_fit[e.tie]
    if 0 < fit_in_class < total:
        return c.undetermined(
            f"{fit_in_class} of the {total} identical pods tied with it in the queue get devices "
            f"({tie_words(view.tie_attempted.get(e.tie) or e)}): which ones depends on the scheduler's order",
        )
    return _fits_or_taken(c)


def one_way(c: Ctx) -> Place | None:
    """Every pod ahead has one node it can go to and a certain answer, none is tied with it, and nothing outside
    its component moves the cpu on its nodes: the estimated order is the scheduler's, so its dry-run holds."""
    e, view, pos = c.e, c.view, c.pos
    forced = view.loose[pos] == 0 and not view.dup_tie[pos] and view.tie_total[e.tie] == 1
    return _fits_or_taken(c) if forced and view.isolated(e, c.sim) else None


def proven(c: Ctx) -> Place | None:
    """It fits in every order: the count proof (more nodes where it fits than pods ahead) or the room proof (a node
    keeps the devices it needs after the most the pods ahead could take), for node-local devices and a search
    that cannot err (exposed.py)."""
    e, sim, view, pos = c.e, c.sim, c.view, c.pos
    if e.node is None or not c.shapes.local[e.plan.shape] or may_err(e.plan, sim.base.sem, sim.base.cache):
        return None
    proof = count_proof(e, sim, c.n_ahead)
    if proof is None:
        proof = room_proof(e, view.most[pos] + view.tie_most.get(e.tie, 0) - most_devices(e), sim)
    return None if proof is None else c.place(Outcome.FITS, True, proof)


def order_decides(c: Ctx) -> Place:
    """Otherwise the pods ahead decide it: undetermined, naming why (ties, pods ahead with a choice of nodes or an
    open answer, a search that may err once they take devices). alternatives.py may still settle it."""
    e, view, pos = c.e, c.view, c.pos
    why = []
    if view.dup_tie[pos] or view.tie_total[e.tie] > 1:
        why.append("pods tied in the queue are taken in an order the API does not show")
    if view.loose[pos]:
        why.append("a pod ahead may go to more than one node, or is itself undetermined")
    if may_err(e.plan, c.sim.base.sem, c.sim.base.cache):
        why.append(
            "once they take devices, its search may reach a device on which its claims err, and an error ends the "
            "scheduler's attempt"
        )
    who = (
        f"the pods ahead that can use the same devices ({c.names()})"
        if c.shown
        else "the pods tied with it in the queue"
    )
    return c.undetermined(
        f"{'fits' if e.node is not None else 'does not fit'} in the estimated order, but {who} decide it: "
        f"{'; '.join(why) or 'their placement is not certain'}",
    )


RULES = (
    error_cleared,
    not_modelled,
    crowded_out,
    preempts,
    gang_member,
    open_behind_gates,
    follows_shared_claim,
    node_may_fill,
    first_in_line,
    identical_pods,
    one_way,
    proven,
    order_decides,
)


def judge(e: Entry, view: Component, pos: int, uniform: bool, shapes, sim) -> Place:
    """e's Place: the first of RULES that answers."""
    mine = shapes.keys[e.plan.shape]
    after = view.tied_after(e, pos) if e.follows is None else 0
    shown = view.listed(e, pos, mine)
    listed = tuple(Ahead(q.ref, sim.did_names(d for d in q.takes if d in mine), why_ahead(q, e)) for q in shown)
    c = Ctx(e, view, pos, uniform, shapes, sim, view.before[pos] + after, shown, mine, listed)
    for rule in RULES:
        got = rule(c)
        if got is not None:
            return got
    raise AssertionError("order_decides always answers")


# --- the second round: once every pod has its Place, the rules that open some again ----------------------------


@dataclass
class Round:
    """What the second round reads and rewrites: the queue's pods in order, the retries of erring pods
    (retry.py), every pod's Place and the shortfalls (both rewritten in place)."""

    base: object
    shapes: object
    ordered: list
    again: dict  # ref -> the retry after which an erring pod gets devices (retry.py)
    places: dict
    shortfalls: list
    preemptions: list = field(default_factory=list)  # (Entry, the device IDs its victims hold): preempted.py


def behind_retries(r: Round) -> None:
    """The pods behind the placement after which an erring pod's retry gets devices, and that could use the same
    devices: certain to fit no longer (the retry may come first). A pod certain not to fit stays so: a retry only
    takes more."""
    again, ordered, places, shapes = r.again, r.ordered, r.places, r.shapes
    by_ref = {e.ref: e for e in ordered}
    for ref, retry in again.items():
        e = by_ref[ref]
        keys = shapes.keys[e.plan.shape]
        for q in ordered[retry.after.index + 1 :]:
            p = places.get(q.ref)
            if (
                q is e
                or p is None
                or not p.certain
                or p.outcome != Outcome.FITS
                or not keys & shapes.keys[q.plan.shape]
            ):
                continue
            places[q.ref] = replace(
                p, outcome=Outcome.UNDETERMINED, certain=False, reason=behind_retry_reason(e, retry)
            )


def loose_around_errors(r: Round) -> None:
    """A pod whose attempt errs at its turn and at every retry in the estimated order keeps its own answer (blocked
    by the error) only if every other pod that can use the devices it could use or errs on goes one way for
    certain: whether its attempt, or a retry, reaches the device it errs on depends on what those take (the queue
    agreement suite's seed 224: the pod ahead had a choice of nodes, took the other one, and a retry got devices).
    Else its place is undetermined, naming them."""
    again, ordered, places, shapes = r.again, r.ordered, r.places, r.shapes
    for e in ordered:
        if not e.erred or e.ref in again or e.ref in places:
            continue
        keys = shapes.keys[e.plan.shape]
        loose = [
            q
            for q in ordered
            if q is not e
            and keys & shapes.keys[q.plan.shape]
            # (a pod that errs too and has no place takes nothing for certain, as this one does in that order)
            and (
                q.choices > 1
                or q.kind == EntryKind.OPEN
                or q.ref in again
                or not getattr(places.get(q.ref), "certain", True)
            )
        ]
        if not loose:
            continue
        names = ", ".join(q.ref for q in loose[:3]) + (f" and {len(loose) - 3} more" if len(loose) > 3 else "")
        why, certain = e.erred
        places[e.ref] = Place(
            position=e.index + 1,
            gated=e.gated,
            outcome=Outcome.UNDETERMINED,
            certain=False,
            node=None,
            devices=(),
            ahead=(),
            reason=f"its attempt {'errs' if certain else 'may err'} at its turn in the estimated order ({why}); whether it "
            f"does, or a retry of it does, depends on the devices that pods that may go more than one way take "
            f"({names})",
        )


def behind_open_leaders(r: Round) -> None:
    """A pod whose pending claims all go with a pod ahead (it shares them) gets what that pod gets: where that pod's
    place is open, so is its own (the queue agreement suite's seed 378: the pod ahead erred, and so did it)."""
    ordered, places = r.ordered, r.places
    for e in ordered:
        p = places.get(e.ref)
        if e.follows is None or p is None or not p.certain:
            continue
        lead = places.get(e.follows.ref)
        if lead is None or not lead.certain or lead.outcome != Outcome.FITS:
            places[e.ref] = replace(
                p,
                outcome=Outcome.UNDETERMINED,
                certain=False,
                reason=f"shares its claims with {e.follows.ref}, ahead of it, and goes where it goes; whether that "
                "pod gets devices is not certain",
            )


def behind_preemptions(r: Round) -> None:
    """A pod that preempts at its turn: the room and devices its victims free go to whichever pod the scheduler
    tries once they are gone (the nomination does not reserve devices: preempted.py behind_preemptors)."""
    r.preemptions = behind_preemptors(r.base, r.ordered, r.places, r.shortfalls)


SECOND_ROUND = (behind_retries, loose_around_errors, behind_open_leaders, behind_preemptions)


def run_second_round(r: Round) -> list:
    """The second round, in order; returns the preemptions (for the pods blocked alone: report.py)."""
    for rule in SECOND_ROUND:
        rule(r)
    return r.preemptions


def _fits_or_taken(c: Ctx) -> Place:
    """The estimated order's answer, certain: it fits, or the devices it could use go to the pods ahead."""
    if c.e.node is not None:
        return c.place(Outcome.FITS, True, f"still fits after {_ahead(c.n_ahead)}")
    if c.e.crowded is not None:  # (identical_pods only: crowded_out answers the others)
        return c.place(
            Outcome.TAKEN,
            True,
            f"{_ahead(c.n_ahead)} {'fills' if c.n_ahead == 1 else 'fill'} the nodes it could use first, whichever "
            f"of them {'it goes' if c.n_ahead == 1 else 'they go'} to: the cpu, memory or pod count left (node "
            f"{c.e.crowded} has room for it alone) or the devices",
        )
    return c.place(Outcome.TAKEN, True, _taken_reason(c))


def _taken_reason(c: Ctx) -> str:
    """Name the device the pod would get alone and the pod ahead it goes to. Where a competitor ahead goes to a node
    the scheduler picks freely (Component.node_open_ahead), that the pods ahead take them all is certain but which
    one takes which device is the estimated order's, and the reason says so."""
    e, sim, took = c.e, c.sim, c.view.took[c.pos]  # took: pods before it in its component that take devices
    first = e.plan.dry.allocatable[0]
    alone = [(r["driver"], r["pool"], r["device"]) for p in first.claims for r in p.results]
    named = next(((d, q) for d in alone if (q := sim.taken_by.get(d)) is not None and q is not e), None)
    takers = [q for q in c.shown if any(d in c.mine for d in q.takes)]
    if named is None and takers:
        named = (next(d for d in takers[0].takes if d in c.mine), takers[0])
    all_taken = f"the devices it could use go to {_ahead(took)} that {'takes' if took == 1 else 'take'} devices"
    if named is None:
        return all_taken
    d, q = named
    opened = c.view.node_open_ahead(e, c.pos)
    if opened is not None:
        return (
            f"{all_taken}, whichever nodes they pick (in the estimated order {did(d)} goes to {q.ref}, "
            f"{why_ahead(q, e)}; the node of {opened.ref} is open)"
        )
    if d in alone:
        rest = f"; the others it could use go to the other pods ahead ({took} take devices)" if took > 1 else ""
    else:
        rest = f" and other pods ahead ({took} take devices)" if took > 1 else ""
    return f"{did(d)} would go to {q.ref} ({why_ahead(q, e)}){rest}"


def _ahead(n: int) -> str:
    return "the pod ahead of it" if n == 1 else f"the {n} pods ahead of it"
