"""The command line as users and CI scripts see it: exit codes, one-line errors, usage, formats,
and bad input of every kind (never a traceback, never a hang)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from loopback import kubeconfig

ROOT = Path(__file__).resolve().parents[2]
STEP3 = ROOT / "examples" / "tutorial" / "step3-allocated.yaml"
STEP4 = ROOT / "examples" / "tutorial" / "step4-driver-missing.yaml"
POD = "recomendador-7d9c8b6f5-x2x4k"


def cli(*args, env=None, timeout=60, argv0=None):
    e = dict(os.environ, NO_COLOR="1")
    e.pop("KUBECONFIG", None)
    e.update(env or {})
    cmd = [sys.executable, "-m", "kubectl_dra", *args]
    if argv0:
        cmd = [
            sys.executable,
            "-c",
            f"import sys; sys.argv[0] = {argv0!r}; from kubectl_dra.cli import main; main()",
            *args,
        ]
    return subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=timeout)


def assert_one_line_error(r, fragment=""):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "Traceback" not in r.stderr
    assert fragment in lines[0], lines[0]


def test_exit_codes_and_exit_zero():
    assert cli("explain", "pod", POD, "--from-file", str(STEP3)).returncode == 0
    assert cli("explain", "pod", POD, "--from-file", str(STEP4)).returncode == 1
    assert cli("explain", "pod", POD, "--from-file", str(STEP4), "--exit-zero").returncode == 0


def test_json_and_yaml_are_the_same_document():
    j = cli("explain", "pod", POD, "--from-file", str(STEP4), "-o", "json")
    y = cli("explain", "pod", POD, "--from-file", str(STEP4), "-o", "yaml")
    assert json.loads(j.stdout) == yaml.safe_load(y.stdout)
    doc = json.loads(j.stdout)
    assert doc["apiVersion"] == "kubectl-dra/v1alpha1" and doc["kind"] == "Diagnosis"
    assert doc["verdict"] == {
        "blocked": True,
        "missing": "driver",
        "determined": True,
        "summary": doc["verdict"]["summary"],
    }
    assert {"code", "severity", "message", "hint"} <= set(doc["findings"][0])
    assert doc["claims"][0]["allocation"]["results"] == [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "node-01", "device": "gpu-0"}
    ]


def test_match_contract(tmp_path):
    r = cli("match", "claim", "-f", str(STEP3), "-o", "json")
    assert_one_line_error(r, "expected exactly one ResourceClaim or ResourceClaimTemplate")
    tmpl = tmp_path / "template.yaml"
    doc = yaml.safe_load(STEP3.read_text())
    tmpl.write_text(yaml.safe_dump(next(o for o in doc["items"] if o["kind"] == "ResourceClaimTemplate")))
    r = cli("match", "claim", "-f", str(tmpl), "--from-file", str(STEP3), "-o", "json")
    out = json.loads(r.stdout)
    # A second claim from the template competes with the allocated claim for gpu-0; gpu-1 is too small.
    assert r.returncode == 1 and out["kind"] == "MatchResult" and out["satisfiable"] is False
    devs = {d["device"]: d for d in out["requests"][0]["devices"]}
    assert devs["gpu-0"]["outcome"] == "rejected" and "allocated to claim" in devs["gpu-0"]["reason"]
    assert devs["gpu-1"]["outcome"] == "rejected" and "selector #0 is false" in devs["gpu-1"]["reason"]
    assert {"driver", "pool", "device", "node", "outcome", "reason"} <= set(devs["gpu-1"])
    # Matching the allocated claim itself releases its own allocation: gpu-0 is selected.
    r = cli("match", "claim", "recomendador-7d9c8b6f5-x2x4k-gpu-8kq2w", "--from-file", str(STEP3), "-o", "json")
    out = json.loads(r.stdout)
    assert r.returncode == 0 and out["satisfiable"] is True
    assert [d["outcome"] for d in out["requests"][0]["devices"]] == ["selected", "rejected"]


def test_usage_says_kubectl_dra_as_a_plugin():
    r = cli("--help", argv0="/usr/local/bin/kubectl-dra")
    assert r.returncode == 0 and "Usage: kubectl dra" in r.stdout
    r = cli("--help", argv0="/home/u/.krew/bin/kubectl_dra")
    assert "Usage: kubectl dra" in r.stdout


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["explain", "pod"], "Missing argument"),
        (["explain", "pod", POD, "-o", "xml"], "'xml' is not one of"),
        (["explain", "pod", POD, "--from-file", "/nonexistent.yaml"], "no such file or directory"),
        (["explain", "pod", "nope", "--from-file", str(STEP3)], 'pods "nope" not found'),
        (["explain", "claim", "nope", "--from-file", str(STEP3)], "not found"),
        (["explain", "pod", POD, "--from-file", str(STEP3), "--kubernetes-version", "1.20"], "not supported"),
        (["explain", "pod", POD, "--from-file", str(STEP3), "--feature-gates", "Nope=true"], "unknown feature gate"),
        (
            ["explain", "pod", POD, "--from-file", str(STEP3), "--feature-gates", "DRADeviceTaints"],
            "invalid feature gate",
        ),
        (["match", "claim"], "either a claim NAME or -f FILE"),
        (["frobnicate"], "No such command"),
    ],
)
def test_bad_flags_are_one_line_errors(args, fragment):
    assert_one_line_error(cli(*args), fragment)


BAD_INPUTS = {
    "malformed.yaml": "kind: Pod\nmetadata: {name: [unclosed\n",
    "not-a-mapping.yaml": "- just\n- a list\n",
    "no-kind.yaml": "metadata: {name: x}\n",
    "no-name.yaml": "kind: Pod\napiVersion: v1\nmetadata: {}\n",
    "spec-string.yaml": "kind: ResourceSlice\napiVersion: resource.k8s.io/v1\nmetadata: {name: s}\nspec: hello\n",
    "devices-not-list.yaml": "kind: ResourceSlice\napiVersion: resource.k8s.io/v1\nmetadata: {name: s}\nspec: {devices: 3}\n",
    "binary.yaml": "\x00\x01\x02",
    "bad-json.json": '{"kind": "Pod", ',
    "deep.yaml": "a: " + "[" * 5000 + "]" * 5000 + "\n",
    # one pod in two versions (an identical copy, as two lists that both hold it give, counts once)
    "duplicate.yaml": "kind: Pod\napiVersion: v1\nmetadata: {name: p, namespace: default}\n---\n"
    "kind: Pod\napiVersion: v1\nmetadata: {name: p, namespace: default, labels: {a: b}}\n",
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_files(tmp_path, name):
    p = tmp_path / name
    p.write_text(BAD_INPUTS[name])
    assert_one_line_error(cli("explain", "pod", "p", "--from-file", str(p)))


def _dump_with_selector(tmp_path, expr: str, model: str = "H100") -> Path:
    doc = yaml.safe_load(STEP3.read_text())
    for o in doc["items"]:
        if o["kind"] == "ResourceClaim":
            o["status"] = {}
            o["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [{"cel": {"expression": expr}}]
        if o["kind"] == "ResourceSlice":
            o["spec"]["devices"][0]["attributes"] = {"model": {"string": model}}
        if o["kind"] == "Pod":
            o["spec"].pop("nodeName", None)
    p = tmp_path / "dump.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


@pytest.mark.parametrize(
    "expr,code",
    [
        ("device.driver ==", "DRA302"),  # syntax error
        ('device.attributes["gpu.example.com"].model > 3', "DRA301"),  # no such overload at run time
        ("(" * 2000 + "true" + ")" * 2000, "DRA302"),  # nesting beyond the parser's limit
        ("lists.range(100000).map(x, lists.range(100000).map(y, x * y)).size() > 0", "DRA301"),  # cost bound
        (" || ".join(f'device.driver == "d{i}"' for i in range(3000)), "DRA302"),  # > 10 KiB
    ],
)
def test_hostile_cel_is_a_finding_not_a_crash_or_hang(tmp_path, expr, code):
    r = cli("explain", "pod", POD, "--from-file", str(_dump_with_selector(tmp_path, expr)), "-o", "json", timeout=60)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["verdict"]["blocked"] is True
    assert code in [f["code"] for f in doc["findings"]], [f["code"] for f in doc["findings"]]


def test_control_characters_never_reach_the_terminal(tmp_path):
    p = _dump_with_selector(
        tmp_path, 'device.attributes["gpu.example.com"].model == "x"', model="\x1b[2J\x1b]0;t\x07[red]m"
    )
    r = cli("explain", "pod", POD, "--from-file", str(p), env={"FORCE_COLOR": "1", "NO_COLOR": ""})
    assert "\x1b[2J" not in r.stdout and "\x07" not in r.stdout
    assert "\\x1b[2J\\x1b]0;t\\x07[red]m" in r.stdout


def test_verbose_shows_a_traceback_for_internal_errors(tmp_path):
    r = cli("explain", "pod", "nope", "--from-file", str(STEP3), "-v")
    assert r.returncode == 2 and "Traceback" in r.stderr and r.stderr.strip().splitlines()[-1].startswith("error: ")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    "args",
    [
        ("explain", "pod", POD, "--from-file", str(STEP3)),
        ("devices", "-o", "json", "--from-file", str(STEP3)),
        ("version",),
    ],
)
def test_output_that_cannot_be_written_is_one_line_and_exit_2(args):
    """A full disk under the output (stdout on /dev/full): one error line saying so, exit 2 (not a success, not an
    "internal error")."""
    e = dict(os.environ, NO_COLOR="1")
    with open("/dev/full", "w") as full:
        r = subprocess.run(
            [sys.executable, "-m", "kubectl_dra", *args],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=e,
            timeout=60,
        )
    r.stdout = ""
    assert_one_line_error(r, "could not write the output: No space left on device")


@pytest.mark.parametrize(
    "args",
    [
        ("status", "-A", "--from-file", str(STEP3)),
        ("explain", "pod", POD, "--from-file", str(STEP3)),
        ("explain", "pod", "--help"),
        ("--help",),
    ],
)
def test_a_reader_that_goes_away_ends_the_process_as_it_ends_kubectl(args):
    """`kubectl dra status | head -1`: the reader closes the pipe; kubectl dies of SIGPIPE (a shell says 141), and
    so does kubectl-dra, silently. Click turned the broken pipe into its exit 1, which here means "blocked": a
    pipeline under `set -o pipefail` read it as a blocked pod."""
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run(
            [sys.executable, "-m", "kubectl_dra", *args],
            stdout=w,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, NO_COLOR="1"),
            timeout=60,
        )
    finally:
        os.close(w)
    assert p.returncode == -13 and p.stderr == "", (p.returncode, p.stderr)


def test_unreachable_cluster_is_exit_2(tmp_path):
    kc = kubeconfig(tmp_path / "kubeconfig", {"server": "https://127.0.0.1:9"}, {"token": "t"})
    assert_one_line_error(
        cli("explain", "pod", "p", "--kubeconfig", str(kc), "--request-timeout", "2s"),
        "unable to connect to the server",
    )


def test_bad_kubeconfig_is_exit_2(tmp_path):
    kc = tmp_path / "kubeconfig"
    kc.write_text("not: [a kubeconfig")
    assert_one_line_error(cli("explain", "pod", "p", "--kubeconfig", str(kc)))


def test_completion_scripts():
    for shell in ("bash", "zsh", "fish"):
        r = cli("completion", shell)
        assert r.returncode == 0 and "_KUBECTL_DRA_COMPLETE" in r.stdout


def test_version():
    from kubectl_dra import __version__

    r = cli("version")
    assert r.returncode == 0 and r.stdout.strip() == f"kubectl-dra {__version__}"
    assert json.loads(cli("version", "-o", "json").stdout)["kubectlDra"] == __version__


def test_help_does_not_import_heavy_modules():
    code = (
        "import sys; from kubectl_dra.cli import cli; "
        "import click.testing as t; t.CliRunner().invoke(cli, ['explain', 'pod', '--help']); "
        "heavy = [m for m in ('kubernetes', 'cel_expr_python', 'google.protobuf', 'yaml', 'rich') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "", r.stdout + r.stderr


SPLIT_POOL = """
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}}
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu}
  spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {name: two, namespace: default}
  spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu, allocationMode: ExactCount, count: 2}}]}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: s-a}
  spec: {driver: gpu.example.com, nodeName: n1, pool: {name: p, generation: 1, resourceSliceCount: 2}, devices: [{name: d0}]}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: s-b}
  spec: {driver: gpu.example.com, nodeName: n1, pool: {name: p, generation: 1, resourceSliceCount: 2}, devices: [{name: d1}]}
