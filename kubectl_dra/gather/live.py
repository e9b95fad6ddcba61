"""Live input: what explain, match, status, devices and dump read from a cluster (a LiveRequest in, one Gathered
out: gather/result.py), as raw JSON dicts: every kind listed once, the lists in parallel (gather/client.py: GETs,
retries, pagination; gather/kubeconfig.py and gather/transport.py: credentials, TLS, proxies)."""

from __future__ import annotations

import sys
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import quote

from kubectl_dra.errors import DraError
from kubectl_dra.gather.assemble import live_snapshot
from kubectl_dra.gather.client import PAGE, Client, ListRecord, _Forbidden
from kubectl_dra.gather.plan import JOIN_ORDER, LISTED, RESOURCE_VERSIONS, Needs, plan, run
from kubectl_dra.gather.result import Gathered, LiveRequest
from kubectl_dra.model.kinds import WORKLOAD_KINDS
from kubectl_dra.model.labels import selector_string
from kubectl_dra.model.objects import check_shapes
from kubectl_dra.model.scope import base_namespace, only_namespace, qualified
from kubectl_dra.model.snapshot import Gap


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


def gather_live(
    request: LiveRequest, *, kubeconfig, context, timeout, chunk_size=PAGE, progress=False, while_waiting=None
) -> Gathered:
    """What the request asks for, from the cluster: Missing permissions become Gaps, not failures. kubeconfig,
    context, timeout and chunk_size: how to reach it (gather/kubeconfig.py, gather/client.py); progress: a line on
    the terminal while it runs, cleared when it ends or fails (an error then starts a line of its own).

    while_waiting(server_version), when given, runs in this thread once the lists are sent (work that needs none of
    their answers: loading the analysis); its exceptions are not raised. It may return a function (kind, items)
    that each page listed after that is handed to as it arrives (work on the objects that the analysis would do
    later, such as warming its caches); its exceptions are not raised either."""
    try:
        return _gather_live(request, Client(kubeconfig, context, timeout, chunk_size), progress, while_waiting)
    except BaseException:
        _progress(progress, "")
        raise


@dataclass(frozen=True)
class _Asked:
    """The first round trip: what the server serves, its version, and the requests sent with it."""

    served: frozenset
    rv: str | None  # the resource.k8s.io version read (None: none served)
    server_version: str | None
    pod: Future | None  # the named pod (not with -A)
    slices: Future | None  # the slices at RESOURCE_VERSIONS[0] (not with -w)


@dataclass
class _Target:
    """The object asked about, read before anything else (without it there is nothing to explain): its objects
    (the pod; the workload and its ReplicaSets and pods; the pods of a selector), and the scope it settles."""

    objs: list
    namespace: str
    selector: str | None
    all_namespaces: bool
    pod: dict | None = None
    every_pod: bool = False  # every pod of every namespace was listed (-A, no label selector, not refused)


def _gather_live(r: LiveRequest, c: Client, progress: bool, while_waiting) -> Gathered:
    """The steps: ask (discovery, version, the named pod, the slices: one round trip), resolve the target, plan the
    lists (gather/plan.py), run them, read what a refusal leaves out another way, assemble."""
    checked: dict = {}  # the listed objects whose shape was checked as their page arrived (id() -> object)
    warm: list = []

    def on_page(kind: str, items: list) -> None:
        check_shapes(items, checked)
        for fn in warm:
            try:
                fn(kind, items)
            except Exception:  # the analysis that follows meets and reports the same failure
                pass

    c.on_page = on_page
    if r.watch:
        c.record = []
    namespace = base_namespace(r.namespace, c.conn.namespace)  # -n, else the context's, as kubectl (model/scope.py)
    _progress(progress, "Discovering resource.k8s.io ...")
    asked = _ask(c, namespace, r.pod_name if not r.all_namespaces else None)
    gaps: list[Gap] = []
    if asked.rv is None:
        gaps.append(Gap("get", "resource.k8s.io", None, "not-served",
                        "the server does not serve resource.k8s.io/v1, v1beta2 or v1beta1"))  # fmt: skip
    api = f"resource.k8s.io/{asked.rv}" if asked.rv else None
    t = _resolve(c, asked, namespace, r, gaps)
    needs = Needs(
        namespace=t.namespace,
        all_namespaces=t.all_namespaces,
        selector=t.selector,
        pod_name=r.pod_name if t.pod is not None else None,
        workload_kind=r.workload[0] if r.workload is not None else None,
        events=r.events,
        everything=r.everything,
        drivers=r.drivers,
        # every pod of every namespace listed already (status -A): it holds the pending and the bound ones
        # (watched too: the queue's pods ahead come and go, and a pod bound leaves this list for the next)
        pending_pods=r.pending_pods and not t.every_pod,
        bound_pods=r.bound_pods and not t.every_pod,
    )
    jobs = plan(needs, api, asked.served)
    _progress(progress, f"Fetching {', '.join(j.key for j in jobs)} ...")
    early = asked.slices is not None and asked.rv == RESOURCE_VERSIONS[0]

    def while_running() -> None:
        if while_waiting is not None:
            try:
                fn = while_waiting(asked.server_version)
                if fn is not None:
                    warm.append(fn)
            except Exception:  # the analysis that follows meets and reports the same failure
                pass

    results, refused = run(c, jobs, {"slices": asked.slices} if early else None, while_running)
    gaps.extend(refused)
    if api:
        _claims_another_way(c, api, t.namespace, r.claim_name, results, gaps)
    _progress(progress, "")
    objs = _assemble(c, t.objs, results, gaps)
    # The lists are done. A -w session keeps the client for hours: its callback would keep `checked`, and with it
    # every object listed here beside the one the watch replaces it with, and take in every page a relist decodes
    c.on_page = None
    meta = {
        "gaps": tuple(gaps),
        "server_version": asked.server_version,
        "resource_api_version": asked.rv,
        "namespace": t.namespace,
        "listed": frozenset(name for key, name in LISTED.items() if key in results),
        # every pod listed (devices: the pods of every namespace) holds every bound pod, the plugin pods included
        "bound_pods": "bound_pods" in results or t.every_pod,
    }
    raw = (*objs, {"discovery": {"resource.k8s.io": sorted(asked.served)}}) if r.everything else ()
    if r.watch:
        from kubectl_dra.gather.watch import LiveSession

        static = [o for o in objs if o.get("kind") in WORKLOAD_KINDS]
        static = [o for o in static if not any(o is x for rec in c.record for x in rec.items)]
        session = LiveSession(c, c.record, static, meta)
        return Gathered(session.snapshot(), t.namespace, session, raw)
    return Gathered(live_snapshot(objs, meta, checked), t.namespace, None, raw)


