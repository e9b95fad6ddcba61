"""What the analyses of one snapshot share (Analysis.cache): computed once, read by every pod's analysis, the queue
and the reports, each under a named field. This class is the contract between analyze/'s modules for what is kept
across pods; nothing is kept under a string key."""

from __future__ import annotations


class ByObject:
    """Values computed from an object, by id(object). Each entry holds its object, so an id() cannot be reused while
    it is kept. For objects the snapshot (or the cache itself) holds for as long as the cache lives."""

    __slots__ = ("_d",)

    def __init__(self):
        self._d: dict[int, tuple[object, object]] = {}

    def get(self, obj, default=None):
        hit = self._d.get(id(obj))
        return hit[1] if hit is not None and hit[0] is obj else default

    def put(self, obj, value):
        self._d[id(obj)] = (obj, value)
        return value


_UNSET = object()


class Cache:
    """Shared by an Analysis and its forks (one pod each): what does not depend on the pod beyond the keys it is kept
    under."""

    def __init__(self):
        # the snapshot's own, once
        self.allocated: tuple | None = None  # (AllocatedState, CounterView) of the cluster's allocations
        self.bound_pods = None  # fit.py BoundPods: the pods bound to each node
        self.driver_seen: tuple | None = None  # (snapshot, kubelet.py Seen): what it holds of the driver piece
        self.pool_findings: list | None = None  # verdicts.py: the findings about the pools, for every pod
        self.events_by_pod: dict | None = None  # pod name -> its events
        self._reference_time = _UNSET  # model/times.py reference_time of the snapshot
        self.nodes_by_name: dict | None = None
        self.annotated_claims = None  # extended.py extended_claims: claims made for extended resources
        self.slice_index = None  # allocator SliceIndex of the (tainted) slices
        self.device_rows: dict = {}  # bodies.py claim_body's rows, shared by the reports of one answer
        self.scores = None  # score.py Scores: the scheduler's node scores (score.py scores_of)
        # per key (tuples of what the result depends on)
        self.node_sets: dict = {}  # a pod's constraints and allocated claims -> the nodes it may use, reachability
        self.reach_ids: dict = {}  # a set of usable nodes -> a small id (the matrices' key)
        self.matrices: dict = {}  # a request's shape and node set -> its device matrix
        self.searches: dict = {}  # a pod shape's pending claims, nodes and fit -> (reach, the dry-run's result)
        self.fits_on: dict = {}  # a shape and fit -> [nodes found, next node, nodes in search order] (simulate.py)
        # a pod shape, a node and its claims there -> allocate()'s result (or NodeFailure) against the allocations as
        # they are: the queue's dry-run and its count proof both ask (simulate.py base_allocate)
        self.base_allocs: dict = {}
        self.semantics_finding = None  # (Semantics, its DRA003 finding): bodies.py semantics_finding
        self.spec_keys: dict = {}  # a pending claim's spec key (jsonio.value_key) -> itself: one copy per distinct spec
        self.base_allocator = None  # base_allocate's allocator of the allocations as they are
        self.may_err: dict = {}  # a pod shape -> whether its search may meet an error (queue/exposed.py)
        # per object
        self.unmodelled = ByObject()  # an object -> its fields the engine does not model (coverage.py)
        self.past_class = ByObject()  # a matrix -> the slices of its devices past the class selectors
        self.origin = ByObject()  # a marked copy of a matrix -> (the shared matrix, the indexes it changed)
        self.slice_coverage = ByObject()  # a list of slices -> their coverage findings
        self.errs_in = ByObject()  # a matrix -> whether a selector errs on a device a usable node reaches
        self.worth = ByObject()  # a matrix -> the nodes from which one of its devices is a candidate
        self.stats = ByObject()  # a matrix -> (candidates, per node, stages) (request_findings.py)

    def reference_time(self, snap):
        from kubectl_dra.model.times import reference_time

        if self._reference_time is _UNSET:
            self._reference_time = reference_time(snap)
        return self._reference_time
