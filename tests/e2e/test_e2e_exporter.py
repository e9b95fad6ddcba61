"""The exporter for real: `kubectl dra status -A -w --metrics-bind-address` as a pod runs it, with the in-cluster
configuration (KUBERNETES_SERVICE_HOST/PORT and a ServiceAccount volume: a token minted through the TokenRequest API,
the cluster's CA, the namespace; no kubeconfig), under deploy/clusterrole.yaml's rules bound to that ServiceAccount.
Its /metrics is scraped over HTTP and parsed with prometheus-client's parser while a slice, a claim and pods change
under it; /healthz and /readyz answer as probes expect; and the API server's audit log shows that the role's rules
are exactly what it used: nothing refused, no verb beyond them."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from builders import device, request
from dra_objects import claim, pod
from e2e_helpers import kubectl_dra_argv, wait_for
from loopback import http_get
from prometheus_client.parser import text_string_to_metric_families

pytestmark = pytest.mark.e2e

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def _service_account(cluster, ns: str, tmp_path: Path) -> tuple[Path, str, str]:
    """The ServiceAccount bound to deploy/'s ClusterRole (under a name of this test's), and its mounted volume."""
    role = yaml.safe_load((DEPLOY / "clusterrole.yaml").read_text())
    name = f"{ns}-exporter"
    role["metadata"] = {"name": name}
    cluster.api.post(f"/api/v1/namespaces/{ns}/serviceaccounts",
                     {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "exporter"}})  # fmt: skip
    cluster.api.post(f"{RBAC}/clusterroles", role)
    cluster.api.post(f"{RBAC}/clusterrolebindings", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": "exporter", "namespace": ns}],
    })  # fmt: skip
    user = f"system:serviceaccount:{ns}:exporter"
    wait_for(f"RBAC for {user}", lambda: cluster.kubectl(
        "auth", "can-i", "watch", "resourceslices.resource.k8s.io", f"--as={user}", check=False).stdout.strip() == "yes",
        30)  # fmt: skip
    tr = cluster.api.post(
        f"/api/v1/namespaces/{ns}/serviceaccounts/exporter/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}},
    )
    sa = tmp_path / "serviceaccount"
    sa.mkdir()
    (sa / "token").write_text(tr["status"]["token"])
    (sa / "ca.crt").write_bytes(Path(cluster.ca).read_bytes())
    (sa / "namespace").write_text(ns)
    return sa, user, name


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _scrape(base: str) -> dict:
    """{(metric name, frozenset of labels without `cluster`): value} of one scrape; asserts the cluster label."""
    status, text = http_get(base + "/metrics")
    assert status == 200, text
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name.startswith("kubectl_dra_"):
                assert s.labels.get("cluster") == "e2e", s
                out[s.name, frozenset((k, v) for k, v in s.labels.items() if k != "cluster")] = s.value
    return out


def _value(m: dict, name: str, **labels) -> float:
    """The sum of the samples of `name` whose labels include these."""
    want = set(labels.items())
    return sum(v for (n, ls), v in m.items() if n == name and want <= set(ls))


def test_the_exporter_in_cluster_follows_the_cluster(cluster, scenario, tmp_path):
    sc = scenario("exporter")
    sc.device_class()
    sc.slice([device("dev-0")])
    sa, user, role = _service_account(cluster, sc.ns, tmp_path)
    server = urlsplit(cluster.server)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "POD_NAMESPACE")}
    env.update(HOME=str(tmp_path), NO_COLOR="1", KUBERNETES_SERVICE_HOST=server.hostname,
               KUBERNETES_SERVICE_PORT=str(server.port), KUBECTL_DRA_SERVICEACCOUNT_DIR=str(sa))  # fmt: skip
    argv = [*kubectl_dra_argv(), "status", "-A", "-w", "-o", "name",
            "--metrics-bind-address", f"127.0.0.1:{port}", "--metrics-cluster-name", "e2e"]  # fmt: skip
    start = time.monotonic()
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    cls, drv = sc.cls, sc.driver
    try:
        wait_for(
            "/readyz", lambda: proc.poll() is None and http_get(base + "/readyz")[0] == 200 or proc.poll(), 30, 0.2
        )
        assert proc.poll() is None, proc.communicate()
        ready_in = time.monotonic() - start
        assert http_get(base + "/healthz") == (200, "ok\n")
        m = _scrape(base)
        assert _value(m, "kubectl_dra_devices", **{"class": cls}, node="node-01", driver=drv, state="free") == 1
        determined = _value(m, "kubectl_dra_answer_determined")

        # a pod takes the device; a second one finds none left
        sc.create(claim("c-a", [request("gpu", cls)]))
        sc.create(pod("pod-a", {"gpu": "c-a"}))
        cluster.wait_bound(sc.ns, "pod-a")
        sc.create(claim("c-b", [request("gpu", cls)]))
        sc.create(pod("pod-b", {"gpu": "c-b"}))

        def followed():
            m = _scrape(base)
            a = _value(m, "kubectl_dra_pod_status", namespace=sc.ns, pod="pod-a", state="ok")
            b = _value(m, "kubectl_dra_pod_status", namespace=sc.ns, pod="pod-b", state="blocked", missing="device")
            used = _value(m, "kubectl_dra_devices", **{"class": cls}, driver=drv, state="allocated")
            return m if (a, b, used) == (1, 1, 1) else None

        m = wait_for("pod-a ok, pod-b blocked on a device, dev-0 allocated", followed, 30, 0.5)
        assert _value(m, "kubectl_dra_devices", **{"class": cls}, driver=drv, state="free") == 0
        assert _value(m, "kubectl_dra_pods", state="blocked", missing="device") >= 1

        # the driver publishes a second device: pod-b gets it
        sc.slice([device("dev-1")], suffix="-more", pool=f"{sc.name}-more")

        def unblocked():
            m = _scrape(base)
            b = _value(m, "kubectl_dra_pod_status", namespace=sc.ns, pod="pod-b", state="ok")
            used = _value(m, "kubectl_dra_devices", **{"class": cls}, driver=drv, state="allocated")
            return m if (b, used) == (1, 2) else None

        wait_for("pod-b ok on the new device", unblocked, 45, 0.5)
        assert http_get(base + "/readyz") == (200, "ok\n")
        assert proc.poll() is None
        took = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
        cluster.api.delete(f"{RBAC}/clusterrolebindings/{role}")
        cluster.api.delete(f"{RBAC}/clusterroles/{role}")
    assert proc.returncode == 130, err
    assert determined == 1, f"the role is not enough: the answer is incomplete\n{err.decode()}"
    assert f"serving metrics on http://127.0.0.1:{port}/metrics" in err.decode()
    print(f"exporter: ready in {ready_in:.1f}s, test body {took:.1f}s")

    # the audit log: every request of the ServiceAccount allowed, and within the role's rules
    rules = yaml.safe_load((DEPLOY / "clusterrole.yaml").read_text())["rules"]
    allowed = {(g, r, v) for rule in rules for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}
    used = set()
    for e in cluster.audit_entries():
        if (e.get("user") or {}).get("username") != user or e.get("stage") not in (None, "ResponseComplete"):
            continue
        ref = e.get("objectRef") or {}
        code = (e.get("responseStatus") or {}).get("code", 0)
        assert code != 403, f"refused under deploy/'s role: {e['verb']} {e.get('requestURI')}"
        if ref.get("resource"):
            used.add((ref.get("apiGroup") or "", ref["resource"], e["verb"]))
    assert used, "no audit entries for the ServiceAccount: is the audit log on?"
    assert used <= allowed, sorted(used - allowed)
    # every rule is used but podgroups, listed only when a pending pod names one (spec.schedulingGroup)
    assert allowed - used <= {
        ("scheduling.k8s.io", "podgroups", "list"),
        ("scheduling.k8s.io", "podgroups", "watch"),
    }, sorted(allowed - used)


def test_the_deploy_manifests_pass_the_api_servers_validation_and_pod_security(cluster, namespace):
    """deploy/'s core manifests (all but the Prometheus Operator's kinds, whose CRDs the suite does not install),
    applied with a server-side dry run in a namespace that warns on Pod Security `restricted`: the API server's
    schema accepts them and the Deployment's pod template violates nothing."""
    cluster.kubectl("label", "namespace", namespace, "pod-security.kubernetes.io/warn=restricted", "--overwrite")
    docs = []
    for name in (
        "serviceaccount.yaml",
        "clusterrole.yaml",
        "clusterrolebinding.yaml",
        "deployment.yaml",
        "service.yaml",
    ):
        doc = yaml.safe_load((DEPLOY / name).read_text())
        if "namespace" in doc["metadata"]:
            doc["metadata"]["namespace"] = namespace
        for subject in doc.get("subjects") or ():
            subject["namespace"] = namespace
        docs.append(doc)
    done = cluster.kubectl("apply", "--dry-run=server", "-f", "-", input=yaml.safe_dump_all(docs))
    assert done.stdout.count("(server dry run)") == len(docs), done.stdout
    assert "would violate PodSecurity" not in done.stderr and "Warning" not in done.stderr, done.stderr
