"""Writes tests/scenarios/<name>/{input.yaml,cmd,README.md} from the compact definitions below.

The inputs are committed; this script is how they were made and how to add one. Expected outputs
(expected.txt, expected.json, expected.exit) are written by `make golden` from the real command line.
Run: python tests/scenarios/make_inputs.py"""

from __future__ import annotations

import copy
import shutil
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: the shared builders
from builders import DRIVER, NS, claim, counter_slice, dclass, device, event, node, pod, request, rslice, template

HERE = Path(__file__).resolve().parent
TUTORIAL = HERE.parent.parent / "examples" / "tutorial"


def dev(name, mem="24Gi", **extra):
    """The scenarios' device: a 24Gi GPU unless told otherwise."""
    return device(name, memory=mem, **extra)


NODES = [node("node-01", zone="a"), node("node-02", zone="b")]
CAN = "0/2 nodes are available: 2 cannot allocate all claims."

SCENARIOS: dict[str, dict] = {}


def scenario(name, doc, cmd, objs, version=None):
    SCENARIOS[name] = {"doc": doc, "cmd": cmd, "objs": objs, "version": version}


# The tutorial's four states (same dumps as examples/tutorial).
for step, expect in (
    ("step1-no-class", "missing: class"),
    ("step2-no-device", "missing: device"),
    ("step3-allocated", "allocated, nothing blocks"),
    ("step4-driver-missing", "missing: driver"),
):
    SCENARIOS[f"tutorial-{step}"] = {
        "doc": f"The tutorial, {step}: {expect}.",
        "cmd": "explain pod recomendador-7d9c8b6f5-x2x4k",
        "copy": TUTORIAL / f"{step}.yaml",
    }
SCENARIOS["tutorial-match-claim"] = {
    "doc": "match claim on the tutorial's step 3: gpu-0 matches, gpu-1 fails the selector.",
    "cmd": "match claim recomendador-7d9c8b6f5-x2x4k-gpu-8kq2w",
    "copy": TUTORIAL / "step3-allocated.yaml",
}

SEL24 = 'device.capacity["gpu.example.com"].memory.compareTo(quantity("24Gi")) >= 0'

scenario(
    "claim-not-created",
    "Template exists but the controller has not generated the claim yet: missing claim.",
    "explain pod web-0",
    [pod("web-0", [("gpu", "template", "gpu-tmpl")]), template("gpu-tmpl", [request()]), dclass(), *NODES],
)
scenario(
    "claim-template-missing",
    "The template does not exist; the controller reports FailedResourceClaimCreation.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "template", "no-such-template")]),
        dclass(),
        *NODES,
        event(
            "web-0",
            "FailedResourceClaimCreation",
            'PodResourceClaim gpu: resource claim template "no-such-template": '
            'resourceclaimtemplate.resource.k8s.io "no-such-template" not found',
            "2026-11-30T09:00:00Z",
            component="resource_claim",
        ),
    ],
)
scenario(
    "claim-missing",
    "A named ResourceClaim does not exist.",
    "explain pod web-0",
    [pod("web-0", [("gpu", "claim", "shared-gpu")]), dclass(), *NODES],
)
scenario(
    "claim-being-deleted",
    "The named claim has a deletionTimestamp.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request()], deletionTimestamp="2026-11-30T09:00:00Z"),
        dclass(),
        *NODES,
    ],
)
scenario(
    "claim-not-owned",
    "The generated claim in the pod's status belongs to another pod.",
    "explain pod web-1",
    [
        pod("web-1", [("gpu", "template", "gpu-tmpl")], statuses={"gpu": "web-0-gpu-abcde"}),
        claim("web-0-gpu-abcde", [request()], owner_pod="web-0"),
        template("gpu-tmpl", [request()]),
        dclass(),
        *NODES,
    ],
)
scenario(
    "device-in-use",
    "The only matching device is allocated to another pod's claim.",
    "explain pod web-1",
    [
        pod("web-1", [("gpu", "claim", "c2")]),
        claim("c2", [request()]),
        claim("c1", [request()], results=[("gpu", "node-01", "gpu-0")], reserved="web-0", node="node-01"),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ],
)
scenario(
    "in-use-and-tainted",
    "Three matching GPUs, none free: two allocated to other claims, one under an untolerated taint. Each stage is "
    "named with its own count (not 'every matching device is already allocated').",
    "explain pod web-2",
    [
        pod("web-2", [("gpu", "claim", "c3")]),
        claim("c3", [request()]),
        claim("c1", [request()], results=[("gpu", "node-01", "gpu-0")], reserved="web-0", node="node-01"),
        claim("c2", [request()], results=[("gpu", "node-01", "gpu-1")], reserved="web-1", node="node-01"),
        dclass(),
        rslice(
            "node-01-gpus",
            [
                dev("gpu-0"),
                dev("gpu-1"),
                dev("gpu-2", taints=[{"key": "example.com/unhealthy", "value": "xid-79", "effect": "NoSchedule"}]),
            ],
            "node-01",
        ),
        *NODES,
    ],
    version="1.37",
)
scenario(
    "exactcount-too-many",
    "ExactCount asks for 3 devices; only 2 pass the selector.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request(count=3, selectors=[SEL24])]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0"), dev("gpu-1"), dev("gpu-2", "8Gi")], "node-01"),
        *NODES,
    ],
)
scenario(
    "all-mode-one-in-use",
    "allocationMode All while one of the matching devices is in use.",
    "explain pod web-1",
    [
        pod("web-1", [("gpu", "claim", "c2")]),
        claim("c2", [request(mode="All")]),
        claim("c1", [request()], results=[("gpu", "node-01", "gpu-1")], reserved="web-0", node="node-01"),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0"), dev("gpu-1")], "node-01"),
        *NODES,
    ],
)
scenario(
    "first-available-fallback",
    "firstAvailable: no 80Gi device, so the 24Gi subrequest is used.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim(
            "c1",
            [
                {
                    "name": "gpu",
                    "firstAvailable": [
                        {
                            "name": "big",
                            "deviceClassName": "gpu",
                            "allocationMode": "ExactCount",
                            "count": 1,
                            "selectors": [
                                {
                                    "cel": {
                                        "expression": 'device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) >= 0'
                                    }
                                }
                            ],
                        },
                        {"name": "small", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1},
                    ],
                }
            ],
        ),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0"), dev("gpu-1", "8Gi")], "node-01"),
        *NODES,
    ],
)
scenario(
    "match-attribute-unsatisfiable",
    "Two GPUs on the same NUMA node are required; each NUMA node has one.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request(count=2)], constraints=[{"matchAttribute": f"{DRIVER}/numa"}]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0", attrs={"numa": 0}), dev("gpu-1", attrs={"numa": 1})], "node-01"),
        *NODES,
    ],
)
scenario(
    "node-selector-excludes",
    "The only device is on node-02; the pod's nodeSelector wants zone a.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")], nodeSelector={"zone": "a"}),
        claim("c1", [request()]),
        dclass(),
        rslice("node-02-gpus", [dev("gpu-0")], "node-02"),
        *NODES,
    ],
)
scenario(
    "cel-missing-attribute",
    "A selector reads an attribute the devices lack: a CEL runtime error aborts scheduling.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request(selectors=['device.attributes["gpu.example.com"].model == "H100"'])]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ],
)
scenario(
    "cel-guarded-attribute",
    "The same selector guarded with has(): no error, no match.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim(
            "c1",
            [
                request(
                    selectors=[
                        'has(device.attributes["gpu.example.com"].model) && '
                        'device.attributes["gpu.example.com"].model == "H100"'
                    ]
                )
            ],
        ),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ],
)
scenario(
    "taint-untolerated",
    "A NoSchedule device taint the request does not tolerate (1.36: DRADeviceTaints on).",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request()]),
        dclass(),
        rslice(
            "node-01-gpus",
            [dev("gpu-0", taints=[{"key": "maintenance", "value": "true", "effect": "NoSchedule"}])],
            "node-01",
        ),
        *NODES,
    ],
    version="1.36",
)
scenario(
    "taint-ignored-1-35",
    "The same taint on 1.35, where DRADeviceTaints is off by default: allocatable.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request()]),
        dclass(),
        rslice(
            "node-01-gpus",
            [dev("gpu-0", taints=[{"key": "maintenance", "value": "true", "effect": "NoSchedule"}])],
            "node-01",
        ),
        *NODES,
    ],
    version="1.35",
)
COUNTERS = [{"name": "gpu-0-mem", "counters": {"memory": {"value": "40Gi"}}}]
scenario(
    "counters-exhausted",
    "Partitions of one GPU share 40Gi of counters; 30Gi are used, a 20Gi partition does not fit.",
    "explain pod web-1",
    [
        pod("web-1", [("gpu", "claim", "c2")]),
        claim("c2", [request(selectors=['device.attributes["gpu.example.com"].profile == "20g"'])]),
        claim("c1", [request()], results=[("gpu", "node-01", "gpu-0-30g")], reserved="web-0", node="node-01"),
        dclass(),
        rslice("node-01-counters", [], "node-01", pool="node-01", count=2, sharedCounters=COUNTERS),
        rslice(
            "node-01-parts",
            [
                dev(
                    "gpu-0-30g",
                    attrs={"profile": "30g"},
                    consumesCounters=[{"counterSet": "gpu-0-mem", "counters": {"memory": {"value": "30Gi"}}}],
                ),
                dev(
                    "gpu-0-20g",
                    attrs={"profile": "20g"},
                    consumesCounters=[{"counterSet": "gpu-0-mem", "counters": {"memory": {"value": "20Gi"}}}],
                ),
            ],
            "node-01",
            pool="node-01",
            count=2,
        ),
        *NODES,
    ],
    version="1.36",
)
scenario(
    "allocatable-now",
    "Not allocated yet, but a free device fits: exit 0 with the node and device.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request(selectors=[SEL24])]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0", "8Gi"), dev("gpu-1")], "node-01"),
        *NODES,
    ],
)
scenario(
    "claim-allocated-elsewhere",
    "The claim is allocated on node-02 but the pod must run on node-01.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")], nodeSelector={"zone": "a"}),
        claim("c1", [request()], results=[("gpu", "node-02", "gpu-0")], node="node-02"),
        dclass(),
        rslice("node-02-gpus", [dev("gpu-0")], "node-02"),
        *NODES,
    ],
)
scenario(
    "explain-claim-allocated",
    "explain claim on an allocated claim.",
    "explain claim c1",
    [
        claim(
            "c1", [request(selectors=[SEL24])], results=[("gpu", "node-01", "gpu-1")], reserved="web-0", node="node-01"
        ),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0", "8Gi"), dev("gpu-1")], "node-01"),
        *NODES,
    ],
)
scenario(
    "match-unsatisfiable",
    "match claim: nothing has 80Gi.",
    "match claim c1",
    [
        claim(
            "c1", [request(selectors=['device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) >= 0'])]
        ),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0"), dev("gpu-1", "8Gi")], "node-01"),
        rslice("node-02-gpus", [dev("gpu-0", "40Gi")], "node-02"),
        *NODES,
    ],
)
scenario(
    "pool-incomplete",
    "The driver published 1 of 2 slices of a pool: its devices are skipped (1.35+).",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request()]),
        dclass(),
        rslice("node-01-gpus-a", [dev("gpu-0")], "node-01", pool="node-01", count=2),
        *NODES,
    ],
)
scenario(
    "hostile-strings",
    "Rich markup and terminal escapes in names, attributes and events are printed inert.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request(selectors=['device.attributes["gpu.example.com"].model == "[bold red]x"'])]),
        dclass(),
        rslice(
            "node-01-gpus",
            [dev("gpu-0", attrs={"model": "\x1b[31mRED\x1b[0m [link=file:///etc/passwd]x[/link]"})],
            "node-01",
        ),
        event(
            "web-0",
            "FailedScheduling",
            "evil \x1b]0;pwned\x07 title [bold]not bold[/bold]\r\nsecond line",
            "2026-11-30T09:00:00Z",
        ),
        *NODES,
    ],
)
scenario(
    "v1beta1-input",
    "Objects written as resource.k8s.io/v1beta1 are normalised to v1.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        {
            "apiVersion": "resource.k8s.io/v1beta1",
            "kind": "ResourceClaim",
            "metadata": {"name": "c1", "namespace": NS},
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "deviceClassName": "gpu",
                            "allocationMode": "ExactCount",
                            "count": 1,
                            "selectors": [{"cel": {"expression": SEL24}}],
                        }
                    ]
                }
            },
        },
        {**dclass(), "apiVersion": "resource.k8s.io/v1beta1"},
        {
            "apiVersion": "resource.k8s.io/v1beta1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": DRIVER,
                "nodeName": "node-01",
                "pool": {"name": "node-01", "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": "gpu-0", "basic": {"capacity": {"memory": {"value": "24Gi"}}}}],
            },
        },
        *NODES,
    ],
)
scenario(
    "capacity-exhausted",
    "Consumable capacity: a shared GPU has 10Gi of 40Gi left; 20Gi requested (1.36).",
    "explain pod web-1",
    [
        pod("web-1", [("gpu", "claim", "c2")]),
        claim("c2", [request(capacity={"requests": {"memory": "20Gi"}})]),
        {
            **claim("c1", [request()]),
            "status": {
                "allocation": {
                    "devices": {
                        "results": [
                            {
                                "request": "gpu",
                                "driver": DRIVER,
                                "pool": "node-01",
                                "device": "gpu-0",
                                "shareID": "5f0e7a6c-1111-2222-3333-444455556666",
                                "consumedCapacity": {"memory": "30Gi"},
                            }
                        ]
                    }
                }
            },
        },
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0", "40Gi", allowMultipleAllocations=True)], "node-01"),
        *NODES,
    ],
    version="1.36",
)

