"""Seeded random queues for the queue agreement suite against the real kube-scheduler (issue 45 item 5).

`build(seed)` makes a plan (plain data, no cluster): 2-4 nodes of the seed's own (cpu, memory and pod slots set in
their allocatable), 1-4 GPUs on each in a ResourceSlice, PriorityClasses (one with preemptionPolicy: Never), pods
already bound to the nodes holding cpu, and 3-10 pending pods of various priorities, some claiming one or two GPUs
through ResourceClaimTemplates, some without DRA asking only cpu. Every pod has the seed's nodeSelector, so no pod goes
to the suite's own nodes and no pod of another test to these.

`run(cluster, seed)` plays it: the nodes (kept Ready by a heartbeat thread), the slices, the holders (bound by name);
then, while the test holds kube-scheduler's Lease (Cluster.scheduler_held: every pod is in its queue, in creation
order, before it schedules any), the pending pods a second apart and their claims; `kubectl dra status -n NS -o json`
is asked; the Lease goes, and each pod's end is awaited (bound, or a FailedScheduling once nothing changes any more;
victims of a preemption are deleted). A row's state is compared with it: OK = placed, Blocked = not placed,
Unknown = undetermined. Pods without DRA have no row (`status` lists pods that use DRA): counted as `no-row`.

Features (`Plan.features`): `preemption` is drawn per seed: the holders are of a lower priority than some pending pods,
so the scheduler may preempt them for cpu, memory or pod slots (analyze/pod/preempt.py, queue/preempted.py);
without it the holders' priority is above every pending pod's and no preemption can help anyone.
"""

from __future__ import annotations

import os
import random
import threading
import time
from dataclasses import dataclass, field

import builders
from builders import device, request
from dra_objects import PAUSE, Scenario
from e2e_helpers import ApiError, clusterlib, wait_for

SEED_LABEL = "kubectl-dra.e2e/queue-seed"
QUIET_SECONDS = 8.0  # no pod changed for this long: the queue has settled
SETTLE_CAP = 90.0
# name -> (value, preemptionPolicy); `guard` is the holders' class when preemption cannot help (above every other)
CLASSES = {
    "low": (100, None),
    "mid": (1000, None),
    "never": (5000, "Never"),
    "high": (10000, None),
    "guard": (100000, None),
}


@dataclass
class Plan:
    seed: int
    name: str
    features: set = field(default_factory=set)
    nodes: dict = field(default_factory=dict)  # node -> allocatable
    gpus: dict = field(default_factory=dict)  # node -> GPUs
    holders: list = field(default_factory=list)  # pod dicts, bound (spec.nodeName)
    pods: list = field(default_factory=list)  # pending pod dicts, in creation order


def _pod(name: str, seed_label: str, cpu: str, memory: str, cls: str | None, templates: dict) -> dict:
    refs = [(k, "template", v) for k, v in templates.items()]
    app = {
        "name": "app",
        "image": PAUSE,
        "resources": {"requests": {"cpu": cpu, "memory": memory}, "claims": [{"name": k} for k in templates]},
    }
    if not templates:
        del app["resources"]["claims"]
    spec: dict = {"terminationGracePeriodSeconds": 0, "nodeSelector": {SEED_LABEL: seed_label}}
    if cls:
        spec["priorityClassName"] = cls
    p = builders.pod(name, refs, ns=None, containers=[app], phase=None, **spec)
    if not templates:
        del p["spec"]["resourceClaims"]
    return p


def class_name(seed: int, cls: str) -> str:
    return f"kdra-q{seed}-{cls}"


