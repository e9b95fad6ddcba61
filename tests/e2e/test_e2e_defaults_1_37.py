"""The paths a default 1.37 cluster takes, decided by the real kube-scheduler: DRA-backed extended resources,
binding conditions, scheduling gates, and a verdict that contradicts the scheduler.

In each scenario the scheduler acts first (FailedScheduling, a created claim, BindingConditionsPending); kubectl-dra
must then give the same answer, and never "nothing blocks" (exit 0) for a pod the scheduler cannot place.
"""

from __future__ import annotations

import json
from contextlib import contextmanager

import pytest
from builders import device, request
from dra_objects import RES, claim, pod
from e2e_helpers import clusterlib, wait_for

pytestmark = pytest.mark.e2e


def _extended_class(sc, resource: str) -> None:
    sc._create_cluster(
        f"{RES}/deviceclasses",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": sc.cls},
            "spec": {
                "selectors": [{"cel": {"expression": f'device.driver == "{sc.driver}"'}}],
                "extendedResourceName": resource,
            },
        },
    )


@contextmanager
def _device_plugin_serves(sc, node_name: str, resource: str):
    """The node advertises one of the resource in its status, as a device plugin would, for the block's time."""
    node = f"/api/v1/nodes/{node_name}/status"
    sc.api.patch(node, {"status": {"capacity": {resource: "1"}, "allocatable": {resource: "1"}}})
    try:
        yield
    finally:
        escaped = resource.replace("/", "~1")
        sc.api.patch(node, [{"op": "remove", "path": f"/status/{k}/{escaped}"} for k in ("capacity", "allocatable")],
                     kind="json")  # fmt: skip


def _extended_pod(name: str, resource: str) -> dict:
    p = pod(name)
    del p["spec"]["resourceClaims"]
    c = p["spec"]["containers"][0]
    c["resources"] = {"requests": {"cpu": "10m", "memory": "16Mi", resource: "1"}, "limits": {resource: "1"}}
    return p


def _codes(doc: dict) -> list[str]:
    return [f["code"] for f in doc["findings"]]


def test_extended_resource_pending_allocated_and_taken(scenario):
    sc = scenario("extres")
    resource = f"{sc.driver}/gpu"
    _extended_class(sc, resource)
    sc.create(_extended_pod("trainer", resource))

    # No device yet: the scheduler says cannot allocate all claims; kubectl-dra must say blocked, not OK.
    sc.cluster.wait_unschedulable(sc.ns, "trainer", "cannot allocate all claims")
    r = sc.cluster.kubectl_dra("explain", "pod", "trainer", "-n", sc.ns, "-o", "json")
    assert r.code == 1, str(r)
    doc = r.json
    assert doc["verdict"]["blocked"] is True and doc["verdict"]["missing"] == "device", str(r)
    assert "DRA401" in _codes(doc), str(r)
    predicted = [q["name"] for c in doc["claims"] for q in c["requests"]]
    assert doc["podClaims"][-1]["source"] == "extended", str(r)

    # A device appears: the scheduler creates its own claim, allocates it and records the mapping.
    sc.slice([device("gpu-0", memory="16Gi")])
    bound = sc.cluster.wait_bound(sc.ns, "trainer", timeout=90)
    status = wait_for(
        "extendedResourceClaimStatus",
        lambda: sc.cluster.pod(sc.ns, "trainer").get("status", {}).get("extendedResourceClaimStatus"),
        60,
    )
    real = sc.cluster.claim(sc.ns, status["resourceClaimName"])
    assert [q["name"] for q in real["spec"]["devices"]["requests"]] == predicted, json.dumps(real)
    assert real["metadata"]["annotations"]["resource.kubernetes.io/extended-resource-claim"] == "true"

    r = sc.cluster.kubectl_dra("explain", "pod", "trainer", "-n", sc.ns, "-o", "json")
    assert r.code == 0, str(r)
    doc = r.json
    assert doc["pod"]["node"] == bound["spec"]["nodeName"]
    assert doc["podClaims"][-1]["claim"] == status["resourceClaimName"], str(r)
    assert doc["extendedResources"]["requestMappings"] == [
        {k: m[k] for k in ("containerName", "resourceName", "requestName")} for m in status["requestMappings"]
    ]
    ext = next(c for c in doc["claims"] if c["name"] == status["resourceClaimName"])
    assert [(x["driver"], x["device"]) for x in ext["allocation"]["results"]] == [(sc.driver, "gpu-0")]

    # A second pod for the same resource while the only device is held.
    sc.create(_extended_pod("trainer-2", resource))
    sc.cluster.wait_unschedulable(sc.ns, "trainer-2", "cannot allocate all claims")
    r = sc.cluster.kubectl_dra("explain", "pod", "trainer-2", "-n", sc.ns, "-o", "json")
    assert r.code == 1, str(r)
    assert "DRA404" in _codes(r.json), str(r)
    rejected = [d for c in r.json["claims"] for q in c["requests"] for d in q["devices"]]
    assert [d["reason"] for d in rejected] == [f"allocated to claim {sc.ns}/{status['resourceClaimName']}"], str(r)


