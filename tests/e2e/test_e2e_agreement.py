"""Agreement with the real scheduler.

In every scenario the real kube-scheduler (and kube-controller-manager) decides, and
kubectl-dra must agree on whether the pod gets its devices and, when it does, which ones.

Pods that should get devices are created with a scheduling gate: kubectl-dra's `match claim`
predicts the allocation first, then the gate is removed and the real scheduler allocates; the
prediction and the real allocation must name the same devices. Pods that cannot get devices
are left to the scheduler until it reports FailedScheduling (or the controller reports
FailedResourceClaimCreation); kubectl-dra must then say blocked (exit 1).

Every scenario uses its own driver (<scenario>.example.com), DeviceClass and namespace, so the
scenarios cannot take each other's devices. The gate-dependent scenarios (device taints, shared
counters) run on the second control plane with the DRA gates on: test_e2e_gates.py.
"""

from __future__ import annotations

import json

import pytest
from builders import device, request
from dra_objects import assert_agrees_blocked, assert_agrees_bound, claim, device_outcomes, pod, predict_and_schedule

pytestmark = pytest.mark.e2e


# --- the scenarios -----------------------------------------------------------------------------


def test_device_already_allocated_to_another_pods_claim(scenario):
    sc = scenario("inuse")
    sc.device_class()
    sc.slice([device("dev-0", memory="16Gi")])
    sc.create(claim("claim-a", [request("gpu", sc.cls)]))
    sc.create(pod("pod-a", {"gpu": "claim-a"}, gated=True))
    bound, real, prediction = predict_and_schedule(sc, "pod-a", "claim-a")
    assert bound["spec"]["nodeName"] == "node-01"
    assert real == [(sc.driver, "node-01", "dev-0")]

    sc.create(claim("claim-b", [request("gpu", sc.cls)]))
    sc.create(pod("pod-b", {"gpu": "claim-b"}))
    ev = sc.cluster.wait_unschedulable(sc.ns, "pod-b", "cannot allocate all claims")
    assert "0/3 nodes are available" in ev["message"]
    assert sc.cluster.allocated_devices(sc.ns, "claim-b") == []

    assert_agrees_bound(sc, "pod-a", "claim-a", real, prediction)
    doc = assert_agrees_blocked(sc, "pod-b", "claim-b", missing="device")
    assert device_outcomes(doc["_match"]).get("dev-0") == "rejected", json.dumps(doc["_match"])


def test_exact_count_more_than_match(scenario):
    sc = scenario("count")
    sc.device_class()
    sc.slice([device(f"dev-{i}", memory="16Gi") for i in range(2)])
    sc.create(claim("claim-3", [request("gpus", sc.cls, count=3)]))
    sc.create(pod("pod-3", {"gpus": "claim-3"}))
    sc.cluster.wait_unschedulable(sc.ns, "pod-3", "cannot allocate all claims")
    assert_agrees_blocked(sc, "pod-3", "claim-3", missing="device")


def test_allocation_mode_all_with_one_device_in_use(scenario):
    sc = scenario("all")
    sc.device_class()
    sc.slice([device(f"dev-{i}", attrs={"index": i}) for i in range(2)])
    sc.create(claim("claim-one", [request("gpu", sc.cls, selectors=[f'device.attributes["{sc.driver}"].index == 1'])]))
    sc.create(pod("pod-one", {"gpu": "claim-one"}, gated=True))
    _, real, prediction = predict_and_schedule(sc, "pod-one", "claim-one")
    assert real == [(sc.driver, "node-01", "dev-1")]

    sc.create(claim("claim-all", [request("gpus", sc.cls, count=None, mode="All")]))
    sc.create(pod("pod-all", {"gpus": "claim-all"}))
    sc.cluster.wait_unschedulable(sc.ns, "pod-all", "cannot allocate all claims")

    assert_agrees_bound(sc, "pod-one", "claim-one", real, prediction)
    doc = assert_agrees_blocked(sc, "pod-all", "claim-all", missing="device")
    assert device_outcomes(doc["_match"]).get("dev-1") == "rejected", json.dumps(doc["_match"])


