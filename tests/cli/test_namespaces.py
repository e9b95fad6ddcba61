"""Where a command looks: -n, -A and the namespace the input carries, for files as for a cluster (model/scope.py).
The same pod and claim name in two namespaces, one blocked and one not: every command must answer for the namespace
it was asked about (a regression once made -n ignored for plain --from-file input, and no test noticed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import builders
import pytest
import yaml
from builders import dclass, device, node, request, rslice
from test_user_paths import _node_agent  # tests/cli/: one builder of a node's bound pod

from kubectl_dra.model.scope import base_namespace, locate, not_found
from kubectl_dra.model.snapshot import Snapshot


def _pod(ns: str) -> dict:
    app = [{"name": "a"}]
    return builders.pod(
        "web-0", [("gpu", "claim", "c1")], ns=ns, uid=f"uid-pod-{ns}", labels={"app": "web"}, containers=app
    )


def _claim(ns: str, memory: str) -> dict:
    sel = f'device.capacity["gpu.example.com"].memory.compareTo(quantity("{memory}")) >= 0'
    return builders.claim("c1", [request(selectors=[sel])], ns=ns, uid=f"uid-claim-{ns}")


GPU = device("gpu-0", capacity={"gpu.example.com/memory": {"value": "40Gi"}})
CLUSTER = [
    dclass(),
    rslice("node-01-gpus", [GPU], "node-01"),
    node("node-01", {}, hostname=False),
    _node_agent("node-01"),
]
# team-a's claim fits the 40Gi GPU; team-b's asks for 80Gi: blocked
OBJECTS = [_pod("team-a"), _claim("team-a", "24Gi"), _pod("team-b"), _claim("team-b", "80Gi"), *CLUSTER]


def run(*args, stdin=None):
    env = dict(os.environ, NO_COLOR="1")
    env.pop("KUBECONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "kubectl_dra", *args], capture_output=True, text=True, env=env, input=stdin, timeout=60
    )


@pytest.fixture(scope="module")
def dump(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("ns") / "dump.yaml"
    p.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": OBJECTS}))
    return p


@pytest.mark.parametrize(
    "cmd",
    [
        ["explain", "pod", "web-0"],
        ["explain", "pod/web-0"],
        ["explain", "pod", "-l", "app=web"],
        ["explain", "claim", "c1"],
        ["match", "claim", "c1"],
        ["status"],
    ],
    ids=" ".join,
)
@pytest.mark.parametrize("ns,code", [("team-a", 0), ("team-b", 1)])
def test_dash_n_picks_the_namespace_of_a_plain_dump(dump, cmd, ns, code):
    r = run(*cmd, "-n", ns, "--from-file", str(dump), "-o", "json")
    assert r.returncode == code, r.stderr
    doc = json.loads(r.stdout)
    text = json.dumps(doc)
    other = "team-b" if ns == "team-a" else "team-a"
    assert f'"{ns}' in text or f"{ns}/" in text, text[:400]
    assert other not in text, f"{other} leaked into the answer for -n {ns}"


def test_status_all_namespaces_judges_both(dump):
    r = run("status", "-A", "--from-file", str(dump), "-o", "json")
    assert r.returncode == 1, r.stderr
    rows = {(x["namespace"], x["state"]) for x in json.loads(r.stdout)["items"]}
    assert {ns for ns, _ in rows} == {"team-a", "team-b"}


def test_without_dash_n_a_plain_dump_is_read_in_default_and_the_error_names_where_it_is(dump):
    r = run("explain", "pod", "web-0", "--from-file", str(dump))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert 'pods "web-0" not found in namespace "default"' in r.stderr
    assert "team-a" in r.stderr and "team-b" in r.stderr
    s = run("status", "--from-file", str(dump))
    assert s.returncode == 0 and "namespace default" in s.stderr


@pytest.mark.parametrize("cmd", [["explain", "pod", "web-0"], ["explain", "claim", "c1"], ["match", "claim", "c1"]])
def test_dash_a_with_a_name_in_two_namespaces_is_an_error_naming_both(dump, cmd):
    r = run(*cmd, "-A", "--from-file", str(dump))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "several namespaces (team-a, team-b)" in r.stderr and "pass -n" in r.stderr


def test_dash_a_with_a_name_in_one_namespace_finds_it(tmp_path):
    p = tmp_path / "one.json"
    p.write_text(
        json.dumps({"apiVersion": "v1", "kind": "List", "items": [_pod("team-b"), _claim("team-b", "80Gi"), *CLUSTER]})
    )
    r = run("explain", "pod", "web-0", "-A", "--from-file", str(p), "-o", "json")
    assert r.returncode == 1 and json.loads(r.stdout)["pod"]["namespace"] == "team-b", r.stderr


def test_a_bundle_header_sets_the_namespace_and_dash_n_overrides_it(tmp_path):
    header = {"apiVersion": "kubectl-dra/v1alpha1", "kind": "Bundle", "metadata": {"name": "b"}, "namespace": "team-b"}
    p = tmp_path / "bundle.yaml"
    p.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [header, *OBJECTS]}))
    assert run("explain", "pod", "web-0", "--from-file", str(p)).returncode == 1
    assert run("explain", "pod", "web-0", "-n", "team-a", "--from-file", str(p)).returncode == 0
    assert run("status", "--from-file", str(p)).returncode == 1
    assert run("status", "-n", "team-a", "--from-file", str(p)).returncode == 0


def test_scope_rules():
    assert (
        base_namespace("x", "y") == "x" and base_namespace(None, "y") == "y" and base_namespace(None, None) == "default"
    )
    snap = Snapshot(pods=tuple(o for o in OBJECTS if o["kind"] == "Pod"))
    assert locate(snap, "Pod", "web-0", "team-a", False) == "team-a"
    assert "pass -n" in str(not_found(snap, "Pod", "web-0", "default").message)


def test_unseen_namespaces_are_all_named_in_documents_and_shortened_on_a_terminal():
    """-o json/yaml carry every namespace whose pods could not be listed; the warning and error lines name five."""
    from kubectl_dra.cli.common import _short_unseen
    from kubectl_dra.cli.status import _unseen_pods
    from kubectl_dra.model.snapshot import Gap

    gaps = [Gap("list", "pods", f"ns-{i}", "forbidden", "forbidden") for i in range(8)]
    (line,) = _unseen_pods(gaps)
    assert all(f"ns-{i}" in line for i in range(8)), line
    short = _short_unseen(line)
    assert short == "pods in 8 namespaces (ns-0, ns-1, ns-2, ns-3, ns-4 and 3 more): forbidden", short
    assert _short_unseen("pods in namespace a: forbidden") == "pods in namespace a: forbidden"
