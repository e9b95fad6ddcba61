"""The four pieces at a glance: which state each piece gets from a report's findings, and the marks per terminal."""

from __future__ import annotations

import io

from kubectl_dra.analyze.pod.pieces import pod_pieces
from kubectl_dra.findings.model import make


def body(node=None, phase="Pending", allocated=False):
    claim = {"name": "c1", "requests": [{"name": "gpu", "deviceClassName": "gpu"}], "allocation": None}
    if allocated:
        claim["allocation"] = {"results": [{"request": "gpu", "driver": "d", "pool": "p", "device": "gpu-0"}]}
    return {"pod": {"name": "p", "namespace": "default", "node": node, "phase": phase}, "claims": [claim]}


def states(rows):
    return [(r["piece"], r["state"]) for r in rows]


def test_a_missing_piece_leaves_the_later_ones_unjudged():
    rows = pod_pieces([make("DRA211", "device class gpu does not exist")], body())
    assert states(rows) == [("class", "missing"), ("device", "unknown"), ("node", "unknown"), ("driver", "unknown")]
    assert rows[1]["evidence"] == "not judged: blocked at the class"


def test_allocatable_now_waits_for_the_node_and_the_kubelet():
    f = make("DRA002", "allocatable", nodes=["node-01"], results=[{"driver": "d", "pool": "p", "device": "gpu-1"}])
    rows = pod_pieces([f], body())
    assert states(rows) == [("class", "ok"), ("device", "ok"), ("node", "waiting"), ("driver", "waiting")]
    assert rows[1]["evidence"] == "allocatable now: d/p/gpu-1" and "node-01" in rows[2]["evidence"]


def test_running_pod_has_every_piece():
    rows = pod_pieces([], body(node="node-01", phase="Running", allocated=True))
    assert states(rows) == [("class", "ok"), ("device", "ok"), ("node", "ok"), ("driver", "ok")]
    assert rows[1]["evidence"] == "allocated: d/p/gpu-0" and rows[2]["evidence"] == "bound to node-01"


def test_no_usable_node_does_not_judge_the_device():
    rows = pod_pieces([make("DRA503", "no node passes the pod's own node constraints")], body())
    assert states(rows) == [("class", "ok"), ("device", "unknown"), ("node", "missing"), ("driver", "unknown")]


def test_an_open_device_verdict_is_unknown_not_ok():
    rows = pod_pieces([make("DRA414", "the search gave up")], body())
    assert states(rows)[1] == ("device", "unknown") and rows[1]["evidence"] == "the search gave up"


def test_no_claims_no_pieces():
    assert pod_pieces([], {"pod": {}, "claims": [], "extendedResources": {"claim": None}}) == []


def _text(ascii_marks: bool) -> str:
    from kubectl_dra.render.terminal import Out
    from kubectl_dra.render.text import _pieces

    b = body(node="node-01", phase="Running", allocated=True)
    out = io.StringIO()
    _pieces(Out(out, False, None, ascii_marks), pod_pieces([], b))
    return out.getvalue()


def test_marks_unicode_and_ascii():
    assert "Pieces:       ✓ class   DeviceClass gpu exists" in _text(False)
    text = _text(True)
    assert "Pieces:       ok class   DeviceClass gpu exists" in text and "✓" not in text
