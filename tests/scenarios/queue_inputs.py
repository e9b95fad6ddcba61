"""The queue's scenarios (pending pods that compete for devices, analyze/queue/), registered into make_inputs'
tables by make_inputs.main(): `python tests/scenarios/make_inputs.py` writes them with the others."""

from __future__ import annotations

import copy


def register(m) -> None:
    """m: the make_inputs module (its helpers, SCENARIOS and MOVED)."""
    gpu_node_01 = m.rslice("node-01-gpus", [m.dev("gpu-0")], "node-01")
    gpu_node_02 = m.rslice("node-02-gpus", [m.dev("gpu-0")], "node-02", pool="node-02")

    def at(p, created, priority=None, gates=None):
        p = copy.deepcopy(p)
        p["metadata"]["creationTimestamp"] = created
        if priority is not None:
            p["spec"]["priority"] = priority
            p["spec"]["priorityClassName"] = "high" if priority else "low"
        if gates:
            p["spec"]["schedulingGates"] = [{"name": g} for g in gates]
        return p

    def own(name, created, **kw):
        """A pod with its own claim NAME-gpu (one GPU)."""
        return [
            at(m.pod(name, [("gpu", "claim", f"{name}-gpu")]), created, **kw),
            m.claim(f"{name}-gpu", [m.request()]),
        ]

    two = [
        *own("p0", "2026-12-01T10:00:00Z"),
        *own("p1", "2026-12-01T10:02:00Z"),
        m.dclass(),
        gpu_node_01,
        *m.NODES,
    ]
    m.scenario(
        "queue-two-pods-one-gpu",
        "status: two pending pods, each with its own claim, one free GPU, no scheduler attempt yet. p0 was created "
        "first: the GPU goes to it, p1 is blocked by it (DRA430, exit 1). Judged alone, both would be OK.",
        "status",
        two,
    )
    m.scenario(
        "queue-two-pods-explain",
        "explain pod p1 on the same input: the device it would get alone, and the pod ahead it goes to (exit 1).",
        "explain pod p1",
        two,
    )
    m.scenario(
        "queue-alone",
        "status --alone on the same input: each pod judged as if it were the only one waiting, both OK (exit 0).",
        "status --alone",
        two,
    )
    m.scenario(
        "queue-priority",
        "explain pod low: a pod of priority 0 created first and one of priority 1000 created later want the one "
        "GPU; the scheduler takes the higher priority first, so low is blocked by high (exit 1).",
        "explain pod low",
        [
            *own("low", "2026-12-01T10:00:00Z", priority=0),
            *own("high", "2026-12-01T10:05:00Z", priority=1000),
            m.dclass(),
            gpu_node_01,
            *m.NODES,
        ],
    )
    m.scenario(
        "queue-gated",
        "status: two pods whose scheduling gates are still on want the one GPU. Both are blocked by their gates "
        "(DRA006); once ungated in creation order, g0 gets the GPU (DRA432) and g1 finds none left (DRA430).",
        "status",
        [
            *own("g0", "2026-12-01T10:00:00Z", gates=["example.com/admission"]),
            *own("g1", "2026-12-01T10:00:30Z", gates=["example.com/admission"]),
            m.dclass(),
            gpu_node_01,
            *m.NODES,
        ],
    )
    m.scenario(
        "queue-tie-shortfall",
        "status: three identical pods created in the same second want the two GPUs (one per node). Two get one, "
        "but which two is the scheduler's order: each pod is undetermined (DRA431, exit 2), and the shortfall "
        "is certain (stderr: `queue: 2 of the 3 ...`).",
        "status",
        [
            *own("t0", "2026-12-01T10:00:00Z"),
            *own("t1", "2026-12-01T10:00:00Z"),
            *own("t2", "2026-12-01T10:00:00Z"),
            m.dclass(),
            gpu_node_01,
            gpu_node_02,
            *m.NODES,
        ],
    )
    zone_a = at(m.pod("pinned", [("gpu", "claim", "pinned-gpu")], nodeSelector={"zone": "a"}), "2026-12-01T10:01:00Z")
    m.scenario(
        "queue-choice-undetermined",
        "explain pod pinned: `anywhere` (created first) may go to node-01 or node-02, and the scheduler's scores "
        "decide which; `pinned` can only use node-01, so whether it gets a GPU is undetermined (DRA431, exit 2).",
        "explain pod pinned",
        [
            *own("anywhere", "2026-12-01T10:00:00Z"),
            zone_a,
            m.claim("pinned-gpu", [m.request()]),
            m.dclass(),
            gpu_node_01,
            gpu_node_02,
            *m.NODES,
        ],
    )
    big = m.claim("big-gpu", [m.request(selectors=[m.SEL24])])
    m.scenario(
        "queue-count-proof",
        "status: `first` and `big` (a different request) compete for GPUs on three nodes. Wherever `first` goes, "
        "`big` fits on more nodes than there are pods ahead of it: both OK, proven (exit 0).",
        "status",
        [
            *own("first", "2026-12-01T10:00:00Z"),
            at(m.pod("big", [("gpu", "claim", "big-gpu")]), "2026-12-01T10:01:00Z"),
            big,
            m.dclass(),
            gpu_node_01,
            gpu_node_02,
            m.rslice("node-03-gpus", [m.dev("gpu-0")], "node-03", pool="node-03"),
            *m.NODES,
            m.node("node-03", zone="c"),
        ],
    )
    m.scenario(
        "queue-deployment-8-on-4",
        "status: a Deployment scaled to 8 on four nodes with one GPU each; its pods' claims come from a template. "
        "Four pods created first get the four GPUs, the four created a second later are blocked (exit 1); the "
        "count is certain whatever node each pod goes to.",
        "status",
        _deployment(m),
    )
    m.scenario(
        "queue-replicas",
        "explain deploy/inference --replicas 3: two of its pods run (node-01, node-02), two more GPUs are free "
        "(node-03, node-04). Two more pods fit, one on each; the third does not, and why is the allocator's: every "
        "GPU is allocated, two of them to the copies placed before it (exit 1).",
        "explain deploy/inference --replicas 3",
        _deployment(m, pods=2, running=2),
    )
    m.scenario(
        "queue-replicas-input-lacks-claims",
        "explain deploy/inference --replicas 3 from a kubectl get that left the ResourceClaims out: the GPUs its two "
        "running pods hold look free, so 'all 3 fit' would be a guess: open, naming the kind to add (DRA104, exit 2).",
        "explain deploy/inference --replicas 3",
        [o for o in _deployment(m, pods=2, running=2) if o.get("kind") != "ResourceClaim"],
    )
    m.scenario(
        "queue-replicas-input-lacks-templates",
        "The same from a kubectl get that left the ResourceClaimTemplates out: what claim a new pod gets cannot be "
        "told, so not 'claim not created' nor 'none fits': open (DRA104, exit 2).",
        "explain deploy/inference --replicas 3",
        [o for o in _deployment(m, pods=2, running=2) if o.get("kind") != "ResourceClaimTemplate"],
    )
    m.scenario(
        "queue-replicas-fit",
        "explain deploy/inference --replicas 2 on the same cluster: both fit (exit 0).",
        "explain deploy/inference --replicas 2",
        _deployment(m, pods=2, running=2),
    )
    batch = at(m.pod("batch", []), "2026-12-01T09:00:00Z")
    batch["spec"]["containers"] = [{"name": "job", "image": "registry.example/batch:1",
                                    "resources": {"requests": {"cpu": "6"}}}]  # fmt: skip
    spare = m.node("node-05", {}, zone="a")  # room for batch's cpu, no GPU
    m.scenario(
        "queue-replicas-open",
        "explain deploy/inference --replicas 3 when its pods ask for 4 cpu and a pending pod without devices (batch, "
        "6 cpu, created earlier) is ahead of the copies: the first copy fits for certain (two nodes with a free GPU, "
        "one pod ahead), for the second it depends on where batch goes: on node-05, which has no GPU, both copies "
        "fit; on node-03 or node-04, the second finds no node with a GPU and 4 cpu left (undetermined, exit 2).",
        "explain deploy/inference --replicas 3",
        [*_deployment(m, pods=2, running=2, cpu="4"), batch, spare],
    )
    m.scenario(
        "queue-replicas-batch-takes-the-room",
        "explain deploy/inference --replicas 3 as in queue-replicas-open, without node-05: batch (6 cpu, ahead of "
        "the copies) goes to node-03 or node-04, whichever the scheduler's scores pick, and the first copy to the "
        "other one; in either order the second copy finds the only GPU left on the node whose cpu batch took, and "
        "no pod of a lower priority to preempt (exit 1: 1 of 3 fit).",
        "explain deploy/inference --replicas 3",
        [*_deployment(m, pods=2, running=2, cpu="4"), batch],
    )
    notebook_ahead = [
        *_deployment(m, pods=2, running=2, cpu="4"),
        batch,
        at(m.pod("notebook", [("nb", "claim", "notebook-gpu")]), "2026-12-01T09:30:00Z"),
        m.claim("notebook-gpu", [m.request("nb")]),
        m.claim("probe", [m.request()]),
    ]
    m.scenario(
        "queue-match-count-open",
        "match claim probe --count 1 on the same cluster with a notebook pod (any free GPU, request nb) and a pod "
        "pinned to node-04 (one GPU) waiting ahead: if notebook goes to node-03, pinned takes node-04's GPU and the "
        "copy gets none; if it goes to node-04, pinned gets none and the copy gets node-03's. The scheduler's "
        "scores decide, so the copy is not certain to fit (undetermined, exit 2), and the answer says so, not a "
        "count.",
        "match claim probe --count 1",
        [
            *notebook_ahead,
            at(
                m.pod("pinned", [("gpu", "claim", "pinned-gpu")], nodeSelector={"kubernetes.io/hostname": "node-04"}),
                "2026-12-01T09:40:00Z",
            ),
            m.claim("pinned-gpu", [m.request()]),
        ],
    )
    m.scenario(
        "queue-match-count-either-node",
        "match claim probe --count 1 with a notebook pod (any free GPU) waiting ahead and two free GPUs (node-03, "
        "node-04): whichever node the scheduler's scores send notebook to, the copy gets the GPU of the other one "
        "(1 of 1 fit, on a node the order decides; exit 0).",
        "match claim probe --count 1",
        notebook_ahead,
    )
    # The orders and node choices the API does not fix, tried one by one (analyze/queue/alternatives.py)
    three = m.rslice("node-01-gpus", [m.dev(f"gpu-{i}") for i in range(3)], "node-01")
    one = m.rslice("node-02-gpus", [m.dev("gpu-0")], "node-02", pool="node-02")
    m.scenario(
        "queue-choice-certain",
        "status: anywhere (one GPU, created first) may go to node-01 (3 GPUs) or node-02 (1 GPU), as the "
        "scheduler's scores decide; pair (one claim of two requests, a GPU each) can only use node-01. If anywhere "
        "takes a GPU of node-01, two are left for pair; if it goes to node-02, three are: pair gets its devices "
        "either way (OK), which ones depends on where anywhere goes, so the answer names none (DRA432).",
        "status",
        [
            *own("anywhere", "2026-12-01T10:00:00Z"),
            at(m.pod("pair", [("gpu", "claim", "pair-gpus")], nodeSelector={"zone": "a"}), "2026-12-01T10:00:10Z"),
            m.claim("pair-gpus", [m.request("a"), m.request("b")]),
            m.dclass(),
            three,
            one,
            *m.NODES,
        ],
    )
    m.scenario(
        "queue-tied-certain",
        "explain pod late: t0 and t1 (one GPU each, created in the same second: the API does not show which goes "
        "first) may each go to node-01 (2 GPUs) or node-02 (1 GPU); late asks for a GPU of its own kind (a "
        "selector of its own). Whatever order and nodes t0 and t1 get, one of the three GPUs is left, on a node "
        "late may use: it fits (exit 0). The scheduler's scores (the nodes are alike) send the second of t0 and t1 "
        "to the node the first did not take, so late gets node-01's second GPU in every order.",
        "explain pod late",
        [
            *own("t0", "2026-12-01T10:00:00Z"),
            *own("t1", "2026-12-01T10:00:00Z"),
            at(m.pod("late", [("gpu", "claim", "late-gpu")]), "2026-12-01T10:00:30Z"),
            m.claim("late-gpu", [m.request(selectors=['device.driver == "gpu.example.com"'])]),
            m.dclass(),
            m.rslice("node-01-gpus", [m.dev("gpu-0"), m.dev("gpu-1")], "node-01"),
            one,
            *m.NODES,
        ],
    )
    replicas = [x for i in range(10) for x in own(f"p{i:02d}", f"2026-12-01T10:00:{i:02d}Z", priority=100)]
    m.scenario(
        "queue-one-answer-lower-priority",
        "status: ten identical pods of priority 100 (a GPU each, created a second apart) and low, of priority 0, "
        "whose claim asks for a GPU of its own kind; 11 GPUs (node-01: 6, node-02: 5). Each of the ten fits "
        "whatever nodes the ones ahead of it pick (identical pods on node-local devices: the count per node does "
        "not depend on the order), and low, behind them, does not change that: status and explain pod give p09 "
        "the same answer (OK). low gets the last GPU in every order and choice of nodes of the ten ahead of it, which "
        "the alternatives try (exit 0; with at most 8 pods ahead tried, before 8 December, it was undetermined).",
        "status",
        [
            *replicas,
            at(m.pod("low", [("gpu", "claim", "low-gpu")]), "2026-12-01T09:00:00Z", priority=0),
            m.claim("low-gpu", [m.request(selectors=['device.driver == "gpu.example.com"'])]),
            m.dclass(),
            m.rslice("node-01-gpus", [m.dev(f"gpu-{i}") for i in range(6)], "node-01"),
            m.rslice("node-02-gpus", [m.dev(f"gpu-{i}") for i in range(5)], "node-02", pool="node-02"),
            *m.NODES,
        ],
    )
    m.scenario(
        "queue-batch-takes-the-room",
        "explain pod train-b: batch (no devices, 6 cpu, created first) may go to node-01 or node-02 (8 cpu and one "
        "free GPU each); train-a and train-b (a GPU and 4 cpu each) come after it. Whichever node batch gets, "
        "train-a gets the other one, and train-b finds the last GPU on the node whose cpu batch took; every pod "
        "has priority 0, so none can be preempted (DRA430, exit 1).",
        "explain pod train-b",
        [
            at(batch, "2026-12-01T10:00:00Z"),
            *_cpu(own("train-a", "2026-12-01T10:00:10Z"), "4"),
            *_cpu(own("train-b", "2026-12-01T10:00:20Z"), "4"),
            m.dclass(),
            gpu_node_01,
            gpu_node_02,
            m.node("node-01", {}, zone="a"),
            m.node("node-02", {}, zone="b"),
        ],
    )
    m.scenario(
        "queue-scores-pick-the-node",
        "status: first (2 cpu and a GPU, created first) may go to node-01 (8 cpu) or node-02 (16 cpu), one GPU "
        "each; second (10 cpu and a GPU) fits only node-02. kube-scheduler binds first to the node of the highest "
        "score, and its default scores (NodeResourcesFit's LeastAllocated plus BalancedAllocation: 155 on node-01, "
        "164 on node-02) pick node-02, the one with more room: second is blocked (DRA430, exit 1). Before the "
        "scores were modelled, both nodes were alternatives for first and second was undetermined, and first's "
        "row named node-01, the first in search order.",
        "status",
        [
            *_cpu(own("first", "2026-12-01T10:00:00Z"), "2"),
            *_cpu(own("second", "2026-12-01T10:00:10Z"), "10"),
            m.dclass(),
            gpu_node_01,
            gpu_node_02,
            m.node("node-01", {}, zone="a"),
            m.node("node-02", {"cpu": "16"}, zone="b"),
        ],
    )
    m.scenario(
        "queue-match-count",
        "match claim probe --count 3 on the replicas' cluster: two copies of the claim fit (node-03, node-04), the "
        "third finds every GPU allocated, two of them to the copies before it (exit 1).",
        "match claim probe --count 3",
        [*_deployment(m, pods=2, running=2), m.claim("probe", [m.request()])],
    )
    # A training gang: 16 workers, minCount 16, each with its own claim; 3 nodes of 4 GPUs: 12 fit, none is placed.
    workers = []
    for i in range(16):
        w = at(m.pod(f"train-w{i:02d}", [("gpu", "claim", f"train-w{i:02d}-gpu")]), f"2026-12-01T10:00:{i:02d}Z")
        w["spec"]["schedulingGroup"] = {"podGroupName": "train"}
        workers += [w, m.claim(f"train-w{i:02d}-gpu", [m.request()])]
    group = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "train"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 16}}},
    }
    four = [m.dev(f"gpu-{j}") for j in range(4)]
    gang_nodes = []
    for n in range(1, 4):
        gang_nodes += [m.rslice(f"node-0{n}-gpus", four, f"node-0{n}", pool=f"node-0{n}"), m.node(f"node-0{n}")]
    m.scenario(
        "queue-gang-does-not-fit",
        "status: a PodGroup of 16 training workers with minCount 16 (gang scheduling on), one GPU each, 12 GPUs on "
        "3 nodes. The group cycle finds devices for 12 and places none: every worker is blocked (DRA435, exit 1), "
        "and the notebook behind the gang gets a GPU (the gang holds nothing).",
        "status",
        [*workers, group, *own("notebook", "2026-12-01T10:05:00Z"), m.dclass(), *gang_nodes],
    )
    # A pair whose members need 6 of a node's 8 cpu each, and batch (no DRA, 4 cpu, created first) ahead of them:
    # wherever batch goes, that node has 4 cpu left and the pair cannot be placed together. The pods without DRA
    # are not dry-run, so the group's count alone is not certain: undetermined, never OK.
    pair = []
    for i in range(2):
        w = at(m.pod(f"pair-w{i}", [("gpu", "claim", f"pair-w{i}-gpu")]), f"2026-12-01T10:00:0{i}Z")
        w["spec"]["schedulingGroup"] = {"podGroupName": "pair"}
        pair += [*_cpu([w], "6"), m.claim(f"pair-w{i}-gpu", [m.request()])]
    pair_group = copy.deepcopy(group)
    pair_group["metadata"]["name"] = "pair"
    pair_group["spec"]["schedulingPolicy"]["gang"]["minCount"] = 2
    cpu_batch = at(m.no_dra_pod("batch", "4"), "2026-12-01T09:00:00Z")
    m.scenario(
        "queue-gang-outsider-cpu",
        "status: the PodGroup pair (minCount 2; a GPU and 6 cpu each) on two nodes of 8 cpu and one GPU each; batch, "
        "a pod without DRA asking 4 cpu, was created first. Wherever batch goes, that node keeps 4 cpu and the pair "
        "does not fit together; the queue's dry-run does not place pods without DRA, so the group's count is not "
        "certain: undetermined (DRA431, exit 2), never OK.",
        "status",
        [
            *pair,
            pair_group,
            cpu_batch,
            m.dclass(),
            gpu_node_01,
            gpu_node_02,
            m.node("node-01", {}, zone="a"),
            m.node("node-02", {}, zone="b"),
        ],
    )
    m.scenario(
        "queue-gang-explain",
        "explain pod train-w03 on the same input: the gang's need against what fits, and which workers find none.",
        "explain pod train-w03",
        [*workers, group, *own("notebook", "2026-12-01T10:05:00Z"), m.dclass(), *gang_nodes],
    )
    m.scenario(
        "queue-gang-after-its-cycles",
        "explain pod worker-2 after two failed cycles of its gang (as tests/e2e/test_e2e_gangs.py saw them on "
        "v1.37.2): 4 GPUs, three held by bound pods; the PodGroup train needs its 3 workers at once and 1 fits. The "
        "second cycle ended before it tried worker-2, whose latest event carries the group's reason alone "
        '("minCount (3) cannot be satisfied: 1 scheduled, 1 remaining"): the group\'s story (DRA435), not a reason '
        "outside DRA (no DRA021).",
        "explain pod worker-2",
        _after_gang_cycles(m, at),
    )
    batch = at(m.pod("batch", [("gpu", "claim", "batch-gpu")], "node-01"), "2026-12-01T09:00:00Z", priority=0)
    batch["status"]["phase"] = "Running"
    m.scenario(
        "queue-priority-does-not-preempt",
        "explain pod urgent: a pod of priority 1000 wants the one GPU, which a running pod of priority 0 holds. "
        "Blocked by the device in use (DRA404), and priority does not help: kube-scheduler does not preempt pods to "
        "free devices (DRA434).",
        "explain pod urgent",
        [
            batch,
            m.claim(
                "batch-gpu", [m.request()], results=[("gpu", "node-01", "gpu-0")], reserved="batch", node="node-01"
            ),
            *own("urgent", "2026-12-01T10:00:00Z", priority=1000),
            m.dclass(),
            gpu_node_01,
            *m.NODES,
        ],
    )
    m.MOVED.update(
        {
            "queue-two-pods-one-gpu": ("team-a", "-n"),
            "queue-two-pods-explain": ("team-a", "-n"),
            "queue-alone": ("team-a", "-n"),
            "queue-priority": ("ml-prod", "-n"),
            "queue-gated": ("batch", "-n"),
            "queue-tie-shortfall": ("batch", "-n"),
            "queue-choice-undetermined": ("team-a", "-n"),
            "queue-count-proof": ("ml-prod", "-n"),
            "queue-deployment-8-on-4": ("ml-prod", "-n"),
            "queue-replicas": ("ml-prod", "-n"),
            "queue-match-count": ("ml-prod", "-n"),
            "queue-priority-does-not-preempt": ("batch", "-n"),
            "queue-gang-outsider-cpu": ("ml-team", "-n"),
            "queue-replicas-fit": ("ml-prod", "-n"),
            "queue-replicas-input-lacks-claims": ("ml-prod", "-n"),
            "queue-replicas-input-lacks-templates": ("ml-prod", "-n"),
            "queue-replicas-open": ("ml-prod", "-n"),
            "queue-match-count-open": ("ml-prod", "-n"),
            "queue-match-count-either-node": ("ml-team", "-n"),
            "queue-replicas-batch-takes-the-room": ("ml-team", "-n"),
            "queue-choice-certain": ("ml-team", "-n"),
            "queue-tied-certain": ("ml-team", "-n"),
            "queue-scores-pick-the-node": ("ml-team", "-n"),
            "queue-batch-takes-the-room": ("ml-team", "-n"),
            "queue-one-answer-lower-priority": ("ml-team", "-n"),
            "queue-gang-does-not-fit": ("ml-train", "-n"),
            "queue-gang-explain": ("ml-train", "-n"),
            "queue-gang-after-its-cycles": ("ml-train", "-n"),
        }
    )


