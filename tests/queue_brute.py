"""Random queues and a brute force of the scheduler's queue for them, independent of kubectl_dra's model (issue 45):
small clusters of identical GPUs where what a pod needs is a count of GPUs and of cpu on one node, so that every
order of the pods the API leaves tied and every node each may go to can be tried by hand. A certain answer of the
tool that the brute force contradicts is a confident wrong answer. Used by tests/unit/test_queue_brute.py and
scripts/queue_unknowns.py.

random_queue(seed): 2-4 nodes of 4 or 8 cpu and 1-4 GPUs each; on every node a bound holder (of a GPU or not, of
0-2 cpu) at a priority nothing preempts, so that no answer depends on DefaultPreemption; 3-10 pending pods of four
priorities, created within 4 seconds (ties), 40% pinned to some nodes (node affinity), asking 0-2 GPUs (0: a pod
without DRA, which asks cpu) and 0-3 cpu, in namespace ml-team.

brute(model): per pod, {True, False}: whether it gets a node, over every order of the pods tied in the queue (one
priority, one creation second) and every node each may go to (one with its GPUs and cpu free, and of the highest
score: the scheduler picks one of those at random), pods taken by priority, then creation; a pod with no node takes
nothing."""

from __future__ import annotations


def random_queue(seed: int) -> tuple[list, dict]:
    """(objects, the brute force's model): the scenario and, per pod, what the brute force needs."""
    import random

    import builders as b

    rng = random.Random(f"queue-unknowns:{seed}")
    ns = "ml-team"
    nodes = {f"node-{i}": (rng.choice((4, 8)), rng.randint(1, 4)) for i in range(rng.randint(2, 4))}
    objs = [b.dclass()]
    model = {"nodes": {n: [cpu, gpus] for n, (cpu, gpus) in nodes.items()}, "pods": []}
    for n, (cpu, gpus) in nodes.items():
        objs.append(b.node(n, {"cpu": str(cpu)}))
        objs.append(b.rslice(f"{n}-gpus", [b.device(f"gpu-{j}") for j in range(gpus)], n))
        # a bound holder on every node (the node's bound pods are then known), of a priority nothing preempts
        held = rng.randint(0, min(1, gpus))
        hcpu = rng.choice((0, 1, 2))
        claims = []
        if held:
            objs.append(
                b.claim(f"hold-{n}", [b.request()], results=[("gpu", n, "gpu-0")], reserved=f"hold-{n}", node=n, ns=ns)
            )
            claims = [("gpu", "claim", f"hold-{n}")]
        c = [b.container("app", cpu=str(hcpu))] if hcpu else None
        objs.append(b.pod(f"hold-{n}", claims, node_name=n, ns=ns, phase="Running", containers=c, priority=2000000000))
        model["nodes"][n][0] -= hcpu
        model["nodes"][n][1] -= held
        # for the scores: the node's allocatable milli-cpu, and what the holder adds (non-zero cpu and memory as
        # NodeInfo counts them, a container without a request counting 100m and 200Mi; requested cpu and memory)
        model.setdefault("alloc", {})[n] = cpu * 1000
        model["nodes"][n] += [hcpu * 1000 or 100, _MI200, hcpu * 1000, 0]
    for i in range(rng.randint(3, 10)):
        name = f"p{i:02d}"
        prio = rng.choice((0, 100, 1000, 10000))
        created = f"2026-12-01T10:00:{rng.randint(0, 3):02d}Z"
        count = rng.choice((0, 1, 1, 1, 2))
        cpu = rng.choice((0, 0, 1, 2, 3)) if count else rng.choice((1, 2, 3))
        pin = sorted(rng.sample(sorted(nodes), rng.randint(1, len(nodes)))) if rng.random() < 0.4 else sorted(nodes)
        spec = {"priority": prio}
        if pin != sorted(nodes):
            spec["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": pin}]}
                        ]
                    }
                }
            }
        claims = [("gpu", "claim", f"{name}-gpu")] if count else []
        if count:
            objs.append(b.claim(f"{name}-gpu", [b.request(count=count)], ns=ns))
        c = [b.container("app", cpu=str(cpu))] if cpu else None
        objs.append(b.pod(name, claims, ns=ns, created=created, containers=c, **spec))
        model["pods"].append({"name": name, "prio": prio, "created": created, "gpus": count, "cpu": cpu, "nodes": pin})
    return objs, model