scenario(
    "scheduler-disagrees",
    "The scheduler's latest word is `cannot allocate all claims` on every node, but the dry-run "
    "finds a free device: DRA005, undetermined (exit 2), never OK.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request()]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        event("web-0", "FailedScheduling", CAN, "2026-11-30T09:00:00Z"),
        *NODES,
    ],
)
scenario(
    "scheduler-rejects-other-nodes",
    "The scheduler rejects one node for DRA and the other for CPU, but node-01 (where the dry-run finds the "
    "claims allocatable) has cpu to spare for the pod: the scheduler and the analysis disagree on a filter "
    "outside DRA, so the verdict is undetermined with the scheduler's words (DRA022, exit 2), not OK.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request()]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        event(
            "web-0",
            "FailedScheduling",
            "0/2 nodes are available: 1 Insufficient cpu, 1 cannot allocate all claims.",
            "2026-11-30T09:00:00Z",
        ),
        *NODES,
    ],
)
scenario(
    "scheduling-gated",
    "A pod held by a scheduling gate is blocked (DRA006) whatever its claims; the dry-run "
    "still shows what the allocator would do once the gate is removed.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")], schedulingGates=[{"name": "example.com/quota-check"}]),
        claim("c1", [request()]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ],
)
scenario(
    "other-scheduler",
    "A pod for another scheduler: DRA007 says the analysis models kube-scheduler.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")], schedulerName="volcano"),
        claim("c1", [request()]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ],
)


def bound_claim(name, conditions=None):
    """An FPGA claim allocated to a device with binding conditions (KEP-5007), reserved for the pod."""
    c = claim(
        name, [request("fpga", cls="gpu")], results=[("fpga", "node-02", "fpga-0")], reserved="web-0", node="node-02"
    )
    r = c["status"]["allocation"]["devices"]["results"][0]
    r["bindingConditions"] = ["fpga.example.com/attached"]
    r["bindingFailureConditions"] = ["fpga.example.com/attach-failed"]
    c["status"]["allocation"]["allocationTimestamp"] = "2026-11-30T09:00:00Z"
    if conditions is not None:
        c["status"]["devices"] = [{"driver": DRIVER, "pool": "node-02", "device": "fpga-0", "conditions": conditions}]
    return c


FPGA = rslice(
    "node-02-fpga",
    [
        dev(
            "fpga-0",
            bindsToNode=True,
            bindingConditions=["fpga.example.com/attached"],
            bindingFailureConditions=["fpga.example.com/attach-failed"],
        )
    ],
    "node-02",
)
WAITING = event(
    "web-0",
    "BindingConditionsPending",
    "waiting for binding conditions for device on node node-02",
    "2026-11-30T09:00:01Z",
    type_="Normal",
)
scenario(
    "binding-conditions-pending",
    "The claim is allocated to a device with binding conditions the driver has not "
    "set yet: the scheduler holds the pod in PreBind. Blocked (DRA421), not OK.",
    "explain pod web-0",
    [pod("web-0", [("gpu", "claim", "fpga-claim")]), bound_claim("fpga-claim"), dclass(), FPGA, WAITING, *NODES],
)
scenario(
    "binding-failed",
    "The driver set the binding failure condition: DRA422 with its reason and message.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "fpga-claim")]),
        bound_claim(
            "fpga-claim",
            [
                {
                    "type": "fpga.example.com/attach-failed",
                    "status": "True",
                    "reason": "FabricError",
                    "message": "port 3 down",
                    "lastTransitionTime": "2026-11-30T09:00:30Z",
                },
                {
                    "type": "fpga.example.com/attached",
                    "status": "False",
                    "reason": "Attaching",
                    "lastTransitionTime": "2026-11-30T09:00:30Z",
                },
            ],
        ),
        dclass(),
        FPGA,
        WAITING,
        *NODES,
    ],
)
scenario(
    "binding-failed-event",
    "The scheduler's last attempt failed in PreBind on a binding failure and deallocated "
    "the claim: DRA422 from its event, although a dry-run would allocate the device again.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "fpga-claim")]),
        claim("fpga-claim", [request("fpga", cls="gpu")]),
        dclass(),
        FPGA,
        WAITING,
        event(
            "web-0",
            "FailedScheduling",
            'running PreBind plugin "DynamicResources": device binding failed: '
            'claim=fpga-claim, reason=FabricError, message="port 3 down"',
            "2026-11-30T09:00:31Z",
            n=2,
        ),
        *NODES,
    ],
)


def ext_pod(name, qty="1", res="example.com/gpu", node_name=None, status=None, init=None):
    """A pod that asks for a DRA-backed extended resource in its container's requests (no claims)."""
    p = pod(name, claims=(), node_name=node_name)
    p["spec"].pop("resourceClaims")
    p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1", res: qty}, "limits": {res: qty}}
    if init:
        p["spec"]["initContainers"] = init
    if status:
        p["status"]["extendedResourceClaimStatus"] = status
    return p


def ext_class(name="gpu-ext", res="example.com/gpu", created="2026-11-01T00:00:00Z"):
    c = dclass(name)
    c["spec"]["extendedResourceName"] = res
    c["metadata"]["creationTimestamp"] = created
    return c


GPU_SLICE = rslice("node-01-gpus", [dev("gpu-0")], "node-01")
scenario(
    "extended-resource-no-device",
    "A container asks for example.com/gpu, which DeviceClass gpu-ext maps; no "
    "ResourceSlice publishes a device. Blocked on the claim the scheduler builds (DRA401), not OK.",
    "explain pod trainer",
    [ext_pod("trainer"), ext_class(), *NODES, event("trainer", "FailedScheduling", CAN, "2026-11-30T09:00:00Z")],
)
scenario(
    "extended-resource-allocatable",
    "The extended resource fits a free device: the dry-run of the claim the "
    "scheduler would build (request container-0-request-1) picks gpu-0.",
    "explain pod trainer",
    [ext_pod("trainer"), ext_class(), GPU_SLICE, *NODES],
)
scenario(
    "extended-resource-in-use",
    "A second pod asks for the only GPU, which the first pod's extended-resource claim holds: DRA404 names the holder.",
    "explain pod trainer-2",
    [
        ext_pod("trainer-2"),
        ext_class(),
        GPU_SLICE,
        *NODES,
        {
            **claim(
                "trainer-extended-resources-x7k2p",
                [request("container-0-request-1", cls="gpu-ext")],
                results=[("container-0-request-1", "node-01", "gpu-0")],
                reserved="trainer",
                node="node-01",
            ),
            "metadata": {
                "name": "trainer-extended-resources-x7k2p",
                "namespace": NS,
                "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Pod", "name": "trainer", "uid": "uid-pod-trainer", "controller": True}
                ],
            },
        },
        event("trainer-2", "FailedScheduling", CAN, "2026-11-30T09:00:00Z"),
    ],
)
scenario(
    "extended-resource-allocated",
    "After PreBind: the scheduler's claim, its device and the container -> request "
    "mapping from pod.status.extendedResourceClaimStatus.",
    "explain pod trainer",
    [
        ext_pod(
            "trainer",
            node_name="node-01",
            status={
                "resourceClaimName": "trainer-extended-resources-x7k2p",
                "requestMappings": [
                    {"containerName": "app", "resourceName": "example.com/gpu", "requestName": "container-0-request-1"}
                ],
            },
        ),
        ext_class(),
        GPU_SLICE,
        *NODES,
        {
            **claim(
                "trainer-extended-resources-x7k2p",
                [request("container-0-request-1", cls="gpu-ext")],
                results=[("container-0-request-1", "node-01", "gpu-0")],
                reserved="trainer",
                node="node-01",
            ),
            "metadata": {
                "name": "trainer-extended-resources-x7k2p",
                "namespace": NS,
                "uid": "uid-claim-x",
                "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Pod", "name": "trainer", "uid": "uid-pod-trainer", "controller": True}
                ],
            },
        },
        event(
            "trainer",
            "Scheduled",
            "Successfully assigned default/trainer to node-01",
            "2026-11-30T09:00:00Z",
            type_="Normal",
        ),
        event(
            "trainer",
            "Started",
            "Started container app",
            "2026-11-30T09:00:05Z",
            type_="Normal",
            component="kubelet",
            n=2,
        ),
    ],
)
scenario(
    "extended-resource-gate-off",
    "With DRAExtendedResource off (1.35 default) the resource is a device-plugin "
    "resource: DRA221, nothing for DRA to allocate.",
    "explain pod trainer",
    [ext_pod("trainer"), ext_class(), GPU_SLICE, *NODES],
    version="1.35",
)
_DP_NODE = node("node-02", zone="b")
_DP_NODE["status"] = {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110", "example.com/gpu": "4"}}
_TAINTED_GPU = rslice(
    "node-01-gpus", [dev("gpu-0", taints=[{"key": "gpu.example.com/unhealthy", "effect": "NoSchedule"}])], "node-01"
)
scenario(
    "extended-resource-device-plugin-node",
    "node-02 serves example.com/gpu through a device plugin; node-01 has no free DRA device. On node-02 the "
    "DynamicResources Filter has no claim left to allocate (filterExtendedResources) and NodeResourcesFit finds "
    "4 example.com/gpu free: the pod fits there (exit 0).",
    "explain pod trainer",
    [ext_pod("trainer"), ext_class(), node("node-01", zone="a"), _DP_NODE, _TAINTED_GPU],
)
_GPU_HOG = pod("gpu-hog", claims=(), node_name="node-02")
_GPU_HOG["spec"]["containers"][0]["resources"] = {"requests": {"example.com/gpu": "4"}}
_GPU_HOG["status"]["phase"] = "Running"
scenario(
    "extended-resource-device-plugin-node-full",
    "As extended-resource-device-plugin-node, but a pod bound to node-02 holds its 4 device-plugin GPUs: "
    "NodeResourcesFit rejects node-02 (Insufficient example.com/gpu) and DRA has no device on node-01: blocked at "
    "the node (DRA504, exit 1).",
    "explain pod trainer",
    [ext_pod("trainer"), ext_class(), node("node-01", zone="a"), _DP_NODE, _TAINTED_GPU, _GPU_HOG],
)


def _mixed_pod(name):
    """ext_pod plus a claim of its own (claim "own", class gpu)."""
    p = ext_pod(name)
    p["spec"]["resourceClaims"] = [{"name": "own", "resourceClaimName": "own"}]
    p["spec"]["containers"][0]["resources"]["claims"] = [{"name": "own"}]
    return p


_OWN_CLAIM = claim("own", [request("gpu", cls="gpu")])
_MIXED = [_mixed_pod("trainer"), _OWN_CLAIM, dclass(), ext_class(), node("node-01", zone="a"), _DP_NODE]
scenario(
    "extended-resource-prebind-defect",
    "The pod has a claim of its own, which only node-02's device fits, and asks for example.com/gpu, which "
    "node-02's device plugin serves. kube-scheduler 1.35-1.38 fails PreBind there on every attempt ('nil or empty "
    "request mappings'): blocked (DRA228, exit 1), not OK.",
    "explain pod trainer",
    [
        *_MIXED,
        rslice("node-01-gpus", [dev("gpu-0", mem="8Gi")], "node-01", driver="other.example.com"),
        rslice("node-02-gpus", [dev("gpu-1")], "node-02"),
    ],
)
scenario(
    "extended-resource-prebind-defect-possible",
    "As extended-resource-prebind-defect, but node-01 also fits the pod through DRA (its own device and one for "
    "the extended resource): the scheduler's choice decides whether PreBind fails (DRA229, exit 2).",
    "explain pod trainer",
    [
        *_MIXED,
        rslice("node-01-gpus", [dev("gpu-0"), dev("gpu-2")], "node-01"),
        rslice("node-02-gpus", [dev("gpu-1")], "node-02"),
    ],
)
_DOUBLE = node("node-01", zone="a")
_DOUBLE["status"] = {"allocatable": {"cpu": "8", "example.com/gpu": "1"}}
scenario(
    "extended-resource-double-admission",
    "node-01 advertises example.com/gpu through a device plugin and "
    "publishes the same GPU through the example.com DRA driver: DRA225.",
    "explain pod trainer",
    [
        ext_pod("trainer"),
        ext_class(),
        _DOUBLE,
        rslice("node-01-gpus", [dev("gpu-0")], "node-01", driver="gpu.example.com"),
    ],
)
scenario(
    "extended-resource-init-containers",
    "An init container asks for 2 GPUs, the app container for 1: the init "
    "container reuses the app's request and asks for the rest itself (container-0-request-0, count 1), as "
    "createRequestsAndMappings does.",
    "explain pod trainer",
    [
        ext_pod(
            "trainer",
            init=[
                {
                    "name": "warmup",
                    "image": "registry.example/warmup:1",
                    "resources": {"requests": {"example.com/gpu": "2"}},
                }
            ],
        ),
        ext_class(),
        rslice("node-01-gpus", [dev("gpu-0"), dev("gpu-1")], "node-01"),
        *NODES,
    ],
)


_GROUPED = dev(
    "gpu-0",
    consumesCounters=[
        {"counterSet": "gpu-0-mem", "counters": {"memory": {"value": "40Gi"}}, "compatibilityGroups": ["mig-a"]}
    ],
)


def _grouped_objs():
    """A pod whose only candidate device names counter compatibility groups (a 1.37 field)."""
    return [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request()]),
        dclass(),
        rslice("node-01-gpus", [_GROUPED], "node-01", count=2),
        rslice(
            "node-01-counters",
            [],
            "node-01",
            pool="node-01",
            count=2,
            sharedCounters=[{"name": "gpu-0-mem", "counters": {"memory": {"value": "40Gi"}}}],
        ),
        *NODES,
    ]


