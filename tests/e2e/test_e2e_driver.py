"""The driver piece against a real control plane (v1.37.2): the kubelet plugin's DaemonSet, its coverage computed by
the real DaemonSet controller and its pods placed by the real scheduler. The nodes have no kubelet, so the kubelet's
`not registered` event is posted as the kubelet posts it; everything else is the cluster's own."""

from __future__ import annotations

import time
import uuid

import pytest
from builders import device, request
from dra_objects import claim, pod
from e2e_helpers import clusterlib, wait_for

pytestmark = pytest.mark.e2e


def daemonset(name: str, driver: str, node_selector: dict | None) -> dict:
    spec: dict = {
        "terminationGracePeriodSeconds": 0,
        "containers": [
            {
                "name": "plugin",
                "image": "registry.k8s.io/pause:3.10",
                "env": [{"name": "DRIVER_NAME", "value": driver}],
                "volumeMounts": [{"name": "registry", "mountPath": "/var/lib/kubelet/plugins_registry"}],
            }
        ],
        "volumes": [{"name": "registry", "hostPath": {"path": "/var/lib/kubelet/plugins_registry"}}],
    }
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
    }


def plugin_finding(doc: dict) -> dict:
    f = next((f for f in doc["findings"] if f["code"] == "DRA607"), None)
    assert f is not None, doc["findings"]
    return f


def devices_plugin(cluster, driver: str, node: str) -> tuple:
    """devices -o json's verdict on driver's kubelet plugin on node: (status, reason, DaemonSet)."""
    r = cluster.kubectl_dra("devices", "--driver", driver, "-o", "json")
    assert r.code == 0, str(r)
    got = [p for p in r.json["plugins"] if p["driver"] == driver and p["node"] == node]
    assert len(got) == 1, r.json["plugins"]
    return got[0]["status"], got[0]["reason"], got[0]["daemonset"]


def bound_and_not_registered(cluster, sc, tolerations: list | None = None) -> str:
    """The pod web with a claim on the scenario's class (and tolerations), bound by the real scheduler, and the
    kubelet's `not registered` posted as the kubelet posts it: the pod's node."""
    sc.api.post(
        f"/apis/resource.k8s.io/v1/namespaces/{sc.ns}/resourceclaims", claim("web-gpu", [request("gpu", sc.cls)])
    )
    web = pod("web", {"gpu": "web-gpu"})
    if tolerations:
        web["spec"]["tolerations"] = tolerations
    sc.api.post(f"/api/v1/namespaces/{sc.ns}/pods", web)
    bound = cluster.wait_bound(sc.ns, "web", timeout=60)
    node = bound["spec"]["nodeName"]
    time.sleep(1.1)  # the kubelet reacts after the Scheduled event's second
    cluster.post_kubelet_event(
        bound,
        "FailedPrepareDynamicResources",
        f"Failed to prepare dynamic resources: prepare dynamic resources: DRA driver {sc.driver} is not registered",
        node,
    )
    cluster.wait_event(sc.ns, "web", "FailedPrepareDynamicResources")
    return node


