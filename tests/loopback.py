"""HTTP servers on loopback for the tests that speak to one (the client's reading of answers, the plan's executor,
credentials that expire, the e2e token webhook), and the kubeconfig that points at a server.

A test writes its own request handler (a subclass of Handler: do_GET/do_POST, answering with send_json) and runs it
with serve() (or start() and stop()); state the handler reads or records goes on the server as keyword arguments of serve()."""

from __future__ import annotations

import json
import socketserver
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


class Handler(BaseHTTPRequestHandler):
    """HTTP/1.1 (connections kept, as the API server's), quiet."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, status: int, doc=None, raw: bytes | None = None, headers: dict | None = None) -> None:
        """One answer with a Content-Length: DOC as JSON, or RAW as is."""
        body = raw if raw is not None else json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def start(handler: type[socketserver.BaseRequestHandler], tls: ssl.SSLContext | None = None, poll: float = 0.5,
          **state) -> Server:  # fmt: skip
    """A threaded server on 127.0.0.1 (a free port), TLS with that server context when given, serving until stop()."""
    srv = Server(("127.0.0.1", 0), handler)
    if tls is not None:
        srv.socket = tls.wrap_socket(srv.socket, server_side=True)
    for k, v in state.items():
        setattr(srv, k, v)
    threading.Thread(target=srv.serve_forever, args=(poll,), daemon=True).start()
    return srv


def stop(srv: Server) -> None:
    srv.shutdown()
    srv.server_close()


@contextmanager
def serve(handler: type[socketserver.BaseRequestHandler], tls: ssl.SSLContext | None = None, poll: float = 0.5,
          **state) -> Iterator[Server]:  # fmt: skip
    """start() for the block."""
    srv = start(handler, tls, poll, **state)
    try:
        yield srv
    finally:
        stop(srv)


def url(srv: socketserver.BaseServer, scheme: str = "http", path: str = "") -> str:
    return f"{scheme}://127.0.0.1:{srv.server_address[1]}{path}"


def kubeconfig(path: Path, cluster: dict | None = None, user: dict | None = None, context: dict | None = None,
               extra: dict | None = None) -> str:  # fmt: skip
    """A kubeconfig of one context "c" on cluster "k" (server https://10.0.0.1:6443 unless CLUSTER says) and user
    "u"; EXTRA replaces top-level fields. Written as JSON (JSON is YAML); returns its path."""
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "c",
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u", **(context or {})}}],
        "clusters": [{"name": "k", "cluster": {"server": "https://10.0.0.1:6443", **(cluster or {})}}],
        "users": [{"name": "u", "user": user or {}}],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**doc, **(extra or {})}))
    return str(path)


def http_get(url: str, timeout: float = 5) -> tuple[int, str]:
    """(status, body) of one GET; an HTTP error is its status, a connection that fails status 0."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:
        return 0, str(e)