# A device that sets 1.36's node-allocatable resource mappings (DRANodeAllocatableResources, alpha in 1.36: an
# earlier shape than 1.37's nodeAllocatableResources), which kubectl-dra does not model.
_NODE_ALLOCATABLE = dev("gpu-0", nodeAllocatableResourceMappings={"cpu": {"capacityKey": "cores"}})

scenario(
    "field-not-modelled",
    "A 1.36 device sets nodeAllocatableResourceMappings (DRANodeAllocatableResources, alpha), which kubectl-dra "
    "does not model: DRA016, undetermined (exit 2), although the dry-run finds the device.",
    "explain pod web-0 --feature-gates DRANodeAllocatableResources=true",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request()]),
        dclass(),
        rslice("node-01-gpus", [_NODE_ALLOCATABLE], "node-01"),
        *NODES,
    ],
    version="1.36",
)
scenario(
    "compatibility-groups-gate-off",
    "The same slice with DRADeviceCompatibilityGroups off (the 1.37 default): upstream ignores the slice, so its pool "
    "is incomplete and the device is not usable (DRA401, DRA410).",
    "explain pod web-0",
    _grouped_objs(),
)
scenario(
    "field-not-modelled-elsewhere",
    "The unmodelled field is on a device of another driver, which the class "
    "excludes: it cannot change the verdict, so the answer stays determined (exit 0).",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request()]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        rslice(
            "node-01-other",
            # 1.37's nodeAllocatableResources: not modelled with its gate off (the default)
            [dev("gpu-0", nodeAllocatableResources={"cpu": {"mapping": {"capacityKey": "cores"}}})],
            "node-01",
            driver="other.example.com",
            pool="other",
        ),
        *NODES,
    ],
)


# DRADeviceCompatibilityGroups (alpha, 1.37+): two MIG-style partitions of one GPU draw from its counter set; their
# compatibility groups differ, so they cannot be allocated together. One is allocated to another claim.
ML = "ml"


def _partition(name, group):
    return dev(
        name,
        mem="20Gi",
        consumesCounters=[
            {"counterSet": "gpu-0-mem", "counters": {"memory": {"value": "20Gi"}}, "compatibilityGroups": [group]}
        ],
    )


def _partitions_objs():
    return [
        pod("trainer", [("gpu", "claim", "c1")], ns=ML),
        claim("c1", [request()], ns=ML),
        claim("serving", [request()], results=[("gpu", "node-01", "gpu-0-mig-a")], node="node-01", ns=ML),
        dclass(),
        rslice("node-01-gpus", [_partition("gpu-0-mig-a", "mig-a"), _partition("gpu-0-mig-b", "mig-b")], "node-01"),
        rslice(
            "node-01-counters",
            [],
            "node-01",
            pool="node-01",
            count=2,
            sharedCounters=[{"name": "gpu-0-mem", "counters": {"memory": {"value": "40Gi"}}}],
        ),
        *NODES,
    ]


scenario(
    "compatibility-groups-conflict",
    "DRADeviceCompatibilityGroups on (1.37, namespace ml): gpu-0-mig-a is allocated to claim ml/serving, and "
    "gpu-0-mig-b, the only free partition, draws from the same counter set with another compatibility group, so "
    "the allocator turns it away before its counters: DRA418, with the groups and the claim holding the set.",
    "explain pod trainer -n ml --feature-gates DRADeviceCompatibilityGroups=true",
    _partitions_objs(),
    version="1.37",
)
scenario(
    "compatibility-groups-within-claim",
    "DRADeviceCompatibilityGroups on (1.37, namespace ml), nothing allocated: the claim asks for two partitions of "
    "gpu-0, but their compatibility groups differ, so after the first the allocator turns the second away. Each "
    "device alone is a candidate; the search's own reason is the groups (DRA418).",
    "explain pod trainer -n ml --feature-gates DRADeviceCompatibilityGroups=true",
    [
        pod("trainer", [("gpu", "claim", "c1")], ns=ML),
        claim("c1", [request(count=2)], ns=ML),
        *[o for o in _partitions_objs() if o["kind"] not in ("Pod", "ResourceClaim")],
    ],
    version="1.37",
)
scenario(
    "compatibility-groups-conflict-gate-off",
    "The same cluster with DRADeviceCompatibilityGroups off (the 1.37 default): the allocator ignores the slice that "
    "names compatibility groups, so its pool is incomplete and neither partition is usable (DRA401).",
    "explain pod trainer -n ml",
    _partitions_objs(),
    version="1.37",
)


# DRADerivedAttributes (alpha, 1.37+): a GPU and a NIC on one CPU socket. The GPU publishes its socket, the NIC its
# NUMA node (two per socket): each request derives "derived/socket", which the claim's matchAttribute compares.
def _derived_objs():
    kind = 'device.attributes["gpu.example.com"].kind == "%s"'
    return [
        pod("trainer", [("gpu", "claim", "c1")], ns=ML),
        claim(
            "c1",
            [
                request(
                    "gpu",
                    derivedAttributes=[
                        {"name": "derived/socket", "expression": 'device.attributes["gpu.example.com"].socket'}
                    ],
                ),
                request(
                    "nic",
                    cls="nic",
                    derivedAttributes=[
                        {"name": "derived/socket", "expression": 'device.attributes["gpu.example.com"].numaNode / 2'}
                    ],
                ),
            ],
            constraints=[{"requests": ["gpu", "nic"], "matchAttribute": "derived/socket"}],
            ns=ML,
        ),
        dclass("gpu", kind % "gpu"),
        dclass("nic", kind % "nic"),
        rslice(
            "node-01-devices",
            [
                dev("gpu-0", attrs={"kind": "gpu", "socket": 1}),
                dev("nic-0", mem=None, attrs={"kind": "nic", "numaNode": 0}),
            ],
            "node-01",
        ),
        *NODES,
    ]


scenario(
    "derived-attributes-constraint",
    "DRADerivedAttributes on (1.37, namespace ml): the claim's matchAttribute compares derived/socket, which each "
    "request derives by CEL (the GPU's socket, the NIC's NUMA node / 2). gpu-0 is on socket 1, nic-0 on socket 0: "
    "the constraint turns nic-0 away and DRA409 shows the derived values.",
    "explain pod trainer -n ml --feature-gates DRADerivedAttributes=true",
    _derived_objs(),
    version="1.37",
)


def _derived_firmware_objs():
    """Two devices whose firmware versions differ only in build metadata, compared through derived attributes."""
    objs = copy.deepcopy(_derived_objs())
    c = next(o for o in objs if o["kind"] == "ResourceClaim")
    for r in c["spec"]["devices"]["requests"]:
        r["exactly"]["derivedAttributes"] = [
            {"name": "derived/firmware", "expression": 'device.attributes["gpu.example.com"].firmware'}
        ]
    c["spec"]["devices"]["constraints"] = [{"requests": ["gpu", "nic"], "matchAttribute": "derived/firmware"}]
    s = next(o for o in objs if o["kind"] == "ResourceSlice")
    for d, fw in zip(s["spec"]["devices"], ("1.2.3+gpu.7", "1.2.3+nic.2")):
        d["attributes"]["firmware"] = {"version": fw}
    return objs


scenario(
    "derived-attributes-semver-build-metadata",
    "DRADerivedAttributes on (1.37, namespace ml): each request derives derived/firmware from the device's firmware "
    "version, 1.2.3+gpu.7 and 1.2.3+nic.2. Upstream keeps the build metadata in a derived version "
    "(semver.Version.String) and matchAttribute compares the strings, so they differ; the local CEL engine's semver "
    "drops it, and used to call them equal and the claim allocatable. Now the derived value is open (exit 2).",
    "explain pod trainer -n ml --feature-gates DRADerivedAttributes=true",
    _derived_firmware_objs(),
    version="1.37",
)
scenario(
    "derived-attributes-semver-build-metadata-1-38",
    "The same claim on 1.38, where attribute values are parsed once and versions compare as semver, build "
    "metadata ignored (Version.Equals): 1.2.3+gpu.7 and 1.2.3+nic.2 match, and the claim is allocatable (exit 0).",
    "explain pod trainer -n ml --feature-gates DRADerivedAttributes=true",
    _derived_firmware_objs(),
    version="1.38",
)
scenario(
    "derived-attributes-gate-off",
    "The same claim with DRADerivedAttributes off (the 1.37 default): every allocator refuses a request with derived "
    "attributes ('cannot handle request with derived attributes, the feature is disabled'), DRA212.",
    "explain pod trainer -n ml",
    _derived_objs(),
    version="1.37",
)


def running_pod(name, claim_name, **status):
    p = pod(name, [("gpu", "claim", claim_name)], node_name="node-01")
    p["status"] = {"phase": "Running", **status}
    return p


_ALLOCATED = claim("c1", [request()], results=[("gpu", "node-01", "gpu-0")], reserved="web-0", node="node-01")
scenario(
    "device-unhealthy",
    "The pod runs; the kubelet reports its GPU Unhealthy: DRA605 names the container and device.",
    "explain pod web-0",
    [
        running_pod(
            "web-0",
            "c1",
            containerStatuses=[
                {
                    "name": "app",
                    "ready": True,
                    "allocatedResourcesStatus": [
                        {
                            "name": "claim:gpu/gpu",
                            "resources": [
                                {
                                    "resourceID": "gpu.example.com/node-01/gpu-0",
                                    "health": "Unhealthy",
                                    "message": "XID 79: GPU fell off the bus",
                                }
                            ],
                        }
                    ],
                }
            ],
        ),
        _ALLOCATED,
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ],
)
scenario(
    "evicted-by-device-taint",
    "A DeviceTaintRule puts a NoExecute taint on the pod's GPU; the eviction controller "
    "deletes the pod: DRA606 names the rule.",
    "explain pod web-0",
    [
        running_pod(
            "web-0",
            "c1",
            conditions=[
                {
                    "type": "DisruptionTarget",
                    "status": "True",
                    "reason": "DeletionByDeviceTaintManager",
                    "message": "Device Taint manager: deleting due to NoExecute taint",
                    "lastTransitionTime": "2026-11-30T09:10:00Z",
                }
            ],
        ),
        _ALLOCATED,
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceTaintRule",
            "metadata": {"name": "drain-gpu-0"},
            "spec": {
                "deviceSelector": {"driver": DRIVER, "pool": "node-01", "device": "gpu-0"},
                "taint": {
                    "key": "example.com/maintenance",
                    "value": "rma",
                    "effect": "NoExecute",
                    "timeAdded": "2026-11-30T09:09:58Z",
                },
            },
        },
    ],
)


def gang_objs():
    pods = []
    for i in range(3):
        p = pod(
            f"trainer-{i}",
            [("gpus", "template", "gang-gpus")],
            node_name="node-01" if i == 0 else None,
            statuses={"gpus": "gang-gpus-x1y2z"},
            schedulingGroup={"podGroupName": "gang"},
        )
        pods.append(p)
    c = claim("gang-gpus-x1y2z", [request("gpus")], results=[("gpus", "node-01", "gpu-0")], node="node-01")
    c["metadata"]["annotations"] = {"resource.kubernetes.io/pod-claim-name": "gpus"}
    c["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "name": "gang",
            "uid": "uid-podgroup-gang",
            "controller": True,
        }
    ]
    c["status"]["reservedFor"] = [
        {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "gang", "uid": "uid-podgroup-gang"}
    ]
    return [
        *pods,
        c,
        template("gang-gpus", [request("gpus")]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ]


scenario(
    "podgroup-claim",
    "A PodGroup's claim, shared by its three pods (DRAWorkloadResourceClaims on): allocated "
    "and reserved for the group; DRA207 names the group and says it is not this pod's to delete.",
    "explain pod trainer-0 --feature-gates DRAWorkloadResourceClaims=true",
    gang_objs(),
)
scenario(
    "podgroup-claim-gate-off",
    "The same with the 1.37 default (gate off): the scheduler does not accept the "
    "PodGroup as owner (DRA205), and the hint does not advise deleting the gang's claim.",
    "explain pod trainer-1",
    gang_objs(),
)


_DECLARING = node("node-02", zone="b")
_DECLARING["status"] = {"declaredFeatures": ["DRAOptionalNodeOperations"]}
scenario(
    "optional-node-operations",
    "1.37 with DRAOptionalNodeOperations: node-01's slice skips node operations, "
    "but only node-02 declares the feature in status.declaredFeatures, so only node-02's device is usable.",
    "explain pod web-0 --feature-gates DRAOptionalNodeOperations=true",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request()]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01", skipNodeOperations=["*"]),
        rslice("node-02-gpus", [dev("gpu-1")], "node-02", skipNodeOperations=["*"]),
        node("node-01", zone="a"),
        _DECLARING,
    ],
)


