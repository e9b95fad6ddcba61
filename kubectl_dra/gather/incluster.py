"""The in-cluster configuration of a pod's ServiceAccount, as client-go's rest.InClusterConfig reads it and kubectl's
clientcmd falls back to it (merged_client_builder.go: no kubeconfig, or an empty one, and inClusterClientConfig
Possible()): the server is https://KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT (net.JoinHostPort: an IPv6
address in brackets), the bearer token is the mounted token file, read again as it ages (transport/token_source.go:
the kubelet rotates a projected token, so it is never cached for good: gather/credentials.py TokenFileCredentials),
the CA bundle the mounted ca.crt (one that does not load is logged by client-go and the system's roots used: the same
here, without the log), the namespace POD_NAMESPACE, else the mounted namespace file, else "default".

KUBECTL_DRA_SERVICEACCOUNT_DIR replaces /var/run/secrets/kubernetes.io/serviceaccount, for tests only (a test
cannot write there; client-go has no such override)."""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass

from kubectl_dra.errors import DraError
from kubectl_dra.gather.credentials import TokenFileCredentials

SERVICEACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
DIR_ENV = "KUBECTL_DRA_SERVICEACCOUNT_DIR"  # tests only
CONTEXT = "in-cluster"  # what an answer names as its context


@dataclass(frozen=True)
class InCluster:
    server: str
    namespace: str
    ca_pem: bytes | None  # None: the system's roots (the mounted ca.crt is missing or does not load)
    credentials: TokenFileCredentials


def _dir() -> str:
    return os.environ.get(DIR_ENV) or SERVICEACCOUNT_DIR


def possible() -> bool:
    """client_config.go inClusterClientConfig.Possible: both variables set and a token file (not a directory)."""
    if not (os.environ.get("KUBERNETES_SERVICE_HOST") and os.environ.get("KUBERNETES_SERVICE_PORT")):
        return False
    return os.path.isfile(os.path.join(_dir(), "token"))


def join_host_port(host: str, port: str) -> str:
    """Go's net.JoinHostPort: a host with a colon (an IPv6 address) in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def load() -> InCluster:
    """rest.InClusterConfig and inClusterClientConfig.Namespace; a one-line DraError where client-go errs."""
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST", ""), os.environ.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port:  # rest.ErrNotInCluster
        raise DraError(
            "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined"
        )
    base = _dir()
    token_path = os.path.join(base, "token")
    try:
        with open(token_path, encoding="utf-8", errors="replace") as f:
            token = f.read()
    except OSError as e:
        raise DraError(f"open {token_path}: {(e.strerror or str(e)).lower()}") from None
    server = "https://" + join_host_port(host, port)
    try:
        from urllib.parse import urlsplit

        urlsplit(server).port  # a port that is not one fails here, as the first request would
    except ValueError:
        raise DraError(f"invalid in-cluster server {server!r}: KUBERNETES_SERVICE_PORT is not a port") from None
    # BearerToken (as read) and BearerTokenFile: the file is read again a minute after each read, its last good
    # token kept when a read fails, and the token read now when none ever succeeds again
    credentials = TokenFileCredentials(token_path, token.strip(), None, None)
    return InCluster(server, _namespace(base), _ca(os.path.join(base, "ca.crt")), credentials)


def _ca(path: str) -> bytes | None:
    """certutil.NewPool: the file's certificates, or None (the system's roots) when it is missing or holds none."""
    try:
        with open(path, "rb") as f:
            pem = f.read()
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cadata=pem.decode("ascii"))
    except (OSError, ValueError, ssl.SSLError):
        return None
    return pem


def _namespace(base: str) -> str:
    if os.environ.get("POD_NAMESPACE"):
        return os.environ["POD_NAMESPACE"]
    try:
        with open(os.path.join(base, "namespace"), encoding="utf-8", errors="replace") as f:
            ns = f.read().strip()
    except OSError:
        ns = ""
    return ns or "default"