def _cpu(objs: list, cpu: str) -> list:
    """The pod of objs (a pod and its claim) asking for cpu."""
    for o in objs:
        if o["kind"] == "Pod":
            o["spec"]["containers"] = [
                {"name": "app", "image": "registry.example/app:1", "resources": {"requests": {"cpu": cpu}}}
            ]
    return objs


def _deployment(m, pods: int = 8, running: int = 0, cpu: str | None = None) -> list:
    """Deployment inference (a template claim of one GPU) on four nodes with one GPU each: `running` of its pods
    run (their claims allocated on node-01, node-02, ...), the others wait (the first four created a second
    before the rest). cpu: what its container requests, and the nodes then have 8 cpu allocatable."""
    ns = m.NS
    template = {
        "metadata": {"labels": {"app": "inference"}},
        "spec": {
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "inference-gpu"}],
            "containers": [{"name": "app", "image": "registry.example/app:1"}],
        },
    }
    if cpu is not None:
        template["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu}}
    d = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "inference", "namespace": ns, "uid": "uid-deploy-inference"},
        "spec": {"replicas": pods, "selector": {"matchLabels": {"app": "inference"}}, "template": template},
    }
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": "inference-5c7f9",
            "namespace": ns,
            "uid": "uid-rs-inference",
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "inference",
                    "uid": d["metadata"]["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": {"selector": {"matchLabels": {"app": "inference"}}},
    }
    objs = [d, rs, m.template("inference-gpu", [m.request()])]
    suffixes = ("a1b2c", "d3e4f", "g5h6i", "j7k8l", "m9n0p", "q1r2s", "t3u4v", "w5x6y")
    for i, suffix in enumerate(suffixes[:pods]):
        name = f"inference-5c7f9-{suffix}"
        claim_name = f"{name}-gpu-{suffix[:3]}"
        node_name = f"node-0{i + 1}" if i < running else None
        p = m.pod(name, [("gpu", "template", "inference-gpu")], node_name, statuses={"gpu": claim_name})
        if cpu is not None:
            p["spec"]["containers"] = copy.deepcopy(template["spec"]["containers"])
        p["metadata"]["labels"] = {"app": "inference", "pod-template-hash": "5c7f9"}
        p["metadata"]["creationTimestamp"] = "2026-12-01T10:00:00Z" if i < 4 else "2026-12-01T10:00:01Z"
        p["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "inference-5c7f9",
                "uid": "uid-rs-inference",
                "controller": True,
            }
        ]
        if node_name:
            p["status"]["phase"] = "Running"
            c = m.claim(claim_name, [m.request()], owner_pod=name, results=[("gpu", node_name, "gpu-0")], reserved=name)
        else:
            c = m.claim(claim_name, [m.request()], owner_pod=name)
        objs += [p, c]
    objs.append(m.dclass())
    for n in range(1, 5):
        objs.append(m.rslice(f"node-0{n}-gpus", [m.dev("gpu-0")], f"node-0{n}", pool=f"node-0{n}"))
        objs.append(m.node(f"node-0{n}", {} if cpu is not None else None, zone="a"))
    return objs


