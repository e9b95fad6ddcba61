"""`kubectl dra devices` says, per node, whether a kubelet plugin serves each driver of its devices: the command as
a user runs it, against an API server on loopback that serves the devices-driver-plugins scenario (the plugin's
DaemonSet in namespace gpu-system: Ready on node-01, crash-looping on node-02, not selecting node-03), and that
refuses the DaemonSets, or the pods of the plugin's namespace, as a least-privilege user's cluster does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from loopback import Handler, kubeconfig, serve, url

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "tests" / "scenarios" / "devices-driver-plugins" / "input.yaml"
OBJECTS = yaml.safe_load(SCENARIO.read_text())["items"]
_PATHS = {
    "/apis/resource.k8s.io/v1/resourceslices": "ResourceSlice",
    "/apis/resource.k8s.io/v1/deviceclasses": "DeviceClass",
    "/apis/resource.k8s.io/v1/resourceclaims": "ResourceClaim",
    "/apis/resource.k8s.io/v1/resourceclaimtemplates": "ResourceClaimTemplate",
    "/api/v1/nodes": "Node",
    "/api/v1/pods": "Pod",
    "/apis/apps/v1/daemonsets": "DaemonSet",
    "/api/v1/events": "Event",  # the DaemonSets' FailedCreate (the scenario has none)
    "/api/v1/namespaces/default/events": "Event",  # the kubelets' Starting
}


class _Cluster(Handler):
    def do_GET(self):
        path = self.path.split("?")[0]
        self.server.paths.append(path)
        if path == "/apis/resource.k8s.io":
            return self.send_json(200, {"kind": "APIGroup", "name": "resource.k8s.io", "versions": [{"version": "v1"}]})
        if path == "/version":
            return self.send_json(200, {"gitVersion": "v1.37.2"})
        if path == "/api/v1/namespaces":
            names = sorted({o["metadata"].get("namespace") for o in OBJECTS} - {None})
            return self.send_json(
                200, {"kind": "List", "metadata": {}, "items": [{"metadata": {"name": n}} for n in names]}
            )
        kind = _PATHS.get(path)
        if kind is None and path.startswith("/api/v1/namespaces/") and path.endswith("/pods"):
            kind, ns = "Pod", path.split("/")[4]
        else:
            ns = None
        if kind is None or path in self.server.refused or (ns and ns in self.server.refused):
            code = 404 if kind is None else 403
            return self.send_json(code, {"kind": "Status", "status": "Failure", "code": code,
                                         "message": f"{path}: {'forbidden' if code == 403 else 'not found'}"})  # fmt: skip
        items = [o for o in OBJECTS if o["kind"] == kind and (ns is None or o["metadata"].get("namespace") == ns)]
        if kind == "Pod" and self.server.no_plugin_pods:
            items = [o for o in items if o["metadata"].get("namespace") != "gpu-system"]
        self.send_json(200, {"kind": f"{kind}List", "metadata": {"resourceVersion": "1"}, "items": items})


def _devices(tmp_path, *args, refused=(), no_plugin_pods=False):
    with serve(_Cluster, paths=[], refused=set(refused), no_plugin_pods=no_plugin_pods) as srv:
        kc = kubeconfig(tmp_path / "kubeconfig", {"server": url(srv)})
        env = dict(os.environ, NO_COLOR="1", KUBECONFIG=kc)
        p = subprocess.run([sys.executable, "-m", "kubectl_dra", "devices", *args], capture_output=True, text=True,
                           env=env, timeout=60, cwd=ROOT)  # fmt: skip
        return p, srv.paths


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_each_node_says_whether_the_plugin_serves_it(tmp_path):
    p, paths = _devices(tmp_path)
    assert p.returncode == 0, p.stderr
    assert "/apis/apps/v1/daemonsets" in paths  # the DaemonSets of every namespace, read once
    text = _flat(p.stdout)
    assert "Kubelet plugins (Ready on 1 of 3 node(s);" in text
    assert "node-02: gpu.example.com plugin not ready (CrashLoopBackOff, 12 restarts, last exit 1 (Error))" in text
    assert (
        "node-03: gpu.example.com no plugin pod (node does not match its nodeSelector gpu.example.com/present=true)"
        in text
    )
    assert "node-01:" not in text  # serving: no note


def test_json_has_the_status_per_node_and_driver(tmp_path):
    p, _ = _devices(tmp_path, "-o", "json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    got = {(x["node"], x["driver"]): (x["status"], x["daemonset"]) for x in doc["plugins"]}
    ds = "gpu-system/gpu-kubeletplugin"
    assert got == {("node-01", "gpu.example.com"): ("serving", ds), ("node-02", "gpu.example.com"): ("not-ready", ds),
                   ("node-03", "gpu.example.com"): ("no-pod", ds)}  # fmt: skip
    assert {g["node"]: g["plugins"] for g in doc["summary"]["byNode"]}["node-02"] == {"gpu.example.com": "not-ready"}


def test_wide_has_a_plugins_column(tmp_path):
    p, _ = _devices(tmp_path, "-o", "wide")
    assert p.returncode == 0, p.stderr
    head, *rows = p.stdout.split("\n\n")[0].splitlines()
    assert head.split()[-1] == "PLUGINS"
    assert [r.split()[-1] for r in rows] == ["gpu.example.com:serving", "gpu.example.com:not-ready",
                                             "gpu.example.com:no-pod"]  # fmt: skip


def test_daemonsets_forbidden_make_the_plugins_unknown_not_an_error(tmp_path):
    p, _ = _devices(tmp_path, refused={"/apis/apps/v1/daemonsets"})
    assert p.returncode == 0, p.stderr  # the inventory itself is complete
    assert "error:" not in p.stderr
    text = _flat(p.stdout)
    assert "Kubelet plugins: not known on any node: cannot list daemonsets.apps:" in text
    doc = json.loads(_devices(tmp_path, "-o", "json", refused={"/apis/apps/v1/daemonsets"})[0].stdout)
    assert {x["status"] for x in doc["plugins"]} == {"unknown"}
    assert all(x["reason"].startswith("cannot list daemonsets.apps") for x in doc["plugins"])
    assert doc["unseen"] == []


def test_pods_of_the_plugin_namespace_forbidden_make_the_covered_nodes_unknown(tmp_path):
    """Pods listed namespace by namespace, gpu-system's refused: the plugin's pods cannot be seen, so a node the
    DaemonSet covers is "unknown", never "no plugin pod"; node-03, which the DaemonSet does not select, is known."""
    p, _ = _devices(tmp_path, "-o", "json", refused={"/api/v1/pods", "gpu-system"})
    assert p.returncode == 2  # who holds the devices is incomplete: the inventory says so
    doc = json.loads(p.stdout)
    got = {x["node"]: x["status"] for x in doc["plugins"]}
    assert got == {"node-01": "unknown", "node-02": "unknown", "node-03": "no-pod"}
    assert "cannot list pods in gpu-system" in {x["node"]: x["reason"] for x in doc["plugins"]}["node-01"]


def test_a_daemonset_without_pods_runs_none_on_the_nodes_it_selects(tmp_path):
    """Every pod of every namespace was listed (devices reads them all): a DaemonSet with no pod anywhere runs none on
    the nodes it selects, a fact, not "unknown" (from files, where pods may be left out, it stays unknown)."""
    p, paths = _devices(tmp_path, "-o", "json", no_plugin_pods=True)
    assert p.returncode == 0, p.stderr
    assert paths.count("/api/v1/pods") == 1  # one list of every pod, not a second one of the bound pods
    got = {x["node"]: (x["status"], x["reason"]) for x in json.loads(p.stdout)["plugins"]}
    admits = (
        "its spec admits the node, and the DaemonSet controller reported no FailedCreate (kubectl describe ds -n "
        "gpu-system gpu-kubeletplugin)"
    )
    assert got["node-01"] == got["node-02"] == ("no-pod", admits)
    assert got["node-03"][0] == "no-pod"


def test_a_failed_create_event_in_the_files_explains_the_missing_plugin_pod(tmp_path):
    """From files, devices keeps the DaemonSet controller's FailedCreate events (it drops the pods' events): the node
    with no plugin pod is explained by the ResourceQuota that refuses it, not said to lack an event the input has."""
    scenario = ROOT / "tests" / "scenarios" / "driver-plugin-failed-create" / "input.yaml"
    env = dict(os.environ, NO_COLOR="1", KUBECONFIG=str(tmp_path / "none"))
    p = subprocess.run([sys.executable, "-m", "kubectl_dra", "devices", "--from-file", str(scenario), "-o", "json"],
                       capture_output=True, text=True, env=env, timeout=60, cwd=ROOT)  # fmt: skip
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    (got,) = [x for x in doc["plugins"] if x["node"] == "node-01"]
    assert got["status"] == "no-pod"
    assert "exceeded quota: pods" in got["reason"] and "(FailedCreate, 23 times since" in got["reason"], got
    assert "were not read" not in got["reason"]
