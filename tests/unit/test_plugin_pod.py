"""A kubelet plugin pod with several containers (NVIDIA's DaemonSet: `compute-domains` serves
compute-domain.nvidia.com, `gpus` serves gpu.nvidia.com, each a `bash -c` script that ends by running its binary,
as the chart's templates/kubeletplugin.yaml writes them), and devices' per-node verdicts built on the same code.

Pod Ready is the pod's (every container ready); readiness and restarts are each container's. A crash-looping
`compute-domains` must not make gpu.nvidia.com's plugin "not ready" when `gpus` is ready, and the link from a
container to a driver is a heuristic: "likely"."""

from __future__ import annotations

import pytest
from builders import node, rslice

from kubectl_dra.analyze.pod.driver import judge_nodes, judge_on_node
from kubectl_dra.analyze.pod.kubelet import seen_of
from kubectl_dra.analyze.pod.plugin_pod import pod_state, serving_container, state_words
from kubectl_dra.analyze.reports.node_plugins import NodePlugin, node_plugins
from kubectl_dra.model.snapshot import Gap, Snapshot
from kubectl_dra.render.options import RenderOptions

NS = "nvidia-dra-driver-gpu"
GPU, CD = "gpu.nvidia.com", "compute-domain.nvidia.com"


def _script(binary: str) -> list[str]:
    return [
        'if [ "${MASK_NVIDIA_DRIVER_PARAMS}" = "true" ]; then\n  cp /proc/driver/nvidia/params root/gpu-params\nfi\n'
        f"{binary} -v $(LOG_VERBOSITY)"
    ]


def _container(name: str, binary: str, env=()) -> dict:
    return {"name": name, "image": "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.8.0", "command": ["bash", "-c"],
            "args": _script(binary), "env": [{"name": "LOG_VERBOSITY", "value": "4"}, *env]}  # fmt: skip


def nvidia_ds(containers=None) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "nvidia-dra-driver-gpu-kubelet-plugin", "namespace": NS, "uid": "uid-ds-nv"},
        "spec": {
            "template": {
                "spec": {
                    "initContainers": [{"name": "init-container", "command": ["bash", "/usr/bin/prestart.sh"]}],
                    "containers": containers
                    or [
                        _container("compute-domains", "compute-domain-kubelet-plugin"),
                        _container("gpus", "gpu-kubelet-plugin"),
                    ],  # fmt: skip
                    "volumes": [
                        {"name": "plugins-registry", "hostPath": {"path": "/var/lib/kubelet/plugins_registry"}},
                        {"name": "plugins", "hostPath": {"path": "/var/lib/kubelet/plugins"}},
                    ],
                }
            }
        },
        "status": {"desiredNumberScheduled": 1, "numberReady": 0},
    }


def _status(name, ready, restarts=0, waiting=None):
    state = {"waiting": {"reason": waiting}} if waiting else {"running": {"startedAt": "2026-12-01T08:00:00Z"}}
    last = {"lastState": {"terminated": {"reason": "Error", "exitCode": 1, "finishedAt": "t"}}} if restarts else {}
    return {"name": name, "ready": ready, "restartCount": restarts, "state": state, **last}


def plugin_pod(cd_crashing=True, gpus_crashing=False, node_name="node-01") -> dict:
    cd = _status(
        "compute-domains", not cd_crashing, 7 if cd_crashing else 0, "CrashLoopBackOff" if cd_crashing else None
    )
    gp = _status("gpus", not gpus_crashing, 3 if gpus_crashing else 0, "CrashLoopBackOff" if gpus_crashing else None)
    ready = not cd_crashing and not gpus_crashing
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "nvidia-kubelet-plugin-x1",
            "namespace": NS,
            "uid": "uid-nv-pod",
            "ownerReferences": [
                {
                    "kind": "DaemonSet",
                    "name": "nvidia-dra-driver-gpu-kubelet-plugin",
                    "uid": "uid-ds-nv",
                    "controller": True,
                }
            ],
        },  # fmt: skip
        "spec": {"nodeName": node_name},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            "initContainerStatuses": [
                {
                    "name": "init-container",
                    "ready": True,
                    "restartCount": 0,
                    "state": {"terminated": {"exitCode": 0, "reason": "Completed"}},
                }
            ],  # fmt: skip
            "containerStatuses": [cd, gp],
        },
    }


