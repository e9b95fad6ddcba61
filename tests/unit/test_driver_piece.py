"""The driver piece's pure parts: the kubelet's words classified (messages as k8s.io/kubernetes pkg/kubelet/cm/dra
writes them), the plugin DaemonSet's candidates, link and coverage of a node."""

from __future__ import annotations

import pytest
from builders import node

from kubectl_dra.analyze.pod.driver import (
    PREPARE,
    UNPREPARE,
    coverage_gap,
    drivers_named,
    drivers_of_claims,
    is_plugin_candidate,
    link,
    pod_state,
)
from kubectl_dra.analyze.pod.kubelet import called_drivers, classify

PREFIX = "Failed to prepare dynamic resources: prepare dynamic resources: "


def ev(message, reason="FailedPrepareDynamicResources", count=1):
    return {"reason": reason, "message": message, "time": "2026-12-01T10:05:00Z", "firstTime": "2026-12-01T10:00:00Z",
            "count": count, "source": {"component": "kubelet", "host": "node-01"}}  # fmt: skip


@pytest.mark.parametrize(
    ("message", "cls", "piece", "driver", "detail"),
    [
        ("DRA driver gpu.example.com is not registered", "not-registered", "driver", "gpu.example.com", ""),
        ("DRA driver name is empty", "not-registered", "driver", None, ""),
        (
            "NodePrepareResources: rpc error: code = DeadlineExceeded desc = context deadline exceeded",
            "rpc-error",
            "driver",
            None,
            "DeadlineExceeded",
        ),
        (
            "NodePrepareResources: rpc error: code = Unavailable desc = connection refused",
            "rpc-error",
            "driver",
            None,
            "Unavailable",
        ),  # fmt: skip
        ("NodePrepareResources failed for ResourceClaim c1: GPU busy", "driver-error", "driver", None, ""),
        ("NodePrepareResources returned result for unknown claim UID 123", "driver-bug", "driver", None, ""),
        ("NodePrepareResources skipped 1 ResourceClaims", "driver-bug", "driver", None, ""),
        ('fetch ResourceClaim c1: resourceclaims.resource.k8s.io "c1" not found', "api", "claim", None, ""),
        ("pod web-0 (u1) is not allowed to use ResourceClaim c1 (u2)", "reservation", "claim", None, ""),
        ("ResourceClaim c1: not allocated", "allocation", "claim", None, ""),
        (
            "old ResourceClaim with same name c1 and different UID u3 still exists (previous pod force-deleted?!)",
            "node-state",
            "node",
            None,
            "",
        ),  # fmt: skip
        ("checkpoint ResourceClaim cache: disk full", "node-state", "node", None, ""),
        ("something new", "other", "driver", None, ""),
    ],
)
def test_the_kubelets_words_are_classified(message, cls, piece, driver, detail):
    w = classify(ev(PREFIX + message, count=4))
    assert (w.cls, w.piece, w.driver, w.detail) == (cls, piece, driver, detail)
    assert (w.count, w.first, w.last, w.host) == (4, "2026-12-01T10:00:00Z", "2026-12-01T10:05:00Z", "node-01")


def test_cdi_failures_and_other_events():
    w = classify(ev("Error: CDI device injection failed: unresolvable CDI devices k8s.x/gpu=0", reason="Failed"))
    assert w.cls == "cdi"
    assert classify(ev("Back-off restarting failed container", reason="BackOff")) is None
    assert classify(ev("image pull failed", reason="Failed")) is None


def test_class_selectors_pin_drivers():
    assert drivers_named(['device.driver == "gpu.example.com"', "'b.io' == device.driver && x"]) == {
        "gpu.example.com",
        "b.io",
    }
    assert drivers_named(["device.driver.startsWith('gpu')"]) == set()


def _ds(volumes, containers=None, **spec):
    return {
        "metadata": {"name": "p", "namespace": "drivers", "uid": "u"},
        "spec": {"template": {"spec": {"volumes": volumes, "containers": containers or [{"name": "c"}], **spec}}},
    }


REG = {"name": "r", "hostPath": {"path": "/var/lib/kubelet/plugins_registry/"}}


