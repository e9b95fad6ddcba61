"""The driver piece's scenarios built on NVIDIA's GPU driver chart (kubernetes-sigs/dra-driver-nvidia-gpu,
deployments/helm: templates/kubeletplugin.yaml, values.yaml): one DaemonSet with two containers, `gpus` for
gpu.nvidia.com and `compute-domains` for compute-domain.nvidia.com, the drivers' names compiled in, a required
node affinity on Node Feature Discovery's labels, and Helm's metadata on everything it installs. Registered by
driver_inputs.register."""

from __future__ import annotations

from driver_inputs import daemonset as _daemonset
from driver_inputs import plugin_pod

NV_NS = "nvidia-dra-driver-gpu"


def nvidia_daemonset() -> dict:
    """NVIDIA's kubelet plugin DaemonSet as its chart (templates/kubeletplugin.yaml) renders it, the parts the
    driver piece reads: an init container, then `compute-domains` and `gpus`, each a `bash -c` script that ends by
    running its plugin binary; the drivers' names are compiled in, not in the spec."""

    def container(name, binary):
        script = ('if [ "${MASK_NVIDIA_DRIVER_PARAMS}" = "true" ]; then\n  mount --bind root/gpu-params '
                  f"/proc/driver/nvidia/params\nfi\n{binary} -v $(LOG_VERBOSITY)")  # fmt: skip
        return {"name": name, "image": "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.8.0", "command": ["bash", "-c"],
                "args": [script], "env": [{"name": "LOG_VERBOSITY", "value": "4"}, {"name": "CDI_ROOT",
                                                                                    "value": "/var/run/cdi"}]}  # fmt: skip

    ds = _daemonset(name="nvidia-dra-driver-gpu-kubelet-plugin", ns=NV_NS, env_driver=None,
                   status={"desiredNumberScheduled": 2, "numberReady": 1, "currentNumberScheduled": 2})  # fmt: skip
    spec = ds["spec"]["template"]["spec"]
    spec["initContainers"] = [{"name": "init-container", "command": ["bash", "/usr/bin/kubelet-plugin-prestart.sh"]}]
    spec["containers"] = [container("compute-domains", "compute-domain-kubelet-plugin"),
                          container("gpus", "gpu-kubelet-plugin")]  # fmt: skip
    spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    return ds


def register(m) -> None:
    """m: the make_inputs module."""
    ds = nvidia_daemonset()

    def status(name, crashing):
        if crashing:
            return {"name": name, "ready": False, "restartCount": 7, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": {"reason": "Error", "exitCode": 1,
                                                 "finishedAt": "2026-11-30T09:20:00Z"}}}  # fmt: skip
        return {
            "name": name,
            "ready": True,
            "restartCount": 0,
            "state": {"running": {"startedAt": "2026-11-30T08:00:00Z"}},
        }

    def pod(node_name, cd_crashing):
        p = plugin_pod(ds, node_name, ready=not cd_crashing)
        p["status"]["containerStatuses"] = [status("compute-domains", cd_crashing), status("gpus", False)]
        return p

    def nv_slice(driver, manager, node_name, devices):
        s = m.rslice(f"{node_name}-{driver}", devices, node_name, driver=driver)
        s["metadata"]["managedFields"] = [
            {"manager": manager, "operation": "Update", "apiVersion": "resource.k8s.io/v1"}
        ]
        return s

    nodes = ("node-01", "node-02")
    m.scenario(
        "devices-plugin-two-containers",
        "NVIDIA's kubelet plugin pod (namespace nvidia-dra-driver-gpu, the chart's two containers) on node-02: "
        "compute-domains crash-loops, gpus is ready, so the pod is not Ready. The slices' field managers tie gpus "
        "to gpu.nvidia.com and compute-domains to compute-domain.nvidia.com: gpu.nvidia.com's plugin likely serves "
        "node-02, compute-domain.nvidia.com's does not.",
        "devices",
        [
            m.node("node-01", zone="a"),
            m.node("node-02", zone="b"),
            m.dclass("gpu.nvidia.com", 'device.driver == "gpu.nvidia.com"'),
            m.dclass("compute-domain-default-channel.nvidia.com", 'device.driver == "compute-domain.nvidia.com"'),
            *(nv_slice("gpu.nvidia.com", "gpu-kubelet-plugin", n, [m.dev("gpu-0"), m.dev("gpu-1")]) for n in nodes),
            *(
                nv_slice("compute-domain.nvidia.com", "compute-domain-kubelet-plugin", n, [{"name": "channel-0"}])
                for n in nodes
            ),  # fmt: skip
            ds,
            pod("node-01", False),
            pod("node-02", True),
        ],
    )
