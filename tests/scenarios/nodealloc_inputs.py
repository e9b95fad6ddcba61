"""Node-allocatable resources of DRA devices (DRANodeAllocatableResources, analyze/pod/nodealloc.py): a device that
maps node cpu makes the pod that gets it ask for that much more of the node. Registered into make_inputs' tables by
make_inputs.main()."""

from __future__ import annotations

import copy

GATE = "--feature-gates DRANodeAllocatableResources=true"


def register(m) -> None:
    """m: the make_inputs module (its helpers and SCENARIOS)."""

    def trainer():
        """One container asking for 1 cpu, naming the claim."""
        app = {"name": "app", "image": "registry.example/app:1"}
        app["resources"] = {"requests": {"cpu": "1"}, "claims": [{"name": "gpu"}]}
        return m.pod("trainer-0", [("gpu", "claim", "trainer-0-gpu")], containers=[app])

    def bound(name, node_name):
        """A running pod on node_name: 2 cpu of its own, and 2 more its device maps (its status says so, as the
        scheduler patched it at binding)."""
        app = {"name": "app", "image": "registry.example/app:1"}
        app["resources"] = {"requests": {"cpu": "2"}, "claims": [{"name": "gpu"}]}
        p = m.pod(name, [("gpu", "claim", f"{name}-gpu")], node_name=node_name, phase="Running", ns="batch")
        p["spec"]["containers"] = [app]
        p["status"]["nodeAllocatableResourceClaimStatuses"] = [
            {"resourceClaimName": "gpu", "containers": ["app"], "mapping": [{"name": "cpu", "quantity": "2"}]}
        ]
        return p

    # A shareable device whose cores the claims consume (DRAConsumableCapacity, on in 1.37): each core it gives a
    # claim is a cpu of the node (capacityKey, the multiplier 1 when unset).
    mapped = m.dev(
        "gpu-0",
        allowMultipleAllocations=True,
        capacity={"cores": {"value": "8"}},
        nodeAllocatableResources={"cpu": {"mapping": {"capacityKey": "cores"}}},
    )
    objs = [
        trainer(),
        m.claim("trainer-0-gpu", [m.request(capacity={"requests": {"cores": "4"}})]),
        m.dclass(),
        m.rslice("node-01-gpus", [mapped], "node-01"),
        bound("infer-0", "node-01"),
        *copy.deepcopy(m.NODES),
    ]
    m.scenario(
        "nodealloc-cpu-blocks",
        "DRANodeAllocatableResources on (1.37): the only GPU, on node-01, maps each core a claim consumes to a cpu "
        "(capacityKey); the pod's claim asks for 4 cores. node-01 has "
        "8 cpu; a running pod holds 2 of its own and 2 its device maps (status.nodeAllocatableResourceClaimStatuses), "
        "so 4 are left; the pod asks for 1, plus the 4 of the device: the DynamicResources Filter rejects the only "
        "node where the claims fit (DRA504, exit 1).",
        f"explain pod trainer-0 {GATE}",
        objs,
    )
    m.scenario(
        "nodealloc-cpu-gate-off",
        "nodealloc-cpu-blocks's input without the gate (off by default): the device's nodeAllocatableResources is "
        "not modelled then, as before: DRA016, undetermined (exit 2).",
        "explain pod trainer-0",
        copy.deepcopy(objs),
    )
    m.scenario(
        "nodealloc-cpu-1-36",
        "nodealloc-cpu-blocks's input at 1.36 with the gate on: 1.36 has an earlier shape "
        "(nodeAllocatableResourceMappings, and a resources map in the pod status), not modelled: DRA016 for the slice, "
        "DRA506 for the room the bound pod's status leaves, undetermined (exit 2).",
        f"explain pod trainer-0 {GATE}",
        copy.deepcopy(objs),
        version="1.36",
    )
    plain = m.rslice("node-02-gpus", [m.dev("gpu-0")], "node-02")
    m.scenario(
        "nodealloc-cpu-elsewhere",
        "nodealloc-cpu-blocks with a GPU that maps nothing on node-02: node-01 is dropped for its cpu, the pod fits "
        "on node-02 (DRA505, exit 0).",
        f"explain pod trainer-0 {GATE}",
        [*copy.deepcopy(objs), plain],
    )
