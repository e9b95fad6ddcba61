"""gather/credentials.py and the client's use of it: credentials that expire are replaced, as client-go replaces
them. The kinds alone on a fake clock; then the client against a TLS server on loopback that accepts a token only
until the expiry written into it, the way an API server rejects an expired exec-plugin token: a plugin whose tokens
last a second or two, a 401 answered by one refresh and one retry, a 401 that stays (one line, no retry loop), a
client certificate that rotates, and a watch that reconnects with the credentials current at the time."""

from __future__ import annotations

import json
import ssl
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from loopback import Handler, kubeconfig, serve, url

from kubectl_dra.errors import DraError
from kubectl_dra.gather.client import Client, ListRecord, Unauthorized
from kubectl_dra.gather.credentials import (
    Creds,
    ExecCredentials,
    StaticCredentials,
    TokenFileCredentials,
    _expiry,
)


class Clock:
    def __init__(self, t: float = 1000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


# -- the kinds, on a fake clock --------------------------------------------------------------------


def test_exec_credentials_are_kept_until_they_expire():
    clock, runs = Clock(), []

    def run():
        runs.append(clock.t)
        return Creds(f"Bearer t{len(runs)}"), clock.t + 60

    ex = ExecCredentials(run, now=clock)
    assert ex.current() == ex.current() == Creds("Bearer t1") and len(runs) == 1
    clock.t += 60  # at the expiry: still good (exec.go: expired once now is after it)
    assert ex.current() == Creds("Bearer t1")
    clock.t += 0.001
    assert ex.current() == Creds("Bearer t2") and len(runs) == 2


def test_exec_credentials_without_expiry_last_until_a_401():
    clock, n = Clock(), [0]

    def run():
        n[0] += 1
        return Creds(f"Bearer t{n[0]}"), None

    ex = ExecCredentials(run, now=clock)
    first = ex.current()
    clock.t += 10**7
    assert ex.current() is first
    assert ex.refresh(first) and ex.current() == Creds("Bearer t2")
    # maybeRefreshCreds: a request that used the old credentials finds them rotated already; no second run
    assert ex.refresh(first) and n[0] == 2


def test_exec_refresh_that_brings_the_same_credentials_is_not_worth_a_retry():
    ex = ExecCredentials(lambda: (Creds("Bearer same"), None))
    assert not ex.refresh(ex.current())


def test_token_file_is_read_again_after_fifty_seconds_and_a_failed_read_keeps_the_last(tmp_path):
    f, clock = tmp_path / "token", Clock()
    f.write_text("one\n")
    tf = TokenFileCredentials(str(f), "", None, None, now=clock)
    f.write_text("two\n")
    clock.t += 49.9
    assert tf.current() == Creds("Bearer one")
    clock.t += 0.1
    assert tf.current() == Creds("Bearer two")
    f.unlink()
    clock.t += 100
    assert tf.current() == Creds("Bearer two")  # "Unable to rotate token": the last one stays
    f.write_text("three")
    assert tf.refresh(Creds("Bearer two")) and tf.current() == Creds("Bearer three")  # a 401 reads it now
    assert not tf.refresh(Creds("Bearer three"))


def test_token_file_falls_back_to_the_token_and_needs_a_first_read_without_one(tmp_path):
    f = tmp_path / "token"
    assert TokenFileCredentials(str(f), "inline", b"C", b"K").current() == Creds("Bearer inline", b"C", b"K")
    with pytest.raises(DraError, match='^failed to read token file ".*token": No such file'):
        TokenFileCredentials(str(f), "", None, None)
    f.write_text(" \n")
    with pytest.raises(DraError, match='^read empty token from file ".*token"$'):
        TokenFileCredentials(str(f), "", None, None)


def test_static_credentials_never_refresh():
    s = StaticCredentials(Creds("Bearer x"))
    assert not s.refresh(s.current())


@pytest.mark.parametrize(
    ("stamp", "want"),
    [
        ("2030-01-02T03:04:05Z", datetime(2030, 1, 2, 3, 4, 5, tzinfo=timezone.utc).timestamp()),
        ("2030-01-02T05:04:05.5+02:00", datetime(2030, 1, 2, 3, 4, 5, 500000, tzinfo=timezone.utc).timestamp()),
        (None, None),
        ("", None),
        ("next tuesday", None),
    ],
)
def test_expiration_timestamp(stamp, want):
    assert _expiry(stamp) == want


# -- the client against a TLS server on loopback ---------------------------------------------------


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


EC = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1")  # quick to make, unlike RSA


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Path:
    """A CA, the server's certificate for 127.0.0.1 and two client certificates (CN alice, CN bob)."""
    d = tmp_path_factory.mktemp("pki")
    _openssl("req", "-x509", *EC, "-nodes", "-subj", "/CN=test-ca", "-days", "1",
             "-keyout", "ca.key", "-out", "ca.crt", cwd=d)  # fmt: skip
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    for name, ext in (("server", ["-extfile", "san.ext"]), ("alice", []), ("bob", [])):
        _openssl("req", *EC, "-nodes", "-subj", f"/CN={name}", "-keyout", f"{name}.key",
                 "-out", f"{name}.csr", cwd=d)  # fmt: skip
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                 "-days", "1", "-out", f"{name}.crt", *ext, cwd=d)  # fmt: skip
    return d


