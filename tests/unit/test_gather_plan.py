"""gather/plan.py: the lists each command's answer needs, decided without a server (plan), and the executor (run)
against a real HTTP server on loopback: answers, refusals as Gaps, 404 fallbacks, alpha APIs that mean none."""

from __future__ import annotations

import pytest
from loopback import Handler, kubeconfig, serve, url

from kubectl_dra.gather.client import Client
from kubectl_dra.gather.plan import ListJob, Needs, plan, run
from kubectl_dra.model.snapshot import BOUND_PODS, DAEMONSET_EVENTS, NODE_EVENTS, PENDING_PODS, Gap

API = "resource.k8s.io/v1"
SERVED = frozenset({"v1", "v1beta2", "v1beta1"})


def keys(jobs):
    return [j.key for j in jobs]


def by_key(jobs):
    return {j.key: j for j in jobs}


def test_explain_pod_in_a_namespace_reads_that_namespace_and_the_cluster_wide_inventory():
    jobs = plan(Needs(namespace="gpu-team", pod_name="trainer-0", drivers=True, bound_pods=True), API, SERVED)
    assert keys(jobs) == ["claims", "templates", "classes", "slices", "nodes", "taint_rules", "events",
                          "plugin_daemonsets", "plugin_events", "node_events", "bound_pods"]  # fmt: skip
    j = by_key(jobs)
    assert j["claims"].path == "/apis/resource.k8s.io/v1/resourceclaims"  # devices held elsewhere count too
    assert j["templates"].path == "/apis/resource.k8s.io/v1/namespaces/gpu-team/resourceclaimtemplates"
    assert j["templates"].namespace == "gpu-team"  # a refusal names the namespace asked about
    assert j["events"].path == "/api/v1/namespaces/gpu-team/events"
    assert j["events"].query == (("fieldSelector", "involvedObject.kind=Pod,involvedObject.name=trainer-0"),)
    assert j["taint_rules"].fallbacks == (("/apis/resource.k8s.io/v1beta2/devicetaintrules", "resource.k8s.io/v1beta2"),)  # fmt: skip
    assert j["taint_rules"].missing_ok and not j["taint_rules"].optional
    assert j["bound_pods"].resource == BOUND_PODS and j["bound_pods"].path == "/api/v1/pods"
    # the driver piece: the DaemonSet controller's FailedCreate events everywhere, the kubelets' Starting events
    assert (j["plugin_events"].path, j["plugin_events"].resource) == ("/api/v1/events", DAEMONSET_EVENTS)
    assert j["plugin_events"].query == (("fieldSelector", "involvedObject.kind=DaemonSet,reason=FailedCreate"),)
    assert j["node_events"].path == "/api/v1/namespaces/default/events" and j["node_events"].namespace == "default"
    assert j["node_events"].query == (("fieldSelector", "involvedObject.kind=Node,reason=Starting"),)
    assert j["node_events"].resource == NODE_EVENTS


def test_status_across_namespaces_lists_templates_and_events_everywhere():
    jobs = plan(Needs(namespace="default", all_namespaces=True, selector="", pending_pods=True), API, SERVED)
    j = by_key(jobs)
    assert j["templates"].path == "/apis/resource.k8s.io/v1/resourceclaimtemplates" and j["templates"].namespace is None
    assert j["events"].path == "/api/v1/events" and j["events"].namespace is None
    assert j["pending_pods"].resource == PENDING_PODS
    assert j["pending_pods"].query == (("fieldSelector", "spec.nodeName="),)
    assert "plugin_daemonsets" not in j and "bound_pods" not in j


def test_a_named_pod_with_all_namespaces_still_reads_only_its_namespace_templates():
    # -A found the pod; the answer's namespace is the pod's, and no selector asks for every namespace's templates
    j = by_key(plan(Needs(namespace="ml", all_namespaces=True, pod_name="p"), API, SERVED))
    assert j["templates"].path.endswith("/namespaces/ml/resourceclaimtemplates")


def test_a_dump_of_a_workload_keeps_one_quota_list_in_its_first_place():
    jobs = plan(Needs(namespace="ml", selector="app=x", workload_kind="Deployment", everything=True), API, SERVED)
    ks = keys(jobs)
    assert ks.count("quotas") == 1 and ks.index("quotas") == ks.index("workload_events") + 1
    j = by_key(jobs)
    assert j["workload_events"].query == (("fieldSelector", "involvedObject.kind=ReplicaSet"),)
    assert [k for k in ks if k.startswith("dump_")] == ["dump_deployments", "dump_replicasets", "dump_statefulsets",
                                                        "dump_daemonsets", "dump_jobs"]  # fmt: skip
    assert j["dump_jobs"].path == "/apis/batch/v1/namespaces/ml/jobs" and j["dump_jobs"].api_version == "batch/v1"
    assert j["plugin_daemonsets"].path == "/apis/apps/v1/daemonsets"  # a dump always carries the driver piece


def test_a_server_without_resource_k8s_io_gets_only_what_it_serves():
    assert keys(plan(Needs(namespace="default", events=False), None, frozenset())) == ["nodes"]
    alpha = by_key(plan(Needs(namespace="default"), "resource.k8s.io/v1beta1", frozenset({"v1beta1", "v1alpha3"})))
    assert alpha["taint_rules"].path == "/apis/resource.k8s.io/v1alpha3/devicetaintrules"
    assert alpha["pool_status_requests"].optional


# The executor, against a real HTTP server: each path answers as configured (status, items)
ANSWERS = {
    "/ok": (200, [{"metadata": {"name": "a"}}]),
    "/forbidden": (403, None),
    "/gone-here": (404, None),
    "/there": (200, [{"metadata": {"name": "b"}}]),
    "/api/v1/namespaces/default/pods": (200, []),
}


