"""The driver piece's pure parts: the kubelet's words classified (messages as k8s.io/kubernetes pkg/kubelet/cm/dra
writes them), the plugin DaemonSet's candidates, link and coverage of a node."""

from __future__ import annotations

import pytest
from builders import node

from kubectl_dra.analyze.pod.daemonset import coverage_gap, drivers_named, is_plugin_candidate, link
from kubectl_dra.analyze.pod.driver import PREPARE, UNPREPARE, drivers_of_claims
from kubectl_dra.analyze.pod.kubelet import called_drivers, classify
from kubectl_dra.analyze.pod.plugin_pod import pod_state

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
    from kubectl_dra.analyze.pod.daemonset import rollout as _rollout
    from kubectl_dra.analyze.pod.driver import node_not_ready

    ds = {"status": {"desiredNumberScheduled": 4, "currentNumberScheduled": 4, "updatedNumberScheduled": 1}}
    assert _rollout(ds) == ", mid-rollout (1 of 4 pods updated)"
    # a pod that cannot be created counts as neither current nor updated: fewer updated than desired is no rollout
    assert (
        _rollout({"status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 2, "updatedNumberScheduled": 2}})
        == ""
    )
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
    from kubectl_dra.analyze.pod.driver import judge_on_node, judge_publishing
    from kubectl_dra.analyze.pod.plugin_find import Seen, daemon_pods

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


def _plugin_ds(**extra):
    ds = {"kind": "DaemonSet", "metadata": {"name": "gpu-plugin", "namespace": "drv", "uid": "u-ds"},
          "spec": {"template": {"spec": {"volumes": [REG], "containers": [{"command": ["p", "gpu.example.com"]}]}}},
          "status": {"desiredNumberScheduled": 4, "currentNumberScheduled": 4, "updatedNumberScheduled": 4,
                     "numberReady": 4}}  # fmt: skip
    for k, v in extra.items():
        ds[k] = {**ds.get(k, {}), **v}
    return ds


def _seen(ds, pods=(), events=(), **kw):
    from kubectl_dra.analyze.pod.plugin_find import Seen, daemon_pods

    creates: dict = {}
    for e in events:
        creates.setdefault((e["object"]["namespace"], e["object"]["name"]), []).append(e)
    return Seen((ds,), None, daemon_pods(pods), None, True, (), (), creates, **kw)


def _failed(message, count, last, uid="u-ds"):
    return {"reason": "FailedCreate", "message": message, "count": count, "time": last,
            "firstTime": "2026-12-01T09:00:00Z", "source": {"component": "daemonset-controller", "host": ""},
            "object": {"kind": "DaemonSet", "namespace": "drv", "name": "gpu-plugin", "uid": uid}}  # fmt: skip


def test_the_daemonset_controllers_failed_create_explains_a_missing_pod():
    from kubectl_dra.analyze.pod.driver import failed_create, judge_on_node, judge_publishing

    ds = _plugin_ds()
    psa = 'Error creating: pods "gpu-plugin-x" is forbidden: violates PodSecurity "baseline:latest": hostPath volumes'
    events = [_failed("older", 1, "2026-12-01T09:00:00Z"), _failed(psa, 12, "2026-12-01T10:00:00Z"),
              _failed("another DaemonSet of the name, deleted", 1, "2026-12-01T11:00:00Z", uid="u-old")]  # fmt: skip
    said, words = failed_create(_seen(ds, events=events), ds)
    assert (
        said == "failed" and psa in words and "12 times since 2026-12-01T09:00:00Z, last 2026-12-01T10:00:00Z" in words
    )
    p = judge_on_node(_seen(ds, events=events), "gpu.example.com", _node(), "node-01", None)
    assert (p.state, p.problem) == ("no-pod", True)
    assert "its spec admits the node, and the DaemonSet controller" in p.message
    assert p.to_dict()["failedCreate"] == {"message": psa, "count": 12, "firstTimestamp": "2026-12-01T09:00:00Z",
                                           "lastTimestamp": "2026-12-01T10:00:00Z"}  # fmt: skip
    assert "rollout" not in p.to_dict() and "kubeletStarted" not in p.to_dict()
    # listed, none: the controller said nothing; not read: the rule is undetermined and says which read
    assert failed_create(_seen(ds, failed_creates_listed=True), ds) == ("none", "")
    p = judge_on_node(_seen(ds, failed_creates_listed=True), "gpu.example.com", _node(), "node-01", None)
    assert "reported no FailedCreate (kubectl describe ds -n drv gpu-plugin)" in p.message
    gap = "cannot list events in every namespace (events is forbidden)"
    said, words = failed_create(_seen(ds, failed_creates_gap=gap), ds)
    assert said == "unknown" and words == f"its FailedCreate events were not read: {gap}"
    assert "kubectl get events -n drv -o yaml" in failed_create(_seen(ds), ds)[1]  # a file without them
    # no pod anywhere (no slices at all): the count of ready pods, then why none was created
    quiet = _plugin_ds(status={"numberReady": 0})
    p = judge_publishing(_seen(quiet, events=events), "gpu.example.com")
    assert p.state == "pods-not-ready" and "0 of 4 pods ready; the DaemonSet controller cannot create" in p.message


def test_a_rollout_says_the_plugin_may_be_down_and_how_many_nodes_at_once():
    from kubectl_dra.analyze.pod.daemonset import max_unavailable, update_note

    nvidia = _plugin_ds(spec={"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%"}}})
    assert max_unavailable(nvidia) == "maxUnavailable 100%: every node may lose its plugin at once"
    assert max_unavailable(_plugin_ds()) == "maxUnavailable 1: up to 1 of 4 nodes lose their plugin at a time"
    all4 = _plugin_ds(spec={"updateStrategy": {"rollingUpdate": {"maxUnavailable": 4}}})
    assert max_unavailable(all4).endswith("every node may lose its plugin at once")
    surge = _plugin_ds(spec={"updateStrategy": {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}})
    assert max_unavailable(surge) == "maxSurge 1: the new pod starts on a node before the old one stops"
    assert max_unavailable(_plugin_ds(spec={"updateStrategy": {"type": "OnDelete"}})).startswith(
        "updateStrategy OnDelete"
    )
    # the node's pod of an older template generation (controller/daemon/util IsPodUpdated)
    ds = _plugin_ds(metadata={"annotations": {"deprecated.daemonset.template.generation": "7"}},
                    status={"updatedNumberScheduled": 1, "currentNumberScheduled": 4})  # fmt: skip
    old = {"metadata": {"labels": {"pod-template-generation": "6"}}}
    new = {"metadata": {"labels": {"pod-template-generation": "7"}}}
    assert "of an older template (pod-template-generation 6, the DaemonSet's 7)" in update_note(ds, old)
    assert update_note(ds, new) == ""  # the rollout has passed this node
    assert "the rollout may have deleted its pod here" in update_note(ds, None)
    steady = _plugin_ds(metadata={"annotations": {"deprecated.daemonset.template.generation": "7"}})
    assert update_note(steady, None) == "" and "older template" in update_note(steady, old)
    assert update_note(_plugin_ds(), {"metadata": {"labels": {"pod-template-generation": 6}}}) == ""  # wrong shape
    # fields of the wrong shape read as absent or are quoted, never a crash (the input is untrusted)
    for bad in ({"updateStrategy": "x"}, {"updateStrategy": {"rollingUpdate": {"maxUnavailable": [1], "maxSurge": {}}}},
                {"updateStrategy": {"rollingUpdate": {"maxUnavailable": "x%", "maxSurge": True}}}):  # fmt: skip
        assert max_unavailable(_plugin_ds(spec=bad, status={"desiredNumberScheduled": "4"})).startswith("max")
    assert update_note(_plugin_ds(metadata={"annotations": "x"}), {"metadata": {"labels": ["x"]}}) == ""
    # rolling, the pod's template unknown (no label): either pod; 25% of 4 nodes rounds up to 1, "50%" to 2
    assert "its pod here may be the old one, to be replaced, or the new one" in update_note(ds, {})
    half = _plugin_ds(spec={"updateStrategy": {"rollingUpdate": {"maxUnavailable": "50%"}}})
    assert max_unavailable(half) == "maxUnavailable 50%: up to 2 of 4 nodes lose their plugin at a time"
    assert max_unavailable(_plugin_ds(spec={"updateStrategy": {"rollingUpdate": {"maxUnavailable": "25%"}}})).endswith(
        "up to 1 of 4 nodes lose their plugin at a time"
    )


