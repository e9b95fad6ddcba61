"""`kubectl dra devices --class C --request FILE`: how many more copies of one device request fit, per node and in
total, on top of what is allocated and of what the pods waiting in the scheduler's queue would take.

The copies are allocated one after another by the allocator port (analyze/allocator/), the same search and the same
per-device checks every other answer uses; nothing here decides whether a device fits. What this module adds is the
order of the runs and its cost bound:

- The starting state is the allocated claims plus the in-flight allocations of the pending pods that use DRA, placed
  by the queue's dry-run (analyze/queue/) as `match claim --count` and `explain --replicas` place them first. If a
  pending pod that could use the same devices or counters has an undetermined place, so is the answer (exit 2).
- Per node: copies of the claim (a pod with no node constraints but the tolerations admission adds) are allocated on
  that node until the allocator finds nothing: the node's figure is what that node alone could take, and its first
  limit is the allocator's own reason for the copy that does not fit (for partitionable devices, the counter that
  ran out: the same counter rule, one device at a time, so partition alternatives are never summed).
- Total: one sequence of allocations over the nodes in the order the scheduler lists them, each node filled before
  the next, on one state, so a device that several nodes reach (a network-attached pool) is taken once. When every
  device the request can use is node-local the per-node runs are that sequence already and run once.
- Only the nodes from which every request has a candidate device are searched (the device matrices the per-pod
  analysis builds, Analysis.worth_nodes), and each search visits only the slices that may target its node
  (SliceIndex): the cost is one search per copy plus one per node searched, each over the devices that node reaches.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from kubectl_dra.analyze.allocator import AllocationError, NodeFailure, obj_ref
from kubectl_dra.analyze.devices.universe import CounterView
from kubectl_dra.analyze.pod.dryrun import Analysis
from kubectl_dra.analyze.queue.outcomes import EntryKind, Outcome
from kubectl_dra.analyze.reports.inventory import UNUSED_ABSENT, unseen_words
from kubectl_dra.analyze.reports.replicas import DEFAULT_TOLERATIONS, as_claim
from kubectl_dra.errors import DraError
from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import SCHEMA_VERSION, UNDETERMINED
from kubectl_dra.model.meta import name_of, ns_of
from kubectl_dra.model.snapshot import Snapshot

# Copies tried per node and in the whole sequence: beyond, the figure is "at least" (capped). A request that takes
# nothing exclusive (admin access, shares of consumable capacity) could otherwise be copied for ever.
MAX_PER_NODE = 1_000
MAX_TOTAL = 100_000


@dataclass(frozen=True)
class NodeFit:
    node: str
    fit: int  # copies that node alone could take, one after another
    limit: str  # why the next copy does not fit there: the allocator's reason
    capped: bool = False  # stopped at MAX_PER_NODE: at least `fit`
    shared: bool = False  # the request's devices are not all node-local and slices naming no node reach this one

    def to_dict(self) -> dict:
        return {"node": self.node, "fit": self.fit, "atLeast": self.capped, "shared": self.shared,
                "firstLimit": self.limit}  # fmt: skip


@dataclass(frozen=True)
class RequestFitReport:
    claim: str  # namespace/name of the request's claim (its copies are named after it)
    device_class: str
    nodes: tuple[NodeFit, ...]  # the nodes searched, in the scheduler's node order
    total: int
    total_capped: bool
    total_limit: str  # shared devices: why the copy after the total does not fit, on the sequence's last node
    shared: bool  # some device the request can use is reachable from several nodes: the total is not a sum
    no_candidate: int  # usable nodes from which some request has no candidate device (not searched)
    rejected: dict  # node -> why a pod of the copies may not use it (taints, ...)
    in_flight: tuple[str, ...]  # pending pods whose dry-run allocations were taken first
    semantics: dict
    filled_class: bool = False  # the file's request named no class: --class's was used
    undetermined: str | None = None
    unseen: tuple[str, ...] = ()
    findings: tuple = field(default=(), compare=False)  # blocking findings of the claim itself (class, CEL)

    def to_dict(self) -> dict:
        return {
            "apiVersion": SCHEMA_VERSION,
            "kind": "RequestFit",
            "request": {"claim": self.claim, "class": self.device_class, "classFromFlag": self.filled_class},
            "total": {  # undetermined: no figure (the nodes' figures stay, as far as they were found)
                "fit": None if self.undetermined else self.total,
                "atLeast": self.total_capped,
                "shared": self.shared,
                "firstLimit": self.total_limit,
            },
            "nodes": [n.to_dict() for n in self.nodes],
            "nodesWithoutCandidates": self.no_candidate,
            "rejectedNodes": dict(sorted(self.rejected.items())),
            "inFlight": list(self.in_flight),
            "undetermined": self.undetermined,
            "findings": [f.to_dict() for f in self.findings],
            "unseen": list(self.unseen),
            "semantics": self.semantics,
        }


def request_claim(claim: dict, device_class: str) -> tuple[dict, bool]:
    """The file's claim (a template as the claim it generates) with every request's class checked against --class:
    a request or subrequest naming another class is an error; one naming none takes --class (the flag says which
    devices are asked about). Returns the claim and whether a class was filled in."""
    claim = copy.deepcopy(as_claim(claim))
    filled = False
    reqs = ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []
    if not reqs:
        raise DraError(f"claim {name_of(claim)} requests no device")
    for r in reqs:
        if not isinstance(r, dict):
            raise DraError(f"claim {name_of(claim)}: a request is not an object")
        parts = [(r.get("name"), r.get("exactly"))] if r.get("exactly") is not None else []
        parts += [(f"{r.get('name')}/{s.get('name')}", s) for s in r.get("firstAvailable") or [] if isinstance(s, dict)]
        if not parts:
            raise DraError(f"claim {name_of(claim)}, request {r.get('name')}: neither exactly nor firstAvailable")
        for label, spec in parts:
            if not isinstance(spec, dict):
                raise DraError(f"claim {name_of(claim)}, request {label}: not an object")
            if spec.get("adminAccess"):
                raise DraError(
                    f"claim {name_of(claim)}, request {label} asks for admin access: its copies hold no device of "
                    "their own, so there is no count of how many fit"
                )
            named = spec.get("deviceClassName")
            if not named:
                spec["deviceClassName"] = device_class
                filled = True
            elif named != device_class:
                raise DraError(
                    f'claim {name_of(claim)}, request {label} asks for DeviceClass "{named}", not --class '
                    f'"{device_class}"'
                )
    return claim, filled


class _Layer:
    """Allocations added to an AllocatedState that can be taken back (a per-node run must not copy the cluster's
    state per node: that would cost nodes x allocated devices)."""

    def __init__(self, state, sem: Semantics):
        self.state, self.sem = state, sem
        self.saved: list = []

    def add(self, ref: str, results: list) -> None:
        for r in results:
            if r.get("adminAccess"):  # AllocatedState.add leaves these out too
                continue
            did = (r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
            agg = self.state.aggregated_capacity.get(did)
            self.saved.append((did, did in self.state.devices, did in self.state.owners,
                               dict(agg) if agg is not None else None))  # fmt: skip
        self.state.add(ref, results, self.sem)

    def undo(self) -> None:
        st = self.state
        for did, was_dev, had_owner, agg in reversed(self.saved):
            if not was_dev:
                st.devices.discard(did)
            owners = st.owners.get(did)
            if owners:
                owners.pop()
                if not owners and not had_owner:
                    del st.owners[did]
            if agg is None:
                st.aggregated_capacity.pop(did, None)
            else:
                st.aggregated_capacity[did] = agg
        self.saved = []


class _Fill:
    """Copies of the claim allocated on one node after another against one state."""

    def __init__(self, an: Analysis, state, claim: dict, plan, candidates: dict, shared: list):
        self.an, self.state, self.claim, self.plan = an, state, claim, plan
        self.alloc = an.allocator(state)
        self.candidates, self.shared = candidates, shared
        self.made = 0  # copies allocated so far (their names stay distinct across nodes)
        self.ahead = False  # the pods ahead in the queue take devices first (their in-flight allocations)

    def node(self, n: dict, layer: _Layer, cap: int) -> tuple[int, str, bool]:
        """(copies that fit on n, the allocator's reason for the next, capped)."""
        k = 0
        while k < cap:
            self.made += 1
            c = dict(self.claim, metadata=dict(self.claim["metadata"], name=f"{name_of(self.claim)}-copy-{self.made}"))
            try:
                res = self.alloc.allocate(n, [c])
            except NodeFailure as e:
                return k, e.message, False
            if res is None:
                return k, self._why(n), False
            layer.add(obj_ref(c), res[0].results)
            k += 1
        return k, "", True

    def _why(self, n: dict) -> str:
        """The allocator's reason for the copy that did not fit (allocator/why.py), the counter that ran out for
        partitionable devices (CounterView: the allocator's counter rule on the state the run left)."""
        w = self.alloc.last_failure
        if w is None:
            return "cannot allocate all claims"
        req = f"request {w.request_name}" if w.request_name else "the request"
        reason = w.reason
        if reason == "counters":
            view = CounterView(self.an.universe, self.state, self.an.sem)
            name = n["metadata"]["name"]
            for e in self.candidates.get(name, []) + self.shared:
                if e.device.get("consumesCounters") and not self.state.is_allocated(e.did):
                    short = view.shortfall(e)
                    if short is not None:
                        return f"{req}: {short[0].split(' (consumed by', 1)[0]}"
            return f"{req}: the shared counters of the devices left are used up"
        if reason == "capacity":
            return f"{req}: the devices left lack the capacity it asks for"
        if reason == "constraint":
            return f"{req}: a constraint rejects the devices left"
        if reason == "distinct":
            return f"{req}: needs more devices than are left"
        who = "the copies before it and the pods ahead in the queue" if self.ahead else "the copies before it"
        return f"{req}: no device left ({who} took the candidates)"


def _in_flight(snap: Snapshot, sem: Semantics, an: Analysis, keys: set):
    """The queue's dry-run of the pods waiting: (their in-flight allocations as (claim ref, results), the pods that
    take some, the reason the answer is undetermined or None)."""
    from kubectl_dra.analyze.queue import judge_queue
    from kubectl_dra.analyze.queue.shapes import Shapes
    from kubectl_dra.analyze.reports.explain import explain_pod

    queue, _ = judge_queue(snap, sem, an, {}, explain_pod)
    shapes = Shapes(an.universe)
    allocs, pods, open_ = [], [], None
    for e in queue.entries:
        place = queue.places.get(e.ref)
        if e.node is not None:
            allocs += list(e.allocs)
            pods.append(e.ref)
        if open_ is None and (
            (place is not None and place.outcome == Outcome.UNDETERMINED) or e.kind == EntryKind.OPEN
        ):
            if e.plan is not None:
                shapes.add(e.plan)
                overlap = shapes.keys.get(e.plan.shape, set()) & keys
            else:
                overlap = True
            if overlap:
                if e.kind == EntryKind.OPEN or place is None:  # alone, whether it gets devices is open
                    why = f"its own answer is undetermined ({e.report.verdict.summary})"
                else:
                    why = f"its place in the queue is undetermined ({place.reason})"
                open_ = f"pending pod {e.ref} may or may not take devices this request can use: {why}"
    return allocs, pods, open_


# long: the one entry point: the claim's analysis, the queue's in-flight allocations, the per-node runs, the total
def request_fit(snap: Snapshot, sem: Semantics, claim: dict, device_class: str) -> RequestFitReport:
    from kubectl_dra.analyze.queue.shapes import Shapes

    claim, filled = request_claim(claim, device_class)
    claim.setdefault("metadata", {}).setdefault("name", "request")
    claim["metadata"].setdefault("namespace", "default")
    claim.pop("status", None)
    ns, name = ns_of(claim), name_of(claim)
    an = Analysis(snap, sem)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{name}-copy", "namespace": ns},
        "spec": {"containers": [], "resourceClaims": [{"name": "request", "resourceClaimName": name}]},
    }
    if _default_taints(snap):  # else the same nodes as a pod without tolerations: its analysis is shared (memo)
        pod["spec"]["tolerations"] = [dict(t) for t in DEFAULT_TOLERATIONS]
    fork = an.fork()
    fork.mark_selected = False
    analyses, _dry = fork.analyse_claims([claim], pod, ["request"])
    plan = fork.plan
    blocking = tuple(f for f in fork.findings if f.blocking)
    shapes = Shapes(an.universe)
    shapes.add(plan)
    keys, local = shapes.keys[plan.shape], shapes.local[plan.shape]
    allocs, pods, open_ = _in_flight(snap, sem, an, keys)
    state = an.allocated_now()[0].copy()  # once: the per-node runs add to it and take back (_Layer)
    for ref, r in allocs:
        state.add(ref, r.results, sem)
    worth = [] if blocking else fork.worth_nodes(plan.pending, plan.analyses, plan.reach, plan.skip)
    candidates, shared_list = _candidates(analyses, plan.reach)
    fill = _Fill(an, state, claim, plan, candidates, shared_list)
    fill.ahead = bool(allocs)
    rows: list[NodeFit] = []
    total, total_capped, last_limit = 0, False, ""
    undetermined = open_
    sig = _Signatures(an, sem)
    try:
        per_sig: dict = {}  # a node with no slice of its own sees the same pools as another with its signature
        for n in worth:
            nname = n["metadata"]["name"]
            key = None if local else sig.of(n)
            if key is not None and key in per_sig:
                k, why, capped = per_sig[key]
            else:
                layer = _Layer(state, sem)
                k, why, capped = fill.node(n, layer, MAX_PER_NODE)
                if local:  # the per-node runs are the sequence: keep what this node took
                    total += k
                    total_capped = total_capped or capped
                else:
                    layer.undo()
                if key is not None:
                    per_sig[key] = (k, why, capped)
            rows.append(NodeFit(nname, k, why, capped, not local and bool(sig.general_hits(n)[0])))
            if total >= MAX_TOTAL:
                total_capped = True
                break
        if not local:
            seq = _Layer(state, sem)
            failed: dict = {}  # signature -> reason: the state only grows, a node that failed stays failed
            for n in worth:
                key = sig.of(n)
                if key is not None and key in failed:
                    continue
                k, why, capped = fill.node(n, seq, min(MAX_PER_NODE, MAX_TOTAL - total))
                total += k
                total_capped = total_capped or capped
                last_limit = why or last_limit
                if key is not None and not capped:
                    failed[key] = why
                if total >= MAX_TOTAL:
                    total_capped = True
                    break
            seq.undo()
    except AllocationError as e:
        undetermined = f"the scheduler's attempt for a copy errs: {e.message}"
    if undetermined is None and any(f.code in UNDETERMINED for f in fork.findings):
        undetermined = next(f.message for f in fork.findings if f.code in UNDETERMINED)
    worth_names = {n["metadata"]["name"] for n in worth}
    return RequestFitReport(
        f"{ns}/{name}",
        device_class,
        tuple(rows),
        total,
        total_capped,
        last_limit,
        not local,
        len([x for x in plan.reach.all if x not in worth_names]),
        dict(plan.reach.rejected),
        tuple(pods),
        sem.to_dict(),
        filled,
        undetermined,
        tuple(unseen_words(g) for g in snap.gaps if g.resource not in UNUSED_ABSENT),
        blocking,
    )


