"""Analysis on Python literals: claim resolution, node usability, events, gaps. No cluster, no files."""

from __future__ import annotations

import builders
from builders import dclass, device, request, rslice, template

from kubectl_dra.analyze.reports.explain import explain_pod
from kubectl_dra.features import Semantics
from kubectl_dra.model.nodes import pod_node_rejection
from kubectl_dra.model.objects import snapshot_from_objects
from kubectl_dra.model.snapshot import Gap, Snapshot

SEM = Semantics.for_version((1, 37))
D = "gpu.example.com"


def pod(**spec):
    return builders.pod("p", [("gpu", "template", "t")], ns="ns", uid="u1", **spec)


def claim(owner_uid="u1", annotation="gpu", **status):
    c = builders.claim(
        "p-gpu-x1",
        [request("gpu", "c")],
        ns="ns",
        uid=False,
        annotations={"resource.kubernetes.io/pod-claim-name": annotation},
        ownerReferences=[{"kind": "Pod", "name": "p", "uid": owner_uid, "controller": True}],
    )
    c["status"] = status
    return c


CLASS = dclass("c", f'device.driver == "{D}"')
SLICE = rslice("s", [device("gpu-0")], "n1", driver=D)
NODE = builders.node("n1", hostname=False)
TEMPLATE = template("t", [request("gpu", "c")], ns="ns")


def snap(*objs, gaps=()):
    s = snapshot_from_objects(list(objs), "ns")
    return Snapshot(**{**s.__dict__, "gaps": tuple(gaps)})


def codes(report):
    return [f.code for f in report.findings]


def test_generated_claim_found_by_owner_and_annotation_without_status():
    r = explain_pod(snap(pod(), claim(), TEMPLATE, CLASS, SLICE, NODE), SEM, "ns", "p")
    assert r.verdict.blocked is False and "DRA002" in codes(r)
    assert r.body["podClaims"][0]["claim"] == "p-gpu-x1"


def test_claim_of_another_pod_is_not_picked_up():
    r = explain_pod(snap(pod(), claim(owner_uid="other"), TEMPLATE, CLASS, SLICE, NODE), SEM, "ns", "p")
    assert r.verdict.missing == "claim" and "DRA201" in codes(r)


def test_missing_slices_permission_leaves_the_verdict_open():
    gap = Gap("list", "resourceslices.resource.k8s.io", None, "forbidden", "forbidden: no list")
    r = explain_pod(snap(pod(), claim(), TEMPLATE, CLASS, NODE, gaps=[gap]), SEM, "ns", "p")
    assert r.verdict.determined is False and r.verdict.blocked is False
    assert {"DRA101", "DRA103"} <= set(codes(r))
    f = next(f for f in r.findings if f.code == "DRA101")
    assert f.evidence["verb"] == "list" and f.evidence["resource"] == "resourceslices.resource.k8s.io"


def test_events_are_filtered_to_the_pod_and_sorted_with_series_and_event_time():
    evs = [
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "e1", "namespace": "ns"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns"},
            "reason": "Late",
            "lastTimestamp": "2026-01-01T00:00:01Z",
            "series": {"count": 3, "lastObservedTime": "2026-01-01T00:10:00.000000Z"},
        },
        {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": "e2", "namespace": "ns"},
            "regarding": {"kind": "Pod", "name": "p", "namespace": "ns"},
            "reason": "Middle",
            "note": "n",
            "eventTime": "2026-01-01T00:05:00.123456Z",
            "reportingController": "kubelet",
        },
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "e3", "namespace": "ns"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns"},
            "reason": "Early",
            "lastTimestamp": "2026-01-01T00:01:00Z",
        },
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "e4", "namespace": "ns"},
            "involvedObject": {"kind": "ReplicaSet", "name": "p", "namespace": "ns"},
            "reason": "NotMine",
            "lastTimestamp": "2026-01-01T00:00:00Z",
        },
    ]
    r = explain_pod(snap(pod(), claim(), TEMPLATE, CLASS, SLICE, NODE, *evs), SEM, "ns", "p")
    assert [e["reason"] for e in r.body["events"]] == ["Early", "Middle", "Late"]
    assert r.body["events"][2]["count"] == 3 and r.body["events"][1]["source"]["component"] == "kubelet"


def test_node_filters():
    n = {
        "metadata": {"name": "n1", "labels": {"zone": "a"}},
        "spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]},
    }
    assert "untolerated taint" in pod_node_rejection(pod(), n)
    assert pod_node_rejection(pod(tolerations=[{"key": "gpu", "operator": "Exists"}]), n) is None
    assert "nodeSelector" in pod_node_rejection(pod(nodeSelector={"zone": "b"}), n)
    aff = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}]
            }
        }
    }
    assert "affinity" in pod_node_rejection(pod(affinity=aff, tolerations=[{"operator": "Exists"}]), n)
    cordoned = {"metadata": {"name": "n2"}, "spec": {"unschedulable": True}}
    assert "cordoned" in pod_node_rejection(pod(), cordoned)


def test_allocated_claim_pins_the_node():
    alloc = {
        "allocation": {
            "devices": {"results": [{"request": "gpu", "driver": D, "pool": "n1", "device": "gpu-0"}]},
            "nodeSelector": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]
            },
        }
    }
    r = explain_pod(snap(pod(nodeSelector={"zone": "b"}), claim(**alloc), TEMPLATE, CLASS, SLICE, NODE), SEM, "ns", "p")
    assert r.verdict.missing == "node" and "DRA502" in codes(r)


def test_device_taint_rules_that_cannot_be_read_leave_an_allocation_open_where_the_scheduler_applies_them():
    # 1.37 applies DeviceTaintRules (DRADeviceTaintRules on by default): a rule the reader may not list could taint
    # gpu-0, so "allocatable" would be a guess; the claim already allocated to another pod is not affected
    gap = Gap("list", "devicetaintrules.resource.k8s.io", None, "forbidden", "forbidden: no list")
    objs = (pod(), claim(), TEMPLATE, CLASS, SLICE, NODE)
    r = explain_pod(snap(*objs, gaps=[gap]), SEM, "ns", "p")
    assert r.verdict.determined is False and "DRA103" in codes(r), codes(r)
    assert "devicetaintrules" in next(f for f in r.findings if f.code == "DRA103").message
    assert "DRA002" not in codes(r)
    read = codes(explain_pod(snap(*objs), SEM, "ns", "p"))
    assert "DRA002" in read and "DRA103" not in read, read  # read: allocatable
    # 1.34 without DRADeviceTaints (off by default): the scheduler reads no rule, the answer is the one read
    r34 = codes(explain_pod(snap(*objs, gaps=[gap]), Semantics.for_version((1, 34)), "ns", "p"))
    assert "DRA002" in r34 and "DRA103" not in r34, r34
