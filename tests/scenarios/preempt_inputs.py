"""DefaultPreemption's scenarios (analyze/pod/preempt.py): the claims fit only on nodes without room for the pod's cpu,
and pods of lower priority hold it. Registered into make_inputs' tables by make_inputs.main(). The pod asking is in
namespace ml-team; the pods holding the cpu run in batch, as in a shared cluster (node-01 and node-02 have 8 cpu)."""

from __future__ import annotations

import copy

NS = "ml-team"


def register(m) -> None:
    """m: the make_inputs module (its helpers, SCENARIOS and MOVED)."""
    nodes = [*m.NODES, m.node("node-03", zone="c")]

    def trainer(name="trainer-0", priority=10000, **spec):
        p = m.pod(name, [("gpu", "claim", f"{name}-gpu")], priorityClassName="high", priority=priority, **spec)
        p["spec"]["containers"] = [
            {"name": "app", "image": "registry.example/app:1", "resources": {"requests": {"cpu": "2"}}}
        ]
        return p

    def held(name, node_name, cpu, priority, started, cls="batch-low", **more):
        p = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "batch", "uid": f"uid-pod-{name}", **more},
            "spec": {
                "nodeName": node_name,
                "priorityClassName": cls,
                "priority": priority,
                "containers": [
                    {"name": "etl", "image": "registry.example/etl:1", "resources": {"requests": {"cpu": cpu}}}
                ],
            },
            "status": {"phase": "Running", "startTime": started},
        }
        return p

    tmpl = m.claim("trainer-0-gpu", [m.request()])
    gpus = [
        m.rslice("node-01-gpus", [m.dev("gpu-0")], "node-01"),
        m.rslice("node-02-gpus", [m.dev("gpu-0")], "node-02"),
    ]
    # node-01: three pods of lower priority hold 8 of its 8 cpu; without etl-big (6.5) the trainer's 2 fit, so the
    # reprieve keeps etl-old (priority 100, started first) and etl-small (priority 50) and evicts etl-big only.
    # node-02: a pod of higher priority (20000) holds 7 cpu: never a victim, so node-02 is no candidate.
    holders = [
        held("etl-old", "node-01", "1", 100, "2026-11-30T08:00:00Z"),
        held("etl-big", "node-01", "6500m", 100, "2026-12-01T08:00:00Z"),
        held("etl-small", "node-01", "500m", 50, "2026-12-01T09:00:00Z"),
        held("serving", "node-02", "7", 20000, "2026-11-30T08:00:00Z", cls="critical"),
    ]
    said = m.event(
        "trainer-0",
        "FailedScheduling",
        "0/3 nodes are available: 2 Insufficient cpu, 1 cannot allocate all claims.",
        "2026-12-01T10:00:00Z",
    )
    world = [tmpl, m.dclass(), *gpus, *holders, *copy.deepcopy(nodes)]
    m.scenario(
        "preempt-cpu-lower-priority",
        "The GPUs are on node-01 and node-02, and neither has 2 cpu free. node-01's cpu is held by pods of lower "
        "priority: kube-scheduler's DefaultPreemption evicts the fewest of them (etl-big; the more important etl-old "
        "and the cheap etl-small are reprieved) and places the pod there once it is gone (DRA507, OK, exit 0), not "
        "blocked. node-02's holder has a higher priority: no candidate.",
        "explain pod trainer-0",
        [trainer(), said, *world],
    )
    m.scenario(
        "preempt-cpu-status",
        "status on preempt-cpu-lower-priority's cluster: the pod's row is OK (placed after preemption), as explain pod "
        "says.",
        "status",
        [trainer(), said, *world],
    )
    m.scenario(
        "preempt-never",
        "As preempt-cpu-lower-priority, but the pod's preemptionPolicy is Never: the scheduler does not preempt, so it "
        "is blocked at the node (DRA504, exit 1) and the message says why preemption does not help.",
        "explain pod trainer-0",
        [trainer(preemptionPolicy="Never"), said, *world],
    )
    m.scenario(
        "preempt-equal-priority",
        "As preempt-cpu-lower-priority, but the pod's priority is 100, the same as etl-old and etl-big: only etl-small "
        "(50) may go, and its 0.5 cpu is not enough: blocked (DRA504, exit 1).",
        "explain pod trainer-0",
        [trainer(priority=100), said, *world],
    )
    preempted_word = m.event(
        "trainer-0",
        "FailedScheduling",
        "0/3 nodes are available: 2 Insufficient cpu, 1 cannot allocate all claims. preemption: found a potential "
        "placement for pod on node node-01, preempting 1 victims",
        "2026-12-01T10:00:00Z",
    )
    m.scenario(
        "preempt-scheduler-disagrees",
        "As preempt-equal-priority (no victim makes room: DRA504), but the scheduler's event says it found a placement "
        "by preemption: the two disagree, so the answer is open (DRA005, exit 2), never Blocked.",
        "explain pod trainer-0",
        [trainer(priority=100), preempted_word, *world],
    )
    urgent = m.no_dra_pod("etl-urgent", "1", priorityClassName="critical", priority=50000)
    m.scenario(
        "preempt-another-pod-may-free-room",
        "As preempt-never (the pod itself never preempts: DRA504), but a pending pod without DRA of priority 50000 may "
        "preempt the pods of lower priority on node-01 for its own cpu, and the room that frees may then go to this "
        "pod (the real scheduler did so in the queue agreement suite, seed 28): undetermined (DRA431, exit 2), never "
        "Blocked.",
        "status",
        [trainer(preemptionPolicy="Never"), urgent, said, *world],
    )
    # The pending pods that outrank the pods bound on node-01 and node-02 cannot preempt there: etl-huge asks more cpu
    # than either node has (SelectVictimsOnNode: it does not fit with every pod of lower priority gone), and
    # trainer-pair's claim asks two GPUs where each node has one (the DynamicResources Filter fails there whatever is
    # allocated: UnschedulableAndUnresolvable, never a preemption candidate)
    huge = m.no_dra_pod("etl-huge", "9", priorityClassName="critical", priority=50000)
    pair = trainer("trainer-pair", priority=50000)
    m.scenario(
        "preempt-others-cannot-preempt-there",
        "As preempt-another-pod-may-free-room, but the pending pods of a higher priority cannot preempt on node-01 or "
        "node-02: etl-huge asks 9 cpu of nodes that have 8, and trainer-pair's claim asks two GPUs of nodes that have "
        "one. No room is freed there, and the pod that never preempts stays blocked (DRA504, exit 1), not "
        "undetermined.",
        "status",
        [
            trainer(preemptionPolicy="Never"),
            huge,
            pair,
            m.claim("trainer-pair-gpu", [m.request(count=2)]),
            said,
            *world,
        ],
    )
    # etl-urgent is the first pod of the queue and fits node-03 (no GPU, nothing but a small agent bound there: the
    # bundle lists every node's pods) with every pod that may be placed before it there: none. It never fails every
    # node, so it never preempts (PostFilter runs only then).
    agent = held("agent", "node-03", "100m", 100000, "2026-11-30T08:00:00Z", cls="critical")
    header = {
        "apiVersion": "kubectl-dra/v1alpha1", "kind": "Bundle", "metadata": {"name": "kubectl-dra-bundle"},
        "namespace": NS, "observedAt": "2026-12-01T10:30:00Z", "gaps": [], "listed": [], "boundPods": True,
    }  # fmt: skip
    m.scenario(
        "preempt-another-pod-fits-elsewhere",
        "As preempt-another-pod-may-free-room, but node-03 has room for etl-urgent, the first pod of the queue, and "
        "the input lists every node's pods: it is placed there at its first attempt and never preempts, so no room "
        "is freed on node-01 or node-02, and the pod that never preempts stays blocked (DRA504, exit 1).",
        "status",
        [header, trainer(preemptionPolicy="Never"), urgent, said, agent, *world],
    )
    waiting = copy.deepcopy(holders)
    waiting[1]["metadata"]["deletionTimestamp"] = "2026-12-01T10:00:05Z"
    waiting[1]["status"]["conditions"] = [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler", "message": "preempted"}
    ]
    nominated = trainer()
    nominated["status"]["nominatedNodeName"] = "node-01"
    m.scenario(
        "preempt-waiting-for-victims",
        "The pod already preempted etl-big on node-01 (nominated there; etl-big is terminating with "
        "DisruptionTarget PreemptionByScheduler): it waits for it and is placed there once it is gone (DRA507, exit 0).",
        "explain pod trainer-0",
        [nominated, said, tmpl, m.dclass(), *gpus, *waiting, *copy.deepcopy(nodes)],
    )
    grouped = copy.deepcopy(holders)
    grouped[1]["spec"]["schedulingGroup"] = {"podGroupName": "etl"}
    m.scenario(
        "preempt-victim-in-pod-group",
        "etl-big belongs to a PodGroup (the API server keeps spec.schedulingGroup only with GenericWorkload on): the scheduler would evict its whole group, which "
        "kubectl-dra does not model, so the answer is open (DRA508, exit 2).",
        "explain pod trainer-0",
        [trainer(), said, tmpl, m.dclass(), *gpus, *grouped, *copy.deepcopy(nodes)],
    )
    # Two candidate nodes: node-01's victim has priority 500, node-02's 100: the scheduler picks node-02 (the lowest
    # highest-priority victim), whatever the search order.
    two = [
        held("etl-a", "node-01", "7", 500, "2026-11-30T08:00:00Z"),
        held("etl-b", "node-02", "7", 100, "2026-11-30T08:00:00Z"),
    ]
    m.scenario(
        "preempt-picks-node",
        "Both GPU nodes lack cpu, each held by one pod of lower priority (500 on node-01, 100 on node-02): the "
        "scheduler nominates node-02, whose victim has the lower priority (DRA507, exit 0); with PodDisruptionBudgets "
        "unread the message says another node may be picked.",
        "explain pod trainer-0",
        [trainer(), said, tmpl, m.dclass(), *gpus, *two, *copy.deepcopy(nodes)],
    )
    # A tie: each node's victim has priority 100, the same requests and start time: pickOneNodeForPreemption's
    # criteria cannot tell node-01 from node-02, and it takes the first of a Go map (the queue agreement suite's
    # seed 11: the real scheduler nominated node-1 in one run and node-0 in another).
    tie = [
        held("etl-a", "node-01", "7", 100, "2026-11-30T08:00:00Z"),
        held("etl-b", "node-02", "7", 100, "2026-11-30T08:00:00Z"),
    ]
    m.scenario(
        "preempt-tie-between-nodes",
        "Both GPU nodes lack cpu, each held by one pod of priority 100 started at the same time with the same "
        "requests: the nodes tie on every criterion DefaultPreemption compares, so the scheduler nominates one of "
        "node-01 and node-02, which one is not fixed (the real scheduler nominated either, in the queue agreement "
        "suite's seed 11): DRA507 and the node piece name both. The queue dry-runs each nomination (queue/ties.py): "
        "alone in the queue, the pod is placed in both, so it is OK (exit 0) on one of the two nodes.",
        "explain pod trainer-0",
        [trainer(), said, tmpl, m.dclass(), *gpus, *tie, *copy.deepcopy(nodes)],
    )
    # The queue: trainer-0 (10000) preempts etl-big on node-01; etl-big holds node-01's gpu-1 through its claim.
    # trainer-1 (5000) behind it may use node-01, whose room and gpu-1 the preemption frees: open (DRA431).
    # notebook (priority 0) is blocked alone for cpu on node-01 (DRA504): the room freed may go to it: open too.
    etl_claim = m.claim("etl-big-gpu", [m.request()], ns="batch")
    etl_claim["status"] = {
        "allocation": {
            "devices": {"results": [{"request": "gpu", "driver": m.DRIVER, "pool": "node-01", "device": "gpu-1"}]},
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-01"]}]}
                ]
            },
        },
        "reservedFor": [{"resource": "pods", "name": "etl-big", "uid": "uid-pod-etl-big"}],
    }
    busy = copy.deepcopy(holders)
    busy[1]["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "etl-big-gpu"}]
    busy[1]["status"]["resourceClaimStatuses"] = []
    slices2 = [
        m.rslice("node-01-gpus", [m.dev("gpu-0"), m.dev("gpu-1")], "node-01"),
        m.rslice("node-02-gpus", [m.dev("gpu-0")], "node-02"),
    ]
    second = trainer("trainer-1", priority=5000)
    second["metadata"]["creationTimestamp"] = "2026-12-01T09:30:00Z"
    nb = trainer("notebook", priority=0)
    nb["spec"].pop("priorityClassName")
    queue_objs = [
        trainer(),
        m.claim("trainer-1-gpu", [m.request()]),
        second,
        m.claim("notebook-gpu", [m.request()]),
        nb,
        tmpl,
        m.dclass(),
        *slices2,
        etl_claim,
        *busy,
        *copy.deepcopy(nodes),
    ]
    m.scenario(
        "preempt-queue-status",
        "status over a queue with a preemption: trainer-0 preempts etl-big on node-01; trainer-1, behind it, may use "
        "node-01, whose cpu and gpu-1 (held by etl-big's claim) the preemption frees, and notebook, blocked alone for "
        "cpu there, may get that room: both undetermined (DRA431, exit 2), never blocked. trainer-0 is undetermined "
        "too: its nomination holds node-01's cpu, not its GPUs, and trainer-1 fits there beside it and may take "
        "gpu-0 while etl-big terminates (the queue agreement suite's seed 44: the preemptor stayed Pending).",
        "status",
        queue_objs,
    )
    # The queue agreement suite's seeds 8 and 13: the pod never preempts; urgent (no DRA, 50000, node-02 only) is
    # ahead and takes node-02's last free cpu; node-01 is full of pods of priority 50-100, and etl-new (no DRA, 1000,
    # behind the trainer) preempts there at its turn: the room it frees goes to the trainer (of a higher priority
    # than etl-new, so the nomination does not hold it against it). Without Freers this was Blocked (DRA430).
    roomy = [
        *copy.deepcopy(holders[:3]),
        held("serving", "node-02", "6", 20000, "2026-11-30T08:00:00Z", cls="critical"),
    ]
    ahead = m.no_dra_pod(
        "urgent", "1", "app", "registry.example/app:1", priorityClassName="critical", priority=50000,
        nodeSelector={"kubernetes.io/hostname": "node-02"},
    )  # fmt: skip
    behind = m.no_dra_pod("etl-new", "3", priorityClassName="batch-mid", priority=1000)
    behind["metadata"]["creationTimestamp"] = "2026-12-01T09:59:00Z"
    m.scenario(
        "preempt-room-freed-by-another",
        "The trainer never preempts (preemptionPolicy Never). urgent, ahead of it and bound for node-02 only, takes "
        "node-02's last free cpu; node-01 is full of pods of priority 50-100, and etl-new (priority 1000, behind the "
        "trainer, no DRA) may preempt them at its turn: the room that frees may go to the trainer, whose priority is "
        "higher than etl-new's (the real scheduler did so in the queue agreement suite, seeds 8 and 13): undetermined "
        "(DRA431, exit 2), never Blocked for devices taken by the pods ahead.",
        "status",
        [
            trainer(preemptionPolicy="Never", priority=5000),
            ahead,
            behind,
            tmpl,
            m.dclass(),
            *gpus,
            *roomy,
            *copy.deepcopy(nodes),
        ],
    )
    for name in (
        "preempt-others-cannot-preempt-there",
        "preempt-another-pod-fits-elsewhere",
        "preempt-room-freed-by-another",
        "preempt-another-pod-may-free-room",
        "preempt-scheduler-disagrees",
        "preempt-picks-node",
        "preempt-tie-between-nodes",
        "preempt-queue-status",
        "preempt-cpu-lower-priority",
        "preempt-cpu-status",
        "preempt-never",
        "preempt-equal-priority",
        "preempt-waiting-for-victims",
        "preempt-victim-in-pod-group",
    ):
        m.MOVED[name] = (NS, "-n")
