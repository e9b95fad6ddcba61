"""NodeResourcesFit's scenarios (the pod's cpu, memory and pods against what the node has left, analyze/pod/fit.py),
registered into make_inputs' tables by make_inputs.main(). The pods are in namespace ml-team; the pods that hold a
node's cpu run in another one (batch), as in a shared cluster."""

from __future__ import annotations

import copy

NS = "ml-team"


def register(m) -> None:
    """m: the make_inputs module (its helpers, SCENARIOS and MOVED)."""
    nodes = [*m.NODES, m.node("node-03", zone="c")]

    def trainer(**spec):
        """Requests 2 cpu: app 1500m + the sidecar's 250m (max with the init container's 1 + 250m) + 250m overhead."""
        p = m.pod("trainer-0", [("gpu", "claim", "trainer-0-gpu")], **spec)
        p["spec"]["initContainers"] = [
            {
                "name": "proxy",
                "image": "registry.example/proxy:1",
                "restartPolicy": "Always",
                "resources": {"requests": {"cpu": "250m", "memory": "128Mi"}},
            },
            {"name": "fetch", "image": "registry.example/fetch:1", "resources": {"requests": {"cpu": "1"}}},
        ]
        p["spec"]["containers"] = [
            {
                "name": "app",
                "image": "registry.example/app:1",
                "resources": {"requests": {"cpu": "1500m", "memory": "8Gi"}},
            }
        ]
        p["spec"]["overhead"] = {"cpu": "250m"}
        return p

    def hog(name, node_name, cpu, phase="Running"):
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "batch", "uid": f"uid-pod-{name}"},
            "spec": {
                "nodeName": node_name,
                "containers": [
                    {"name": "etl", "image": "registry.example/etl:1", "resources": {"requests": {"cpu": cpu}}}
                ],
            },
            "status": {"phase": phase},
        }

    base = [trainer(), m.claim("trainer-0-gpu", [m.request()]), m.dclass()]
    gpu01 = m.rslice("node-01-gpus", [m.dev("gpu-0")], "node-01")
    gpu02 = m.rslice("node-02-gpus", [m.dev("gpu-0")], "node-02")
    # 7.5 of node-01's 8 cpu taken by a running pod; a finished one (Succeeded) holds nothing.
    hogs = [hog("etl-0", "node-01", "7500m"), hog("etl-old", "node-01", "8", phase="Succeeded")]
    said = m.event(
        "trainer-0",
        "FailedScheduling",
        "0/3 nodes are available: 1 Insufficient cpu, 2 cannot allocate all claims.",
        "2026-12-01T09:00:00Z",
    )
    m.scenario(
        "node-cpu-exhausted",
        "The only GPU is on node-01, and the pods bound there hold 7.5 of its 8 cpu; the pod requests 2 (a "
        "sidecar, an init container and overhead count). NodeResourcesFit rejects the only node where the claims "
        "fit, as the scheduler's event says: blocked at the node (DRA504, exit 1).",
        "explain pod trainer-0",
        [*base, gpu01, *hogs, said, *copy.deepcopy(nodes)],
    )
    m.scenario(
        "node-cpu-exhausted-status",
        "status on node-cpu-exhausted's cluster: the pod's row is blocked at the node (DRA504, exit 1), not OK.",
        "status",
        [*base, gpu01, *hogs, said, *copy.deepcopy(nodes)],
    )
    m.scenario(
        "node-cpu-exhausted-other-node-fits",
        "The claims fit on node-01 and node-02; node-01 has no cpu left for the pod, node-02 has: OK on node-02, "
        "and an info finding names node-01 as dropped for resources (DRA505, exit 0).",
        "explain pod trainer-0",
        [*base, gpu01, gpu02, *hogs, *copy.deepcopy(nodes)],
    )
    unknown = copy.deepcopy(nodes)
    unknown[0]["noAgent"] = True  # the input has no pod bound to node-01
    m.scenario(
        "node-fit-pods-unknown",
        "The only GPU is on node-01, but the input has no pod bound to node-01: it cannot tell an empty node from "
        "pods left out of the dump, so whether the pod's 2 cpu fit is unknown (DRA506, exit 2), never OK.",
        "explain pod trainer-0",
        [*base, gpu01, *unknown],
    )
    big = copy.deepcopy(base)
    big[0]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "12"
    m.scenario(
        "node-cpu-request-exceeds-node",
        "The pod alone requests more cpu (12.5) than node-01 has (8): rejected for certain even though the input "
        "has no pod bound to node-01 (DRA504, exit 1).",
        "explain pod trainer-0",
        [*big, gpu01, *copy.deepcopy(unknown)],
    )
    m.scenario(
        "scheduler-filter-not-modelled",
        "The claims fit on node-01 and the pod's requests fit there, but the scheduler's event rejects one node "
        "for pod anti-affinity, which kubectl-dra does not model: undetermined with the scheduler's words (DRA022, "
        "exit 2), not OK.",
        "explain pod trainer-0",
        [
            *base,
            gpu01,
            m.event(
                "trainer-0",
                "FailedScheduling",
                "0/3 nodes are available: 1 node(s) didn't match pod anti-affinity rules, "
                "2 cannot allocate all claims.",
                "2026-12-01T09:00:00Z",
            ),
            *copy.deepcopy(nodes),
        ],
    )
    for name in (
        "node-cpu-exhausted",
        "node-cpu-exhausted-status",
        "node-cpu-exhausted-other-node-fits",
        "node-fit-pods-unknown",
        "node-cpu-request-exceeds-node",
        "scheduler-filter-not-modelled",
    ):
        m.MOVED[name] = (NS, "-n")
