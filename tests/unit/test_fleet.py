"""status over several contexts (cli/fleet.py, render/status.py render_fleet): which contexts a scan takes, that one
cluster's failure is its own line and never the others' end, and the StatusList document. The scan against a real
control plane, one context stalled and one gone: tests/e2e/test_e2e_fleet.py."""

from __future__ import annotations

import io
import json

import pytest

from kubectl_dra.analyze.reports.status import Row, ScanReport
from kubectl_dra.cli.fleet import ClusterAnswer, scan_contexts, with_contexts
from kubectl_dra.errors import DraError
from kubectl_dra.render.options import RenderOptions
from kubectl_dra.render.status import render_fleet


def _report(*states) -> ScanReport:
    rows = tuple(
        Row(
            "ml-team", f"p{i}", None, "Pending", None, s, "node" if s == "Blocked" else None, f"why {i}", (), "1m", None
        )
        for i, s in enumerate(states)
    )
    return ScanReport(rows, {"namespace": "ml-team", "selector": None}, {})


def test_one_context_is_the_one_cluster_command_and_several_are_a_fleet():
    assert with_contexts({"contexts": ("prod",), "all_contexts": False})[0] is None
    assert with_contexts({"contexts": ("prod",), "all_contexts": False})[1]["context"] == "prod"
    assert with_contexts({"contexts": ("a", "b", "a"), "all_contexts": False})[0] == ["a", "b"]
    with pytest.raises(DraError, match="--all-contexts and --context"):
        with_contexts({"contexts": ("a",), "all_contexts": True})
    with pytest.raises(DraError, match="--from-file"):
        with_contexts({"contexts": ("a", "b"), "all_contexts": False, "from_files": ("d.yaml",)})


def test_a_cluster_that_fails_is_its_own_line_and_the_others_are_scanned():
    def scan(ctx):
        if ctx == "gone":
            raise DraError("unable to connect to the server at https://127.0.0.1:1: Connection refused")
        if ctx == "bug":
            raise KeyError("x")
        return _report("OK")

    got = scan_contexts(["a", "gone", "bug", "b"], scan)
    assert [a.context for a in got] == ["a", "gone", "bug", "b"]
    assert [a.report is not None for a in got] == [True, False, False, True]
    assert "Connection refused" in got[1].error and got[2].error.startswith("internal error: KeyError")


def test_the_table_has_a_cluster_column_and_escapes_what_it_prints():
    answers = [
        ClusterAnswer("prod-us", _report("Blocked", "OK")),
        ClusterAnswer("bad\x1b[31m", None, "refused \x1b]8;;x\x07"),
    ]
    out = io.StringIO()
    render_fleet(answers, RenderOptions("text", width=80), out)
    text = out.getvalue()
    assert text.splitlines()[0].split()[:3] == ["CLUSTER", "POD", "OWNER"], text
    assert "\x1b" not in text and "not scanned: refused" in text, repr(text)
    assert all(len(line) <= 80 for line in text.splitlines()), text
    doc = io.StringIO()
    render_fleet(answers, RenderOptions("json"), doc)
    d = json.loads(doc.getvalue())
    assert d["kind"] == "StatusList" and d["summary"]["unreachable"] == 1 and not d["summary"]["determined"]
    assert d["summary"]["blocked"] == 1 and d["items"][1] == {
        "context": "bad\x1b[31m",
        "error": "refused \x1b]8;;x\x07",
        "determined": False,
    }