def test_candidates_mount_plugins_registry_and_are_not_csi():
    assert is_plugin_candidate(_ds([REG]))
    assert not is_plugin_candidate(_ds([{"name": "d", "hostPath": {"path": "/var/lib/kubelet/device-plugins"}}]))
    csi = _ds(
        [REG], [{"name": "node-driver-registrar", "image": "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2"}]
    )
    assert not is_plugin_candidate(csi)


def test_link_strength():
    named = _ds([REG], [{"name": "c", "args": ["--driver-name=gpu.example.com"]}])
    assert link(named, "gpu.example.com", [], set()) == "named"
    helm = _ds([REG])
    helm["metadata"]["annotations"] = {"meta.helm.sh/release-name": "g", "meta.helm.sh/release-namespace": "drivers"}
    cls = {"metadata": {"annotations": dict(helm["metadata"]["annotations"])},
           "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}  # fmt: skip
    assert link(helm, "gpu.example.com", [cls], set()) == "helm"
    assert link(helm, "other.example.com", [cls], set()) is None
    binary = _ds([REG], [{"name": "c", "command": ["/usr/bin/gpu-kubelet-plugin", "-v=4"]}])
    assert link(binary, "gpu.nvidia.com", [], {"gpu-kubelet-plugin"}) == "manager"
    assert link(binary, "gpu.nvidia.com", [], {"dranet"}) is None


def _node(labels=None, taints=None):
    return node("node-01", hostname=False, taints=taints or [], **(labels or {}))


def test_coverage_with_the_daemonset_controllers_tolerations():
    ds = _ds([REG], nodeSelector={"nvidia.com/gpu.present": "true"})
    assert coverage_gap(ds, _node()) == "node does not match its nodeSelector nvidia.com/gpu.present=true"
    assert coverage_gap(ds, _node({"nvidia.com/gpu.present": "true"})) is None
    # The controller tolerates not-ready/unreachable/pressure/unschedulable itself; a node's own taint it does not.
    plain = _ds([REG])
    assert coverage_gap(plain, _node(taints=[{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}])) is None
    assert (
        coverage_gap(plain, _node(taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}])) is None
    )
    gpu = [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    assert "untolerated taint nvidia.com/gpu" in coverage_gap(plain, _node(taints=gpu))
    assert (
        coverage_gap(_ds([REG], tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}]), _node(taints=gpu))
        is None
    )
    net = [{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}]
    assert coverage_gap(plain, _node(taints=net)) is not None
    assert coverage_gap(_ds([REG], hostNetwork=True), _node(taints=net)) is None


def test_plugin_pod_state():
    p = {
        "metadata": {"name": "x", "namespace": "drivers"},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "False"}],
            "containerStatuses": [
                {
                    "restartCount": 7,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": {"reason": "Error", "exitCode": 2, "finishedAt": "t"}},
                },  # fmt: skip
            ],
        },
    }
    st = pod_state(p)
    assert (st["ready"], st["restarts"], st["waiting"], st["lastTerminated"]["exitCode"]) == (
        False,
        7,
        "CrashLoopBackOff",
        2,
    )


def test_rollout_and_node_readiness_words():
    from kubectl_dra.analyze.pod.driver import _rollout, node_not_ready

    ds = {"status": {"desiredNumberScheduled": 4, "updatedNumberScheduled": 1}}
    assert _rollout(ds) == ", mid-rollout (1 of 4 pods updated)"
    assert _rollout({"status": {"desiredNumberScheduled": 4, "updatedNumberScheduled": 4}}) == ""
    assert _rollout({}) == ""
    ready = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    assert node_not_ready(ready) is None and node_not_ready(None) is None
    down = {"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady"}]}}
    assert node_not_ready(down) == "node is NotReady (KubeletNotReady)"


