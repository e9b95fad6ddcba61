"""The list plan of a live gather: which lists an answer needs, as data, decided without a server (plan), and the
one executor that runs them in parallel and turns each refusal into a Gap (run). gather/live.py resolves the object
asked about first (a pod, a workload, the pods of a selector), then plans, runs and assembles."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import quote

from kubectl_dra.gather.client import Client, _Forbidden
from kubectl_dra.model.kinds import WORKLOADS
from kubectl_dra.model.snapshot import BOUND_PODS, DAEMONSET_EVENTS, NODE_EVENTS, PENDING_PODS, TAINT_RULES, Gap

# The workloads a dump includes (who owns the pods): (kind, API base, resource)
WORKLOAD_LISTS = tuple((k.kind, k.api_base, k.plural) for k in WORKLOADS if k.listed)
# The resource.k8s.io versions read, newest first (the first one the server serves is used)
RESOURCE_VERSIONS = ("v1", "v1beta2", "v1beta1")
# The optional lists (job key -> Snapshot.listed name) whose answer, once read, is complete
LISTED = {"plugin_daemonsets": "daemonsets", "plugin_events": "daemonset_events", "node_events": "node_events"}
# The order in which the answers of the plan join the snapshot's objects (the dump lists follow, then the rest)
JOIN_ORDER = (
    "claims",
    "templates",
    "classes",
    "slices",
    "nodes",
    "events",
    "workload_events",
    "plugin_events",
    "node_events",
    "quotas",
    "taint_rules",
    "pool_status_requests",
)


@dataclass(frozen=True)
class ListJob:
    """One list of the plan. key: the answer's name (and its word in the progress line). A refusal is
    Gap(verb, resource, namespace, "forbidden" | "not-found"), unless optional (an alpha API: none, no gap).
    fallbacks: (path, apiVersion) pairs tried in order when a path answers 404; missing_ok: 404 on every path
    means none (a feature gate that is off)."""

    key: str
    path: str
    kind: str
    api_version: str
    resource: str
    query: tuple[tuple[str, str], ...] = ()
    namespace: str | None = None
    verb: str = "list"
    fallbacks: tuple[tuple[str, str], ...] = ()
    missing_ok: bool = False
    optional: bool = False


@dataclass(frozen=True)
class Needs:
    """What the answer needs beyond the inventory, once the object asked about is resolved. namespace: the
    namespace of the answer (the named pod's, or -n, or the context's); all_namespaces: -A still in force (a
    workload narrows it to its own namespace); selector: the pods' label selector, if pods were picked by one;
    pod_name: a pod that was read; workload_kind: the kind of a workload that was read."""

    namespace: str
    all_namespaces: bool = False
    selector: str | None = None
    pod_name: str | None = None
    workload_kind: str | None = None
    events: bool = True
    everything: bool = False
    drivers: bool = False
    pending_pods: bool = False
    bound_pods: bool = False


# long: the plan: one job per list, in the order they are asked for
def plan(needs: Needs, api: str | None, served: frozenset[str] | set[str]) -> list[ListJob]:
    """The lists, in the order they are asked for and read (a later job with the key of an earlier one replaces
    it in its place). api: "resource.k8s.io/<version>" that is read, None when the server serves none; served:
    the resource.k8s.io versions the server serves."""
    ns = needs.namespace
    in_ns = f"/namespaces/{quote(ns)}"
    jobs: dict[str, ListJob] = {}

    def add(job: ListJob) -> None:
        jobs[job.key] = job

    if api:
        base = f"/apis/{api}"
        every_ns = needs.selector is not None and needs.all_namespaces
        add(ListJob("claims", f"{base}/resourceclaims", "ResourceClaim", api, "resourceclaims.resource.k8s.io"))
        add(
            ListJob(
                "templates",
                f"{base}/resourceclaimtemplates" if every_ns else f"{base}{in_ns}/resourceclaimtemplates",
                "ResourceClaimTemplate",
                api,
                "resourceclaimtemplates.resource.k8s.io",
                namespace=None if every_ns else ns,
            )
        )
        add(ListJob("classes", f"{base}/deviceclasses", "DeviceClass", api, "deviceclasses.resource.k8s.io"))
        add(ListJob("slices", f"{base}/resourceslices", "ResourceSlice", api, "resourceslices.resource.k8s.io"))
    add(ListJob("nodes", "/api/v1/nodes", "Node", "v1", "nodes"))
    # DeviceTaintRules live in whichever version serves them (v1alpha3 in 1.34/1.35, v1beta2 in 1.36, v1 later),
    # and only with their feature gate: 404 everywhere means none.
    rules = [(f"/apis/resource.k8s.io/{v}/devicetaintrules", f"resource.k8s.io/{v}")
             for v in ("v1", "v1beta2", "v1alpha3") if v in served]  # fmt: skip
    if rules:
        (path, version), *rest = rules
        add(ListJob("taint_rules", path, "DeviceTaintRule", version, TAINT_RULES,
                    fallbacks=tuple(rest), missing_ok=True))  # fmt: skip
    if "v1alpha3" in served:
        # ResourcePoolStatusRequests (alpha, gate DRAResourcePoolStatus): only read where served and readable.
        add(ListJob("pool_status_requests", "/apis/resource.k8s.io/v1alpha3/resourcepoolstatusrequests",
                    "ResourcePoolStatusRequest", "resource.k8s.io/v1alpha3", "resourcepoolstatusrequests",
                    optional=True))  # fmt: skip
    if needs.selector is not None and needs.events:
        add(
            ListJob(
                "events",
                "/api/v1/events" if needs.all_namespaces else f"/api/v1{in_ns}/events",
                "Event",
                "v1",
                "events",
                query=(("fieldSelector", "involvedObject.kind=Pod"),),
                namespace=None if needs.all_namespaces else ns,
            )
        )
    if needs.workload_kind is not None:
        # Why pods may be missing: the controller's FailedCreate events and the namespace's quotas.
        ev_kind = "ReplicaSet" if needs.workload_kind == "Deployment" else needs.workload_kind
        add(ListJob("workload_events", f"/api/v1{in_ns}/events", "Event", "v1", "events",
                    query=(("fieldSelector", f"involvedObject.kind={ev_kind}"),), namespace=ns))  # fmt: skip
        add(ListJob("quotas", f"/api/v1{in_ns}/resourcequotas", "ResourceQuota", "v1", "resourcequotas", namespace=ns))
    if needs.everything:
        scope = "" if needs.all_namespaces else in_ns
        where = None if needs.all_namespaces else ns
        for kind, base_path, resource in WORKLOAD_LISTS:
            add(ListJob(f"dump_{resource}", f"{base_path}{scope}/{resource}", kind, base_path[len("/apis/") :],
                        resource, namespace=where))  # fmt: skip
        add(ListJob("quotas", f"/api/v1{scope}/resourcequotas", "ResourceQuota", "v1", "resourcequotas",
                    namespace=where))  # fmt: skip
    if needs.pod_name is not None and needs.events:
        sel = f"involvedObject.kind=Pod,involvedObject.name={needs.pod_name}"
        add(ListJob("events", f"/api/v1{in_ns}/events", "Event", "v1", "events", query=(("fieldSelector", sel),),
                    namespace=ns))  # fmt: skip
    if needs.drivers or needs.everything:
        # The driver piece (analyze/pod/driver.py): the DaemonSets that may run a driver's kubelet plugin, in any
        # namespace (their pods are among the bound pods).
        add(ListJob("plugin_daemonsets", "/apis/apps/v1/daemonsets", "DaemonSet", "apps/v1", "daemonsets.apps"))
        # Why such a DaemonSet has no pod on a node: the DaemonSet controller's FailedCreate events (PodSecurity,
        # quota), few and in every namespace, as the DaemonSets are.
        add(ListJob("plugin_events", "/api/v1/events", "Event", "v1", DAEMONSET_EVENTS,
                    query=(("fieldSelector", "involvedObject.kind=DaemonSet,reason=FailedCreate"),)))  # fmt: skip
        # A kubelet that restarted wiped its node's ResourceSlices: its "Starting" event, one per start, stored in
        # namespace default (an event about a cluster-scoped object; client-go record makeEvent).
        add(ListJob("node_events", "/api/v1/namespaces/default/events", "Event", "v1", NODE_EVENTS,
                    query=(("fieldSelector", "involvedObject.kind=Node,reason=Starting"),), namespace="default"))  # fmt: skip
    if needs.pending_pods:
        add(ListJob("pending_pods", "/api/v1/pods", "Pod", "v1", PENDING_PODS,
                    query=(("fieldSelector", "spec.nodeName="),)))  # fmt: skip
    if needs.bound_pods:
        # One list for every node, not one per node: the nodes where the claims fit are known only after the
        # analysis. The scheduler's cache holds the same pods (assigned, not Succeeded or Failed).
        add(ListJob("bound_pods", "/api/v1/pods", "Pod", "v1", BOUND_PODS,
                    query=(("fieldSelector", "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"),)))  # fmt: skip
    # A key added again keeps its first place in the order (a dict's), with the later definition
    return list(jobs.values())


def fetch(c: Client, job: ListJob) -> list[dict]:
    """One job's list, through its fallbacks; a refusal raises _Forbidden (run turns it into a Gap)."""
    query = dict(job.query) if job.query else None
    for path, version in ((job.path, job.api_version), *job.fallbacks):
        try:
            return c.list(path, job.kind, version, query)
        except _Forbidden as e:
            if job.optional:
                return []
            if e.status != 404 or not job.missing_ok:
                raise
    return []


def run(c: Client, jobs: list[ListJob], started: dict[str, Future] | None = None, while_running=None):
    """Every job in parallel (at most 6 lists at once; each list pipelines its own pages), read in the plan's
    order: (answers by key, the Gaps of the refused ones). started: jobs already asked for (their future is used
    as is); while_running(), when given, runs in this thread once every list is sent."""
    started = started or {}
    results: dict[str, list[dict]] = {}
    gaps: list[Gap] = []
    with ThreadPoolExecutor(max_workers=min(6, len(jobs) or 1)) as pool:
        futures = {j.key: started.get(j.key) or pool.submit(fetch, c, j) for j in jobs}
        if while_running is not None:
            while_running()
        for j in jobs:
            try:
                results[j.key] = futures[j.key].result()
            except _Forbidden as e:
                gaps.append(Gap(j.verb, j.resource, j.namespace, "forbidden" if e.status == 403 else "not-found",
                                e.message))  # fmt: skip
    return results, gaps
