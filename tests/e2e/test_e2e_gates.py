"""Agreement scenarios that need DRA beta/alpha feature gates (device taints, partitionable
devices with shared counters), on the second control plane started with the gates on."""

from __future__ import annotations

import json

import pytest
from builders import device, request
from dra_objects import assert_agrees_blocked, assert_agrees_bound, claim, device_outcomes, pod, predict_and_schedule
from e2e_helpers import clusterlib

pytestmark = pytest.mark.e2e


def test_gates_are_on(gates_cluster):
    """The control plane of this module really runs with the gates given on its command line."""
    assert gates_cluster.state["gates"] == clusterlib.DRA_GATES
    metrics = gates_cluster.api.get("/metrics")
    for gate in ("DRADeviceTaints", "DRAPartitionableDevices", "DRAConsumableCapacity"):
        assert f'kubernetes_feature_enabled{{name="{gate}",stage=' in metrics
        line = next(
            x for x in metrics.splitlines() if f'name="{gate}"' in x and x.startswith("kubernetes_feature_enabled")
        )
        assert line.endswith(" 1"), line


def test_untolerated_noschedule_device_taint(gates_scenario):
    sc = gates_scenario("taint")
    sc.device_class()
    taint = {"key": "example.com/unhealthy", "value": "ecc", "effect": "NoSchedule"}
    sc.slice([device("dev-0", taints=[taint])])

    sc.create(claim("claim-plain", [request("gpu", sc.cls)]))
    sc.create(pod("pod-plain", {"gpu": "claim-plain"}))
    sc.cluster.wait_unschedulable(sc.ns, "pod-plain", "cannot allocate all claims")
    # Ask kubectl-dra now, while the taint is the only reason (dev-0 is free).
    plain = sc.cluster.kubectl_dra("explain", "pod", "pod-plain", "-n", sc.ns, "-o", "json")
    plain_match = sc.cluster.kubectl_dra("match", "claim", "claim-plain", "-n", sc.ns, "-o", "json")

    # The same request with a toleration gets the tainted device.
    tol = [{"key": "example.com/unhealthy", "operator": "Exists", "effect": "NoSchedule"}]
    sc.create(claim("claim-tol", [request("gpu", sc.cls, tolerations=tol)]))
    sc.create(pod("pod-tol", {"gpu": "claim-tol"}, gated=True))
    _, real, prediction = predict_and_schedule(sc, "pod-tol", "claim-tol")
    assert real == [(sc.driver, "node-01", "dev-0")]

    assert plain.code == 1, str(plain)
    assert plain.json["verdict"]["blocked"] is True and plain.json["verdict"]["missing"] == "device", str(plain)
    assert "example.com/unhealthy" in plain.stdout, str(plain)
    assert plain_match.code == 1 and plain_match.json["satisfiable"] is False, str(plain_match)
    assert device_outcomes(plain_match.json).get("dev-0") == "rejected", str(plain_match)
    assert_agrees_bound(sc, "pod-tol", "claim-tol", real, prediction)
    # Allocated (to the tolerating claim) wins over tainted in the inventory; the taint stays in the row.
    inv = _devices(sc)["dev-0"]
    assert inv["state"] == "allocated" and inv["taints"][0]["key"] == "example.com/unhealthy", inv


def test_exhausted_shared_counters(gates_scenario):
    sc = gates_scenario("counters")
    sc.device_class()
    counters = [{"name": "gpu-0-mem", "counters": {"memory": {"value": "40Gi"}}}]
    sc.slice([], suffix="-counters", pool="node-01", slice_count=2, shared_counters=counters)

    def part(name):
        return device(
            name,
            memory="24Gi",
            consumesCounters=[{"counterSet": "gpu-0-mem", "counters": {"memory": {"value": "24Gi"}}}],
        )

    sc.slice([part("part-a"), part("part-b")], suffix="-devices", pool="node-01", slice_count=2)

    sc.create(claim("claim-1", [request("gpu", sc.cls)]))
    sc.create(pod("pod-1", {"gpu": "claim-1"}, gated=True))
    _, real, prediction = predict_and_schedule(sc, "pod-1", "claim-1")
    assert len(real) == 1 and real[0][2] in ("part-a", "part-b"), real
    taken = real[0][2]
    other = "part-b" if taken == "part-a" else "part-a"

    sc.create(claim("claim-2", [request("gpu", sc.cls)]))
    sc.create(pod("pod-2", {"gpu": "claim-2"}))
    sc.cluster.wait_unschedulable(sc.ns, "pod-2", "cannot allocate all claims")

    assert_agrees_bound(sc, "pod-1", "claim-1", real, prediction)
    doc = assert_agrees_blocked(sc, "pod-2", "claim-2", missing="device")
    assert device_outcomes(doc["_match"]).get(other) == "rejected", json.dumps(doc["_match"])
    # The inventory: the scheduler's pick is held by pod-1's claim, the other partition is not held but its counters
    # are used up, and no more of that partition fits.
    inv = _devices(sc)
    assert inv[taken]["state"] == "allocated" and inv[taken]["claims"] == [f"{sc.ns}/claim-1"], inv
    assert inv[taken]["pods"] == [f"{sc.ns}/pod-1 (Pending)"], inv
    assert inv[other]["state"] == "exhausted" and "gpu-0-mem" in inv[other]["detail"], inv
    head = sc.cluster.kubectl_dra("devices", "--driver", sc.driver, "-o", "json").json["headroom"]
    assert [(h["free"], h["fit"]) for h in head] == [(1, 0)], head


