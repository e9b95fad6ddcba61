"""Read-only and least privilege: kubectl-dra as a ServiceAccount with only get/list/watch.

The API server of the suite writes a JSON audit log (tests/cluster/cluster.py); from it the
tests check that kubectl-dra's user issued no verb other than get, list and watch.
"""

from __future__ import annotations

import json

import pytest
from builders import device, request
from dra_objects import claim, pod
from e2e_helpers import wait_for

pytestmark = pytest.mark.e2e

READ = ["get", "list", "watch"]
CORE = ["pods", "events", "nodes"]
DRA = ["resourceclaims", "resourceclaimtemplates", "deviceclasses", "resourceslices", "devicetaintrules"]


def cluster_role(name: str, drop_list_on: str | None = None) -> dict:
    rules = [
        {"apiGroups": [""], "resources": CORE, "verbs": READ},
        {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": READ},
    ]
    for res in DRA:
        verbs = [v for v in READ if not (res == drop_list_on and v == "list")]
        rules.append({"apiGroups": ["resource.k8s.io"], "resources": [res], "verbs": verbs})
    # the driver piece (kubelet-plugin DaemonSets) and gangs (PodGroups), as docs/rbac.md's role has them
    rules.append({"apiGroups": ["apps"], "resources": ["daemonsets"], "verbs": ["get", "list"]})
    rules.append({"apiGroups": ["scheduling.k8s.io"], "resources": ["podgroups"], "verbs": ["get", "list"]})
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": rules,
    }


