"""Each command's own flags (issue 27, item 4): what --help lists is what the command honours, with help that is
true for it; group help as kubectl prints it; -o name and --no-headers for the listing commands; filters that name
nothing are errors; and the status summary line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STEP3 = ROOT / "examples" / "tutorial" / "step3-allocated.yaml"
STEP4 = ROOT / "examples" / "tutorial" / "step4-driver-missing.yaml"
ALL_NS = ROOT / "tests" / "scenarios" / "status-all-namespaces" / "input.yaml"
LACKS_SLICES = ROOT / "tests" / "scenarios" / "input-lacks-slices" / "input.yaml"
POD = "recomendador-7d9c8b6f5-x2x4k"


def cli(*args, stdin: str = ""):
    e = dict(os.environ, NO_COLOR="1")
    e.pop("KUBECONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "kubectl_dra", *args], input=stdin, capture_output=True, text=True, env=e, timeout=60
    )


def one_error(r, fragment: str = "") -> str:
    assert r.returncode == 2, (r.returncode, r.stdout[-400:], r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert fragment in lines[0], lines[0]
    return lines[0]


def flags_of(*command: str) -> set[str]:
    """The long flags `--help` lists, through click (the same tree the docs are generated from)."""
    import click

    from kubectl_dra.cli import cli as root

    cmd = root
    for name in command:
        cmd = cmd.commands[name]
    ctx = click.Context(cmd, info_name=command[-1])
    return {o for p in cmd.get_params(ctx) if not getattr(p, "hidden", False) for o in p.opts if o.startswith("--")}


CONNECTION = {"--kubeconfig", "--context", "--request-timeout", "--chunk-size"}
SEMANTICS = {"--kubernetes-version", "--feature-gates"}


@pytest.mark.parametrize(
    "command,expected",
    [
        (
            ("explain", "pod"),
            CONNECTION
            | SEMANTICS
            | {"--namespace", "--all-namespaces", "--from-file", "--output", "--selector"}
            | {
                "--watch",
                "--all-devices",
                "--alone",
                "--replicas",
                "--plugin-logs",
                "--map",
                "--exit-zero",
                "--no-color",
                "--verbose",
                "--help",
            },
        ),
        (
            ("explain", "claim"),
            CONNECTION
            | SEMANTICS
            | {"--namespace", "--all-namespaces", "--from-file", "--output", "--all-devices"}
            | {"--exit-zero", "--no-color", "--verbose", "--help"},
        ),
        (
            ("match", "claim"),
            CONNECTION
            | SEMANTICS
            | {"--namespace", "--all-namespaces", "--from-file", "--output", "--all-devices"}
            | {"--filename", "--count", "--exit-zero", "--no-color", "--verbose", "--help"},
        ),
        (
            ("status",),
            CONNECTION
            | SEMANTICS
            | {"--namespace", "--all-namespaces", "--from-file", "--output", "--selector"}
            | {"--watch", "--no-headers", "--alone", "--exit-zero", "--no-color", "--verbose", "--help"}
            | {"--all-contexts"}  # (--context repeatable: a fleet scan, cli/fleet.py)
            | {"--metrics-bind-address", "--metrics-cluster-name"},  # the exporter (cli/exporter.py)
        ),
        (
            ("devices",),
            CONNECTION
            | SEMANTICS
            | {"--from-file", "--output", "--no-headers", "--no-color", "--verbose", "--help"}
            | {"--list", "--node", "--driver", "--class", "--pool", "--free", "--selector", "--where"}
            | {"--request", "--exit-zero", "--watch"}
            | {"--all-contexts"},  # (--context repeatable: several clusters, cli/fleet.py)
        ),
        (
            ("dump",),
            CONNECTION
            | {"--namespace", "--all-namespaces", "--selector", "--output", "--output-file", "--verbose"}
            | {"--help"},
        ),
        (
            ("report",),
            CONNECTION
            | SEMANTICS
            | {"--namespace", "--all-namespaces", "--selector", "--from-file", "--output", "--output-file"}
            | {"--alone", "--exit-zero", "--verbose", "--help"},
        ),
    ],
)
def test_each_command_lists_only_its_own_flags(command, expected):
    assert flags_of(*command) == expected


def test_scope_help_says_what_the_command_does_with_it():
    assert "Find the named pod" in cli("explain", "pod", "--help").stdout
    assert "Find the named claim" in cli("explain", "claim", "--help").stdout
    status = cli("status", "--help").stdout
    assert "Scan every namespace" in status and "Find the named" not in status
    assert "Dump every namespace" in cli("dump", "--help").stdout


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["devices", "--all-devices", "--from-file", str(STEP4)], "No such option '--all-devices'"),
        (["dump", "--from-file", str(STEP4)], "No such option '--from-file'"),
        (["dump", "--exit-zero"], "No such option '--exit-zero'"),
        (["dump", "--kubernetes-version", "1.37"], "No such option '--kubernetes-version'"),
        (["dump", "-o", "text"], "'text' is not one of 'yaml', 'json'"),
        (["dump", "-f", "bundle.yaml"], "--output-file"),
        (["status", "--all-devices", "--from-file", str(STEP4)], "No such option '--all-devices'"),
        (["version", "-o", "wide"], "'wide' is not one of"),
    ],
)
def test_flags_a_command_does_not_honour_are_refused(args, fragment):
    one_error(cli(*args), fragment)


@pytest.mark.parametrize("args", [[], ["explain"], ["match"]])
def test_a_group_without_a_command_prints_its_help_and_exits_0(args):
    r = cli(*args)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.startswith("Usage: ") and "Commands:" in r.stdout


def test_version_flag():
    from kubectl_dra import __version__

    r = cli("--version")
    assert r.returncode == 0 and r.stdout == f"kubectl-dra {__version__}\n"


def test_dump_writes_to_output_file(tmp_path, monkeypatch, capsys):
    """dump's output file is --output-file (kubectl's -f is always input). In-process, the gather replaced."""
    import kubectl_dra.cli as c
    import kubectl_dra.cli.dump
    from kubectl_dra.gather.files import load_files
    from kubectl_dra.gather.result import Gathered

    snap = load_files([STEP3], None)

    def gather(o, **kw):
        assert kw["everything"]
        return Gathered(snap, "default", raw=({"kind": "Header"}, *snap.pods))

    monkeypatch.setattr(kubectl_dra.cli.dump, "gather_for", gather)
    out = tmp_path / "bundle.json"
    with pytest.raises(SystemExit) as e:
        c.main(["dump", "--output-file", str(out), "-o", "json"])
    assert e.value.code == 0
    assert json.loads(out.read_text())["kind"] == "List"
    assert capsys.readouterr().err == f"wrote {out}: 1 objects\n"


def test_status_summary_is_a_neutral_line_after_the_table():
    """Was `error: 5 pod(s) use DRA: ...` and only when some pod was undetermined."""
    r = cli("status", "-A", "--from-file", str(ALL_NS))
    assert r.returncode == 1 and r.stderr.splitlines() == ["5 pods use DRA: 2 blocked, 0 undetermined, 3 ok"]
    r = cli("status", "-A", "--from-file", str(LACKS_SLICES))
    assert r.returncode == 2
    assert r.stderr.splitlines() == [
        "1 pod uses DRA: 0 blocked, 1 undetermined, 0 ok",
        "error: 1 pod undetermined (ml-team/train-0): 'explain pod' says why",
    ]
    r = cli("status", "--from-file", str(STEP4))
    assert r.returncode == 1 and r.stderr == "1 pod uses DRA: 1 blocked, 0 undetermined, 0 ok\n"
    r = cli("status", "--from-file", str(STEP3))
    assert r.returncode == 0 and r.stderr == "1 pod uses DRA: 0 blocked, 0 undetermined, 1 ok\n"
    # structured output: stdout is the document; stderr only the error line of an exit code 2
    r = cli("status", "-A", "--from-file", str(LACKS_SLICES), "-o", "json")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("error: ")
    assert cli("status", "--from-file", str(STEP4), "-o", "yaml").stderr == ""


def test_status_output_name_and_no_headers():
    r = cli("status", "-A", "--from-file", str(ALL_NS), "-o", "name")
    assert r.returncode == 1
    assert r.stdout.splitlines() == [
        "pod/recomendador-7d9c8b6f5-q9w8e",
        "pod/ext-0",
        "pod/recomendador-7d9c8b6f5-x2x4k",
        "pod/recomendador-manual",
        "pod/trainer-0",
    ]
    assert r.stderr == ""  # -o name: the names only; a blocked pod is the exit code
    r = cli("status", "-A", "--from-file", str(LACKS_SLICES), "-o", "name")
    assert r.returncode == 2 and r.stdout == "pod/train-0\n"
    assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1
    with_headers = cli("status", "--from-file", str(STEP4)).stdout.splitlines()
    r = cli("status", "--from-file", str(STEP4), "--no-headers")
    assert r.returncode == 1 and r.stdout.splitlines() == with_headers[1:]
    assert with_headers[0].startswith("POD ")


def test_devices_output_name_and_no_headers():
    r = cli("devices", "--from-file", str(STEP4), "-o", "name")
    assert r.returncode == 0
    assert r.stdout.splitlines() == ["device/gpu.example.com/node-01/gpu-0", "device/gpu.example.com/node-01/gpu-1"]
    full = cli("devices", "--list", "--from-file", str(STEP4)).stdout
    listed = full.split("\n\n")[0].splitlines()  # the device list; the kubelet plugins' note follows it
    assert full.split("\n\n")[1].startswith("Kubelet plugins (Ready on 0 of 1 node(s)")  # step 4 crash-loops
    r = cli("devices", "--no-headers", "--from-file", str(STEP4))
    assert r.returncode == 0 and r.stdout.splitlines() == listed[1:] and len(listed) == 3
    # --node adds the holders' table to the list: --no-headers keeps the device rows alone
    r = cli("devices", "--node", "node-01", "--no-headers", "--from-file", str(STEP4))
    assert r.stdout.splitlines() == listed[1:]


@pytest.mark.parametrize(
    "flag,value,message",
    [
        ("--node", "nosuch", 'node "nosuch" not found'),
        ("--node", "node-0", 'node "node-0" not found (did you mean'),
        ("--class", "gpu-inferenzia", 'DeviceClass "gpu-inferenzia" not found (did you mean "gpu-inferencia"?)'),
        ("--driver", "gpu.example.co", 'driver "gpu.example.co" not found (did you mean "gpu.example.com"?)'),
        ("--pool", "nosuch", 'pool "nosuch" not found'),
    ],
)
def test_a_device_filter_that_names_nothing_is_an_error(flag, value, message):
    """Was `No devices match (2 published).` and exit 0."""
    assert one_error(cli("devices", flag, value, "--from-file", str(STEP4))).startswith(f"error: {message}")


def test_a_device_filter_that_exists_but_matches_nothing_is_the_empty_answer(tmp_path):
    r = cli("devices", "--class", "gpu-inferencia", "--where", "device.driver == 'x'", "--from-file", str(STEP4))
    assert r.returncode == 0 and r.stdout == "" and r.stderr.startswith("No devices match")


def test_pool_filter_takes_the_form_the_output_prints():
    """`--pool gpu.example.com/node-01` (as the DEVICE column and -o json name it) as well as `--pool node-01`."""
    a = cli("devices", "--pool", "gpu.example.com/node-01", "--from-file", str(STEP4), "-o", "name")
    b = cli("devices", "--pool", "node-01", "--from-file", str(STEP4), "-o", "name")
    assert a.returncode == b.returncode == 0 and a.stdout == b.stdout and a.stdout.count("\n") == 2


def test_help_lines_read_as_kubectl():
    r = cli("--help")
    assert re.search(r"^Usage: kubectl dra \[OPTIONS\] COMMAND \[ARGS\]\.\.\.$", r.stdout, re.M), r.stdout
    assert "--version" in r.stdout