# One scenario per code that no other test reaches (tests/unit/test_registry.py requires each code in a test).
scenario(
    "pod-claim-invalid",
    "A pod claim entry with neither resourceClaimName nor resourceClaimTemplateName (DRA206).",
    "explain pod web-0",
    [
        {
            **pod("web-0", [("gpu", "claim", "c1")]),
            "spec": {"resourceClaims": [{"name": "gpu"}], "containers": [{"name": "app", "image": "x"}]},
        },
        *NODES,
    ],
)
scenario(
    "feature-disabled",
    "A firstAvailable request while DRAPrioritizedList is off (1.36: from 1.37 the gate is locked on): the allocator "
    "refuses (DRA212).",
    "explain pod web-0 --kubernetes-version 1.36 --feature-gates DRAPrioritizedList=false",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim(
            "c1",
            [
                {
                    "name": "gpu",
                    "firstAvailable": [
                        {"name": "big", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}
                    ],
                }
            ],
        ),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ],
)
scenario(
    "request-invalid",
    "A request with no device class name: upstream's `unsupported request type` (DRA213).",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [{"name": "gpu", "exactly": {"allocationMode": "ExactCount", "count": 1}}]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ],
)
scenario(
    "extended-resource-claim-stale",
    "An unallocated extended-resource claim from an earlier attempt: the "
    "scheduler deletes it and builds a new one (DRA223); the dry-run shows the new one.",
    "explain pod trainer",
    [
        ext_pod("trainer"),
        ext_class(),
        GPU_SLICE,
        *NODES,
        {
            **claim("trainer-extended-resources-old01", [request("container-0-request-1", cls="gpu-ext")]),
            "metadata": {
                "name": "trainer-extended-resources-old01",
                "namespace": NS,
                "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Pod", "name": "trainer", "uid": "uid-pod-trainer", "controller": True}
                ],
            },
        },
    ],
)
scenario(
    "cel-not-evaluable",
    "A selector Kubernetes accepts but the local CEL engine cannot run (optional.unwrap): "
    "undetermined (DRA303, exit 2), never a guess.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request(selectors=["optional.of(device.driver).unwrap() == 'gpu.example.com'"])]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ],
)
scenario(
    "no-device-matches-class",
    "Devices are published, but the class selects another driver's (DRA402).",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request()]),
        dclass(expr='device.driver == "npu.example.com"'),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ],
)


def _negative_share():
    bad = claim("c-old", [request()], results=[("gpu", "node-01", "gpu-0")], node="node-01")
    r = bad["status"]["allocation"]["devices"]["results"][0]
    r.update(shareID="0a1b2c3d-0000-4000-8000-000000000001", consumedCapacity={"memory": "-4Gi"})
    return bad


scenario(
    "attribute-unsupported-in-constraint-1-38",
    "Kubernetes 1.38: a matchAttribute constraint over driverVersion meets gpu-0, whose driverVersion is no semantic "
    "version (01.2.3). 1.38 parses attributes once when the slice arrives and keeps that one as unsupported: the "
    "constraint aborts the allocation (DRA416); 1.37 would have skipped the device.",
    "explain pod web-0 --kubernetes-version 1.38",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request(count=2)], constraints=[{"matchAttribute": f"{DRIVER}/driverVersion"}]),
        dclass(),
        rslice(
            "node-01-gpus",
            [
                dev("gpu-0", attributes={"driverVersion": {"version": "01.2.3"}}),
                dev("gpu-1", attributes={"driverVersion": {"version": "1.2.3"}}),
                dev("gpu-2", attributes={"driverVersion": {"version": "1.2.3"}}),
            ],
            "node-01",
        ),
        *NODES,
    ],
    version="1.38",
)
scenario(
    "allocated-capacity-negative-1-38",
    "Kubernetes 1.38: an allocated claim (c-old) records a negative consumed capacity for its share of gpu-0; the "
    "1.38 scheduler's PreFilter refuses to gather the allocation state, so no pod with claims schedules (DRA417).",
    "explain pod web-0 --kubernetes-version 1.38",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request()]),
        _negative_share(),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0", allowMultipleAllocations=True), dev("gpu-1")], "node-01"),
        *NODES,
    ],
    version="1.38",
)
for _v in ("1.37", "1.38"):
    scenario(
        f"all-mode-incomplete-pool-on-one-node-{_v.replace('.', '-')}",
        f"Kubernetes {_v}: allocationMode All; node-01's pool is incomplete (1 of 2 slices), node-02's pool is complete. "
        "Up to 1.37 the scheduler's Filter on node-01 errors (`asks for all devices, but resource pool ... is "
        "currently being updated`), which aborts the attempt for every node (blocked); from 1.38 it fails node-01 "
        "only and the pod fits node-02 (OK).",
        f"explain pod web-0 --kubernetes-version {_v}",
        [
            pod("web-0", [("gpu", "claim", "c1")]),
            claim("c1", [request(mode="All")]),
            dclass(),
            rslice("node-01-gpus", [dev("gpu-0")], "node-01", count=2),
            rslice("node-02-gpus", [dev("gpu-0"), dev("gpu-1")], "node-02"),
            *NODES,
        ],
        version=_v,
    )
for _v in ("1.34", "1.37"):
    scenario(
        f"pool-invalid-on-one-node-{_v.replace('.', '-')}",
        f"Kubernetes {_v}: two GPUs wanted; node-01 has one good GPU and an invalid pool (a device name twice), "
        "node-02 two good GPUs. From 1.35 `invalid resource pools were encountered` fails node-01 only and the pod "
        "fits node-02 (OK); 1.34 aborts the scheduling attempt on it (blocked).",
        f"explain pod web-0 --kubernetes-version {_v}",
        [
            pod("web-0", [("gpu", "claim", "c1")]),
            claim("c1", [request(count=2)]),
            dclass(),
            rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
            rslice("node-01-a", [dev("x-0")], "node-01", pool="node-01-extra", count=2),
            rslice("node-01-b", [dev("x-0")], "node-01", pool="node-01-extra", count=2),
            rslice("node-02-gpus", [dev("gpu-0"), dev("gpu-1")], "node-02"),
            *NODES,
        ],
        version=_v,
    )
scenario(
    "pool-invalid",
    "A pool whose two slices publish the same device name is invalid (DRA411).",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request()]),
        dclass(),
        rslice("node-01-a", [dev("gpu-0")], "node-01", pool="node-01", count=2),
        rslice("node-01-b", [dev("gpu-0")], "node-01", pool="node-01", count=2),
        *NODES,
    ],
)
scenario(
    "binding-conditions-unsupported",
    "The only device has binding conditions and the assumed 1.35 defaults do not support them (DRA412).",
    "explain pod web-0",
    [pod("web-0", [("gpu", "claim", "c1")]), claim("c1", [request()]), dclass(), FPGA, *NODES],
    version="1.35",
)
scenario(
    "requests-together",
    "Two claims of the pod each need the one free device: each could have it alone, not both (DRA408, joint).",
    "explain pod web-0",
    [
        pod("web-0", [("a", "claim", "c1"), ("b", "claim", "c2")]),
        claim("c1", [request()]),
        claim("c2", [request()]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ],
)


def _counters(name, pool, mem):
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": DRIVER,
            "nodeName": pool,
            "pool": {"name": pool, "generation": 1, "resourceSliceCount": 2},
            "sharedCounters": [{"name": "gpu-0-mem", "counters": {"memory": {"value": mem}}}],
        },
    }


def _part(name, mem, counter_set="gpu-0-mem"):
    return dev(name, mem, consumesCounters=[{"counterSet": counter_set, "counters": {"memory": {"value": mem}}}])


scenario(
    "allocation-failed",
    "Two claims, two partitions of one GPU: each partition fits the GPU's memory counter alone, not both (DRA413).",
    "explain pod web-0",
    [
        pod("web-0", [("a", "claim", "c1"), ("b", "claim", "c2")]),
        claim("c1", [request()]),
        claim("c2", [request()]),
        dclass(),
        _counters("node-01-counters", "node-01", "40Gi"),
        rslice("node-01-parts", [_part("gpu-0-a", "40Gi"), _part("gpu-0-b", "40Gi")], "node-01", count=2),
        *NODES,
    ],
    version="1.37",
)
scenario(
    "counter-set-missing",
    "A partition consumes a counter set its pool does not publish: the pool is invalid (DRA411), not used up.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request()]),
        dclass(),
        _counters("node-01-counters", "node-01", "40Gi"),
        rslice("node-01-parts", [_part("gpu-0-a", "20Gi", counter_set="gpu-9-mem")], "node-01", count=2),
        *NODES,
    ],
    version="1.37",
)
scenario(
    "slice-1-34-layout",
    "A 1.34-style slice (devices and sharedCounters in one) read with 1.37 semantics: its devices are ignored.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request()]),
        dclass(),
        rslice(
            "node-01-parts",
            [_part("gpu-0-a", "20Gi")],
            "node-01",
            sharedCounters=[{"name": "gpu-0-mem", "counters": {"memory": {"value": "40Gi"}}}],
        ),
        *NODES,
    ],
    version="1.37",
)
scenario(
    "count-short-by-taint",
    "Eight GPUs wanted, eight published, one under an untolerated health taint: the taint (DRA405) beside the count.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request(count=8)]),
        dclass(),
        rslice(
            "node-01-gpus",
            [dev(f"gpu-{i}") for i in range(3)]
            + [dev("gpu-3", taints=[{"key": "example.com/unhealthy", "value": "xid-79", "effect": "NoSchedule"}])]
            + [dev(f"gpu-{i}") for i in range(4, 8)],
            "node-01",
        ),
        *NODES,
    ],
    version="1.37",
)
scenario(
    "no-nodes-in-dump",
    "A dump without Node objects and a network-attached device (allNodes): undetermined (DRA018), not blocked.",
    "match claim c1",
    [
        claim("c1", [request()]),
        dclass(),
        rslice("fabric", [dev("gpu-0")], pool="fabric", allNodes=True),
    ],
    version="1.37",
)
scenario(
    "no-nodes-node-local",
    "A dump without Node objects: the node is inferred from the slice's nodeName and the claim is allocatable.",
    "match claim c1",
    [
        claim("c1", [request()]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
    ],
    version="1.37",
)
scenario(
    "no-usable-node",
    "The pod's nodeSelector matches no node (DRA503).",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")], nodeSelector={"zone": "mars"}),
        claim("c1", [request()]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ],
)
scenario(
    "driver-prepare-failed",
    "The kubelet's NodePrepareResources call failed: the driver's error (DRA602).",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")], node_name="node-01"),
        _ALLOCATED,
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
        event(
            "web-0",
            "Scheduled",
            "Successfully assigned default/web-0 to node-01",
            "2026-11-30T09:00:00Z",
            type_="Normal",
        ),
        event(
            "web-0",
            "FailedPrepareDynamicResources",
            "Failed to prepare dynamic resources: prepare dynamic "
            "resources: NodePrepareResources failed for ResourceClaim c1: GPU gpu-0 is in use by a MIG profile",
            "2026-11-30T09:00:03Z",
            component="kubelet",
            n=2,
        ),
    ],
)
scenario(
    "pod-not-reserved",
    "The pod is bound, but its claim is reserved for another pod: the kubelet refuses (DRA603).",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")], node_name="node-01"),
        claim("c1", [request()], results=[("gpu", "node-01", "gpu-0")], reserved="other", node="node-01"),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ],
)


_TAINTED = node("node-01", zone="a")
_TAINTED["spec"] = {"taints": [{"key": "gpu-maintenance", "effect": "NoSchedule"}]}
_CORDONED = node("node-02", zone="b")
_CORDONED["spec"] = {"unschedulable": True}
scenario(
    "node-taint-untolerated",
    "Every node is unusable for the pod: node-01 has a taint it does not tolerate, "
    "node-02 is cordoned. DRA503 names each node's reason, in text as in JSON.",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request()]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        _TAINTED,
        _CORDONED,
    ],
)


def labelled(p, **labels):
    p["metadata"]["labels"] = labels
    return p


scenario(
    "selector-two-pods",
    "explain pod -l: the two pods -l picks, each explained. trainer-b asks for a model nobody has (blocked). "
    "trainer-a would get the one GPU alone, but `other` (left out by -l) wants it too and neither has a creation "
    "time, so which one the scheduler takes first is unknown: trainer-a is undetermined (DRA431), which wins the "
    "exit code (2).",
    "explain pod -l app=trainer",
    [
        labelled(pod("trainer-a", [("gpu", "claim", "ca")]), app="trainer"),
        labelled(pod("trainer-b", [("gpu", "claim", "cb")]), app="trainer"),
        labelled(pod("other", [("gpu", "claim", "co")]), app="other"),
        claim("ca", [request()]),
        claim("cb", [request(selectors=['device.attributes["gpu.example.com"].model == "B200"'])]),
        claim("co", [request()]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0", attrs={"model": "H100"})], "node-01"),
        *NODES,
    ],
)


def deployment_objs():
    """A Deployment, its ReplicaSet and two pods; a third pod with the same labels that nobody owns."""
    d = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "recomendador", "namespace": NS, "uid": "uid-deploy"},
        "spec": {"selector": {"matchLabels": {"app": "recomendador"}}},
    }
    owner = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "recomendador",
        "uid": "uid-deploy",
        "controller": True,
    }
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "recomendador-7d9c8b6f5", "namespace": NS, "uid": "uid-rs", "ownerReferences": [owner]},
        "spec": {"selector": {"matchLabels": {"app": "recomendador"}}},
    }
    pods = []
    for n, sel in (("x2x4k", None), ("q9w8e", 'device.attributes["gpu.example.com"].model == "B200"')):
        p = labelled(pod(f"recomendador-7d9c8b6f5-{n}", [("gpu", "claim", f"c-{n}")]), app="recomendador")
        p["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "controller": True,
                "name": "recomendador-7d9c8b6f5",
                "uid": "uid-rs",
            }
        ]
        pods.append((p, claim(f"c-{n}", [request(selectors=[sel] if sel else ())])))
    stray = labelled(pod("recomendador-manual", [("gpu", "claim", "c-x2x4k")]), app="recomendador")
    return [
        d,
        rs,
        *(p for p, _ in pods),
        *(c for _, c in pods),
        stray,
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0", attrs={"model": "H100"})], "node-01"),
        *NODES,
    ]


