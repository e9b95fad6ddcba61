"""The driver piece's states against a real control plane: real DaemonSets whose pods the real DaemonSet controller
creates and the real scheduler binds. The fake nodes have no kubelet: a plugin pod's status is set as a kubelet sets
it, and the kubelet's `not registered` event is posted as the kubelet posts it (test_e2e_driver.py's helpers); the
rest (taints, coverage, desired and ready counts, the scheduler's `cannot allocate all claims`) is the cluster's."""

from __future__ import annotations

import pytest
from builders import device, request
from dra_objects import claim, pod
from e2e_helpers import wait_for
from test_e2e_driver import bound_and_not_registered, daemonset, devices_plugin, plugin_finding

pytestmark = pytest.mark.e2e

LONG_AGO = "2020-01-01T00:00:00Z"


def _start_plugins(cluster, sc, prefix: str, node_selector: dict | None = None) -> tuple[str, str]:
    """A namespace with the driver's plugin DaemonSet, once the controller has counted the nodes it covers."""
    plugins = cluster.create_namespace(prefix)
    ds_path = f"/apis/apps/v1/namespaces/{plugins}/daemonsets"
    sc.api.post(ds_path, daemonset("kubeletplugin", sc.driver, node_selector))
    wait_for("the DaemonSet controller to count the nodes it covers",
             lambda: (sc.api.get(f"{ds_path}/kubeletplugin").get("status") or {}).get("observedGeneration") == 1,
             90)  # fmt: skip
    return plugins, f"{ds_path}/kubeletplugin"


def _plugin_pods(sc, plugins: str) -> dict:
    """The plugin pods by the node the scheduler bound them to."""
    items = sc.api.get(f"/api/v1/namespaces/{plugins}/pods")["items"]
    return {p["spec"]["nodeName"]: p for p in items if p["spec"].get("nodeName")}


def _kubelet_status(sc, p: dict, status: dict) -> None:
    """The pod's status as the node's kubelet would write it."""
    sc.api.patch(f"/api/v1/namespaces/{p['metadata']['namespace']}/pods/{p['metadata']['name']}/status",
                 {"status": status})  # fmt: skip


def _ready(sc, p: dict) -> None:
    _kubelet_status(sc, p, {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": LONG_AGO}],
        "containerStatuses": [{"name": "plugin", "ready": True, "restartCount": 0, "started": True,
                               "image": "registry.k8s.io/pause:3.10", "imageID": "",
                               "state": {"running": {"startedAt": LONG_AGO}}}],
    })  # fmt: skip


def _no_plugin_daemonsets(sc) -> None:
    """Wait until no DaemonSet in the cluster mounts the kubelet's plugins_registry (an earlier test's namespace may
    still be going): the "no plugin" states are about a cluster that has none."""

    def none():
        items = sc.api.get("/apis/apps/v1/daemonsets")["items"]
        paths = [
            (v.get("hostPath") or {}).get("path", "")
            for d in items
            for v in d["spec"]["template"]["spec"].get("volumes") or []
        ]
        return not any(p.rstrip("/").endswith("plugins_registry") for p in paths)

    wait_for("no kubelet plugin DaemonSet left in the cluster", none, 180, 1)


def _not_registered_on_node_01(cluster, sc, tolerations: list | None = None) -> dict:
    """The pod web bound to node-01 (where the scenario's device is) and the kubelet's `not registered` there:
    explain's DRA607, after its DRA601."""
    assert bound_and_not_registered(cluster, sc, tolerations) == "node-01"
    r = cluster.kubectl_dra("explain", "pod", "web", "-n", sc.ns, "-o", "json")
    assert r.code == 1, str(r)
    assert r.json["verdict"]["missing"] == "driver", str(r)
    assert [f["code"] for f in r.json["findings"] if f["code"].startswith("DRA6")] == ["DRA601", "DRA607"], str(r)
    return plugin_finding(r.json)


def _fits(text: str, width: int = 80) -> str:
    assert text.strip(), text
    wide = [line for line in text.splitlines() if len(line) > width]
    assert not wide, "\n".join(wide)
    return " ".join(text.split())


