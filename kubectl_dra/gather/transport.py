"""The HTTP side of a live gather: one urllib3 pool for the API server a kubeconfig names (gather/kubeconfig.py),
with its TLS settings (a client certificate included), the headers of every request (client.py adds the
Authorization current when it sends one) and the proxy client-go would use (the kubeconfig's proxy-url, else
HTTPS_PROXY/HTTP_PROXY/ALL_PROXY unless NO_PROXY names the server). Requests are GETs; urllib3's own retries and
redirects are off (live.py retries what client-go retries, within --request-timeout)."""

from __future__ import annotations

import ipaddress
import os
import ssl
import tempfile
from urllib.parse import urlsplit
from urllib.request import getproxies

from kubectl_dra import __version__
from kubectl_dra.errors import DraError
from kubectl_dra.gather.credentials import Creds
from kubectl_dra.gather.kubeconfig import Connection

USER_AGENT = f"kubectl-dra/{__version__}"


def ssl_context(conn: Connection, creds: Creds) -> ssl.SSLContext:
    """TLS as the kubeconfig says: its CA only (as client-go trusts it; the system's roots when it names none), the
    client certificate of the credentials (the kubeconfig's or an exec plugin's), or no verification."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        if conn.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        elif conn.ca_pem:
            ctx.load_verify_locations(cadata=conn.ca_pem.decode("ascii", "replace"))
        else:
            ctx.load_default_certs()
        if creds.cert_pem or creds.key_pem:
            _load_client_certificate(ctx, creds.cert_pem or b"", creds.key_pem or b"")
    except ssl.SSLError as e:
        raise DraError(f"invalid TLS material in the kubeconfig: {e.reason or e}") from None
    return ctx


def _load_client_certificate(ctx: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    """ssl reads a certificate chain from files only: one private file for the moment it takes, then removed."""
    fd, path = tempfile.mkstemp(prefix="kubectl-dra-", suffix=".pem")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(cert.rstrip(b"\n") + b"\n" + key)
        ctx.load_cert_chain(path)
    finally:
        os.unlink(path)


def proxy_for(server: str, configured: str | None) -> str | None:
    """The kubeconfig's proxy-url, else the environment's proxy for the server's scheme (client-go's
    http.ProxyFromEnvironment), unless NO_PROXY covers the server."""
    if configured:
        return configured
    proxies = getproxies()
    proxy = proxies.get(urlsplit(server).scheme) or proxies.get("all")
    if not proxy or _bypassed(server, proxies.get("no") or ""):
        return None
    return proxy


def _bypassed(url: str, no_proxy: str) -> bool:
    """NO_PROXY as golang.org/x/net/http/httpproxy reads it: `*`, host names and their subdomains, host:port,
    IP addresses and CIDR ranges."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if not host:
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if not entry:
            continue
        if entry == "*":
            return True
        if ip is not None:
            try:
                if ip in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                pass
        name, _, port = entry.partition(":") if entry.count(":") == 1 else (entry, "", "")
        if port and str(parts.port or "") != port:
            continue
        name = name.lstrip(".")
        if host == name or host.endswith("." + name):
            return True
    return False


def request_headers(conn: Connection):
    """The headers of every request but its Authorization (the client adds the credentials current when it sends
    it): impersonation (a name may repeat: one Impersonate-Group per group), JSON, and who asks."""
    from urllib3 import HTTPHeaderDict

    h = HTTPHeaderDict()
    for name, value in conn.impersonation:
        h.add(name, value)
    h["Accept"] = "application/json"
    h["User-Agent"] = USER_AGENT
    return h


def open_pool(conn: Connection, creds: Creds, maxsize: int = 32):
    """The urllib3 pool for the server (through its proxy, if any), its connections presenting the client
    certificate of creds (a new certificate needs a new pool)."""
    import urllib3

    kw = dict(
        ssl_context=ssl_context(conn, creds),
        maxsize=maxsize,
        retries=urllib3.Retry(total=0, redirect=0, raise_on_redirect=False, raise_on_status=False),
    )
    if conn.tls_server_name:
        kw["server_hostname"] = conn.tls_server_name
    if conn.insecure:
        kw["cert_reqs"] = "CERT_NONE"
        kw["assert_hostname"] = False
        # what the kubeconfig asked for: no warning per request (kubectl prints none either)
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
    proxy = proxy_for(conn.server, conn.proxy_url)
    if proxy is None:
        return urllib3.PoolManager(**kw)
    scheme = urlsplit(proxy).scheme.lower()
    if scheme.startswith("socks"):
        try:
            from urllib3.contrib.socks import SOCKSProxyManager
        except ImportError:
            raise DraError(f"the proxy {_shown(proxy)} is a SOCKS proxy, which needs the PySocks package") from None
        return SOCKSProxyManager(proxy, **kw)
    if scheme not in ("http", "https"):
        raise DraError(f"unsupported proxy scheme {scheme!r} in {_shown(proxy)}")
    return urllib3.ProxyManager(proxy, **kw)


def _shown(url: str) -> str:
    """A proxy URL without the user and password it may carry."""
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
