"""The exporter of `status -w --metrics-bind-address`: the metric families computed from the reports
(analyze/reports/metrics.py) on golden scenario inputs, and the HTTP side (cli/exporter.py) scraped for real and
parsed with prometheus-client's own parser."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from clirun import run
from loopback import Handler, http_get, kubeconfig, serve, url
from prometheus_client.parser import text_string_to_metric_families

from kubectl_dra.analyze.reports.inventory import inventory
from kubectl_dra.analyze.reports.metrics import DEVICE_STATES, MISSING, answer_families
from kubectl_dra.analyze.reports.status import scan
from kubectl_dra.cli.exporter import STALE_AFTER, Exporter, parse_bind_address
from kubectl_dra.errors import DraError
from kubectl_dra.features import Semantics
from kubectl_dra.findings.registry import REGISTRY
from kubectl_dra.gather.client import Client
from kubectl_dra.gather.files import load_files
from kubectl_dra.gather.watch import LiveSession

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
S37 = Semantics.for_version((1, 37))


def answer(name: str):
    snap = load_files([str(SCENARIOS / name / "input.yaml")], None)
    report = scan(snap, S37, None)
    return snap, report, {f.name: f for f in answer_families(report, inventory(snap, S37))}


def samples(family) -> dict:
    return {tuple(zip(family.labels, values)): v for values, v in family.samples}


def test_pods_devices_and_the_queue():
    _, report, fams = answer("status-all-namespaces")
    pods = {(dict(k)["namespace"], dict(k)["pod"]): dict(k) for k in samples(fams["pod_status"])}
    assert len(pods) == len(report.rows) == 5
    assert pods["team-b", "ext-0"] == {"namespace": "team-b", "pod": "ext-0", "state": "blocked",
                                      "missing": "device", "code": "DRA430"}  # fmt: skip
    assert pods["ml-prod", "recomendador-manual"]["state"] == "ok"
    counts = {(dict(k)["state"], dict(k)["missing"]): v for k, v in samples(fams["pods"]).items()}
    assert counts["blocked", "device"] == 2 and counts["ok", ""] == 3 and counts["unknown", ""] == 0
    codes = set(REGISTRY) | {""}
    for labels in pods.values():  # bounded: fixed sets, never free text
        assert labels["state"] in ("blocked", "unknown", "ok")
        assert labels["missing"] in (*MISSING, "") and labels["code"] in codes
    devices = {(d["class"], d["node"], d["state"]): v for d, v in map(lambda kv: (dict(kv[0]), kv[1]),
                                                                       samples(fams["devices"]).items())}  # fmt: skip
    # node-01's free device goes to the pending pod the queue's dry-run places first: reserved, not free
    assert devices["gpu", "node-01", "reserved"] == 1 and devices["gpu", "node-01", "free"] == 0
    assert devices["gpu", "node-02", "allocated"] == 1
    assert {s for _, _, s in devices} == set(DEVICE_STATES)  # every state of a group, zeros included
    assert samples(fams["answer_determined"]) == {(): 1.0}


def test_kubelet_plugins():
    _, _, fams = answer("devices-driver-plugins")
    on = {(dict(k)["node"], dict(k)["status"]) for k, v in samples(fams["kubelet_plugin"]).items() if v == 1}
    assert on == {("node-01", "serving"), ("node-02", "not-ready"), ("node-03", "no-pod")}
    assert len(samples(fams["kubelet_plugin"])) == 3 * 4  # one per status: an alert compares a 1, never an absence


@pytest.mark.parametrize(
    ("text", "want"),
    [(":8080", ("0.0.0.0", 8080)), ("127.0.0.1:0", ("127.0.0.1", 0)), ("[::1]:9090", ("::1", 9090))],
)
def test_bind_address(text, want):
    assert parse_bind_address(text) == want


@pytest.mark.parametrize("text", ["8080", "host:port", "::1:8080", "h:70000", ""])
def test_bad_bind_address(text):
    with pytest.raises(DraError, match="invalid --metrics-bind-address"):
        parse_bind_address(text)


def test_served_metrics_and_probes():
    snap, report, _ = answer("status-all-namespaces")
    session = LiveSession(None, [], [], {})
    ex = Exporter("127.0.0.1:0", "prod-eu", session)
    ex.start()
    base = f"http://127.0.0.1:{ex.port}"
    try:
        assert http_get(base + "/healthz") == (200, "ok\n")
        assert http_get(base + "/readyz") == (503, "no answer yet\n")
        ex.observe(snap, report, S37)
        ex.failed()
        session.interruptions = 3
        status, why = http_get(base + "/readyz")
        assert status == 503 and why.startswith("stale: the last answer failed"), why
        ex.observe(snap, report, S37)
        assert http_get(base + "/readyz") == (200, "ok\n")
        status, text = http_get(base + "/metrics")
        assert status == 200
        fams = {f.name: f for f in text_string_to_metric_families(text)}
        blocked = [s for s in fams["kubectl_dra_pod_status"].samples if s.labels["state"] == "blocked"]
        assert {s.labels["pod"] for s in blocked} == {"ext-0", "recomendador-7d9c8b6f5-q9w8e"}
        assert all(s.labels["cluster"] == "prod-eu" for f in fams.values() if f.name.startswith("kubectl_dra")
                   for s in f.samples)  # fmt: skip
        errors = {s.labels["kind"]: s.value for s in fams["kubectl_dra_errors"].samples if s.name.endswith("_total")}
        assert errors == {"answer": 1.0, "watch": 3.0}
        assert fams["kubectl_dra_answer_stale_seconds"].samples[0].value == 0
        assert abs(fams["kubectl_dra_last_answer_timestamp_seconds"].samples[0].value - time.time()) < 60
        assert "process_resident_memory_bytes" in text
        session.down["/apis/resource.k8s.io/v1/resourceslices"] = time.monotonic() - STALE_AFTER - 1
        status, why = http_get(base + "/readyz")
        assert status == 503 and why.startswith("stale: a watch has been down for")
        assert http_get(base + "/other")[0] == 404
    finally:
        ex.server.shutdown()
        ex.server.server_close()


def test_a_scrape_serves_the_text_last_written_and_a_new_answer_is_written_beside_it():
    """At 5,000 nodes an answer is 60,000 series, a second or more to write while the answers go on: written at
    every scrape, or in the first scrape after each answer, scrapes passed Prometheus' 10 s timeout under churn. The
    first scrape of all writes the text; later ones serve the text last written at once, with the process's own
    values (errors, staleness) read afresh and the time of the answer they serve; a newer answer is written in the
    background and served from then on."""
    snap, report, _ = answer("status-all-namespaces")
    session = LiveSession(None, [], [], {})
    ex = Exporter("127.0.0.1:0", None, session)
    ex.start()
    base = f"http://127.0.0.1:{ex.port}"

    def stamp(text: str) -> float:
        fams = {f.name: f for f in text_string_to_metric_families(text)}
        return fams["kubectl_dra_last_answer_timestamp_seconds"].samples[0].value

    try:
        assert "kubectl_dra_pod_status{" not in http_get(base + "/metrics")[1]  # no answer yet: the process's own
        ex.observe(snap, report, S37)
        first_at = ex.answered_at
        first = http_get(base + "/metrics")[1]
        written = ex._rendered[1]
        session.interruptions = 2
        second = http_get(base + "/metrics")[1]
        assert ex._rendered[1] is written  # not written again
        assert 'kubectl_dra_errors_total{kind="watch"} 2.0' in second and "kubectl_dra_pod_status{" in second
        assert 'kubectl_dra_errors_total{kind="watch"} 0.0' in first
        assert stamp(first) == stamp(second) == first_at
        time.sleep(0.01)
        snap2, report2, _ = answer("preempt-queue-status")
        ex.observe(snap2, report2, S37)
        third = http_get(base + "/metrics")[1]  # at once: the text last written, and its answer's time
        assert "trainer-1" not in third and stamp(third) == first_at
        deadline = time.monotonic() + 30
        while ex._rendered[1] is written and time.monotonic() < deadline:
            time.sleep(0.02)
        fourth = http_get(base + "/metrics")[1]
        assert "trainer-1" in fourth and stamp(fourth) == ex.answered_at > first_at
        # every later text is written by the same one thread (a thread per text grew the memory in steps)
        writer, before = ex._writer, ex._rendered
        ex.observe(snap, report, S37)
        http_get(base + "/metrics")
        deadline = time.monotonic() + 30
        while ex._rendered is before and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ex._rendered is not before and ex._writer is writer and writer.is_alive()
        assert [t.name for t in threading.enumerate()].count("metrics-writer") == 1
    finally:
        ex.server.shutdown()
        ex.server.server_close()


def test_a_taken_port_is_a_one_line_error():
    first = Exporter("127.0.0.1:0", None, None)
    first.start()
    try:
        with pytest.raises(DraError, match=r"^cannot serve metrics on 127\.0\.0\.1:\d+: "):
            Exporter(f"127.0.0.1:{first.port}", None, None).start()
    finally:
        first.server.server_close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--metrics-bind-address", ":0"], "long-running status: add -w"),
        (["--metrics-cluster-name", "x"], "add --metrics-bind-address"),
        (["-w", "--metrics-bind-address", "nope"], "invalid --metrics-bind-address"),
    ],
)
def test_flag_errors_exit_2_before_any_request(args, message):
    r = run(["status", "-A", "--kubeconfig", "/nonexistent", *args])
    assert r.code == 2 and r.err.count("\n") == 1 and message in r.err, r


def test_other_commands_do_not_import_prometheus_client():
    code = "import sys; from kubectl_dra.cli import status; print('prometheus_client' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


class _Busy(Handler):
    """503 with Retry-After: 0 for the first two GETs, then the answer."""

    def do_GET(self):
        self.server.seen += 1
        if self.server.seen <= 2:
            self.send_json(503, {"kind": "Status", "code": 503}, headers={"Retry-After": "0"})
        else:
            self.send_json(200, {"kind": "Namespace", "metadata": {"name": "x"}})


def test_api_retries_are_counted(tmp_path):
    with serve(_Busy, seen=0) as srv:
        client = Client(kubeconfig(tmp_path / "kc", cluster={"server": url(srv)}), None, 5)
        assert client.get("/api/v1/namespaces/x")["metadata"]["name"] == "x"
    assert client.retries == 2
    ex = Exporter("127.0.0.1:0", None, LiveSession(client, [], [], {}))
    retries = next(f for f in ex.collect() if f.name == "kubectl_dra_api_retries")
    assert [s.value for s in retries.samples] == [2]


def _families_both_ways(path: Path, sem: Semantics):
    from kubectl_dra.analyze.pod.dryrun import Analysis

    snap = load_files([str(path)], None)
    fresh = answer_families(scan(snap, sem, None), inventory(snap, sem))
    base = Analysis(snap, sem)
    shared = answer_families(scan(snap, sem, None, analysis=base), inventory(snap, sem, base=base))
    return fresh, shared


@pytest.mark.parametrize("version", [(1, 34), (1, 37), (1, 38)])
def test_the_scan_and_the_inventory_sharing_one_analysis_answer_as_apart(version):
    """cli/watch.py builds one Analysis per answer for the scan and the inventory: on every scenario input (the
    queue's dry-run included) the metrics are those of the two made apart."""
    sem = Semantics.for_version(version)
    compared = 0
    for path in sorted(SCENARIOS.glob("*/input.yaml")):
        try:
            fresh, shared = _families_both_ways(path, sem)
        except DraError:
            continue  # an input made to be refused
        assert fresh == shared, path.parent.name
        compared += 1
    assert compared > 150
