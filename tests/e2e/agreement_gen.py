"""Seeded random scenarios for the agreement suite against the real kube-scheduler (issue 29 item 5).

`build(seed)` makes a plan (plain data, no cluster): one driver and DeviceClass of its own, ResourceSlices in every
form (nodeName, nodeSelector, allNodes, perDeviceNodeSelection), 1-4 pods with templates and shared claims,
firstAvailable, allocationMode All, matchAttribute constraints, device taints with and without tolerations, CEL
selectors that can meet a runtime error, per-pod nodeSelector / node affinity, cpu requests against a bound `hog` pod,
and DRA-backed extended resources (optionally served on one node by a device plugin, as its allocatable says).

`run(cluster, seed)` plays the plan on the cluster: every pod is created gated; for each pod in creation order
kubectl-dra is asked first (`explain pod -o json`), then the gate is removed and the real scheduler's answer is awaited
(bound, FailedScheduling, or still pending after a while); the two are compared. kubectl-dra's prediction while
gated: blocking findings other than the gate (DRA006) = blocked; an undetermined verdict = undetermined; only the gate
= it will get its devices and a node. A confident wrong answer is a disagreement; undetermined is never one.
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass, field

from builders import device, request
from dra_objects import RES, Scenario, hog, pod
from e2e_helpers import ApiError, wait_for

from kubectl_dra.findings.model import OPENS_BLOCKED, UNDETERMINED

NODES = ["node-01", "node-02", "node-03"]
GATE_CODE = "DRA006"
PENDING_SECONDS = 20  # no FailedScheduling and no binding by then: counted as not bound


# --- the plan ------------------------------------------------------------------------------------------


@dataclass
class Plan:
    seed: int
    name: str
    driver: str
    cls: str
    features: set = field(default_factory=set)
    slices: list = field(default_factory=list)  # ResourceSlice specs (without driver)
    claims: list = field(default_factory=list)  # shared ResourceClaims (dicts)
    templates: list = field(default_factory=list)  # ResourceClaimTemplates (dicts)
    pods: list = field(default_factory=list)  # pod dicts, in creation (and ungating) order
    hog_cpu: str | None = None
    extended: str | None = None  # extendedResourceName of the class
    device_plugin_node: str | None = None  # node advertising `extended` in its allocatable


def _sel(host: list[str], op: str = "In") -> dict:
    return {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": op, "values": host}]}]
    }


def build(seed: int) -> Plan:
    rng = random.Random(seed)
    name = f"ag{seed}"
    driver = f"{name}.example.com"
    p = Plan(seed, name, driver, f"{name}-class")
    f = p.features
    bad_attr = rng.random() < 0.12  # a device whose `index` is a string: index selectors error on it
    taint = rng.random() < 0.3
    models = ["a", "b"]

    def mk_device(i: int, node_extra: dict | None = None) -> dict:
        attrs = {"index": i, "model": rng.choice(models)}
        mem = rng.choice(["8Gi", "16Gi", "40Gi"])
        extra = dict(node_extra or {})
        if taint and rng.random() < 0.35:
            extra["taints"] = [{"key": f"{driver}/maintenance", "effect": "NoSchedule"}]
            f.add("device-taint")
        d = device(f"dev-{i}", memory=mem, attrs=attrs, **extra)
        return d

    idx = 0
    for node in NODES:
        n = rng.choice([0, 0, 1, 1, 2, 3])
        if not n:
            continue
        form = rng.choice(["nodeName", "nodeName", "nodeSelector", "perDevice"])
        devs = []
        for _ in range(n):
            devs.append(mk_device(idx, {"nodeName": node} if form == "perDevice" else None))
            idx += 1
        spec: dict = {"pool": {"name": node, "generation": 1, "resourceSliceCount": 1}, "devices": devs}
        if form == "nodeName":
            spec["nodeName"] = node
        elif form == "nodeSelector":
            spec["nodeSelector"] = _sel([node])
            f.add("slice-nodeSelector")
        else:
            spec["perDeviceNodeSelection"] = True
            f.add("slice-perDeviceNodeSelection")
        p.slices.append((f"{name}-{node}", spec))
    if rng.random() < 0.3:
        devs = [mk_device(idx + k) for k in range(rng.choice([1, 2]))]
        idx += len(devs)
        p.slices.append(
            (f"{name}-all", {"allNodes": True, "pool": {"name": "all", "generation": 1, "resourceSliceCount": 1}, "devices": devs})
        )  # fmt: skip
        f.add("slice-allNodes")
    if bad_attr and p.slices:
        _, spec = rng.choice(p.slices)
        bad = device(f"dev-bad{idx}", attrs={"index": "x", "model": "a"})
        if spec.get("perDeviceNodeSelection"):
            bad["nodeName"] = rng.choice(NODES)
        spec["devices"].append(bad)
        f.add("cel-runtime-error")

    def mk_request(rname: str) -> dict:
        kind = rng.choice(["one", "one", "count2", "all", "firstAvailable", "selector"])
        tol = None
        if taint and rng.random() < 0.5:
            tol = [{"key": f"{driver}/maintenance", "operator": "Exists", "effect": "NoSchedule"}]
            f.add("toleration")
        if kind == "firstAvailable":
            f.add("firstAvailable")
            mem = f'device.capacity["{driver}"].memory'
            subs = []
            for sub, q in (("big", "24Gi"), ("small", "4Gi")):
                s = {"name": sub, "deviceClassName": p.cls, "selectors": [{"cel": {"expression": f'{mem}.compareTo(quantity("{q}")) >= 0'}}]}  # fmt: skip
                if tol:
                    s["tolerations"] = tol
                subs.append(s)
            return {"name": rname, "firstAvailable": subs}
        extra = {"tolerations": tol} if tol else {}
        if kind == "count2":
            return request(rname, p.cls, count=2, **extra)
        if kind == "all":
            f.add("allocationMode-All")
            return request(rname, p.cls, count=None, mode="All", selectors=[f'device.attributes["{driver}"].model == "{rng.choice(models)}"'], **extra)  # fmt: skip
        if kind == "selector":
            f.add("cel-selector")
            return request(rname, p.cls, selectors=[f'device.attributes["{driver}"].index >= {rng.choice([0, 1, 2])}'], **extra)  # fmt: skip
        return request(rname, p.cls, **extra)

    def mk_claim_spec() -> dict:
        reqs = [mk_request("r0")]
        if rng.random() < 0.35:
            reqs.append(mk_request("r1"))
        devices: dict = {"requests": reqs}
        if rng.random() < 0.35 and (len(reqs) > 1 or reqs[0].get("exactly", {}).get("count") == 2):
            devices["constraints"] = [{"matchAttribute": f"{driver}/model"}]
            f.add("matchAttribute")
        return {"devices": devices}

    shared: list[str] = []
    if rng.random() < 0.5:
        for k in range(rng.choice([1, 2])):
            cname = f"shared-{k}"
            p.claims.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": cname}, "spec": mk_claim_spec()})  # fmt: skip
            shared.append(cname)
    tmpl: list[str] = []
    for k in range(rng.choice([1, 1, 2])):
        tname = f"tmpl-{k}"
        p.templates.append(
            {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": tname},
             "spec": {"spec": mk_claim_spec()}}
        )  # fmt: skip
        tmpl.append(tname)

    if rng.random() < 0.3:
        p.extended = f"{driver}/gpu"
        f.add("extended-resource")
        if rng.random() < 0.5:
            p.device_plugin_node = rng.choice(NODES)
            f.add("device-plugin-node")
    if rng.random() < 0.3:
        p.hog_cpu = rng.choice(["12", "15", "15800m"])
        f.add("cpu-hog")

    used_shared: dict[str, int] = {}
    for i in range(rng.choice([1, 2, 2, 3, 4])):
        claims: dict[str, str] = {}
        templates: dict[str, str] = {}
        ext = p.extended is not None and rng.random() < 0.6
        n_claims = rng.choice([0, 1, 1, 2]) if ext else rng.choice([1, 1, 2])
        for c in range(n_claims):
            if shared and rng.random() < 0.5:
                cname = rng.choice(shared)
                if cname in claims.values():
                    continue
                claims[f"c{c}"] = cname
                used_shared[cname] = used_shared.get(cname, 0) + 1
                if used_shared[cname] > 1:
                    f.add("shared-claim")
                else:
                    f.add("claim")
            else:
                templates[f"c{c}"] = rng.choice(tmpl)
                f.add("template")
        pd = pod(f"pod-{i}", claims, templates, gated=True)
        res = pd["spec"]["containers"][0]["resources"]
        if ext:
            res["requests"][p.extended] = "1"
            res["limits"] = {p.extended: "1"}
            f.add("extended-resource-pod")
        if not pd["spec"]["resourceClaims"]:
            del pd["spec"]["resourceClaims"]
            del res["claims"]
        if rng.random() < 0.3:
            res["requests"]["cpu"] = rng.choice(["1", "2", "8"])
            f.add("cpu-request")
        r = rng.random()
        if r < 0.15:
            pd["spec"]["nodeSelector"] = {"kubernetes.io/hostname": rng.choice(NODES)}
            f.add("pod-nodeSelector")
        elif r < 0.3:
            op = rng.choice(["In", "NotIn"])
            pd["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": _sel(rng.sample(NODES, rng.choice([1, 2])), op)}}  # fmt: skip
            f.add("pod-affinity")
        p.pods.append(pd)
    return p


# --- playing it on the cluster --------------------------------------------------------------------------


@dataclass
class Outcome:
    seed: int
    pod: str
    predicted: str  # ok / blocked / undetermined
    real: str  # bound:NODE / unbound
    result: str  # agree / disagree / undetermined
    reason: str
    devices_note: str = ""

    def line(self) -> str:
        note = f" [{self.devices_note}]" if self.devices_note else ""
        return f"seed {self.seed} {self.pod}: predicted {self.predicted}, real {self.real}: {self.result} ({self.reason}){note}"


def predict(doc: dict) -> tuple[str, str]:
    """kubectl-dra's verdict once the gate is gone: its own rule (findings.model.verdict_from) without DRA006."""
    findings = [x for x in doc["findings"] if x["code"] != GATE_CODE]
    codes = sorted({x["code"] for x in findings})
    blocking = [x for x in findings if x.get("blocking")]
    if blocking:
        first = blocking[0]
        if any(c in OPENS_BLOCKED for c in codes):
            return (
                "undetermined",
                f"blocked but open ({','.join(codes)}): {first['code']}: {first.get('message', '')[:120]}",
            )
        return "blocked", f"{first['code']}: {first.get('message', '')[:150]} [{','.join(codes)}]"
    open_ = [x for x in findings if x["code"] in UNDETERMINED]
    if open_:
        return "undetermined", f"{open_[0]['code']}: {open_[0].get('message', '')[:150]} [{','.join(codes)}]"
    return "ok", ",".join(codes)