scenario(
    "workload-deployment",
    "explain deploy/NAME: the pods the Deployment controls through its ReplicaSet (not "
    "the unowned pod with the same labels); one fits, one asks for a model nobody has (exit 1).",
    "explain deploy/recomendador",
    deployment_objs(),
)


def _job(name, pod_claims, **spec):
    tpl = pod("x", pod_claims)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-job-{name}"},
        "spec": {
            "parallelism": 1,
            "template": {"metadata": {"labels": {"job-name": name}}, "spec": dict(tpl["spec"], restartPolicy="Never")},
            **spec,
        },
    }


def _rs_event(rs, reason, message, time):
    e = event(rs, reason, message, time, component="replicaset-controller")
    e["involvedObject"] = {"kind": "ReplicaSet", "name": rs, "namespace": NS, "uid": "uid-rs"}
    return e


scenario(
    "workload-no-pods-template-missing",
    "explain job/NAME for a Job without pods whose pod template names a ResourceClaimTemplate that does not exist: "
    "the template dry-run reports the missing template (DRA202), not 'no pods'.",
    "explain job/train",
    [
        _job("train", [("gpu", "template", "gpu-80gb")]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ],
)
scenario(
    "workload-no-pods-quota",
    "explain deploy/NAME for a Deployment whose ReplicaSet cannot create pods: the FailedCreate event (DRA208) and "
    "the used-up ResourceQuota on the extended resource the template asks for (DRA209).",
    "explain deploy/trainer",
    [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "trainer", "namespace": NS, "uid": "uid-deploy"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "trainer"}},
                "template": {"metadata": {"labels": {"app": "trainer"}}, "spec": ext_pod("x")["spec"]},
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": "trainer-5c8d7f9b4",
                "namespace": NS,
                "uid": "uid-rs",
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": "trainer",
                        "uid": "uid-deploy",
                        "controller": True,
                    }
                ],
            },
            "spec": {"selector": {"matchLabels": {"app": "trainer"}}},
        },
        _rs_event(
            "trainer-5c8d7f9b4",
            "FailedCreate",
            'Error creating: pods "trainer-5c8d7f9b4-k2x8q" is forbidden: exceeded quota: gpus, requested: '
            "requests.example.com/gpu=1, used: requests.example.com/gpu=4, limited: requests.example.com/gpu=4",
            "2026-12-01T08:00:00Z",
        ),
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "gpus", "namespace": NS},
            "spec": {"hard": {"requests.example.com/gpu": "4"}},
            "status": {"hard": {"requests.example.com/gpu": "4"}, "used": {"requests.example.com/gpu": "4"}},
        },
        ext_class(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ],
    version="1.37",
)
scenario(
    "workload-no-pods-unexplained",
    "explain job/NAME for a Job that wants a pod and has none, with no event and no quota in the way: its pod "
    "template would get a device now, so the cause is not visible: undetermined (DRA019, exit 2), never OK.",
    "explain job/train",
    [
        _job("train", [("gpu", "template", "gpu-24gb")]),
        template("gpu-24gb", [request()]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ],
)


def _nil_rule_objs():
    return [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request()]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0"), dev("gpu-1")], "node-01"),
        *NODES,
        {
            "apiVersion": "resource.k8s.io/v1beta2",
            "kind": "DeviceTaintRule",
            "metadata": {"name": "maintenance-window"},
            "spec": {"taint": {"key": "example.com/maintenance", "value": "true", "effect": "NoSchedule"}},
        },
    ]


scenario(
    "taint-rule-without-selector-1-36",
    "A DeviceTaintRule without a deviceSelector on 1.36: the scheduler's slice tracker taints every device with it "
    "(1.37.1 made it match none), so a request that does not tolerate it gets no device (DRA405).",
    "explain pod web-0 --feature-gates DRADeviceTaintRules=true",
    _nil_rule_objs(),
    version="1.36",
)
scenario(
    "taint-rule-without-selector-1-37",
    "The same rule on 1.37: it matches no device (kubernetes/kubernetes#141648), the claim is allocatable.",
    "explain pod web-0 --feature-gates DRADeviceTaintRules=true",
    _nil_rule_objs(),
    version="1.37",
)


def _rule_134(selector):
    """The objects of _nil_rule_objs with a 1.34 (resource.k8s.io/v1alpha3) DeviceTaintRule using selector."""
    objs = _nil_rule_objs()
    objs[-1] = dict(
        objs[-1], apiVersion="resource.k8s.io/v1alpha3", spec=dict(objs[-1]["spec"], deviceSelector=selector)
    )
    return objs


scenario(
    "taint-rule-class-selector-1-34",
    "1.34 with DRADeviceTaints (there is no DRADeviceTaintRules gate yet): a v1alpha3 DeviceTaintRule selecting "
    "the devices of DeviceClass gpu (whose CEL selector they pass) taints both GPUs, so the request gets none.",
    "explain pod web-0 --feature-gates DRADeviceTaints=true",
    _rule_134({"deviceClassName": "gpu"}),
    version="1.34",
)
scenario(
    "taint-rule-missing-class-1-34",
    "The same rule naming a DeviceClass that does not exist: the slice tracker does not apply it (1.35 dropped "
    "the field, and there the rule taints every device of the driver); allocatable.",
    "explain pod web-0 --feature-gates DRADeviceTaints=true",
    _rule_134({"driver": "gpu.example.com", "deviceClassName": "no-such-class"}),
    version="1.34",
)
scenario(
    "taint-rule-selector-does-not-compile-1-34",
    "A 1.34 DeviceTaintRule whose CEL selector does not compile: the slice tracker fails to apply the rules to "
    "the slice and keeps its previous view of it, which a snapshot cannot show: undetermined (DRA016).",
    "explain pod web-0 --feature-gates DRADeviceTaints=true",
    _rule_134({"selectors": [{"cel": {"expression": "device.attributes['gpu.example.com'].model =="}}]}),
    version="1.34",
)


def _bundle_header(version):
    """The header `kubectl dra dump` writes: offline, the answers are the server's version's."""
    return {
        "apiVersion": "kubectl-dra/v1alpha1",
        "kind": "Bundle",
        "metadata": {"name": "kubectl-dra-bundle"},
        "serverVersion": version,
        "resourceApiVersion": "v1",
        "namespace": NS,
        "observedAt": "2026-12-01T08:00:00Z",
        "gaps": [],
    }


def _partition_objs():
    mem = {"counterSet": "gpu-0", "counters": {"memory": {"value": "20Gi"}}}
    return [
        pod("web-0", [("gpu", "claim", "c1")]),
        claim("c1", [request()]),
        dclass(),
        rslice(
            "node-01-gpus",
            [dev("gpu-0-a", "20Gi", consumesCounters=[mem]), dev("gpu-0-b", "20Gi", consumesCounters=[mem])],
            "node-01",
            count=2,
        ),
        counter_slice("gpu-0"),
        *NODES,
    ]


scenario(
    "scheduler-patch-predates-fix",
    "A bundle from a v1.36.2 server, a claim for one partition of a partitionable GPU: kubectl-dra answers as "
    "v1.36.6 does (allocatable), but v1.36.2 still leaks the counters of rejected candidates "
    "(kubernetes/kubernetes#140431, fixed in v1.36.3): the verdict is undetermined (DRA020, exit 2).",
    "explain pod web-0",
    [_bundle_header("v1.36.2"), *_partition_objs()],
)
scenario(
    "scheduler-patch-has-the-fixes",
    "The same claim from a v1.36.6 server: no known fix is missing, the claim is allocatable (exit 0).",
    "explain pod web-0",
    [_bundle_header("v1.36.6"), *_partition_objs()],
)


def _lint_objs():
    bad_cel = dclass("broken", 'device.driver == "gpu.example.com" &&')
    costly = dclass(
        "costly",
        'device.attributes["gpu.example.com"].model.split("").all(x, device.attributes["gpu.example.com"].model'
        '.split("").all(y, device.attributes["gpu.example.com"].model.split("").all(z, x + y + z != "")))',
    )
    ext_a, ext_b = ext_class("gpu-a"), ext_class("gpu-b")
    typo = claim(
        "c-typo", [request(selectors=['device.capacity["gpu.example.com"].memmory.compareTo(quantity("8Gi")) >= 0'])]
    )
    as_string = claim(
        "c-version", [request(selectors=['device.attributes["gpu.example.com"].driverVersion == "550.54.15"'])]
    )
    misplaced = claim("c-tol", [request()])
    misplaced["spec"]["devices"]["tolerations"] = [{"key": "example.com/unhealthy", "operator": "Exists"}]
    old = template("t-old", [])
    old["apiVersion"] = "resource.k8s.io/v1beta1"
    old["spec"]["spec"]["devices"]["requests"] = [{"name": "gpu", "deviceClassName": "gpu"}]
    missing_class = claim("c-nope", [request(cls="gpu-large")])
    deploy = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "trainer", "namespace": NS},
        "spec": {
            "selector": {"matchLabels": {"app": "trainer"}},
            "template": {
                "metadata": {"labels": {"app": "trainer"}},
                "spec": {
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-80gb"}],
                    "containers": [{"name": "app", "image": "registry.example/app:1"}],
                },
            },
        },
    }
    rule = {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "drain-all"},
        "spec": {"deviceSelector": {}, "taint": {"key": "example.com/drain", "effect": "NoExecute"}},
    }
    plugin_node = node("node-03", zone="c")
    plugin_node["status"] = {"allocatable": {"cpu": "8", "example.com/gpu": "4", "example.com/vgpu": "8"}}
    v1_shape = claim("c-v1beta1-shape", [])
    v1_shape["spec"]["devices"]["requests"] = [{"name": "gpu", "deviceClassName": "gpu", "count": 1}]
    ok = template("t-ok", [request()])
    mixed = pod("mixed", [("gpu", "template", "t-ok")])
    mixed["spec"]["containers"][0]["resources"] = {
        "limits": {"example.com/vgpu": "1"},
        "claims": [{"name": "gpu", "request": "gpus"}, {"name": "scratch"}],
    }
    mixed["spec"]["initContainers"] = [
        {"name": "init", "image": "registry.example/init:1", "resourceClaims": [{"name": "gpu"}]}
    ]
    return [
        plugin_node,
        dclass(),
        bad_cel,
        costly,
        ext_a,
        ext_b,
        typo,
        as_string,
        misplaced,
        old,
        missing_class,
        deploy,
        rule,
        v1_shape,
        ok,
        mixed,
        rslice(
            "node-01-gpus",
            [dev("gpu-0", attributes={"driverVersion": {"version": "550.54.15"}}), dev("gpu-1")],
            "node-01",
        ),
        rslice("node-03-gpus", [dev("gpu-0")], "node-03"),
        *NODES,
    ]


scenario(
    "lint-manifests",
    "kubectl dra lint on manifests with one mistake of each kind, the dump itself as the reference inventory: a CEL "
    "syntax error (DRA701), a selector over the cost limit (DRA702), a capacity name no device has with a suggestion "
    "(DRA703), tolerations under the claim's devices, a v1 request in the v1beta1 shape and resourceClaims under a "
    "container (DRA705), a DeviceTaintRule with an empty selector and NoExecute (DRA706), two classes with one "
    "extendedResourceName (DRA707), a class, a template, a container claim and a request that do not exist (DRA708), "
    "a version attribute compared with a string (DRA709), an extendedResourceName a device plugin advertises (DRA710), "
    "a pod asking for example.com/vgpu from a device plugin and for gpu.example.com devices through a claim on a node "
    "that has both (DRA711), v1beta1 and v1beta2 objects, off by default on 1.37 (DRA712). Exit 1.",
    "lint",
    _lint_objs(),
)