def test_binding_conditions_waiting_then_failed(scenario):
    sc = scenario("bind")
    sc.device_class()
    sc.slice(
        [
            device(
                "fpga-0",
                bindsToNode=True,
                bindingConditions=[f"{sc.driver}/attached"],
                bindingFailureConditions=[f"{sc.driver}/attach-failed"],
            )
        ],
        node="node-02",
    )
    sc.create(claim("fpga-claim", [request("fpga", sc.cls)]))
    sc.create(pod("fpga-pod", {"fpga": "fpga-claim"}))

    sc.cluster.wait_event(sc.ns, "fpga-pod", "BindingConditionsPending", "node-02", timeout=60)
    p = sc.cluster.pod(sc.ns, "fpga-pod")
    assert not p["spec"].get("nodeName"), "the scheduler bound the pod before the binding conditions were met"
    r = sc.cluster.kubectl_dra("explain", "pod", "fpga-pod", "-n", sc.ns, "-o", "json")
    assert r.code == 1, str(r)
    waiting = [f for f in r.json["findings"] if f["code"] == "DRA421"]
    assert waiting and waiting[0]["evidence"]["bindingConditions"] == {f"{sc.driver}/attached": "not reported"}, str(r)
    assert 0 <= waiting[0]["evidence"]["waitedSeconds"] <= 600, str(r)

    # The driver reports the failure through the claim's status subresource, as a driver's controller would.
    c = sc.cluster.claim(sc.ns, "fpga-claim")
    res = c["status"]["allocation"]["devices"]["results"][0]
    c["status"]["devices"] = [
        {
            "driver": res["driver"],
            "pool": res["pool"],
            "device": res["device"],
            "conditions": [
                {
                    "type": f"{sc.driver}/attach-failed",
                    "status": "True",
                    "reason": "FabricError",
                    "message": "port 3 down",
                    "lastTransitionTime": clusterlib.now_rfc3339(),
                    "observedGeneration": c["metadata"].get("generation", 1),
                }
            ],
        }
    ]
    sc.api.put(f"{RES}/namespaces/{sc.ns}/resourceclaims/fpga-claim/status", c)
    ev = sc.cluster.wait_event(sc.ns, "fpga-pod", "FailedScheduling", "device binding failed", timeout=60)
    assert "reason=FabricError" in ev["message"]
    r = sc.cluster.kubectl_dra("explain", "pod", "fpga-pod", "-n", sc.ns, "-o", "json")
    assert r.code == 1, str(r)
    assert "DRA422" in _codes(r.json) or "DRA421" in _codes(r.json), str(r)
    assert r.json["verdict"]["blocked"] is True, str(r)


def test_scheduling_gated_pod_is_not_ok(scenario):
    sc = scenario("gated")
    sc.device_class()
    sc.slice([device("dev-0")])
    sc.create(claim("c", [request("gpu", sc.cls)]))
    sc.create(pod("gated-pod", {"gpu": "c"}, gated=True))
    wait_for(
        "PodScheduled=False SchedulingGated",
        lambda: any(
            x.get("reason") == "SchedulingGated"
            for x in sc.cluster.pod(sc.ns, "gated-pod").get("status", {}).get("conditions", [])
        ),
        30,
    )
    r = sc.cluster.kubectl_dra("explain", "pod", "gated-pod", "-n", sc.ns, "-o", "json")
    assert r.code == 1, str(r)
    assert r.json["verdict"]["blocked"] is True and r.json["verdict"]["missing"] is None, str(r)
    assert {"DRA006", "DRA002"} <= set(_codes(r.json)), str(r)  # gated, and what the dry-run gives once ungated


def test_a_verdict_that_contradicts_the_scheduler_is_undetermined(scenario):
    """The 1.37 scheduler honours a NoSchedule device taint; analysed with 1.34 semantics (taints off) the
    dry-run finds the device free. The scheduler's `cannot allocate all claims` wins over a confident OK."""
    sc = scenario("skew")
    sc.device_class()
    sc.slice([device("dev-0", taints=[{"key": f"{sc.driver}/maintenance", "effect": "NoSchedule"}])])
    sc.create(claim("c", [request("gpu", sc.cls)]))
    sc.create(pod("skew-pod", {"gpu": "c"}))
    sc.cluster.wait_unschedulable(sc.ns, "skew-pod", "cannot allocate all claims")

    right = sc.cluster.kubectl_dra("explain", "pod", "skew-pod", "-n", sc.ns, "-o", "json")
    assert right.code == 1 and "DRA405" in _codes(right.json), str(right)
    skewed = sc.cluster.kubectl_dra(
        "explain", "pod", "skew-pod", "-n", sc.ns, "--kubernetes-version", "1.34", "-o", "json"
    )
    assert skewed.code == 2, str(skewed)
    assert "DRA005" in _codes(skewed.json) and skewed.json["verdict"]["determined"] is False, str(skewed)
    assert skewed.stderr.startswith("error: the scheduler says"), str(skewed)