def test_the_plugin_daemonset_found_and_judged_on_the_node(cluster, scenario):
    sc = scenario("drvpiece")
    sc.device_class()
    sc.slice([device("gpu-0")])
    plugins = cluster.create_namespace("drv-plugins")
    try:
        ds_path = f"/apis/apps/v1/namespaces/{plugins}/daemonsets"
        sc.api.post(ds_path, daemonset("kubeletplugin", sc.driver, {"example.com/gpu-node": "true"}))
        wait_for(
            "the DaemonSet controller to count the nodes it matches",
            lambda: (sc.api.get(f"{ds_path}/kubeletplugin").get("status") or {}).get("observedGeneration") == 1,
            60,
        )
        assert sc.api.get(f"{ds_path}/kubeletplugin")["status"].get("desiredNumberScheduled", 0) == 0
        node = bound_and_not_registered(cluster, sc)

        # The DaemonSet selects nodes with a label no node has: it runs no pod on the pod's node, and says why.
        r = cluster.kubectl_dra("explain", "pod", "web", "-n", sc.ns, "-o", "json")
        assert r.code == 1, str(r)
        assert r.json["verdict"]["missing"] == "driver", str(r)
        assert any(f["code"] == "DRA601" for f in r.json["findings"]), str(r)
        f = plugin_finding(r.json)
        assert f["evidence"]["plugin"]["state"] == "not-covered", f
        assert f["evidence"]["plugin"]["daemonset"] == f"{plugins}/kubeletplugin", f
        assert f["evidence"]["plugin"]["link"] == "named", f
        assert f"runs no pod on {node}" in f["message"] and "example.com/gpu-node=true" in f["message"], f
        # the node's slice is there all the same (no plugin pod wrote it): why the scheduler allocated its device
        assert f"; yet 1 ResourceSlice of {sc.driver} for {node} exists (since " in f["message"], f
        assert not any(f["code"] == "DRA101" for f in r.json["findings"]), str(r)
        # devices says the same per node: the node's devices have no plugin pod to prepare them, and why
        assert devices_plugin(cluster, sc.driver, node)[:2] == ("no-pod", "node does not match its nodeSelector "
                                                                 "example.com/gpu-node=true"), str(r)  # fmt: skip

        # Without the selector the controller creates a pod per node; the scheduler binds them; with no kubelet they
        # stay Pending: the plugin's pod on the node is found and is not ready.
        sc.api.patch(
            f"{ds_path}/kubeletplugin", [{"op": "remove", "path": "/spec/template/spec/nodeSelector"}], kind="json"
        )

        def plugin_pod_on_node():
            items = sc.api.get(f"/api/v1/namespaces/{plugins}/pods")["items"]
            return [p for p in items if p["spec"].get("nodeName") == node]

        wait_for(f"a plugin pod bound to {node}", plugin_pod_on_node, 90)
        r = cluster.kubectl_dra("explain", "pod", "web", "-n", sc.ns, "-o", "json")
        assert r.code == 1, str(r)
        f = plugin_finding(r.json)
        assert f["evidence"]["plugin"]["state"] == "pod-not-ready", f
        assert f["evidence"]["plugin"]["pod"]["pod"] == f"{plugins}/{plugin_pod_on_node()[0]['metadata']['name']}", f
        assert "is not ready: Pending" in f["message"], f
        # and in text, at 80 columns, the same
        t = cluster.kubectl_dra("explain", "pod", "web", "-n", sc.ns)
        assert "DRA607 driver-plugin" in t.stdout and "not ready" in t.stdout, str(t)
        status, reason, ds = devices_plugin(cluster, sc.driver, node)
        assert (status, reason, ds) == ("not-ready", "Pending", f"{plugins}/kubeletplugin")
        t = cluster.kubectl_dra("devices", "--driver", sc.driver)
        assert t.code == 0 and f"{node}: {sc.driver} plugin not ready (Pending)" in " ".join(t.stdout.split()), str(t)
    finally:
        cluster.delete_namespace(plugins)


