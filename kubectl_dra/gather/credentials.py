"""What authenticates each request, as client-go keeps it current over a long-running process: the kubeconfig's
token, basic auth or client certificate never change; an exec plugin's ExecCredential is kept until its
status.expirationTimestamp and the plugin run again after it (plugin/pkg/client/auth/exec/exec.go getCreds); a
tokenFile is read again after a minute, less ten seconds of leeway (transport/token_source.go
NewCachedFileTokenSource). After a 401, refresh() runs the plugin again (exec.go maybeRefreshCreds) or re-reads the
file, and says whether the request is worth sending once more with what it got.

Each kind is safe to share between the threads of a gather and its watches; the exec plugin runs in one of them
at a time (it may be interactive)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable

from kubectl_dra.errors import DraError

EXEC_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
_STATUS = ("token", "clientCertificateData", "clientKeyData", "expirationTimestamp")
FILE_PERIOD = 60.0  # token_source.go: a token file is read again a minute after it was read ...
FILE_LEEWAY = 10.0  # ... less this leeway (cachingTokenSource.leeway)


@dataclass(frozen=True)
class Creds:
    """One set of credentials, as a request carries them."""

    authorization: str | None = None  # the Authorization header's value
    cert_pem: bytes | None = None  # the client certificate (PEM) the TLS handshake presents, with its key
    key_pem: bytes | None = None


class Credentials:
    """current(): the credentials to send now. refresh(used): after a 401 answered a request sent with `used`,
    get new ones if there is a way to; True when the credentials now current differ from `used` (worth one more
    try). The base kind never changes."""

    def current(self) -> Creds:
        raise NotImplementedError

    def refresh(self, used: Creds) -> bool:
        return False


@dataclass(frozen=True)
class StaticCredentials(Credentials):
    """A token, basic auth, a client certificate from the kubeconfig (or nothing: anonymous)."""

    creds: Creds = Creds()

    def current(self) -> Creds:
        return self.creds


class ExecCredentials(Credentials):
    """An exec plugin's credentials (exec.go Authenticator): run once, kept until the expirationTimestamp the plugin
    gave (for good without one), run again after it or when a 401 answers the credentials it gave last."""

    def __init__(self, run: Callable[[], tuple[Creds, float | None]], now: Callable[[], float] = time.time):
        self._run = run  # () -> (credentials, expiry as a POSIX time or None); a DraError when the plugin fails
        self._now = now
        self._lock = threading.Lock()
        self._creds: Creds | None = None
        self._expiry: float | None = None

    def _expired(self) -> bool:  # exec.go credsExpired
        return self._expiry is not None and self._now() > self._expiry

    def _run_locked(self) -> Creds:
        self._creds, self._expiry = self._run()
        return self._creds

    def current(self) -> Creds:
        with self._lock:
            if self._creds is not None and not self._expired():
                return self._creds
            return self._run_locked()

    def refresh(self, used: Creds) -> bool:
        with self._lock:
            if self._creds is not used and self._creds is not None:
                return self._creds != used  # another request has rotated them already
            return self._run_locked() != used


class TokenFileCredentials(Credentials):
    """A kubeconfig tokenFile (NewBearerAuthWithRefreshRoundTripper over NewCachedFileTokenSource): read again once
    the last read is FILE_PERIOD - FILE_LEEWAY old; a read that fails keeps the last token read, else the
    kubeconfig's `token`. Without a `token`, the first read must succeed (a DraError, client-go's words)."""

    def __init__(
        self, path: str, token: str, cert: bytes | None, key: bytes | None, now: Callable[[], float] = time.monotonic
    ):
        self.path, self._fallback, self._cert, self._key, self._now = path, token, cert, key, now
        self._lock = threading.Lock()
        self._token: str | None = None
        self._read_at = 0.0
        self._creds: Creds | None = None
        if token:
            self._reread()
        else:
            self._fallback = self._read()
            self._token, self._read_at = self._fallback, now()

    def _read(self) -> str:
        try:
            with open(self.path, encoding="utf-8", errors="replace") as f:
                token = f.read().strip()
        except OSError as e:
            raise DraError(f"failed to read token file {_q(self.path)}: {e.strerror or e}") from None
        if not token:
            raise DraError(f"read empty token from file {_q(self.path)}")
        return token

    def _reread(self) -> None:
        try:
            self._token, self._read_at = self._read(), self._now()
        except DraError:
            pass  # cachingTokenSource: "Unable to rotate token"; the last one stays

    def current(self) -> Creds:
        with self._lock:
            if self._token is None or self._now() >= self._read_at + FILE_PERIOD - FILE_LEEWAY:
                self._reread()
            return self._creds_locked()

    def _creds_locked(self) -> Creds:
        bearer = f"Bearer {self._token or self._fallback}"
        if self._creds is None or self._creds.authorization != bearer:
            self._creds = Creds(bearer, self._cert, self._key)
        return self._creds

    def refresh(self, used: Creds) -> bool:
        with self._lock:
            self._reread()
            return self._creds_locked() != used


class ReloadingCredentials(Credentials):
    """Credentials a loader makes (a legacy auth-provider, through the kubernetes client, which refreshes an
    expired token as it loads): loaded once, loaded again after a 401."""

    def __init__(self, load: Callable[[], Creds]):
        self._load = load
        self._lock = threading.Lock()
        self._creds = load()

    def current(self) -> Creds:
        return self._creds

    def refresh(self, used: Creds) -> bool:
        with self._lock:
            if self._creds == used:
                self._creds = self._load()
            return self._creds != used


def _q(s) -> str:
    return json.dumps(s, ensure_ascii=False, default=str)  # Go's %q, closely enough: one line, double quotes


def exec_plugin(ex: dict, command: str, cluster_info: dict) -> tuple[Creds, float | None]:
    """exec.go refreshCredsLocked: run the plugin once (`command`: its path as the kubeconfig resolves it);
    (its credentials, the POSIX time they expire at or None)."""
    version, mode = ex["apiVersion"], ex["interactiveMode"]
    if version not in EXEC_VERSIONS:
        raise DraError(f"exec plugin: invalid apiVersion {_q(version)}")
    tty = os.isatty(0)
    if mode == "Always" and not tty:
        raise DraError("getting credentials: exec plugin cannot support interactive mode: stdin is not a terminal")
    spec = {"cluster": cluster_info} if ex.get("provideClusterInfo") else {}
    spec["interactive"] = interactive = tty and mode != "Never"
    info = {"kind": "ExecCredential", "apiVersion": version, "spec": spec}
    env = {**os.environ, **{e["name"]: e.get("value") or "" for e in ex.get("env") or []}}
    env["KUBERNETES_EXEC_INFO"] = json.dumps(info, ensure_ascii=False, separators=(",", ":")) + "\n"  # as Go's
    hint = next((line.strip() for line in (ex.get("installHint") or "").splitlines() if line.strip()), "")
    hint = "".join(c if c.isprintable() else f"U+{ord(c):04X}" for c in hint)  # cleanANSIEscapeCodes
    missing = f"getting credentials: exec: executable {_q(command)} not found" + (f" ({hint})" if hint else "")
    executable = command if os.sep in command else shutil.which(command)
    if executable is None:
        raise DraError(missing)
    try:
        stdin = None if interactive else subprocess.DEVNULL  # stderr stays the terminal's: prompts
        done = subprocess.run([executable, *(ex.get("args") or [])], env=env, stdin=stdin, stdout=subprocess.PIPE)
    except FileNotFoundError:
        raise DraError(missing) from None
    except OSError as e:
        raise DraError(f"getting credentials: exec: {_q(command)}: {e.strerror or e}") from None
    if done.returncode:
        code = done.returncode if done.returncode > 0 else -1  # Go's ExitCode() for a signal
        raise DraError(f"getting credentials: exec: executable {_q(command)} failed with exit code {code}")
    try:
        cred = json.loads(done.stdout.decode("utf-8", "replace"))
    except ValueError:
        cred = None
    if not isinstance(cred, dict) or cred.get("kind") not in (None, "", "ExecCredential"):
        raise DraError("getting credentials: decoding stdout: the exec plugin did not print an ExecCredential")
    if cred.get("apiVersion") != version:
        raise DraError(
            f"getting credentials: exec plugin is configured to use API version {version}, "
            f"plugin returned version {_q(cred.get('apiVersion') or '')}"
        )
    if cred.get("status") is None:
        raise DraError("getting credentials: exec plugin didn't return a status field")
    status = cred["status"]
    if not isinstance(status, dict):
        raise DraError("getting credentials: decoding stdout: status: expected a mapping")
    for field in _STATUS:
        if status.get(field) is not None and not isinstance(status[field], str):
            raise DraError(f"getting credentials: decoding stdout: status.{field}: expected a string")
    token, cert, key = status.get("token") or "", status.get("clientCertificateData"), status.get("clientKeyData")
    if not (token or cert or key):
        raise DraError("getting credentials: exec plugin didn't return a token or cert/key pair")
    if bool(cert) != bool(key):
        raise DraError("getting credentials: exec plugin returned only certificate or key, not both")
    creds = Creds(f"Bearer {token}" if token else None, cert.encode() if cert else None, key.encode() if key else None)
    return creds, _expiry(status.get("expirationTimestamp"))


def _expiry(stamp: str | None) -> float | None:
    """An RFC 3339 expirationTimestamp as a POSIX time. One that does not parse (client-go: a decoding error) is
    taken as no expiry, as before expiry was honoured: a 401 still brings new credentials."""
    if not stamp:
        return None
    try:
        t = datetime.fromisoformat(stamp.strip())
    except ValueError:
        return None
    return (t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp()
