"""Where a pending pod may really preempt (DefaultPreemption, v1.37.2), for preempted.py's Freers: a pod counts as
able to free room on a node only where upstream could preempt there. Each test that rules a node out is one upstream
has:

- its claims cannot be allocated on the node even with no device allocated at all: the DynamicResources Filter
  fails there in every state, and every failure of that plugin is UnschedulableAndUnresolvable (dynamicresources.go
  statusUnschedulable), a node findCandidates never tries (preemption.go: only the nodes whose status is
  Unschedulable are potential nodes); the victims' devices stay allocated in the dry-run besides (DynamicResources
  has no PreFilterExtensions), so freeing them is no help either;
- no bound pod there is of a lower priority ("No preemption victims found for incoming pod"), or NodeResourcesFit
  still refuses the pod once every one of them is gone, with nothing nominated counted (SelectVictimsOnNode: the
  preemptor must pass the filters once all potential victims are removed, RunFilterPluginsWithNominatedPods);
- a pod that fits some node at its first attempt whatever the pods that may be placed before it do: its attempt
  finds a feasible node, and PostFilter, where preemption runs, is called only when none is found (schedule_one.go
  schedulingCycle: RunPostFilterPlugins on a FitError). The pods that may be placed before its first attempt are the
  queue's (PrioritySort, as others.py counts them): those of a higher priority, those of its priority created no
  later (all of them where one of that priority was tried already), and those nominated with a priority not below
  its own (the Filter counts them on their node); a pod tried already, or gated, is never taken as certain. Each of
  them counts on one node at most, and a preemption only frees room, so they can block it on every node where it
  fits now only if as many of them as it takes to block each such node (the largest first, per resource it asks)
  add up to no more than there are of them. A pod with DRA also needs its claims to fit there as the devices are
  allocated now, and a pod with DRA ahead of it blocks any node it may go to, which is sound only where every
  device it could use is local to one node (the pod ahead takes those of its own node) and none of its claims is
  shared. Where none of the pods ahead may preempt (Never, or certain to fit at their own first attempt by this
  rule) and no preemption is under way, one that NodeResourcesFit refuses a node now never goes there first.
  Only where no filter but the modelled ones can refuse it a node (_only_modelled_filters), the input lists every
  pod, bound and pending, and no pod names another scheduler or a required pod anti-affinity.

The first two are tested on the cluster as the snapshot holds it, which bounds every later state: the first
preemption on a node removes pods the snapshot has bound there (pods placed later only take room), so a pod that
fails these tests with the snapshot's pods can never be the first to preempt there. Anything a test cannot tell (no
Fit, a pod in a PodGroup, node-allocatable resources, an error, the budget spent) keeps the pod a freer there."""

from __future__ import annotations

from kubectl_dra.analyze.allocator import AllocationError, NodeFailure
from kubectl_dra.analyze.allocator.state import AllocatedState
from kubectl_dra.analyze.pod.preempt import Preempter, never_preempts
from kubectl_dra.analyze.queue.order import attempted
from kubectl_dra.model.meta import gang_of, meta_of, name_of, ns_of, priority_of
from kubectl_dra.model.snapshot import BOUND_PODS, PENDING_PODS

MAX_AHEAD = 64  # pods that may be ahead (and nodes it may use) past which no pod is taken as certain to fit
# volume sources no filter reads (VolumeBinding, VolumeRestrictions, VolumeZone and NodeVolumeLimits read the others)
_PLAIN_VOLUMES = {"name", "projected", "configMap", "secret", "emptyDir", "downwardAPI"}


def _only_modelled_filters(pod: dict, dra: bool) -> bool:
    """No filter but the ones modelled here (NodeResourcesFit, node selection and taints, already in the nodes it may
    use) can refuse the pod a node: the default scheduler, no host ports or host network (NodePorts), no volume a
    volume filter reads, no pod affinity or anti-affinity (InterPodAffinity), no topology spread constraints
    (PodTopologySpread), no claims unless its DynamicResources Filter is run (dra)."""
    spec = pod.get("spec") or {}
    aff = spec.get("affinity") or {}
    if _elsewhere(pod) or spec.get("hostNetwork"):
        return False
    if aff.get("podAffinity") or aff.get("podAntiAffinity") or spec.get("topologySpreadConstraints"):
        return False
    if (spec.get("resourceClaims") and not dra) or any(set(v) - _PLAIN_VOLUMES for v in spec.get("volumes") or []):
        return False
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if any(isinstance(p, dict) and p.get("hostPort") for p in c.get("ports") or []):
            return False
    return True


