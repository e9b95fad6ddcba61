"""kubeconfig forms against the real kube-apiserver (gather/kubeconfig.py, gather/transport.py): each credential
reaches the server as the identity it names. A ServiceAccount with no role proves it: the server's 403 names the
user it authenticated (an unauthenticated request would get 401), and the admin's certificate is let through.
Also TLS (a foreign CA, tls-server-name, insecure-skip-tls-verify) and proxies (proxy-url, HTTPS_PROXY/NO_PROXY)
through a CONNECT proxy on loopback that counts its tunnels."""

from __future__ import annotations

import json
import os
import select
import socket
import socketserver
import subprocess
import sys
import time
from base64 import b64encode
from pathlib import Path

import pytest
from e2e_helpers import DraResult, kubectl_dra_argv
from loopback import kubeconfig, serve

pytestmark = pytest.mark.e2e


def _run(kubeconfig: Path, *args: str, env: dict | None = None, cwd: Path | None = None) -> DraResult:
    argv = [*kubectl_dra_argv(), *args, "--kubeconfig", str(kubeconfig), "--request-timeout", "20s"]
    e = dict(os.environ, NO_COLOR="1", **(env or {}))
    for k in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY"):
        if not env or k not in env:
            e.pop(k, None)
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=e, cwd=cwd, stdin=subprocess.DEVNULL)
    return DraResult(argv, proc)


def _kubeconfig(path: Path, cluster: dict, user: dict) -> Path:
    return Path(kubeconfig(path, cluster, user))


@pytest.fixture
def ident(cluster, namespace, tmp_path):
    """(the cluster entry with the suite's CA, a token of a ServiceAccount with no role, its user name)."""
    cluster.api.post(
        f"/api/v1/namespaces/{namespace}/serviceaccounts",
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "nobody"}},
    )
    tr = cluster.api.post(
        f"/api/v1/namespaces/{namespace}/serviceaccounts/nobody/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}},
    )
    ca = (Path(cluster.dir) / "pki" / "ca.crt").read_bytes()
    entry = {"server": cluster.server, "certificate-authority-data": b64encode(ca).decode()}
    return entry, tr["status"]["token"], f"system:serviceaccount:{namespace}:nobody"


def _as_user(r: DraResult, user: str) -> None:
    """The request was authenticated as user: the 403 of a role-less identity names it."""
    assert r.code == 2, str(r)
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error:"), str(r)
    assert f'User "{user}"' in r.stderr and "forbidden" in r.stderr, str(r)


def _as_admin(r: DraResult) -> None:
    """The admin's credentials: the pod is looked up and not found (not forbidden, not unauthorized)."""
    assert r.code == 2, str(r)
    assert 'pods "nothing-here" not found' in r.stderr, str(r)


def test_token_file_relative_to_the_kubeconfig(cluster, namespace, ident, tmp_path):
    entry, token, user = ident
    (tmp_path / "sa.token").write_text(token + "\n")
    kc = _kubeconfig(tmp_path / "kc", entry, {"tokenFile": "sa.token"})
    _as_user(_run(kc, "explain", "pod", "nothing-here", "-n", namespace), user)


def test_exec_plugin_token_and_its_exec_info(cluster, namespace, ident, tmp_path):
    entry, token, user = ident
    seen = tmp_path / "exec-info.json"
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "import json, os, sys\n"
        f"open({str(seen)!r}, 'w').write(json.dumps({{'info': os.environ.get('KUBERNETES_EXEC_INFO'), "
        "'extra': os.environ.get('PLUGIN_EXTRA'), 'args': sys.argv[1:]}))\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', 'kind': 'ExecCredential', "
        f"'status': {{'token': {token!r}}}}}))\n"
    )
    kc = _kubeconfig(
        tmp_path / "kc",
        entry,
        {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": sys.executable,
                "args": [str(plugin), "--flag"],
                "env": [{"name": "PLUGIN_EXTRA", "value": "yes"}],
                "interactiveMode": "Never",
                "provideClusterInfo": True,
            }
        },
    )
    _as_user(_run(kc, "explain", "pod", "nothing-here", "-n", namespace), user)
    got = json.loads(seen.read_text())
    info = json.loads(got["info"])
    assert got["extra"] == "yes" and got["args"] == ["--flag"], got
    assert info["kind"] == "ExecCredential" and info["spec"]["interactive"] is False, info
    assert info["spec"]["cluster"]["server"] == cluster.server, info


def test_exec_plugin_client_certificate(cluster, namespace, ident, tmp_path):
    entry, _, _ = ident
    pki = Path(cluster.dir) / "pki"
    cred = {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "kind": "ExecCredential",
        "status": {
            "clientCertificateData": (pki / "admin.crt").read_text(),
            "clientKeyData": (pki / "admin.key").read_text(),
        },
    }
    (tmp_path / "cred.json").write_text(json.dumps(cred))
    kc = _kubeconfig(
        tmp_path / "kc",
        entry,
        {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "cat", "args": ["cred.json"]}},
    )
    # `cat cred.json` runs in the caller's directory: give it the file there
    r = _run(kc, "explain", "pod", "nothing-here", "-n", namespace, cwd=tmp_path)
    _as_admin(r)