def test_extended_resource_served_by_a_device_plugin_on_one_node(scenario):
    """node-03 advertises the resource in its allocatable (as a device plugin would): the scheduler places the pod
    there without any DRA claim (filterExtendedResources), NodeResourcesFit counting the resource against node-03's
    allocatable. kubectl-dra, asked first, must say the same: it fits on node-03 through the device plugin."""
    sc = scenario("extdp")
    resource = f"{sc.driver}/gpu"
    _extended_class(sc, resource)
    with _device_plugin_serves(sc, "node-03", resource):
        p = _extended_pod("dp-pod", resource)
        p["spec"]["schedulingGates"] = [{"name": "kubectl-dra.e2e/predict-first"}]
        sc.create(p)
        before = sc.cluster.kubectl_dra("explain", "pod", "dp-pod", "-n", sc.ns, "-o", "json")
        # Gated (DRA006) and nothing else holds it: node-03's device plugin serves the resource (DRA227)
        assert [f["code"] for f in before.json["findings"] if f["blocking"]] == ["DRA006"], str(before)
        via = next(f for f in before.json["findings"] if f["code"] == "DRA227")
        assert via["evidence"]["node"] == "node-03", str(before)
        assert before.json["extendedResources"]["devicePluginNodes"].keys() == {"node-03"}, str(before)
        sc.ungate("dp-pod")
        bound = sc.cluster.wait_bound(sc.ns, "dp-pod", timeout=60)
        assert bound["spec"]["nodeName"] == "node-03"
        assert not [c for c in sc.cluster.claims(sc.ns)], "the scheduler made a DRA claim for a device-plugin resource"
        after = sc.cluster.kubectl_dra("explain", "pod", "dp-pod", "-n", sc.ns, "-o", "json")
        assert after.code == 0, str(after)
        assert "DRA224" in _codes(after.json), str(after)


def test_init_container_requests_match_the_scheduler_s_claim(scenario):
    """The request names and counts kubectl-dra predicts for an init container plus an app container are the ones
    the real scheduler puts in its claim (createRequestsAndMappings)."""
    sc = scenario("extinit")
    resource = f"{sc.driver}/gpu"
    _extended_class(sc, resource)
    sc.slice([device(f"gpu-{i}") for i in range(3)])
    p = _extended_pod("init-pod", resource)
    p["spec"]["initContainers"] = [
        {
            "name": "warmup",
            "image": "registry.k8s.io/pause:3.10",
            "resources": {"requests": {resource: "2"}, "limits": {resource: "2"}},
        }
    ]
    p["spec"]["schedulingGates"] = [{"name": "kubectl-dra.e2e/predict-first"}]
    sc.create(p)
    before = sc.cluster.kubectl_dra("explain", "pod", "init-pod", "-n", sc.ns, "-o", "json")
    predicted = [(q["name"], q["count"]) for c in before.json["claims"] for q in c["requests"]]
    mappings = before.json["extendedResources"]["requestMappings"]
    sc.ungate("init-pod")
    sc.cluster.wait_bound(sc.ns, "init-pod", timeout=60)
    status = wait_for(
        "extendedResourceClaimStatus",
        lambda: sc.cluster.pod(sc.ns, "init-pod").get("status", {}).get("extendedResourceClaimStatus"),
        60,
    )
    real = sc.cluster.claim(sc.ns, status["resourceClaimName"])
    assert [(q["name"], q["exactly"]["count"]) for q in real["spec"]["devices"]["requests"]] == predicted, str(before)
    assert sorted(map(str, mappings)) == sorted(
        str({k: m[k] for k in ("containerName", "resourceName", "requestName")}) for m in status["requestMappings"]
    )