@pytest.fixture
def reader(cluster, namespace, tmp_path):
    """make(sa, drop_list_on=None) -> kubeconfig path of a ServiceAccount bound to a read-only role."""
    made = []

    def make(sa: str, drop_list_on: str | None = None) -> tuple[str, str]:
        role = f"{namespace}-{sa}"
        cluster.api.post(
            f"/api/v1/namespaces/{namespace}/serviceaccounts",
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": sa}},
        )
        cluster.api.post("/apis/rbac.authorization.k8s.io/v1/clusterroles", cluster_role(role, drop_list_on))
        cluster.api.post(
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": role},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": namespace}],
            },
        )
        made.append(role)
        kc = cluster.token_kubeconfig(namespace, sa, tmp_path / f"{sa}.kubeconfig")
        user = f"system:serviceaccount:{namespace}:{sa}"
        # RBAC caches are eventually consistent: wait until the role is in effect.
        wait_for(
            f"RBAC for {user}",
            lambda: (
                cluster.kubectl(
                    "auth", "can-i", "get", "pods", "-n", namespace, f"--as={user}", check=False
                ).stdout.strip()
                == "yes"
            ),
            30,
        )
        return kc, user

    yield make
    for role in made:
        cluster.api.delete(f"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{role}")
        cluster.api.delete(f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{role}")


def _setup_bound_pod(sc):
    sc.device_class()
    sc.slice([device("dev-0", memory="16Gi"), device("dev-1", memory="4Gi")])
    sel = f'device.capacity["{sc.driver}"].memory.compareTo(quantity("8Gi")) >= 0'
    sc.create(claim("claim-r", [request("gpu", sc.cls, selectors=[sel])]))
    sc.create(pod("pod-r", {"gpu": "claim-r"}))
    sc.cluster.wait_bound(sc.ns, "pod-r")
    assert sc.cluster.allocated_devices(sc.ns, "claim-r") == [(sc.driver, "node-01", "dev-0")]


def _verbs_of(cluster, user: str) -> list[tuple[str, str, int]]:
    out = []
    for e in cluster.audit_entries():
        if e.get("user", {}).get("username") == user:
            ref = e.get("objectRef") or {}
            out.append(
                (e["verb"], ref.get("resource") or e.get("requestURI"), (e.get("responseStatus") or {}).get("code", 0))
            )
    return out


def test_read_only_service_account_works_and_uses_only_read_verbs(cluster, scenario, reader):
    sc = scenario("rbac")
    _setup_bound_pod(sc)
    kc, user = reader("kubectl-dra")

    admin = cluster.kubectl_dra("explain", "pod", "pod-r", "-n", sc.ns, "-o", "json")
    as_sa = cluster.kubectl_dra("explain", "pod", "pod-r", "-n", sc.ns, "-o", "json", kubeconfig=kc)
    assert as_sa.code == 0, str(as_sa)
    assert admin.code == 0, str(admin)
    assert as_sa.json["verdict"] == admin.json["verdict"], f"{as_sa}\n{admin}"
    assert not [f for f in as_sa.json["findings"] if f["name"] == "permission-denied"], str(as_sa)
    text = cluster.kubectl_dra("explain", "pod", "pod-r", "-n", sc.ns, kubeconfig=kc)
    assert text.code == 0, str(text)
    match = cluster.kubectl_dra("match", "claim", "claim-r", "-n", sc.ns, "-o", "json", kubeconfig=kc)
    assert match.code == 0, str(match)
    assert match.json["satisfiable"] is True, str(match)

    verbs = _verbs_of(cluster, user)
    assert verbs, f"no audit entries for {user}: is the audit log on?"
    assert {v for v, _, _ in verbs} <= set(READ), f"{user} used other verbs: {sorted(set(verbs))}"
    assert ("get", "pods", 200) in verbs, sorted(set(verbs))
    assert not [v for v in verbs if v[2] == 403], f"forbidden requests with the full read role: {verbs}"


def test_without_list_on_resourceslices_reports_permission_denied(cluster, scenario, reader):
    sc = scenario("rbacdeny")
    _setup_bound_pod(sc)
    # A second pod whose claim is not allocated: explaining it needs the ResourceSlices.
    sc.create(claim("claim-p", [request("gpus", sc.cls, count=3)]))
    sc.create(pod("pod-p", {"gpus": "claim-p"}))
    sc.cluster.wait_unschedulable(sc.ns, "pod-p", "cannot allocate all claims")
    kc, user = reader("kubectl-dra-limited", drop_list_on="resourceslices")
    assert (
        cluster.kubectl(
            "auth", "can-i", "list", "resourceslices.resource.k8s.io", f"--as={user}", check=False
        ).stdout.strip()
        == "no"
    )

    r = cluster.kubectl_dra("explain", "pod", "pod-p", "-n", sc.ns, "-o", "json", kubeconfig=kc)
    # It still answers what it can (a Diagnosis on stdout) and names the missing permission...
    doc = r.json
    assert doc["kind"] == "Diagnosis", str(r)
    denied = [f for f in doc["findings"] if f["name"] == "permission-denied"]
    assert denied, str(r)
    assert denied[0]["code"] == "DRA101", str(r)
    ev = json.dumps([f["evidence"] for f in denied])
    assert "list" in ev and "resourceslices" in ev, str(r)
    assert any(c["name"] == "claim-p" for c in doc["claims"]), str(r)
    # ...and exits as documented (docs/exit-codes.md, docs/rbac.md): without the slices an
    # unallocated claim gets no verdict: exit 2, verdict.determined false, report on stdout.
    assert r.code == 2, str(r)
    assert doc["verdict"].get("determined") is False, str(r)

    # The allocated pod needs no slices: it is still explained in full.
    ok = cluster.kubectl_dra("explain", "pod", "pod-r", "-n", sc.ns, "-o", "json", kubeconfig=kc)
    assert ok.code == 0, str(ok)
    claim_doc = next(c for c in ok.json["claims"] if c["name"] == "claim-r")
    assert [x["device"] for x in claim_doc["allocation"]["results"]] == ["dev-0"], str(ok)

    verbs = _verbs_of(cluster, user)
    assert {v for v, _, _ in verbs} <= set(READ), f"{user} used other verbs: {sorted(set(verbs))}"
    assert ("list", "resourceslices", 403) in verbs, sorted(set(verbs))


def test_without_list_on_devicetaintrules_an_allocation_is_open_and_an_allocated_pod_is_not(cluster, scenario, reader):
    """The 1.37 scheduler applies DeviceTaintRules (DRADeviceTaintRules on by default): a rule the reader may not
    list could taint the free device, so what a gated pod's claim gets once the gate goes is open (DRA103 where the
    full reader says allocatable, DRA002; the gate itself still blocks: exit 1); the pod whose claim is allocated is
    still explained in full."""
    sc = scenario("rbacdtr")
    _setup_bound_pod(sc)
    sc.create(claim("claim-g", [request("gpu", sc.cls)]))
    sc.create(pod("pod-g", {"gpu": "claim-g"}, gated=True))
    kc, user = reader("kubectl-dra-no-taint-rules", drop_list_on="devicetaintrules")
    full = cluster.kubectl_dra("explain", "pod", "pod-g", "-n", sc.ns, "-o", "json")
    assert "DRA002" in {f["code"] for f in full.json["findings"]}, str(full)
    r = cluster.kubectl_dra("explain", "pod", "pod-g", "-n", sc.ns, "-o", "json", kubeconfig=kc)
    codes = {f["code"] for f in r.json["findings"]}
    assert r.code == 1 and {"DRA101", "DRA103", "DRA006"} <= codes and "DRA002" not in codes, str(r)
    ok = cluster.kubectl_dra("explain", "pod", "pod-r", "-n", sc.ns, "-o", "json", kubeconfig=kc)
    assert ok.code == 0 and "DRA103" not in {f["code"] for f in ok.json["findings"]}, str(ok)
    assert ("list", "devicetaintrules", 403) in _verbs_of(cluster, user)
