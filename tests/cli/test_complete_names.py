"""Names completed from the cluster, as kubectl completes them (kubectl_dra/cli/complete.py): `explain pod <TAB>`,
`explain claim <TAB>`, `match claim <TAB>`, `explain deploy/<TAB>` and `-n <TAB>`, through click's completion
protocol (_KUBECTL_DRA_COMPLETE, as the bridge packaging/kubectl_complete-dra asks it), against a loopback API
server. -n, -A, --context and --kubeconfig given earlier on the line are honoured; a server that refuses, is down
or does not answer gives no names, exit 0 and nothing on stderr; only GETs are sent."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from loopback import Handler, kubeconfig, serve, start, stop, url

ROOT = Path(__file__).resolve().parents[2]

OBJECTS = {
    "pods": {"ml-team": ["train-0-worker-7d9f8c6b5-abcde", "train-1-worker-5c4d3b2a1-fghij", "web-0"],
             "default": ["hello"]},
    "resourceclaims": {"ml-team": ["train-0-gpu-x7k2p", "train-1-gpu-q8w4e"], "default": ["shared-gpu"]},
    "deployments": {"ml-team": ["trainer", "web"], "default": ["hello"]},
}  # fmt: skip


class Cluster(Handler):
    def do_GET(self):
        self.server.asked.append((self.command, self.path, self.headers.get("Accept")))
        if self.server.refuse:
            return self.send_json(self.server.refuse, {"kind": "Status", "code": self.server.refuse,
                                                       "message": "forbidden: User cannot list"})  # fmt: skip
        parts = self.path.split("?")[0].strip("/").split("/")
        if parts == ["api", "v1", "namespaces"]:
            names = ["default", "kube-system", "ml-team"]
        elif parts[-1] in OBJECTS and parts[-3] == "namespaces":
            names = OBJECTS[parts[-1]].get(parts[-2], [])
        elif parts[-1] in OBJECTS:  # every namespace's
            names = [n for ns in OBJECTS[parts[-1]].values() for n in ns]
        else:
            return self.send_json(404, {"kind": "Status", "code": 404, "message": "not found"})
        self.send_json(200, {"kind": "List", "items": [{"metadata": {"name": n}} for n in names]})

    def do_POST(self):  # a completion never writes: recorded, so that a test sees it
        self.server.asked.append((self.command, self.path, None))
        self.send_json(405, {})

    do_PUT = do_PATCH = do_DELETE = do_POST


def _complete(words: list[str], env: dict, timeout: float = 60) -> subprocess.CompletedProcess:
    """`kubectl-dra WORDS...<TAB>` as bash asks it (the last word is the one completed)."""
    env = dict(env, _KUBECTL_DRA_COMPLETE="bash_complete", COMP_WORDS=" ".join(["kubectl-dra", *words]),
               COMP_CWORD=str(len(words)), PYTHONPATH=str(ROOT))  # fmt: skip
    return subprocess.run([sys.executable, "-m", "kubectl_dra"], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=ROOT)  # fmt: skip


def _names(r: subprocess.CompletedProcess) -> list[str]:
    assert r.returncode == 0 and r.stderr == "", r
    return [line.split(",", 1)[1] for line in r.stdout.splitlines() if line.startswith("plain,")]


@pytest.fixture
def cluster(tmp_path):
    with serve(Cluster, asked=[], refuse=0) as srv:
        kc = kubeconfig(
            tmp_path / "kc",
            {"server": url(srv)},
            context={"namespace": "ml-team"},
            extra={"contexts": [{"name": "c", "context": {"cluster": "k", "user": "u", "namespace": "ml-team"}},
                                {"name": "other", "context": {"cluster": "k", "user": "u"}}]},
        )  # fmt: skip
        env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBECONFIG", "COMP_", "_KUBECTL"))}
        yield srv, kc, dict(env, KUBECONFIG=kc)


def test_names_of_the_contexts_namespace_and_of_dash_n(cluster):
    srv, kc, env = cluster
    assert _names(_complete(["explain", "pod", ""], env)) == [
        "train-0-worker-7d9f8c6b5-abcde",
        "train-1-worker-5c4d3b2a1-fghij",
        "web-0",
    ]
    assert _names(_complete(["explain", "pod", "tr"], env)) == [
        "train-0-worker-7d9f8c6b5-abcde",
        "train-1-worker-5c4d3b2a1-fghij",
    ]
    assert _names(_complete(["explain", "pod", "-n", "default", ""], env)) == ["hello"]
    assert _names(_complete(["explain", "pod", "--namespace=default", "h"], env)) == ["hello"]
    assert _names(_complete(["explain", "claim", "train-1"], env)) == ["train-1-gpu-q8w4e"]
    assert _names(_complete(["match", "claim", "-n", "default", ""], env)) == ["shared-gpu"]
    assert "hello" in _names(_complete(["explain", "pod", "-A", ""], env))  # -A: every namespace's
    # only GETs, of names only (the metadata form), of the namespace asked
    assert {m for m, _, _ in srv.asked} == {"GET"}
    assert all(a.startswith("application/json;as=PartialObjectMetadataList") for _, _, a in srv.asked)
    assert "/api/v1/namespaces/default/pods" in [p for _, p, _ in srv.asked]


def test_context_and_kubeconfig_given_on_the_line(cluster):
    srv, kc, env = cluster
    env = {k: v for k, v in env.items() if k != "KUBECONFIG"}
    # --kubeconfig on the line; --context other has no namespace: default's
    assert _names(_complete(["explain", "pod", "--kubeconfig", kc, ""], env))[0].startswith("train-0")
    assert _names(_complete(["explain", "pod", "--kubeconfig", kc, "--context", "other", ""], env)) == ["hello"]
    # without a kubeconfig: nothing, quietly
    assert _names(_complete(["explain", "pod", ""], dict(env, HOME=str(Path(kc).parent)))) == []


def test_type_slash_name_and_namespaces(cluster):
    srv, kc, env = cluster
    assert _names(_complete(["explain", "deploy/"], env)) == ["deploy/trainer", "deploy/web"]
    assert _names(_complete(["explain", "deployments.apps/w"], env)) == ["deployments.apps/web"]
    assert _names(_complete(["explain", "pod", "deploy/t"], env)) == ["deploy/trainer"]
    assert _names(_complete(["explain", "pod", "-n", "default", "deploy/"], env)) == ["deploy/hello"]
    assert _names(_complete(["explain", "nosuchtype/"], env)) == []
    assert _names(_complete(["explain", "pod", "-n", ""], env)) == ["default", "kube-system", "ml-team"]
    assert _names(_complete(["status", "--namespace", "ml"], env)) == ["ml-team"]
    # the subcommands are still completed as before
    assert sorted(_names(_complete(["explain", ""], env))) == ["claim", "pod"]


def test_from_file_asks_no_cluster(cluster, tmp_path):
    srv, kc, env = cluster
    dump = tmp_path / "d.yaml"
    dump.write_text("apiVersion: v1\nkind: List\nitems: []\n")
    assert _names(_complete(["explain", "pod", "--from-file", str(dump), ""], env)) == []
    assert srv.asked == []


@pytest.mark.parametrize("status", [403, 401, 500])
def test_a_refusal_offers_nothing_quietly(cluster, status):
    srv, kc, env = cluster
    srv.refuse = status
    for words in (["explain", "pod", ""], ["explain", "claim", ""], ["explain", "pod", "-n", ""], ["explain", "sts/"]):
        assert _names(_complete(words, env)) == []


def test_a_server_down_or_silent_offers_nothing_within_the_timeout(tmp_path):
    down = start(Cluster, asked=[], refuse=0)
    port_url = url(down)
    stop(down)  # nothing listens there any more
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBECONFIG", "COMP_", "_KUBECTL"))}
    kc = kubeconfig(tmp_path / "down", {"server": port_url})
    assert _names(_complete(["explain", "pod", ""], dict(env, KUBECONFIG=kc))) == []

    class Silent(Handler):
        def do_GET(self):
            time.sleep(30)

    with serve(Silent) as srv:
        kc = kubeconfig(tmp_path / "silent", {"server": url(srv)})
        t0 = time.monotonic()
        r = _complete(["explain", "pod", "--request-timeout", "1s", ""], dict(env, KUBECONFIG=kc))
        assert _names(r) == [] and time.monotonic() - t0 < 15
