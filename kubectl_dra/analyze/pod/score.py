"""Which of the nodes that pass a pod's filters kube-scheduler picks: its default profile's Score plugins, where only
NodeResourcesFit and NodeResourcesBalancedAllocation tell the nodes apart.

upstream (read in v1.37.2; 1.38.0-beta.0 changes both scorers, so other minors are not modelled, the Components fact
default_scores_ported): pkg/scheduler/apis/config/v1/default_plugins.go (the weights: TaintToleration 3,
NodeAffinity 2, NodeResourcesFit 1, PodTopologySpread 2, InterPodAffinity 2, NodeResourcesBalancedAllocation 1,
ImageLocality 1, DynamicResources 2); schedule_one.go prioritizeNodes and selectHost (the sum of weight x score per
node; among the nodes of the highest sum one at random); noderesources/least_allocated.go (per cpu and memory,
(allocatable - requested) x 100 / allocatable in integers, their mean, with the pods' NonZeroRequested: a container
without a cpu or memory request counts 100m and 200Mi, util/pod_resources.go); balanced_allocation.go (the standard
deviation of the cpu and memory fractions of allocatable requested, each at most 1, scored with the pod against
without it: 50 + (50 + with - without) / 2; a pod that requests neither is skipped). A node is scored only when all
nodes pass through the filters: at most 100 nodes in the cluster (numFeasibleNodesToFind).

The other plugins give every candidate node the same score only under conditions this module checks, and it answers
nothing otherwise (why: a reason): no PreferNoSchedule taint on a candidate (TaintToleration), no preferred node
affinity (NodeAffinity), no topology spread constraint, and no labels on the pod, so that no Service, ReplicaSet,
ReplicationController or StatefulSet selects it for the system's default constraints (PodTopologySpread; their
listers match labels, and an empty selector matches nothing), no pod (anti-)affinity on the pod or on any pod of the
cluster (InterPodAffinity), no image of the pod listed in a candidate's status.images under the name the plugin
looks up (ImageLocality), no firstAvailable request in its claims (DynamicResources scores the subrequest picked),
no PersistentVolumeClaim or ephemeral volume (VolumeBinding scores them, StorageCapacityScoring on by default in 1.37).
Requests: no pod-level resources, and a bound pod counted as its spec says (its container statuses agree)."""

from __future__ import annotations

from kubectl_dra.analyze.pod.resources import BadQuantity, aggregate, as_spec, nano_list