def test_an_untolerated_node_taint_keeps_the_plugin_off_the_node(cluster, scenario):
    sc = scenario("drvtaint")
    sc.device_class()
    sc.slice([device("gpu-0")])  # the device is on node-01: the pod lands there
    taint = {"key": "example.com/gpu-maintenance", "value": "true", "effect": "NoSchedule"}
    node_path = "/api/v1/nodes/node-01"
    plugins = None
    try:
        node = sc.api.get(node_path)
        assert not node["spec"].get("taints"), node["spec"]
        sc.api.patch(node_path, {"spec": {"taints": [taint]}})
        plugins, ds = _start_plugins(cluster, sc, "drv-taint")
        # the controller runs the plugin on the two other nodes and not on the tainted one
        wait_for("the DaemonSet's pods on the untainted nodes", lambda: set(_plugin_pods(sc, plugins)) ==
                 {"node-02", "node-03"}, 90)  # fmt: skip
        assert sc.api.get(ds)["status"]["desiredNumberScheduled"] == 2
        # the user's pod tolerates the taint (as GPU workloads tolerate their nodes' taints); the plugin does not
        tolerate = [{"key": taint["key"], "operator": "Exists", "effect": "NoSchedule"}]
        f = _not_registered_on_node_01(cluster, sc, tolerate)
        assert f["evidence"]["plugin"]["state"] == "not-covered", f
        assert f["evidence"]["plugin"]["daemonset"] == f"{plugins}/kubeletplugin", f
        said = "node has the untolerated taint example.com/gpu-maintenance=true:NoSchedule"
        assert f"runs no pod on node-01: {said}" in f["message"], f
        assert devices_plugin(cluster, sc.driver, "node-01") == ("no-pod", said, f"{plugins}/kubeletplugin")
        text = _fits(cluster.kubectl_dra_tty("explain", "pod", "web", "-n", sc.ns))
        assert "DRA607 driver-plugin" in text and said in text, text
        text = _fits(cluster.kubectl_dra_tty("devices", "--driver", sc.driver))
        assert f"node-01: {sc.driver} no plugin pod ({said})" in text, text
    finally:
        if sc.api.get(node_path)["spec"].get("taints"):
            sc.api.patch(node_path, [{"op": "remove", "path": "/spec/taints"}], kind="json")
        if plugins:
            cluster.delete_namespace(plugins)


def test_a_crash_looping_plugin_pod_on_the_node(cluster, scenario):
    sc = scenario("drvcrash")
    sc.device_class()
    sc.slice([device("gpu-0")])
    plugins = None
    try:
        plugins, _ = _start_plugins(cluster, sc, "drv-crash")
        pods = wait_for("a plugin pod on every node", lambda: len(p := _plugin_pods(sc, plugins)) == 3 and p, 90)
        crashed = pods["node-01"]
        _kubelet_status(sc, crashed, {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady",
                            "lastTransitionTime": LONG_AGO}],
            "containerStatuses": [{
                "name": "plugin", "ready": False, "restartCount": 7, "started": False,
                "image": "registry.k8s.io/pause:3.10", "imageID": "",
                "state": {"waiting": {"reason": "CrashLoopBackOff",
                                      "message": "back-off 5m0s restarting failed container=plugin"}},
                "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": "2026-01-01T00:00:00Z",
                                             "finishedAt": "2026-01-01T00:00:02Z"}},
            }],
        })  # fmt: skip
        f = _not_registered_on_node_01(cluster, sc)
        got = f["evidence"]["plugin"]
        assert got["state"] == "pod-not-ready", f
        assert got["pod"]["pod"] == f"{plugins}/{crashed['metadata']['name']}", f
        assert (got["pod"]["waiting"], got["pod"]["restarts"]) == ("CrashLoopBackOff", 7), f
        assert got["pod"]["lastTerminated"]["exitCode"] == 1, f
        said = "is not ready: CrashLoopBackOff, 7 restarts, last exit 1 (Error) at 2026-01-01T00:00:02Z"
        assert said in f["message"], f
        status, reason, _ = devices_plugin(cluster, sc.driver, "node-01")
        assert (status, reason) == ("not-ready", "CrashLoopBackOff, 7 restarts, last exit 1 (Error)")
        text = _fits(cluster.kubectl_dra_tty("explain", "pod", "web", "-n", sc.ns))
        assert "DRA607 driver-plugin" in text and said in text, text
        text = _fits(cluster.kubectl_dra_tty("devices", "--driver", sc.driver))
        assert f"node-01: {sc.driver} plugin not ready (CrashLoopBackOff, 7 restarts, last exit 1 (Error))" in text
    finally:
        if plugins:
            cluster.delete_namespace(plugins)


def _unallocatable(cluster, sc) -> None:
    """The pod web with a claim on the scenario's class, which no ResourceSlice serves: the scheduler's tutorial
    message."""
    sc.api.post(
        f"/apis/resource.k8s.io/v1/namespaces/{sc.ns}/resourceclaims", claim("web-gpu", [request("gpu", sc.cls)])
    )
    sc.api.post(f"/api/v1/namespaces/{sc.ns}/pods", pod("web", {"gpu": "web-gpu"}))
    cluster.wait_unschedulable(sc.ns, "web", "cannot allocate all claims", timeout=90)


