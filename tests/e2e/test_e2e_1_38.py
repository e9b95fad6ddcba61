"""Where Kubernetes 1.38 decides differently from 1.37, the real kube-scheduler of v1.38.0-beta.0 decides and kubectl-dra
(which detects the server's minor from /version) must agree.

The control plane is built from k8s.io/kubernetes v1.38.0-beta.0 (tests/cluster/v1.38, `build.sh 1.38`) and started
with its default feature gates (module fixture cluster_1_38). Each scenario is one that the 1.37 scheduler decides
otherwise (kubectl_dra/behaviour.py names the facts):
- all_mode_unusable_pool_fails_node: allocationMode All meeting an incomplete pool fails that node only;
- qualified_capacity_names: a capacity request `memory` meets a device capacity `<driver>/memory`;
- attributes_converted_once: a matchAttribute constraint meeting a version the scheduler cannot parse aborts the
  attempt (`unsupported attribute value`), DRA416.
"""

from __future__ import annotations

import json
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest
from builders import device, request
from dra_objects import RES, assert_agrees_bound, claim, pod, predict_and_schedule
from e2e_helpers import clusterlib, wait_for

pytestmark = pytest.mark.e2e

VERSION = "v1.38.0-beta.0"


def _semantics(doc: dict) -> tuple[str, str]:
    sem = doc["semantics"]
    return sem["kubernetesVersion"], sem["versionSource"]


def _codes(doc: dict) -> list[str]:
    return [f["code"] for f in doc["findings"]]


def test_control_plane_is_1_38(cluster_1_38):
    """The apiserver, the scheduler and the controller-manager really are v1.38.0-beta.0, and kubectl-dra takes
    the 1.38 semantics from the server (no --kubernetes-version)."""
    assert cluster_1_38.api.get("/version")["gitVersion"] == VERSION
    for name in ("kube-apiserver", "kube-scheduler", "kube-controller-manager"):
        out = subprocess.run([str(Path(cluster_1_38.state["bin"]) / name), "--version"], capture_output=True, text=True)
        assert out.stdout.split() == ["Kubernetes", VERSION], (name, out.stdout, out.stderr)
    metrics = cluster_1_38.api.get("/metrics")
    assert 'kubernetes_feature_enabled{name="DRAConsumableCapacity",stage=""} 1' in metrics  # GA in 1.38
    assert 'name="DynamicResourceAllocation"' not in metrics  # the gate is gone in 1.38
    r = cluster_1_38.kubectl_dra("devices", "-o", "json")
    assert r.code == 0, str(r)
    assert _semantics(r.json) == ("1.38", "server"), str(r)


def test_all_mode_incomplete_pool_fails_only_its_node(scenario_1_38):
    """allocationMode All, node-01's pool announces two slices but only one is published (incomplete), node-02's pool
    is complete. 1.37 aborts the whole attempt with an error (`... is currently being updated`); 1.38 fails node-01
    only and binds the pod to node-02 with all of node-02's devices."""
    sc = scenario_1_38("allincomplete")
    sc.device_class()
    sc.slice([device("dev-0"), device("dev-1")], node="node-01", slice_count=2)
    sc.slice([device("dev-0"), device("dev-1")], node="node-02")
    sc.create(claim("claim-all", [request("gpus", sc.cls, count=None, mode="All")]))
    sc.create(pod("pod-all", {"gpus": "claim-all"}, gated=True))
    bound, real, prediction = predict_and_schedule(sc, "pod-all", "claim-all")
    assert bound["spec"]["nodeName"] == "node-02", bound["spec"]
    assert real == [(sc.driver, "node-02", "dev-0"), (sc.driver, "node-02", "dev-1")], real
    doc = assert_agrees_bound(sc, "pod-all", "claim-all", real, prediction)
    assert _semantics(prediction.json) == ("1.38", "server"), str(prediction)
    assert _semantics(doc) == ("1.38", "server"), json.dumps(doc)[:2000]
    assert doc["pod"]["node"] == "node-02", json.dumps(doc)[:2000]


def test_unqualified_capacity_request_meets_qualified_capacity(scenario_1_38):
    """DRAConsumableCapacity (GA, on by default in 1.38): a shareable device publishes its capacity as
    `<driver>/memory`, the claim asks for `memory`. 1.37 compares the names as written (no such capacity: the device
    does not fit); 1.38 resolves both to `<driver>/memory` and allocates a share."""
    sc = scenario_1_38("qualcap")
    sc.device_class()
    sc.slice(
        [
            {
                "name": "shared-0",
                "allowMultipleAllocations": True,
                "capacity": {f"{sc.driver}/memory": {"value": "40Gi"}},
            }
        ]
    )
    sc.create(claim("claim-mem", [request("mem", sc.cls, capacity={"requests": {"memory": "24Gi"}})]))
    sc.create(pod("pod-mem", {"mem": "claim-mem"}, gated=True))
    _, real, prediction = predict_and_schedule(sc, "pod-mem", "claim-mem")
    assert real == [(sc.driver, "node-01", "shared-0")], real
    result = sc.cluster.claim(sc.ns, "claim-mem")["status"]["allocation"]["devices"]["results"][0]
    # The status spells the capacity as the slice does (capacityNameForStatus).
    assert result.get("consumedCapacity") == {f"{sc.driver}/memory": "24Gi"}, result
    assert result.get("shareID"), result
    doc = assert_agrees_bound(sc, "pod-mem", "claim-mem", real, prediction)
    assert _semantics(doc) == ("1.38", "server"), json.dumps(doc)[:2000]