def _real(cluster, ns: str, pod_name: str) -> tuple[str, str]:
    deadline = time.monotonic() + PENDING_SECONDS
    while True:
        p = cluster.pod(ns, pod_name)
        if p["spec"].get("nodeName"):
            return f"bound:{p['spec']['nodeName']}", ""
        evs = [e for e in cluster.events(ns, pod_name) if e.get("reason") == "FailedScheduling"]
        if evs:
            # a last look: a retry may already have bound it
            time.sleep(0.5)
            p = cluster.pod(ns, pod_name)
            if p["spec"].get("nodeName"):
                return f"bound:{p['spec']['nodeName']}", ""
            return "unbound", evs[-1].get("message", "")[:200]
        if time.monotonic() > deadline:
            return "unbound", f"still pending after {PENDING_SECONDS}s"
        time.sleep(0.5)


def _predicted_devices(doc: dict) -> tuple[str | None, dict[str, list]]:
    """The devices kubectl-dra picks (DRA002: per claim, on the first node where the claims fit), when it names exactly
    one node where they fit: (that node, claim -> devices); else (None, {})."""
    out: dict[str, list] = {}
    node = None
    for x in doc["findings"]:
        if x["code"] != "DRA002":
            continue
        ev = x.get("evidence") or {}
        nodes = ev.get("nodes") or []
        if len(nodes) != 1:
            return None, {}
        node = nodes[0]
        claim = (x.get("subject") or {}).get("claim", "").split("/")[-1]
        if claim.startswith("<"):  # the scheduler's extended-resource claim: no object to compare with before PreBind
            continue
        out[claim] = sorted((r["driver"], r["pool"], r["device"]) for r in ev.get("results") or [])
    return node, out