def _ask(c: Client, namespace: str, pod_name: str | None) -> _Asked:
    """Discovery, the server's version and the named pod are independent: one round trip for the three. Their
    answers are read in this order, so an error says what it said when they went one after another. The slices are
    the longest list (a page after the other): asked for with the discovery, at the version every supported server
    serves; kept only when the discovery confirms it (not with -w, which records each list)."""
    pre = ThreadPoolExecutor(max_workers=4)
    asked_group = pre.submit(c.get, "/apis/resource.k8s.io")
    asked_version = pre.submit(c.get, "/version")
    pod = None
    if pod_name is not None:
        pod = pre.submit(c.get, f"/api/v1/namespaces/{quote(namespace)}/pods/{quote(pod_name)}")
    slices = None
    if c.record is None:
        slices = pre.submit(c.list, f"/apis/resource.k8s.io/{RESOURCE_VERSIONS[0]}/resourceslices",
                            "ResourceSlice", f"resource.k8s.io/{RESOURCE_VERSIONS[0]}")  # fmt: skip
    pre.shutdown(wait=False)
    try:
        group = asked_group.result()
        served = frozenset(v.get("version") for v in group.get("versions") or [])
    except _Forbidden:
        served = frozenset()
    server_version = None
    try:
        server_version = asked_version.result().get("gitVersion")
    except _Forbidden:
        pass
    rv = next((v for v in RESOURCE_VERSIONS if v in served), None)
    return _Asked(served, rv, server_version, pod, slices)


def _resolve(c: Client, asked: _Asked, namespace: str, r: LiveRequest, gaps: list) -> _Target:
    """The object asked about: a named pod (its namespace becomes the answer's), a workload (its ReplicaSets for a
    Deployment, then its pods by its selector, in its namespace), or the pods a selector picks."""
    pod_name, workload, all_namespaces, partial = r.pod_name, r.workload, r.all_namespaces, r.partial
    t = _Target([], namespace, r.selector, all_namespaces)
    if pod_name is not None:
        t.pod = _named_pod(c, asked, namespace, pod_name, all_namespaces)
        t.namespace = t.pod["metadata"].get("namespace") or namespace
        if c.record is not None:
            if not all_namespaces:  # -A found it through a list, recorded already
                c.record.append(ListRecord(f"/api/v1/namespaces/{quote(t.namespace)}/pods", "Pod", "v1",
                                           {"fieldSelector": f"metadata.name={pod_name}"},
                                           t.pod["metadata"].get("resourceVersion") or "", [t.pod]))  # fmt: skip
        else:
            t.objs.append(t.pod)
    if workload is not None:
        _workload(c, workload, t)
    if pod_name is None and t.selector is not None:
        where = "/api/v1/pods" if t.all_namespaces else f"/api/v1/namespaces/{quote(t.namespace)}/pods"
        try:
            found = c.list(where, "Pod", "v1", {"labelSelector": t.selector})
        except _Forbidden as e:
            if not (partial and t.all_namespaces):
                raise DraError(f"cannot list pods: {e.message}") from None
            found = _pods_per_namespace(c, t.selector, t.namespace, e, gaps)
        else:
            t.every_pod = t.all_namespaces and not t.selector
        for p in found:
            p.setdefault("kind", "Pod")
            p.setdefault("apiVersion", "v1")
            t.objs.append(p)
    return t


