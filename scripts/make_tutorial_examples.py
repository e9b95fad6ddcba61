"""Write examples/tutorial/step{1..4}-*.yaml: the tutorial's four states as offline dumps, shaped like
`kubectl get pod,resourceclaim,resourceclaimtemplate,deviceclass,resourceslice,node,event -o yaml`.
Run: python scripts/make_tutorial_examples.py"""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

OUT = Path(__file__).resolve().parent.parent / "examples" / "tutorial"
NS = "default"
POD = "recomendador-7d9c8b6f5-x2x4k"
POD_UID = "6f0c3a52-5d4e-4a8e-9b1f-2f7c1e9d4a10"
CLAIM = f"{POD}-gpu-8kq2w"
CLAIM_UID = "0d7a4c1e-8b2f-4e55-a3c6-91b0f6e2d7c4"
SELECTOR = 'device.capacity["gpu.example.com"].memory\n  .compareTo(quantity("24Gi")) >= 0'

template = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {
        "name": "gpu-24gb",
        "namespace": NS,
        "uid": "3b9e7f20-1c4d-4f6a-8e2b-5a7d9c0e1f32",
        "creationTimestamp": "2026-11-30T10:00:00Z",
    },
    "spec": {
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu-inferencia",
                            "allocationMode": "ExactCount",
                            "count": 1,
                            "selectors": [{"cel": {"expression": SELECTOR}}],
                        },
                    }
                ]
            }
        }
    },
}

pod = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": POD,
        "namespace": NS,
        "uid": POD_UID,
        "labels": {"app": "recomendador", "pod-template-hash": "7d9c8b6f5"},
        "creationTimestamp": "2026-11-30T10:00:01Z",
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "recomendador-7d9c8b6f5",
                "uid": "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    },
    "spec": {
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-24gb"}],
        "containers": [
            {
                "name": "recomendador",
                "image": "ghcr.io/iximiuz/labs/nginx:alpine",
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "claims": [{"name": "gpu"}]},
            }
        ],
        "schedulerName": "default-scheduler",
    },
    "status": {
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "lastTransitionTime": "2026-11-30T10:00:02Z",
            }
        ],
        "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": CLAIM}],
    },
}

claim = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {
        "name": CLAIM,
        "namespace": NS,
        "uid": CLAIM_UID,
        "generateName": f"{POD}-gpu-",
        "creationTimestamp": "2026-11-30T10:00:01Z",
        "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
        "ownerReferences": [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": POD,
                "uid": POD_UID,
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    },
    "spec": copy.deepcopy(template["spec"]["spec"]),
    "status": {},
}

deviceclass = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {
        "name": "gpu-inferencia",
        "uid": "5c6d7e8f-9a0b-4c1d-8e2f-3a4b5c6d7e8f",
        "creationTimestamp": "2026-11-30T10:02:00Z",
    },
    "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
}

resourceslice = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {
        "name": "nodo-simulado-gpu",
        "uid": "7e8f9a0b-1c2d-4e3f-9a4b-5c6d7e8f9a0b",
        "creationTimestamp": "2026-11-30T10:04:00Z",
    },
    "spec": {
        "driver": "gpu.example.com",
        "nodeName": "node-01",
        "pool": {"name": "node-01", "generation": 1, "resourceSliceCount": 1},
        "devices": [
            {"name": "gpu-0", "capacity": {"memory": {"value": "24Gi"}}},
            {"name": "gpu-1", "capacity": {"memory": {"value": "8Gi"}}},
        ],
    },
}


def node(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}},
        "spec": {},
        "status": {
            "capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"},
            "allocatable": {"cpu": "15800m", "memory": "62Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def event(n: int, type_: str, reason: str, message: str, time: str, component: str, host: str | None = None) -> dict:
    src = {"component": component}
    if host:
        src["host"] = host
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{POD}.18{n:014x}", "namespace": NS},
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": POD, "namespace": NS, "uid": POD_UID},
        "type": type_,
        "reason": reason,
        "message": message,
        "source": src,
        "count": 1,
        "firstTimestamp": time,
        "lastTimestamp": time,
    }


