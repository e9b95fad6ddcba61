"""The driver piece's scenarios built on NVIDIA's GPU driver chart (kubernetes-sigs/dra-driver-nvidia-gpu,
deployments/helm: templates/kubeletplugin.yaml, values.yaml): one DaemonSet with two containers, `gpus` for
gpu.nvidia.com and `compute-domains` for compute-domain.nvidia.com, the drivers' names compiled in, a required
node affinity on Node Feature Discovery's labels, and Helm's metadata on everything it installs. Registered by
driver_inputs.register."""

from __future__ import annotations

from builders import allocation
from driver_objects import daemonset as _daemonset
from driver_objects import plugin_pod

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
    register_chart(m)


# The chart as `helm install dra-driver-nvidia-gpu ... -n dra-driver-nvidia-gpu` writes it (docs/install.md):
# Helm's annotations on everything it installs (DaemonSet and DeviceClasses alike), the chart's standard labels.
CHART_NS = RELEASE = "dra-driver-nvidia-gpu"
HELM = {"meta.helm.sh/release-name": RELEASE, "meta.helm.sh/release-namespace": CHART_NS}
LABELS = {
    "helm.sh/chart": "dra-driver-nvidia-gpu-25.12.0",
    "app.kubernetes.io/version": "25.12.0",
    "app.kubernetes.io/managed-by": "Helm",
    "app.kubernetes.io/name": RELEASE,
    "app.kubernetes.io/instance": RELEASE,
}
# values.yaml kubeletPlugin.affinity: a node with an NVIDIA PCI device found by NFD, or labelled by the GPU Operator
NFD_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": k, "operator": "In", "values": [v]}]}
                for k, v in (
                    ("feature.node.kubernetes.io/pci-10de.present", "true"),
                    ("feature.node.kubernetes.io/pci-0302_10de.present", "true"),
                    ("feature.node.kubernetes.io/pci-0300_10de.present", "true"),
                    ("feature.node.kubernetes.io/cpu-model.vendor_id", "NVIDIA"),
                    ("nvidia.com/gpu.present", "true"),
                )
            ]
        }
    }
}
GPU_NODE = {"feature.node.kubernetes.io/pci-10de.present": "true"}


def chart_daemonset(status=None) -> dict:
    """The chart's kubelet plugin DaemonSet (templates/kubeletplugin.yaml with values.yaml's defaults)."""
    ds = nvidia_daemonset()
    ds["metadata"] = {
        "name": f"{RELEASE}-kubelet-plugin",
        "namespace": CHART_NS,
        "uid": "uid-ds-nvidia-kubelet-plugin",
        "labels": dict(LABELS),
        "annotations": {**HELM, "deprecated.daemonset.template.generation": "1"},
    }
    component = {f"{RELEASE}-component": "kubelet-plugin"}
    ds["spec"]["selector"] = {"matchLabels": component}
    ds["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%"}}
    t = ds["spec"]["template"]
    t["metadata"] = {"labels": {"app.kubernetes.io/name": RELEASE, "app.kubernetes.io/instance": RELEASE, **component}}
    t["spec"]["priorityClassName"] = "system-node-critical"
    t["spec"]["affinity"] = NFD_AFFINITY
    for c in t["spec"]["containers"]:
        c["image"] = "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v25.12.0"
    ds["status"] = status or {"desiredNumberScheduled": 2, "currentNumberScheduled": 2, "numberReady": 2,
                              "updatedNumberScheduled": 2, "numberAvailable": 2}  # fmt: skip
    return ds


def chart_classes(m) -> list:
    """The chart's DeviceClasses (templates/deviceclass-*.yaml), with Helm's annotations."""
    out = [
        m.dclass("gpu.nvidia.com", "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"),
        m.dclass("compute-domain-default-channel.nvidia.com", "device.driver == 'compute-domain.nvidia.com' && "
                 "device.attributes['compute-domain.nvidia.com'].type == 'channel'"),
    ]  # fmt: skip
    for c in out:
        c["metadata"]["annotations"] = dict(HELM)
        c["metadata"]["labels"] = dict(LABELS)
    return out


def chart_pod(ds, node_name) -> dict:
    """The DaemonSet's pod on node_name, both containers ready (kubectl get pod: 2/2 Running)."""
    p = plugin_pod(ds, node_name)
    p["metadata"]["labels"] = dict(ds["spec"]["template"]["metadata"]["labels"], **{"pod-template-generation": "1"})
    running = {"running": {"startedAt": "2026-11-30T08:00:00Z"}}
    p["status"]["containerStatuses"] = [
        {"name": n, "ready": True, "restartCount": 0, "state": running} for n in ("compute-domains", "gpus")
    ]
    return p


