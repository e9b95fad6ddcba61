"""gather/client.py reading answers from a real HTTP/1.1 server on loopback: a list streamed one chunk per item as
the API server writes it, an answer with a Content-Encoding (read through urllib3, which decodes it), the connection
kept for the next request, and a body that trickles in ending at --request-timeout, not later."""

from __future__ import annotations

import gzip
import json
import time

import pytest
from loopback import Handler, kubeconfig, serve, url

from kubectl_dra.errors import DraError
from kubectl_dra.gather.client import Client

ITEMS = [{"metadata": {"name": f"slice-{i}"}, "spec": {"devices": [{"name": f"gpu-{j}"} for j in range(8)]}} for i in range(300)]  # fmt: skip


class _Handler(Handler):
    def setup(self):
        super().setup()
        self.server.connections += 1

    def do_GET(self):
        self.server.paths.append(self.path)
        if self.path.startswith("/chunked"):
            self._chunked()
        elif self.path.startswith("/gzip"):
            body = gzip.compress(json.dumps({"metadata": {}, "items": ITEMS}).encode())
            self._headers({"Content-Encoding": "gzip", "Content-Length": str(len(body))})
            self.wfile.write(body)
        elif self.path.startswith("/length"):
            body = json.dumps({"metadata": {}, "items": ITEMS}).encode()
            short = self.path.startswith("/length-short") and not self.server.shortened
            self._headers({"Content-Length": str(len(body))})
            if short:  # the first time: half the body, then the connection closes
                self.server.shortened = True
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(body)
        elif self.path.startswith("/trickle"):
            self._headers({"Transfer-Encoding": "chunked"})
            for _ in range(100):
                self._chunk(b" ")
                time.sleep(0.25)
        else:
            self.send_error(404)

    def _headers(self, extra: dict):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        for k, v in extra.items():
            self.send_header(k, v)
        self.end_headers()

    def _chunk(self, data: bytes):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _chunked(self):
        # as the API server streams a list: the metadata first, then one chunk per item
        self._headers({"Transfer-Encoding": "chunked"})
        self._chunk(b'{"kind":"ResourceSliceList","apiVersion":"resource.k8s.io/v1","metadata":{},"items":[')
        for i, it in enumerate(ITEMS):
            self._chunk((b"," if i else b"") + json.dumps(it).encode())
        self._chunk(b"]}")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


@pytest.fixture
def server(tmp_path):
    with serve(_Handler, connections=0, paths=[], shortened=False) as srv:
        yield srv, kubeconfig(tmp_path / "kubeconfig", {"server": url(srv)})


def test_a_streamed_list_and_an_encoded_answer_read_alike_on_one_connection(server):
    srv, kc = server
    c = Client(kc, None, 30, chunk_size=0)
    streamed = c.list("/chunked", "ResourceSlice", "resource.k8s.io/v1")
    encoded = c.list("/gzip", "ResourceSlice", "resource.k8s.io/v1")
    again = c.list("/chunked", "ResourceSlice", "resource.k8s.io/v1")
    want = [dict(it, kind="ResourceSlice", apiVersion="resource.k8s.io/v1") for it in ITEMS]
    assert streamed == encoded == again == want
    assert srv.connections == 1, srv.connections  # every answer was read to its end: the connection stays usable


def test_a_trickling_body_ends_at_the_request_timeout(server):
    srv, kc = server
    c = Client(kc, None, 1.0)
    t = time.monotonic()
    with pytest.raises(DraError, match=r"GET /trickle: no complete answer from the server within 1s"):
        c.get("/trickle")
    took = time.monotonic() - t
    assert 0.9 < took < 1.6, took  # bytes keep coming, yet no read may wait past what is left of the second


def test_answers_with_a_content_length_keep_the_connection_and_a_short_one_is_asked_again(server):
    srv, kc = server
    c = Client(kc, None, 30, chunk_size=0)
    want = [dict(it, kind="ResourceSlice", apiVersion="resource.k8s.io/v1") for it in ITEMS]
    assert c.list("/length", "ResourceSlice", "resource.k8s.io/v1") == want
    assert c.list("/chunked", "ResourceSlice", "resource.k8s.io/v1") == want
    assert c.list("/length", "ResourceSlice", "resource.k8s.io/v1") == want
    assert srv.connections == 1, srv.connections  # each answer was finished, so the next request could follow it
    assert c.list("/length-short", "ResourceSlice", "resource.k8s.io/v1") == want
    assert srv.paths.count("/length-short") == 2, srv.paths  # cut short: retried as client-go retries a reset