EVENTS = [
    event(
        1,
        "Warning",
        "FailedScheduling",
        "0/3 nodes are available: request gpu: device class gpu-inferencia does not exist. no new claims to "
        "deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
        "2026-11-30T10:00:02Z",
        "default-scheduler",
    ),
    event(
        2,
        "Warning",
        "FailedScheduling",
        "0/3 nodes are available: 3 cannot allocate all claims. still not schedulable, preemption: 0/3 nodes are "
        "available: 3 Preemption is not helpful for scheduling.",
        "2026-11-30T10:02:05Z",
        "default-scheduler",
    ),
    event(
        3,
        "Normal",
        "Scheduled",
        f"Successfully assigned {NS}/{POD} to node-01",
        "2026-11-30T10:04:03Z",
        "default-scheduler",
    ),
    event(
        4,
        "Warning",
        "FailedPrepareDynamicResources",
        "Failed to prepare dynamic resources: prepare dynamic resources: DRA driver gpu.example.com is not registered",
        "2026-11-30T10:04:04Z",
        "kubelet",
        "node-01",
    ),
]
# A Deployment event that `--field-selector involvedObject.kind=Pod` filters out.
DEPLOY_EVENT = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {"name": "recomendador.1800000000000001", "namespace": NS},
    "involvedObject": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "recomendador", "namespace": NS},
    "type": "Normal",
    "reason": "ScalingReplicaSet",
    "message": "Scaled up replica set recomendador-7d9c8b6f5 from 0 to 1",
    "source": {"component": "deployment-controller"},
    "count": 1,
    "firstTimestamp": "2026-11-30T10:00:01Z",
    "lastTimestamp": "2026-11-30T10:00:01Z",
}


def allocated(c: dict) -> dict:
    c = copy.deepcopy(c)
    c["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    c["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-01", "device": "gpu-0"}]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-01"]}]}
                ]
            },
            "allocationTimestamp": "2026-11-30T10:04:03Z",
        },
        "reservedFor": [{"resource": "pods", "name": POD, "uid": POD_UID}],
    }
    return c


def scheduled(p: dict) -> dict:
    p = copy.deepcopy(p)
    p["spec"]["nodeName"] = "node-01"
    p["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-30T10:04:03Z"}
    ]
    return p


# Step 4's driver: dra-example-driver installed by Helm (release dra-example-driver in namespace dra-example-driver),
# rendered from its chart (templates/kubeletplugin.yaml, templates/deviceclass.yaml): the kubelet plugin's DaemonSet
# and the chart's own DeviceClass, both with Helm's release annotations, which tie the DaemonSet to the driver
# (kubectl get -o yaml omits managedFields, and the chart's pod template does not spell the driver's name).
DRIVER_NS = "dra-example-driver"
HELM = {"meta.helm.sh/release-name": "dra-example-driver", "meta.helm.sh/release-namespace": DRIVER_NS}
DS_LABELS = {"app.kubernetes.io/name": "dra-example-driver", "app.kubernetes.io/instance": "dra-example-driver"}
plugin_ds = {
    "apiVersion": "apps/v1",
    "kind": "DaemonSet",
    "metadata": {
        "name": "dra-example-driver-kubeletplugin",
        "namespace": DRIVER_NS,
        "uid": "9a1e5c7b-2d3f-4b6a-8c9d-0e1f2a3b4c5d",
        "annotations": dict(HELM),
        "labels": {**DS_LABELS, "app.kubernetes.io/managed-by": "Helm"},
    },
    "spec": {
        "selector": {"matchLabels": dict(DS_LABELS)},
        "template": {
            "metadata": {"labels": dict(DS_LABELS)},
            "spec": {
                "priorityClassName": "system-node-critical",
                "serviceAccountName": "dra-example-driver-service-account",
                "containers": [
                    {
                        "name": "plugin",
                        "image": "registry.k8s.io/dra-example-driver/dra-example-driver:v0.2.0",
                        "command": ["dra-example-kubeletplugin"],
                        "env": [
                            {"name": "CDI_ROOT", "value": "/var/run/cdi"},
                            {"name": "KUBELET_REGISTRAR_DIRECTORY_PATH", "value": "/var/lib/kubelet/plugins_registry"},
                            {"name": "KUBELET_PLUGINS_DIRECTORY_PATH", "value": "/var/lib/kubelet/plugins"},
                            {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                            {"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                            {"name": "NUM_DEVICES", "value": "9"},
                        ],
                        "securityContext": {"privileged": True},
                        "volumeMounts": [
                            {"name": "plugins-registry", "mountPath": "/var/lib/kubelet/plugins_registry"},
                            {"name": "plugins", "mountPath": "/var/lib/kubelet/plugins"},
                            {"name": "cdi", "mountPath": "/var/run/cdi"},
                        ],
                    }
                ],
                "volumes": [
                    {"name": "plugins-registry", "hostPath": {"path": "/var/lib/kubelet/plugins_registry"}},
                    {"name": "plugins", "hostPath": {"path": "/var/lib/kubelet/plugins"}},
                    {"name": "cdi", "hostPath": {"path": "/var/run/cdi"}},
                ],
            },
        },
    },
    "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2, "numberUnavailable": 1},
}
chart_class = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {
        "name": "gpu.example.com",
        "annotations": dict(HELM),
        "labels": {"app.kubernetes.io/managed-by": "Helm"},
    },
    "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]},
}


def plugin_pod(node_name: str, suffix: str, crashing: bool) -> dict:
    """The DaemonSet's pod on node_name: Ready, or (node-01) crash-looping after its 7th start exited 1."""
    cs: dict = {"name": "plugin", "ready": not crashing, "restartCount": 7 if crashing else 0}
    if crashing:
        cs["state"] = {"waiting": {"reason": "CrashLoopBackOff"}}
        cs["lastState"] = {"terminated": {"reason": "Error", "exitCode": 1, "finishedAt": "2026-11-30T10:03:40Z"}}
    else:
        cs["state"] = {"running": {"startedAt": "2026-11-30T09:30:00Z"}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"dra-example-driver-kubeletplugin-{suffix}",
            "namespace": DRIVER_NS,
            "uid": f"5c2d8e1a-{suffix}-4f0b-9a6e-7d3c1b2a0f9e",
            "labels": dict(DS_LABELS),
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "DaemonSet",
                    "name": plugin_ds["metadata"]["name"],
                    "uid": plugin_ds["metadata"]["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": {
            "nodeName": node_name,
            "containers": [{"name": "plugin", "image": "registry.k8s.io/dra-example-driver/dra-example-driver:v0.2.0"}],
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "False" if crashing else "True"}],
            "containerStatuses": [cs],
        },
    }


