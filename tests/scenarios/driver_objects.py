"""The objects of a DRA driver's kubelet plugin as the drivers' charts and the controllers write them (its DaemonSet,
its pods, the DaemonSet controller's and the kubelet's events), for the driver piece's scenarios (driver_inputs.py,
driver_nvidia_inputs.py)."""

from __future__ import annotations

PLUGIN_NS = "dra-example-driver"


def daemonset(name="gpu-kubeletplugin", ns=PLUGIN_NS, env_driver="gpu.example.com", node_selector=None, helm=None,
              status=None, csi=False):  # fmt: skip
    """A kubelet plugin's DaemonSet as the drivers' charts write it: plugins_registry and plugins host paths."""
    containers = [
        {
            "name": "plugin",
            "image": "registry.example.com/dra-example-kubeletplugin:v0.2.0",
            "command": ["dra-example-kubeletplugin"],
            "env": [{"name": "DRIVER_NAME", "value": env_driver}] if env_driver else [],
        }
    ]
    if csi:
        containers.append(
            {
                "name": "csi-node-driver-registrar",
                "image": "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.13.0",
            }
        )
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-ds-{ns}-{name}"},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": containers,
                    "volumes": [
                        {"name": "registry", "hostPath": {"path": "/var/lib/kubelet/plugins_registry"}},
                        {"name": "plugins", "hostPath": {"path": "/var/lib/kubelet/plugins"}},
                    ],
                },
            },
        },
        "status": status or {"desiredNumberScheduled": 2, "numberReady": 2, "currentNumberScheduled": 2},
    }
    if node_selector:
        ds["spec"]["template"]["spec"]["nodeSelector"] = node_selector
    if helm:
        ds["metadata"]["annotations"] = {"meta.helm.sh/release-name": helm, "meta.helm.sh/release-namespace": ns}
    return ds


def plugin_pod(ds, node_name, ready=True, started="2026-11-30T08:00:00Z", waiting=None, restarts=0, last=None):
    name = f"{ds['metadata']['name']}-{node_name[-2:]}abc"
    state = {"waiting": {"reason": waiting}} if waiting else {"running": {"startedAt": started}}
    cs = {"name": "plugin", "ready": ready, "restartCount": restarts, "state": state}
    if last:
        cs["lastState"] = {"terminated": last}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": ds["metadata"]["namespace"],
            "uid": f"uid-{name}",
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "DaemonSet",
                    "name": ds["metadata"]["name"],
                    "uid": ds["metadata"]["uid"],
                    "controller": True,
                }
            ],  # fmt: skip
        },
        "spec": {"nodeName": node_name, "containers": [{"name": "plugin", "image": "x"}]},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            "containerStatuses": [cs],
        },
    }


def ds_event(ds, message, count, first, last, reason="FailedCreate"):
    """The DaemonSet controller's Warning event about ds (controller_utils.go createPods: "Error creating: %v")."""
    meta = ds["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{meta['name']}.18c0d1", "namespace": meta["namespace"]},
        "involvedObject": {
            "kind": "DaemonSet",
            "apiVersion": "apps/v1",
            "name": meta["name"],
            "namespace": meta["namespace"],
            "uid": meta["uid"],
        },  # fmt: skip
        "type": "Warning",
        "reason": reason,
        "message": message,
        "source": {"component": "daemonset-controller"},
        "firstTimestamp": first,
        "lastTimestamp": last,
        "count": count,
    }


def kubelet_started(node_name, time, count=1):
    """The kubelet's "Starting" event about its Node (kubelet.go: "Starting kubelet."), stored in namespace default."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{node_name}.18c0d2", "namespace": "default"},
        "involvedObject": {"kind": "Node", "name": node_name, "uid": node_name},
        "type": "Normal",
        "reason": "Starting",
        "message": "Starting kubelet.",
        "source": {"component": "kubelet", "host": node_name},
        "firstTimestamp": time,
        "lastTimestamp": time,
        "count": count,
    }


def daemon_pod_pending(ds, node_name, message, created="2026-11-30T09:00:31Z") -> dict:
    """A DaemonSet's pod made for node_name and not bound yet: the DaemonSet controller pins it to the node with a
    required node affinity on metadata.name (controller/daemon/util ReplaceDaemonSetPodNodeNameNodeAffinity), the
    scheduler could not place it (PodScheduled False, Unschedulable)."""
    p = plugin_pod(ds, node_name)
    p["metadata"]["name"] = f"{ds['metadata']['name']}-x7k2p"
    p["metadata"]["uid"] = f"uid-{p['metadata']['name']}"
    p["metadata"]["creationTimestamp"] = created
    del p["spec"]["nodeName"]
    p["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                ]
            }
        }
    }
    p["status"] = {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message,
                        "lastTransitionTime": created}],
    }  # fmt: skip
    return p