class _Handler(Handler):
    def _who(self) -> str | None:
        """The identity of the request: a client certificate's CN, else a bearer token the server accepts (it
        reads `tok-<n>-<expiry>` and takes it until that POSIX time, unless told to refuse token n)."""
        cert = self.connection.getpeercert()
        if cert:
            return dict(x[0] for x in cert["subject"])["commonName"]
        auth = self.headers.get("Authorization") or ""
        if self.server.reject_all or not auth.startswith("Bearer tok-"):
            return None
        _, n, expiry = auth.removeprefix("Bearer ").split("-")
        return f"token {n}" if time.time() < float(expiry) and int(n) not in self.server.refused else None

    def do_GET(self):
        who = self._who()
        self.server.log.append((self.path.split("?")[0], who))
        if who is None:
            self.send_json(401, {"kind": "Status", "code": 401, "message": "Unauthorized"})
        elif self.path.startswith("/watch"):
            # one event per watch, then the watch ends, as the server ends each after its timeoutSeconds
            body = json.dumps({"type": "ADDED", "object": {"metadata": {"name": who, "resourceVersion": "2"}}})
            self.send_json(200, raw=body.encode() + b"\n")
        else:
            self.send_json(200, {"kind": "Thing", "who": who})


@pytest.fixture
def server(pki):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pki / "server.crt", pki / "server.key")
    ctx.load_verify_locations(pki / "ca.crt")
    ctx.verify_mode = ssl.CERT_OPTIONAL
    with serve(_Handler, ctx, 0.05, log=[], reject_all=False, refused=set()) as srv:
        yield srv


# The plugin counts its runs in runs.txt; its token `tok-<run>-<expiry>` lasts LIFETIME seconds, and it says so in
# expirationTimestamp unless CLAIM says otherwise ("none": no expiry; "hour": an hour). MODE=cert: alternately
# alice's and bob's certificate (no token), expiring as the token would.
PLUGIN = """#!{python}
import datetime, json, os, sys, time
here = os.path.dirname(os.path.abspath(__file__))
runs = os.path.join(here, "runs.txt")
n = len(open(runs).read().split()) + 1 if os.path.exists(runs) else 1
open(runs, "a").write(f"{{n}}\\n")
expiry = time.time() + float(os.environ.get("LIFETIME", "2"))
claim = {{"none": None, "hour": time.time() + 3600}}.get(os.environ.get("CLAIM"), expiry)
status = {{"token": f"tok-{{n}}-{{expiry}}"}}
if os.environ.get("MODE") == "cert":
    name = ("alice", "bob")[(n - 1) % 2]
    status = {{"clientCertificateData": open(os.path.join(os.environ["PKI"], name + ".crt")).read(),
              "clientKeyData": open(os.path.join(os.environ["PKI"], name + ".key")).read()}}
if claim is not None:
    stamp = datetime.datetime.fromtimestamp(claim, datetime.timezone.utc)
    status["expirationTimestamp"] = stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
print(json.dumps({{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": status}}))
"""


def _kubeconfig(tmp_path: Path, srv, pki: Path, user: dict) -> str:
    cluster = {"server": url(srv, "https"), "certificate-authority": str(pki / "ca.crt")}
    return kubeconfig(tmp_path / "kubeconfig", cluster, user)


def _exec_client(tmp_path: Path, srv, pki: Path, **env: str) -> Client:
    plugin = tmp_path / "plugin.py"
    plugin.write_text(PLUGIN.format(python=sys.executable))
    plugin.chmod(0o755)
    env = {"PKI": str(pki), **env}
    ex = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": str(plugin),
        "interactiveMode": "Never",
        "env": [{"name": k, "value": v} for k, v in env.items()],
    }
    return Client(_kubeconfig(tmp_path, srv, pki, {"exec": ex}), None, 10)