def test_first_available_falls_back_to_second_subrequest(scenario):
    sc = scenario("firstavail")
    sc.device_class()
    sc.slice([device("small-0", memory="8Gi")])
    mem = f'device.capacity["{sc.driver}"].memory'
    c = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "claim-fa"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "firstAvailable": [
                            {
                                "name": "big",
                                "deviceClassName": sc.cls,
                                "selectors": [{"cel": {"expression": f'{mem}.compareTo(quantity("24Gi")) >= 0'}}],
                            },
                            {
                                "name": "small",
                                "deviceClassName": sc.cls,
                                "selectors": [{"cel": {"expression": f'{mem}.compareTo(quantity("4Gi")) >= 0'}}],
                            },
                        ],
                    }
                ]
            }
        },
    }
    sc.create(c)
    sc.create(pod("pod-fa", {"gpu": "claim-fa"}, gated=True))
    _, real, prediction = predict_and_schedule(sc, "pod-fa", "claim-fa")
    assert real == [(sc.driver, "node-01", "small-0")]
    results = sc.cluster.claim(sc.ns, "claim-fa")["status"]["allocation"]["devices"]["results"]
    assert [r["request"] for r in results] == ["gpu/small"]

    doc = assert_agrees_bound(sc, "pod-fa", "claim-fa", real, prediction)
    claim_doc = next(x for x in doc["claims"] if x["name"] == "claim-fa")
    assert [r["request"] for r in claim_doc["allocation"]["results"]] == ["gpu/small"], json.dumps(claim_doc)


def test_match_attribute_constraint_cannot_be_met(scenario):
    sc = scenario("matchattr")
    sc.device_class()
    sc.slice([device("dev-0", attrs={"numa": 0}), device("dev-1", attrs={"numa": 1})])
    sc.create(
        claim(
            "claim-pair",
            [request("a", sc.cls), request("b", sc.cls)],
            constraints=[{"requests": ["a", "b"], "matchAttribute": f"{sc.driver}/numa"}],
        )
    )
    sc.create(pod("pod-pair", {"pair": "claim-pair"}))
    sc.cluster.wait_unschedulable(sc.ns, "pod-pair", "cannot allocate all claims")
    assert_agrees_blocked(sc, "pod-pair", "claim-pair", missing="device")


def test_slice_on_node_excluded_by_node_selector(scenario):
    sc = scenario("nodesel")
    sc.device_class()
    sc.slice([device("dev-0")], node="node-01")
    sc.create(claim("claim-ns", [request("gpu", sc.cls)]))
    sc.create(pod("pod-ns", {"gpu": "claim-ns"}, node_selector={"kubernetes.io/hostname": "node-02"}))
    ev = sc.cluster.wait_unschedulable(sc.ns, "pod-ns")
    assert "0/3 nodes are available" in ev["message"], ev["message"]
    assert "didn't match Pod's node affinity/selector" in ev["message"], ev["message"]
    # The claim alone is satisfiable (on node-01); the pod is not: only explain pod must say blocked.
    assert_agrees_blocked(sc, "pod-ns", "claim-ns", match_unsatisfiable=False)


def test_missing_resource_claim_template(scenario):
    sc = scenario("notemplate")
    sc.create(pod("pod-nt", templates={"gpu": "no-such-template"}))
    ev = sc.cluster.wait_event(sc.ns, "pod-nt", "FailedResourceClaimCreation", "no-such-template")
    assert ev["type"] == "Warning"
    assert ev["message"].startswith("PodResourceClaim gpu:"), ev["message"]
    assert not sc.cluster.pod(sc.ns, "pod-nt")["spec"].get("nodeName")
    assert sc.cluster.claims(sc.ns) == []
    doc = assert_agrees_blocked(sc, "pod-nt", missing="claim")
    assert "no-such-template" in json.dumps(doc["findings"]), json.dumps(doc["findings"])


def test_cel_selector_reads_missing_attribute(scenario):
    sc = scenario("celerr")
    sc.device_class()
    sc.slice([device("dev-0", attrs={"model": "a100"})])
    sc.create(
        claim(
            "claim-cel", [request("gpu", sc.cls, selectors=[f'device.attributes["{sc.driver}"].memoryType == "hbm3"'])]
        )
    )
    sc.create(pod("pod-cel", {"gpu": "claim-cel"}))
    ev = sc.cluster.wait_unschedulable(sc.ns, "pod-cel", "CEL runtime error")
    assert "no such key: memoryType" in ev["message"], ev["message"]
    doc = assert_agrees_blocked(sc, "pod-cel", "claim-cel")
    assert "memoryType" in json.dumps(doc["findings"]), json.dumps(doc["findings"])


