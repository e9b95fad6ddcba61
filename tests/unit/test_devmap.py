"""The device map (analyze/reports/devmap.py, render/devmap.py): every state reached from the golden scenario
devices-map, nodes in the same states on one row, a glyph and a colour per state (NO_COLOR: ASCII glyphs alone),
80 columns, and 5,000 nodes on one screen."""

from __future__ import annotations

import io
import re
from pathlib import Path

from builders import claim, dclass, device, node, request, rslice

from kubectl_dra.analyze.reports.devmap import MAP_STATES, POD_STATES, device_map, pod_map
from kubectl_dra.analyze.reports.inventory import inventory
from kubectl_dra.features import Semantics
from kubectl_dra.gather.files import load_files
from kubectl_dra.model.objects import snapshot_from_objects
from kubectl_dra.render.devmap import DEVICE_LEGEND, POD_LEGEND, render_map
from kubectl_dra.render.terminal import Out

S37 = Semantics.for_version((1, 37))
INPUT = Path(__file__).resolve().parents[1] / "scenarios" / "devices-map" / "input.yaml"
SGR = re.compile(r"\x1b\[[0-9;]*m")


def scenario_map(grouped=True):
    snap = load_files([str(INPUT)], None)
    return device_map(inventory(snap, S37), snap, S37, grouped=grouped)


def draw(dmap, color, ascii_marks, width=80, legend=DEVICE_LEGEND):
    buf = io.StringIO()
    render_map(dmap, Out(buf, color, width, ascii_marks=ascii_marks), legend)
    return buf.getvalue()


def test_every_state_is_reached_with_its_holder():
    dmap = scenario_map(grouped=False)
    cells = {c.device.split("/", 1)[1]: c for r in dmap.rows for c in r.cells}
    assert {c.state for c in cells.values()} == set(MAP_STATES)
    assert cells["node-04/fpga-0"].state == "binding"
    assert cells["node-01/gpu-0-1g-1"].state == "exhausted"
    reserved = [c for c in cells.values() if c.state == "reserved"]
    assert len(reserved) == 1 and reserved[0].holder == "gpu-lab/trainer-1 (pending, estimated)"
    assert dmap.estimated == ("gpu-lab/trainer-1",)
    # the counters of node-01's counter set as used/capacity
    assert [r.counters for r in dmap.rows if r.nodes == ("node-01",)] == [("gpu-0 memory 25Gi/25Gi",)]


def test_nodes_in_the_same_states_share_a_row():
    rows = {r.nodes: r for r in scenario_map().rows}
    assert ("node-06", "node-07") in rows and rows["node-06", "node-07"].counts == {"free": 2}
    assert len(scenario_map(grouped=False).rows) == len(rows) + 1


def test_glyph_and_colour_per_state_and_no_color_gives_ascii_glyphs_alone():
    dmap = scenario_map()
    coloured = draw(dmap, color=True, ascii_marks=False)
    for state, (g, _, style, words) in DEVICE_LEGEND.items():
        assert g in coloured and words in coloured, state
        assert re.search(r"\x1b\[[0-9;]+m" + re.escape(g), coloured), state  # the glyph in its colour
    plain = draw(dmap, color=False, ascii_marks=True)
    assert not SGR.search(plain) and plain.isascii()
    for state, (_, a, _, words) in DEVICE_LEGEND.items():
        assert f"{a} {words}" in plain, state  # the legend names each glyph: the state is never colour alone
    assert "node-06…node-07" in coloured


def test_fits_80_columns():
    for text in (draw(scenario_map(), True, False), draw(scenario_map(), False, True)):
        assert max(len(SGR.sub("", line)) for line in text.splitlines()) <= 80


def test_thousands_of_nodes_fit_on_a_screen():
    """1,800 nodes of 8 GPUs, each with 0 to 8 held (nine distinct states): nine rows, not 1,800 (as many for 5,000)."""
    objs = [dclass()]
    for i in range(1800):
        name = f"gpu-node-{i:04d}"
        objs += [node(name), rslice(f"{name}-gpus", [device(f"gpu-{k}") for k in range(8)], name)]
        held = i % 9
        if held:
            results = [("gpu", name, f"gpu-{k}") for k in range(held)]
            objs.append(claim(f"c-{i}", [request(count=held)], results=results, node=name, uid=False))
    snap = snapshot_from_objects(objs, "default")
    dmap = device_map(inventory(snap, S37), snap, S37)
    assert len(dmap.rows) == 9 and sum(len(r.nodes) for r in dmap.rows) == 1800
    text = draw(dmap, False, True)
    assert len(text.splitlines()) < 24
    assert max(len(line) for line in text.splitlines()) <= 80