def test_a_recent_kubelet_start_where_the_node_has_no_slice_of_the_driver():
    """A plugin pod Ready since before the kubelet's `not registered`, no slice of the driver for the node, and the
    kubelet's Starting event: the start wiped the node's slices and the plugin has likely not registered since."""
    from kubectl_dra.analyze.pod.driver import judge_on_node
    from kubectl_dra.analyze.pod.plugin_find import Seen

    ds = _plugin_ds()
    ready = {"metadata": {"name": "gpu-plugin-a", "namespace": "drv", "ownerReferences": [
             {"kind": "DaemonSet", "name": "gpu-plugin", "uid": "u-ds"}]}, "spec": {"nodeName": "node-01"},
             "status": {"conditions": [{"type": "Ready", "status": "True"}], "containerStatuses": [
                 {"state": {"running": {"startedAt": "2026-12-01T08:00:00Z"}}}]}}  # fmt: skip
    word = classify(ev(PREFIX + "DRA driver gpu.example.com is not registered"))
    start = {"reason": "Starting", "count": 2, "time": "2026-12-01T10:00:00Z", "firstTime": "2026-12-01T09:30:00Z",
             "object": {"kind": "Node", "name": "node-01"}, "source": {"component": "kubelet", "host": "node-01"}}  # fmt: skip
    seen = _seen(ds, [ready], kubelet_starts={"node-01": [start]})
    p = judge_on_node(seen, "gpu.example.com", _node(), "node-01", word)
    assert (p.state, p.problem) == ("pod-ready", True)
    assert "the kubelet on node-01 started at 2026-12-01T10:00:00Z (event Starting, 2 starts since" in p.message
    assert p.to_dict()["kubeletStarted"]["lastTimestamp"] == "2026-12-01T10:00:00Z"
    gap = "cannot list events in namespace default (forbidden)"
    p = judge_on_node(_seen(ds, [ready], kubelet_starts_gap=gap), "gpu.example.com", _node(), "node-01", word)
    assert p.message.endswith(f"; whether its kubelet restarted is unknown: {gap}")
    p = judge_on_node(_seen(ds, [ready]), "gpu.example.com", _node(), "node-01", word)
    assert "started at 2026" not in p.message and "restarted" not in p.message  # nothing known, nothing said
    # a driver whose pools are not node-local (nodeSelector, allNodes): the kubelet's wipe does not touch them
    shared = ({"spec": {"driver": "gpu.example.com", "allNodes": True}},)
    other = Seen(*[shared if f == "slices" else getattr(seen, f) for f in Seen.__dataclass_fields__])
    assert "started at 2026" not in judge_on_node(other, "gpu.example.com", _node(), "node-01", word).message
    # a DaemonSet kept off the node: there was never a plugin here for the restart to explain
    ds["spec"]["template"]["spec"]["nodeSelector"] = {"gpu": "yes"}
    p = judge_on_node(seen, "gpu.example.com", _node(), "node-01", word)
    assert p.state == "not-covered" and "started at 2026" not in p.message