def _named_pod(c: Client, asked: _Asked, namespace: str, pod_name: str, all_namespaces: bool) -> dict:
    """The named pod: asked for with the discovery, or with -A found by name in the one namespace that has it."""
    if all_namespaces:
        found = c.list("/api/v1/pods", "Pod", "v1", {"fieldSelector": f"metadata.name={pod_name}"})
        only_namespace("Pod", pod_name, [p["metadata"]["namespace"] for p in found])
        pod = found[0]
    else:
        try:
            pod = asked.pod.result()
        except _Forbidden as e:
            if e.status == 404:
                raise DraError(f'pods "{pod_name}" not found in namespace "{namespace}"') from None
            raise DraError(f'cannot get pod "{pod_name}" in namespace "{namespace}": {e.message}') from None
    pod.setdefault("kind", "Pod")
    pod.setdefault("apiVersion", "v1")
    return pod


def _workload(c: Client, workload: tuple, t: _Target) -> None:
    """(kind, API base, resource, name): the workload and, for a Deployment, its ReplicaSets; its selector then
    picks its pods, in its namespace only."""
    kind, api_base, resource, wname = workload
    if t.all_namespaces:  # -A with a bare name: the one namespace that has it, as for a pod
        found = c.list(f"{api_base}/{resource}", kind, api_base[len("/apis/") :] or "v1",
                       {"fieldSelector": f"metadata.name={wname}"})  # fmt: skip
        t.namespace = only_namespace(kind, wname, [w["metadata"]["namespace"] for w in found])
    try:
        w = c.get(f"{api_base}/namespaces/{quote(t.namespace)}/{resource}/{quote(wname)}")
    except _Forbidden as e:
        if e.status == 404:
            raise DraError(f'{qualified(kind)} "{wname}" not found in namespace "{t.namespace}"') from None
        raise DraError(f'cannot get {resource} "{wname}" in namespace "{t.namespace}": {e.message}') from None
    w.setdefault("kind", kind)
    t.objs.append(w)
    t.selector = selector_string((w.get("spec") or {}).get("selector"))
    t.all_namespaces = False
    if kind == "Deployment":
        try:
            t.objs.extend(c.list(f"/apis/apps/v1/namespaces/{quote(t.namespace)}/replicasets", "ReplicaSet",
                                 "apps/v1", {"labelSelector": t.selector}))  # fmt: skip
        except _Forbidden as e:
            raise DraError(f"cannot list replicasets: {e.message}") from None


def _claims_another_way(c: Client, api: str, namespace: str, claim_name, results: dict, gaps: list) -> None:
    """Without cluster-wide claims, at least the namespace's own claims (devices in use elsewhere stay unknown);
    and a named claim the lists did not return, read by name."""
    if "claims" not in results:
        try:
            results["claims"] = c.list(
                f"/apis/{api}/namespaces/{quote(namespace)}/resourceclaims", "ResourceClaim", api
            )
        except _Forbidden as e:
            gaps.append(Gap("list", "resourceclaims.resource.k8s.io", namespace, "forbidden", e.message))
    if claim_name is None or any(
        o["metadata"].get("namespace") == namespace and o["metadata"].get("name") == claim_name
        for o in results.get("claims", [])
    ):
        return
    try:
        one = c.get(f"/apis/{api}/namespaces/{quote(namespace)}/resourceclaims/{quote(claim_name)}")
        one.setdefault("kind", "ResourceClaim")
        one.setdefault("apiVersion", api)
        results.setdefault("claims", []).append(one)
    except _Forbidden as e:
        if e.status != 404:
            gaps.append(Gap("get", "resourceclaims.resource.k8s.io", namespace, "forbidden", e.message))


def _assemble(c: Client, objs: list, results: dict, gaps: list) -> list[dict]:
    """The target's objects, then the plan's answers in JOIN_ORDER, the PodGroups the pods name, the DaemonSets
    not listed already (a dump's), and the pending and bound pods not among them."""
    objs = list(objs)
    for k in (*JOIN_ORDER, *(k for k in results if k.startswith("dump_"))):
        objs.extend(results.get(k, []))
    objs.extend(_podgroups(c, [*objs, *results.get("pending_pods", [])], gaps))
    known = {o["metadata"].get("uid") for o in objs if o.get("kind") == "DaemonSet"}
    objs.extend(d for d in results.get("plugin_daemonsets", []) if d["metadata"].get("uid") not in known)
    have = {(p["metadata"].get("namespace"), p["metadata"].get("name")) for p in objs if p.get("kind") == "Pod"}
    for p in [*results.get("pending_pods", []), *results.get("bound_pods", [])]:
        key = (p["metadata"].get("namespace"), p["metadata"].get("name"))
        if key not in have:
            have.add(key)
            p.setdefault("kind", "Pod")
            p.setdefault("apiVersion", "v1")
            objs.append(p)
    return objs


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