@pytest.mark.parametrize(
    "spec",
    [
        {"template": []},
        {"template": {"spec": "x"}},
        {"template": {"spec": {"containers": "x", "volumes": [1, {"hostPath": "x"}, {"hostPath": {"path": 5}}]}}},
        {"template": {"spec": {"volumes": [REG], "containers": [1, {"command": "c", "args": [1], "env": "x"}]}}},
        {"template": {"spec": {"volumes": [REG], "nodeSelector": ["a"], "tolerations": "x", "affinity": "x"}}},
        {
            "template": {
                "spec": {
                    "volumes": [REG],
                    "affinity": {
                        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [1]}}
                    },
                }
            }
        },
    ],
)
def test_a_malformed_daemonset_reads_as_absent_never_a_crash(spec):
    """DaemonSets are read from every namespace and walked by the driver piece only: a wrong shape is no traceback."""
    from kubectl_dra.analyze.pod.driver import Seen, daemon_pods, judge_on_node, judge_publishing

    ds = {"kind": "DaemonSet", "metadata": {"name": "p", "namespace": "x", "annotations": ["a"]}, "spec": spec}
    pod = {"metadata": {"name": "q", "namespace": "x", "ownerReferences": "x"}, "spec": {"nodeName": "node-01"},
           "status": {"containerStatuses": "nope", "conditions": [1]}}  # fmt: skip
    seen = Seen((ds,), None, daemon_pods((pod,)), None, True, ({"spec": {"selectors": [{"cel": "x"}]}},), ())
    for d in ("gpu.example.com",):
        judge_on_node(seen, d, _node(), "node-01", None)
        judge_publishing(seen, d)
    assert pod_state(pod)["restarts"] == 0


def _claim(*results):
    return {"status": {"allocation": {"devices": {"results": [
        {"driver": d, "device": f"dev{i}", **({"skipNodeOperations": ops} if ops is not None else {})}
        for i, (d, ops) in enumerate(results)
    ]}}}}  # fmt: skip


def test_skip_node_operations_per_driver_as_the_kubelet_computes_it():
    """k8s.io/kubernetes 1.37 pkg/kubelet/cm/dra claiminfo_test.go TestNewClaimInfoSkipNodeOperations: in one claim,
    a driver's call is skipped when every result of it lists the operation or "*"; an unknown value skips nothing."""
    c = _claim(
        ("driver-a", ["*"]), ("driver-a", ["*"]),
        ("driver-b", ["*"]), ("driver-b", None),
        ("driver-c", ["NodeUnprepareResources"]),
        ("driver-d", ["*"]), ("driver-d", ["NodeUnprepareResources"]),
        ("driver-e", ["NodeUnprepareResources"]), ("driver-e", None),
        ("driver-f", ["UnknownRpcCall"]),
        ("driver-g", ["*", "NodePrepareResources"]), ("driver-g", ["NodePrepareResources"]),
        ("driver-h", ["NodeUnprepareResources"]), ("driver-h", ["*", "NodePrepareResources"]),
    )  # fmt: skip
    every = [f"driver-{x}" for x in "abcdefgh"]
    assert drivers_of_claims([c]) == every
    assert drivers_of_claims([c], PREPARE) == [f"driver-{x}" for x in "bcdefh"]
    assert drivers_of_claims([c], UNPREPARE) == [f"driver-{x}" for x in "befg"]
    # a driver is called when any claim calls it; a malformed field skips nothing
    assert drivers_of_claims([_claim(("x", ["*"])), _claim(("x", None))], PREPARE) == ["x"]
    assert drivers_of_claims([_claim(("x", "*")), _claim(("y", [{"*": 1}]))], PREPARE) == ["x", "y"]


def test_the_kubelet_honours_skips_from_1_37_when_its_node_declares_the_feature():
    c = _claim(("gpu.example.com", ["*"]), ("net.example.com", None))
    declaring = {"status": {"declaredFeatures": ["DRAOptionalNodeOperations"]}}
    assert called_drivers([c], PREPARE, declaring, (1, 37)) == (["net.example.com"], ["gpu.example.com"])
    assert called_drivers([c], PREPARE, None, (1, 38)) == (["net.example.com"], ["gpu.example.com"])
    # 1.36 has no such field (its kubelet reads none), a node that does not declare the feature does not skip
    assert called_drivers([c], PREPARE, declaring, (1, 36)) == (["gpu.example.com", "net.example.com"], [])
    for other in ({"status": {"declaredFeatures": ["InPlacePodResize"]}}, {"status": {}}, {}):
        assert called_drivers([c], PREPARE, other, (1, 37)) == (["gpu.example.com", "net.example.com"], [])


def test_the_kubelet_refusing_skipped_devices_without_the_gate_is_the_nodes_piece():
    w = classify(ev(PREFIX + "ResourceClaim c1: DRAOptionalNodeOperations feature gate is disabled on kubelet"))
    assert (w.cls, w.piece) == ("skip-gate-off", "node")