def _anti_affinity(pod: dict) -> bool:
    """A required pod anti-affinity of its own: InterPodAffinity refuses other pods the nodes of its topology."""
    aff = (pod.get("spec") or {}).get("affinity") or {}
    return bool((aff.get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution"))


class MayPreempt:
    """The tests for the pending pods of one queue (snap: its Snapshot; nodes: name -> Node; known: ref -> (pod, the
    nodes it may use or None: any, its Fit or None, its PodPlan or None, whether it uses DRA) per pending pod the
    queue modelled). can(...) is False only where the pod certainly does not preempt on the node."""

    MAX_CHECKS = 1024  # allocations and fits tried in all; past that every pod is a freer wherever the rule had it

    def __init__(self, snap, base, nodes: dict, known: dict):
        self.base = base
        self.nodes = nodes
        self.known = known
        self.names_of = {r: k[1] for r, k in known.items()}
        self.dra = {r for r, k in known.items() if k[4]}
        self.spent = 0
        self._alloc = None  # the allocator with no device allocated
        self._now = None  # the allocator with the devices allocated as the input has them
        self._claims: dict = {}  # (shape, node) -> whether the claims may fit there
        self._placed: dict = {}  # ref -> whether it certainly fits some node at its first attempt
        refused = any(g.resource in (BOUND_PODS, PENDING_PODS) for g in snap.gaps)
        self._pending = None  # (pod, ref, priority, created second, tried) per pending pod
        # a preemption under way (a pod nominated, or a bound pod being deleted): room is being freed
        self._freeing = any(
            (p.get("status") or {}).get("nominatedNodeName") or meta_of(p).get("deletionTimestamp") for p in snap.pods
        )
        if snap.bound_pods and not refused and not any(_anti_affinity(p) or _elsewhere(p) for p in snap.pods):
            self._pending = [
                (p, f"{ns_of(p)}/{name_of(p)}", priority_of(p), _created(p), attempted(p))
                for p in snap.pods
                if not (p.get("spec") or {}).get("nodeName")
                and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
            ]

    def _budget(self) -> bool:
        self.spent += 1
        return self.spent <= self.MAX_CHECKS

    def can(self, ref: str, pod: dict, fit, plan, node: str) -> bool:
        """Whether the pod (fit: its Fit or None; plan: its PodPlan where it uses DRA) may preempt on node."""
        n = self.nodes.get(node)
        if n is None or gang_of(pod) or not self._budget():
            return True
        if fit is not None and self._fits_anyway(ref, pod, fit, plan):
            return False
        if fit is not None and Preempter(fit).room_without_lower(n) is False:
            return False
        if plan is not None and not self._claims_may_fit(plan, n, node):
            return False
        return True

    def _claims_may_fit(self, plan, n: dict, node: str) -> bool:
        key = (plan.shape, node, len(plan.claims_on(node)))
        got = self._claims.get(key)
        if got is None:
            if self._alloc is None:
                self._alloc = self.base.allocator(AllocatedState())
            got = self._claims[key] = self._allocates(self._alloc, plan, n, node) is not False
        return got

    @staticmethod
    def _allocates(alloc, plan, n: dict, node: str) -> bool | None:
        """Whether the pod's pending claims get devices on the node (None: the attempt errs there)."""
        here = plan.claims_on(node)
        if not here:
            return True
        try:
            return alloc.allocate(n, here) is not None
        except NodeFailure:
            return False
        except AllocationError:
            return None

    def _fits_anyway(self, ref: str, pod: dict, fit, plan) -> bool:
        got = self._placed.get(ref)
        if got is None:
            self._placed[ref] = False  # (pods of one tie class are ahead of each other: not certain while asked)
            got = self._placed[ref] = self._certainly_fits(ref, pod, fit, plan)
        return got

    def _ahead(self, ref: str, pod: dict) -> list | None:
        """The pending pods that may be placed before the pod's first attempt (see above), or None where that
        attempt is not certain to come first (it was tried already, is nominated, or is gated)."""
        if attempted(pod) or (pod.get("spec") or {}).get("schedulingGates"):
            return None
        if (pod.get("status") or {}).get("nominatedNodeName"):
            return None  # (it preempted already)
        mine, created = priority_of(pod), _created(pod)
        loose = any(t for _q, _r, prio, _c, t in self._pending if prio == mine)
        out = []
        for q, r, prio, c, _t in self._pending:
            if r == ref:
                continue
            nominated = (q.get("status") or {}).get("nominatedNodeName")
            if prio > mine or (prio == mine and (loose or not created or c <= created or nominated)):
                out.append((q, r))
        return out

    def _certainly_fits(self, ref: str, pod: dict, fit, plan) -> bool:
        """A pod that NodeResourcesFit (and, with DRA, the allocator) lets onto some node it may use at its first
        attempt whatever the pods that may be placed before it do: it never fails every node, so it never preempts.
        Each of those pods counts on one node at most (bound, or nominated: the scheduler's nominator drops a pod's
        nomination once it is assumed), and a preemption only frees room: the pods ahead block the pod on every node
        where it fits now only if, node by node, as many of them as it takes to block it there go there, and those
        counts add up to no more than there are pods ahead."""
        names = self.names_of.get(ref)
        if self._pending is None or names is None or fit.na or fit.bound.nalloc:
            return False
        if fit.sem.gate("DRANodeAllocatableResources") or not _only_modelled_filters(pod, plan is not None):
            return False
        ahead = self._ahead(ref, pod)
        if ahead is None or len(ahead) > MAX_AHEAD or len(names) > MAX_AHEAD:
            return False
        # a pod with DRA ahead may take its devices: only where each of them is local to one node (a pod ahead takes
        # those of the node it goes to, and blocks that one node at most) and no claim of its own is shared
        takes = {r for _q, r in ahead if r in self.dra or r not in self.names_of}
        if plan is not None and (plan.dry.error is not None or (takes and not _local(pod, plan))):
            return False
        try:
            reqs = [(fit.bound.requests(q), self.names_of.get(r), r, q) for q, r in ahead]
        except ValueError:
            return False
        # where none of them may preempt and no preemption is under way, nothing frees room before its attempt: one
        # that NodeResourcesFit refuses a node now never goes there first
        quiet = not self._freeing and not any(self._may_preempt_first(r, q) for q, r in ahead)
        needed = 0  # the pods ahead it takes to block it on every node where it fits now
        for node in sorted(names):
            n = self.nodes.get(node)
            if n is None or not self._budget() or fit.check(n).fits is not True:
                continue
            if plan is not None:
                if self._now is None:
                    self._now = self.base.allocator(self.base.allocated_now()[0])
                if not self._allocates(self._now, plan, n, node):
                    continue
            here = [
                (req, r)
                for req, where, r, q in reqs
                if (where is None or node in where) and not (quiet and self._refused(r, n))
            ]
            block = self._to_block(fit, n, [req for req, _r in here])
            if plan is not None and any(r in takes for _req, r in here):
                block = 1  # (one pod with DRA there may take the devices it needs)
            if block is None:
                return True  # the pods ahead cannot fill this node for it, all of them together
            needed += block
            if needed > len(ahead):
                return True
        return False

    def _may_preempt_first(self, ref: str, pod: dict) -> bool:
        """Whether a pod that may be placed before another's first attempt may preempt on its way (not Never, and
        not certain to fit some node at its own first attempt)."""
        if never_preempts(pod):
            return False
        k = self.known.get(ref)
        return k is None or k[2] is None or not self._fits_anyway(ref, pod, k[2], k[3])

    def _refused(self, ref: str, n: dict) -> bool:
        """NodeResourcesFit refuses the pod node n as the input has it (its Fit known)."""
        k = self.known.get(ref)
        return k is not None and k[2] is not None and k[2].check(n).fits is False

    def _to_block(self, fit, n: dict, here: list) -> int | None:
        """The fewest of the pods `here` (their requests) that leave the pod no room on node n once placed there
        (None: all of them do not): for each resource it asks, the largest first."""
        wanted = [r for r, w in fit.request.items() if w > 0] or ["pods"]
        best = None
        for res in wanted:
            order = sorted(here, key=lambda q: -q.get(res, 0))
            total: dict = {}
            for k, q in enumerate(order, 1):
                if best is not None and k >= best:
                    break
                for key, v in q.items():
                    total[key] = total.get(key, 0) + v
                if not self._budget():
                    return 1
                if fit.check(n, (total, k)).fits is not True:
                    best = k
                    break
        return best


def _elsewhere(pod: dict) -> bool:
    """A pod another scheduler places (spec.schedulerName): it takes room whenever that one decides."""
    return (pod.get("spec") or {}).get("schedulerName") not in (None, "", "default-scheduler")


def _local(pod: dict, plan) -> bool:
    """Every device its claims could use is local to one node (a slice's nodeName) and consumes no shared counter (a
    pool's counters may be shared by devices of other nodes), and none of its claims is named by the pod rather than
    made from a template (a claim another pod may share)."""
    if any(c.get("resourceClaimName") for c in (pod.get("spec") or {}).get("resourceClaims") or []):
        return False
    return all(
        v.entry.node_name and not v.entry.device.get("consumesCounters")
        for a in plan.analyses
        for m in a.matrices.values()
        for v in m
    )


def _created(p: dict) -> str:
    """Its creation time to the second (pods created in the same second are taken in an order the API does not
    show: order.py's tie classes)."""
    return str(meta_of(p).get("creationTimestamp") or "")[:19]