"""


@pytest.mark.parametrize("command", [["match", "claim"], ["explain", "claim"]])
def test_where_upstream_would_crash_the_answer_is_undetermined(tmp_path, command):
    """kube-scheduler 1.34 with DRAConsumableCapacity panics on a pool split over slices (DRA415):
    no verdict, exit code 2, and the same claim is allocatable with 1.35's allocator."""
    f = tmp_path / "dump.yaml"
    f.write_text(SPLIT_POOL)
    args = [*command, "two", "-n", "default", "--from-file", str(f), "--feature-gates", "DRAConsumableCapacity=true"]
    r = cli(*args, "--kubernetes-version", "1.34", "-o", "json")
    assert r.returncode == 2 and r.stderr.startswith("error: kube-scheduler 1.34 would crash here"), r.stderr
    doc = json.loads(r.stdout)
    assert "DRA415" in [x["code"] for x in doc["findings"]]
    assert (doc.get("determined") if command[0] == "match" else doc["verdict"]["determined"]) is False
    assert cli(*args, "--kubernetes-version", "1.35").returncode == 0


def test_match_a_pod_file_matches_the_claim_the_scheduler_would_build_for_its_extended_resources(tmp_path):
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: trainer-3}\nspec:\n  containers:\n  - name: c\n"
        "    image: x\n    resources: {requests: {example.com/gpu: '1'}}\n"
    )
    dump = Path(__file__).resolve().parents[2] / "examples" / "defaults-1.37" / "extended-resources.yaml"
    r = cli("match", "claim", "-f", str(pod), "--from-file", str(dump), "-o", "json")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert [q["name"] for q in doc["requests"]] == ["container-0-request-0"]
    assert [f["code"] for f in doc["findings"]][-1] == "DRA404"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: plain}\nspec:\n  containers: [{name: c, image: x}]\n")
    assert_one_line_error(cli("match", "claim", "-f", str(pod), "--from-file", str(dump)))