DRIVER = [plugin_ds, chart_class] + [
    plugin_pod(n, s, n == "node-01") for n, s in (("node-01", "7xk2p"), ("node-02", "q9m4t"), ("node-03", "b3n8w"))
]


def bundle_header(listed: list) -> dict:
    """The first item of a `kubectl dra dump` bundle: it records what was read, so a kind with no object in it is
    one the cluster has none of (a plain `kubectl get` dump cannot say that: its answers that depend on a kind it
    lacks stay open). listed: the driver piece's reads the dump made (the DaemonSets, from step 4 on)."""
    return {
        "apiVersion": "kubectl-dra/v1alpha1",
        "kind": "Bundle",
        "metadata": {"name": "kubectl-dra-bundle"},
        "namespace": "default",
        "scope": {"namespace": "default"},
        "gaps": [],
        "listed": listed,
        "boundPods": True,
    }


def write(name: str, title: str, items: list, listed: tuple = ()) -> None:
    doc = {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": [bundle_header(list(listed)), *items]}
    text = f"# {title}\n# Generated by scripts/make_tutorial_examples.py as a `kubectl dra dump` bundle; the walkthrough of its four states is docs/walkthrough.md.\n"
    text += yaml.safe_dump(doc, sort_keys=False, width=120)
    (OUT / name).write_text(text)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    nodes = [node(n) for n in ("node-01", "node-02", "node-03")]
    write(
        "step1-no-class.yaml",
        "Step 1: Deployment + ResourceClaimTemplate applied; the DeviceClass does not exist",
        [pod, claim, template] + nodes + [DEPLOY_EVENT] + EVENTS[:1],
    )
    write(
        "step2-no-device.yaml",
        "Step 2: DeviceClass applied; no ResourceSlice publishes a device",
        [pod, claim, template, deviceclass] + nodes + [DEPLOY_EVENT] + EVENTS[:2],
    )
    write(
        "step3-allocated.yaml",
        "Step 3: ResourceSlice with gpu-0 (24Gi) and gpu-1 (8Gi); gpu-0 allocated on node-01",
        [scheduled(pod), allocated(claim), template, deviceclass, resourceslice] + nodes + [DEPLOY_EVENT] + EVENTS[:3],
    )
    write(
        "step4-driver-missing.yaml",
        "Step 4: the kubelet cannot prepare the device: the driver is not registered; its plugin on node-01 crash-loops",
        [scheduled(pod), allocated(claim), template, deviceclass, resourceslice]
        + nodes
        + DRIVER
        + [DEPLOY_EVENT]
        + EVENTS,
        listed=("daemonsets", "daemonset_events", "node_events"),
    )


if __name__ == "__main__":
    main()
