"""-w/--watch on the real control plane: the tutorial's own loop. The pod waits for a DeviceClass that does not
exist; kubectl-dra watches; the class is applied (the pod is not touched); the scheduler places the pod, and the
watch prints the change without being asked again. Bounded in time; Ctrl-C ends it with exit 130."""

from __future__ import annotations

import time

import pytest
from builders import device, request, template
from dra_objects import RES, claim, pod
from e2e_helpers import Watch as _Watch

pytestmark = pytest.mark.e2e


def test_watch_catches_the_device_class_being_created(scenario):
    sc = scenario("watch")
    sc.slice([device("dev-0")])
    sc.create(claim("c-w", [request("gpu", sc.cls)]))
    sc.create(pod("pod-w", {"gpu": "c-w"}))
    scan = _Watch(sc.cluster, "status", "-w", "-n", sc.ns)
    one = _Watch(sc.cluster, "explain", "pod", "pod-w", "-w", "-n", sc.ns)
    try:
        first = scan.wait_line(lambda x: x.startswith("pod-w "), 60)
        assert " Blocked " in first and " class " in first, first
        one.wait_line(lambda x: x.startswith("Verdict:") and "DeviceClass missing" in x, 60)
        one.wait_line(lambda x: x.startswith("Watching"), 10)
        sc.device_class()  # the tutorial's step: apply the class, do not touch the pod
        sc.cluster.wait_bound(sc.ns, "pod-w", timeout=90)
        changed = scan.wait_line(lambda x: x.startswith("pod-w ") and " OK " in x, 60)
        assert "allocated" in changed or "allocatable" in changed, changed
        line = one.wait_line(lambda x: x[:2].isdigit() and "  OK: nothing blocks  " in x, 60)
        assert "claims allocated" in line or "allocatable" in line, line
    finally:
        code_scan, err_scan = scan.stop()
        code_one, err_one = one.stop()
    # Ctrl-C is the way out: exit 130, no traceback, no error line.
    assert (code_scan, code_one) == (130, 130), (code_scan, err_scan, code_one, err_one)
    assert "Traceback" not in err_scan + err_one and "error:" not in err_scan + err_one, err_scan + err_one
    # The scan printed the header once and one line per change of the pod, not the world on a timer.
    assert sum(1 for x in scan.lines if x.startswith("POD ")) == 1, scan.lines
    assert 2 <= sum(1 for x in scan.lines if x.startswith("pod-w ")) <= 6, scan.lines


def test_a_watch_judges_the_queue_with_the_pod_ahead_in_another_namespace(cluster, scenario):
    """explain pod -w and status -n -w judge the pending pods together, as without -w (seen live: explain pod p1 -w
    said OK while p0, created first in another namespace, would take the only device). Then the real scheduler:
    p0's gate goes, it is bound with the device, and p1 stays blocked."""
    sc = scenario("watchq")
    sc.device_class()
    sc.slice([device("dev-0")])
    other = cluster.create_namespace("watchq-other")
    scan = one = None
    try:
        for ns, name in ((other, "p0"), (sc.ns, "p1")):  # p0 first, a second earlier: ahead of p1
            sc.api.post(
                f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims",
                claim(f"{name}-gpu", [request("gpu", sc.cls)]),
            )
            sc.api.post(f"/api/v1/namespaces/{ns}/pods", pod(name, {"gpu": f"{name}-gpu"}, gated=True))
            time.sleep(1.1)
        scan = _Watch(sc.cluster, "status", "-w", "-n", sc.ns, "-o", "wide")
        one = _Watch(sc.cluster, "explain", "pod", "p1", "-w", "-n", sc.ns)
        # both gated: p1's gate is its first block, and the queue's word comes beside it
        first = scan.wait_line(lambda x: x.startswith("p1 "), 60)
        assert " Blocked " in first and "DRA430" in " ".join(scan.lines), scan.lines
        one.wait_line(lambda x: x.startswith("Watching"), 60)
        assert any("DRA430" in x for x in one.lines), one.lines
        assert any(f"would go to {other}/p0" in x for x in one.lines), one.lines
        sc.api.patch(
            f"/api/v1/namespaces/{other}/pods/p0", [{"op": "remove", "path": "/spec/schedulingGates"}], kind="json"
        )
        cluster.wait_bound(other, "p0", timeout=60)
        sc.ungate("p1")
        cluster.wait_unschedulable(sc.ns, "p1", "cannot allocate all claims")
        line = one.wait_line(lambda x: x[:2].isdigit() and "Blocked" in x and "no free device" in x, 60)
        assert "gated" not in line, one.lines
    finally:
        for w in (scan, one):
            if w is not None:
                w.stop()
        cluster.delete_namespace(other)


def test_watch_refuses_offline_input(cluster, tmp_path):
    f = tmp_path / "empty.yaml"
    f.write_text("apiVersion: v1\nkind: List\nitems: []\n")
    r = cluster.kubectl_dra("status", "-w", "--from-file", str(f))
    assert r.code == 2 and r.stderr.startswith("error: --watch follows the cluster's watch API"), str(r)


def test_a_watch_from_an_expired_resource_version_relists(scenario):
    """The API server answers a watch from a resourceVersion etcd no longer keeps with 410 Gone (too old resource
    version): the session lists that resource again and watches on from the new list's resourceVersion.
    ResourceClaimTemplates are served without a watch cache in the suite's API server (a cache would still hold
    the history), and etcd is compacted as the API server's periodic compaction would."""
    from kubectl_dra.gather.client import Client, ListRecord
    from kubectl_dra.gather.watch import LiveSession

    sc = scenario("gone")
    client = Client(sc.cluster.kubeconfig, None, 30)
    path = f"{RES}/namespaces/{sc.ns}/resourceclaimtemplates"
    kind, api = "ResourceClaimTemplate", "resource.k8s.io/v1"
    old_rv: list = []
    client.list(path, kind, api, rv_out=old_rv)
    sc.create(template("t-f", [request("gpu", sc.cls)], ns=None))
    sc.create(
        template("t-g", [request("gpu", sc.cls)], ns=None)
    )  # a second write: the watch would start at the first, now compacted
    _compact_etcd(sc.cluster)
    record = ListRecord(path, kind, api, {}, old_rv[0], [])
    session = LiveSession(client, [record], [], {"namespace": sc.ns, "gaps": ()})
    session.start()
    try:
        source = session.sources[0]
        deadline = time.time() + 30
        while time.time() < deadline and not source.objects:
            time.sleep(0.2)
        assert source.relists >= 1 and source.rv not in ("", old_rv[0]), (source.relists, source.rv)
        assert sorted(k[1] for k in source.objects) == ["t-f", "t-g"]
        # ... and the watch that follows sees new objects.
        sc.create(template("t-h", [request("gpu", sc.cls)], ns=None))
        deadline = time.time() + 30
        while time.time() < deadline and len(source.objects) < 3:
            time.sleep(0.2)
        assert sorted(k[1] for k in source.objects) == ["t-f", "t-g", "t-h"]
    finally:
        session.stopped = True


def _compact_etcd(cluster) -> None:
    """Compact the suite's etcd at its current revision, through etcd's own v3 JSON gateway."""
    import base64
    import json
    import urllib.request

    url = f"http://127.0.0.1:{cluster.state['ports']['etcd']}/v3/kv"

    def post(op: str, body: dict) -> dict:
        req = urllib.request.Request(f"{url}/{op}", json.dumps(body).encode(), {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    rev = post("range", {"key": base64.b64encode(b"/").decode()})["header"]["revision"]
    post("compaction", {"revision": rev, "physical": True})