def _runs(tmp_path: Path) -> int:
    return len((tmp_path / "runs.txt").read_text().split())


def test_an_expired_exec_token_is_replaced_before_the_request(tmp_path, server, pki):
    c = _exec_client(tmp_path, server, pki, LIFETIME="1.5")
    assert c.get("/api/a")["who"] == "token 1"
    assert c.get("/api/a")["who"] == "token 1"  # kept while it lasts
    time.sleep(1.6)
    assert c.get("/api/b")["who"] == "token 2"
    assert _runs(tmp_path) == 2
    assert [who for _, who in server.log] == ["token 1", "token 1", "token 2"]  # never a 401


def test_a_401_runs_the_plugin_again_and_the_request_once_more(tmp_path, server, pki):
    c = _exec_client(tmp_path, server, pki, CLAIM="hour")  # it says an hour; the server takes it for a while
    assert c.get("/api/a")["who"] == "token 1"
    server.refused.add(1)
    assert c.get("/api/b")["who"] == "token 2"
    assert server.log[1:] == [("/api/b", None), ("/api/b", "token 2")]
    assert _runs(tmp_path) == 2


def test_a_401_that_stays_is_one_error_after_one_retry(tmp_path, server, pki):
    c = _exec_client(tmp_path, server, pki, CLAIM="none")
    server.reject_all = True
    with pytest.raises(Unauthorized) as e:
        c.get("/api/a")
    assert e.value.message == "Unauthorized: the server rejected the credentials of this kubeconfig (Unauthorized)"
    assert server.log == [("/api/a", None), ("/api/a", None)] and _runs(tmp_path) == 2


def test_a_static_token_is_not_retried(tmp_path, server, pki):
    c = Client(_kubeconfig(tmp_path, server, pki, {"token": "tok-0-0"}), None, 10)
    with pytest.raises(Unauthorized):
        c.get("/api/a")
    assert server.log == [("/api/a", None)]


def test_a_token_file_that_the_server_refuses_is_read_again(tmp_path, server, pki):
    (tmp_path / "token").write_text("tok-1-0\n")  # expired
    c = Client(_kubeconfig(tmp_path, server, pki, {"tokenFile": str(tmp_path / "token")}), None, 10)
    (tmp_path / "token").write_text(f"tok-2-{time.time() + 60}\n")  # the kubelet's rotation, say
    assert c.get("/api/a")["who"] == "token 2"
    assert server.log == [("/api/a", None), ("/api/a", "token 2")]


def test_an_exec_client_certificate_rotates_with_its_expiry(tmp_path, server, pki):
    c = _exec_client(tmp_path, server, pki, MODE="cert", LIFETIME="1.5")
    assert c.get("/api/a")["who"] == c.get("/api/a")["who"] == "alice"
    first_pool = c.pool
    time.sleep(1.6)
    assert c.get("/api/a")["who"] == "bob"  # the plugin's next certificate, on a new connection
    assert c.pool is not first_pool and _runs(tmp_path) == 2


def test_a_watch_reconnects_with_the_credentials_of_the_time(tmp_path, server, pki):
    """Each watch of the loopback server ends after one event; by the third reconnect, the first two tokens have
    expired: every reconnect was made with a token the server still took."""
    from kubectl_dra.gather.watch import LiveSession

    c = _exec_client(tmp_path, server, pki, LIFETIME="0.5")
    session = LiveSession(c, [ListRecord("/watch/things", "Thing", "v1", {}, "1", [])], [], {})
    seen = set()
    session.start()
    try:
        deadline = time.time() + 20
        while time.time() < deadline and len(seen) < 3:
            session.wait_for_change(settle=0.01)
            with session.lock:
                seen |= {key[1] for key in session.sources[0].objects}
    finally:
        session.stopped = True
    assert len(seen) >= 3, (seen, server.log)
    assert session.failed is None and not session.warned


def test_a_watch_whose_credentials_stay_refused_ends_the_session(tmp_path, server, pki):
    from kubectl_dra.gather.watch import LiveSession

    c = _exec_client(tmp_path, server, pki, CLAIM="none")
    server.reject_all = True
    session = LiveSession(c, [ListRecord("/watch/things", "Thing", "v1", {}, "1", [])], [], {})
    session.start()
    with pytest.raises(Unauthorized):
        session.wait_for_change()
    assert server.log == [("/watch/things", None)] * 2 and _runs(tmp_path) == 2
