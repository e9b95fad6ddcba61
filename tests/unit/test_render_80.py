"""Every command's text at 80 columns, as a newcomer's terminal shows it: no line is wider, and the columns and
values that carry the answer are there whole (STATE, MISSING and the reason in status; who holds a device in
devices --list; the value a selector read in match; the Summary said once in explain, findings errors first)."""

from __future__ import annotations

import io
import os
import pty
import re
import select
import shlex
import struct
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from kubectl_dra.analyze.reports.claim import match_claim
from kubectl_dra.analyze.reports.explain import explain_pod
from kubectl_dra.analyze.reports.inventory import inventory
from kubectl_dra.analyze.reports.status import scan
from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import Report, Verdict, make
from kubectl_dra.gather.files import load_files
from kubectl_dra.render import render
from kubectl_dra.render.devices import render_inventory
from kubectl_dra.render.escape import esc
from kubectl_dra.render.options import RenderOptions
from kubectl_dra.render.status import render_scan
from kubectl_dra.render.structured import api_quantity, to_json_utf8

ROOT = Path(__file__).resolve().parents[2]
SC = ROOT / "tests" / "scenarios"
STEP4 = ROOT / "examples" / "tutorial" / "step4-driver-missing.yaml"
W = 80
S37 = Semantics.for_version((1, 37))


def snap(path, ns="default"):
    return load_files([str(path)], ns)


def fits(text: str, width: int = W) -> list[str]:
    lines = text.splitlines()
    assert lines, "no output"
    wide = [x for x in lines if len(x) > width]
    assert not wide, wide
    return lines


def flat(text: str) -> str:
    """The text with its wrapping undone (words joined by single spaces), to look for a whole sentence."""
    return " ".join(text.split())


# -- status ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", [80, 120])
def test_status_keeps_state_missing_and_the_whole_reason(width):
    report = scan(snap(SC / "status-all-namespaces" / "input.yaml", None), S37, None)
    out = io.StringIO()
    render_scan(report, RenderOptions("text", width=width), out)
    lines = fits(out.getvalue(), width)
    head = lines[0].split()
    assert head[:2] == ["NAMESPACE", "POD"] and "STATE" in head and "MISSING" in head
    for r in report.rows:
        row = next(x for x in lines if r.pod in x.split())
        assert r.state in row.split() and (r.missing or "-") in row.split()
        assert flat(r.reason) in flat(out.getvalue())  # wrapped, never cut
    assert "…" not in out.getvalue()


def test_status_wide_and_pipes_keep_every_column_on_one_line():
    report = scan(snap(SC / "status-all-namespaces" / "input.yaml", None), S37, None)
    for fmt, width in (("wide", W), ("text", None)):
        out = io.StringIO()
        render_scan(report, RenderOptions(fmt, width=width), out)
        lines = out.getvalue().splitlines()
        assert "OWNER" in lines[0] and "REASON" in lines[0] and len(lines) == len(report.rows) + 1


# -- devices -----------------------------------------------------------------------------------------------------


def test_devices_summary_hides_columns_of_zeros_unless_wide():
    report = inventory(snap(SC / "devices-summary" / "input.yaml", None), S37, {})
    out, wide = io.StringIO(), io.StringIO()
    render_inventory(report, RenderOptions("text", width=W), out, listing=False)
    render_inventory(report, RenderOptions("wide", width=W), wide, listing=False)
    text = out.getvalue()
    fits(text)
    assert "EXHAUSTED" not in text and "EXHAUSTED" in wide.getvalue()  # zero on every node
    assert {"FREE", "ALLOCATED", "TAINTED", "UNHEALTHY"} <= set(text.split())
    assert "--where CEL." in text and "not a sum)." in text  # the prose lines wrap, never cut
    assert "…" not in text


def test_devices_list_names_the_holder_whole():
    report = inventory(snap(STEP4, None), S37, {})
    out = io.StringIO()
    render_inventory(report, RenderOptions("text", width=W), out, listing=True)
    text = out.getvalue()
    lines = fits(text)
    # step 4 has two classes (the chart adds gpu.example.com): at 80 columns CLASSES gives way to STATE
    assert lines[0].split()[:2] == ["DEVICE", "NODE"] and lines[0].split()[-1] == "STATE"
    assert "claim default/recomendador-7d9c8b6f5-x2x4k-gpu-8kq2w;" in text
    assert "default/recomendador-7d9c8b6f5-x2x4k (Pending)" in text
    assert "…" not in text


def test_devices_node_lists_the_pods_holding_its_devices():
    report = inventory(snap(SC / "devices-node-holders" / "input.yaml", None), S37, {"node": "node-02"})
    out = io.StringIO()
    render_inventory(report, RenderOptions("text", width=W), out, listing=True)
    text = out.getvalue()
    fits(text)
    assert "claim ml-prod/c-whole; pods ml-prod/trainer (Running)" in flat(text)
    assert "consumed bandwidth 10G of 100G" in flat(text)  # quantities as the slice writes them