HOSTILE_POD_STATUS = [
    {"extendedResourceClaimStatus": "not-an-object"},
    {"extendedResourceClaimStatus": {"resourceClaimName": ["x"], "requestMappings": "nope"}},
    {"extendedResourceClaimStatus": {"resourceClaimName": "x", "requestMappings": [1, None]}},
    {
        "containerStatuses": [
            {"name": "c", "allocatedResourcesStatus": "bad"},
            7,
            {"name": "d", "allocatedResourcesStatus": [{"name": "claim:x", "resources": [None, "y"]}]},
        ]
    },
    {"conditions": ["bad", {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByDeviceTaintManager"}]},
    {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": None}]},
]


@pytest.mark.parametrize("status", HOSTILE_POD_STATUS, ids=range(len(HOSTILE_POD_STATUS)))
def test_malformed_1_37_status_fields_are_findings_or_one_line_errors(tmp_path, status):
    doc = yaml.safe_load(STEP3.read_text())
    for o in doc["items"]:
        if o["kind"] == "Pod":
            o["status"].update(status)
            o["spec"]["containers"][0].setdefault("resources", {})["requests"] = {"example.com/gpu": "x1"}
            o["spec"]["schedulingGates"] = ["not-a-dict"]
        if o["kind"] == "ResourceClaim" and o.get("status", {}).get("allocation"):
            o["status"]["devices"] = [None, {"driver": 3, "conditions": [{"type": "a"}, "b"]}]
    p = tmp_path / "dump.yaml"
    p.write_text(yaml.safe_dump(doc))
    r = cli("explain", "pod", POD, "--from-file", str(p), "-o", "json")
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    if r.returncode == 2 and not r.stdout:
        assert_one_line_error(r)
    else:
        json.loads(r.stdout)


@pytest.mark.parametrize(
    "target,fragment",
    [
        ("foo/bar", "expected TYPE/NAME"),
        ("deploy/nope", 'deployments.apps "nope" not found'),
        ("sts/", "expected TYPE/NAME"),
    ],
)
def test_type_name_errors_are_one_line(target, fragment):
    assert_one_line_error(cli("explain", target, "--from-file", str(STEP3)), fragment)