def gpu_slice(m, node_name, driver="gpu.nvidia.com", manager="gpu-kubelet-plugin") -> dict:
    gpu = driver == "gpu.nvidia.com"
    devices = [
        m.dev("gpu-0", attrs={"type": "gpu"})
        if gpu
        else {"name": "channel-0", "attributes": {"type": {"string": "channel"}}}
    ]
    s = m.rslice(f"{node_name}-{driver}-x8k2q", devices, node_name, driver=driver)
    s["metadata"]["managedFields"] = [{"manager": manager, "operation": "Update", "apiVersion": "resource.k8s.io/v1"}]
    return s


def register_chart(m) -> None:
    """Scenarios of the chart as installed (the attribution of plugins, its node affinity)."""
    ds = chart_daemonset()
    nodes = [m.node("node-01", zone="a", **GPU_NODE), m.node("node-02", zone="b", **GPU_NODE)]
    # dranet (kubernetes-sigs/dranet install.yaml: DaemonSet kube-system/dranet) was deleted; its DeviceClass stays
    nic_claim = m.claim("c1", [m.request("nic", cls="dranet")], node="node-01")
    nic_claim["status"] = {
        "allocation": allocation([("nic", "node-01", "eth1")], "node-01", driver="dra.net"),
        "reservedFor": [{"resource": "pods", "name": "web-0", "uid": "uid-pod-web-0"}],
    }
    kubelet = m.event("web-0", "FailedPrepareDynamicResources", "Failed to prepare dynamic resources: prepare "
                      "dynamic resources: DRA driver dra.net is not registered", "2026-11-30T09:21:40Z",
                      component="kubelet", n=2)  # fmt: skip
    kubelet["source"]["host"] = "node-01"
    kubelet["count"], kubelet["firstTimestamp"] = 14, "2026-11-30T09:02:10Z"
    m.scenario(
        "driver-plugin-of-another-driver",
        "The kubelet says dra.net is not registered; dranet's DaemonSet was deleted. The only kubelet plugin "
        "DaemonSet left is NVIDIA's (its Helm release is DeviceClass gpu.nvidia.com's, its container runs "
        "gpu-kubelet-plugin, the field manager of the gpu.nvidia.com slices): it is gpu.nvidia.com's, so DRA607 "
        "says no plugin of dra.net was found, not that NVIDIA's pod is dra.net's unregistered plugin.",
        "explain pod web-0",
        [
            m.pod("web-0", [("nic", "claim", "c1")], node_name="node-01"),
            nic_claim,
            m.dclass("dranet", 'device.driver == "dra.net"'),
            *chart_classes(m),
            *(gpu_slice(m, n) for n in ("node-01", "node-02")),
            *(
                gpu_slice(m, n, "compute-domain.nvidia.com", "compute-domain-kubelet-plugin")
                for n in ("node-01", "node-02")
            ),
            *nodes,
            ds,
            chart_pod(ds, "node-01"),
            chart_pod(ds, "node-02"),
            m.event(
                "web-0",
                "Scheduled",
                "Successfully assigned default/web-0 to node-01",
                "2026-11-30T09:02:00Z",
                type_="Normal",
            ),  # fmt: skip
            kubelet,
        ],
    )
    m.MOVED["driver-plugin-of-another-driver"] = ("net-team", "-n")
    # Installed before Node Feature Discovery: no node has the labels the chart's node affinity requires
    idle = chart_daemonset(status={"desiredNumberScheduled": 0, "currentNumberScheduled": 0, "numberReady": 0,
                                   "updatedNumberScheduled": 0, "numberAvailable": 0})  # fmt: skip
    cpu_nodes = [m.node("node-01", zone="a"), m.node("node-02", zone="b")]
    reserved = m.node("node-03", zone="c", taints=[{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}],
                      **GPU_NODE)  # fmt: skip
    wants = m.pod("train-0", [("gpu", "claim", "gpu-claim")])
    m.scenario(
        "driver-nvidia-matches-no-node",
        "NVIDIA's chart installed (release dra-driver-nvidia-gpu) on a cluster without Node Feature Discovery: no "
        "ResourceSlice of gpu.nvidia.com exists and the kubelet plugin DaemonSet matches no node. DRA607 says why "
        "for every node: node-01 and node-02 lack the labels its required node affinity wants (NFD's "
        "feature.node.kubernetes.io/pci-10de.present=true, ...), node-03 has them but a taint it does not tolerate.",
        "explain pod train-0",
        [
            wants,
            m.claim("gpu-claim", [m.request(cls="gpu.nvidia.com")]),
            *chart_classes(m),
            *cpu_nodes,
            reserved,
            idle,
            m.event(
                "train-0",
                "FailedScheduling",
                "0/3 nodes are available: 3 cannot allocate all claims. "
                "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
                "2026-11-30T09:20:00Z",
            ),  # fmt: skip
        ],
    )
    m.MOVED["driver-nvidia-matches-no-node"] = ("ml-team", "-n")
    m.BUNDLED.add("driver-nvidia-matches-no-node")