def _no_slices_doc(cluster, sc) -> dict:
    r = cluster.kubectl_dra("explain", "pod", "web", "-n", sc.ns, "-o", "json")
    assert r.code == 1, str(r)
    assert r.json["verdict"]["missing"] == "device", str(r)
    assert [f["code"] for f in r.json["findings"] if f["code"].startswith(("DRA4", "DRA6"))] == ["DRA401", "DRA607"]
    return r.json


def test_no_plugin_deployed_for_a_class_with_no_slices(cluster, scenario):
    sc = scenario("drvnone")
    sc.device_class()
    _no_plugin_daemonsets(sc)
    _unallocatable(cluster, sc)
    f = plugin_finding(_no_slices_doc(cluster, sc))
    assert f["evidence"]["plugin"]["state"] == "not-found", f
    assert f["evidence"]["plugin"]["daemonset"] is None, f
    said = f"no DaemonSet found that runs the kubelet plugin of {sc.driver}"
    assert said in f["message"] and "it is likely not installed" in f["message"], f
    text = _fits(cluster.kubectl_dra_tty("explain", "pod", "web", "-n", sc.ns))
    assert "DRA401 no-devices-published" in text and said in text, text


def test_a_ready_plugin_that_publishes_nothing(cluster, scenario):
    sc = scenario("drvquiet")
    sc.device_class()
    plugins = None
    try:
        plugins, ds = _start_plugins(cluster, sc, "drv-quiet")
        pods = wait_for("a plugin pod on every node", lambda: len(p := _plugin_pods(sc, plugins)) == 3 and p, 90)
        for p in pods.values():
            _ready(sc, p)
        wait_for("the DaemonSet controller to count 3 ready pods",
                 lambda: sc.api.get(ds)["status"].get("numberReady") == 3, 90)  # fmt: skip
        _unallocatable(cluster, sc)
        f = plugin_finding(_no_slices_doc(cluster, sc))
        assert f["evidence"]["plugin"]["state"] == "publishing-nothing", f
        assert f["evidence"]["plugin"]["daemonset"] == f"{plugins}/kubeletplugin", f
        said = f"runs the kubelet plugin of {sc.driver} with 3 of 3 pods ready, yet no ResourceSlice of {sc.driver}"
        assert said in f["message"] and "the plugin runs and publishes nothing" in f["message"], f
        text = _fits(cluster.kubectl_dra_tty("explain", "pod", "web", "-n", sc.ns))
        assert said in text, text
        # devices --driver D: the driver its DeviceClass names is no typo; no devices, and why (not "not found")
        r = cluster.kubectl_dra("devices", "--driver", sc.driver, "-o", "json")
        assert r.code == 0 and r.json["summary"]["devices"] == 0, str(r)
        assert [(p["driver"], p["state"]) for p in r.json["publishing"]] == [(sc.driver, "publishing-nothing")], r.json
        t = cluster.kubectl_dra("devices", "--driver", sc.driver)
        assert t.code == 0 and f"{sc.driver} publishes no ResourceSlice: DaemonSet {plugins}/kubeletplugin" in t.stderr
    finally:
        if plugins:
            cluster.delete_namespace(plugins)


def test_slices_left_behind_by_a_plugin_that_is_gone(cluster, scenario):
    """The plugin ran and published node-01's slice, then its DaemonSet was deleted: no kubelet (none runs here;
    nor one that never registered the plugin) wiped the slice. The rule needs no slice age: a slice of the node
    with no plugin found is the finding (its creationTimestamp is shown, as the API server set it)."""
    sc = scenario("drvstale")
    sc.device_class()
    plugins = None
    try:
        plugins, ds = _start_plugins(cluster, sc, "drv-stale")
        _ready(sc, wait_for("the plugin pod on node-01", lambda: _plugin_pods(sc, plugins).get("node-01"), 90))
        sc.slice([device("gpu-0")])
        made = sc.api.get(f"/apis/resource.k8s.io/v1/resourceslices/{sc.name}-node-01")["metadata"]
        sc.api.delete(ds)
        cluster.delete_namespace(plugins)
        plugins = None
        _no_plugin_daemonsets(sc)
        f = _not_registered_on_node_01(cluster, sc)
        assert f["evidence"]["plugin"]["state"] == "not-found", f
        manager = made["managedFields"][0]["manager"]
        said = (f"no DaemonSet found that runs the kubelet plugin of {sc.driver}, yet 1 ResourceSlice of it for "
                f"node-01 exists (written by {manager} since {made['creationTimestamp']}): their publisher is out "
                "of sight")  # fmt: skip
        assert said in f["message"], f
        status, reason, ds_ref = devices_plugin(cluster, sc.driver, "node-01")
        assert (status, ds_ref) == ("unknown", None) and reason.startswith("no DaemonSet found that runs it"), reason
        text = _fits(cluster.kubectl_dra_tty("explain", "pod", "web", "-n", sc.ns))
        assert said in text, text
    finally:
        if plugins:
            cluster.delete_namespace(plugins)
