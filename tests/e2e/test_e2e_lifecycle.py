"""Pods and nodes mid-lifecycle, and input as users have it, on the real control plane.

- A node cordoned for a drain (spec.unschedulable) with a free device, while the device elsewhere is taken: the real
  scheduler leaves the pod Pending ("node(s) were unschedulable"); kubectl-dra says the free device is on a node the
  pod cannot use (MISSING node, a hint to uncordon), not "no free device ... delete the pods holding it".
- A pod held in Terminating by a finalizer keeps its claim allocated (no kubelet finishes it here, as on a node that
  is gone): the pod waiting for its device is told the device is held by a terminating pod.
- The same states read from `kubectl get -o yaml` dumps: with every kind the answers are the live ones; with the
  ResourceSlices left out, the answers that depend on them are undetermined (exit 2) and say what to add.
"""

from __future__ import annotations

import pytest
from builders import device, request
from dra_objects import claim, pod

pytestmark = pytest.mark.e2e

KINDS = "pods,resourceclaims,resourceclaimtemplates,deviceclasses,resourceslices,nodes,events,daemonsets"


def _dump(sc, tmp_path, kinds: str = KINDS) -> str:
    """`kubectl get KINDS -A -o yaml`, as a user takes it."""
    p = tmp_path / f"dump-{kinds.count(',')}.yaml"
    p.write_text(sc.cluster.kubectl("get", kinds, "-A", "-o", "yaml").stdout)
    return str(p)


def _answer(r) -> tuple:
    v = r.json["verdict"]
    return v["blocked"], v["missing"], v["determined"]


def _explain(sc, name: str, *more: str):
    return sc.cluster.kubectl_dra("explain", "pod", name, "-n", sc.ns, "-o", "json", *more)


def test_a_cordoned_node_s_free_device_is_where_the_pod_cannot_go(scenario, tmp_path):
    sc = scenario("cordon")
    sc.device_class()
    sc.slice([device("dev-0")], node="node-01")
    sc.slice([device("dev-1")], node="node-02")
    sc.create(claim("claim-a", [request("gpu", sc.cls)]))
    sc.create(pod("pod-a", {"gpu": "claim-a"}, node_selector={"kubernetes.io/hostname": "node-02"}))
    sc.cluster.wait_bound(sc.ns, "pod-a")
    node = "/api/v1/nodes/node-01"
    sc.api.patch(node, {"spec": {"unschedulable": True}}, kind="merge")
    try:
        sc.create(claim("claim-b", [request("gpu", sc.cls)]))
        sc.create(pod("pod-b", {"gpu": "claim-b"}))
        ev = sc.cluster.wait_unschedulable(sc.ns, "pod-b", "unschedulable")
        assert "cannot allocate all claims" in ev["message"], ev["message"]
        for r in (_explain(sc, "pod-b"), _explain(sc, "pod-b", "--from-file", _dump(sc, tmp_path))):
            assert r.code == 1, str(r)
            v, lead = r.json["verdict"], next(f for f in r.json["findings"] if f["code"] == "DRA501")
            assert (v["blocked"], v["missing"]) == (True, "node"), str(r)
            assert lead["evidence"]["freeOnUnusableNodes"] == 1 and lead["evidence"]["unusableNodes"] == ["node-01"]
            assert "kubectl uncordon node-01" in lead["hint"], lead
            behind = next(f for f in r.json["findings"] if f["code"] == "DRA404")
            assert behind["evidence"]["behind"] == "node", behind
        status = sc.cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json")
        row = next(x for x in status.json["items"] if x["pod"] == "pod-b")
        assert (row["state"], row["missing"]) == ("Blocked", "node"), str(status)
    finally:
        sc.api.patch(node, {"spec": {"unschedulable": False}}, kind="merge")


