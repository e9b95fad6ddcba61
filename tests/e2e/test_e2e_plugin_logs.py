"""explain pod --plugin-logs against a real control plane (v1.37.2): the kubelet plugin's pod, created by the real
DaemonSet controller and bound by the real scheduler, sits on a node with no kubelet, so the real API server cannot
fetch its log: one `log: not read:` line under DRA607, no traceback, the exit code unchanged. Without the flag the
audit log shows no pods/log request at all."""

from __future__ import annotations

import pytest
from builders import device
from e2e_helpers import wait_for
from test_e2e_driver import bound_and_not_registered, daemonset, plugin_finding

pytestmark = pytest.mark.e2e


def _log_requests(cluster, ns: str) -> list[str]:
    return [
        e.get("requestURI") or ""
        for e in cluster.audit_entries()
        if (e.get("objectRef") or {}).get("subresource") == "log" and (e.get("objectRef") or {}).get("namespace") == ns
    ]


def test_plugin_logs_only_when_asked_and_a_node_without_kubelet_is_one_line(cluster, scenario):
    sc = scenario("plogs")
    sc.device_class()
    sc.slice([device("gpu-0")])
    plugins = cluster.create_namespace("plog-plugins")
    try:
        sc.api.post(f"/apis/apps/v1/namespaces/{plugins}/daemonsets", daemonset("kubeletplugin", sc.driver, None))
        node = bound_and_not_registered(cluster, sc)

        def plugin_pod_on_node():
            items = sc.api.get(f"/api/v1/namespaces/{plugins}/pods")["items"]
            return [p for p in items if p["spec"].get("nodeName") == node]

        wait_for(f"a plugin pod bound to {node}", plugin_pod_on_node, 120)
        name = plugin_pod_on_node()[0]["metadata"]["name"]

        plain = cluster.kubectl_dra("explain", "pod", "web", "-n", sc.ns, "-o", "json")
        assert plain.code == 1, str(plain)
        assert "log" not in plugin_finding(plain.json)["evidence"]["plugin"], str(plain)
        assert _log_requests(cluster, plugins) == []  # no flag, no pods/log request

        r = cluster.kubectl_dra("explain", "pod", "web", "-n", sc.ns, "--plugin-logs=5", "-o", "json")
        assert r.code == plain.code and "Traceback" not in r.stderr, str(r)
        assert r.json["verdict"] == plain.json["verdict"], str(r)
        log = plugin_finding(r.json)["evidence"]["plugin"]["log"]
        # Pending, no container status yet: the pod's only container, which the API server picks itself
        assert log["container"] is None and log["tailLines"] == 5 and "lines" not in log, log
        # the API server cannot reach the node's kubelet (the fake node has none): its 500, in one line
        assert "500" in log["error"] and "\n" not in log["error"], log
        asked = _log_requests(cluster, plugins)
        assert asked and all(f"/pods/{name}/log?" in u and "tailLines=5" in u for u in asked), asked

        t = cluster.kubectl_dra("explain", "pod", "web", "-n", sc.ns, "--plugin-logs")
        assert t.code == plain.code and "Traceback" not in t.stderr, str(t)
        block = t.stdout[t.stdout.index("DRA607 driver-plugin") :]  # the finding, not the Pieces line
        assert "           log: not read: " in block.split("hint:")[0], str(t)
    finally:
        cluster.delete_namespace(plugins)