_MI200 = 200 * 1024 * 1024  # the memory a container without a memory request counts for the scores
_MEMORY = 32 * 1024**3  # every node's allocatable memory (builders.node)


def _score(p: dict, node: tuple, cpu_alloc: int) -> int:
    """kube-scheduler v1.37.2's NodeResourcesFit (LeastAllocated) plus NodeResourcesBalancedAllocation score of the
    node for pod p, written from noderesources/least_allocated.go and balanced_allocation.go: node is (free cpu, free
    GPUs, non-zero milli-cpu, non-zero memory, requested milli-cpu, requested memory) of the pods on it. These
    pods ask no memory, have no labels, affinity or images on the nodes, so no other plugin tells nodes apart."""
    nzc, nzm = node[2] + (p["cpu"] * 1000 or 100), node[3] + _MI200
    least = [(cap - used) * 100 // cap if used <= cap else 0 for used, cap in ((nzc, cpu_alloc), (nzm, _MEMORY))]
    fit = sum(least) // 2
    if p["cpu"] == 0:  # requests neither cpu nor memory: BalancedAllocation skips it
        return fit

    def balance(c: int, m: int) -> int:
        return int((1 - abs(min(c / cpu_alloc, 1.0) - min(m / _MEMORY, 1.0)) / 2) * 100)

    x = 50 + balance(node[4] + p["cpu"] * 1000, node[5]) - balance(node[4], node[5])
    return fit + 50 + (x // 2 if x >= 0 else -(-x // 2))


def brute(model: dict, limit: int = 200000) -> dict | None:
    """Pod -> {True, False}: whether it gets a node, over every order of tied pods and every node choice (None: too
    many). Pods are taken in priority order, then creation; a pod fits a node with its GPUs and cpu free."""
    import itertools

    pods = sorted(model["pods"], key=lambda p: (-p["prio"], p["created"]))
    classes = [list(g) for _, g in itertools.groupby(pods, key=lambda p: (p["prio"], p["created"]))]
    out: dict = {p["name"]: set() for p in pods}
    count = [0]

    def go(free: dict, todo: list) -> None:
        count[0] += 1
        if count[0] > limit:
            raise OverflowError
        if not todo:
            return
        cls, later = todo[0], todo[1:]
        for i, p in enumerate(cls):
            nxt = ([cls[:i] + cls[i + 1 :]] if len(cls) > 1 else []) + later
            opts = [n for n in p["nodes"] if free[n][0] >= p["cpu"] and free[n][1] >= p["gpus"]]
            out[p["name"]].add(bool(opts))
            if not opts:
                go(free, nxt)
            if len(opts) > 1:  # the scheduler picks among the nodes of the highest score
                scores = {n: _score(p, free[n], model["alloc"][n]) for n in opts}
                opts = [n for n in opts if scores[n] == max(scores.values())]
            for n in opts:
                f = dict(free)
                _c, _g, nzc, nzm, rqc, rqm = free[n]
                f[n] = (
                    _c - p["cpu"],
                    _g - p["gpus"],
                    nzc + (p["cpu"] * 1000 or 100),
                    nzm + _MI200,
                    rqc + p["cpu"] * 1000,
                    rqm,
                )
                go(f, nxt)

    try:
        go({n: tuple(v) for n, v in model["nodes"].items()}, classes)
    except OverflowError:
        return None
    return out