def inventory_objs():
    """Two nodes: node-01 with a partitionable GPU (four 1g and one 3g partition on one counter set, one 1g in use),
    node-02 with a whole GPU held by a running pod, a shareable NIC with one share, a GPU under a DeviceTaintRule
    and a GPU a pod's status reports unhealthy; plus an incomplete pool."""
    mem = lambda g: {"counterSet": "gpu-0", "counters": {"memory": {"value": g}}}  # noqa: E731
    parts = [dev(f"gpu-0-1g-{i}", "5Gi", attrs={"profile": "1g.5gb"}, consumesCounters=[mem("5Gi")]) for i in range(4)]
    parts.append(dev("gpu-0-3g", "20Gi", attrs={"profile": "3g.20gb"}, consumesCounters=[mem("20Gi")]))
    running = pod("trainer", [("gpu", "claim", "c-whole")], node_name="node-02")
    running["status"] = {
        "phase": "Running",
        "containerStatuses": [
            {
                "name": "app",
                "allocatedResourcesStatus": [
                    {
                        "name": "claim:c-whole/gpu",
                        "resources": [
                            {"resourceID": f"{DRIVER}/node-02/gpu-3", "health": "Unhealthy", "message": "XID 79"}
                        ],
                    }
                ],
            }
        ],
    }
    shared = claim("c-nic", [request("nic", "nic")])
    shared["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {
                        "request": "nic",
                        "driver": "net.example.com",
                        "pool": "node-02",
                        "device": "eth1",
                        "shareID": "00000000-0000-0000-0000-000000000001",
                        "consumedCapacity": {"bandwidth": "10G"},
                    }
                ]
            }
        }
    }
    return [
        claim("c-1g", [request()], results=[("gpu", "node-01", "gpu-0-1g-0")], reserved="web-0", node="node-01"),
        claim(
            "c-whole",
            [request()],
            results=[("gpu", "node-02", "gpu-1"), ("gpu", "node-02", "gpu-3")],
            reserved="trainer",
            node="node-02",
        ),
        running,
        shared,
        dclass(),
        dclass("nic", 'device.driver == "net.example.com"'),
        rslice("node-01-gpus", parts, "node-01", count=2),
        counter_slice("gpu-0"),
        rslice("node-02-gpus", [dev("gpu-1", "80Gi"), dev("gpu-2", "80Gi"), dev("gpu-3", "80Gi")], "node-02"),
        rslice(
            "node-02-nics",
            [dev("eth1", allowMultipleAllocations=True, capacity={"bandwidth": {"value": "100G"}})],
            "node-02",
            driver="net.example.com",
        ),
        rslice("node-03-gpus", [dev("gpu-9")], "node-03", count=2),
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceTaintRule",
            "metadata": {"name": "rma-gpu-2"},
            "spec": {
                "deviceSelector": {"driver": DRIVER, "pool": "node-02", "device": "gpu-2"},
                "taint": {"key": "example.com/rma", "value": "true", "effect": "NoSchedule"},
            },
        },
        *NODES,
        node("node-03", zone="c"),
    ]


scenario(
    "devices-summary",
    "kubectl dra devices: per node and class, free / allocated / shared / exhausted / tainted / unhealthy / "
    "unusable, and how many more of each partition fit on the shared counters (4x 1g or... : alternatives).",
    "devices",
    inventory_objs(),
    version="1.37",
)
scenario(
    "devices-node-holders",
    "kubectl dra devices --node node-02 -o wide: the node's devices with their attributes and capacity, and the pods "
    "holding them through which claims (what a drain needs).",
    "devices --node node-02 -o wide",
    inventory_objs(),
    version="1.37",
)
scenario(
    "devices-where",
    "kubectl dra devices --free --where CEL: the free devices a selector expression picks.",
    'devices --free --where \'device.driver == "gpu.example.com" && '
    'device.capacity["gpu.example.com"].memory.compareTo(quantity("20Gi")) >= 0\'',
    inventory_objs(),
    version="1.37",
)


def map_objs():
    """The inventory's cluster (free, allocated, shared, tainted, unhealthy, unusable) with every state the device
    map adds: node-01's counter set used up by the 3g partition and one 1g (its other 1g partitions exhausted);
    node-04's FPGA allocated and waiting for its binding condition; a pending pod the queue's dry-run places on one
    of node-05's two free GPUs (reserved, estimated); node-06 and node-07 in the same states (one grouped row)."""
    objs = [o for o in inventory_objs() if o.get("metadata", {}).get("name") not in ("c-1g", "node-01-counters")]
    ctr = counter_slice("gpu-0", memory="25Gi")
    held = claim(
        "c-1g",
        [request(count=2)],
        results=[("gpu", "node-01", "gpu-0-1g-0"), ("gpu", "node-01", "gpu-0-3g")],
        reserved="web-0",
        node="node-01",
    )
    fpga = claim(
        "fpga-claim", [request("fpga", cls="gpu")], results=[("fpga", "node-04", "fpga-0")], reserved="loader-0",
        node="node-04",
    )  # fmt: skip
    r = fpga["status"]["allocation"]["devices"]["results"][0]
    r["bindingConditions"] = ["fpga.example.com/attached"]
    fpga["status"]["allocation"]["allocationTimestamp"] = "2026-11-30T09:00:00Z"
    fpga_slice = rslice(
        "node-04-fpga", [dev("fpga-0", bindsToNode=True, bindingConditions=["fpga.example.com/attached"])], "node-04"
    )
    waiting = pod("trainer-1", [("gpu", "claim", "c-train")])
    waiting["metadata"]["creationTimestamp"] = "2026-11-30T09:00:00Z"
    return [
        *objs,
        ctr,
        held,
        fpga,
        pod("loader-0", [("fpga", "claim", "fpga-claim")]),
        fpga_slice,
        waiting,
        claim("c-train", [request()]),
        *(rslice(f"{n}-gpus", [dev("gpu-0"), dev("gpu-1")], n) for n in ("node-05", "node-06", "node-07")),
        *(node(n, zone="d") for n in ("node-04", "node-05", "node-06", "node-07")),
    ]


scenario(
    "devices-map",
    "kubectl dra devices -o map: a cell per device in every state (free, allocated, waiting for binding conditions, "
    "shared, reserved by a pending pod (estimated), counters used up, tainted, unhealthy, unusable), nodes in the same "
    "states on one row.",
    "devices -o map",
    map_objs(),
    version="1.37",
)


def no_dra_pod(name: str, cpu: str, container: str = "etl", image: str = "registry.example/etl:1", **kw) -> dict:
    """A pod without ResourceClaims whose one container asks for cpu: a pod the queue counts but does not dry-run."""
    p = pod(name, (), containers=[{"name": container, "image": image, "resources": {"requests": {"cpu": cpu}}}], **kw)
    del p["spec"]["resourceClaims"]
    return p


def pod_map_objs():
    """map_objs() with two pending pods asking for a GPU of at least 20Gi: trainer-0 (ahead in the queue) and
    trainer-1 (the one explained), and node-07 tainted NoSchedule (a node trainer-1 cannot use). trainer-0 is held to
    node-05 by its nodeSelector: where it could also go to node-06, the scores would tie and the scheduler pick either,
    leaving trainer-1's node and pick open."""
    objs = [o for o in map_objs() if o.get("metadata", {}).get("name") not in ("c-train", "trainer-1", "node-07")]
    big = [SEL20]
    first = pod("trainer-0", [("gpu", "claim", "c-train-0")], created="2026-11-30T08:00:00Z",
                nodeSelector={"kubernetes.io/hostname": "node-05"})  # fmt: skip
    second = pod("trainer-1", [("gpu", "claim", "c-train")], created="2026-11-30T09:00:00Z")
    taint = [{"key": "example.com/maintenance", "value": "true", "effect": "NoSchedule"}]
    return [
        *objs,
        first,
        claim("c-train-0", [request(selectors=big)]),
        second,
        claim("c-train", [request(selectors=big)]),
        node("node-07", zone="d", taints=taint),
    ]


SEL20 = 'device.capacity["gpu.example.com"].memory.compareTo(quantity("20Gi")) >= 0'
scenario(
    "explain-pod-map",
    "kubectl dra explain pod trainer-1 --map: each device marked by the first check it fails for the pod (class, "
    "request selector, in use, a pod ahead in the queue, counters, taint, node unusable, pool), the dry-run's pick.",
    "explain pod trainer-1 --map",
    pod_map_objs(),
    version="1.37",
)


PROFILE_1G = 'device.attributes["gpu.example.com"].profile == "1g.10gb"'


def request_fit_objs():
    """devices --request: node-01 has a partitionable GPU (six 1g.10gb partitions and one 4g.40gb on a 40Gi memory
    counter: six 1g would need 60Gi), one 1g allocated and one wanted by a pending pod (in flight); node-02 two whole
    GPUs of the 1g.10gb profile; node-03 only a 4g.40gb GPU (no candidate). The request: one 1g.10gb device."""
    mem = lambda g: {"counterSet": "gpu-0", "counters": {"memory": {"value": g}}}  # noqa: E731
    parts = [
        dev(f"gpu-0-1g-{i}", "10Gi", attrs={"profile": "1g.10gb"}, consumesCounters=[mem("10Gi")]) for i in range(6)
    ]
    parts.append(dev("gpu-0-4g", "40Gi", attrs={"profile": "4g.40gb"}, consumesCounters=[mem("40Gi")]))
    waiting = pod("notebook-0", [("gpu", "claim", "nb-0")])
    waiting["metadata"]["creationTimestamp"] = "2026-11-01T00:00:00Z"
    return [
        claim("c-1g", [request(selectors=[PROFILE_1G])], results=[("gpu", "node-01", "gpu-0-1g-0")], reserved="web-0",
              node="node-01"),
        claim("nb-0", [request(selectors=[PROFILE_1G])]),
        waiting,
        dclass(),
        dclass("nic", 'device.driver == "net.example.com"'),
        rslice("node-01-gpus", parts, "node-01", count=2),
        counter_slice("gpu-0"),
        rslice("node-02-gpus", [dev(f"gpu-{i}", "10Gi", attrs={"profile": "1g.10gb"}) for i in (1, 2)], "node-02"),
        rslice("node-03-gpus", [dev("gpu-9", "40Gi", attrs={"profile": "4g.40gb"})], "node-03"),
        *NODES,
        node("node-03", zone="c"),
    ]  # fmt: skip


def request_file(ns):
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "mig-1g", "namespace": ns},
        "spec": {"spec": {"devices": {"requests": [request(selectors=[PROFILE_1G])]}}},
    }


scenario(
    "devices-request-counters",
    "kubectl dra devices --class gpu --request FILE (a ResourceClaimTemplate in ml-prod): per node how many more "
    "1g.10gb devices fit after the allocated one and the pending pod's, and why the next does not (node-01: the "
    "memory counter runs out before the partitions do; node-02: no device left); node-03 has none.",
    "devices --class gpu --request ./request.yaml",
    request_fit_objs(),
    version="1.37",
)
SCENARIOS["devices-request-counters"]["files"] = {"request.yaml": request_file}


def _pool_status_requests():
    """Two ResourcePoolStatusRequests as kube-controller-manager leaves them: one answered for node-02's pool (its
    counts as upstream has them), one not answered yet."""

    def rq(name, pool, status=None):
        o = {
            "apiVersion": "resource.k8s.io/v1alpha3",
            "kind": "ResourcePoolStatusRequest",
            "metadata": {"name": name},
            "spec": {"driver": DRIVER, "poolName": pool},
        }
        if status is not None:
            o["status"] = status
        return o

    done = {
        "poolCount": 1,
        "pools": [
            {
                "driver": DRIVER,
                "poolName": "node-02",
                "nodeName": "node-02",
                "generation": 1,
                "resourceSliceCount": 1,
                "totalDevices": 3,
                "allocatedDevices": 2,
                "availableDevices": 0,
                "unavailableDevices": 1,
            }
        ],
        "conditions": [
            {
                "type": "Complete",
                "status": "True",
                "reason": "Calculated",
                "message": "",
                "lastTransitionTime": "2026-11-30T10:00:00Z",
            }
        ],
    }
    return [rq("node-02-gpus", "node-02", done), rq("node-01-gpus", "node-01")]


scenario(
    "devices-pool-status-requests",
    "kubectl dra devices on a cluster where ResourcePoolStatusRequests exist (alpha API, read only, never created): "
    "upstream's counts for node-02's pool beside kubectl-dra's, counted as the controller counts (both count the "
    "tainted gpu-2 unavailable and gpu-3 allocated, though its pod's kubelet reports it unhealthy: health is not "
    "upstream's unavailable), so they agree and no finding is raised; and a request not answered yet.",
    "devices",
    inventory_objs() + _pool_status_requests(),
    version="1.37",
)


POOL_NS = "ml-team"


def _pool_count_objs():
    """node-01's pool of four GPUs (gpu-3 tainted NoSchedule by its driver), two claims of namespace ml-team holding
    gpu-0 and gpu-1 now, and a ResourcePoolStatusRequest that kube-controller-manager answered at 10:00, when
    gpu-2 was held too (a claim deleted since): upstream's 3 allocated and 0 available against 2 and 1 now."""
    taint = {"key": "maintenance", "value": "planned", "effect": "NoSchedule"}
    devs = [dev(f"gpu-{i}", "40Gi", **({"taints": [taint]} if i == 3 else {})) for i in range(4)]
    held = [
        claim(f"train-{i}", [request()], results=[("gpu", "node-01", f"gpu-{i}")], node="node-01", ns=POOL_NS)
        for i in range(2)
    ]
    rq = {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourcePoolStatusRequest",
        "metadata": {"name": "node-01-gpus", "creationTimestamp": "2026-12-07T10:00:00Z"},
        "spec": {"driver": DRIVER, "poolName": "node-01"},
        "status": {
            "poolCount": 1,
            "pools": [
                {"driver": DRIVER, "poolName": "node-01", "nodeName": "node-01", "generation": 1,
                 "resourceSliceCount": 1, "totalDevices": 4, "allocatedDevices": 3, "availableDevices": 0,
                 "unavailableDevices": 1}
            ],
            "conditions": [
                {"type": "Complete", "status": "True", "reason": "CalculationComplete",
                 "message": "Calculated status for 1 pools", "lastTransitionTime": "2026-12-07T10:00:00Z"}
            ],
        },
    }  # fmt: skip
    return [node("node-01", zone="a"), dclass(), rslice("node-01-gpus", devs, "node-01"), *held, rq]