def _slice(driver: str, manager: str | None, node_name="node-01") -> dict:
    s = rslice(f"{node_name}-{driver}", [{"name": "gpu-0"}], node_name, driver=driver)
    if manager:
        s["metadata"]["managedFields"] = [{"manager": manager, "operation": "Update"}]
    return s


def snapshot(pod, managers=True, ds=None, **more) -> Snapshot:
    slices = (_slice(GPU, "gpu-kubelet-plugin" if managers else None),
              _slice(CD, "compute-domain-kubelet-plugin" if managers else None))  # fmt: skip
    return Snapshot(pods=(pod,) if pod else (), slices=slices, nodes=(node("node-01"),),
                    workloads=(ds or nvidia_ds(),), source="live", listed=frozenset({"daemonsets"}), bound_pods=True,
                    **more)  # fmt: skip


def test_the_container_that_runs_the_binary_that_wrote_the_slices_serves_the_driver():
    tmpl = nvidia_ds()["spec"]["template"]["spec"]
    assert serving_container(tmpl, GPU, {"gpu-kubelet-plugin"}) == ("gpus", "manager")
    assert serving_container(tmpl, CD, {"compute-domain-kubelet-plugin"}) == ("compute-domains", "manager")
    assert serving_container(tmpl, GPU, set()) is None  # nothing singles one out: the pod as a whole
    both = [_container("a", "gpu-kubelet-plugin"), _container("b", "gpu-kubelet-plugin")]
    assert serving_container({"containers": both}, GPU, {"gpu-kubelet-plugin"}) is None
    named = [_container("a", "x", [{"name": "DRIVER_NAME", "value": GPU}]), _container("b", "gpu-kubelet-plugin")]
    assert serving_container({"containers": named}, GPU, {"gpu-kubelet-plugin"}) == ("a", "named")
    assert serving_container({"containers": [_container("only", "gpu-kubelet-plugin")]}, GPU, {"x"}) is None


def test_container_state_is_the_containers_own_and_pod_ready_the_pods():
    pod = plugin_pod()
    whole = pod_state(pod)
    assert (whole["ready"], whole["restarts"], whole["waiting"], whole["notReady"]) == (
        False, 7, "CrashLoopBackOff", ["compute-domains"])  # fmt: skip
    assert "containers not ready: compute-domains" in state_words(whole)
    gpus = pod_state(pod, "gpus")
    assert (gpus["ready"], gpus["podReady"], gpus["restarts"], gpus["waiting"], gpus["container"]) == (
        True, False, 0, None, "gpus")  # fmt: skip
    assert pod_state(pod, "nosuch")["container"] is None  # no status of it: the pod as a whole


def test_a_crashing_neighbour_does_not_make_the_drivers_plugin_not_ready():
    seen = seen_of(snapshot(plugin_pod()))
    gpu = judge_on_node(seen, GPU, node("node-01"), "node-01", None)
    assert gpu.state == "pod-ready" and not gpu.problem
    assert gpu.pod["container"] == "gpus" and gpu.pod["restarts"] == 0
    assert "compute-domains not ready" in gpu.message and "likely serves gpu.nvidia.com" in gpu.message
    cd = judge_on_node(seen, CD, node("node-01"), "node-01", None)
    assert cd.state == "pod-not-ready" and cd.problem
    assert cd.reason == "container compute-domains: CrashLoopBackOff, 7 restarts, last exit 1 (Error)"


def test_the_drivers_own_container_crashing_is_not_ready():
    seen = seen_of(snapshot(plugin_pod(cd_crashing=False, gpus_crashing=True)))
    assert judge_on_node(seen, GPU, node("node-01"), "node-01", None).state == "pod-not-ready"
    assert judge_on_node(seen, CD, node("node-01"), "node-01", None).state == "pod-ready"


def test_without_a_container_link_the_pod_as_a_whole_is_judged_and_says_which_container():
    """No slice manager to go by (an older apiserver, a dump without managedFields): which container serves
    gpu.nvidia.com is undetermined, so the pod's Ready decides, and the words name the container that is not."""
    seen = seen_of(snapshot(plugin_pod(), managers=False))
    gpu = judge_on_node(seen, GPU, node("node-01"), "node-01", None)
    assert gpu.state == "pod-not-ready" and gpu.pod["container"] is None
    assert "containers not ready: compute-domains" in gpu.reason