def _ask(cluster, ns: str, name: str) -> tuple[str, str, dict | None]:
    """kubectl-dra's prediction for a gated pod (explain pod -o json, the queue's default): (verdict, why, doc)."""
    r = cluster.kubectl_dra("explain", "pod", name, "-n", ns, "-o", "json")
    try:
        doc = r.json
    except Exception:  # a crash is recorded, not hidden
        doc = None
    if doc is None or r.code not in (0, 1, 2):
        return "undetermined", f"exit {r.code}: {r.stderr.strip()[:160]}", None
    return (*predict(doc), doc)


def _pod_devices(cluster, ns: str, name: str) -> list[str]:
    """Every device allocated to the pod's claims (named, from templates, the extended-resource claim), as the
    queue's place writes them (driver/pool/device)."""
    pd = cluster.pod(ns, name)
    claims = {c["resourceClaimName"] for c in pd["spec"].get("resourceClaims") or [] if c.get("resourceClaimName")}
    st = pd.get("status") or {}
    claims |= {c["resourceClaimName"] for c in st.get("resourceClaimStatuses") or [] if c.get("resourceClaimName")}
    ext = (st.get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
    if ext:
        claims.add(ext)
    return sorted({"/".join(d) for c in claims for d in cluster.allocated_devices(ns, c)})


def _queue_order_error(cluster, ns: str, names: list[str]) -> str:
    """Where kubectl-dra's queue order (status -o json queue.order) is not the scheduler's for these pods (one
    priority, gated, created a second apart: creation order), what differs; else ""."""
    st = cluster.kubectl_dra("status", "-n", ns, "-o", "json")
    order = [
        x.split("/", 1)[1] for x in ((st.json or {}).get("queue") or {}).get("order") or [] if x.startswith(ns + "/")
    ]
    want = [n for n in names if n in order]
    return "" if order == want else f"kubectl-dra's queue order {order}, creation order {want}"


def _settle(cluster, ns: str, names: list[str], quiet: float = 12.0, cap: float = 60.0) -> dict:
    """name -> node once no pod has been bound for `quiet` seconds (a pod whose attempt erred is retried after a
    backoff of at most 10 s) or after `cap` seconds."""
    t0 = last = time.monotonic()
    seen: dict = {}
    while time.monotonic() - last < quiet and time.monotonic() - t0 < cap:
        now = {n: cluster.pod(ns, n)["spec"].get("nodeName") for n in names}
        if now != seen:
            seen, last = now, time.monotonic()
        time.sleep(1)
    return seen


def _play_queue(cluster, sc, ns: str, names: list[str], asked: dict) -> list[tuple]:
    """The gates go one at a time in creation order (the scheduler's order here), each pod's first answer awaited;
    then the retries are let run. (name, real, scheduler's message, devices note) per pod, real as it ends."""
    first, before = {}, {}
    for name in names:
        before[name] = set(_pod_devices(cluster, ns, name))  # shared claims the pods ahead already allocated
        sc.ungate(name)
        first[name] = _real(cluster, ns, name)
    # the scheduler retries a pod whose attempt erred (not one it found no room for: events requeue that one)
    erred = any(real == "unbound" and not msg.startswith("0/") for real, msg in first.values())
    final = _settle(cluster, ns, names) if erred else {}
    ends = {}
    for name in names:
        real, msg = (f"bound:{final[name]}", "") if final.get(name) else first[name]
        if real != first[name][0] and first[name][0] == "unbound":
            msg = f"bound after a retry; first: {first[name][1]}"
        ends[name] = (real, msg)
    out = []
    for name in names:
        real, msg = ends[name]
        predicted, _why, doc = asked[name]
        place = (doc or {}).get("queue") or {}
        note = ""
        if predicted == "ok" and place.get("node") and real == f"bound:{place['node']}" and not place["estimated"]:
            # The devices are the place's when the pods ahead that take devices it could use went where the
            # estimated order put them (one that went to another node leaves other devices here: seed 371)
            moved = [a["pod"] for a in place.get("ahead") or [] if not _went_as_estimated(a["pod"], ns, asked, ends)]
            got = sorted(set(_pod_devices(cluster, ns, name)) - before[name])
            note = "queue devices: same"
            if moved:
                note = f"queue devices: not compared ({', '.join(moved)}, ahead of it, went to another node)"
            elif got != sorted(place.get("devices") or []):
                note = f"queue devices: kubectl-dra placed {place.get('devices')}, the scheduler allocated {got}"
        out.append((name, real, msg, note))
    return out


def _went_as_estimated(ref: str, ns: str, asked: dict, ends: dict) -> bool:
    """Whether the pod ahead (namespace/name) ended on the node its own place named (or, with none, unbound)."""
    pod_ns, _, name = ref.partition("/")
    if pod_ns != ns or name not in asked or name not in ends:
        return False
    node = (((asked[name][2] or {}).get("queue")) or {}).get("node")
    return ends[name][0] == (f"bound:{node}" if node else "unbound")


def _compare(predicted: str, real: str) -> str:
    if predicted == "undetermined":
        return "undetermined"
    return "agree" if (predicted == "ok") == real.startswith("bound") else "disagree"


def run(cluster, seed: int, queue: bool = False) -> list[Outcome]:
    """queue: the pods are created a second apart (an order the API shows), kubectl-dra is asked about every pod
    before any gate goes (and its queue order checked), the gates go one at a time in that order, and each pod is
    judged as it ends once the scheduler's retries have run: the whole queue is predicted at once (issue 28), where
    the default asks about each pod just before its own gate goes."""
    plan = build(seed)
    ns = cluster.create_namespace(f"{'queue' if queue else 'agree'}-{seed}")
    sc = Scenario(cluster, ns, plan.name)
    api = cluster.api
    patched = False
    held = None
    out: list[Outcome] = []
    try:
        cls_spec: dict = {"selectors": [{"cel": {"expression": f'device.driver == "{plan.driver}"'}}]}
        if plan.extended:
            cls_spec["extendedResourceName"] = plan.extended
        sc._create_cluster(
            f"{RES}/deviceclasses",
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": plan.cls},
                "spec": cls_spec,
            },
        )
        for sname, spec in plan.slices:
            sc._create_cluster(
                f"{RES}/resourceslices",
                {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": sname},
                 "spec": {"driver": plan.driver, **spec}},
            )  # fmt: skip
        if plan.device_plugin_node:
            api.patch(
                f"/api/v1/nodes/{plan.device_plugin_node}/status",
                {"status": {"capacity": {plan.extended: "1"}, "allocatable": {plan.extended: "1"}}},
            )
            patched = True
        if plan.hog_cpu:
            held = hog(sc, plan.hog_cpu)
        for o in plan.claims + plan.templates:
            sc.create(o)
        for pd in plan.pods:
            sc.create(pd)
            if queue:
                time.sleep(1.1)  # creationTimestamp has seconds: pods a second apart have an order
        # the controller makes the template claims of gated pods too: let it, so kubectl-dra sees them
        for pd in plan.pods:
            want = len([c for c in pd["spec"].get("resourceClaims", []) if "resourceClaimTemplateName" in c])
            if want:
                wait_for(
                    f"claims of {pd['metadata']['name']}",
                    lambda n=pd["metadata"]["name"], w=want: (
                        len(cluster.pod(ns, n).get("status", {}).get("resourceClaimStatuses", [])) >= w
                    ),  # fmt: skip
                    30,
                    0.3,
                )
        names = [pd["metadata"]["name"] for pd in plan.pods]
        if queue:
            keep = os.environ.get("KUBECTL_DRA_QUEUE_DUMP")  # a directory: the input as asked, to replay offline
            if keep:
                cluster.kubectl_dra("dump", "-n", ns, "--output-file", os.path.join(keep, f"seed{seed}-{ns}.yaml"))
            asked = {n: _ask(cluster, ns, n) for n in names}
            wrong_order = _queue_order_error(cluster, ns, names)
            if wrong_order:
                out.append(Outcome(seed, "-", "-", "-", "error", wrong_order))
            for name, real, msg, note in _play_queue(cluster, sc, ns, names, asked):
                predicted, why, _doc = asked[name]
                result = _compare(predicted, real)
                out.append(
                    Outcome(seed, name, predicted, real, result, f"{why} | scheduler: {msg}" if msg else why, note)
                )
            return out
        for name in names:
            predicted, why, doc = _ask(cluster, ns, name)
            pred_node, pred_dev = _predicted_devices(doc) if predicted == "ok" else (None, {})
            sc.ungate(name)
            real, msg = _real(cluster, ns, name)
            result = _compare(predicted, real)
            note = ""
            if pred_dev and real == f"bound:{pred_node}":
                real_dev = {c: cluster.allocated_devices(ns, c) for c in pred_dev}
                note = "devices: same"
                if real_dev != pred_dev:
                    note = f"devices: kubectl-dra picked {pred_dev} on {pred_node}, the scheduler allocated {real_dev}"
            out.append(Outcome(seed, name, predicted, real, result, f"{why} | scheduler: {msg}" if msg else why, note))
    finally:
        cluster.delete_pods(ns)
        if patched:
            esc = plan.extended.replace("/", "~1")
            try:
                api.patch(
                    f"/api/v1/nodes/{plan.device_plugin_node}/status",
                    [{"op": "remove", "path": f"/status/{k}/{esc}"} for k in ("capacity", "allocatable")],
                    kind="json",
                )
            except ApiError:
                pass
        sc.cleanup()
        cluster.delete_namespace(ns)
        del held
    return out


def parse_seeds(spec: str) -> list[int]:
    """'0-199', '3,7,10-12'."""
    seeds: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        if "-" in part:
            a, b = part.split("-", 1)
            seeds.extend(range(int(a), int(b) + 1))
        elif part:
            seeds.append(int(part))
    return seeds