def _after_gang_cycles(m, at) -> list:
    """4 GPUs on node-01: urgent (priority 1000), early and notebook bound to gpu-0..gpu-2; the PodGroup train
    (minCount 3) and its 3 pending workers, with the events of the group's two failed cycles (v1.37.2's words: the
    first tried every worker and placed 2, the second placed worker-0, found nothing for worker-1 and ended)."""
    objs = []
    for i, (name, prio) in enumerate((("urgent", 1000), ("early", 0), ("notebook", 0))):
        p = at(m.pod(name, [("gpu", "claim", f"{name}-gpu")], "node-01"), f"2026-12-01T10:00:0{i}Z", priority=prio)
        p["status"]["phase"] = "Running"
        c = m.claim(
            f"{name}-gpu", [m.request()], results=[("gpu", "node-01", f"gpu-{i}")], reserved=name, node="node-01"
        )
        objs += [p, c]
    first = (
        "pod group is unschedulable, minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, pod group "
        "preemption: No preemption victims found for incoming preemptor"
    )
    second = "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining"
    for i in range(3):
        w = at(m.pod(f"worker-{i}", [("gpu", "claim", f"worker-{i}-gpu")]), "2026-12-01T10:00:05Z", priority=0)
        w["spec"]["schedulingGroup"] = {"podGroupName": "train"}
        objs += [w, m.claim(f"worker-{i}-gpu", [m.request()])]
        objs.append(m.event(f"worker-{i}", "FailedScheduling", first, "2026-12-01T10:00:10Z"))
    objs.append(m.event("worker-2", "FailedScheduling", second, "2026-12-01T10:00:20Z", n=2))
    group = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "train", "namespace": m.NS},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}},
    }
    four = [m.dev(f"gpu-{j}") for j in range(4)]
    return [*objs, group, m.dclass(), m.rslice("node-01-gpus", four, "node-01"), *m.NODES]