def test_a_pod_held_terminating_holds_its_device(scenario, tmp_path):
    sc = scenario("term")
    sc.device_class()
    sc.slice([device("dev-0")], node="node-01")
    sc.create(claim("claim-a", [request("gpu", sc.cls)]))
    held = pod("pod-a", {"gpu": "claim-a"})
    held["metadata"]["finalizers"] = ["kubectl-dra.e2e/keep"]
    sc.create(held)
    sc.cluster.wait_bound(sc.ns, "pod-a")
    path = f"/api/v1/namespaces/{sc.ns}/pods/pod-a"
    sc.api.delete(path)
    try:
        assert sc.cluster.pod(sc.ns, "pod-a")["metadata"].get("deletionTimestamp")
        sc.create(claim("claim-b", [request("gpu", sc.cls)]))
        sc.create(pod("pod-b", {"gpu": "claim-b"}))
        sc.cluster.wait_unschedulable(sc.ns, "pod-b", "cannot allocate all claims")
        assert sc.cluster.allocated_devices(sc.ns, "claim-a") == [(sc.driver, "node-01", "dev-0")]
        for r in (_explain(sc, "pod-b"), _explain(sc, "pod-b", "--from-file", _dump(sc, tmp_path))):
            assert r.code == 1, str(r)
            assert (r.json["verdict"]["blocked"], r.json["verdict"]["missing"]) == (True, "device"), str(r)
            taken = next(f for f in r.json["findings"] if f["code"] == "DRA404")
            assert taken["evidence"]["terminating"] == 1 and "held by a terminating pod" in taken["message"], taken
            assert "finalizer" in taken["hint"] and "delete the pods" not in taken["hint"], taken
        going = _explain(sc, "pod-a")
        assert going.json["pod"]["deletionTimestamp"], str(going)
        assert "kubectl-dra.e2e/keep" in next(f for f in going.json["findings"] if f["code"] == "DRA613")["message"]
        status = sc.cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json")
        assert next(x for x in status.json["items"] if x["pod"] == "pod-a")["phase"] == "Terminating", str(status)
        text = sc.cluster.kubectl_dra("devices", "--list", "--driver", sc.driver)
        assert f"{sc.ns}/pod-a (Terminating)" in text.stdout, str(text)
    finally:
        sc.api.patch(path, {"metadata": {"finalizers": None}}, kind="merge")


def test_a_dump_without_the_slices_leaves_the_device_answers_open(scenario, tmp_path):
    sc = scenario("nokind")
    sc.device_class()
    sc.slice([device("dev-0")], node="node-01")
    sc.create(claim("claim-a", [request("gpu", sc.cls)]))
    sc.create(pod("pod-a", {"gpu": "claim-a"}))
    sc.cluster.wait_bound(sc.ns, "pod-a")
    sc.create(claim("claim-b", [request("gpu", sc.cls)]))
    sc.create(pod("pod-b", {"gpu": "claim-b"}))
    sc.cluster.wait_unschedulable(sc.ns, "pod-b", "cannot allocate all claims")
    live = _explain(sc, "pod-b")
    assert live.code == 1, str(live)
    full = _explain(sc, "pod-b", "--from-file", _dump(sc, tmp_path))
    assert (full.code, full.json["verdict"]) == (live.code, live.json["verdict"]), str(full)
    less = _explain(sc, "pod-b", "--from-file", _dump(sc, tmp_path, KINDS.replace(",resourceslices", "")))
    assert less.code == 2 and less.json["verdict"]["determined"] is False, str(less)
    assert "kubectl get resourceslices" in less.json["verdict"]["summary"], str(less)
    scan = sc.cluster.kubectl_dra(
        "status", "-n", sc.ns, "--from-file", _dump(sc, tmp_path, KINDS.replace(",resourceslices", ""))
    )
    assert scan.code == 2 and "the input holds no ResourceSlice objects" in scan.stdout, str(scan)


def test_a_dump_without_any_one_kind_gives_the_live_answer_or_undetermined(scenario, tmp_path):
    """The metamorphic rule on what a real cluster writes: a `kubectl get` that forgot one kind gives each pod the
    live answer or an undetermined one (exit 2), never another confident one."""
    sc = scenario("anykind")
    sc.device_class()
    sc.slice([device("dev-0")], node="node-01")
    sc.create(claim("claim-a", [request("gpu", sc.cls)]))
    sc.create(pod("pod-a", {"gpu": "claim-a"}))
    sc.cluster.wait_bound(sc.ns, "pod-a")
    sc.create(claim("claim-b", [request("gpu", sc.cls)]))
    sc.create(pod("pod-b", {"gpu": "claim-b"}))
    sc.cluster.wait_unschedulable(sc.ns, "pod-b", "cannot allocate all claims")
    live = {p: _explain(sc, p) for p in ("pod-a", "pod-b")}
    kinds = KINDS.split(",")
    for left_out in kinds:
        dump = _dump(sc, tmp_path, ",".join(k for k in kinds if k != left_out))
        for p, want in live.items():
            got = _explain(sc, p, "--from-file", dump)
            assert got.code == 2 or (got.code, *_answer(got)) == (want.code, *_answer(want)), (
                f"without {left_out}: {got}"
            )