MAX_SCORED_NODES = 100  # numFeasibleNodesToFind's minFeasibleNodesToFind: up to it every node is filtered
DEFAULT_MILLI_CPU = 100  # util.DefaultMilliCPURequest
DEFAULT_MEMORY = 200 * 1024 * 1024  # util.DefaultMemoryRequest
_NANO = 10**9
_NZ = {"cpu": DEFAULT_MILLI_CPU * _NANO // 1000, "memory": DEFAULT_MEMORY * _NANO}


def _d(x) -> dict:
    return x if isinstance(x, dict) else {}


def _l(x) -> list:
    return x if isinstance(x, list) else []


def usage(pod: dict) -> tuple[int, int, int, int] | None:
    """(non-zero milli-cpu, non-zero memory bytes, requested milli-cpu, requested memory bytes) as NodeInfo adds the
    pod up; None where this module does not model it (pod-level resources, status resources that differ from the
    spec, an invalid quantity)."""
    spec = _d(pod.get("spec"))
    if _d(spec.get("resources")).get("requests") or _d(spec.get("resources")).get("limits"):
        return None
    if spec.get("nodeName"):
        statuses = {
            cs.get("name"): cs
            for cs in _l(_d(pod.get("status")).get("containerStatuses"))
            + _l(_d(pod.get("status")).get("initContainerStatuses"))
            if isinstance(cs, dict)
        }
        if statuses and not as_spec(pod, statuses):
            return None
    from kubectl_dra.analyze.pod.extended import defaulted_requests

    def requested(c):
        return nano_list(defaulted_requests(c))

    def non_zero(c):
        got = nano_list(defaulted_requests(c))
        return {**{k: v for k, v in _NZ.items() if k not in got}, **got}

    try:
        req, nz = aggregate(pod, requested), aggregate(pod, non_zero)
        over = nano_list(spec.get("overhead"))
    except BadQuantity:
        return None
    for k, v in over.items():
        req[k] = req.get(k, 0) + v
        nz[k] = nz.get(k, 0) + v
    return (
        _milli(nz.get("cpu", 0)),
        _units(nz.get("memory", 0)),
        _milli(req.get("cpu", 0)),
        _units(req.get("memory", 0)),
    )


def _milli(nano: int) -> int:
    return -(-nano // (_NANO // 1000))


def _units(nano: int) -> int:
    return -(-nano // _NANO)


def _image_name(image: str) -> str:
    """imagelocality normalizedImageName: a name without a tag or digest gets ':latest'."""
    if image.rfind(":") <= image.rfind("/"):
        return image + ":latest"
    return image


def unscored_why(pod: dict, nodes: list[dict], every_node: int, cluster_affinity: bool, claims) -> str | None:
    """Why the pod's scores over nodes (its candidates) are not modelled, or None. every_node: how many nodes the
    cluster has; cluster_affinity: some pod of the cluster has pod (anti-)affinity; claims: the pod's claims."""
    spec = _d(pod.get("spec"))
    if every_node > MAX_SCORED_NODES:
        return f"the cluster has more than {MAX_SCORED_NODES} nodes: the scheduler scores a sample of them"
    if _d(pod.get("metadata")).get("labels"):
        return "the pod has labels: a Service or workload that selects it spreads it (not read)"
    aff = _d(spec.get("affinity"))
    if _d(aff.get("nodeAffinity")).get("preferredDuringSchedulingIgnoredDuringExecution"):
        return "preferred node affinity"
    if aff.get("podAffinity") or aff.get("podAntiAffinity") or cluster_affinity:
        return "pod affinity"
    if spec.get("topologySpreadConstraints"):
        return "topology spread constraints"
    for v in _l(spec.get("volumes")):
        if isinstance(v, dict) and (v.get("persistentVolumeClaim") or v.get("ephemeral")):
            return "a PersistentVolumeClaim (VolumeBinding scores by storage capacity)"
    images = {
        _image_name(c.get("image"))
        for c in _l(spec.get("containers")) + _l(spec.get("initContainers"))
        if isinstance(c, dict) and isinstance(c.get("image"), str)
    }
    for n in nodes:
        st = _d(n.get("status"))
        for t in _l(_d(n.get("spec")).get("taints")):
            if isinstance(t, dict) and t.get("effect") == "PreferNoSchedule":
                return "a PreferNoSchedule taint"
        for img in _l(st.get("images")):
            if isinstance(img, dict) and images.intersection(x for x in _l(img.get("names")) if isinstance(x, str)):
                return "a node already has its image"
    for c in claims:
        for r in _l(_d(_d(c.get("spec")).get("devices")).get("requests")):
            if isinstance(r, dict) and r.get("firstAvailable"):
                return "a firstAvailable request"
    return None


def _least(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * 100 // capacity


def _balance(req: tuple, alloc: tuple) -> int:
    fractions = [min(r / a, 1.0) for r, a in zip(req, alloc) if a != 0]
    std = abs((fractions[0] - fractions[1]) / 2) if len(fractions) == 2 else 0.0
    return int((1 - std) * 100)


def _go_div(a: int, b: int) -> int:
    """Go's integer division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def least_allocated(pod_nz: tuple, alloc: tuple, node_nz: tuple) -> int:
    """NodeResourcesFit's LeastAllocated score (cpu and memory, weight 1 each) of a node: pod_nz and node_nz the
    non-zero (milli-cpu, memory bytes) of the pod and of the node's pods, alloc the node's allocatable."""
    total, weights = 0, 0
    for want, cap in zip((node_nz[0] + pod_nz[0], node_nz[1] + pod_nz[1]), alloc):
        if cap == 0:
            continue
        total += _least(want, cap)
        weights += 1
    return total // weights if weights else 0


def balanced_allocation(pod_rq: tuple, alloc: tuple, node_rq: tuple) -> int | None:
    """NodeResourcesBalancedAllocation's score of a node: pod_rq and node_rq the requested (milli-cpu, memory bytes)
    of the pod and of the node's pods; None where the plugin skips the pod (it requests neither)."""
    if pod_rq[0] == 0 and pod_rq[1] == 0:
        return None
    with_pod = (node_rq[0] + pod_rq[0], node_rq[1] + pod_rq[1])
    return 50 + _go_div(50 + _balance(with_pod, alloc) - _balance(node_rq, alloc), 2)


def score(pod_use: tuple, node_alloc: tuple, node_use: tuple) -> int:
    """The sum of NodeResourcesFit's (LeastAllocated) and NodeResourcesBalancedAllocation's scores of a node for the
    pod (each weighs 1). pod_use and node_use: usage()'s four numbers (the node's: its pods added up); node_alloc:
    (allocatable milli-cpu, allocatable memory bytes)."""
    fit = least_allocated(pod_use[:2], node_alloc, node_use[:2])
    balanced = balanced_allocation(pod_use[2:], node_alloc, node_use[2:])
    return fit + (balanced or 0)


# What a pod placed by the queue adds to its node's scores, beside its requests, under names no resource has
USE_KEYS = (" score:non-zero-cpu", " score:non-zero-memory", " score:cpu", " score:memory")
UNSCORED = " score:unknown"  # a pod placed on the node whose use is not modelled: its scores are not either


def add_use(req: dict, pod: dict) -> None:
    """What pod adds to its node's scores, added into req (a node's requests in a dry-run, changed in place)."""
    u = usage(pod)
    if u is None:
        req[UNSCORED] = 1
        return
    for k, v in zip(USE_KEYS, u):
        req[k] = req.get(k, 0) + v


class Scores:
    """The scores of the pods of one snapshot (base: the Analysis their forks share; one per Analysis.cache, see
    scores_of): which of the nodes a pod passes the scheduler binds it to, for a pod's own dry-run (dryrun_search.py)
    and the queue's (queue/simulate.py, queue/alternatives.py). What a pod the queue placed adds to its node's scores
    is kept beside its requests, in the (requests, pod count) the queue's dry-runs keep per node, under names no
    resource has (USE_KEYS)."""

    def __init__(self, base):
        self.base = base
        # (id(pod), id(fit), id(nodes)) -> (pod, fit, nodes, (its usage, node name -> allocatable) or None: not
        # modelled); the objects are held, so that an id is never reused while its entry is kept
        self._pods: dict = {}
        self._bound: dict = {}  # node -> what its bound pods add up to (usage), or None
        self._affinity: bool | None = None

    def modelled(self, pod: dict, fit, names, claims) -> bool:
        """Whether the pod's scores are modelled over names (the nodes it may use)."""
        return self._pod(pod, fit, names, claims) is not None

    def best(self, pod: dict, fit, names, claims, opts: list[str], use: dict) -> list[str]:
        """Of opts (the nodes the pod passes, in order), those of the highest score; opts where not modelled. use:
        node -> (requests, pod count) of the pods the dry-run placed there (add_use's keys in the requests)."""
        if len(opts) < 2:
            return opts
        got = self._pod(pod, fit, names, claims)
        if got is None:
            return opts
        pod_use, allocs = got
        sums = []
        for name in opts:
            bound = self._bound_use(name)
            extra = (use.get(name) or ({}, 0))[0]
            if bound is None or extra.get(UNSCORED) or name not in allocs:
                return opts
            node_use = tuple(b + extra.get(k, 0) for b, k in zip(bound, USE_KEYS))
            sums.append(score(pod_use, allocs[name], node_use))
        top = max(sums)
        return [n for n, s in zip(opts, sums) if s == top]

    def _pod(self, pod: dict, fit, names, claims) -> tuple | None:
        key = (id(pod), id(fit), id(names))
        hit = self._pods.get(key)
        if hit is not None and hit[0] is pod and hit[1] is fit and hit[2] is names:  # (held: no id is reused)
            return hit[3]
        self._pods[key] = (pod, fit, names, None)
        if len(self.base.idx.nodes) > MAX_SCORED_NODES:  # (before any work per pod: a large cluster is common)
            return None
        pod_use = usage(pod)
        if self.base.sem.components.default_scores_ported and fit is not None and not fit.nalloc and pod_use:
            nodes = self.base.nodes_by_name()
            mine = [nodes[n] for n in sorted(names) if n in nodes]
            if unscored_why(pod, mine, len(self.base.idx.nodes), self._cluster_affinity(), claims) is None:
                allocs = {}
                for n in mine:
                    a, _pods = fit.bound.allocatable(n)
                    allocs[n["metadata"]["name"]] = (a.get("cpu", 0), a.get("memory", 0))
                self._pods[key] = (pod, fit, names, (pod_use, allocs))
        return self._pods[key][3]

    def _bound_use(self, name: str) -> tuple | None:
        """usage() of the pods bound to the node, added up (None: one is not modelled, or the input may not hold
        every one)."""
        if name not in self._bound:
            bound = self.base.cache.bound_pods
            got = None
            if bound is not None and bound.known(name) and name not in bound.statusless:
                got = (0, 0, 0, 0)
                for p in bound.by_node.get(name, ()):
                    u = usage(p)
                    if u is None:
                        got = None
                        break
                    got = tuple(a + b for a, b in zip(got, u))
            self._bound[name] = got
        return self._bound[name]

    def _cluster_affinity(self) -> bool:
        """Whether some pod of the input has pod affinity or anti-affinity (InterPodAffinity scores for it)."""
        if self._affinity is None:
            self._affinity = False
            for p in self.base.snap.pods:
                aff = (p.get("spec") or {}).get("affinity")
                if isinstance(aff, dict) and (aff.get("podAffinity") or aff.get("podAntiAffinity")):
                    self._affinity = True
                    break
        return self._affinity


def scores_of(base) -> Scores:
    """The snapshot's Scores (kept in base.cache: one for every pod's analysis and the queue)."""
    if base.cache.scores is None:
        base.cache.scores = Scores(base)
    return base.cache.scores