def test_failed_create_and_a_kubelet_restart_seen_live(cluster, scenario):
    """The real DaemonSet controller refused by a ResourceQuota (its FailedCreate event, read from every namespace),
    then a kubelet restart (its Starting event about the Node, in namespace default) that wiped the node's slice."""
    sc = scenario("drvquota")
    sc.device_class()
    sc.slice([device("gpu-0")])
    plugins = cluster.create_namespace("drv-quota")
    started = None
    try:
        quota = f"/api/v1/namespaces/{plugins}/resourcequotas"
        sc.api.post(quota, {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "no-pods"},
                            "spec": {"hard": {"pods": "0"}}})  # fmt: skip
        wait_for("the quota controller to count the namespace's pods",
                 lambda: (sc.api.get(f"{quota}/no-pods").get("status") or {}).get("hard"), 60)  # fmt: skip
        sc.api.post(f"/apis/apps/v1/namespaces/{plugins}/daemonsets", daemonset("kubeletplugin", sc.driver, None))
        failed = f"/api/v1/namespaces/{plugins}/events?fieldSelector=involvedObject.kind=DaemonSet,reason=FailedCreate"
        wait_for("the DaemonSet controller's FailedCreate event", lambda: sc.api.get(failed)["items"], 60)
        node = bound_and_not_registered(cluster, sc)

        r = cluster.kubectl_dra("explain", "pod", "web", "-n", sc.ns, "-o", "json")
        assert r.code == 1, str(r)
        f = plugin_finding(r.json)
        assert f["evidence"]["plugin"]["state"] == "no-pod", f
        assert "the DaemonSet controller cannot create its pods: Error creating:" in f["message"], f
        assert "exceeded quota: no-pods" in f["message"] and "(FailedCreate, " in f["message"], f
        assert "kubelet" not in f["message"].split("(FailedCreate")[1], f  # the node's slice is there: no restart
        assert not any(f["code"] == "DRA101" for f in r.json["findings"]), str(r)
        # devices says the same of the node: no plugin pod, because the quota refuses it
        status, reason, _ = devices_plugin(cluster, sc.driver, node)
        assert status == "no-pod" and "exceeded quota: no-pods" in reason and "(FailedCreate, " in reason, reason

        # The quota goes: the controller creates the node's plugin pod, which runs and is Ready (its status set as
        # a kubelet sets it) since before the kubelet's report. Then the kubelet restarts: it posts Starting about
        # its Node (stored in namespace default) and wipes the node's slices.
        sc.api.delete(f"{quota}/no-pods")
        # (the controller backs off after each refusal; an update of the DaemonSet queues it at once)
        sc.api.patch(f"/apis/apps/v1/namespaces/{plugins}/daemonsets/kubeletplugin",
                     {"metadata": {"annotations": {"e2e/quota": "removed"}}})  # fmt: skip

        def plugin_pod_on_node():
            items = sc.api.get(f"/api/v1/namespaces/{plugins}/pods")["items"]
            return [p for p in items if p["spec"].get("nodeName") == node]

        plugin = wait_for(f"a plugin pod bound to {node}", plugin_pod_on_node, 120)[0]
        long_ago = "2020-01-01T00:00:00Z"
        sc.api.patch(f"/api/v1/namespaces/{plugins}/pods/{plugin['metadata']['name']}/status", {"status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": long_ago}],
            "containerStatuses": [{"name": "plugin", "ready": True, "restartCount": 0, "started": True,
                                   "image": "registry.k8s.io/pause:3.10", "imageID": "",
                                   "state": {"running": {"startedAt": long_ago}}}],
        }})  # fmt: skip
        ts = clusterlib.now_rfc3339()
        started = sc.api.post("/api/v1/namespaces/default/events", {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{node}.{uuid.uuid4().hex[:16]}", "namespace": "default"},
            "involvedObject": {"kind": "Node", "name": node, "uid": node},
            "reason": "Starting", "message": "Starting kubelet.", "type": "Normal",
            "source": {"component": "kubelet", "host": node},
            "firstTimestamp": ts, "lastTimestamp": ts, "count": 1,
        })  # fmt: skip
        slices = "/apis/resource.k8s.io/v1/resourceslices"
        sc.api.delete(f"{slices}?fieldSelector=spec.nodeName={node},spec.driver={sc.driver}")
        wait_for("the node's slices to be wiped",
                 lambda: not sc.api.get(f"{slices}?fieldSelector=spec.driver={sc.driver}")["items"], 30)  # fmt: skip
        r = cluster.kubectl_dra("explain", "pod", "web", "-n", sc.ns, "-o", "json")
        f = plugin_finding(r.json)
        assert f["evidence"]["plugin"]["state"] == "pod-ready", f
        assert f"the kubelet on {node} started at " in f["message"], f
        assert "the plugin has likely not registered with it since" in f["message"], f
        assert f["evidence"]["plugin"]["kubeletStarted"]["lastTimestamp"] == ts, f
    finally:
        if started is not None:
            sc.api.delete(f"/api/v1/namespaces/default/events/{started['metadata']['name']}")
        cluster.delete_namespace(plugins)
