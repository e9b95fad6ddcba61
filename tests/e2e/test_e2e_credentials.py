"""Credentials that expire, against the real kube-apiserver: an exec plugin hands out tokens that last a few
seconds, and a second kube-apiserver on the suite's etcd takes a token only while it lasts (a token webhook on
loopback reads the expiry written into it; the webhook's own cache is off, the server's 10 s cache of successful
authentications stays). Between kubectl-dra and that server, a TCP forwarder cuts every connection at the test's
word, as a load balancer or a network blip does, so that each watch reconnects, as every watch does every few
minutes, with whatever credentials the client holds by then.

One control plane for the file: the session's, plus one kube-apiserver with the webhook flags (a few seconds)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from base64 import b64encode
from pathlib import Path

import pytest
from builders import device, request
from dra_objects import claim, pod
from e2e_helpers import DraResult, Watch, clusterlib, kubectl_dra_argv
from loopback import Handler, kubeconfig, start, stop, url

pytestmark = pytest.mark.e2e

LIFETIME = 3.0  # seconds a token lasts

# Counts its runs (runs.txt beside it); the token `e2e-<run>-<expiry>` says when it expires, and so does the
# ExecCredential unless CLAIM=none (then only a 401 replaces it).
PLUGIN = """import datetime, json, os, sys, time
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "runs.txt"), "a+") as f:
    f.seek(0)
    n = len(f.read().split()) + 1
    f.write(f"{n}\\n")
expiry = time.time() + float(os.environ["LIFETIME"])
status = {"token": f"e2e-{n}-{expiry:.3f}"}
if os.environ.get("CLAIM") != "none":
    stamp = datetime.datetime.fromtimestamp(expiry, datetime.timezone.utc)
    status["expirationTimestamp"] = stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": status}))
