"""The inventory on literals: device states, the partition headroom (the allocator's counter rule, one device after
another, types as alternatives) and the filters."""

from __future__ import annotations

import pytest
from builders import claim, dclass, device, node, request, rslice

from kubectl_dra.analyze.reports.inventory import inventory
from kubectl_dra.errors import DraError
from kubectl_dra.features import Semantics
from kubectl_dra.model.objects import snapshot_from_objects
from kubectl_dra.render.options import RenderOptions

S37 = Semantics.for_version((1, 37))
D = "gpu.example.com"


def part(name, gi, profile):
    uses = [{"counterSet": "gpu-0", "counters": {"memory": {"value": f"{gi}Gi"}}}]
    return device(name, memory=f"{gi}Gi", attrs={"profile": profile}, consumesCounters=uses)


def objects(allocated=(), total="40Gi"):
    devices = [part(f"1g-{i}", 5, "1g") for i in range(4)] + [part("3g-0", 20, "3g"), part("3g-1", 20, "3g")]
    counters = [{"name": "gpu-0", "counters": {"memory": {"value": total}}}]
    objs = [
        node("node-01", hostname=False, zone="a"),
        node("node-02", hostname=False, zone="b"),
        dclass(),
        rslice("parts", devices, "node-01", pool="p", count=2),
        rslice("counters", [], "node-01", pool="p", count=2, sharedCounters=counters),
        rslice("fabric", [device("link-0")], pool="f", driver="fabric.example.com", allNodes=True),
    ]
    for i, dev in enumerate(allocated):
        objs.append(claim(f"c{i}", [request()], results=[("gpu", "p", dev)], uid=False))
    return snapshot_from_objects(objs, "default")


def fits(report):
    return {h.example.split("-")[0]: (h.free, h.fit) for h in report.headroom}


def test_headroom_is_per_partition_type_and_not_additive():
    # 40Gi: eight 1g (5Gi) would fit, there are four; two 3g (20Gi) fit; together they cannot all fit.
    r = inventory(objects(), S37)
    assert fits(r) == {"1g": (4, 4), "3g": (2, 2)}
    # One 3g allocated: 20Gi left, so the other 3g still fits, and every 1g.
    r = inventory(objects(allocated=["3g-0"]), S37)
    assert fits(r) == {"1g": (4, 4), "3g": (1, 1)}
    # A 3g and two 1g allocated: 10Gi left: two more 1g, no 3g.
    r = inventory(objects(allocated=["3g-0", "1g-0", "1g-1"]), S37)
    assert fits(r) == {"1g": (2, 2), "3g": (1, 0)}
    states = {x.device: x.state for x in r.rows}
    assert states["3g-1"] == "exhausted" and states["1g-2"] == "free" and states["1g-0"] == "allocated"


def test_a_smaller_counter_set_fits_fewer():
    r = inventory(objects(total="12Gi"), S37)
    assert fits(r) == {"1g": (4, 2), "3g": (2, 0)}
    assert {x.device: x.state for x in r.rows}["3g-0"] == "exhausted"


def test_filters():
    r = inventory(objects(allocated=["1g-0"]), S37, {"free": True, "driver": D})
    assert sorted(x.device for x in r.rows) == ["1g-1", "1g-2", "1g-3", "3g-0", "3g-1"] and r.total == 7
    # An allNodes device is on every node; a node-local one only on its own.
    assert [x.device for x in inventory(objects(), S37, {"node": "node-02"}).rows] == ["link-0"]
    assert len(inventory(objects(), S37, {"node": "node-01"}).rows) == 7
    assert [x.device for x in inventory(objects(), S37, {"class": "gpu", "pool": "p"}).rows][:1] == ["1g-0"]
    where = 'device.attributes["gpu.example.com"].profile == "3g"'
    r = inventory(objects(), S37, {"where": where})
    assert [x.device for x in r.rows] == ["3g-0", "3g-1"]
    assert r.where_errors and "link-0" in r.where_errors[0]  # no such key on the fabric device: not a match
    with pytest.raises(DraError, match="--where"):
        inventory(objects(), S37, {"where": "device.attributes["})


def test_counter_usage_per_counter_set():
    r = inventory(objects(allocated=["3g-0", "1g-0"]), S37)
    assert [(c["counterSet"], c["counter"], c["capacity"], c["used"], c["left"]) for c in r.counters] == [
        ("gpu-0", "memory", "40Gi", "25Gi", "15Gi")
    ]


def test_streamed_json_is_the_document_byte_for_byte():
    """-o json writes the device list in chunks (render/devices.py _stream_json); the text is exactly the one
    serialisation of the whole report, also across chunk boundaries."""
    import io

    from kubectl_dra import jsonio
    from kubectl_dra.render import devices as render
    from kubectl_dra.render.structured import _default

    devices = [device(f"d-{i}", attrs={"index": i}) for i in range(1100)]
    many = rslice("many", devices, pool="m", allNodes=True)
    snap = objects()
    report = inventory(snapshot_from_objects([*snap.nodes, *snap.classes, *snap.slices, many], "default"), S37)
    assert len(report.rows) > 2 * render._CHUNK
    out = io.StringIO()
    render.render_inventory(report, RenderOptions("json"), out, True)
    assert out.getvalue() == jsonio.dumps(report.to_dict(), default=_default) + "\n"


def test_devices_reads_no_events(tmp_path):
    """devices never reads Events: its gather leaves them out (live: no list request; files: not even checked), so
    a dump's 10,000 events cost it nothing; other commands keep them."""
    import json

    from kubectl_dra.cli.common import gather_for
    from kubectl_dra.cli.options import Options

    event = {"kind": "Event", "apiVersion": "v1", "metadata": {"name": "e1", "namespace": "default"}, "spec": []}
    good = dict(event, metadata={"name": "e2", "namespace": "default"}, reason="FailedScheduling")
    good.pop("spec")
    f = tmp_path / "dump.json"
    snap = objects()
    base = [*snap.nodes, *snap.classes, *snap.slices]
    f.write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": [*base, event]}))
    o = Options.from_click({"from_files": [str(f)]})
    snap = gather_for(o, events=False).snapshot
    assert snap.events == () and len(snap.slices) == len(objects().slices) > 0
    with pytest.raises(DraError, match="Event e1: .spec must be a mapping"):
        gather_for(o)  # the same file for a command that reads events
    f.write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": [*base, good]}))
    assert [e["name"] for e in gather_for(o).snapshot.events] == ["e2"]