def test_auth_provider_oidc_through_the_kubernetes_client(cluster, namespace, ident, tmp_path):
    """The legacy auth-provider is left to the kubernetes client's loader; an unexpired id-token is sent as is."""
    entry, token, user = ident
    kc = _kubeconfig(
        tmp_path / "kc",
        entry,
        {
            "auth-provider": {
                "name": "oidc",
                "config": {"client-id": "kubectl-dra", "idp-issuer-url": "https://127.0.0.1:9", "id-token": token},
            }
        },
    )
    _as_user(_run(kc, "explain", "pod", "nothing-here", "-n", namespace), user)


def test_tls_server_name_insecure_and_a_foreign_ca(cluster, namespace, ident, tmp_path):
    entry, token, user = ident
    # the serving certificate names DNS:kubernetes, not the name below
    ok = _kubeconfig(tmp_path / "ok", dict(entry, **{"tls-server-name": "kubernetes"}), {"token": token})
    _as_user(_run(ok, "explain", "pod", "nothing-here", "-n", namespace), user)
    wrong = _kubeconfig(tmp_path / "wrong", dict(entry, **{"tls-server-name": "not-the-server"}), {"token": token})
    r = _run(wrong, "explain", "pod", "nothing-here", "-n", namespace)
    assert r.code == 2 and r.stderr.count("\n") == 1 and "unable to connect" in r.stderr, str(r)
    assert "not-the-server" in r.stderr or "certificate" in r.stderr.lower(), str(r)
    insecure = _kubeconfig(
        tmp_path / "insecure", {"server": cluster.server, "insecure-skip-tls-verify": True}, {"token": token}
    )
    _as_user(_run(insecure, "explain", "pod", "nothing-here", "-n", namespace), user)
    foreign = dict(entry, **{"certificate-authority-data": b64encode(_foreign_ca(tmp_path)).decode()})
    r = _run(_kubeconfig(tmp_path / "foreign", foreign, {"token": token}), "explain", "pod", "x", "-n", namespace)
    assert r.code == 2 and r.stderr.count("\n") == 1 and "certificate verify failed" in r.stderr, str(r)


def _foreign_ca(tmp_path: Path) -> bytes:
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=elsewhere", "-days", "1"]
        + ["-keyout", str(tmp_path / "f.key"), "-out", str(tmp_path / "f.crt")],
        check=True,
        capture_output=True,
    )
    return (tmp_path / "f.crt").read_bytes()


class _Connect(socketserver.BaseRequestHandler):
    """An HTTP CONNECT proxy: one tunnel per request, counted."""

    def handle(self):
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.request.recv(4096)
            if not chunk:
                return
            head += chunk
        line = head.split(b"\r\n", 1)[0].decode()
        method, target, _ = line.split(" ", 2)
        if method != "CONNECT":
            self.request.sendall(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
            return
        host, port = target.rsplit(":", 1)
        upstream = socket.create_connection((host, int(port)))
        self.server.tunnels.append(target)
        self.request.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        socks = [self.request, upstream]
        try:
            while True:
                ready, _, _ = select.select(socks, [], [], 30)
                if not ready:
                    return
                for s in ready:
                    data = s.recv(65536)
                    if not data:
                        return
                    (upstream if s is self.request else self.request).sendall(data)
        finally:
            upstream.close()


@pytest.fixture
def connect_proxy():
    with serve(_Connect, tunnels=[]) as server:
        yield server


def test_proxy_url_and_the_environment_proxy(cluster, namespace, ident, tmp_path, connect_proxy):
    entry, token, user = ident
    proxy = f"http://127.0.0.1:{connect_proxy.server_address[1]}"
    via = _kubeconfig(tmp_path / "via", dict(entry, **{"proxy-url": proxy}), {"token": token})
    _as_user(_run(via, "explain", "pod", "nothing-here", "-n", namespace), user)
    assert connect_proxy.tunnels, "proxy-url was not used"
    plain = _kubeconfig(tmp_path / "plain", entry, {"token": token})
    before = len(connect_proxy.tunnels)
    _as_user(_run(plain, "explain", "pod", "nothing-here", "-n", namespace, env={"HTTPS_PROXY": proxy}), user)
    assert len(connect_proxy.tunnels) > before, "HTTPS_PROXY was not used"
    before = len(connect_proxy.tunnels)
    env = {"HTTPS_PROXY": proxy, "NO_PROXY": "localhost,127.0.0.0/8"}
    _as_user(_run(plain, "explain", "pod", "nothing-here", "-n", namespace, env=env), user)
    time.sleep(0.2)
    assert len(connect_proxy.tunnels) == before, "NO_PROXY covers the server, yet the proxy was used"


def test_requests_carry_the_tools_user_agent(cluster, namespace, ident, tmp_path):
    entry, token, _ = ident
    kc = _kubeconfig(tmp_path / "kc", entry, {"token": token})
    marker = f"ua-{namespace}"
    _run(kc, "explain", "pod", marker, "-n", namespace)
    from kubectl_dra import __version__

    agents = {e.get("userAgent") for e in cluster.audit_entries() if marker in (e.get("requestURI") or "")}
    assert agents == {f"kubectl-dra/{__version__}"}, agents
