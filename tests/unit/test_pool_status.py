"""ResourcePoolStatusRequests beside kubectl-dra's counts: the pool counted as kube-controller-manager counts it
(pkg/controller/resourcepoolstatusrequest calculatePoolStatus), DRA023 where the counts differ, DRA106 where
kubectl-dra could not read every claim (upstream's count then bounds what is in use), nothing for a request without
counts."""

from __future__ import annotations

from dataclasses import replace

from builders import claim, dclass, device, node, request, rslice

from kubectl_dra.analyze.reports.inventory import inventory
from kubectl_dra.features import Semantics
from kubectl_dra.model.objects import snapshot_from_objects
from kubectl_dra.model.snapshot import Gap

S37 = Semantics.for_version((1, 37))
D = "gpu.example.com"
WHEN = "2026-12-07T10:00:00Z"
TAINT = {"key": "maintenance", "value": "true", "effect": "NoSchedule"}


def rpsr(name="rq", pool="node-01", counts=None, validation=None, condition="Complete", status=True):
    o = {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourcePoolStatusRequest",
        "metadata": {"name": name},
        "spec": {"driver": D, "poolName": pool},
    }
    if not status:
        return o
    p = {"driver": D, "poolName": pool, "nodeName": "node-01", "generation": 1}
    if counts is not None:
        p.update(
            zip(("totalDevices", "allocatedDevices", "availableDevices", "unavailableDevices"), counts, strict=True)
        )
    if validation:
        p["validationError"] = validation
    cond = {"type": condition, "status": "True", "reason": "CalculationComplete", "message": "",
            "lastTransitionTime": WHEN}  # fmt: skip
    o["status"] = {"poolCount": 1, "pools": [p] if condition == "Complete" else [], "conditions": [cond]}
    return o


def snap(*requests, allocated=("gpu-0",), tainted=("gpu-3",), extra=(), gaps=()):
    """node-01's pool of four GPUs (gpu-3 tainted NoSchedule), claims holding `allocated` (in namespace ml)."""
    devs = [
        device(f"gpu-{i}", memory="40Gi", **({"taints": [TAINT]} if f"gpu-{i}" in tainted else {})) for i in range(4)
    ]
    objs = [node("node-01"), dclass(), rslice("node-01-gpus", devs, "node-01"), *requests, *extra]
    for i, d in enumerate(allocated):
        objs.append(claim(f"c{i}", [request()], results=[("gpu", "node-01", d)], node="node-01", ns="ml"))
    s = snapshot_from_objects(objs, "ml")
    return replace(s, gaps=tuple(gaps)) if gaps else s


def codes(report):
    return [f.code for f in report.findings]


def test_counts_as_upstream_agree_no_finding():
    # total 4, allocated 1 (gpu-0), unavailable 1 (gpu-3 tainted), available 4 - 1 - 1 = 2
    r = inventory(snap(rpsr(counts=(4, 1, 2, 1))), S37)
    (p,) = r.pool_status
    assert p["kubectlDra"] == {"total": 4, "allocated": 1, "available": 2, "unavailable": 1}
    assert p["answer"] == "counted"
    assert r.findings == ()
    assert r.to_dict(items=False)["findings"] == []


def test_a_tainted_allocated_device_is_both_allocated_and_unavailable_as_upstream_counts_it():
    # upstream: available = max(0, total - allocated - unavailable), the held tainted device subtracted twice
    r = inventory(snap(rpsr(counts=(4, 1, 2, 1)), allocated=("gpu-3",)), S37)
    assert r.pool_status[0]["kubectlDra"] == {"total": 4, "allocated": 1, "available": 2, "unavailable": 1}
    assert r.findings == ()


def test_allocated_differs_names_both_numbers():
    r = inventory(snap(rpsr(counts=(4, 3, 0, 1))), S37)
    (f,) = r.findings
    assert f.code == "DRA023" and f.severity == "warning"
    assert "allocated: upstream 3, kubectl-dra 1" in f.message
    assert "available: upstream 0, kubectl-dra 2" in f.message
    assert "total:" not in f.message and "unavailable:" not in f.message
    assert "pool gpu.example.com/node-01 (node node-01)" in f.message and WHEN in f.message
    assert f.evidence["differ"] == ["allocated", "available"]


def test_total_and_unavailable_differ():
    # upstream counted 5 devices, 2 of them tainted; the pool now has 4, 1 tainted
    r = inventory(snap(rpsr(counts=(5, 1, 2, 2))), S37)
    (f,) = r.findings
    assert "total: upstream 5, kubectl-dra 4" in f.message and "unavailable: upstream 2, kubectl-dra 1" in f.message
    assert f.evidence["differ"] == ["total", "unavailable"]


def test_unhealthy_or_exhausted_is_not_upstreams_unavailable():
    # no taint: upstream counts every device not held as available, whatever kubelet health says
    r = inventory(snap(rpsr(counts=(4, 1, 3, 0)), tainted=()), S37)
    assert r.findings == ()


