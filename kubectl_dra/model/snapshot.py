"""The Snapshot: everything analysis may look at, gathered once, never changed afterwards."""

from __future__ import annotations

from dataclasses import dataclass

# The Gap's resource when the pending pods of every namespace (the scheduler's queue) cannot be listed: not "pods",
# which are the pods asked about.
PENDING_PODS = "pods (pending, every namespace)"
# The Gap's resource when the pods bound to nodes cannot be listed: what NodeResourcesFit subtracts from a node's allocatable.
BOUND_PODS = "pods (bound to nodes, every namespace)"
# The Gaps' resources of the driver piece's events: the DaemonSet controller's FailedCreate events (every namespace),
# and the kubelets' Starting events, stored in namespace default as every event of a cluster-scoped object
DAEMONSET_EVENTS = "events (FailedCreate of DaemonSets, every namespace)"
NODE_EVENTS = "events (Starting of Nodes, namespace default)"
# The Gap's resource when the DeviceTaintRules cannot be read (gather/plan.py): where the scheduler applies them, a
# rule may taint any device
TAINT_RULES = "devicetaintrules.resource.k8s.io"


@dataclass(frozen=True)
class Gap:
    """Something that could not be read (RBAC, missing API): analysis says so instead of guessing."""

    verb: str
    resource: str  # e.g. "resourceslices.resource.k8s.io"
    namespace: str | None
    reason: str  # "forbidden", "not-served", "error"
    message: str

    def to_dict(self) -> dict:
        return {
            "verb": self.verb,
            "resource": self.resource,
            "namespace": self.namespace,
            "reason": self.reason,
            "message": self.message,
        }


@dataclass(frozen=True)
class Snapshot:
    """API objects as raw dicts in the resource.k8s.io/v1 shape (older versions are normalised on
    the way in). Treat every dict as read-only."""

    pods: tuple = ()
    claims: tuple = ()
    templates: tuple = ()
    classes: tuple = ()
    slices: tuple = ()
    nodes: tuple = ()
    events: tuple = ()  # normalised, see model/normalize.py
    taint_rules: tuple = ()
    workloads: tuple = ()  # Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs: who owns the pods
    quotas: tuple = ()  # ResourceQuotas of the namespace (device-class and extended-resource quotas)
    # ResourcePoolStatusRequests (resource.k8s.io/v1alpha3, KEP-5677) that exist: upstream's pool counts, shown
    # beside kubectl-dra's own by `devices` (read when served and readable; never created)
    pool_status_requests: tuple = ()
    # PodGroups (scheduling.k8s.io v1alpha2 in 1.36, v1beta1 from 1.37): the gangs of pending pods that name one
    podgroups: tuple = ()
    gaps: tuple = ()
    # Optional reads that were made, complete (an empty answer means none): "daemonsets" (every namespace; the
    # pods of those that run kubelet plugins come with the bound pods, below)
    listed: frozenset = frozenset()
    source: str = "files"  # "files", "live", or "bundle" (a kubectl dra dump of a live cluster)
    server_version: str | None = None
    resource_api_version: str | None = None  # which resource.k8s.io version was read
    observed_at: str | None = None  # RFC 3339 UTC time of a live gather (None for files): "how long has it waited"
    namespace: str | None = None  # live: the namespace the named object was looked up in
    # The pods bound to every node are in pods (a live read, or a bundle of one, listed them): a node without
    # one has none. Otherwise (files) only the nodes some pod of the input names are known (analyze/pod/fit.py).
    bound_pods: bool = False
    # Claims (namespace/name) whose status.allocation is not the cluster's but the queue's estimate: the pods ahead
    # placed as the dry-run placed them (queue/report.py materialized). Their devices "go to" them; none is allocated.
    estimated: frozenset = frozenset()

    def absent(self, resource: str) -> Gap | None:
        """The Gap of a kind the input holds no object of (gather/files.py absent_gaps), e.g. "events": None when
        the kind was read (live, a bundle) or the input holds some."""
        return next((g for g in self.gaps if g.resource == resource and g.reason == "absent"), None)