def test_a_kubelet_without_the_gate_refuses_devices_that_skip_node_operations():
    from kubectl_dra.analyze.pod.kubelet import kubelet_findings
    from kubectl_dra.model.objects import snapshot_from_objects

    pod = {"metadata": {"name": "web-0", "namespace": "ml"}, "spec": {"nodeName": "node-01"}, "status": {}}
    said = ev(PREFIX + "ResourceClaim c1: DRAOptionalNodeOperations feature gate is disabled on kubelet")
    out = kubelet_findings(snapshot_from_objects([], "ml"), None, pod, [_claim(("gpu.example.com", ["*"]))], [said])
    assert [f.code for f in out] == ["DRA609"]
    assert out[0].message.endswith("which a kubelet without the DRAOptionalNodeOperations feature gate refuses")


def test_the_driver_pieces_events_as_read_live_refused_or_from_files():
    """seen_of: a live read that listed the events means none is none; a refused one names the permission; files
    hold what they hold. (A refusal of these reads is said by the rule, not as DRA101: DRIVER_PIECE_READS.)"""
    from kubectl_dra.analyze.pod.kubelet import DRIVER_PIECE_READS, seen_of
    from kubectl_dra.gather.assemble import live_snapshot
    from kubectl_dra.model.objects import snapshot_from_objects
    from kubectl_dra.model.snapshot import DAEMONSET_EVENTS, NODE_EVENTS, Gap

    ds = _plugin_ds()
    started = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "n.1", "namespace": "default"},
               "involvedObject": {"kind": "Node", "name": "node-01"}, "reason": "Starting", "message": "Starting kubelet.",
               "source": {"component": "kubelet", "host": "node-01"}, "lastTimestamp": "2026-12-01T10:00:00Z"}  # fmt: skip
    proxy = dict(started, source={"component": "kube-proxy"}, metadata={"name": "n.2", "namespace": "default"})
    listed = live_snapshot([ds, started, proxy], {"namespace": "ml", "listed": frozenset({"daemonsets",
                           "daemonset_events", "node_events"})})  # fmt: skip
    seen = seen_of(listed)
    assert seen.failed_creates_listed and seen.failed_creates_gap is None and seen.kubelet_starts_gap is None
    assert [e["source"]["component"] for e in seen.kubelet_starts["node-01"]] == ["kubelet"]
    refused = [Gap("list", DAEMONSET_EVENTS, None, "forbidden", 'events is forbidden: User "u" cannot list'),
               Gap("list", NODE_EVENTS, "default", "forbidden", "forbidden")]  # fmt: skip
    seen = seen_of(
        live_snapshot([ds], {"namespace": "ml", "listed": frozenset({"daemonsets"}), "gaps": tuple(refused)})
    )
    assert not seen.failed_creates_listed
    assert (
        seen.failed_creates_gap == 'cannot list events in every namespace (events is forbidden: User "u" cannot list)'
    )
    assert seen.kubelet_starts_gap == "cannot list events in namespace default (forbidden)"
    assert {DAEMONSET_EVENTS, NODE_EVENTS} <= set(DRIVER_PIECE_READS)
    files = seen_of(snapshot_from_objects([ds], "ml"))
    assert (files.failed_creates_listed, files.failed_creates_gap, files.kubelet_starts_gap) == (False, None, None)
