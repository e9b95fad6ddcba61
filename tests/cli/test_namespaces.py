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
    assert s.returncode == 2 and s.stdout == "" and s.stderr.count("\n") == 1, s
    assert s.stderr.startswith("error: no pods use DRA in namespace default (the input holds no pod there)")
    assert s.stderr.endswith("the input has 1 in team-a, 1 in team-b: pass -n NAMESPACE or -A\n"), s.stderr


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
    from kubectl_dra.cli.common import short_unseen
    from kubectl_dra.cli.status import unseen_pods
    from kubectl_dra.model.snapshot import Gap

    gaps = [Gap("list", "pods", f"ns-{i}", "forbidden", "forbidden") for i in range(8)]
    (line,) = unseen_pods(gaps)
    assert all(f"ns-{i}" in line for i in range(8)), line
    short = short_unseen(line)
    assert short == "pods in 8 namespaces (ns-0, ns-1, ns-2, ns-3, ns-4 and 3 more): forbidden", short
    assert short_unseen("pods in namespace a: forbidden") == "pods in namespace a: forbidden"


# status where the scope has no pod that uses DRA (issue 44, item 6): the other namespaces that have some are named;
# from a plain file that is exit 2 when the namespace was only assumed or the input holds no pod there, since a CI
# gate must not pass on a dump made for another namespace; a namespace asked for that the input covers is exit 0.
_WEB = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default", "uid": "u-web"},
        "spec": {"containers": [{"name": "a", "image": "nginx"}]}}  # fmt: skip


def _file(tmp_path, items, name="dump.yaml") -> str:
    p = tmp_path / name
    p.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(p)


@pytest.mark.parametrize(
    "args, code, said",
    [
        # the flow of the audit: a dump of ml-team's objects, status without -n
        ([], 2, "error: no pods use DRA in namespace default (the input holds no pod there); the input has 1 in "
                "team-a, 1 in team-b: pass -n NAMESPACE or -A\n"),
        # a mistyped -n
        (["-n", "team-c"], 2, "error: no pods use DRA in namespace team-c (the input holds no pod there); the input "
                              "has 1 in team-a, 1 in team-b: pass -n NAMESPACE or -A\n"),
        (["-l", "app=web", "-n", "nosuch"], 2, "error: no pods matching 'app=web' use DRA in namespace nosuch (the "
                                               "input holds no pod there); the input has 1 in team-a, 1 in team-b"),
        (["-l", "app=other"], 0, "No pods matching 'app=other' use DRA in namespace default.\n"),
    ],
)  # fmt: skip
def test_status_of_a_namespace_the_input_says_nothing_about(tmp_path, args, code, said):
    r = run("status", *args, "--from-file", _file(tmp_path, OBJECTS))
    assert (r.returncode, r.stdout) == (code, ""), r
    assert r.stderr == said if said.endswith("\n") else r.stderr.startswith(said), r.stderr


def test_status_of_a_namespace_with_pods_but_none_using_dra(tmp_path):
    dump = _file(tmp_path, [*OBJECTS, _WEB])
    # default assumed (no -n): the input has DRA pods elsewhere only; the gate cannot pass on it
    r = run("status", "--from-file", dump)
    assert (r.returncode, r.stdout) == (2, ""), r
    assert r.stderr == (
        "error: no pods use DRA in namespace default (assumed: no -n given); the input has 1 in team-a, 1 in team-b: "
        "pass -n NAMESPACE or -A\n"
    )
    # asked for, and covered by the input: kubectl get's "No resources found", exit 0, with where to look
    r = run("status", "-n", "default", "--from-file", dump)
    assert (r.returncode, r.stdout) == (0, ""), r
    assert (
        r.stderr
        == "No pods use DRA in namespace default; the input has 1 in team-a, 1 in team-b: pass -n NAMESPACE or -A\n"
    )
    doc = json.loads(run("status", "-n", "default", "--from-file", dump, "-o", "json").stdout)
    assert doc["elsewhere"] == {"team-a": 1, "team-b": 1} and doc["items"] == []
    # one namespace elsewhere: the hint names it
    r = run("status", "-n", "default", "--from-file", _file(tmp_path, [_pod("team-b"), _claim("team-b", "8Gi"), _WEB]))
    assert r.stderr.endswith("the input has 1 in team-b: pass -n team-b or -A\n"), r.stderr


