"""Pods compete, step 3: what the queue says of each pod (its Place), the groups of identical pods of which not all
get devices (Shortfall), a component's view of the queue (Component), and the proofs that make a place certain in
every order (count_proof, room_proof). rules.py decides each Place from them."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field, replace

from kubectl_dra.analyze.queue.exposed import may_err
from kubectl_dra.analyze.queue.order import Entry
from kubectl_dra.analyze.queue.outcomes import EntryKind, Outcome, queue_key
from kubectl_dra.model.meta import ns_of, owner_of


@dataclass(frozen=True, slots=True)
class Ahead:
    pod: str
    devices: tuple  # device IDs it takes that this pod could use
    why: str  # why it is ahead

    def to_dict(self) -> dict:
        return {"pod": self.pod, "devices": list(self.devices), "why": self.why}


@dataclass(frozen=True, kw_only=True, slots=True)
class Place:
    """A pod's place in the queue and what the dry-run in that order gives it."""

    position: int  # 1-based, in the whole order
    gated: bool
    outcome: Outcome  # what the dry-run in queue order gives it (outcomes.py)
    certain: bool
    node: str | None
    devices: tuple
    ahead: tuple[Ahead, ...]
    reason: str
    # (claim ref, AllocationResult) per pending claim the dry-run in queue order allocates for it: the exact
    # results behind `devices` (the fidelity suite compares them with upstream); not in to_dict
    claims: tuple = ()
    by_group: bool = False  # the place is its pod group's certain answer (gang.py gang_reason); not in to_dict
    # the node and devices are the same in every order and node choice the cluster leaves open; where not
    # ("estimated" in to_dict), node, devices and claims are the estimated order's (rules.py: the scheduler's pick of
    # a node is open for it, or for a competitor ahead of it), or devices and claims are empty where no one order
    # stands for every alternative (alternatives.py)
    exact: bool = True
    # where not exact by the rules (the scheduler's pick of a node): the pod whose pick is open (itself, or a competitor
    # ahead of it) where the pod's devices are node-local, else "" (replicas.py: a shortfall's per-node count); not in
    # to_dict
    open_by: str | None = None

    def to_dict(self) -> dict:
        return {
            "position": self.position,
            "gated": self.gated,
            "outcome": str(self.outcome),
            "node": self.node,
            "devices": list(self.devices),
            "estimated": not self.exact,
            "ahead": [a.to_dict() for a in self.ahead],
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Shortfall:
    """A group of identical pending pods of which certainly not all get devices (which ones may be open)."""

    text: str
    pods: tuple[str, ...]  # namespace/name of every pod of the group

    def to_dict(self) -> dict:
        return {"message": self.text, "pods": list(self.pods)}


@dataclass(frozen=True)
class Queue:
    basis: str
    order: tuple[str, ...]  # namespace/name, in queue order
    places: dict = field(default_factory=dict)  # namespace/name -> Place
    shortfalls: tuple[Shortfall, ...] = ()
    entries: tuple = field(default=(), compare=False, repr=False)  # the Entries in order, as the dry-run left them
    # (Entry, the device IDs its victims hold) per pod that preempts at its turn (preempted.py)
    preemptions: tuple = field(default=(), compare=False, repr=False)
    # () -> preempted.py Freers rows of its pending pods, tested where each may preempt (freer_rows), or None
    freer_rows: object = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict:
        return {"basis": self.basis, "order": list(self.order), "shortfalls": [x.to_dict() for x in self.shortfalls]}

    def within(self, pods: set) -> "Queue":
        """The queue as a scan of some pods shows it: their order and the shortfalls of groups they are in (the pods
        of other namespaces stay named where they are ahead of one of them, in its place)."""
        return replace(
            self,
            order=tuple(p for p in self.order if p in pods),
            shortfalls=tuple(x for x in self.shortfalls if pods & set(x.pods)),
        )


class Component:
    """One component's pods in queue order, with what judge asks of "the pods ahead of e" as prefix counts, so
    that judging every pod costs the component's size, not its square. Followers (pods placed with the pod whose
    claim they share) are not competitors: their leader is."""

    def __init__(self, es: list[Entry]):
        self.es = es
        n = len(es)
        self.before = [0] * (n + 1)  # competitors in es[:i]
        self.took = [0] * (n + 1)  # pods in es[:i] that take devices in the dry-run
        self.loose = [0] * (n + 1)  # of those, how many could go more than one way (undetermined, or a choice)
        self.dup_tie = [False] * (n + 1)  # two competitors in es[:i] share a tie class
        # the first competitor in es[:i] whose node is open (Entry.node_open), and per tie class: where one ahead of a
        # pod may go to another node, so may the pod (node_open_ahead)
        self.open_node: list = [None] * (n + 1)
        self.tie_open_node: dict = {}
        self.tie_total: dict = {}
        self.tie_fit: dict = {}
        self.tie_attempted: dict = {}
        seen: set = set()
        dup = False
        for i, q in enumerate(es):
            # not a competitor: a follower (its leader is), a member of a gang that certainly gets nothing
            comp = q.follows is None and not (q.gang is not None and q.gang.failed and q.gang.certain)
            self.before[i + 1] = self.before[i] + comp
            self.took[i + 1] = self.took[i] + bool(q.takes)
            self.loose[i + 1] = self.loose[i] + (comp and (q.kind == EntryKind.OPEN or q.choices > 1))
            self.open_node[i + 1] = self.open_node[i] or (q if comp and q.node_open else None)
            if comp and q.node_open:
                self.tie_open_node.setdefault(q.tie, q)
            if comp:
                dup = dup or q.tie in seen
                seen.add(q.tie)
                self.tie_total[q.tie] = self.tie_total.get(q.tie, 0) + 1
                self.tie_fit[q.tie] = self.tie_fit.get(q.tie, 0) + (q.node is not None)
                self.tie_attempted[q.tie] = self.tie_attempted.get(q.tie) or (q if q.attempted else None)
            self.dup_tie[i + 1] = dup
        self.tie_seen: dict = {}
        self._firsts: tuple | None = None  # (limit, the first competitors): _first_competitors
        self._takers = [i for i, q in enumerate(es) if q.follows is None and q.takes]  # listed
        # (first index, first rank) of the pods outside the component that may take cpu on its nodes (alternatives.py
        # first_outsiders; simulate.py sets it)
        self.outsiders: tuple = (None, None)
        # the most devices the competitors in es[:i] could take, and per tie class (room_proof)
        self.most = [0] * (n + 1)
        self.tie_most: dict = {}
        for i, q in enumerate(es):
            k = most_devices(q)
            self.most[i + 1] = self.most[i] + k
            self.tie_most[q.tie] = self.tie_most.get(q.tie, 0) + k

    def node_open_ahead(self, e: Entry, i: int) -> Entry | None:
        """A competitor ahead of es[i] (or tied with it) whose node is open, or None."""
        q = self.open_node[i] or self.tie_open_node.get(e.tie)
        return q if q is not e else None

    def isolated(self, e: Entry, sim) -> bool:
        """No pod outside the component that may take cpu, memory or a pod slot on a node its members may use can be
        ahead of e: the component's own pods decide what it gets."""
        return isolated(self.outsiders, e, sim)

    def tied_after(self, e: Entry, pos: int) -> int:
        """Competitors of e's tie class after it (they may be ahead of it)."""
        seen = self.tie_seen.get(e.tie, 0) + 1
        self.tie_seen[e.tie] = seen  # judge visits the pods in order: this is e's rank within its class
        return self.tie_total.get(e.tie, 0) - seen

    def listed(self, e: Entry, pos: int, mine: set, limit: int = 5, scan: int = 400) -> list[Entry]:
        """The nearest competitors before e that take devices it could use (a few, looked for among the last scan
        ones), else the first competitors before it."""
        out = []
        takers = self._takers  # only a pod that takes devices can take one e could use
        for j in range(bisect_left(takers, pos) - 1, bisect_left(takers, max(0, pos - scan)) - 1, -1):
            q = self.es[takers[j]]
            if any(d in mine for d in q.takes):
                out.append(q)
                if len(out) >= limit:
                    break
        if not out:
            out = [q for i, q in self._first_competitors(limit) if i < pos]
        return out

    def _first_competitors(self, limit: int) -> list:
        """(index, entry) of the component's first `limit` pods that are not followers: computed once, since a
        list of every pod before e, for each e, cost the square of the component's size (40,000 pods of one
        Deployment: 800 million steps)."""
        got = self._firsts
        if got is None or got[0] != limit:
            got = self._firsts = (limit, [(i, q) for i, q in enumerate(self.es) if q.follows is None][:limit])
        return got[1]


def isolated(outsiders: tuple, e: Entry, sim) -> bool:
    """outsiders: (the first index in the queue of a pod of another component, the first queue_key of a pending pod
    without DRA) that may take cpu, memory or a pod slot on the component's nodes (alternatives.py
    first_outsiders): whether none of them may be ahead of e."""
    first, first_rank = outsiders
    if first is not None and first <= sim.may_be_ahead(e):
        return False
    return first_rank is None or first_rank > queue_key(e.gated, e.priority, e.created)


def uniform_until(members: dict, end: int, shapes, base, kind_of) -> dict:
    """Component -> the queue index of its first pod that is not of its first pod's kind (kind_of: the same claim
    specs and nodes; and the same NodeResourcesFit request: the count per node holds only where each copy asks the
    same), or whose own answer is open, or that errs (end: none); -1 for a component whose devices are not
    node-local or whose search may meet an error (exposed.py). A pod's count argument needs the pods that may be
    ahead of it to be of one kind, not the pods behind it: its answer does not depend on which pods of a lower
    priority a command reads (one answer per pod, whatever the command)."""
    out = {}
    for c, es in members.items():
        if not shapes.local[es[0].plan.shape] or may_err(es[0].plan, base.sem, base.cache):
            out[c] = -1
            continue
        first = (kind_of(es[0]), es[0].plan.fit.key() if es[0].plan.fit is not None else None)
        out[c] = next(
            (
                q.index
                for q in es
                if (kind_of(q), q.plan.fit.key() if q.plan.fit is not None else None) != first
                or q.kind in (EntryKind.OPEN, EntryKind.ERROR, EntryKind.STUCK)
            ),
            end,
        )
    return out


UNBOUNDED = 1 << 40


def most_devices(q: Entry) -> int:
    """The most devices a competitor's pending claims could take, whatever the order: per request its count
    (firstAvailable: the largest of its subrequests'); unbounded for allocationMode All or an unknown plan. A
    follower takes nothing its leader does not; a gang that certainly gets nothing takes nothing."""
    if q.follows is not None or (q.gang is not None and q.gang.failed and q.gang.certain):
        return 0
    if q.plan is None:
        return UNBOUNDED
    total = 0
    for a in q.plan.analyses:
        if a.allocated:
            continue
        for alts in a.requests:
            if any(r.mode != "ExactCount" for r in alts):
                return UNBOUNDED
            total += max((r.count for r in alts), default=0)
    return total


def room_proof(e: Entry, rivals: int, sim) -> str | None:
    """The room proof: the pod's one pending request (no constraints) needs N of its candidate devices on one node;
    the competitors that may be ahead of it (before it in the queue, and those tied with it) could take at most
    `rivals` devices in all, whichever order and nodes they get. Where a node keeps N candidates after that many are
    gone, and NodeResourcesFit admits the pod there with every pod that may be ahead of it and may use the node
    placed there at once (simulate.py crowd_proof), the pod fits in every order (the devices being node-local and
    their counters its own: shapes.py)."""
    pending = [a for a in e.plan.analyses if not a.allocated]
    if len(pending) != 1 or len(pending[0].requests) != 1 or rivals >= UNBOUNDED:
        return None
    a = pending[0]
    if ((a.claim.get("spec") or {}).get("devices") or {}).get("constraints"):
        return None
    picked = (
        {r["request"] for p in e.plan.dry.allocatable[0].claims for r in p.results} if e.plan.dry.allocatable else set()
    )
    r = next((x for x in a.requests[0] if x.name in picked), None)
    if r is None or r.mode != "ExactCount":
        return None
    per_node: dict[str, int] = {}
    for v in a.matrices.get(r.name) or ():
        if v.outcome in ("candidate", "selected") and not v.entry.device.get("consumesCounters"):
            for n in v.nodes:
                per_node[n] = per_node.get(n, 0) + 1
    roomy = sorted((kv for kv in per_node.items() if kv[1] - rivals >= r.count), key=lambda kv: -kv[1])
    best = next((kv for kv in roomy[:8] if sim.crowd_proof(e, kv[0])), None)
    if best is None:
        return None
    return (
        f"node {best[0]} has {best[1]} devices it can use; the pods that may be ahead of it take at most {rivals} in "
        f"all, whatever their order, which leaves the {r.count} it needs"
    )


def count_proof(e: Entry, sim, n_ahead: int) -> str | None:
    """The count proof: a pod ahead lands on one node and, the pod's devices being node-local, can take its devices
    on that node only; where NodeResourcesFit is modelled any pod ahead, of any component, may fill that node's cpu
    or memory. More nodes where it fits alone than such pods: one is left for it, wherever they go."""
    n_any = sim.may_be_ahead(e) + sim.others_ahead(e) if e.plan.fit is not None else n_ahead
    if sim.fits_on(e, n_any + 1) > n_any:
        return f"fits on more nodes than there are pods ahead of it ({n_any})"
    return None


def did(d) -> str:
    """A device ID as driver/pool/device."""
    return "/".join(d)


def shortfall(es: list[Entry], fit: int) -> Shortfall:
    # an owner is its namespace's: Deployment/infer in ml-team and in team-b are two
    owners: dict = {}
    for e in es:
        o = (owner_of(e.pod), ns_of(e.pod))
        owners[o] = owners.get(o, 0) + 1
    if len(owners) == 1 and None not in next(iter(owners)):
        who = "of {} in {}".format(*next(iter(owners)))
    elif len(owners) <= 3 and all(o is not None for o, _ in owners):
        who = "(" + ", ".join(f"{n} of {o} in {ns}" for (o, ns), n in owners.items()) + ")"
    else:
        who = "(" + ", ".join(e.ref for e in es[:3]) + (f" and {len(es) - 3} more" if len(es) > 3 else "") + ")"
    left = len(es) - fit
    text = f"{fit} of the {len(es)} identical pending pods {who} get devices; {left} {'stays' if left == 1 else 'stay'} Pending"
    return Shortfall(text, tuple(e.ref for e in es))
