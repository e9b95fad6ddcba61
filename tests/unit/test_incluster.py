"""kubectl_dra.gather.incluster: a pod's ServiceAccount configuration, as client-go's rest.InClusterConfig reads it,
used when no kubeconfig says anything; against a TLS server on loopback that knows the mounted token."""

from __future__ import annotations

import os
import ssl
import subprocess
import time
from pathlib import Path

import pytest
from loopback import Handler, kubeconfig, serve

from kubectl_dra.errors import DraError
from kubectl_dra.gather import credentials, incluster
from kubectl_dra.gather.client import Client
from kubectl_dra.gather.kubeconfig import load_connection


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Path:
    """A CA and the server's certificate for 127.0.0.1 (EC keys: quick to make)."""
    d = tmp_path_factory.mktemp("pki")
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1")
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    for args in (
        ("req", "-x509", *ec, "-subj", "/CN=ca", "-keyout", "ca.key", "-out", "ca.crt"),
        ("req", *ec, "-subj", "/CN=apiserver", "-keyout", "srv.key", "-out", "srv.csr"),
        ("x509", "-req", "-in", "srv.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "1",
         "-out", "srv.crt", "-extfile", "san.ext"),
    ):  # fmt: skip
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)
    return d


@pytest.fixture
def mounted(tmp_path, monkeypatch, pki):
    """The ServiceAccount volume (token, ca.crt, namespace) and the variables the kubelet sets; no kubeconfig."""
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text("first\n")
    (sa / "ca.crt").write_bytes((pki / "ca.crt").read_bytes())
    (sa / "namespace").write_text("monitoring")
    monkeypatch.setenv(incluster.DIR_ENV, str(sa))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "6443")
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("POD_NAMESPACE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return sa


def test_no_kubeconfig_in_a_pod_is_the_service_account(mounted, pki):
    conn = load_connection(None, None)
    assert (conn.server, conn.namespace, conn.context) == ("https://127.0.0.1:6443", "monitoring", "in-cluster")
    assert conn.ca_pem == (pki / "ca.crt").read_bytes() and not conn.insecure
    assert conn.headers == (("Authorization", "Bearer first"),)


def test_namespace_and_ipv6_host(mounted, monkeypatch):
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "fd00:10:96::1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    assert load_connection(None, None).server == "https://[fd00:10:96::1]:443"  # net.JoinHostPort
    monkeypatch.setenv("POD_NAMESPACE", "from-downward-api")
    assert load_connection(None, None).namespace == "from-downward-api"
    monkeypatch.delenv("POD_NAMESPACE")
    (mounted / "namespace").unlink()
    assert load_connection(None, None).namespace == "default"


def test_a_ca_that_does_not_load_means_the_system_roots(mounted):
    (mounted / "ca.crt").write_text("not a certificate")
    assert load_connection(None, None).ca_pem is None
    (mounted / "ca.crt").unlink()
    assert load_connection(None, None).ca_pem is None


def test_a_kubeconfig_wins_and_an_empty_one_falls_back(mounted, tmp_path, monkeypatch):
    path = kubeconfig(tmp_path / "config", user={"token": "kc"})
    assert load_connection(path, None).server == "https://10.0.0.1:6443"
    empty = tmp_path / "empty"
    empty.write_text("")
    assert load_connection(str(empty), None).context == "in-cluster"
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    assert load_connection(None, None).context == "in-cluster"


@pytest.mark.parametrize("unset", ["KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "token"])
def test_not_in_a_pod_is_no_configuration(mounted, monkeypatch, unset):
    if unset == "token":
        (mounted / "token").unlink()
        (mounted / "token").mkdir()  # Possible(): a directory is no token file
    else:
        monkeypatch.setenv(unset, "")
    with pytest.raises(DraError, match="no configuration has been provided"):
        load_connection(None, None)
    assert not incluster.possible()


def test_unreadable_token_and_bad_port_are_one_line_errors(mounted, monkeypatch):
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "https")
    with pytest.raises(DraError, match="KUBERNETES_SERVICE_PORT is not a port"):
        load_connection(None, None)
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "6443")
    if os.geteuid() != 0:  # root reads a file of mode 000
        (mounted / "token").chmod(0)
        with pytest.raises(DraError, match=r"^open .*token: permission denied$"):
            load_connection(None, None)


class _Apiserver(Handler):
    def do_GET(self):
        auth = self.headers.get("Authorization") or ""
        self.server.seen.append(auth)
        if auth.removeprefix("Bearer ") in self.server.valid:
            self.send_json(200, {"kind": "Namespace", "metadata": {"name": "monitoring"}})
        else:
            self.send_json(401, {"kind": "Status", "code": 401, "message": "Unauthorized"})


def test_the_rotated_token_is_read_again(mounted, pki, monkeypatch):
    """Over TLS verified with the mounted CA: the kubelet replaces the token; it is read again after its period
    (shortened here) and at once after a 401, never cached for good."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pki / "srv.crt", pki / "srv.key")
    monkeypatch.setattr(credentials, "FILE_PERIOD", credentials.FILE_LEEWAY + 0.3)
    with serve(_Apiserver, ctx, 0.05, seen=[], valid={"first"}) as srv:
        monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(srv.server_address[1]))
        client = Client(None, None, 10)
        assert client.get("/api/v1/namespaces/monitoring")["metadata"]["name"] == "monitoring"
        (mounted / "token").write_text("second")
        srv.valid = {"second"}
        time.sleep(0.4)
        client.get("/api/v1/namespaces/monitoring")
        assert srv.seen == ["Bearer first", "Bearer second"]
        monkeypatch.setattr(credentials, "FILE_PERIOD", 3600.0)
        (mounted / "token").write_text("third")
        srv.valid = {"third"}
        client.get("/api/v1/namespaces/monitoring")  # refused with "second", then the file is read again
        assert srv.seen[2:] == ["Bearer second", "Bearer third"]
