"""kubectl-dra against a misbehaving API server: the real kube-apiserver behind a fault-injecting proxy
(fault_proxy.py). What client-go retries is retried (a 429 or 5xx with Retry-After, a connection reset before the
answer), an expired continue token relists from the start, and everything else ends in one `error:` line naming the
request, exit 2: never a traceback, never a partial answer presented as whole."""

from __future__ import annotations

import time

import pytest
from builders import device, request
from dra_objects import RES, claim, pod
from fault_proxy import FaultProxy

pytestmark = pytest.mark.e2e

SLICES = f"{RES}/resourceslices"


@pytest.fixture
def proxied(scenario, tmp_path):
    """A bound pod (so the answer is known) and a proxy in front of the API server; yields (sc, proxy, kubeconfig)."""
    sc = scenario("faults")
    sc.device_class()
    sc.slice([device("dev-0")])
    sc.create(claim("c-f", [request("gpu", sc.cls)]))
    sc.create(pod("pod-f", {"gpu": "c-f"}))
    sc.cluster.wait_bound(sc.ns, "pod-f")
    proxy = FaultProxy(sc.cluster)
    yield sc, proxy, proxy.kubeconfig(tmp_path / "proxy.kubeconfig")
    proxy.close()


def _explain(sc, kc, *extra):
    return sc.cluster.kubectl_dra("explain", "pod", "pod-f", "-n", sc.ns, "-o", "json", *extra, kubeconfig=kc)


def _same_answer(sc, r) -> None:
    direct = sc.cluster.kubectl_dra("explain", "pod", "pod-f", "-n", sc.ns, "-o", "json")
    assert r.code == direct.code == 0, str(r)
    assert r.json["verdict"] == direct.json["verdict"] and r.json["claims"] == direct.json["claims"], str(r)


def test_retry_after_is_honoured(proxied):
    sc, proxy, kc = proxied
    proxy.add(SLICES, "status", status=429, retry_after="1")
    proxy.add("/api/v1/nodes", "status", times=2, status=503, retry_after="0")
    t = time.monotonic()
    r = _explain(sc, kc)
    _same_answer(sc, r)
    assert len(proxy.requests(SLICES)) == 2 and len(proxy.requests("/api/v1/nodes")) == 3, proxy.log
    assert time.monotonic() - t >= 1.0  # it waited as asked


def test_a_reset_connection_is_retried(proxied):
    sc, proxy, kc = proxied
    proxy.add(f"{RES}/resourceclaims", "reset")
    r = _explain(sc, kc)
    _same_answer(sc, r)
    assert len(proxy.requests(f"{RES}/resourceclaims")) == 2, proxy.log


def test_an_expired_continue_token_relists_from_the_start(proxied):
    sc, proxy, kc = proxied
    proxy.add(SLICES + "?limit=", "fake-continue")  # the first page says there is more ...
    proxy.add("continue=kubectl-dra-e2e-expired-token", "status", status=410)  # ... but the token has expired
    r = _explain(sc, kc)
    _same_answer(sc, r)
    asked = proxy.requests(SLICES)
    assert len(asked) == 3 and "limit=" not in asked[-1] and "continue" not in asked[-1], asked


def test_chunks_are_asked_for_while_the_page_before_is_arriving(proxied):
    """--chunk-size 1: one slice per page. Each page's answer pauses after its first half (the list's metadata and
    continue token); the next page is asked for during that pause, and the answer is the same as in one list."""
    sc, proxy, kc = proxied
    for i in (1, 2, 3):
        sc.slice([device(f"more-{i}")], node="node-01", suffix=f"-more-{i}", pool=f"more-{i}")
    proxy.add(SLICES + "?limit=1", "slow", times=100, stall_seconds=0.5)
    r = _explain(sc, kc, "--chunk-size", "1")
    _same_answer(sc, r)
    pages = sorted((a, b, p) for p, a, b in proxy.spans if p.startswith(SLICES + "?limit=1"))
    assert len(pages) >= 4, pages
    overlapped = [i for i in range(len(pages) - 1) if pages[i + 1][0] < pages[i][1]]
    assert len(overlapped) >= 3, pages  # page i+1 arrived before page i was answered
    assert all("continue=" in p for _, _, p in pages[1:]), pages


def test_chunk_size_zero_asks_for_each_list_in_one_answer(proxied):
    sc, proxy, kc = proxied
    r = _explain(sc, kc, "--chunk-size", "0")
    _same_answer(sc, r)
    asked = proxy.requests(SLICES)
    assert len(asked) == 1 and "limit=" not in asked[0], asked


@pytest.mark.parametrize(
    "rule,expect",
    [
        ({"fault": "status", "status": 500}, "the server answered 500 for GET /apis/resource.k8s.io/v1/deviceclasses"),
        ({"fault": "status", "status": 429, "retry_after": "0", "times": 100}, "gave up after 11 attempts"),
    ],
)
def test_what_is_not_retried_ends_in_one_line(proxied, rule, expect):
    sc, proxy, kc = proxied
    proxy.add(f"{RES}/deviceclasses", **rule)
    r = _explain(sc, kc)
    assert r.code == 2 and r.stdout == "", str(r)
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: ") and expect in r.stderr, str(r)
    assert "Traceback" not in r.stderr


def test_a_stalled_answer_ends_at_the_request_timeout(proxied):
    sc, proxy, kc = proxied
    proxy.add("/api/v1/nodes", "stall", stall_seconds=30)
    t = time.monotonic()
    r = _explain(sc, kc, "--request-timeout", "2s")
    took = time.monotonic() - t
    assert r.code == 2 and r.stdout == "", str(r)
    assert "GET /api/v1/nodes: no complete answer from the server within 2s (--request-timeout)" in r.stderr, str(r)
    assert r.stderr.count("\n") == 1 and took < 10, (took, str(r))
