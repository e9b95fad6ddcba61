"""-w keeps each pool's devices and their matrix rows across answers (analyze/devices/blocks.py): after every kind
of change a watch delivers, the answer with them kept is the answer computed afresh, and the devices of an unchanged
pool are not checked again."""

from __future__ import annotations

import copy

import builders
import pytest
from builders import claim, dclass, device, request, rslice

from kubectl_dra import runtime
from kubectl_dra.analyze.devices import checks
from kubectl_dra.analyze.reports.explain import explain_pod
from kubectl_dra.analyze.reports.status import scan
from kubectl_dra.features import Semantics
from kubectl_dra.model import objects
from tests.unit.test_watch_updates import watching  # noqa: F401 (the fixture: -w after its first answer)

pytestmark = pytest.mark.usefixtures("watching")
S37 = Semantics.for_version((1, 37))
NS = "team-b"
BIG = 'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'


MEM = {"name": "mem", "counters": {"memory": {"value": "60Gi"}}}  # one part at a time


def _part(name: str) -> dict:
    return device(
        name, memory="40Gi", consumesCounters=[{"counterSet": "mem", "counters": {"memory": {"value": "40Gi"}}}]
    )


def _cluster() -> dict:
    """name -> object: three nodes, node-local GPUs, a slice for the nodes of zone a, a partitionable device, an
    incomplete pool, an allocated claim and two pending pods (one asks for 40Gi or more)."""
    objs = [
        dclass(),
        builders.node("node-01", allocatable={}, zone="a"),
        builders.node("node-02", allocatable={}, zone="b"),
        builders.node("node-03", allocatable={}, zone="b"),
        rslice("node-01-gpus", [device("gpu-0", memory="24Gi"), device("gpu-1", memory="80Gi")], "node-01"),
        rslice("node-02-gpus", [device("gpu-0", memory="24Gi"), device("gpu-1", memory="24Gi")], "node-02"),
        rslice(
            "zone-a",
            [device("net-0", memory="80Gi")],
            pool="zone-a",
            nodeSelector={
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
            },
        ),
        rslice("node-03-half", [device("gpu-0", memory="80Gi")], "node-03", count=2),  # incomplete: 1 of 2
        rslice("node-03-counters", [], "node-03", pool="parts", count=2, sharedCounters=[MEM]),
        rslice("node-03-parts", [_part("part-0"), _part("part-1")], "node-03", pool="parts", count=2),
        # one pool, a device name in two slices for two nodes: invalid, but valid on each node (it sees one slice)
        rslice("dup-a", [device("x-0")], "node-01", pool="dup", count=2),
        rslice("dup-b", [device("x-0")], "node-02", pool="dup", count=2),
        claim("held", [request()], results=[("gpu", "node-01", "gpu-1")], node="node-01", ns=NS),
        builders.pod("web", [("gpu", "claim", "web-gpu")], ns=NS),
        claim("web-gpu", [request()], ns=NS),
        builders.pod("big", [("gpu", "claim", "big-gpu")], ns=NS),
        claim("big-gpu", [request(selectors=[{"cel": {"expression": BIG}}])], ns=NS),
    ]
    return {(o["kind"], o["metadata"]["name"]): o for o in objs}


def _answers(objs: dict) -> list:
    """What explain pod (both pods, with their device rows) and status answer on these objects."""
    snap = objects.snapshot_from_objects(list(objs.values()), NS)
    out = [explain_pod(snap, S37, NS, name).to_dict() for name in ("web", "big")]
    return out + [scan(snap, S37, NS).to_dict()]


def _fresh(objs: dict) -> list:
    runtime._LONG_RUNNING[0] = False
    try:
        return _answers(objs)
    finally:
        runtime._LONG_RUNNING[0] = True


def _replaced(objs: dict, kind: str, name: str, change) -> None:
    """A watch event: the object replaced by a changed copy (the objects not changed stay the same objects)."""
    new = copy.deepcopy(objs[(kind, name)])
    change(new)
    objs[(kind, name)] = new


def _allocated(objs: dict, name: str, pool: str, device_name: str, node: str) -> None:
    """A watch event: a claim created already allocated (as the scheduler's write shows up)."""
    objs[("ResourceClaim", name)] = claim(name, [request()], results=[("gpu", pool, device_name)], node=node, ns=NS)