def explained(scenario: str, ns: str, name: str):
    from kubectl_dra.analyze.reports.explain import explain_pods

    snap = load_files([str(INPUT.parents[1] / scenario / "input.yaml")], None)
    return explain_pods(snap, S37, [(ns, name)], False)[0]


def pod_cells(report) -> dict:
    return {c.device.split("/", 1)[1]: c for r in pod_map(report, grouped=False).rows for c in r.cells}


def test_pod_map_marks_each_device_by_the_first_check_it_fails():
    cells = pod_cells(explained("explain-pod-map", "gpu-lab", "trainer-1"))
    states = {k: c.state for k, c in cells.items()}
    # the pick is the queue's: the pod ahead, trainer-0, takes node-05's gpu-0, which the pod alone would get, and
    # the scheduler's scores then send this pod to node-06, the less busy (analyze/pod/score.py)
    assert states["node-06/gpu-0"] == "selected" and states["node-05/gpu-1"] == "candidate"
    assert states["node-05/gpu-0"] == "ahead" and "gpu-lab/trainer-0" in cells["node-05/gpu-0"].detail
    assert states["node-01/gpu-0-1g-1"] == "request"  # 5Gi: the request's selector (>= 20Gi) before any counter
    assert states["node-01/gpu-0-3g"] == "in-use"
    assert states["node-02/gpu-2"] == "taint" and states["node-02/eth1"] == "class"
    assert states["node-07/gpu-0"] == "node" and states["node-03/gpu-9"] == "pool"
    assert "request c-train/gpu:" in cells["node-02/gpu-2"].detail  # the matrix's reason, per request
    assert [s for s in POD_STATES if s in states.values()] == [
        "selected", "candidate", "taint", "ahead", "in-use", "node", "request", "class", "pool"
    ]  # fmt: skip


def test_pod_map_ahead_and_counters():
    ahead = pod_cells(explained("queue-two-pods-explain", "team-a", "p1"))
    assert ahead["node-01/gpu-0"].state == "ahead"  # goes to a pod ahead in the queue (the matrix's evidence)
    counters = pod_cells(explained("counters-exhausted", "batch", "web-1"))
    assert counters["node-01/gpu-0-20g"].state == "counters"


def test_pod_map_draws_every_state_with_a_legend():
    dmap = pod_map(explained("explain-pod-map", "gpu-lab", "trainer-1"))
    plain = draw(dmap, False, True, legend=POD_LEGEND)
    rows = {line.split()[0]: line for line in plain.splitlines() if line.startswith("node-0")}
    assert "@" in rows["node-06"] and "r" in rows["node-05"]  # the pick, and the device the pod ahead takes
    for state in {c.state for r in dmap.rows for c in r.cells}:
        _, a, _, words = POD_LEGEND[state]
        assert f"{a} {words}" in plain
    assert max(len(line) for line in plain.splitlines()) <= 80


def test_maps_that_share_a_cache_are_the_maps_made_alone():
    """The report makes the maps of many pods with one cache (their rows read once, each pod's place in the queue
    applied to a copy): in any order, each is the map of its pod made alone, grouped or not."""
    from kubectl_dra.analyze.reports.explain import explain_pods

    snap = load_files([str(INPUT.parents[1] / "explain-pod-map" / "input.yaml")], None)
    pods = [("gpu-lab", "trainer-1"), ("gpu-lab", "trainer-0"), ("gpu-lab", "loader-0")]
    reports = explain_pods(snap, S37, pods, False)
    for grouped in (True, False):
        alone = [pod_map(r, grouped) for r in reports]
        cache: dict = {}
        shared = [pod_map(r, grouped, cache) for r in [*reports, *reversed(reports)]]
        assert shared == [*alone, *reversed(alone)]
        assert cache  # (the cache was used)
    assert {c.state for c in pod_cells(reports[0]).values()} >= {"selected", "ahead"}  # a place in the queue applied
