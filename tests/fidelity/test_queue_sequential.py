"""The queue (kubectl_dra/analyze/queue/) against upstream, pod after pod (docs/fidelity.md).

A sequence is one node, the generator's slices, classes and allocated claims, and 2-5 pending pods of 1-2 claims
each, created one second apart (so that kube-scheduler's queue order is the order they were drawn in). Upstream: the
oracle allocates pod i against the scenario's allocated claims plus what it allocated for pods 0..i-1 (the
scheduler's in-flight allocations). Ours: `judge_queue` over a snapshot holding the same objects and one Pod per
pod. Per pod, fits or not and, when it fits, the exact results of every claim (sets per request) must agree.

A pod that gets no allocation (unallocatable, failed on the node, or an error that aborts its attempt) takes nothing:
which of these it is, is explain's business (test_fidelity.py compares it). Where upstream iterates pools in Go map
order, the oracle reports every allocation it saw: ours must be one of them, and the sequence goes on with it.
Inconclusive (counted): our queue leaves a pod undetermined (alone, or in its place; the sequence goes on with
ours if upstream can take it, else with upstream's one answer, and the pods after it are still compared where ours is
certain), or upstream panics, times out, or may go several ways none of which is ours (the sequence stops there).
A disagreement fails the test with the sequence shrunk (generator.shrink: a claim removed is removed from its pod).
"""

from __future__ import annotations

import collections
import copy
import json
import random
import time
import traceback
import uuid
from dataclasses import replace
from pathlib import Path

import builders
import pytest

from . import compare, gates, generator
from .oracle import Oracle

pytestmark = pytest.mark.oracle

HERE = Path(__file__).resolve().parent
SEED = "queue"
N = 200
VERSIONS = list(gates.VERSIONS)
NS = generator.NAMESPACE
# A pod's answer when it gets no allocation: unallocatable, failed on the node, or an error (which aborts the attempt:
# the pod stays pending and takes nothing, the scheduler's message is explain's business, compared by test_fidelity).
NONE = "none"


def gen_sequence(version: str, seed: int | str, index: int, attempt: int = 0) -> dict:
    """A scenario (generator.py's shape, so that its shrinker applies) whose claims belong to pods: claim
    pod-<p>-claim-<j> is the j-th claim of pod p. Devices are scarce: one to three per slice."""
    rng = random.Random(f"kubectl-dra-queue:{seed}:{version}:{index}:{attempt}")
    c = generator.Ctx(rng, version)
    drivers = list(generator.DRIVERS[: rng.choice((1, 1, 2))])
    c.gates = generator.gen_gates(c)
    c.clean = rng.random() < 0.9
    slices = generator.gen_slices(c, drivers, True)
    for sl in slices:
        del (sl["spec"].get("devices") or [])[rng.choice((1, 2, 2, 3)) :]
    classes = generator.gen_classes(c, drivers)
    for cl in classes:
        if rng.random() < 0.8:
            del (cl["spec"].get("selectors") or [])[1:]
    pods: list[list[dict]] = []
    for p in range(rng.randint(2, 5)):
        if pods and rng.random() < 0.35:  # a replica of the pod before it (same claim specs)
            pods.append([rename(x, f"pod-{p}-claim-{j}") for j, x in enumerate(pods[-1])])
            continue
        pods.append(
            [generator.gen_claim(c, f"pod-{p}-claim-{j}", classes, drivers) for j in range(rng.choice((1, 1, 2)))]
        )
        for claim in pods[-1]:  # milder than the generator's claims, so that most pods fit alone (and then compete)
            dev = claim["spec"]["devices"]
            if rng.random() < 0.6:
                del dev["requests"][1:]
                dev.pop("constraints", None)
        for body in generator._bodies(pods[-1]):
            if rng.random() < 0.5:
                body.pop("selectors", None)
            if body.get("count") == 1 and rng.random() < 0.4:
                body["count"] = 2
    claims = [x for cs in pods for x in cs]
    allocated = generator.gen_allocated(c, slices) if rng.random() < 0.5 else []
    node = generator.node_obj(c)
    if "cel-cost-limit" in c.features:  # minutes per run upstream (every pool order, every pod): drawn again
        return gen_sequence(version, seed, index, attempt + 1)
    sub = f"kubectl-dra-queue:{seed}:{version}:{index}:{attempt}"
    generator.optional_node_operations(random.Random(sub + ":nodeops"), version, node, slices, c)
    generator.node_field_selectors(random.Random(sub + ":fields"), slices, c)
    if c.minor >= 38:
        generator.v138_inputs(random.Random(sub + ":v138"), claims, allocated, slices, c)
    return {
        "id": f"queue/{version}/{seed}/{index}",
        "version": version,
        "featureGates": c.gates,
        "node": node,
        "deviceClasses": classes,
        "claims": claims,
        "allocatedClaims": allocated,
        "slices": slices,
        "features": sorted(c.features),
    }


def rename(claim: dict, name: str) -> dict:
    return dict(copy.deepcopy(claim), metadata=dict(claim["metadata"], name=name, uid=f"uid-{name}"))