def test_devices_says_which_nodes_plugin_does_not_serve_at_80_columns():
    """A node whose slices exist but whose plugin crash-loops or does not run: one note a node, whole, not a column
    that overflows the summary."""
    report = inventory(snap(SC / "devices-driver-plugins" / "input.yaml", None), S37, {})
    for listing in (False, True):
        out = io.StringIO()
        render_inventory(report, RenderOptions("text", width=W), out, listing=listing)
        text = out.getvalue()
        fits(text)
        assert "PLUGINS" not in text and "…" not in text
        assert "node-02: gpu.example.com plugin not ready (CrashLoopBackOff, 12 restarts, last exit 1 (Error))" in flat(
            text
        )
        assert "node-03: gpu.example.com no plugin pod (node does not match its nodeSelector" in flat(text)


# -- match -------------------------------------------------------------------------------------------------------


def test_match_shows_the_value_each_rejected_device_read():
    s = snap(SC / "match-unsatisfiable" / "input.yaml")
    claim = next(c for c in s.claims if c["metadata"]["name"] == "c1")
    out = io.StringIO()
    render(match_claim(s, S37, claim), RenderOptions("text", width=W), out)
    lines = fits(out.getvalue())
    for value in ("24Gi", "8Gi", "40Gi"):
        assert f'          device.capacity["gpu.example.com"].memory = {value}' in lines
    i = lines.index("Findings:")
    assert lines[i + 1].split() == ["error", "DRA403", "no-device-matches-request"]


# -- explain -----------------------------------------------------------------------------------------------------


def _explain_scenarios():
    out = []
    for d in sorted(SC.iterdir()):
        cmd = d / "cmd"
        if not cmd.exists():
            continue
        args = shlex.split(cmd.read_text())
        if args[:2] != ["explain", "pod"] or len(args) < 3 or args[2].startswith("-"):
            continue
        opts = dict(zip(args[3::2], args[4::2]))
        if len(args[3:]) % 2 or set(opts) - {"--kubernetes-version", "-n", "--namespace"}:
            continue  # gates, selectors, -A: the golden files cover those
        ns = opts.get("-n") or opts.get("--namespace") or "default"
        out.append((d.name, args[2], opts.get("--kubernetes-version"), ns))
    return out


EXPLAIN = _explain_scenarios()


def _explain(name, pod, version, ns="default"):
    sem = Semantics.for_version(tuple(int(x) for x in version.split("."))) if version else S37
    return explain_pod(snap(SC / name / "input.yaml"), sem, ns, pod)


_SEV = {"error": 0, "warning": 1, "info": 2}


@pytest.mark.parametrize("name,pod,version,ns", EXPLAIN, ids=[e[0] for e in EXPLAIN])
def test_explain_at_80_columns(name, pod, version, ns):
    report = _explain(name, pod, version, ns)
    d = report.to_dict()
    out = io.StringIO()
    render(report, RenderOptions("text", width=W), out)
    text = out.getvalue()
    lines = fits(text)
    assert lines[3].startswith("Kubernetes:   1.") and "allocator: " not in text and "Semantics" not in text
    # findings: errors, then warnings, then information; each code with its readable name; DRA003 only in wide
    i = lines.index("Findings:")
    heads = [x.split() for x in lines[i + 1 :] if re.match(r"  (error|warning|info) +DRA\d{3} ", x)]
    shown = [f for f in d["findings"] if f["code"] != "DRA003"]
    assert [h[1] for h in heads] == [f["code"] for f in sorted(shown, key=lambda f: _SEV[f["severity"]])]
    assert all(h[2] == next(f["name"] for f in shown if f["code"] == h[1]) for h in heads)
    # the Summary's sentence is said once, not again under Pieces and Findings
    summary = flat(esc(d["verdict"]["summary"]))
    if len(summary) > 40:
        before_claims = flat(
            "\n".join(x[14:] for x in lines[: i if "Pod claims:" not in lines else lines.index("Pod claims:")])
        )
        assert before_claims.count(summary) == 1, text
        assert summary not in flat("\n".join(lines[i:])).split("Events:")[0]
    # a Blocked verdict says what the evidence shows, not that an existing device is "missing"
    if d["verdict"]["blocked"] and d["verdict"]["missing"] == "device":
        assert "missing device" not in text


def test_explain_in_use_says_no_free_device():
    text = io.StringIO()
    render(_explain("device-in-use", "web-1", None, "ml-prod"), RenderOptions("text", width=W), text)
    assert "Verdict:      Blocked: no free device: the matching device is allocated" in text.getvalue()
    assert "not judged: blocked at the device" in text.getvalue()


def test_explain_binding_conditions_says_waiting():
    text = io.StringIO()
    render(_explain("binding-conditions-pending", "web-0", None), RenderOptions("text", width=W), text)
    assert "Verdict:      Blocked: waiting for binding conditions" in text.getvalue()