def _devices(sc) -> dict:
    """kubectl dra devices --driver (this scenario's driver) -o json, by device name."""
    r = sc.cluster.kubectl_dra("devices", "--driver", sc.driver, "-o", "json")
    assert r.code == 0, str(r)
    return {d["device"]: d for d in r.json["items"]}


def test_consumable_capacity_exhausted(gates_scenario):
    """DRAConsumableCapacity: one shareable device, two claims that each consume 24Gi of its 40Gi."""
    sc = gates_scenario("capacity")
    sc.device_class()
    sc.slice([device("shared-0", memory="40Gi", allowMultipleAllocations=True)])
    need = {"requests": {"memory": "24Gi"}}

    sc.create(claim("claim-1", [request("mem", sc.cls, capacity=need)]))
    sc.create(pod("pod-1", {"mem": "claim-1"}, gated=True))
    _, real, prediction = predict_and_schedule(sc, "pod-1", "claim-1")
    assert real == [(sc.driver, "node-01", "shared-0")]
    result = sc.cluster.claim(sc.ns, "claim-1")["status"]["allocation"]["devices"]["results"][0]
    assert result.get("consumedCapacity") == {"memory": "24Gi"}, result
    assert result.get("shareID"), result

    sc.create(claim("claim-2", [request("mem", sc.cls, capacity=need)]))
    sc.create(pod("pod-2", {"mem": "claim-2"}))
    sc.cluster.wait_unschedulable(sc.ns, "pod-2", "cannot allocate all claims")

    assert_agrees_bound(sc, "pod-1", "claim-1", real, prediction)
    doc = assert_agrees_blocked(sc, "pod-2", "claim-2", missing="device")
    assert device_outcomes(doc["_match"]).get("shared-0") == "rejected", json.dumps(doc["_match"])
    inv = _devices(sc)["shared-0"]
    assert inv["state"] == "shared" and inv["claims"] == [f"{sc.ns}/claim-1"], inv
    assert "consumed memory 24Gi of 40Gi" in inv["detail"], inv