@contextmanager
def _apiserver_1_37(c):
    """The default build's kube-apiserver (v1.37.2) on the 1.38 control plane's etcd, as during the upgrade from
    1.37: it still accepts what 1.37 validation allows."""
    name = "kube-apiserver-1.37"
    _, api = clusterlib.start_peer_apiserver(c.state, clusterlib.build(), name)
    try:
        assert api.get("/version")["gitVersion"] == "v1.37.2"
        yield api
    finally:
        clusterlib.stop_peer_apiserver(c.state, name)


@pytest.mark.parametrize("class_selector", [True, False], ids=["driver-selector", "no-selector"])
def test_match_attribute_meets_unparsable_version(scenario_1_38, class_selector):
    """A version attribute that 1.37 validation accepted (numbers of any length) but that does not fit a semver
    (18446744073709551616 = 2^64). The 1.38 apiserver refuses it (at most 18 digits, kubernetes#142964), so the slice
    is written through a 1.37 apiserver on the same etcd, as in a cluster upgraded from 1.37 or in the middle of the
    upgrade. 1.38's scheduler parses attributes once and keeps this one as unsupported; a matchAttribute constraint
    meeting it aborts the attempt: `device <id>: unsupported attribute value for <attribute>`. kubectl-dra: blocked,
    DRA416, exit 1.

    Checked on the real 1.37.2 scheduler with the same objects: with the class selector `device.driver == ...` it
    fails with a CEL runtime error (`attribute ver: parse semantic version: ...`: 1.37 converts every attribute
    before any expression runs; 1.38 only fails expressions that read the attribute, so here the selector passes and
    the constraint decides); with a class without selectors it allocates the pair (1.37 compares the strings)."""
    sc = scenario_1_38("badsemver")
    if class_selector:
        sc.device_class()
    else:
        sc._create_cluster(
            f"{RES}/deviceclasses",
            {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": sc.cls}, "spec": {}},
        )
    version = "18446744073709551616.0.0"
    devices = [device(f"dev-{i}") for i in range(2)]
    for d in devices:
        d["attributes"] = {"ver": {"version": version}}
    name = f"{sc.name}-node-01"
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": sc.driver,
            "nodeName": "node-01",
            "pool": {"name": "node-01", "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }
    # The 1.38 apiserver refuses the value (what the upgrade route works around).
    with pytest.raises(clusterlib.ApiError) as refused:
        sc.api.post(f"{RES}/resourceslices", body)
    assert refused.value.code == 422 and "at most 18 digits" in refused.value.body, refused.value.body
    with _apiserver_1_37(sc.cluster) as old:
        old.post(f"{RES}/resourceslices", body)
    sc._cluster_objs.append(f"{RES}/resourceslices/{name}")
    wait_for("the 1.38 apiserver to serve the slice", lambda: sc.api.get(f"{RES}/resourceslices/{name}", ok404=True))

    sc.create(
        claim(
            "claim-pair",
            [request("a", sc.cls), request("b", sc.cls)],
            constraints=[{"requests": ["a", "b"], "matchAttribute": f"{sc.driver}/ver"}],
        )
    )
    sc.create(pod("pod-pair", {"pair": "claim-pair"}))
    ev = sc.cluster.wait_unschedulable(sc.ns, "pod-pair", "unsupported attribute value")
    assert f"unsupported attribute value for {sc.driver}/ver" in ev["message"], ev["message"]
    assert f"device {sc.driver}/node-01/dev-" in ev["message"], ev["message"]
    assert sc.cluster.allocated_devices(sc.ns, "claim-pair") == []

    r = sc.cluster.kubectl_dra("explain", "pod", "pod-pair", "-n", sc.ns, "-o", "json")
    assert r.code == 1, str(r)
    assert r.json["verdict"]["blocked"] is True, str(r)
    assert "DRA416" in _codes(r.json), str(r)
    assert _semantics(r.json) == ("1.38", "server"), str(r)
    m = sc.cluster.kubectl_dra("match", "claim", "claim-pair", "-n", sc.ns, "-o", "json")
    assert m.code == 1, str(m)
    assert m.json["satisfiable"] is False, str(m)
    assert "DRA416" in _codes(m.json), str(m)
    text = sc.cluster.kubectl_dra("explain", "pod", "pod-pair", "-n", sc.ns)
    assert text.code == 1 and "unsupported attribute value" in text.stdout, str(text)