def test_invalid_pool_fails_only_its_node(scenario):
    """From 1.35 `invalid resource pools were encountered` fails the node being tried, not the scheduling attempt:
    two devices wanted, node-01 has one good device and an invalid pool (one device name in two of its slices),
    node-02 has two. The real scheduler binds the pod to node-02; kubectl-dra must predict that (before, it reported
    the error of node-01 and said blocked)."""
    sc = scenario("invalidpool")
    sc.device_class()
    sc.slice([device("dev-0")])
    for suffix in ("-a", "-b"):
        sc.slice([device("x-0")], suffix=f"-extra{suffix}", pool="node-01-extra", slice_count=2)
    sc.slice([device(f"dev-{i}") for i in range(2)], node="node-02")
    sc.create(claim("claim-2", [request("gpus", sc.cls, count=2)]))
    sc.create(pod("pod-2", {"gpus": "claim-2"}, gated=True))
    bound, real, prediction = predict_and_schedule(sc, "pod-2", "claim-2")
    assert bound["spec"]["nodeName"] == "node-02"
    assert real == [(sc.driver, "node-02", "dev-0"), (sc.driver, "node-02", "dev-1")]
    assert_agrees_bound(sc, "pod-2", "claim-2", real, prediction)


def test_all_mode_over_an_incomplete_pool_aborts_every_node_until_1_38(scenario):
    """Up to 1.37 allocationMode All meeting an incomplete pool is an error of the Filter on that node, and an error
    aborts the attempt for every node: node-01's pool has 1 of 2 slices, node-02's is complete, and the real
    scheduler never binds the pod. kubectl-dra must say blocked (before, it skipped node-01 as not worth a search and
    predicted node-02; 1.38 does fail only node-01: test_e2e_1_38.py)."""
    sc = scenario("allinc")
    sc.device_class()
    sc.slice([device("dev-0")], slice_count=2)
    sc.slice([device(f"dev-{i}") for i in range(2)], node="node-02")
    sc.create(claim("claim-all", [request("gpus", sc.cls, mode="All")]))
    sc.create(pod("pod-all", {"gpus": "claim-all"}))
    ev = sc.cluster.wait_unschedulable(sc.ns, "pod-all", "is currently being updated")
    assert "asks for all devices" in ev["message"], ev
    doc = assert_agrees_blocked(sc, "pod-all", "claim-all")
    assert "is currently being updated" in json.dumps(doc), json.dumps(doc)[:2000]


def test_scheduler_rejects_for_cpu_while_the_claim_is_allocatable(scenario):
    """The real scheduler rejects the pod on NodeResourcesFit (each node has 16 CPUs, the pod asks for 64): its
    message names no DRA reason. The claim is allocatable, and kubectl-dra models NodeResourcesFit too: the pod is
    blocked at the node, naming cpu (DRA504, exit 1), never a bare "nothing blocks"; DRA021 still quotes the
    scheduler's own words."""
    sc = scenario("cpu")
    sc.device_class()
    sc.slice([device("dev-0", memory="16Gi")])
    sc.create(claim("claim-cpu", [request("gpu", sc.cls)]))
    p = pod("pod-cpu", {"gpu": "claim-cpu"})
    p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "64"
    sc.create(p)
    ev = sc.cluster.wait_unschedulable(sc.ns, "pod-cpu", "Insufficient cpu")
    assert "cannot allocate all claims" not in ev["message"], ev["message"]
    r = sc.cluster.kubectl_dra("explain", "pod", "pod-cpu", "-n", sc.ns, "-o", "json")
    assert r.code == 1, str(r)
    doc = r.json
    assert doc["verdict"]["blocked"] is True and doc["verdict"]["missing"] == "node", str(r)
    assert (
        "cpu in all (the pod requests 64)" in doc["verdict"]["summary"]
        or "cpu free (the pod requests 64)" in (doc["verdict"]["summary"])
    ), str(r)
    outside = [f for f in doc["findings"] if f["code"] == "DRA021"]
    assert len(outside) == 1 and "Insufficient cpu" in outside[0]["message"], str(r)
    text = sc.cluster.kubectl_dra("explain", "pod", "pod-cpu", "-n", sc.ns)
    assert "OK: nothing blocks" not in text.stdout and "Blocked" in text.stdout, str(text)
