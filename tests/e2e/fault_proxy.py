"""A fault-injecting HTTPS proxy on loopback in front of the suite's real kube-apiserver.

It terminates TLS with the API server's own certificate (issued for 127.0.0.1 by the suite's CA), forwards each GET
to the real server with the admin's client certificate, and answers instead of the server when a scripted rule
matches the request: a status (429, 5xx, 410, with or without Retry-After), a connection reset before any answer, a
body that stalls half-way (for good, or for a while), or a first page whose continue token the next request finds expired. Every request is
logged, so a test can count the retries."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from loopback import Handler, start, stop


@dataclass
class Rule:
    match: str  # a substring of the request path (with its query)
    fault: str  # "status", "reset", "stall", "slow", "fake-continue"
    times: int = 1  # how many matching requests it answers
    status: int = 500
    retry_after: str | None = None
    stall_seconds: float = 30.0


class FaultProxy:
    def __init__(self, cluster):
        self.cluster = cluster
        pki = Path(cluster.dir) / "pki"
        up = urlsplit(cluster.server)
        self.upstream = (up.hostname, up.port)
        self.client_ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        self.client_ctx.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
        server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server_ctx.load_cert_chain(str(pki / "apiserver.crt"), str(pki / "apiserver.key"))
        self.rules: list[Rule] = []
        self.log: list[str] = []
        self.spans: list[tuple[str, float, float]] = []  # (path, arrived, answered) of every forwarded answer
        self.lock = threading.Lock()
        # path -> (status, content type, body) of the API server's 200 answers, served again without asking it: set
        # to a dict to replay (benchmarks/fleet.py: N contexts each as if its own cluster, one server's work)
        self.cache: dict | None = None
        proxy = self

        class Forward(Handler):
            def do_GET(self):
                proxy._handle(self)

        self.httpd = start(Forward, server_ctx)
        self.port = self.httpd.server_address[1]

    def close(self) -> None:
        stop(self.httpd)

    def add(self, match: str, fault: str, **kw) -> Rule:
        r = Rule(match, fault, **kw)
        with self.lock:
            self.rules.append(r)
        return r

    def kubeconfig(self, path: Path) -> str:
        from e2e_helpers import clusterlib

        clusterlib.write_kubeconfig(
            path, f"https://127.0.0.1:{self.port}", Path(self.cluster.dir) / "pki", user="proxy", token="unused"
        )
        return str(path)

    def requests(self, substring: str) -> list[str]:
        with self.lock:
            return [p for p in self.log if substring in p]

    # -- one request ---------------------------------------------------------------------------
    def _rule_for(self, path: str) -> Rule | None:
        with self.lock:
            self.log.append(path)
            for r in self.rules:
                if r.times > 0 and r.match in path:
                    r.times -= 1
                    return r
        return None

    def _handle(self, h: Handler) -> None:
        arrived = time.monotonic()
        try:
            self._answer(h)
        finally:
            with self.lock:
                self.spans.append((h.path, arrived, time.monotonic()))

    def _answer(self, h: Handler) -> None:
        rule = self._rule_for(h.path)
        if rule is None or rule.fault == "fake-continue":
            status, ctype, body = self._forward(h.path)
            if rule is not None and status == 200:
                doc = json.loads(body)
                doc.setdefault("metadata", {})["continue"] = "kubectl-dra-e2e-expired-token"
                body = json.dumps(doc).encode()
            self._send(h, status, body, ctype)
            return
        if rule.fault == "status":
            status_doc = {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "code": rule.status,
                "reason": {410: "Expired", 429: "TooManyRequests"}.get(rule.status, "InternalError"),
                "message": f"injected by the e2e fault proxy ({rule.status})",
            }
            extra = {"Retry-After": rule.retry_after} if rule.retry_after is not None else {}
            self._send(h, rule.status, json.dumps(status_doc).encode(), "application/json", extra)
        elif rule.fault == "reset":
            conn = h.connection
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            h.close_connection = True
            conn.close()
        elif rule.fault in ("stall", "slow"):
            # the first half of the real answer (a list's metadata), a pause; then nothing more (stall) or the rest
            status, ctype, body = self._forward(h.path)
            h.send_response(status)
            h.send_header("Content-Type", ctype)
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body[: len(body) // 2])
            h.wfile.flush()
            time.sleep(rule.stall_seconds)
            if rule.fault == "slow":
                h.wfile.write(body[len(body) // 2 :])
                h.wfile.flush()
            else:
                h.close_connection = True

    def _forward(self, path: str) -> tuple[int, str, bytes]:
        cache = self.cache
        if cache is not None and path in cache:
            return cache[path]
        conn = http.client.HTTPSConnection(*self.upstream, context=self.client_ctx, timeout=30)
        try:
            conn.request("GET", path, headers={"Accept": "application/json"})
            r = conn.getresponse()
            got = r.status, r.getheader("Content-Type") or "application/json", r.read()
        finally:
            conn.close()
        if cache is not None and got[0] == 200:
            cache[path] = got
        return got

    @staticmethod
    def _send(h, status: int, body: bytes, ctype: str, extra: dict | None = None) -> None:
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body)