def test_devices_says_likely_serving_and_not_ready_per_driver():
    snap = snapshot(plugin_pod())

    class Row:
        def __init__(self, driver):
            self.driver, self.node = driver, "node-01"

    got = {p.driver: p for p in node_plugins(snap, [Row(GPU), Row(CD)])}
    assert got[GPU].status == "serving" and got[GPU].likely
    assert got[GPU].words() == (
        "gpu.nvidia.com plugin likely serving (container gpus ready; the pod is not Ready: compute-domains not ready)"
    )
    assert got[CD].status == "not-ready" and not got[CD].likely
    assert got[CD].to_dict()["pod"]["container"] == "compute-domains"


def test_devices_names_an_untolerated_taint_and_the_only_plugin_as_likely():
    tainted = node("node-01", taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}])
    seen = seen_of(snapshot(None, managers=False))
    p = judge_nodes(seen, "other.example.com", {"node-01": tainted})["node-01"]
    assert p.state == "not-covered" and p.link == "only"
    np = NodePlugin("node-01", "other.example.com", "no-pod", p.reason, p)
    assert np.likely
    assert np.words() == (
        "other.example.com no plugin pod (node has the untolerated taint nvidia.com/gpu=present:NoSchedule); likely "
        f"DaemonSet {NS}/nvidia-dra-driver-gpu-kubelet-plugin, the only kubelet plugin found"
    )


@pytest.mark.parametrize(
    ("more", "reason"),
    [
        ({"gaps": (Gap("list", "daemonsets.apps", None, "forbidden", "no"),), "listed": frozenset(), "workloads": ()},
         "cannot list daemonsets.apps: no"),
        ({"workloads": ()}, "no DaemonSet found that runs it (no DaemonSet other than a CSI node plugin mounts the "
         "kubelet's plugins_registry)"),
    ],
)  # fmt: skip
def test_devices_unknown_says_which(more, reason):
    base = snapshot(plugin_pod())
    snap = Snapshot(**{**{k: getattr(base, k) for k in base.__dataclass_fields__}, **more})

    class Row:
        driver, node = GPU, "node-01"

    (p,) = node_plugins(snap, [Row()])
    assert (p.status, p.reason) == ("unknown", reason)


def test_the_only_plugin_is_not_another_named_drivers():
    """One kubelet plugin DaemonSet, whose template names gpu.example.com: it is not taken for nic.example.com's
    plugin just because it is the only one (the fallback link "only" is for a DaemonSet that names no driver)."""
    ds = nvidia_ds(
        [_container("plugin", "dra-example-kubeletplugin", [{"name": "DRIVER_NAME", "value": "gpu.example.com"}])]
    )
    slices = (_slice("gpu.example.com", None), _slice("nic.example.com", None))
    seen = seen_of(Snapshot(slices=slices, nodes=(node("node-01"),), workloads=(ds,), source="live",
                            listed=frozenset({"daemonsets"}), bound_pods=True))  # fmt: skip
    assert judge_nodes(seen, "gpu.example.com", {"node-01": node("node-01")})["node-01"].link == "named"
    nic = judge_nodes(seen, "nic.example.com", {"node-01": node("node-01")})["node-01"]
    assert (nic.state, nic.daemonset) == ("not-found", None)


def test_devices_notes_escape_what_the_cluster_wrote():
    """A waiting reason and a node name are the cluster's strings: the note and the wide column escape them."""
    import io

    from kubectl_dra.analyze.reports.inventory import inventory
    from kubectl_dra.features import Semantics
    from kubectl_dra.render.devices import render_inventory

    pod = plugin_pod(cd_crashing=False, gpus_crashing=True, node_name="node-01")
    pod["status"]["containerStatuses"][1]["state"] = {"waiting": {"reason": "Crash\x1b[2J\nLoop"}}
    snap = snapshot(pod, classes=())
    report = inventory(snap, Semantics.for_version((1, 37)), {})
    for fmt in ("text", "wide"):
        out = io.StringIO()
        render_inventory(report, RenderOptions(fmt, width=80), out, listing=False)
        text = out.getvalue()
        assert "\x1b" not in text and "Crash\\x1b[2J\\nLoop" in text, text