@pytest.mark.parametrize(
    "data", [b"", b"apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: ml-team}\n"], ids=["empty", "secrets"]
)
@pytest.mark.parametrize("args", [[], ["-A"], ["-n", "ml-team"]], ids=" ".join)
def test_status_of_an_input_with_no_pod_is_an_error_naming_what_to_add(tmp_path, data, args):
    p = tmp_path / "in.yaml"
    p.write_bytes(data)
    r = run("status", *args, "--from-file", str(p))
    assert (r.returncode, r.stdout) == (2, ""), r
    assert r.stderr == (
        "error: the input holds no Pod objects: status lists pods (add them: kubectl get pods -A -o yaml)\n"
    )
    assert run("status", "--from-file", "/dev/null").returncode == 2


def test_found_elsewhere_names_the_most_first_and_five_at_most():
    from kubectl_dra.model.scope import found_elsewhere

    assert found_elsewhere({"b": 2, "a": 7}) == "7 in a, 2 in b: pass -n NAMESPACE or -A"
    assert (
        found_elsewhere({"a": 1}, "not counting finished pods") == "1 in a, not counting finished pods: pass -n a or -A"
    )
    many = found_elsewhere({f"ns-{i}": 1 for i in range(7)})
    assert (
        many == "1 in ns-0, 1 in ns-1, 1 in ns-2, 1 in ns-3, 1 in ns-4 and 2 more namespaces: pass -n NAMESPACE or -A"
    )


# Live: the pending and the bound pods of every namespace are listed anyway (the queue, NodeResourcesFit), so status
# names the namespaces that have DRA pods without a read of its own; exit 0 as kubectl get's "No resources found".
_SCENARIO = yaml.safe_load(
    (Path(__file__).resolve().parents[1] / "scenarios" / "status-all-namespaces" / "input.yaml").read_text()
)["items"]
_KINDS = {"pods": "Pod", "events": "Event", "nodes": "Node", "daemonsets": "DaemonSet", "resourceslices": "ResourceSlice",
          "deviceclasses": "DeviceClass", "resourceclaims": "ResourceClaim",
          "resourceclaimtemplates": "ResourceClaimTemplate"}  # fmt: skip


def _cluster_handler():
    from loopback import Handler

    class Cluster(Handler):
        def do_GET(self):
            path = self.path.split("?")[0]
            self.server.paths.append(self.path)
            if path == "/apis/resource.k8s.io":
                return self.send_json(200, {"kind": "APIGroup", "versions": [{"version": "v1"}]})
            if path == "/version":
                return self.send_json(200, {"gitVersion": "v1.37.2"})
            parts = path.strip("/").split("/")
            kind = _KINDS.get(parts[-1])
            ns = parts[parts.index("namespaces") + 1] if "namespaces" in parts[:-1] else None
            if kind is None:
                return self.send_json(404, {"kind": "Status", "status": "Failure", "code": 404, "message": "not found"})
            items = [o for o in _SCENARIO if o["kind"] == kind and ns in (None, o["metadata"].get("namespace"))]
            self.send_json(200, {"kind": f"{kind}List", "metadata": {"resourceVersion": "1"}, "items": items})

    return Cluster


@pytest.mark.parametrize(
    "args, said",
    [
        ([], "No pods use DRA in namespace team-c; the cluster has 3 in ml-prod, 2 in team-b, not counting finished "
             "pods: pass -n NAMESPACE or -A\n"),
        # --alone lists no pending pod outside the namespace: the count would be short, so none is given
        (["--alone"], "No pods use DRA in namespace team-c.\n"),
    ],
)  # fmt: skip
def test_live_status_of_an_empty_namespace_names_where_the_dra_pods_are(tmp_path, args, said):
    from loopback import kubeconfig, serve, url

    with serve(_cluster_handler(), paths=[]) as srv:
        kc = kubeconfig(tmp_path / "kc", {"server": url(srv)}, context={"namespace": "team-c"})
        env = dict(os.environ, NO_COLOR="1", KUBECONFIG=kc)
        r = subprocess.run([sys.executable, "-m", "kubectl_dra", "status", *args], capture_output=True, text=True,
                           env=env, timeout=60)  # fmt: skip
        assert (r.returncode, r.stdout, r.stderr) == (0, "", said)
        # no read of its own: the same lists as a namespace with DRA pods
        asked = sorted(p.split("?")[0] for p in srv.paths)
    assert "/api/v1/namespaces" not in asked and asked.count("/api/v1/namespaces/team-c/pods") == 1, asked