def test_explain_pod_with_a_label_selector_covers_each_matching_pod(scenario):
    """kubectl dra explain pod -l: the live path lists the pods by label (and their events), explains each."""
    sc = scenario("sel")
    sc.device_class()
    sc.slice([device("dev-0")])
    for n in ("a", "b"):
        sc.create(claim(f"c-{n}", [request("gpu", sc.cls)]))
        p = pod(f"sel-{n}", {"gpu": f"c-{n}"})
        p["metadata"]["labels"] = {"app": "sel"}
        sc.create(p)
    other = pod("unrelated", {"gpu": "c-a"})
    other["metadata"]["labels"] = {"app": "other"}
    sc.create(other)
    # One device, two pods: one gets it, the scheduler reports the other.
    first = wait_for(
        "one pod bound",
        lambda: [n for n in ("a", "b") if sc.cluster.pod(sc.ns, f"sel-{n}")["spec"].get("nodeName")],
        60,
    )[0]
    loser = "b" if first == "a" else "a"
    sc.cluster.wait_unschedulable(sc.ns, f"sel-{loser}", "cannot allocate all claims")
    r = sc.cluster.kubectl_dra("explain", "pod", "-l", "app=sel", "-n", sc.ns, "-o", "json")
    assert r.code == 1, str(r)
    doc = r.json
    assert doc["kind"] == "List" and [i["pod"]["name"] for i in doc["items"]] == ["sel-a", "sel-b"], str(r)
    by_name = {i["pod"]["name"]: i for i in doc["items"]}
    assert by_name[f"sel-{first}"]["verdict"]["blocked"] is False, str(r)
    assert by_name[f"sel-{loser}"]["verdict"]["blocked"] is True, str(r)
    assert any(e["reason"] == "FailedScheduling" for e in by_name[f"sel-{loser}"]["events"]), str(r)


def test_explain_a_deployment_follows_its_replicaset_to_its_pods(scenario):
    """kubectl dra explain deploy/NAME on a real Deployment: the controllers create the ReplicaSet, the pods and
    their claims; one device for two replicas, so one pod gets it and the scheduler reports the other."""
    sc = scenario("wl")
    sc.device_class()
    sc.slice([device("dev-0")])
    sc.gpu_template()
    sc.deployment("wl", 2)
    pods = wait_for("two pods", lambda: (ps := sc.cluster.pods(sc.ns, "app=wl")) and len(ps) == 2 and ps, 90)
    bound = wait_for(
        "one pod bound",
        lambda: [p["metadata"]["name"] for p in sc.cluster.pods(sc.ns, "app=wl") if p["spec"].get("nodeName")],
        90,
    )
    loser = next(p["metadata"]["name"] for p in pods if p["metadata"]["name"] not in bound)
    sc.cluster.wait_unschedulable(sc.ns, loser, "cannot allocate all claims", timeout=90)
    r = sc.cluster.kubectl_dra("explain", "deploy/wl", "-n", sc.ns, "-o", "json")
    assert r.code == 1, str(r)
    items = {i["pod"]["name"]: i for i in r.json["items"]}
    assert set(items) == {p["metadata"]["name"] for p in pods}, str(r)
    assert items[loser]["verdict"]["blocked"] is True and items[bound[0]]["verdict"]["blocked"] is False, str(r)
    missing = sc.cluster.kubectl_dra("explain", "deployment.apps/nope", "-n", sc.ns)
    assert missing.code == 2 and missing.stderr.startswith('error: deployments.apps "nope" not found'), str(missing)


def test_own_claim_and_an_extended_resource_a_device_plugin_serves(scenario):
    """The upstream defect of DRA228: the pod has its own claim (a device only on node-03) and an extended resource
    that node-03's device plugin serves (DRA devices of the class on node-01 make the scheduler build its claim).
    v1.37.2 fails PreBind on node-03 on every attempt; kubectl-dra must say so before and after, not OK."""
    sc = scenario("extown")
    resource = f"{sc.driver}/gpu"
    _extended_class(sc, resource)
    sc.slice([device("dra-0")], node="node-01")
    sc.slice([device("own-0")], node="node-03")
    with _device_plugin_serves(sc, "node-03", resource):
        sc.create(claim("own", [request("gpu", sc.cls)]))
        p = _extended_pod("mixed", resource)
        p["spec"]["resourceClaims"] = [{"name": "own", "resourceClaimName": "own"}]
        p["spec"]["containers"][0]["resources"]["claims"] = [{"name": "own"}]
        p["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-03"]}]}]}}}  # fmt: skip
        p["spec"]["schedulingGates"] = [{"name": "kubectl-dra.e2e/predict-first"}]
        sc.create(p)
        before = sc.cluster.kubectl_dra("explain", "pod", "mixed", "-n", sc.ns, "-o", "json")
        assert before.code == 1 and "DRA228" in _codes(before.json), str(before)
        sc.ungate("mixed")
        sc.cluster.wait_event(sc.ns, "mixed", "FailedScheduling", "nil or empty request mappings", timeout=60)
        assert not sc.cluster.pod(sc.ns, "mixed")["spec"].get("nodeName")
        after = sc.cluster.kubectl_dra("explain", "pod", "mixed", "-n", sc.ns, "-o", "json")
        assert after.code == 1, str(after)
        assert "DRA228" in _codes(after.json) and "DRA005" not in _codes(after.json), str(after)