scenario(
    "devices-pool-status-disagrees",
    "kubectl dra devices where a ResourcePoolStatusRequest answered at 10:00 counts node-01's pool otherwise than "
    "kubectl-dra counts it now (the claims in namespace ml-team): allocated 3 against 2, available 0 against 1, "
    "each named with both numbers (DRA023, a warning: exit 0); total and the tainted gpu-3 (unavailable to both) agree.",
    "devices",
    _pool_count_objs(),
    version="1.37",
)


def _claims_refused_header():
    """A dump by a user who may list ResourceClaims in namespace ml-team only: the cluster-wide list refused."""
    return {
        **_bundle_header("v1.37.2"),
        "namespace": POOL_NS,
        "gaps": [
            {"verb": "list", "resource": "resourceclaims.resource.k8s.io", "namespace": None, "reason": "forbidden",
             "message": 'resourceclaims.resource.k8s.io is forbidden: User "ml-dev" cannot list resource '
             '"resourceclaims" in API group "resource.k8s.io" at the cluster scope'}
        ],
    }  # fmt: skip


scenario(
    "devices-pool-status-claims-refused",
    "The same pool in a dump by a user who may list ResourceClaims in namespace ml-team only: kubectl-dra sees 2 "
    "of the 3 devices the ResourcePoolStatusRequest counted allocated, which is no disagreement: upstream's count "
    "bounds what is in use (DRA106, info); the inventory is incomplete (exit 2).",
    "devices",
    [_claims_refused_header(), *_pool_count_objs()],
    version="1.37",
)


def _aged(p, created):
    p["metadata"]["creationTimestamp"] = created
    return p


def scan_objs():
    """Two namespaces: a Deployment's pods (one blocked on a model nobody has), a pod allocated and running, a pod
    asking for a DRA-backed extended resource, and a pod that uses no DRA at all."""
    objs = deployment_objs()
    for o in objs:
        if o.get("kind") == "Pod":
            _aged(o, "2026-11-30T22:00:00Z")
    running = _aged(pod("trainer-0", [("gpu", "claim", "team-b-claim")], node_name="node-02"), "2026-11-29T10:00:00Z")
    running["metadata"]["namespace"] = "team-b"
    running["status"]["phase"] = "Running"
    held = claim(
        "team-b-claim", [request()], results=[("gpu", "node-02", "gpu-0")], reserved="trainer-0", node="node-02"
    )
    held["metadata"]["namespace"] = "team-b"
    held["status"]["reservedFor"][0]["uid"] = "uid-pod-trainer-0"
    ext = _aged(ext_pod("ext-0"), "2026-12-01T07:55:00Z")
    ext["metadata"]["namespace"] = "team-b"
    plain = _aged(pod("web-0", ()), "2026-12-01T07:00:00Z")
    plain["metadata"]["namespace"] = "team-b"
    del plain["spec"]["resourceClaims"]
    event_ = event(
        "ext-0", "FailedScheduling", "0/2 nodes are available: 2 cannot allocate all claims.", "2026-12-01T08:00:00Z"
    )
    event_["metadata"]["namespace"] = "team-b"
    event_["involvedObject"]["namespace"] = "team-b"
    return objs + [
        running,
        held,
        ext,
        plain,
        ext_class(),
        rslice("node-02-gpus", [dev("gpu-0", attrs={"model": "H100"})], "node-02"),
        event_,
    ]


scenario(
    "status-namespace",
    "kubectl dra status: the default namespace's DRA pods, blocked first, the Deployment named through its "
    "ReplicaSet; ages as of the dump's newest timestamp (exit 1: one pod blocked).",
    "status",
    scan_objs(),
    version="1.37",
)
scenario(
    "status-all-namespaces",
    "kubectl dra status -A -o wide: both namespaces, the extended-resource pod included and the pod without DRA "
    "left out; the node and the finding codes in the wide columns.",
    "status -A -o wide",
    scan_objs(),
    version="1.37",
)


def two_teams_objs():
    """The same pod web-0 and claim c1 in team-a and team-b: team-a's claim asks for 24Gi and fits the one 40Gi GPU,
    team-b's asks for 80Gi and cannot. Every answer must be about the namespace it was asked for."""
    objs = []
    for ns, mem in (("team-a", "24Gi"), ("team-b", "80Gi")):
        sel = f'device.capacity["{DRIVER}"].memory.compareTo(quantity("{mem}")) >= 0'
        p = pod("web-0", [("gpu", "claim", "c1")])
        c = claim("c1", [request(selectors=[sel])])
        team = [p, c]
        if ns == "team-b":
            team.append(event("web-0", "FailedScheduling", CAN, "2026-11-30T09:00:00Z"))
        for o in team:
            o["metadata"]["namespace"] = ns
            if "uid" in o["metadata"]:
                o["metadata"]["uid"] += f"-{ns}"
            if "involvedObject" in o:
                o["involvedObject"].update(namespace=ns, uid=f"uid-pod-web-0-{ns}")
        objs += team
    return objs + [dclass(), rslice("node-01-gpus", [dev("gpu-0", mem="40Gi")], "node-01"), *NODES]


scenario(
    "same-name-fits-in-team-a",
    "web-0 and its claim c1 exist in team-a and team-b; -n team-a explains team-a's, whose 24Gi request fits the "
    "40Gi GPU (exit 0), and nothing of team-b's blocked twin shows.",
    "explain pod web-0 -n team-a",
    two_teams_objs(),
)
scenario(
    "same-name-blocked-in-team-b",
    "The same input as same-name-fits-in-team-a, asked about team-b: its c1 wants 80Gi, which no device has (exit 1).",
    "explain pod web-0 -n team-b",
    two_teams_objs(),
)
scenario(
    "same-name-match-in-team-b",
    "match claim c1 -n team-b on the two-team input: team-b's 80Gi claim, every device rejected (exit 1).",
    "match claim c1 -n team-b",
    two_teams_objs(),
)
scenario(
    "status-namespace-not-in-input",
    "status without -n on a plain dump whose pods that use DRA are all in team-a and team-b: default, assumed, "
    "holds no pod, so the answer names where they are and exits 2 (a CI gate must not pass on it).",
    "status",
    two_teams_objs(),
)
scenario(
    "same-name-status-team-a",
    "status -n team-a on the two-team input: team-a's web-0 only, nothing blocked (exit 0), though team-b's web-0 is.",
    "status -n team-a",
    two_teams_objs(),
)


# Scenarios that live outside `default`: scenario name -> (namespace, how the command names it). A regression once made
# -n ignored for plain --from-file input, and no scenario noticed because every one of them was in `default`. The
# objects are written as above and then moved (every `namespace: default`, and `default/NAME` in event messages); the
# command gets `-n NS`, `--namespace NS`, or `-A` (a bare name found in the one namespace that has it). lint takes no
# namespace flag: its manifests just move. status-namespace and the tutorial stay in `default`, which they are about.
MOVED = {
    "explain-pod-map": ("gpu-lab", "-n"),
    "devices-map": ("gpu-lab", ""),
    # explain pod NAME -n NS
    "input-lacks-slices": ("ml-team", "-A"),
    "input-lacks-claims": ("ml-team", "-n"),
    "input-lacks-events": ("team-b", "-n"),
    "allocated-class-deleted": ("ml-team", "-n"),
    "running-claim-unseen": ("team-b", "-n"),
    "owner-uid-missing": ("ml-team", "-n"),
    "terminating-holder": ("ml-team", "-n"),
    "terminating-holder-status": ("ml-team", "-A"),
    "terminating-pod": ("ml-team", "-n"),
    "cordoned-node-free-devices": ("ml-team", "-n"),
    "scheduler-control-plane-taint": ("ml-team", "-n"),
    "queue-tied-room": ("gpu-test", "-n"),
    "notready-node-free-devices": ("team-b", "-A"),
    "claim-not-created": ("team-a", "-n"),
    "claim-template-missing": ("team-a", "-n"),
    "claim-missing": ("team-a", "-n"),
    "claim-being-deleted": ("team-a", "--namespace"),
    "claim-not-owned": ("team-a", "-n"),
    "device-in-use": ("ml-prod", "-n"),
    "exactcount-too-many": ("ml-prod", "-n"),
    "first-available-fallback": ("ml-prod", "-n"),
    "node-selector-excludes": ("ml-prod", "-n"),
    "cel-missing-attribute": ("ml-prod", "--namespace"),
    "taint-untolerated": ("batch", "-n"),
    "counters-exhausted": ("batch", "-n"),
    "allocatable-now": ("batch", "-n"),
    "claim-allocated-elsewhere": ("batch", "-n"),
    "pool-incomplete": ("batch", "-n"),
    "hostile-strings": ("team-a", "-n"),
    "scheduler-disagrees": ("team-a", "-n"),
    "scheduling-gated": ("team-a", "-n"),
    "binding-failed-event": ("ml-prod", "-n"),
    "extended-resource-no-device": ("ml-prod", "-n"),
    "extended-resource-in-use": ("ml-prod", "-n"),
    "extended-resource-allocated": ("ml-prod", "-n"),
    "device-unhealthy": ("batch", "-n"),
    "evicted-by-device-taint": ("batch", "-n"),
    "podgroup-claim": ("batch", "-n"),
    "pod-not-reserved": ("team-a", "-n"),
    "driver-prepare-failed": ("team-a", "-n"),
    "requests-together": ("ml-prod", "-n"),
    "allocation-failed": ("ml-prod", "-n"),
    "cel-not-evaluable": ("batch", "-n"),
    # explain pod NAME -A: the one namespace that has it
    "capacity-exhausted": ("team-a", "-A"),
    "no-usable-node": ("ml-prod", "-A"),
    "v1beta1-input": ("batch", "-A"),
    # explain pod -l
    "selector-two-pods": ("ml-prod", "-n"),
    # explain claim, match claim
    "explain-claim-allocated": ("team-a", "-n"),
    "match-unsatisfiable": ("ml-prod", "-n"),
    "no-nodes-in-dump": ("batch", "-n"),
    "no-nodes-node-local": ("team-a", "-A"),
    # explain workloads
    "workload-deployment": ("ml-prod", "-n"),
    "workload-no-pods-quota": ("batch", "-n"),
    "workload-no-pods-template-missing": ("team-a", "--namespace"),
    # status -A over ml-prod and team-b (scan_objs' default half moved), devices' holders, lint's manifests
    "status-all-namespaces": ("ml-prod", ""),
    "devices-node-holders": ("ml-prod", ""),
    "devices-request-counters": ("ml-prod", ""),
    "lint-manifests": ("team-a", ""),
}


def moved(obj, ns: str):
    """obj with every `namespace: default` and every `default/NAME` in a message in `ns` instead (but an Event of
    a Node: the events of cluster-scoped objects are stored in namespace default wherever the pod is)."""
    if isinstance(obj, dict) and obj.get("kind") == "Event" and (obj.get("involvedObject") or {}).get("kind") == "Node":
        return obj
    if isinstance(obj, dict):
        return {k: ns if k == "namespace" and v == NS else moved(v, ns) for k, v in obj.items()}
    if isinstance(obj, list):
        return [moved(v, ns) for v in obj]
    if isinstance(obj, str):
        return obj.replace(f" {NS}/", f" {ns}/")
    return obj


# What the scheduler's NodeResourcesFit reads of a node (analyze/pod/fit.py): its allocatable, and the pods bound to it.
# A file without any pod on a node cannot tell "no pods there" from "pods left out", so every node of an input runs
# the node agent (a DaemonSet's pod in a real cluster) unless the scenario sets its own.
ALLOCATABLE = {"cpu": "8", "memory": "32Gi", "ephemeral-storage": "100Gi", "pods": "110"}


def node_agent(node_name):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"node-agent-{node_name}", "namespace": "kube-system", "uid": f"uid-agent-{node_name}"},
        "spec": {
            "nodeName": node_name,
            "containers": [
                {
                    "name": "agent",
                    "image": "registry.example/agent:1",
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                }
            ],
        },
        "status": {"phase": "Running"},
    }


def with_node_status(objs: list) -> list:
    """Every Node gets an allocatable and a bound node agent, unless the scenario gave it its own."""
    bound = {(o.get("spec") or {}).get("nodeName") for o in objs if o.get("kind") == "Pod"}
    out = list(objs)
    for o in objs:
        if o.get("kind") != "Node":
            continue
        if "allocatable" not in (o.get("status") or {}):
            o.setdefault("status", {})["allocatable"] = dict(ALLOCATABLE)
        name = o["metadata"]["name"]
        if name not in bound and not o.get("noAgent"):
            out.append(node_agent(name))
        o.pop("noAgent", None)
    return out


