"""The driver piece's scenarios (the kubelet's words classified, the kubelet plugin found and judged on the node:
analyze/pod/kubelet.py, analyze/pod/driver.py), registered into make_inputs' tables by make_inputs.main()."""

from __future__ import annotations

import copy

from driver_objects import PLUGIN_NS, daemon_pod_pending, daemonset, ds_event, kubelet_started, plugin_pod

SCHEDULED = "2026-11-30T09:00:00Z"


def register(m) -> None:
    """m: the make_inputs module (its helpers, SCENARIOS and MOVED)."""
    gpu_node_01 = m.rslice("node-01-gpus", [m.dev("gpu-0")], "node-01")

    def bound(*events, nodes=None, slices=(gpu_node_01,)):
        return [
            m.pod("web-0", [("gpu", "claim", "c1")], node_name="node-01"),
            copy.deepcopy(m._ALLOCATED),
            m.dclass(),
            *slices,
            *(nodes or m.NODES),
            m.event("web-0", "Scheduled", "Successfully assigned default/web-0 to node-01", SCHEDULED, type_="Normal"),
            *events,
        ]

    def kubelet(message, reason="FailedPrepareDynamicResources", count=1, first="2026-11-30T09:00:03Z",
                last="2026-11-30T09:00:03Z"):  # fmt: skip
        e = m.event("web-0", reason, message, last, component="kubelet", n=2)
        e["source"]["host"] = "node-01"
        e["count"], e["firstTimestamp"] = count, first
        return e

    not_registered = kubelet(
        "Failed to prepare dynamic resources: prepare dynamic resources: DRA driver gpu.example.com is not registered",
        count=18,
        last="2026-11-30T09:21:40Z",
    )
    m.scenario(
        "driver-plugin-not-covered",
        "The kubelet says the driver is not registered (18 times); the driver's kubelet plugin DaemonSet (found by "
        "the driver name in its pod template) selects nodes labelled gpu.example.com/present=true, which node-01 "
        "is not: DRA601 and DRA607 name the label.",
        "explain pod web-0",
        [*bound(not_registered), daemonset(node_selector={"gpu.example.com/present": "true"})],
    )
    ds = daemonset()
    crash = plugin_pod(ds, "node-01", ready=False, waiting="CrashLoopBackOff", restarts=12,
                       last={"reason": "Error", "exitCode": 1, "finishedAt": "2026-11-30T09:20:00Z"})  # fmt: skip
    m.scenario(
        "driver-plugin-crashloop",
        "The kubelet says the driver is not registered; the plugin's pod on node-01 is in CrashLoopBackOff after 12 "
        "restarts: DRA607 names its state and last exit.",
        "explain pod web-0",
        [*bound(not_registered), ds, crash, plugin_pod(ds, "node-02")],
    )
    m.scenario(
        "driver-plugin-ready-not-registered",
        "The plugin's pod on node-01 is Ready since 08:00 and publishes the node's slice, yet the kubelet said "
        "'not registered' until 09:21: the kubelet did not register it (DRA607: registrar directory, gRPC service, "
        "rejected registration).",
        "explain pod web-0",
        [*bound(not_registered), ds, plugin_pod(ds, "node-01")],
    )
    deadline = kubelet(
        "Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources: rpc error: code = "
        "DeadlineExceeded desc = context deadline exceeded",
        count=3,
        last="2026-11-30T09:03:00Z",
    )
    old = m.node("node-01", zone="a")
    old["status"] = {"nodeInfo": {"kubeletVersion": "v1.34.1"}}
    m.scenario(
        "driver-rpc-timeout-known-kubelet-defect",
        "The driver's plugin did not answer within the kubelet's 45 s (DeadlineExceeded), on a node whose kubelet "
        "v1.34.1 has the idle-connection deadlock: DRA602 with the gRPC code, DRA607 the plugin pod, DRA611.",
        "explain pod web-0",
        [*bound(deadline, nodes=[old, m.NODES[1]]), ds, plugin_pod(ds, "node-01")],
        version="1.34",
    )
    cdi_node = m.node("node-01", zone="a")
    cdi_node["status"] = {"nodeInfo": {"containerRuntimeVersion": "containerd://1.7.27"}}
    m.scenario(
        "driver-cdi-injection-failed",
        "The kubelet prepared the devices, but containerd could not inject the CDI devices (event reason Failed): "
        "DRA608.",
        "explain pod web-0",
        [
            *bound(
                kubelet(
                    "Error: failed to create containerd container: CDI device injection failed: unresolvable "
                    "CDI devices k8s.gpu.example.com/gpu=gpu-0",
                    reason="Failed",
                ),
                nodes=[cdi_node, m.NODES[1]],
            ),
            ds,
            plugin_pod(ds, "node-01"),
        ],
    )
    leaving = m.pod("web-0", [("gpu", "claim", "c1")], node_name="node-01")
    leaving["metadata"]["deletionTimestamp"] = "2026-11-30T10:00:00Z"
    leaving["status"] = {"phase": "Running"}
    m.scenario(
        "driver-unprepare-waits",
        "The pod is being deleted; the driver's plugin pod on node-01 crash-loops, so the kubelet cannot unprepare "
        "its devices and the pod stays Terminating with no event (DRA612, DRA607).",
        "explain pod web-0",
        [leaving, *bound()[1:], ds, crash],
    )
    m.scenario(
        "kubelet-claim-error",
        "The kubelet refuses to prepare: an old claim of the same name is still in its checkpoint (a force-deleted "
        "pod). Not the driver's fault: DRA609, claim piece.",
        "explain pod web-0",
        [
            *bound(
                kubelet(
                    "Failed to prepare dynamic resources: prepare dynamic resources: old ResourceClaim with "
                    "same name c1 and different UID 1234 still exists (previous pod force-deleted?!)"
                )
            ),  # fmt: skip
            ds,
        ],
    )
    pending = [m.pod("web-0", [("gpu", "claim", "c1")]), m.claim("c1", [m.request()]), *m.NODES]
    m.scenario(
        "driver-not-deployed",
        "No ResourceSlice exists (the tutorial's second message); the only DaemonSet that mounts plugins_registry is "
        "a CSI node plugin: DRA401 and DRA607 'no kubelet plugin for gpu.example.com found'.",
        "explain pod web-0",
        [*pending, m.dclass(), daemonset(name="csi-node", ns="kube-system", env_driver=None, csi=True)],
    )
    cls = m.dclass()
    cls["metadata"]["annotations"] = {
        "meta.helm.sh/release-name": "gpu-driver",
        "meta.helm.sh/release-namespace": PLUGIN_NS,
    }
    m.scenario(
        "driver-publishes-nothing",
        "No ResourceSlice exists; the DaemonSet installed by the DeviceClass's Helm release has 2 of 2 pods ready: "
        "the plugin runs and publishes nothing (DRA607).",
        "explain pod web-0",
        [*pending, cls, daemonset(env_driver=None, helm="gpu-driver")],
    )
    m.scenario(
        "driver-matches-no-node",
        "No ResourceSlice exists; the driver's DaemonSet matches no node (desiredNumberScheduled 0, nodeSelector "
        "nvidia.com/gpu.present=true): DRA607.",
        "explain pod web-0",
        [
            *pending,
            m.dclass(),
            daemonset(
                node_selector={"nvidia.com/gpu.present": "true"}, status={"desiredNumberScheduled": 0, "numberReady": 0}
            ),
        ],  # fmt: skip
    )
    published = m.rslice("node-01-gpus", [m.dev("gpu-0")], "node-01")
    published["metadata"]["creationTimestamp"] = "2026-11-30T08:00:00Z"
    published["metadata"]["managedFields"] = [{"manager": "dra-example-kubeletplugin", "operation": "Update"}]
    m.scenario(
        "driver-slices-without-plugin",
        "The kubelet says the driver is not registered, yet node-01's slice of it exists (written by "
        "dra-example-kubeletplugin since 08:00), and no DaemonSet that runs it is found (the only one mounting "
        "plugins_registry is a CSI node plugin): a publisher out of sight, or a plugin the kubelet never registered "
        "(DRA607).",
        "explain pod web-0",
        [
            *bound(not_registered, slices=(published,)),
            daemonset(name="csi-node", ns="kube-system", env_driver=None, csi=True),
        ],
    )
    rolling = daemonset(
        status={"desiredNumberScheduled": 2, "currentNumberScheduled": 2, "numberReady": 1, "updatedNumberScheduled": 1}
    )
    m.scenario(
        "driver-plugin-mid-rollout",
        "The kubelet says the driver is not registered; the plugin's DaemonSet is mid-rollout (1 of 2 pods "
        "updated) and its new pod on node-01 crash-loops: DRA607 says both.",
        "explain pod web-0",
        [
            *bound(not_registered),
            rolling,
            plugin_pod(rolling, "node-01", ready=False, waiting="CrashLoopBackOff", restarts=3),
        ],  # fmt: skip
    )
    down = m.node("node-01", zone="a")
    down["status"] = {
        "conditions": [
            {
                "type": "Ready",
                "status": "Unknown",
                "reason": "NodeStatusUnknown",
                "lastTransitionTime": "2026-11-30T08:58:00Z",
            }
        ]  # fmt: skip
    }
    m.scenario(
        "kubelet-node-not-ready",
        "The pod is bound to node-01 and its claim allocated; the kubelet has said nothing, and node-01 is NotReady "
        "(NodeStatusUnknown): DRA604 says its kubelet may not be running.",
        "explain pod web-0",
        [*bound(nodes=[down, m.NODES[1]]), ds, plugin_pod(ds, "node-01")],
    )
    # devices: per node, whether a kubelet plugin serves the driver (analyze/reports/node_plugins.py)
    gpu_nodes = [
        m.node("node-01", zone="a", **{"gpu.example.com/present": "true"}),
        m.node("node-02", zone="b", **{"gpu.example.com/present": "true"}),
        m.node("node-03", zone="c"),
    ]
    plugin_ds = daemonset(
        ns="gpu-system",
        node_selector={"gpu.example.com/present": "true"},
        status={"desiredNumberScheduled": 2, "numberReady": 1, "currentNumberScheduled": 2},
    )
    m.scenario(
        "devices-driver-plugins",
        "The driver's kubelet plugin DaemonSet (namespace gpu-system) selects nodes labelled "
        "gpu.example.com/present=true: its pod on node-01 is Ready, its pod on node-02 crash-loops, and node-03, "
        "whose slice is still there, lacks the label. devices says which nodes' devices cannot be prepared.",
        "devices",
        [
            *gpu_nodes,
            m.dclass(),
            *(m.rslice(f"{n}-gpus", [m.dev("gpu-0"), m.dev("gpu-1")], n) for n in ("node-01", "node-02", "node-03")),
            plugin_ds,
            plugin_pod(plugin_ds, "node-01"),
            plugin_pod(
                plugin_ds,
                "node-02",
                ready=False,
                waiting="CrashLoopBackOff",
                restarts=12,
                last={"reason": "Error", "exitCode": 1, "finishedAt": "2026-11-30T09:20:00Z"},
            ),  # fmt: skip
        ],
    )
    import driver_nvidia_inputs  # NVIDIA's chart: two containers, NFD affinity, Helm metadata (after this module)

    driver_nvidia_inputs.register(m)
    # 1.37 DRAOptionalNodeOperations: the slice's devices skip every node operation, copied into the result; the
    # node's kubelet declares the feature: it calls no plugin of the driver, and none is deployed (no finding of it)
    skipping = m.rslice("node-01-gpus", [m.dev("gpu-0")], "node-01", skipNodeOperations=["*"])
    skip_claim = copy.deepcopy(m._ALLOCATED)
    for r in skip_claim["status"]["allocation"]["devices"]["results"]:
        r["skipNodeOperations"] = ["*"]
    declaring = m.node("node-01", zone="a")
    declaring["status"] = {"declaredFeatures": ["DRAOptionalNodeOperations"]}
    m.scenario(
        "driver-skips-node-operations",
        "Kubernetes 1.37, DRAOptionalNodeOperations: the device's slice sets skipNodeOperations [*], copied into "
        "the claim's result, and node-01 declares the feature: the kubelet calls no kubelet plugin of "
        "gpu.example.com, so none is needed (no DaemonSet of it exists: no DRA607); DRA604 says so.",
        "explain pod web-0 --feature-gates DRAOptionalNodeOperations=true",
        [
            m.pod("web-0", [("gpu", "claim", "c1")], node_name="node-01"),
            skip_claim,
            m.dclass(),
            skipping,
            declaring,
            m.NODES[1],
            m.event("web-0", "Scheduled", "Successfully assigned default/web-0 to node-01", SCHEDULED, type_="Normal"),
            daemonset(name="csi-node", ns="kube-system", env_driver=None, csi=True),
        ],
    )
    quota = daemonset()
    m.scenario(
        "driver-plugin-failed-create",
        "The kubelet says the driver is not registered; the plugin's DaemonSet admits node-01 but has a pod on "
        "node-02 only: its FailedCreate event says a ResourceQuota of its namespace refuses the pod (DRA607 quotes "
        "it with its count and last time).",
        "explain pod web-0",
        [
            *bound(not_registered),
            quota,
            plugin_pod(quota, "node-02"),
            ds_event(
                quota,
                'Error creating: pods "gpu-kubeletplugin-x7k2p" is forbidden: exceeded quota: pods, requested: '
                "pods=1, used: pods=1, limited: pods=1",
                count=23,
                first="2026-11-30T08:40:00Z",
                last="2026-11-30T09:20:12Z",
            ),
        ],
    )
    # NVIDIA's chart: maxUnavailable "100%"; the update to template generation 4 deletes the old pod on node-01
    upgrading = daemonset(
        status={"desiredNumberScheduled": 2, "currentNumberScheduled": 2, "numberReady": 1, "updatedNumberScheduled": 1}
    )
    upgrading["metadata"]["annotations"] = {"deprecated.daemonset.template.generation": "4"}
    upgrading["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%"}}
    leaving_plugin = plugin_pod(upgrading, "node-01")
    leaving_plugin["metadata"]["labels"] = {"app": "gpu-kubeletplugin", "pod-template-generation": "3"}
    leaving_plugin["metadata"]["deletionTimestamp"] = "2026-11-30T09:20:30Z"
    m.scenario(
        "driver-plugin-replaced-by-rollout",
        "The kubelet says the driver is not registered; the plugin's DaemonSet is rolling out (1 of 2 pods "
        "updated) with maxUnavailable 100% (as NVIDIA's chart ships it), and its pod on node-01, of the old "
        "template generation 3, is being deleted: DRA607 says the plugin on this node may be down for the update.",
        "explain pod web-0",
        [*bound(not_registered), upgrading, leaving_plugin, plugin_pod(upgrading, "node-02")],
    )
    gpu_node_02 = m.rslice("node-02-gpus", [m.dev("gpu-0")], "node-02")
    m.scenario(
        "driver-kubelet-restarted",
        "The kubelet on node-01 started at 09:10 (its Starting event, in namespace default); node-01 has no "
        "ResourceSlice of gpu.example.com any more (node-02 has), the plugin's pod there is Ready since 08:00, and "
        "the kubelet says the driver is not registered: DRA607 adds that the restart wiped the node's slices and "
        "the plugin has likely not registered with the new kubelet.",
        "explain pod web-0",
        [
            *bound(not_registered, slices=(gpu_node_02,)),
            ds,
            plugin_pod(ds, "node-01"),
            plugin_pod(ds, "node-02"),
            kubelet_started("node-01", "2026-11-30T09:10:00Z"),
        ],
    )
    _unbound(m, bound, not_registered, gpu_node_02)
    for name, flag in (
        ("driver-plugin-unschedulable", "-n"),
        ("driver-plugin-failed-create", "-n"),
        ("driver-plugin-replaced-by-rollout", "-n"),
        ("driver-kubelet-restarted", "-n"),
        ("driver-skips-node-operations", "-n"),
        ("driver-plugin-not-covered", "-n"),
        ("driver-plugin-crashloop", "-n"),
        ("driver-plugin-ready-not-registered", "-n"),
        ("driver-rpc-timeout-known-kubelet-defect", "-n"),
        ("driver-cdi-injection-failed", "-n"),
        ("kubelet-claim-error", "-n"),
        ("driver-unprepare-waits", "-n"),
        ("driver-slices-without-plugin", "-n"),
        ("driver-plugin-mid-rollout", "-n"),
        ("kubelet-node-not-ready", "-n"),
        ("driver-not-deployed", "-n"),
        ("driver-publishes-nothing", "-A"),
        ("driver-matches-no-node", "-n"),
    ):
        m.MOVED[name] = ("gpu-team", flag)