class _Handler(Handler):
    def do_GET(self):
        path = self.path.split("?")[0]
        self.server.paths.append(path)
        status, items = ANSWERS.get(path, (404, None))
        body = (
            {"kind": "List", "metadata": {}, "items": items}
            if status == 200
            else {"kind": "Status", "status": "Failure", "message": f"no {path}", "code": status}
        )
        self.send_json(status, body)


@pytest.fixture
def client(tmp_path):
    with serve(_Handler, paths=[]) as srv:
        srv.kubeconfig_paths = [kubeconfig(tmp_path / "kubeconfig", {"server": url(srv)})]
        yield Client(srv.kubeconfig_paths[0], None, 10), srv


def test_run_reads_answers_and_turns_refusals_into_gaps_in_plan_order(client):
    c, srv = client
    jobs = [
        ListJob("a", "/ok", "Thing", "v1", "things"),
        ListJob("b", "/forbidden", "Thing", "v1", "things", namespace="ml"),
        ListJob("c", "/gone-here", "Other", "v1", "others", verb="list"),
        ListJob("d", "/gone-here", "Other", "v1", "others", fallbacks=(("/there", "v2"),), missing_ok=True),
        ListJob("e", "/gone-here", "Other", "v1", "others", missing_ok=True),
        ListJob("f", "/forbidden", "Alpha", "v1alpha3", "alphas", optional=True),
    ]
    ran = []
    results, gaps = run(c, jobs, while_running=lambda: ran.append(True))
    assert ran == [True]
    assert results["a"] == [{"metadata": {"name": "a"}, "kind": "Thing", "apiVersion": "v1"}]
    assert results["d"] == [{"metadata": {"name": "b"}, "kind": "Other", "apiVersion": "v2"}]  # the fallback's
    assert results["e"] == [] and results["f"] == []  # gate off / alpha API refused: none, and no gap
    assert "b" not in results and "c" not in results
    assert [(g.verb, g.resource, g.namespace, g.reason) for g in gaps] == [
        ("list", "things", "ml", "forbidden"),
        ("list", "others", None, "not-found"),
    ]
    assert all(isinstance(g, Gap) for g in gaps)


def test_a_live_gather_returns_one_result_type_whatever_it_was_asked(client):
    """gather_live answers a scan, a dump and a watch with the same Gathered: the snapshot, the namespace, the
    session only with watch, the raw objects only with everything (a dump). Here against a server that serves
    nothing: every list is a Gap, none a failure."""
    from kubectl_dra.gather.live import gather_live
    from kubectl_dra.gather.result import Gathered, LiveRequest
    from kubectl_dra.gather.watch import LiveSession

    _c, srv = client
    kc = srv.kubeconfig_paths[0]
    for req, session, raw in (
        (LiveRequest(selector="", partial=True), False, False),
        (LiveRequest(selector="", partial=True, everything=True), False, True),
        (LiveRequest(selector="", partial=True, watch=True), True, False),
    ):
        got = gather_live(req, kubeconfig=kc, context=None, timeout=10)
        assert isinstance(got, Gathered) and got.namespace == "default"
        assert isinstance(got.session, LiveSession) == session
        assert bool(got.raw) == raw
        assert not raw or got.raw[-1] == {"discovery": {"resource.k8s.io": []}}
        assert ("get", "resource.k8s.io", "not-served") in [(g.verb, g.resource, g.reason) for g in got.snapshot.gaps]


def test_a_pod_two_lists_hold_is_taken_once_and_bound_where_one_says_so():
    """The pending pods' list (or its watch) may still hold a pod that the bound pods' list already shows on a node:
    the pod is bound, whichever list came first; a pod of the same name made anew (another uid) is not merged."""
    from kubectl_dra.gather.assemble import live_snapshot

    def p(uid, node=None):
        spec = {"containers": [{"name": "c"}]} | ({"nodeName": node} if node else {})
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p0", "namespace": "ml", "uid": uid},
                "spec": spec, "status": {"phase": "Pending"}}  # fmt: skip

    meta = {"namespace": "ml", "gaps": ()}
    for objs in ([p("u1"), p("u1", "node-01")], [p("u1", "node-01"), p("u1")]):
        snap = live_snapshot(objs, meta)
        assert [(x["metadata"]["uid"], x["spec"].get("nodeName")) for x in snap.pods] == [("u1", "node-01")]
    snap = live_snapshot([p("u2"), p("u1", "node-01")], meta)
    assert [(x["metadata"]["uid"], x["spec"].get("nodeName")) for x in snap.pods] == [("u2", None)]


def test_a_watched_explain_asks_for_the_pending_pods_of_every_namespace(monkeypatch):
    """explain pod NAME -w and status -n NS -w judge the queue: the pods ahead may be in any namespace (seen live:
    explain pod p1 -w said OK while p0, created first, would take the only GPU; without -w, Blocked)."""
    from kubectl_dra.cli import explain as cli_explain
    from kubectl_dra.gather.result import LiveRequest

    asked = []

    def gather(o, **ask):
        asked.append(LiveRequest(**ask))
        raise SystemExit(0)

    monkeypatch.setattr(cli_explain, "gather_for", gather)
    from click.testing import CliRunner

    from kubectl_dra.cli import cli

    CliRunner().invoke(cli, ["explain", "pod", "p1", "-w", "-n", "team-b"])
    CliRunner().invoke(cli, ["explain", "pod", "p1", "-w", "-n", "team-b", "--alone"])
    assert [(r.watch, r.pending_pods) for r in asked] == [(True, True), (True, False)]