class _Signatures:
    """What decides a node's search, for a node that no slice names: the slices that target it (none selecting
    devices one by one) and its declared features. Nodes of one signature get the same answer (a node pool reached
    only through network-attached devices: one search, not one per node)."""

    def __init__(self, an: Analysis, sem: Semantics):

        self.index, self.sem = an.slice_index(), sem
        self.known: dict = {}

    def of(self, n: dict) -> tuple | None:
        """The signature of a node no slice names, None for the others (or when a slice selects device by device)."""
        hit, per_device = self.general_hits(n)
        if per_device or self.index.has_own(n["metadata"]["name"]):
            return None
        declared = ((n.get("status") or {}).get("declaredFeatures")) or []
        return (hit, tuple(sorted(map(str, declared))))

    def general_hits(self, n: dict) -> tuple:
        """(the slices naming no node that target n, whether one of them selects device by device)."""
        from kubectl_dra.analyze.allocator.pools import slice_spec, slice_targets_node

        name = n["metadata"]["name"]
        if name not in self.known:
            hit, per_device = [], False
            for i in self.index.general():
                s = self.index.slices[i]
                if slice_targets_node(s, n, self.sem):
                    hit.append(i)
                    per_device = per_device or bool(slice_spec(s).get("perDeviceNodeSelection"))
            self.known[name] = (tuple(hit), per_device)
        return self.known[name]


def _default_taints(snap: Snapshot) -> bool:
    """Some node has a taint that the tolerations admission adds to every pod (DefaultTolerationSeconds) tolerate."""
    keys = {t["key"] for t in DEFAULT_TOLERATIONS}
    return any(
        isinstance(t, dict) and t.get("key") in keys
        for n in snap.nodes
        for t in ((n.get("spec") or {}).get("taints") or [])
    )


def _candidates(analyses, reach) -> tuple[dict, list]:
    """Node -> the node-local candidate devices of the claim's requests, and the candidates reachable from several
    nodes (listed once: indexing them per node would cost nodes x shared devices)."""
    local: dict = {}
    shared: list = []
    seen: set = set()
    for a in analyses:
        for m in a.matrices.values():
            for v in m:
                if v.outcome not in ("candidate", "selected") or v.entry.did in seen:
                    continue
                seen.add(v.entry.did)
                if v.entry.node_name is not None:
                    local.setdefault(v.entry.node_name, []).append(v.entry)
                else:
                    shared.append(v.entry)
    return local, shared