def build(seed: int, preemption: bool | None = None) -> Plan:
    """preemption: force the feature on or off (None: drawn from the seed)."""
    rng = random.Random(seed)
    name = f"qs{seed}"
    p = Plan(seed, name)
    f = p.features
    pre = rng.random() < 0.5
    pre = pre if preemption is None else preemption
    if pre:
        f.add("preemption")
    for i in range(rng.choice([2, 3, 3, 4])):
        node = f"{name}-node-{i}"
        p.nodes[node] = {
            "cpu": rng.choice(["2", "4", "4", "8"]),
            "memory": rng.choice(["4Gi", "8Gi", "16Gi"]),
            "pods": rng.choice(["3", "6", "110", "110"]),
        }
        p.gpus[node] = rng.choice([1, 1, 2, 3, 4])
        # holders: pods bound to the node holding half or more of its cpu, in one or two pods (or none; with
        # preemption, every node has some: a pod of higher priority that fits nowhere else may preempt them)
        milli = int(p.nodes[node]["cpu"]) * 1000
        held = int(milli * rng.choice([0.5, 0.75, 0.875, 0.875] if pre else [0, 0, 0.5, 0.75, 0.875]))
        parts = [held] if held and rng.random() < 0.6 else ([held // 2, held - held // 2] if held else [])
        for k, cpu in enumerate(parts):
            holder = _pod(f"hold-{i}-{k}", name, f"{cpu}m", "512Mi", class_name(seed, "low" if pre else "guard"), {})
            holder["spec"]["nodeName"] = node
            del holder["spec"]["nodeSelector"]
            p.holders.append(holder)
            f.add("holder")
    for i in range(rng.randint(3, 10)):
        cls = rng.choice([None, "low", "mid", "mid", "high", "never"])
        if cls:
            f.add(f"priority-{cls}")
        kind = rng.choice(["gpu", "gpu", "gpu", "gpu2", "plain", "plain"])
        templates = {} if kind == "plain" else {"gpu": kind}
        f.add(f"pod-{kind}")
        cpu = rng.choice(["100m", "500m", "1", "1", "2", "3"])
        memory = rng.choice(["256Mi", "1Gi", "2Gi"])
        p.pods.append(_pod(f"p{i:02d}", name, cpu, memory, cls and class_name(seed, cls), templates))
    return p


# --- playing it on the cluster --------------------------------------------------------------------------


@dataclass
class Outcome:
    seed: int
    pod: str
    predicted: str  # OK / Blocked / Unknown / no-row
    real: str  # bound:NODE / unbound / preempted
    result: str  # agree / disagree / undetermined / no-row / victim / preempted / error
    reason: str  # the row's codes and reason; the scheduler's message

    def line(self) -> str:
        return (
            f"seed {self.seed} {self.pod}: predicted {self.predicted}, real {self.real}: {self.result} ({self.reason})"
        )


class Heartbeat:
    """The seed's fake nodes' Leases renewed, as cluster.py's heartbeat does for the suite's nodes."""

    def __init__(self, api, nodes: list[str], version: str):
        self.api, self.nodes, self.version = api, nodes, version
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="queue-heartbeat", daemon=True)

    def _run(self) -> None:
        while True:
            for n in self.nodes:
                try:
                    clusterlib.heartbeat_once(self.api, n, self.version, False)
                except ApiError:
                    pass
            if self.stop.wait(10):
                return


def _node(name: str, seed_label: str, allocatable: dict, version: str) -> dict:
    obj = clusterlib.node_object(name, version)
    obj["metadata"]["labels"][SEED_LABEL] = seed_label
    obj["status"]["capacity"] = obj["status"]["allocatable"] = {**allocatable, "ephemeral-storage": "100Gi"}
    return obj


def _ready(cluster, nodes: list[str]) -> bool:
    for n in nodes:
        obj = cluster.api.get(f"/api/v1/nodes/{n}")
        ready = any(c["type"] == "Ready" and c["status"] == "True" for c in obj["status"].get("conditions", []))
        if not ready or obj["spec"].get("taints"):
            return False
    return True


def _setup(cluster, sc: Scenario, plan: Plan) -> Heartbeat:
    version = cluster.state["version"]
    for node, alloc in plan.nodes.items():
        cluster.api.delete(f"/api/v1/nodes/{node}")
        wait_for(f"node {node} gone", lambda n=node: cluster.api.get(f"/api/v1/nodes/{n}", ok404=True) is None, 30)
        cluster.api.post("/api/v1/nodes", _node(node, plan.name, alloc, version))
    beat = Heartbeat(cluster.api, list(plan.nodes), version)
    beat.thread.start()
    wait_for("the seed's nodes Ready and untainted", lambda: _ready(cluster, list(plan.nodes)), 60)
    sc.device_class()
    for node, n in plan.gpus.items():
        sc.slice([device(f"gpu-{k}") for k in range(n)], node=node)
    for cls in ("low", "mid", "never", "high", "guard"):
        value, policy = CLASSES[cls]
        obj = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": class_name(plan.seed, cls)}, "value": value}  # fmt: skip
        if policy:
            obj["preemptionPolicy"] = policy
        sc._create_cluster("/apis/scheduling.k8s.io/v1/priorityclasses", obj)
    sc.gpu_template("gpu")
    sc.api.post(
        f"/apis/resource.k8s.io/v1/namespaces/{sc.ns}/resourceclaimtemplates",
        builders.template("gpu2", [request("gpu", sc.cls, count=2)], ns=None),
    )
    for h in plan.holders:
        sc.create(h)
    for h in plan.holders:
        cluster.wait_bound(sc.ns, h["metadata"]["name"], timeout=30)
    return beat


def _claims_made(cluster, ns: str, pods: list[dict]) -> None:
    """The controller makes the template claims (it runs while the scheduler is held): kubectl-dra should see them."""
    for pd in pods:
        if pd["spec"].get("resourceClaims"):
            wait_for(
                f"claims of {pd['metadata']['name']}",
                lambda n=pd["metadata"]["name"]: cluster.pod(ns, n).get("status", {}).get("resourceClaimStatuses"),
                30,
                0.3,
            )


def _settle(cluster, ns: str, names: list[str]) -> dict:
    """name -> (ever bound to, exists, last FailedScheduling message) once every pod is bound, gone or refused and
    nothing has changed for QUIET_SECONDS (a preemptor waits for its victims to go and is tried again), or after
    SETTLE_CAP seconds."""
    t0 = last = time.monotonic()
    seen: dict = {}
    bound: dict = {}
    while time.monotonic() - t0 < SETTLE_CAP:
        pods = {p["metadata"]["name"]: p for p in cluster.pods(ns)}
        fails: dict = {}
        for e in cluster.events(ns):
            if e["reason"] == "FailedScheduling":
                fails[e["involvedObject"]["name"]] = e.get("message") or e.get("note") or ""
        for n in names:
            if n in pods and pods[n]["spec"].get("nodeName"):
                bound[n] = pods[n]["spec"]["nodeName"]
        now = {n: (bound.get(n), n in pods, fails.get(n)) for n in names}
        settled = all(b or not there or msg for b, there, msg in now.values())
        if now != seen:
            seen, last = now, time.monotonic()
        elif settled and time.monotonic() - last >= QUIET_SECONDS:
            break
        time.sleep(1)
    return seen


def _compare(state: str, real: str) -> str:
    if real == "deleted":  # a victim: deleted by a preemption before it was bound (it may have been assumed on a node)
        return "victim"
    if state == "Unknown":
        return "undetermined"
    if state not in ("OK", "Blocked"):
        return "no-row"
    return "agree" if (state == "OK") == real.startswith("bound") else "disagree"


def run(cluster, seed: int, preemption: bool | None = None) -> tuple[list[Outcome], dict]:
    """The seed played; returns the outcomes (pods in creation order, then the holders that were preempted) and
    figures: hand-over seconds, the status answer's queue order, the preempted holders."""
    plan = build(seed, preemption)
    ns = cluster.create_namespace(f"queue-{seed}")
    sc = Scenario(cluster, ns, plan.name)
    beat = None
    out: list[Outcome] = []
    info: dict = {"features": sorted(plan.features)}
    try:
        beat = _setup(cluster, sc, plan)
        names = [pd["metadata"]["name"] for pd in plan.pods]
        with cluster.scheduler_held() as hold:
            for pd in plan.pods:
                sc.create(pd)
                time.sleep(1.05)  # creationTimestamp has seconds: pods a second apart have an order
            _claims_made(cluster, ns, plan.pods)
            st = cluster.kubectl_dra("status", "-n", ns, "-o", "json")
            keep = os.environ.get("KUBECTL_DRA_QUEUE_DUMP")  # a directory: the input as asked, to replay offline
            if keep:
                cluster.kubectl_dra("dump", "-n", ns, "--output-file", os.path.join(keep, f"seed{seed}-{ns}.yaml"))
            if any(cluster.pod(ns, n)["spec"].get("nodeName") for n in names):
                raise AssertionError("a pod was bound while the scheduler was held")
        info["handover"] = hold.released_in
        doc = st.json
        info["order"] = [x.split("/", 1)[1] for x in (doc.get("queue") or {}).get("order") or []]
        rows = {r["pod"]: r for r in doc["items"]}
        # the node each place names, and whether it says so as the estimated order's (the long run's log measures
        # how often a node not estimated is the one the pod is bound to)
        info["named"] = {n: [r["queue"]["node"], r["queue"]["estimated"]] for n, r in rows.items()
                         if (r.get("queue") or {}).get("node")}  # fmt: skip
        ends = _settle(cluster, ns, names)
        for n in names:
            bound, there, msg = ends[n]
            real = f"bound:{bound}" if bound else ("deleted" if not there else "unbound")
            row = rows.get(n)
            state = row["state"] if row else "no-row"
            why = f"{','.join(row.get('codes') or [])}: {(row.get('reason') or '')[:140]}" if row else "uses no DRA"
            if msg and not bound:
                said, _, pre = msg.partition("preemption:")
                why += f" | scheduler: {said[:150]}" + (f" preemption:{pre[:120]}" if pre else "")
            out.append(Outcome(seed, n, state, real, _compare(state, real), why))
        gone = [h["metadata"]["name"] for h in plan.holders if cluster.api.get(f"/api/v1/namespaces/{ns}/pods/{h['metadata']['name']}", ok404=True) is None]  # fmt: skip
        info["preempted"] = gone
        for g in gone:
            out.append(Outcome(seed, g, "holder", "preempted", "preempted", "a bound holder, deleted by a preemption"))
    finally:
        _teardown(cluster, sc, plan, ns, beat)
    return out, info


def _teardown(cluster, sc: Scenario, plan: Plan, ns: str, beat: Heartbeat | None) -> None:
    api = cluster.api
    cluster.delete_pods(ns)
    if beat:
        beat.stop.set()
        beat.thread.join(15)
    for node in plan.nodes:
        try:
            api.delete(f"/api/v1/nodes/{node}")
            api.delete(f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{node}")
        except ApiError:
            pass
    sc.cleanup()
    cluster.delete_namespace(ns)