def test_a_device_rule_taint_counts_unavailable():
    rule = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "drain"},
        "spec": {"deviceSelector": {"driver": D, "pool": "node-01", "device": "gpu-2"},
                 "taint": {"key": "drain", "effect": "NoExecute"}},
    }  # fmt: skip
    r = inventory(snap(rpsr(counts=(4, 1, 1, 2)), extra=[rule]), S37)
    assert r.pool_status[0]["kubectlDra"]["unavailable"] == 2
    assert r.findings == ()


def test_only_the_newest_generation_counts():
    old = rslice("old", [device("gpu-9")], "node-01", pool="node-01", gen=0)
    r = inventory(snap(rpsr(counts=(4, 1, 2, 1)), extra=[old]), S37)
    assert r.pool_status[0]["kubectlDra"]["total"] == 4 and r.findings == ()


def test_counted_over_every_device_whatever_the_filters():
    r = inventory(snap(rpsr(counts=(4, 1, 2, 1))), S37, {"free": True})
    assert len(r.rows) == 2 and r.pool_status[0]["kubectlDra"]["total"] == 4 and r.findings == ()


def test_claims_refused_fewer_allocated_is_a_bound_not_a_disagreement():
    gap = Gap("list", "resourceclaims.resource.k8s.io", None, "forbidden", "resourceclaims is forbidden")
    r = inventory(snap(rpsr(counts=(4, 3, 0, 1)), gaps=[gap]), S37)
    (f,) = r.findings
    assert f.code == "DRA106" and f.severity == "info"
    assert "kubectl-dra counts 1 of 4 devices allocated in the ResourceClaims it could read" in f.message
    assert "counted 3 allocated and 0 available of 4" in f.message and "bounds what is in use" in f.message
    assert "every namespace" in f.message
    assert not r.determined  # the inventory stays incomplete


def test_claims_refused_and_total_differs_is_still_a_disagreement_on_total():
    gap = Gap("list", "resourceclaims.resource.k8s.io", "team-b", "forbidden", "forbidden")
    r = inventory(snap(rpsr(counts=(5, 3, 0, 1)), gaps=[gap]), S37)
    assert codes(r) == ["DRA023", "DRA106"]
    assert "total: upstream 5, kubectl-dra 4" in r.findings[0].message
    assert r.findings[0].evidence["differ"] == ["total"]
    assert "namespace team-b" in r.findings[1].message


def test_claims_refused_but_more_allocated_than_upstream_is_a_disagreement():
    # claims kubectl-dra could not read can only make its count smaller: more is the cluster having changed
    gap = Gap("list", "resourceclaims.resource.k8s.io", None, "forbidden", "forbidden")
    r = inventory(snap(rpsr(counts=(4, 0, 3, 1)), gaps=[gap]), S37)
    assert codes(r) == ["DRA023"]
    assert "allocated: upstream 0, kubectl-dra 1" in r.findings[0].message
    assert r.findings[0].evidence["differ"] == ["allocated"]


def test_pending_request_is_no_finding():
    r = inventory(snap(rpsr(status=False)), S37)
    (p,) = r.pool_status
    assert p["answer"] == "pending" and p["upstream"] is None and r.findings == ()


def test_failed_request_is_no_finding():
    r = inventory(snap(rpsr(condition="Failed")), S37)
    assert r.pool_status[0]["answer"] == "failed" and r.findings == ()


def test_incomplete_pool_without_counts_is_no_finding():
    r = inventory(snap(rpsr(validation="PoolIncomplete: pool gpu.example.com/node-01 is incomplete")), S37)
    (p,) = r.pool_status
    assert p["answer"] == "no counts" and r.findings == ()


def test_view_validation_error_keeps_counts_compared():
    # upstream: "Basic device counts stay valid regardless of validationError" (computePoolViews)
    err = "PartitionTypeMissing: pool gpu.example.com/node-01 declares partitionTypeAttribute but no sharedCounters"
    r = inventory(snap(rpsr(counts=(4, 1, 2, 1), validation=err)), S37)
    assert r.findings == ()
    r = inventory(snap(rpsr(counts=(4, 2, 1, 1), validation=err)), S37)
    (f,) = r.findings
    assert f.code == "DRA023" and "PartitionTypeMissing" in f.message


def test_without_requests_nothing_changes():
    r = inventory(snap(), S37)
    assert r.pool_status == () and r.findings == ()
    assert "findings" not in r.to_dict(items=False)


def test_a_pool_gone_since_is_a_disagreement_unless_the_slices_were_not_read():
    r = inventory(snap(rpsr(pool="node-09", counts=(2, 0, 2, 0))), S37)
    (f,) = r.findings
    assert f.code == "DRA023" and "total: upstream 2, kubectl-dra 0" in f.message
    assert "available: upstream 2, kubectl-dra 0" in f.message
    gap = Gap("list", "resourceslices.resource.k8s.io", None, "forbidden", "forbidden")
    r = inventory(snap(rpsr(pool="node-09", counts=(2, 0, 2, 0)), gaps=[gap]), S37)
    assert r.findings == ()