# -- structured --------------------------------------------------------------------------------------------------


def test_consumed_capacity_is_written_as_the_api_writes_quantities():
    assert [api_quantity(v) for v in (17179869184, 10**10, 1536, Fraction(1, 2), 0, "16Gi")] == [
        "16Gi",
        "10G",
        "1536",
        "500m",
        "0",
        "16Gi",
    ]
    f = make("DRA002", "allocatable", results=[{"request": "gpu", "consumedCapacity": {"memory": 17179869184}}])
    r = Report(
        "Diagnosis",
        (f,),
        {"dryRun": {"results": [{"consumedCapacity": {"memory": 2**30}}]}},
        {},
        Verdict(False, None, "ok"),
    )
    js = to_json_utf8(r).decode()
    assert '"memory": "16Gi"' in js and '"memory": "1Gi"' in js and "17179869184" not in js
    # YAML and the plain documents (scan, inventory) go the same way; a document without the key is left as it is
    from kubectl_dra.render.structured import data_to, plain

    assert plain(r)["dryRun"]["results"][0]["consumedCapacity"] == {"memory": "1Gi"}
    assert '"memory": "16Gi"' in data_to({"x": [{"consumedCapacity": {"memory": 2**34}}]}, "json")
    assert "memory: 16Gi" in data_to({"x": [{"consumedCapacity": {"memory": 2**34}}]}, "yaml")
    assert '"memory": 17179869184' in data_to({"x": [{"capacity": {"memory": 2**34}}]}, "json")


# -- a real terminal ---------------------------------------------------------------------------------------------


def _in_terminal(args: list[str], width: int = W) -> str:
    """The command's output on a pseudo-terminal of `width` columns, as a user's terminal gets it."""
    import fcntl
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, width, 0, 0))
    env = dict(os.environ, NO_COLOR="1", COLUMNS=str(width), TERM="xterm")
    env.pop("KUBECONFIG", None)
    p = subprocess.Popen([sys.executable, "-m", "kubectl_dra", *args], stdout=slave, stderr=slave, env=env, cwd=ROOT)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    p.wait(timeout=60)
    os.close(master)
    return b"".join(chunks).decode().replace("\r\n", "\n")


@pytest.mark.skipif(sys.platform != "linux", reason="pseudo-terminal sizes as Linux sets them")
def test_commands_in_an_80_column_terminal():
    status = _in_terminal(["status", "-A", "--from-file", str(SC / "status-all-namespaces" / "input.yaml")])
    fits(status)
    assert status.splitlines()[0].split() == ["NAMESPACE", "POD", "PHASE", "STATE", "MISSING", "AGE"]
    assert '(device.attributes["gpu.example.com"].model = H100))' in status
    devices = _in_terminal(["devices", "--list", "--from-file", str(STEP4)])
    fits(devices)
    assert "claim default/recomendador-7d9c8b6f5-x2x4k-gpu-8kq2w;" in devices
    explain = _in_terminal(["explain", "pod", "recomendador-7d9c8b6f5-x2x4k", "--from-file", str(STEP4)])
    fits(explain)
    assert "Verdict:      Blocked: driver not registered" in explain
    assert "  error    DRA601 driver-not-registered (see Summary)" in explain
    # a note on stderr wraps at a word, its names whole; piped, it is one line (tests/cli/test_devices_request.py)
    nothing = str(SC / "driver-publishes-nothing" / "input.yaml")
    note = _in_terminal(["devices", "--driver", "gpu.example.com", "--from-file", nothing])
    lines = fits(note)
    assert lines[0] == "No devices match (0 published)." and len(lines) > 3, note
    assert lines[1].startswith("gpu.example.com publishes no ResourceSlice: "), note
    assert all(line.startswith("  ") for line in lines[2:]) and "dra-example-driver/gpu-kubeletplugin" in note


def test_a_huge_event_message_does_not_fill_the_terminal(tmp_path):
    """The kubelet's message becomes the Summary and an Event: at a terminal each stops after a screenful, with an
    ellipsis; -o wide writes it whole, once per place."""
    text = STEP4.read_text().replace(
        "DRA driver gpu.example.com is not registered'",
        "DRA driver gpu.example.com is not registered" + " x" * 100000 + "'",
    )
    dump = tmp_path / "huge.yaml"
    dump.write_text(text)
    report = explain_pod(snap(dump), S37, "default", "recomendador-7d9c8b6f5-x2x4k")
    out, wide = io.StringIO(), io.StringIO()
    render(report, RenderOptions("text", width=W), out)
    render(report, RenderOptions("wide", width=W), wide)
    lines = fits(out.getvalue())
    assert len(lines) < 120 and out.getvalue().count("…") >= 2
    assert wide.getvalue().count(" x" * 100000) == 2  # the Summary and the Event, not the Pieces or Findings