def _unbound(m, bound, not_registered, gpu_node_02) -> None:
    """The plugin's pod for node-01 exists but is not bound: the node is full (its allocatable pods: 2, both taken)."""
    ds = daemonset()
    full = m.node("node-01", zone="a")
    full["status"] = {"allocatable": {"cpu": "8", "memory": "32Gi", "ephemeral-storage": "100Gi", "pods": "2"}}
    batch = m.running_pod("batch-7", "c9")
    batch["spec"]["resourceClaims"] = []
    batch["spec"]["nodeName"] = "node-01"
    said = (
        "0/2 nodes are available: 1 Too many pods, 1 node(s) didn't match Pod's node affinity/selector. preemption: "
        "0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for "
        "scheduling."
    )
    pending = daemon_pod_pending(ds, "node-01", said)
    failed = m.event(pending["metadata"]["name"], "FailedScheduling", said, "2026-11-30T09:20:31Z",
                     ns=PLUGIN_NS, pod_uid=pending["metadata"]["uid"])  # fmt: skip
    failed["count"], failed["firstTimestamp"] = 9, "2026-11-30T09:00:31Z"
    m.scenario(
        "driver-plugin-unschedulable",
        "The kubelet says the driver is not registered; the plugin DaemonSet made its pod for node-01, which the "
        "scheduler cannot place (node-01's 2 pods are taken: Too many pods). That pod is node-01's plugin pod, "
        "pending: DRA607 gives its scheduling reason (not 'no plugin pod on the node', and no advice to add the "
        "events the input holds).",
        "explain pod web-0",
        [
            *bound(not_registered, nodes=[full, m.NODES[1]], slices=(gpu_node_02,)),
            batch,
            ds,
            pending,
            failed,
            plugin_pod(ds, "node-02"),
        ],
    )