# Input as users have it: a plain `kubectl get` dump that left one kind out. The answers that depend on the kind
# stay open (DRA104) and name what to add; those that do not are given as usual.
_TEAM = [
    pod(
        "train-0", [("gpu", "template", "gpu-tmpl")], statuses={"gpu": "train-0-gpu-x1"}, created="2026-11-30T08:00:00Z"
    ),
    claim("train-0-gpu-x1", [request()], owner_pod="train-0"),
    template("gpu-tmpl", [request()]),
]
scenario(
    "input-lacks-slices",
    "kubectl get pods,resourceclaims,resourceclaimtemplates,deviceclasses,nodes -o yaml: the ResourceSlices were "
    "left out, so whether a device is free cannot be told (not 'no ResourceSlice publishes any device').",
    "status",
    [*_TEAM, dclass(), *NODES],
)
scenario(
    "input-lacks-claims",
    "A dump without ResourceClaims: the pod's status names its generated claim, which the input lacks; not 'claim "
    "not created'.",
    "explain pod train-0",
    [_TEAM[0], _TEAM[2], dclass(), rslice("node-01-gpus", [dev("gpu-0")], "node-01"), *NODES],
)
scenario(
    "input-lacks-events",
    "A bound pod whose claim is allocated and reserved, from a dump without Events: whether the kubelet reported an "
    "error preparing the devices cannot be told (not 'waiting for the kubelet').",
    "explain pod web-0",
    [
        pod("web-0", [("gpu", "claim", "c1")], node_name="node-01"),
        claim("c1", [request()], results=[("gpu", "node-01", "gpu-0")], reserved="web-0", node="node-01"),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ],
)
scenario(
    "allocated-class-deleted",
    "A Running pod whose allocated claim's DeviceClass was deleted afterwards: nothing blocks it (the scheduler reads "
    "a class only to allocate; the kubelet prepares from the allocation), a warning for the next claim of it.",
    "explain pod web-0",
    [
        running_pod("web-0", "c1"),
        claim("c1", [request(cls="gpu-old")], results=[("gpu", "node-01", "gpu-0")], reserved="web-0", node="node-01"),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ],
)
scenario(
    "running-claim-unseen",
    "A Running pod from a dump without its ResourceClaims: it runs (the kubelet prepared its devices), not 'claim "
    "missing'.",
    "explain pod web-0",
    [running_pod("web-0", "c1"), dclass(), rslice("node-01-gpus", [dev("gpu-0")], "node-01"), *NODES],
)


def _owner_without_uid():
    c = claim("train-0-gpu-x1", [request()], owner_pod="train-0")
    del c["metadata"]["ownerReferences"][0]["uid"]
    return c


scenario(
    "owner-uid-missing",
    "A dump edited by hand: the generated claim's ownerReference has no uid (the API server always sets it). The "
    "owner is the pod of that name (DRA105 says the input was edited), not 'claim not owned by the pod'.",
    "explain pod train-0",
    [_TEAM[0], _owner_without_uid(), _TEAM[2], dclass(), rslice("node-01-gpus", [dev("gpu-0")], "node-01"), *NODES],
)


def _terminating_objs():
    """trainer-old deleted while a finalizer holds it (as `kubectl delete` leaves it), with the node's only GPU;
    trainer-new waits for that GPU."""
    old = pod("trainer-old", [("gpu", "claim", "c-old")], node_name="node-01", phase="Running")
    old["metadata"].update(
        deletionTimestamp="2026-11-30T09:00:00Z", deletionGracePeriodSeconds=30, finalizers=["example.com/keep"]
    )
    return [
        old,
        pod("trainer-new", [("gpu", "claim", "c-new")]),
        claim("c-old", [request()], results=[("gpu", "node-01", "gpu-0")], reserved="trainer-old", node="node-01"),
        claim("c-new", [request()]),
        dclass(),
        rslice("node-01-gpus", [dev("gpu-0")], "node-01"),
        *NODES,
    ]


scenario(
    "terminating-holder",
    "The only GPU is held by a pod stuck Terminating (a finalizer): the waiting pod is told the device is held by a "
    "terminating pod and what keeps such a pod, not to delete it.",
    "explain pod trainer-new",
    _terminating_objs(),
)
scenario(
    "terminating-holder-status",
    "status shows the pod being deleted as Terminating (as kubectl does) and the pod waiting for its GPU.",
    "status",
    _terminating_objs(),
)
scenario(
    "terminating-pod",
    "explain on the pod being deleted: Terminating, the devices it holds until it is gone, its finalizer (DRA613).",
    "explain pod trainer-old",
    _terminating_objs(),
)


def _cordoned_objs(not_ready: bool = False):
    """node-01 cordoned for a drain (or NotReady, tainted by the node lifecycle controller) with 6 free GPUs; node-02's
    4 GPUs taken by running pods; one pod waits for a GPU."""
    n1, n2 = node("node-01", zone="a"), node("node-02", zone="b")
    if not_ready:
        n1["spec"]["taints"] = [
            {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule", "timeAdded": "2026-11-30T08:00:00Z"}
        ]
        n1["status"] = {"conditions": [{"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown"}]}
    else:
        n1["spec"]["unschedulable"] = True
        n1["spec"]["taints"] = [
            {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": "2026-11-30T08:00:00Z"}
        ]
    objs = [
        n1,
        n2,
        dclass(),
        rslice("node-01-gpus", [dev(f"gpu-{i}") for i in range(6)], "node-01"),
        rslice("node-02-gpus", [dev(f"gpu-{i}") for i in range(4)], "node-02"),
        pod("trainer", [("gpu", "claim", "c-new")]),
        claim("c-new", [request()]),
    ]
    for i in range(4):
        objs.append(pod(f"run-{i}", [("gpu", "claim", f"c{i}")], node_name="node-02", phase="Running"))
        objs.append(
            claim(f"c{i}", [request()], results=[("gpu", "node-02", f"gpu-{i}")], reserved=f"run-{i}", node="node-02")
        )
    return objs


scenario(
    "cordoned-node-free-devices",
    "node-01 is cordoned with 6 free GPUs; node-02's 4 are taken: the free ones are on a node the pod cannot use "
    "(MISSING node, uncordon), not 'no free device: delete the pods holding it'.",
    "explain pod trainer",
    _cordoned_objs(),
)
scenario(
    "notready-node-free-devices",
    "node-01 is unreachable (its kubelet stopped reporting) with 6 free GPUs; node-02's 4 are taken.",
    "status",
    _cordoned_objs(not_ready=True),
)


def _control_plane_objs():
    cp = node("cp-01")
    cp["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] = ""
    cp["spec"]["taints"] = [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
    return [
        cp,
        *[node(f"node-0{i}") for i in (1, 2, 3)],
        dclass(),
        *[rslice(f"node-0{i}-gpus", [dev("gpu-0")], f"node-0{i}") for i in (1, 2, 3)],
        pod("trainer", [("gpu", "claim", "c1")]),
        claim("c1", [request()]),
        event(
            "trainer",
            "FailedScheduling",
            "0/4 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 3 "
            "cannot allocate all claims. preemption: 0/4 nodes are available: 4 Preemption is not helpful for "
            "scheduling.",
            "2026-11-30T09:01:00Z",
        ),
    ]


scenario(
    "scheduler-control-plane-taint",
    "A kubeadm-style cluster: the scheduler's message names the control-plane taint on the one node without devices "
    "(which the analysis checks too) and 'cannot allocate all claims' on the three GPU nodes, where the dry-run "
    "allocates: the analysis and the scheduler disagree (DRA005), not 'a filter kubectl-dra does not reproduce'.",
    "explain pod trainer",
    _control_plane_objs(),
)


def _prioritized_objs():
    """dra-example-driver's prioritized-alternatives demo just applied (demo/examples/prioritized-alternatives): two
    pods created in the same second, each with a template of one GPU as firstAvailable alternatives (pod0 falls back
    to its third, pod1 gets its first), on a node with 8 free GPUs of the latest model."""
    model = 'device.attributes["gpu.example.com"].model'

    def sub(name, expr=None):
        out = {"name": name, "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}
        if expr:
            out["selectors"] = [{"cel": {"expression": expr}}]
        return out

    prioritized = [
        sub("bleeding-edge-gpu", f'{model} == "BLEEDING-EDGE-GPU"'),
        sub("huge-gpu", 'device.capacity["gpu.example.com"].memory.compareTo(quantity("1Ti")) >= 0'),
        sub("older-gpu"),
    ]
    preferred = [sub("latest-gpu", f'{model} == "LATEST-GPU-MODEL"'), sub("older-gpu")]
    objs = [
        dclass(),
        node("node-01"),
        rslice(
            "node-01-gpus",
            [device(f"gpu-{i}", memory="80Gi", attrs={"model": "LATEST-GPU-MODEL"}) for i in range(8)],
            "node-01",
        ),
    ]
    for p, name, alts in (("pod0", "prioritized-gpu", prioritized), ("pod1", "preferred-gpu", preferred)):
        objs.append(template(name, [{"name": "gpu", "firstAvailable": alts}]))
        objs.append(
            pod(p, [("gpu", "template", name)], statuses={"gpu": f"{p}-gpu-x7k2p"}, created="2026-11-30T09:00:00Z")
        )
        c = claim(f"{p}-gpu-x7k2p", [{"name": "gpu", "firstAvailable": alts}], owner_pod=p)
        objs.append(c)
    return objs


scenario(
    "queue-tied-room",
    "dra-example-driver's prioritized-alternatives demo: two pods tied in the queue (created in the same second), "
    "each wanting one GPU, on a node with 8 free: whatever order the scheduler takes them in, both get one (the room "
    "proof), not 'pods tied in the queue are taken in an order the API does not show'.",
    "status",
    _prioritized_objs(),
)


# Scenarios whose cluster has no object of a kind the answer reads (no ResourceSlice, no ResourceClaim, no template;
# a pending pod's devices are free only if no claim holds them, so a plain dump without claims leaves them open):
# their input is a `kubectl dra dump` bundle, which records what it read, as a plain `kubectl get` dump cannot (there
# the answers that depend on a kind it lacks stay open, DRA104: the scenarios input-lacks-*).
BUNDLED = {
    "claim-missing",
    "claim-template-missing",
    "workload-no-pods-template-missing",
    "devices-driver-plugins",
    "devices-plugin-two-containers",
    "devices-request-counters",
    "driver-matches-no-node",
    "driver-not-deployed",
    "driver-publishes-nothing",
    "extended-resource-no-device",
    "extended-resource-allocatable",
    "extended-resource-device-plugin-node",
    "extended-resource-device-plugin-node-full",
    "extended-resource-init-containers",
    "workload-no-pods-quota",
    "workload-no-pods-unexplained",
    "pod-not-reserved",
    "podgroup-claim",
}


def bundle_header(objs: list) -> dict:
    """The Bundle item a dump starts with (gather/bundle.py): what it read (the driver piece's DaemonSets where the
    scenario has some), nothing refused."""
    ds = any(o.get("kind") == "DaemonSet" for o in objs)
    return {
        "apiVersion": "kubectl-dra/v1alpha1",
        "kind": "Bundle",
        "metadata": {"name": "kubectl-dra-bundle"},
        "gaps": [],
        "listed": ["daemonsets", "daemonset_events", "node_events"] if ds else [],
        "boundPods": False,
    }


def main() -> None:

    import driver_inputs  # tests/scenarios/driver_inputs.py: the kubelet's words and the driver's kubelet plugin
    import fit_inputs  # tests/scenarios/fit_inputs.py: NodeResourcesFit
    import nodealloc_inputs  # tests/scenarios/nodealloc_inputs.py: DRANodeAllocatableResources
    import preempt_inputs  # tests/scenarios/preempt_inputs.py: DefaultPreemption for the node's resources
    import queue_inputs  # tests/scenarios/queue_inputs.py: pods that compete

    queue_inputs.register(sys.modules[__name__])
    driver_inputs.register(sys.modules[__name__])
    fit_inputs.register(sys.modules[__name__])
    nodealloc_inputs.register(sys.modules[__name__])
    preempt_inputs.register(sys.modules[__name__])
    assert set(MOVED) <= set(SCENARIOS), set(MOVED) - set(SCENARIOS)
    assert BUNDLED <= set(SCENARIOS), BUNDLED - set(SCENARIOS)
    for name, sc in SCENARIOS.items():
        d = HERE / name
        d.mkdir(exist_ok=True)
        ns, flag = MOVED.get(name, (None, ""))
        if "copy" in sc:
            shutil.copyfile(sc["copy"], d / "input.yaml")
        else:
            objs = with_node_status(copy.deepcopy(sc["objs"]))
            if ns:
                objs = moved(objs, ns)
            if name in BUNDLED:
                objs = [bundle_header(objs), *objs]
            doc = {"apiVersion": "v1", "kind": "List", "items": objs}
            (d / "input.yaml").write_text(yaml.safe_dump(doc, sort_keys=False, width=120))
        for fname, make in (sc.get("files") or {}).items():  # files the command names as ./FILE
            (d / fname).write_text(yaml.safe_dump(make(ns or NS), sort_keys=False, width=120))
        cmd = sc["cmd"] + {"": "", "-A": " -A", "-n": f" -n {ns}", "--namespace": f" --namespace {ns}"}[flag]
        cmd += f" --kubernetes-version {sc['version']}" if sc.get("version") else ""
        (d / "cmd").write_text(cmd + "\n")
        (d / "README.md").write_text(
            f"# {name}\n\n{sc['doc']}\n\nCommand: `kubectl dra {cmd} --from-file input.yaml`\n"
        )


if __name__ == "__main__":
    main()
