"""devices --class C --request FILE against the real kube-scheduler (v1.37.2, default gates: partitionable devices are
beta and on): a partitionable GPU whose memory counter runs out before its partitions do, one partition already
taken by a bound pod. kubectl-dra predicts "N more fit" from the live cluster; then N+1 claims and pods are created
and the real scheduler must allocate N of them and leave the last one Pending."""

from __future__ import annotations

import pytest
import yaml
from builders import device, request
from dra_objects import claim, pod
from e2e_helpers import wait_for

pytestmark = pytest.mark.e2e


def test_request_fit_predicts_how_many_more_the_scheduler_allocates(cluster, scenario, tmp_path):
    sc = scenario("reqfit")
    sc.device_class()
    counters = [{"name": "gpu-0-mem", "counters": {"memory": {"value": "40Gi"}}}]
    sc.slice([], suffix="-counters", pool="node-01", slice_count=2, shared_counters=counters)

    def part(i):
        use = [{"counterSet": "gpu-0-mem", "counters": {"memory": {"value": "10Gi"}}}]
        return device(f"gpu-0-1g-{i}", memory="10Gi", consumesCounters=use)

    # six 1g partitions on a 40Gi counter: the counter, not the partitions, is what runs out
    sc.slice([part(i) for i in range(6)], suffix="-devices", pool="node-01", slice_count=2)
    sc.create(claim("first", [request("gpu", sc.cls)]))
    sc.create(pod("first", {"gpu": "first"}))
    cluster.wait_bound(sc.ns, "first", timeout=60)

    req = tmp_path / "request.yaml"
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-1g", "namespace": sc.ns},
        "spec": {"spec": {"devices": {"requests": [request("gpu", sc.cls)]}}},
    }
    req.write_text(yaml.safe_dump(template))
    r = cluster.kubectl_dra("devices", "--class", sc.cls, "--request", str(req), "-o", "json")
    assert r.code == 0, str(r)
    n = r.json["total"]["fit"]
    assert n == 3 and [(x["node"], x["fit"]) for x in r.json["nodes"]] == [("node-01", 3)], str(r)
    assert "counter set gpu-0-mem counter memory: needs 10Gi, 0 left" in r.json["nodes"][0]["firstLimit"], str(r)
    text = cluster.kubectl_dra("devices", "--class", sc.cls, "--request", str(req))
    assert f"Total: 3 more of {sc.ns}/one-1g fit (class {sc.cls})." in text.stdout, str(text)
    wrong = cluster.kubectl_dra("devices", "--class", "no-such-class", "--request", str(req))
    assert wrong.code == 2 and wrong.stderr.startswith("error: "), str(wrong)

    # N+1 more: the real scheduler allocates N and leaves the last Pending with the allocator's words
    names = [f"more-{i}" for i in range(n + 1)]
    for name in names:
        sc.create(claim(name, [request("gpu", sc.cls)]))
        sc.create(pod(name, {"gpu": name}))
    bound = wait_for(
        f"{n} pods bound",
        lambda: (
            (b := [p for p in cluster.pods(sc.ns) if p["spec"].get("nodeName") and p["metadata"]["name"] in names])
            and len(b) == n
            and b
        ),
        90,
    )
    left = next(x for x in names if x not in {p["metadata"]["name"] for p in bound})
    cluster.wait_unschedulable(sc.ns, left, "cannot allocate all claims", timeout=90)
    assert all(cluster.allocated_devices(sc.ns, p["metadata"]["name"]) for p in bound)
    # and now none more fits: exit 1, the counter named
    after = cluster.kubectl_dra("devices", "--class", sc.cls, "--request", str(req), "-o", "json")
    assert after.code == 1 and after.json["total"]["fit"] == 0, str(after)