def test_pool_status_requests_beside_ours(gates_scenario):
    """DRAResourcePoolStatus (alpha): kube-controller-manager answers a ResourcePoolStatusRequest (the test creates
    it; kubectl-dra only reads it, the audit log checks that), and `devices` shows its counts beside its own for the
    same pool: three devices, one allocated to a running pod's claim. Counted as the controller counts, they agree;
    a user who may not list claims gets upstream's count as a bound (DRA106); the claim deleted afterwards, the
    request (counted once) and kubectl-dra disagree, both numbers named (DRA023)."""
    from e2e_helpers import wait_for

    sc = gates_scenario("poolstatus")
    sc.device_class()
    sc.slice([device(f"gpu-{i}") for i in range(3)])
    sc.create(claim("claim-1", [request("gpu", sc.cls)]))
    sc.create(pod("pod-1", {"gpu": "claim-1"}, gated=True))
    _, real, _ = predict_and_schedule(sc, "pod-1", "claim-1")
    assert len(real) == 1
    name = f"{sc.name}-rpsr"
    sc._create_cluster(
        "/apis/resource.k8s.io/v1alpha3/resourcepoolstatusrequests",
        {
            "apiVersion": "resource.k8s.io/v1alpha3",
            "kind": "ResourcePoolStatusRequest",
            "metadata": {"name": name},
            "spec": {"driver": sc.driver, "poolName": "node-01"},
        },
    )
    path = f"/apis/resource.k8s.io/v1alpha3/resourcepoolstatusrequests/{name}"
    status = wait_for(
        "the ResourcePoolStatusRequest's status", lambda: (sc.api.get(path) or {}).get("status", {}).get("pools"), 90
    )
    up = status[0]
    r = sc.cluster.kubectl_dra("devices", "--driver", sc.driver, "-o", "json")
    assert r.code == 0, r.stderr
    (entry,) = [p for p in r.json["poolStatusRequests"] if p["request"] == name]
    assert entry["upstream"]["total"] == up.get("totalDevices") == 3, (entry, up)
    assert entry["upstream"]["allocated"] == up.get("allocatedDevices") == 1, (entry, up)
    assert entry["kubectlDra"] == {"total": 3, "allocated": 1, "available": 2, "unavailable": 0}, entry
    assert entry["upstream"]["available"] == up.get("availableDevices") == 2, (entry, up)
    assert not [f for f in r.json["findings"] if f["subject"].get("request") == name], r.json["findings"]
    text = sc.cluster.kubectl_dra("devices").stdout  # the summary (a filter lists devices instead)
    assert "ResourcePoolStatusRequests (alpha): upstream's counts" in text and name in text, text
    assert "DRA023" not in text and "DRA106" not in text, text

    # A user who may not list ResourceClaims sees the device as free: no disagreement, upstream's count bounds it
    kc, role = _reader_without_claims_list(sc)
    try:
        r = sc.cluster.kubectl_dra("devices", "--driver", sc.driver, "-o", "json", kubeconfig=kc)
        assert r.code == 2, str(r)  # the inventory is incomplete
        mine = [f for f in r.json["findings"] if f["subject"].get("request") == name]
        assert [f["code"] for f in mine] == ["DRA106"], mine
        msg = mine[0]["message"]
        assert (
            "kubectl-dra counts 0 of 3 devices allocated" in msg and "counted 1 allocated and 2 available of 3" in msg
        )
        assert "bounds what is in use" in msg, msg
        text = sc.cluster.kubectl_dra("devices", kubeconfig=kc).stdout
        assert "info DRA106:" in text and "DRA023" not in text, text
    finally:
        sc.api.delete(f"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{role}")
        sc.api.delete(f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{role}")

    # The controller counts once, when the request is created: the pod and its claim gone, it still says 1 allocated
    sc.cluster.delete_pods(sc.ns)
    claim_path = f"/apis/resource.k8s.io/v1/namespaces/{sc.ns}/resourceclaims/claim-1"
    sc.api.delete(claim_path)
    wait_for("claim-1 to be deleted", lambda: sc.api.get(claim_path, ok404=True) is None, 60, 0.5)
    assert (sc.api.get(path).get("status") or {}).get("pools") == status  # never counted again
    r = sc.cluster.kubectl_dra("devices", "--driver", sc.driver, "-o", "json")
    assert r.code == 0, str(r)  # a warning, not an open answer
    mine = [f for f in r.json["findings"] if f["subject"].get("request") == name]
    assert [f["code"] for f in mine] == ["DRA023"], mine
    assert mine[0]["evidence"]["differ"] == ["allocated", "available"], mine
    assert "allocated: upstream 1, kubectl-dra 0; available: upstream 2, kubectl-dra 3" in mine[0]["message"], mine


def _reader_without_claims_list(sc) -> tuple[str, str]:
    """A ServiceAccount that reads what `devices` reads (ResourcePoolStatusRequests too) but may only get, not list,
    ResourceClaims: its kubeconfig and its ClusterRole's name (the binding has the same)."""
    import tempfile
    from pathlib import Path

    from e2e_helpers import wait_for

    sa, role = "no-claims", f"{sc.ns}-no-claims"
    read = ["get", "list", "watch"]
    rules = [
        {"apiGroups": [""], "resources": ["pods", "events", "nodes"], "verbs": read},
        {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": read},
        {"apiGroups": ["apps"], "resources": ["daemonsets"], "verbs": read},
        {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims"], "verbs": ["get"]},
        {
            "apiGroups": ["resource.k8s.io"],
            "resources": ["resourceclaimtemplates", "deviceclasses", "resourceslices", "devicetaintrules",
                          "resourcepoolstatusrequests"],
            "verbs": read,
        },
    ]  # fmt: skip
    sc.api.post(f"/api/v1/namespaces/{sc.ns}/serviceaccounts",
                {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": sa}})  # fmt: skip
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    sc.api.post(f"{rbac}/clusterroles", {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                         "metadata": {"name": role}, "rules": rules})  # fmt: skip
    sc.api.post(
        f"{rbac}/clusterrolebindings",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": role},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": sc.ns}],
        },
    )
    kc = sc.cluster.token_kubeconfig(sc.ns, sa, Path(tempfile.mkdtemp()) / f"{sa}.kubeconfig")
    user = f"system:serviceaccount:{sc.ns}:{sa}"

    def can(verb: str, res: str) -> str:
        return sc.cluster.kubectl("auth", "can-i", verb, res, "-A", f"--as={user}", check=False).stdout.strip()

    # RBAC caches are eventually consistent: wait until the role is in effect
    wait_for(f"RBAC for {user}", lambda: can("list", "resourcepoolstatusrequests.resource.k8s.io") == "yes", 30)
    assert can("list", "resourceclaims.resource.k8s.io") == "no"
    return kc, role