def _steps():
    def resize(s):
        s["spec"]["devices"][1]["capacity"]["memory"]["value"] = "80Gi"

    def relabel(n):
        n["metadata"]["labels"]["zone"] = "a"

    def taint(n):
        n["spec"]["taints"] = [{"key": "maintenance", "effect": "NoSchedule"}]

    def retaint(n):
        n["spec"]["taints"] = [{"key": "upgrade", "effect": "NoSchedule"}]

    def device_taint(s):
        s["spec"]["devices"][0]["taints"] = [{"key": "broken", "effect": "NoSchedule"}]

    def heartbeat(n):
        n.setdefault("status", {})["conditions"] = [{"type": "Ready", "status": "True", "lastHeartbeatTime": "now"}]

    def complete(s):
        s["spec"]["pool"]["resourceSliceCount"] = 1

    def duplicate(s):
        s["spec"]["devices"][1]["name"] = "gpu-0"

    def to_node_01(s):
        s["spec"]["nodeName"] = "node-01"

    return [
        ("the other slice of an invalid pool moved", lambda o: _replaced(o, "ResourceSlice", "dup-b", to_node_01)),
        ("a slice updated", lambda o: _replaced(o, "ResourceSlice", "node-02-gpus", resize)),
        ("a claim allocated", lambda o: _allocated(o, "other", "node-02", "gpu-1", "node-02")),
        ("node labels", lambda o: _replaced(o, "Node", "node-02", relabel)),
        ("a node tainted", lambda o: _replaced(o, "Node", "node-01", taint)),
        ("another taint", lambda o: _replaced(o, "Node", "node-01", retaint)),
        ("a device tainted", lambda o: _replaced(o, "ResourceSlice", "node-01-gpus", device_taint)),
        ("a heartbeat", lambda o: _replaced(o, "Node", "node-03", heartbeat)),
        ("a pool completed", lambda o: _replaced(o, "ResourceSlice", "node-03-half", complete)),
        ("a claim deallocated", lambda o: o.pop(("ResourceClaim", "held"))),
        ("a pool made invalid", lambda o: _replaced(o, "ResourceSlice", "node-02-gpus", duplicate)),
        ("a part allocated", lambda o: _allocated(o, "part", "parts", "part-0", "node-03")),
        ("a slice deleted", lambda o: o.pop(("ResourceSlice", "zone-a"))),
        ("the node untainted", lambda o: _replaced(o, "Node", "node-01", lambda n: n["spec"].pop("taints"))),
    ]


def test_every_answer_with_rows_kept_is_the_answer_computed_afresh():
    objs = _cluster()
    runtime.next_evaluation()
    assert _answers(objs) == _fresh(objs)
    for what, change in _steps():
        change(objs)
        runtime.next_evaluation()
        kept = _answers(objs)
        assert kept == _fresh(objs), what


def test_the_devices_of_an_unchanged_pool_are_not_checked_again(monkeypatch):
    calls = []
    real = checks.device_checks

    def counted(req, class_sel, e, ctx, read=None):
        calls.append(e.did)
        return real(req, class_sel, e, ctx, read)

    monkeypatch.setattr(checks, "device_checks", counted)
    objs = _cluster()
    runtime.next_evaluation()
    _answers(objs)
    assert calls
    calls.clear()
    runtime.next_evaluation()
    _answers(objs)  # nothing changed
    assert calls == []
    _replaced(objs, "Node", "node-03", lambda n: n.setdefault("status", {}).update(conditions=[{"type": "Ready"}]))
    runtime.next_evaluation()
    _answers(objs)  # a heartbeat changes nothing a row reads
    assert calls == []
    _replaced(objs, "ResourceSlice", "node-01-gpus", lambda s: s["spec"]["devices"][0].update(attributes={}))
    runtime.next_evaluation()
    _answers(objs)  # the updated slice's two devices, for each of the two requests, once more
    assert sorted(calls) == sorted([("gpu.example.com", "node-01", f"gpu-{i}") for i in (0, 1)] * 2), calls
    calls.clear()
    _allocated(objs, "part", "parts", "part-0", "node-03")
    runtime.next_evaluation()
    _answers(objs)  # a claim allocated in one pool: that pool's devices once more
    assert {d[1] for d in calls} == {"parts"}, calls