"""


class _Webhook:
    """The token webhook: `e2e-<n>-<expiry>` authenticates as a member of system:masters until its expiry, unless
    token n is refused (or all are)."""

    def __init__(self):
        self.refused: set[int] = set()
        self.refuse_all = False
        self.reviews: list[tuple[int, bool]] = []
        hook = self

        class Review(Handler):
            def do_POST(self):
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                ok, n = hook.verdict(review["spec"]["token"])
                hook.reviews.append((n, ok))
                status = {"authenticated": ok}
                if ok:
                    status["user"] = {"username": f"e2e-watcher-{n}", "groups": ["system:masters"]}
                self.send_json(200, {"apiVersion": review["apiVersion"], "kind": "TokenReview", "status": status})

        self.httpd = start(Review, poll=0.1)

    def verdict(self, token: str) -> tuple[bool, int]:
        try:
            _, n, expiry = token.split("-")
            n = int(n)
        except ValueError:
            return False, -1
        return not self.refuse_all and n not in self.refused and time.time() < float(expiry), n

    def kubeconfig(self, path: Path) -> str:
        return kubeconfig(path, {"server": url(self.httpd, path="/review")})

    def close(self) -> None:
        stop(self.httpd)


class _Cutter:
    """A TCP forwarder to the API server; cut() closes every connection through it."""

    def __init__(self, upstream: tuple[str, int]):
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.open: set[socket.socket] = set()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            with self.lock:
                self.open |= {client, server}
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        self._close(src, dst)

    def _close(self, *socks: socket.socket) -> None:
        for s in socks:
            with self.lock:
                self.open.discard(s)
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def cut(self) -> int:
        with self.lock:
            socks = list(self.open)
        self._close(*socks)
        return len(socks) // 2

    def close(self) -> None:
        self.listener.close()
        self.cut()


@pytest.fixture(scope="module")
def token_server(cluster, tmp_path_factory):
    """(the kube-apiserver that asks the webhook, the webhook, the forwarder in front of that server)."""
    hook = _Webhook()
    config = hook.kubeconfig(tmp_path_factory.mktemp("webhook") / "webhook.kubeconfig")
    name = "token-webhook-apiserver"
    flags = (
        f"--authentication-token-webhook-config-file={config}",
        "--authentication-token-webhook-version=v1",
        "--authentication-token-webhook-cache-ttl=0s",
    )
    _, api = clusterlib.start_peer_apiserver(cluster.state, clusterlib.build(), name, extra_args=flags)
    port = int(api.server.rsplit(":", 1)[1])
    cutter = _Cutter(("127.0.0.1", port))
    yield api, hook, cutter
    cutter.close()
    clusterlib.stop_peer_apiserver(cluster.state, name)
    hook.close()


def _plugin_kubeconfig(cluster, port: int, tmp_path: Path, **env: str) -> str:
    plugin = tmp_path / "plugin.py"
    plugin.write_text(PLUGIN)
    ca = (Path(cluster.dir) / "pki" / "ca.crt").read_bytes()
    ex = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": sys.executable,
        "args": [str(plugin)],
        "interactiveMode": "Never",
        "env": [{"name": k, "value": v} for k, v in {"LIFETIME": str(LIFETIME), **env}.items()],
    }
    cluster_ = {"server": f"https://127.0.0.1:{port}", "certificate-authority-data": b64encode(ca).decode()}
    return kubeconfig(tmp_path / "kubeconfig", cluster_, {"exec": ex})


def _runs(tmp_path: Path) -> int:
    return len((tmp_path / "runs.txt").read_text().split())


def _run(kc: str, *args: str) -> DraResult:
    argv = [*kubectl_dra_argv(), *args, "--kubeconfig", kc, "--request-timeout", "20s"]
    env = dict(os.environ, NO_COLOR="1")
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)
    return DraResult(argv, proc)


def test_a_watch_outlives_three_tokens_and_keeps_updating(cluster, scenario, token_server, tmp_path):
    api, hook, cutter = token_server
    sc = scenario("creds")
    sc.device_class()
    sc.slice([device("dev-0"), device("dev-1")])
    sc.create(claim("c-a", [request("gpu", sc.cls)]))
    sc.create(pod("pod-a", {"gpu": "c-a"}))
    kc = _plugin_kubeconfig(cluster, cutter.port, tmp_path)
    w = Watch(cluster, "status", "-w", "-n", sc.ns, kubeconfig=kc)
    try:
        w.wait_line(lambda x: x.startswith("pod-a "), 90)
        started = time.time()
        # Four tokens' lives and more, every watch cut every 1.5 s: each reconnect needs the token of its time
        # (the server's cache would have kept the first token good for 10 s at most).
        while time.time() - started < 4 * LIFETIME + 2:
            time.sleep(1.5)
            cutter.cut()
        sc.create(claim("c-b", [request("gpu", sc.cls)]))
        sc.create(pod("pod-b", {"gpu": "c-b"}))
        w.wait_line(lambda x: x.startswith("pod-b "), 60)
    finally:
        code, err = w.stop()
    assert code == 130 and "Traceback" not in err and "error:" not in err, err
    assert _runs(tmp_path) >= 4, (_runs(tmp_path), hook.reviews)  # three tokens expired, each was replaced
    assert any(n >= 4 and ok for n, ok in hook.reviews), hook.reviews


def test_a_refused_token_is_replaced_once_and_the_command_goes_on(cluster, namespace, token_server, tmp_path):
    """A plugin that gives no expiry: the 401 is what makes the client run it again, once, and send again."""
    api, hook, cutter = token_server
    kc = _plugin_kubeconfig(cluster, cutter.port, tmp_path, CLAIM="none")
    hook.refused.add(1)
    r = _run(kc, "explain", "pod", "nothing-here", "-n", namespace)
    assert r.code == 2 and r.stderr.count("\n") == 1 and 'pods "nothing-here" not found' in r.stderr, str(r)
    assert _runs(tmp_path) == 2


def test_a_token_refused_for_good_is_one_line_after_one_retry(cluster, namespace, token_server, tmp_path):
    api, hook, cutter = token_server
    kc = _plugin_kubeconfig(cluster, cutter.port, tmp_path, CLAIM="none")
    hook.refuse_all = True
    try:
        r = _run(kc, "explain", "pod", "nothing-here", "-n", namespace)
    finally:
        hook.refuse_all = False
    assert r.code == 2 and r.stderr.count("\n") == 1, str(r)
    assert r.stderr.startswith("error: Unauthorized: the server rejected the credentials of this kubeconfig"), str(r)
    assert _runs(tmp_path) == 2
