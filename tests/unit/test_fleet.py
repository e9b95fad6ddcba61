"""status and devices over several contexts (cli/fleet.py, render/status.py render_fleet, render/devices.py
render_inventory_fleet): which contexts a scan takes, that one cluster's failure is its own line and never the
others' end, and the StatusList and DeviceInventoryList documents. The scan against a real control plane, one
context stalled and one gone: tests/e2e/test_e2e_fleet.py."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import pytest

from kubectl_dra.analyze.reports.status import Row, ScanReport
from kubectl_dra.cli.fleet import ClusterAnswer, scan_contexts, with_contexts
from kubectl_dra.errors import DraError
from kubectl_dra.render.devices import render_inventory_fleet
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


def _inventory(allocated: bool):
    from builders import claim, dclass, device, node, request, rslice

    from kubectl_dra.analyze.reports.inventory import inventory
    from kubectl_dra.features import Semantics
    from kubectl_dra.model.objects import snapshot_from_objects

    objs = [node("node-01"), dclass(), rslice("s", [device("gpu-0"), device("gpu-1")], "node-01", pool="p")]
    if allocated:
        objs.append(claim("c0", [request()], results=[("gpu", "p", "gpu-0")], uid=False))
    return inventory(snapshot_from_objects(objs, "default"), Semantics.for_version((1, 37)))


def test_devices_over_several_clusters_is_one_table_with_a_cluster_column_and_a_line_for_each_not_read():
    answers = [
        ClusterAnswer("prod-us", _inventory(True)),
        ClusterAnswer("prod-eu", _inventory(False)),
        ClusterAnswer("lab\x1b[31m", None, "unable to connect \x1b]8;;x\x07"),
    ]
    out = io.StringIO()
    render_inventory_fleet(answers, RenderOptions("text", width=80), out, listing=False)
    text = out.getvalue()
    lines = text.splitlines()
    assert lines[0].split() == ["CLUSTER", "CLASS", "DEVICES", "FREE", "ALLOCATED"], text
    assert lines[1].split()[:1] + lines[1].split()[2:] == ["prod-us", "2", "1", "1"], text
    assert lines[2].split()[:1] + lines[2].split()[2:] == ["prod-eu", "2", "2", "0"], text
    assert "\x1b" not in text and "not read: unable to connect" in text, repr(text)
    assert "4 device(s), 3 free, in 2 of 3 cluster(s)" in text and all(len(x) <= 80 for x in lines), text
    out = io.StringIO()
    render_inventory_fleet(answers, RenderOptions("text", width=80), out, listing=True)
    rows = [x.split()[:5] for x in out.getvalue().splitlines() if not x.startswith(" ")]
    assert rows[0] == ["CLUSTER", "DEVICE", "NODE", "CLASSES", "STATE"], rows
    assert [r[0] for r in rows[1:] if r and r[0] in ("prod-us", "prod-eu")] == ["prod-us"] * 2 + ["prod-eu"] * 2
    assert sorted(r[4] for r in rows[1:5]) == ["allocated", "free", "free", "free"], rows
    doc = io.StringIO()
    render_inventory_fleet(answers, RenderOptions("json"), doc, listing=False)
    d = json.loads(doc.getvalue())
    assert d["kind"] == "DeviceInventoryList" and d["summary"]["unreachable"] == 1 and not d["summary"]["determined"]
    assert (d["summary"]["devices"], d["summary"]["free"], d["summary"]["allocated"]) == (4, 3, 1), d["summary"]
    assert d["items"][0]["inventory"]["kind"] == "DeviceInventory" and d["items"][0]["determined"]
    assert d["items"][2] == {"context": "lab\x1b[31m", "error": "unable to connect \x1b]8;;x\x07", "determined": False}


@pytest.mark.parametrize("command", [["status", "-A"], ["devices"]])
def test_the_error_line_of_a_fleet_scan_escapes_the_context_names(tmp_path, command):
    """Context names come from the user's kubeconfig, not the cluster, but reach the terminal all the same: the
    one-line `error:` that names the clusters not read escapes them as the table does."""
    from tests.clirun import run

    bad = "lab\x1b]8;;x\x07\x1b[31m"
    ctx = [{"name": n, "context": {"cluster": "gone", "user": "u"}} for n in (bad, "other")]
    kc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "gone", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": ctx,
        "current-context": "other",
    }
    path = tmp_path / "config"
    path.write_text(json.dumps(kc))
    got = run([*command, "--kubeconfig", str(path), "--context", bad, "--context", "other", "--request-timeout", "2s"])
    assert got.code == 2, got
    assert "\x1b" not in got.err and "\x07" not in got.err, repr(got.err)
    assert "error: 2 of 2 clusters not" in got.err and "lab" in got.err, got


def test_a_cluster_whose_pool_counts_upstream_disputes_says_so_in_the_fleet_table():
    """A fleet's devices table is the per-class summary; the pool counts that differ from upstream's
    ResourcePoolStatusRequest (DRA023) would be lost with the per-cluster table: each is a line naming its cluster."""
    from pathlib import Path

    from kubectl_dra.analyze.reports.inventory import inventory
    from kubectl_dra.features import Semantics
    from kubectl_dra.gather.files import load_files

    dump = Path(__file__).resolve().parents[1] / "scenarios" / "devices-pool-status-disagrees" / "input.yaml"
    disputed = inventory(load_files([str(dump)], None), Semantics.for_version((1, 37)))
    assert [f.code for f in disputed.findings] == ["DRA023"], disputed.findings
    answers = [ClusterAnswer("prod-us", _inventory(True)), ClusterAnswer("prod-eu", disputed)]
    out = io.StringIO()
    render_inventory_fleet(answers, RenderOptions("text", width=80), out, listing=False)
    text = out.getvalue()
    said = [x for x in text.splitlines() if "DRA023" in x]
    assert len(said) == 1 and said[0].startswith("prod-eu: ") and "upstream" in text, text
    assert all(len(x) <= 80 for x in text.splitlines()), text


def _scan_in_process(ctx: str):
    """A module-level scan (a process pool pickles it): the pid it ran in, or the failures scan_contexts turns into
    one line each."""
    import os

    if ctx == "gone":
        raise DraError("unable to connect to the server")
    if ctx == "bug":
        raise KeyError("x")
    if ctx == "unpicklable":
        return _PidReport(os.getpid(), what=lambda: None)
    return _PidReport(os.getpid())


@dataclass(frozen=True)
class _PidReport:
    pid: int
    determined: bool = True
    what: object = None

    def plain(self):
        return self


def test_where_the_platform_forks_safely_each_cluster_is_scanned_in_a_process_of_its_own():
    """A scan's analysis holds the interpreter lock: threads would take turns at it, so N clusters would cost
    their sum. The answers come back in the contexts' order, failures as their one line (an answer that does not
    pickle too), from other processes."""
    import os

    from kubectl_dra.cli.fleet import forks_safely

    got = scan_contexts(["a", "gone", "b", "bug", "c", "unpicklable"], _scan_in_process, processes=True)
    assert [a.context for a in got] == ["a", "gone", "b", "bug", "c", "unpicklable"]
    assert got[1].error == "unable to connect to the server" and got[3].error.startswith("internal error: KeyError")
    pids = {a.report.pid for a in got if a.report is not None}
    if forks_safely():
        assert os.getpid() not in pids, pids
        assert got[5].report is None and "does not pickle" in got[5].error, got[5]
    else:
        assert pids == {os.getpid()}
    threads = scan_contexts(["a", "b"], _scan_in_process)  # not asked: threads, in this process
    assert {a.report.pid for a in threads} == {os.getpid()}


def test_a_fleet_scan_imports_every_module_a_scan_may_need_before_it_forks():
    """Each forked scan would otherwise import the analysis (about 0.4 s of CPU) again, N times on the same cores:
    every module of SCAN_PACKAGES imports on its own (no import circle that only a lazy import hides)."""
    import sys

    from kubectl_dra.cli.fleet import SCAN_PACKAGES, _import_all

    _import_all(SCAN_PACKAGES)
    for name in ("kubectl_dra.analyze.reports.status", "kubectl_dra.analyze.queue.simulate", "kubectl_dra.cel.environment",
                 "kubectl_dra.gather.client", "kubectl_dra.analyze.allocator.search"):  # fmt: skip
        assert name in sys.modules, name


_PLAIN_SCALARS = (type(None), bool, int, float, str, bytes)


def _not_plain(x, path: str = "report", seen=None) -> str | None:
    """Where x holds something other than plain data (scalars, tuples, lists, sets, dicts, enums, and dataclasses
    and named tuples of kubectl_dra made of them): the path to the first such value, or None."""
    import dataclasses
    import enum

    seen = set() if seen is None else seen
    if isinstance(x, _PLAIN_SCALARS) or isinstance(x, enum.Enum):
        return None
    if id(x) in seen:
        return None
    seen.add(id(x))
    if type(x) in (tuple, list, set, frozenset):
        items = enumerate(x)
    elif type(x) is dict:
        items = [(f"[{k!r}]", v) for k, v in x.items()] + [(f"key {k!r}", k) for k in x]
    elif dataclasses.is_dataclass(x) and type(x).__module__.startswith("kubectl_dra."):
        items = [(f.name, getattr(x, f.name)) for f in dataclasses.fields(x)]
    elif isinstance(x, tuple) and hasattr(x, "_fields") and type(x).__module__.startswith("kubectl_dra."):
        items = zip(x._fields, x)  # a NamedTuple
    else:
        return f"{path}: {type(x).__module__}.{type(x).__qualname__}"
    for k, v in items:
        where = _not_plain(v, f"{path}.{k}", seen)
        if where:
            return where
    return None


@pytest.mark.parametrize("command", ["status", "devices"])
def test_what_a_scan_sends_back_from_its_process_is_plain_data_and_says_the_same(command, monkeypatch):
    """A fleet scan's process sends its report back pickled (report.plain()): over the golden scenarios, the
    plain report holds only plain data (a live cluster's report once held the semantics' mappingproxy, which does
    not pickle, and only the e2e scan met it) and renders the same document and table as the report."""
    from pathlib import Path

    from clirun import run

    import kubectl_dra.cli.common as common

    caught = []
    monkeypatch.setattr(common, "finish", lambda report, o, **kw: caught.append(report) or 0)
    monkeypatch.setattr(f"kubectl_dra.cli.{command}.finish", lambda report, o, **kw: caught.append(report) or 0)
    scenarios = sorted(Path(__file__).parent.parent.joinpath("scenarios").glob("*/input.yaml"))
    reports = 0
    for inp in scenarios:
        caught.clear()
        run([command, "-A", "--from-file", str(inp)] if command == "status" else [command, "--from-file", str(inp)])
        if not caught:  # an input this command refuses (no node in the dump, ...): one line, no report
            continue
        reports += 1
        report = caught[0]
        p = report.plain()
        where = _not_plain(p)
        assert where is None, (inp.parent.name, where)
        assert json.dumps(p.to_dict(), sort_keys=True) == json.dumps(report.to_dict(), sort_keys=True), inp
        assert (p.determined, getattr(p, "blocked", None)) == (report.determined, getattr(report, "blocked", None))
    assert reports > 180, reports
