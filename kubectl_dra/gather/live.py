"""Live input: what explain, match, status, devices and dump read from a cluster, as raw JSON dicts: every kind
listed once, the lists in parallel (gather/client.py: GETs, retries, pagination; gather/kubeconfig.py and
gather/transport.py: credentials, TLS, proxies)."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timezone
from urllib.parse import quote

from kubectl_dra.errors import DraError
from kubectl_dra.gather.client import PAGE, Client, ListRecord, _Forbidden
from kubectl_dra.model.labels import selector_string
from kubectl_dra.model.objects import check_shapes, snapshot_from_objects
from kubectl_dra.model.scope import base_namespace, only_namespace, qualified
from kubectl_dra.model.snapshot import BOUND_PODS, PENDING_PODS, Gap, Snapshot

# The workloads a dump includes (who owns the pods): (kind, API base, resource)
WORKLOAD_LISTS = (
    ("Deployment", "/apis/apps/v1", "deployments"),
    ("ReplicaSet", "/apis/apps/v1", "replicasets"),
    ("StatefulSet", "/apis/apps/v1", "statefulsets"),
    ("DaemonSet", "/apis/apps/v1", "daemonsets"),
    ("Job", "/apis/batch/v1", "jobs"),
)
RESOURCE_VERSIONS = ("v1", "v1beta2", "v1beta1")


def _progress(enabled: bool, text: str) -> None:
    """One line on the terminal, rewritten in place: cut to the terminal's width (a line that wraps cannot be
    cleared with a carriage return)."""
    if enabled:
        import shutil

        width = shutil.get_terminal_size((80, 24)).columns
        if len(text) >= width:
            text = text[: max(width - 4, 0)] + "..."
        sys.stderr.write(f"\r\x1b[2K{text}")
        sys.stderr.flush()


def gather_live(**kw):
    """_gather_live, with its progress line cleared when it fails (the error then starts a line of its own)."""
    try:
        return _gather_live(**kw)
    except BaseException:
        _progress(kw.get("progress", False), "")
        raise


def _gather_live(
    *,
    kubeconfig,
    context,
    namespace,
    timeout,
    chunk_size=PAGE,
    pod_name=None,
    claim_name=None,
    all_namespaces=False,
    progress=False,
    selector=None,
    workload=None,
    partial=False,
    watch=False,
    everything=False,
    raw_out: list | None = None,
    events=True,
    while_waiting=None,
    pending_pods=False,
    drivers=False,
    bound_pods=False,
):
    """Fetch what explain/match need: one named pod or claim, or the pods a label selector picks (in the namespace,
    or every namespace with all_namespaces). Missing permissions become Gaps, not failures. partial (the scan): when
    pods may not be listed in all namespaces, list them namespace by namespace and keep the refusals as Gaps.
    everything (dump): also the workloads that own pods and the namespace's ResourceQuotas; raw_out gets every
    object as the API returned it (events not normalised). events=False: no pod events are listed (devices never
    reads them). while_waiting(server_version), when given, runs in this thread once the lists are sent (work
    that needs none of their answers: loading the analysis); its exceptions are not raised. It may return a
    function (kind, items) that each page listed after that is handed to as it arrives (work on the objects that
    the analysis would do later, such as warming its caches); its exceptions are not raised either. pending_pods:
    also the pods no node is assigned to yet, in every namespace (the scheduler's queue, analyze/queue.py); a
    refusal is a Gap of its own (PENDING_PODS), not one of the pods asked about. bound_pods: also the pods bound to
    a node that have not finished, in every namespace (what NodeResourcesFit subtracts from a node's allocatable,
    analyze/fit.py); a refusal is a Gap of its own (BOUND_PODS). drivers (explain pod; dump always): the DaemonSets
    of every namespace (analyze/driver.py: their pods on the nodes are among the bound pods)."""
    c = Client(kubeconfig, context, timeout, chunk_size)
    checked: dict = {}  # the listed objects whose shape was checked as their page arrived (id() -> object)
    warm: list = []

    def on_page(kind: str, items: list) -> None:
        check_shapes(items, checked)
        for fn in warm:
            try:
                fn(kind, items)
            except Exception:  # noqa: BLE001 - the analysis that follows meets and reports the same failure
                pass

    c.on_page = on_page
    if watch:
        c.record = []
    namespace = base_namespace(namespace, c.conn.namespace)  # -n, else the context's, as kubectl (model/scope.py)
    gaps: list[Gap] = []
    _progress(progress, "Discovering resource.k8s.io ...")
    # Discovery, the server's version and the named pod are independent: one round trip for the three. Their
    # answers are read in this order, so an error says what it said when they went one after another.
    pre = ThreadPoolExecutor(max_workers=4)
    asked_group = pre.submit(c.get, "/apis/resource.k8s.io")
    asked_version = pre.submit(c.get, "/version")
    asked_pod = None
    if pod_name is not None and not all_namespaces:
        asked_pod = pre.submit(c.get, f"/api/v1/namespaces/{quote(namespace)}/pods/{quote(pod_name)}")
    # The slices are the longest list (a page after the other): asked for with the discovery, at the version every
    # supported server serves; kept only when the discovery confirms it (not with -w, which records each list).
    early_slices = None
    if c.record is None:
        early_slices = pre.submit(c.list, f"/apis/resource.k8s.io/{RESOURCE_VERSIONS[0]}/resourceslices",
                                  "ResourceSlice", f"resource.k8s.io/{RESOURCE_VERSIONS[0]}")  # fmt: skip
    pre.shutdown(wait=False)
    try:
        group = asked_group.result()
        served = {v.get("version") for v in group.get("versions") or []}
    except _Forbidden:
        served = set()
    rv = next((v for v in RESOURCE_VERSIONS if v in served), None)
    server_version = None
    try:
        server_version = asked_version.result().get("gitVersion")
    except _Forbidden:
        pass
    if rv is None:
        gaps.append(
            Gap(
                "get",
                "resource.k8s.io",
                None,
                "not-served",
                "the server does not serve resource.k8s.io/v1, v1beta2 or v1beta1",
            )
        )
    api = f"resource.k8s.io/{rv}" if rv else None
    objs: list[dict] = []

    # The object asked about comes first; without it there is nothing to explain.
    pod = None
    if pod_name is not None:
        if all_namespaces:
            found = c.list("/api/v1/pods", "Pod", "v1", {"fieldSelector": f"metadata.name={pod_name}"})
            only_namespace("Pod", pod_name, [p["metadata"]["namespace"] for p in found])
            pod = found[0]
        else:
            try:
                pod = asked_pod.result()
            except _Forbidden as e:
                if e.status == 404:
                    raise DraError(f'pods "{pod_name}" not found in namespace "{namespace}"') from None
                raise DraError(f'cannot get pod "{pod_name}" in namespace "{namespace}": {e.message}') from None
        pod.setdefault("kind", "Pod")
        pod.setdefault("apiVersion", "v1")
        namespace = pod["metadata"].get("namespace") or namespace
        if c.record is not None:
            if not all_namespaces:  # -A found it through a list, recorded already
                c.record.append(
                    ListRecord(
                        f"/api/v1/namespaces/{quote(namespace)}/pods",
                        "Pod",
                        "v1",
                        {"fieldSelector": f"metadata.name={pod_name}"},
                        pod["metadata"].get("resourceVersion") or "",
                        [pod],
                    )
                )
        else:
            objs.append(pod)
    if workload is not None:
        # (kind, API base, resource, name): the workload, its ReplicaSets for a Deployment, then its pods by selector.
        kind, api_base, resource, wname = workload
        if all_namespaces:  # -A with a bare name: the one namespace that has it, as for a pod
            found = c.list(f"{api_base}/{resource}", kind, api_base[len("/apis/") :] or "v1",
                           {"fieldSelector": f"metadata.name={wname}"})  # fmt: skip
            namespace = only_namespace(kind, wname, [w["metadata"]["namespace"] for w in found])
        try:
            w = c.get(f"{api_base}/namespaces/{quote(namespace)}/{resource}/{quote(wname)}")
        except _Forbidden as e:
            if e.status == 404:
                raise DraError(f'{qualified(kind)} "{wname}" not found in namespace "{namespace}"') from None
            raise DraError(f'cannot get {resource} "{wname}" in namespace "{namespace}": {e.message}') from None
        w.setdefault("kind", kind)
        objs.append(w)
        selector = selector_string((w.get("spec") or {}).get("selector"))
        all_namespaces = False
        if kind == "Deployment":
            try:
                objs.extend(
                    c.list(
                        f"/apis/apps/v1/namespaces/{quote(namespace)}/replicasets",
                        "ReplicaSet",
                        "apps/v1",
                        {"labelSelector": selector},
                    )
                )
            except _Forbidden as e:
                raise DraError(f"cannot list replicasets: {e.message}") from None
    if pod_name is None and selector is not None:
        where = "/api/v1/pods" if all_namespaces else f"/api/v1/namespaces/{quote(namespace)}/pods"
        try:
            found = c.list(where, "Pod", "v1", {"labelSelector": selector})
        except _Forbidden as e:
            if not (partial and all_namespaces):
                raise DraError(f"cannot list pods: {e.message}") from None
            found = _pods_per_namespace(c, selector, namespace, e, gaps)
        for p in found:
            p.setdefault("kind", "Pod")
            p.setdefault("apiVersion", "v1")
            objs.append(p)

    jobs = {}

    def add(key, fn, verb, resource, ns=None):
        jobs[key] = (fn, verb, resource, ns)

    if api:
        base = f"/apis/{api}"
        add(
            "claims",
            lambda: c.list(f"{base}/resourceclaims", "ResourceClaim", api),
            "list",
            "resourceclaims.resource.k8s.io",
        )
        every_ns = selector is not None and all_namespaces
        add(
            "templates",
            lambda: c.list(
                f"{base}/resourceclaimtemplates"
                if every_ns
                else f"{base}/namespaces/{quote(namespace)}/resourceclaimtemplates",
                "ResourceClaimTemplate",
                api,
            ),
            "list",
            "resourceclaimtemplates.resource.k8s.io",
            None if every_ns else namespace,
        )
        add(
            "classes",
            lambda: c.list(f"{base}/deviceclasses", "DeviceClass", api),
            "list",
            "deviceclasses.resource.k8s.io",
        )
        add(
            "slices",
            (lambda: early_slices.result())
            if early_slices is not None and rv == RESOURCE_VERSIONS[0]
            else (lambda: c.list(f"{base}/resourceslices", "ResourceSlice", api)),
            "list",
            "resourceslices.resource.k8s.io",
        )
    add("nodes", lambda: c.list("/api/v1/nodes", "Node", "v1"), "list", "nodes")
    rule_versions = [v for v in ("v1", "v1beta2", "v1alpha3") if v in served]
    if rule_versions:
        add("taint_rules", lambda: _taint_rules(c, rule_versions), "list", "devicetaintrules.resource.k8s.io")
    if "v1alpha3" in served:
        add("pool_status_requests", lambda: _pool_status_requests(c), "list", "resourcepoolstatusrequests")
    if selector is not None and events:
        events_path = "/api/v1/events" if all_namespaces else f"/api/v1/namespaces/{quote(namespace)}/events"
        add(
            "events",
            lambda: c.list(events_path, "Event", "v1", {"fieldSelector": "involvedObject.kind=Pod"}),
            "list",
            "events",
            None if all_namespaces else namespace,
        )
    if workload is not None:
        # Why pods may be missing: the controller's FailedCreate events and the namespace's quotas.
        ev_kind = "ReplicaSet" if workload[0] == "Deployment" else workload[0]
        add(
            "workload_events",
            lambda: c.list(
                f"/api/v1/namespaces/{quote(namespace)}/events",
                "Event",
                "v1",
                {"fieldSelector": f"involvedObject.kind={ev_kind}"},
            ),
            "list",
            "events",
            namespace,
        )
        add(
            "quotas",
            lambda: c.list(f"/api/v1/namespaces/{quote(namespace)}/resourcequotas", "ResourceQuota", "v1"),
            "list",
            "resourcequotas",
            namespace,
        )
    if everything:
        scope = "" if all_namespaces else f"/namespaces/{quote(namespace)}"
        for kind, base_path, resource in WORKLOAD_LISTS:
            add(
                f"dump_{resource}",
                lambda b=base_path, r=resource, k=kind: c.list(f"{b}{scope}/{r}", k, b[len("/apis/") :]),
                "list",
                resource,
                None if all_namespaces else namespace,
            )
        add(
            "quotas",
            lambda: c.list(f"/api/v1{scope}/resourcequotas", "ResourceQuota", "v1"),
            "list",
            "resourcequotas",
            None if all_namespaces else namespace,
        )
    if pod is not None and events:
        sel = f"involvedObject.kind=Pod,involvedObject.name={pod_name}"
        add(
            "events",
            lambda: c.list(f"/api/v1/namespaces/{quote(namespace)}/events", "Event", "v1", {"fieldSelector": sel}),
            "list",
            "events",
            namespace,
        )
    if drivers or everything:
        # The driver piece (analyze/driver.py): the DaemonSets that may run a driver's kubelet plugin, in any
        # namespace (their pods, once the DaemonSets are known, below).
        add(
            "plugin_daemonsets",
            lambda: c.list("/apis/apps/v1/daemonsets", "DaemonSet", "apps/v1"),
            "list",
            "daemonsets.apps",
        )
    if pending_pods:
        add(
            "pending_pods",
            lambda: c.list("/api/v1/pods", "Pod", "v1", {"fieldSelector": "spec.nodeName="}),
            "list",
            PENDING_PODS,
        )
    if bound_pods:
        # One list for every node, not one per node: the nodes where the claims fit are known only after the
        # analysis. The scheduler's cache holds the same pods (assigned, not Succeeded or Failed).
        add(
            "bound_pods",
            lambda: c.list(
                "/api/v1/pods",
                "Pod",
                "v1",
                {"fieldSelector": "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"},
            ),
            "list",
            BOUND_PODS,
        )
    _progress(progress, f"Fetching {', '.join(jobs)} ...")
    results = {}
    with ThreadPoolExecutor(max_workers=min(6, len(jobs) or 1)) as pool:
        futures = {k: pool.submit(fn) for k, (fn, *_rest) in jobs.items()}
        if while_waiting is not None:
            try:
                fn = while_waiting(server_version)
                if fn is not None:
                    warm.append(fn)
            except Exception:  # the analysis that follows meets and reports the same failure
                pass
        for k, fut in futures.items():
            fn, verb, resource, ns = jobs[k]
            try:
                results[k] = fut.result()
            except _Forbidden as e:
                gaps.append(Gap(verb, resource, ns, "forbidden" if e.status == 403 else "not-found", e.message))
    # Without cluster-wide claims, at least the namespace's own claims (devices in use elsewhere stay unknown).
    if api and "claims" not in results:
        try:
            results["claims"] = c.list(
                f"/apis/{api}/namespaces/{quote(namespace)}/resourceclaims", "ResourceClaim", api
            )
        except _Forbidden as e:
            gaps.append(Gap("list", "resourceclaims.resource.k8s.io", namespace, "forbidden", e.message))
    if (
        claim_name is not None
        and api
        and not any(
            (o["metadata"].get("namespace") == namespace and o["metadata"].get("name") == claim_name)
            for o in results.get("claims", [])
        )
    ):
        try:
            one = c.get(f"/apis/{api}/namespaces/{quote(namespace)}/resourceclaims/{quote(claim_name)}")
            one.setdefault("kind", "ResourceClaim")
            one.setdefault("apiVersion", api)
            results.setdefault("claims", []).append(one)
        except _Forbidden as e:
            if e.status != 404:
                gaps.append(Gap("get", "resourceclaims.resource.k8s.io", namespace, "forbidden", e.message))
    _progress(progress, "")
    for k in (
        "claims",
        "templates",
        "classes",
        "slices",
        "nodes",
        "events",
        "workload_events",
        "quotas",
        "taint_rules",
        "pool_status_requests",
        *(k for k in results if k.startswith("dump_")),
    ):
        objs.extend(results.get(k, []))
    objs.extend(_podgroups(c, [*objs, *results.get("pending_pods", [])], gaps))
    known = {o["metadata"].get("uid") for o in objs if o.get("kind") == "DaemonSet"}
    objs.extend(d for d in results.get("plugin_daemonsets", []) if d["metadata"].get("uid") not in known)
    listed = {name for key, name in _LISTED.items() if key in results}
    have = {(p["metadata"].get("namespace"), p["metadata"].get("name")) for p in objs if p.get("kind") == "Pod"}
    for p in [*results.get("pending_pods", []), *results.get("bound_pods", [])]:
        key = (p["metadata"].get("namespace"), p["metadata"].get("name"))
        if key not in have:
            have.add(key)
            p.setdefault("kind", "Pod")
            p.setdefault("apiVersion", "v1")
            objs.append(p)
    meta = {
        "gaps": tuple(gaps),
        "server_version": server_version,
        "resource_api_version": rv,
        "namespace": namespace,
        "listed": frozenset(listed),
        "bound_pods": "bound_pods" in results,
    }
    if raw_out is not None:
        raw_out.extend(objs)
        raw_out.append({"discovery": {"resource.k8s.io": sorted(served)}})
    if watch:
        from kubectl_dra.gather.watch import LiveSession

        static = [o for o in objs if o.get("kind") in ("Deployment", "StatefulSet", "DaemonSet", "Job", "ReplicaSet")]
        static = [o for o in static if not any(o is x for r in c.record for x in r.items)]
        session = LiveSession(c, c.record, static, meta)
        return session.snapshot(), session
    return live_snapshot(objs, meta, checked)


def live_snapshot(objs: list[dict], meta: dict, checked: dict | None = None) -> Snapshot:
    """The snapshot of a live gather (and of each watch update): the objects, what could not be read, and when.
    checked: see snapshot_from_objects."""
    seen: set = set()
    once = []
    for o in objs:  # a pod in two lists (the named one, the bound ones): once, or a node counts it twice
        if o.get("kind") == "Pod":
            m = o.get("metadata") or {}
            key = (m.get("namespace"), m.get("name"))
            if key in seen:
                continue
            seen.add(key)
        once.append(o)
    snap = snapshot_from_objects(once, meta["namespace"], source="live", checked=checked)
    observed = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return replace(snap, observed_at=observed, **meta)


def _pods_per_namespace(c: Client, selector: str, namespace: str, refused: "_Forbidden", gaps: list) -> list[dict]:
    """Pods namespace by namespace, for a user who may not list them cluster-wide (a namespace-scoped
    ServiceAccount): every namespace it may list, else only its own; each refusal is a Gap the scan reports."""
    try:
        names = sorted(n["metadata"]["name"] for n in c.list("/api/v1/namespaces", "Namespace", "v1"))
    except _Forbidden as e:
        gaps.append(
            Gap(
                "list",
                "pods",
                None,
                "forbidden",
                f"{refused.message}; namespaces cannot be listed either ({e.message}), so only namespace "
                f"{namespace} was scanned",
            )
        )
        names = [namespace]
    out: list[dict] = []
    for ns in names:
        try:
            out.extend(c.list(f"/api/v1/namespaces/{quote(ns)}/pods", "Pod", "v1", {"labelSelector": selector}))
        except _Forbidden as e:
            gaps.append(Gap("list", "pods", ns, "forbidden" if e.status == 403 else "not-found", e.message))
    return out


# The optional lists (job key -> Snapshot.listed name) whose answer, once read, is complete
_LISTED = {"plugin_daemonsets": "daemonsets"}


def _podgroups(c: Client, pods: list[dict], gaps: list) -> list[dict]:
    """The PodGroups (gangs: analyze/queue/gang.py), listed only when a pod names one (spec.schedulingGroup): at
    v1beta1 (1.37+), else v1alpha2 (1.36). A refusal is a Gap; a group not read stays unknown to the queue."""
    if not any(((p.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName") for p in pods):
        return []
    last = None
    for v in ("v1beta1", "v1alpha2"):
        try:
            return c.list(f"/apis/scheduling.k8s.io/{v}/podgroups", "PodGroup", f"scheduling.k8s.io/{v}")
        except _Forbidden as e:
            last = e
            if e.status != 404:
                break
    gaps.append(Gap("list", "podgroups.scheduling.k8s.io", None, "forbidden" if last.status == 403 else "not-served",
                    last.message))  # fmt: skip
    return []


def _taint_rules(c: Client, versions: list[str]) -> list[dict]:
    """DeviceTaintRules live in whichever resource.k8s.io version serves them (v1alpha3 in 1.34/1.35,
    v1beta2 in 1.36, v1 later), and only with their feature gate: 404 everywhere means none."""
    for v in versions:
        try:
            return c.list(f"/apis/resource.k8s.io/{v}/devicetaintrules", "DeviceTaintRule", f"resource.k8s.io/{v}")
        except _Forbidden as e:
            if e.status != 404:
                raise
    return []


def _pool_status_requests(c: Client) -> list[dict]:
    """ResourcePoolStatusRequests (alpha, gate DRAResourcePoolStatus): only read, and only where served and
    readable; an alpha API that is absent or refused is no gap in the answer, so it ends as none."""
    try:
        return c.list(
            "/apis/resource.k8s.io/v1alpha3/resourcepoolstatusrequests",
            "ResourcePoolStatusRequest",
            "resource.k8s.io/v1alpha3",
        )
    except _Forbidden:
        return []