def pods_of(s: dict) -> dict[str, list[dict]]:
    """Pod name -> its claims, in queue order."""
    out: dict[str, list[dict]] = {}
    for c in s["claims"]:
        out.setdefault(c["metadata"]["name"].rsplit("-claim-", 1)[0], []).append(c)
    return out


def pod_object(name: str, claims: list[dict], i: int) -> dict:
    refs = [(f"c{j}", "claim", c["metadata"]["name"]) for j, c in enumerate(claims)]
    created = f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z"
    app = [{"name": "app", "image": "app:1"}]
    return builders.pod(name, refs, ns=NS, uid=f"uid-{name}", created=created, containers=app)


def key(claims: list[dict]) -> str:
    """An allocation as compare.py canonicalises it, each claim's results as a set (per request)."""
    canon = compare.canon_allocation({"outcome": "allocated", "claims": claims})["claims"]
    return json.dumps(
        [[c["claim"], sorted(json.dumps(r, sort_keys=True) for r in c["results"]), c["nodeSelector"]] for c in canon]
    )


def ours(s: dict) -> dict[str, tuple[bool, str, str | None]]:
    """Pod -> (certain, answer, why not certain): answer is key() of what the queue's dry-run allocates for it, or
    NONE (it takes nothing)."""
    from kubectl_dra.analyze.pod.dryrun import Analysis
    from kubectl_dra.analyze.queue import judge_queue
    from kubectl_dra.analyze.reports.explain import explain_pod
    from kubectl_dra.errors import DraError
    from kubectl_dra.features import KNOWN_GATES, Semantics, parse_version
    from kubectl_dra.model.objects import snapshot_from_objects

    gate_map = {k: False for k in KNOWN_GATES}  # as scenario.evaluate: the scenario's gate map is complete
    gate_map.update({k: bool(v) for k, v in s["featureGates"].items() if k in KNOWN_GATES})
    sem = Semantics.for_version(parse_version(s["version"]), gate_map, "flag")
    pods = pods_of(s)
    objs = [s["node"], *s["deviceClasses"], *s["slices"], *s["allocatedClaims"], *s["claims"]]
    objs += [pod_object(name, cs, i) for i, (name, cs) in enumerate(pods.items())]
    node = next(o for o in objs if o.get("kind") == "Node")
    node = {
        **node,
        "status": {**(node.get("status") or {}), "allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}},
    }
    objs = [node if o.get("kind") == "Node" else o for o in objs]
    # As a live read gives it: the pods bound to the node are known (none), so NodeResourcesFit passes and the
    # allocations are what this test compares (the upstream oracle runs the allocator alone).
    snap = replace(snapshot_from_objects(copy.deepcopy(objs), NS), bound_pods=True)
    base = Analysis(snap, sem)
    alone, out = {}, {}
    by_name = {p["metadata"]["name"]: p for p in snap.pods}
    for name in pods:
        fork = base.fork()
        try:
            alone[(NS, name)] = (by_name[name], explain_pod(snap, sem, NS, name, fork, True), fork)
        except DraError as e:
            out[name] = (False, NONE, f"not explained: {e.message}")
    queue, _ = judge_queue(snap, sem, base, alone, explain_pod)
    for name in pods:
        place = queue.places.get(f"{NS}/{name}")
        if name in out:
            continue
        if place is None:  # not in the queue: alone it gets nothing (or errs), or is undetermined
            v = alone[(NS, name)][1].verdict
            out[name] = (True, NONE, None) if v.determined and v.blocked else (False, NONE, "undetermined alone")
        else:
            answer = key([oracle_shaped(ref, r) for ref, r in place.claims]) if place.node is not None else NONE
            # (certain to fit on a node and devices the order decides, alternatives.py: not one allocation to compare)
            certain = place.outcome != "undetermined" and (place.exact or place.node is None)
            out[name] = (certain, answer, None if certain else place.reason)
    return out


def oracle_shaped(ref: str, r) -> dict:
    """One claim's AllocationResult as the oracle reports it (as kubectl_dra.analyze.scenario.evaluate does)."""
    from kubectl_dra.quantity import format_quantity

    results = []
    for x in r.results:
        e = {k: x[k] for k in ("request", "driver", "pool", "device", "adminAccess") if k in x}
        e["consumedCapacity"] = {k: format_quantity(q) for k, q in (x.get("consumedCapacity") or {}).items()}
        results.append(e)
    return {"claim": ref, "results": results, "nodeSelector": r.node_selector}


def allocated(claims: list[dict], got: dict, s: dict) -> list[dict]:
    """The pod's claims as upstream allocated them (got: an allocation of the oracle's output). The oracle does not
    report shareIDs: upstream gives one to every result on a device that allows multiple allocations when
    DRAConsumableCapacity is on (allocateDevice), the allocated state counts those as shares."""
    multi = {
        (sl["spec"]["driver"], sl["spec"]["pool"]["name"], d["name"])
        for sl in s["slices"]
        for d in sl["spec"].get("devices") or []
        if d.get("allowMultipleAllocations")
    }
    consumable = s["featureGates"].get("DRAConsumableCapacity")
    out = []
    for claim, res in zip(claims, got["claims"]):
        results = copy.deepcopy(res["results"])
        for i, r in enumerate(results):
            if consumable and (r["driver"], r["pool"], r["device"]) in multi:
                r["shareID"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{claim['metadata']['name']}/{i}"))
        alloc = {"devices": {"results": results}}
        if res.get("nodeSelector"):
            alloc["nodeSelector"] = res["nodeSelector"]
        out.append(dict(copy.deepcopy(claim), status={"allocation": alloc}))
    return out


def answers(out: dict) -> dict[str, dict]:
    """Upstream's answers for one pod (one per distinct allocation the oracle saw): answer -> allocation."""
    return {
        key(a["claims"]) if a["outcome"] == "allocated" else NONE: a
        for a in out.get("alternatives") or [out["allocation"]]
    }


def judge_sequence(oracle: Oracle, s: dict, stats: collections.Counter | None = None) -> tuple[str, list]:
    """("agreed" | "disagreed" | "inconclusive", notes). stats counts the pods compared ("fits", "none"), and
    "short" (a pod gets no allocation upstream) and "contested" (it would get one alone) once per sequence."""
    stats = collections.Counter() if stats is None else stats
    try:
        mine = ours(s)
    except Exception:  # a crash of ours is a disagreement, as in compare.judge
        return "disagreed", [{"crash": traceback.format_exc(limit=8)}]
    fed = copy.deepcopy(s["allocatedClaims"])
    status, notes, seen = "agreed", [], set()
    for name, claims in pods_of(s).items():
        step = dict(s, claims=claims, allocatedClaims=fed)
        out = oracle.evaluate(step)
        why = compare.inconclusive(out)
        if why:
            return "inconclusive", notes + [f"{name}: {why}"]
        certain, answer, why_not = mine[name]
        ups = answers(out)
        if certain and answer not in ups and not out.get("deterministic"):
            ups = answers(compare.with_more_runs(oracle, step, out))
        if certain and answer not in ups:
            return "disagreed", notes + [{"pod": name, "ours": answer, "upstream": list(ups)}]
        if certain:
            stats["fits" if answer != NONE else "none"] += 1
        else:
            status = "inconclusive"
            notes.append(f"{name}: {why_not}")
        pick = answer if answer in ups else next(iter(ups)) if len(ups) == 1 else None
        if pick is None:
            return "inconclusive", notes + [f"{name}: upstream may go several ways, none of them ours"]
        if pick != NONE:
            fed = fed + allocated(claims, ups[pick], s)
            continue
        seen.add("short")
        if "contested" not in seen and fed != s["allocatedClaims"]:
            alone = oracle.evaluate(dict(step, allocatedClaims=s["allocatedClaims"]))
            if set(answers(alone)) != {NONE}:
                seen.add("contested")
    stats.update(seen)
    return status, notes


@pytest.mark.parametrize("version", VERSIONS)
def test_queue_agrees_with_upstream_pod_after_pod(version):
    t0 = time.time()
    tally: collections.Counter = collections.Counter()
    bad, why_open = [], collections.Counter()
    with Oracle(version) as oracle:
        for i in range(N):
            s = gen_sequence(version, SEED, i)
            status, notes = judge_sequence(oracle, s, tally)
            tally[status] += 1
            if status == "inconclusive":
                why_open[str(notes[-1]).split(": ", 1)[1][:50]] += 1
            if status == "disagreed":
                bad.append((s, notes))
        report = []
        for s, notes in bad[:2]:
            m = generator.shrink(s, lambda c: judge_sequence(oracle, c)[0] == "disagreed", budget_s=60)
            report.append(f"{s['id']}: {json.dumps(notes)[:1500]}\nminimal: {json.dumps(m)}")
    print(f"\n{version}: {N} sequences in {time.time() - t0:.1f}s: {dict(tally)}; inconclusive: {dict(why_open)}")
    assert not bad, f"{len(bad)} sequence(s) disagree with upstream {version}:\n" + "\n\n".join(report)
    assert tally["inconclusive"] <= 0.1 * N, (dict(tally), dict(why_open))
    # Devices are scarce: in most sequences a pod gets nothing, in many one that alone would get devices (the pods
    # ahead took them); and many allocations are compared device by device.
    assert tally["short"] >= 0.5 * N and tally["contested"] >= 0.15 * N, dict(tally)
    assert tally["fits"] >= 0.6 * N, dict(tally)


@pytest.mark.parametrize("path", sorted((HERE / "sequences").glob("*.json")), ids=lambda p: p.stem)
def test_fixed_sequences(path):
    """Hand-written sequences (tests/fidelity/sequences/, meta.why says what each once caught), every minor."""
    base = json.loads(path.read_text())
    for version in VERSIONS:
        s = dict(base, version=version, featureGates=dict(gates.defaults(version), **base["meta"].get("gates", {})))
        stats: collections.Counter = collections.Counter()
        with Oracle(version) as oracle:
            status, notes = judge_sequence(oracle, s, stats)
        assert status != "disagreed", f"{path.name} on {version}: {json.dumps(notes)[:1500]}"
        assert stats["fits"] and stats["none"], (version, dict(stats))
