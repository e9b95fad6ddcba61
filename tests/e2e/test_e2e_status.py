"""kubectl dra status on the real control plane: the scheduler places the pods, the scan must then name the ones it
could not place (and only those), and say what it could not see when RBAC hides a namespace."""

from __future__ import annotations

import pytest
from builders import device, request
from dra_objects import RES, claim, pod
from e2e_helpers import wait_for

pytestmark = pytest.mark.e2e


def test_status_of_a_deployment_where_only_some_replicas_fit(scenario):
    """Three replicas, two devices: the scheduler binds two pods and reports the third; the scan shows the same
    split, blocked first, every row owned by the Deployment (found through its ReplicaSet's name)."""
    sc = scenario("st3")
    sc.device_class()
    sc.slice([device("dev-0"), device("dev-1")])
    sc.gpu_template()
    sc.deployment("st3", 3)
    wait_for("three pods", lambda: len(sc.cluster.pods(sc.ns, "app=st3")) == 3, 90)
    bound = wait_for(
        "two pods bound",
        lambda: (
            (b := [p["metadata"]["name"] for p in sc.cluster.pods(sc.ns, "app=st3") if p["spec"].get("nodeName")])
            and len(b) == 2
            and b
        ),
        90,
    )
    loser = next(p["metadata"]["name"] for p in sc.cluster.pods(sc.ns, "app=st3") if p["metadata"]["name"] not in bound)
    sc.cluster.wait_unschedulable(sc.ns, loser, "cannot allocate all claims", timeout=90)
    # A pod without DRA in the same namespace is not a row.
    sc.api.post(
        f"/api/v1/namespaces/{sc.ns}/pods",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "no-dra"},
            "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]},
        },
    )
    r = sc.cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json")
    assert r.code == 1, str(r)
    doc = r.json
    assert doc["kind"] == "Status" and doc["summary"]["blocked"] == 1 and doc["summary"]["ok"] == 2, str(r)
    assert doc["summary"]["podsWithoutDRA"] == 1, str(r)
    rows = doc["items"]
    assert [x["pod"] for x in rows][0] == loser and rows[0]["state"] == "Blocked", str(r)
    assert rows[0]["missing"] == "device" and "DRA404" in rows[0]["codes"], str(r)
    assert {x["pod"] for x in rows[1:]} == set(bound) and {x["state"] for x in rows[1:]} == {"OK"}, str(r)
    assert {x["owner"] for x in rows} == {"Deployment/st3"}, str(r)
    # The text form, one line per pod; -l narrows it (and exit 0 once no selected pod is blocked).
    text = sc.cluster.kubectl_dra("status", "-n", sc.ns)
    assert text.code == 1 and text.stdout.splitlines()[0].split()[:4] == ["POD", "OWNER", "PHASE", "STATE"], str(text)
    assert text.stdout.splitlines()[1].startswith(loser), str(text)
    one = sc.cluster.kubectl_dra("status", "-n", sc.ns, "-l", "app=nothing")
    assert one.code == 0 and one.stdout == "" and "No pods matching 'app=nothing' use DRA" in one.stderr, str(one)


def test_status_across_namespaces_as_a_user_who_may_list_pods_in_one(cluster, scenario, tmp_path):
    """-A as a ServiceAccount that may read DRA objects cluster-wide but list pods only in its own namespace: the
    scan shows that namespace's pods, names the namespaces it could not see, and exits 2 (it cannot say "nothing
    is blocked" about pods it did not see), although the pod it did see is fine."""
    sc = scenario("sta")
    sc.device_class()
    sc.slice([device("dev-0")])
    sc.create(claim("c-ok", [request("gpu", sc.cls)]))
    sc.create(pod("seen", {"gpu": "c-ok"}))
    sc.cluster.wait_bound(sc.ns, "seen")
    other = cluster.create_namespace("sta-other")
    try:
        cluster.api.post(
            f"{RES}/namespaces/{other}/resourceclaims",
            claim("c-x", [request("gpu", sc.cls, selectors=['device.driver == "nobody.example.com"'])]),
        )
        cluster.api.post(f"/api/v1/namespaces/{other}/pods", pod("hidden", {"gpu": "c-x"}))
        cluster.wait_unschedulable(other, "hidden", "cannot allocate all claims", timeout=60)
        # As the cluster admin, -A sees both namespaces and the blocked pod.
        admin = cluster.kubectl_dra("status", "-A", "-o", "json")
        rows = {(x["namespace"], x["pod"]): x for x in admin.json["items"]}
        assert rows[(other, "hidden")]["state"] == "Blocked" and rows[(sc.ns, "seen")]["state"] == "OK", str(admin)
        assert admin.code == 1, str(admin)
        kc = _namespace_reader(cluster, sc.ns, tmp_path)
        r = cluster.kubectl_dra("status", "-A", "-o", "json", kubeconfig=kc)
        assert r.code == 2, str(r)
        assert [(x["namespace"], x["pod"], x["state"]) for x in r.json["items"]] == [(sc.ns, "seen", "OK")], str(r)
        assert any(other in u for u in r.json["unseen"]), str(r)
        assert "warning: could not see pods in " in r.stderr and r.stderr.rstrip().splitlines()[-1].startswith(
            "error: the scan is incomplete: could not see pods in"
        ), str(r)
        # The same user's own namespace alone is fully visible: a decided answer.
        own = cluster.kubectl_dra("status", "-n", sc.ns, kubeconfig=kc)
        assert own.code == 0 and "seen" in own.stdout, str(own)
        assert own.stderr == "1 pod uses DRA: 0 blocked, 0 undetermined, 1 ok\n", str(own)
        # A pending pod's answer depends on the pending pods of every namespace, which this user cannot list: said.
        sc.slice([device("dev-1")], node="node-02")  # a free device: alone, the pod would get it
        sc.create(claim("c-wait", [request("gpu", sc.cls)]))
        sc.create(pod("waiting", {"gpu": "c-wait"}, gated=True))
        queued = cluster.kubectl_dra("status", "-n", sc.ns, kubeconfig=kc)
        assert queued.stderr.startswith("warning: cannot list the pending pods of every namespace"), str(queued)
    finally:
        cluster.delete_namespace(other)
        for path in (
            f"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{sc.ns}-scan",
            f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{sc.ns}-scan",
        ):
            cluster.api.delete(path)


def _namespace_reader(cluster, ns: str, tmp_path) -> str:
    """A ServiceAccount with read access to DRA objects, nodes, events and namespaces cluster-wide, and to pods only
    in its own namespace (a Role)."""
    read = ["get", "list", "watch"]
    cluster.api.post(
        f"/api/v1/namespaces/{ns}/serviceaccounts",
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "scan"}},
    )
    cluster.api.post(
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": f"{ns}-scan"},
            "rules": [
                {"apiGroups": [""], "resources": ["nodes", "events", "namespaces"], "verbs": read},
                {"apiGroups": ["resource.k8s.io"], "resources": ["*"], "verbs": read},
            ],
        },
    )
    subject = [{"kind": "ServiceAccount", "name": "scan", "namespace": ns}]
    cluster.api.post(
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": f"{ns}-scan"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": f"{ns}-scan"},
            "subjects": subject,
        },
    )
    cluster.api.post(
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "pods"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": read}],
        },
    )
    cluster.api.post(
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "pods"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pods"},
            "subjects": subject,
        },
    )
    kc = cluster.token_kubeconfig(ns, "scan", tmp_path / "scan.kubeconfig")
    user = f"system:serviceaccount:{ns}:scan"
    wait_for(
        f"RBAC for {user}",
        lambda: (
            cluster.kubectl("auth", "can-i", "list", "pods", "-n", ns, f"--as={user}", check=False).stdout.strip()
            == "yes"
        ),
        30,
    )
    return kc


def test_a_job_whose_claim_template_is_missing(scenario):
    """A Job whose pod template names a ResourceClaimTemplate that does not exist: the job controller creates the
    pod, the resourceclaim controller cannot create its claim (FailedResourceClaimCreation), the scheduler never
    sees a claim. explain job/NAME, the scan and the pod agree: blocked on the claim (DRA202)."""
    sc = scenario("job")
    sc.device_class()
    sc.slice([device("dev-0")])
    template = pod("x", templates={"gpu": "gpu-nope"})
    template["metadata"] = {"labels": {"app": "job-t"}}
    template["spec"]["restartPolicy"] = "Never"
    sc.api.post(
        f"/apis/batch/v1/namespaces/{sc.ns}/jobs",
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "train"},
            "spec": {"backoffLimit": 0, "template": template},
        },
    )
    (p,) = wait_for("the job's pod", lambda: sc.cluster.pods(sc.ns, "app=job-t"), 60)
    sc.cluster.wait_event(sc.ns, p["metadata"]["name"], "FailedResourceClaimCreation", "gpu-nope", timeout=60)
    r = sc.cluster.kubectl_dra("explain", "job/train", "-n", sc.ns, "-o", "json")
    assert r.code == 1, str(r)
    (item,) = r.json["items"]
    assert item["verdict"]["missing"] == "claim" and "DRA202" in [f["code"] for f in item["findings"]], str(r)
    s = sc.cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json")
    assert [(x["pod"], x["missing"], x["owner"]) for x in s.json["items"]] == [
        (p["metadata"]["name"], "claim", "Job/train")
    ], str(s)


def test_a_job_whose_pods_cannot_be_created_is_explained_from_its_template(scenario):
    """A namespace quota of zero pods: the job controller cannot create the pod (FailedCreate on the Job).
    explain job/NAME names that event (DRA208, exit 1) and dry-runs the pod template (its claim would get dev-0);
    suspended, the same Job wants no pods and nothing blocks (exit 0)."""
    sc = scenario("jobq")
    sc.device_class()
    sc.slice([device("dev-0")])
    sc.gpu_template("gpu")
    sc.api.post(
        f"/api/v1/namespaces/{sc.ns}/resourcequotas",
        {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "no-pods"}, "spec": {"hard": {"pods": "0"}}},
    )
    wait_for(
        "the quota to be counted",
        lambda: (sc.api.get(f"/api/v1/namespaces/{sc.ns}/resourcequotas/no-pods").get("status") or {}).get("hard"),
        60,
    )
    template = pod("x", templates={"gpu": "gpu"})
    template["metadata"] = {"labels": {"app": "job-q"}}
    template["spec"]["restartPolicy"] = "Never"
    for name, suspend in (("train", False), ("later", True)):
        sc.api.post(
            f"/apis/batch/v1/namespaces/{sc.ns}/jobs",
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": name},
                "spec": {"suspend": suspend, "backoffLimit": 0, "template": template},
            },
        )
    wait_for(
        "FailedCreate on the Job",
        lambda: [
            e
            for e in sc.cluster.events(sc.ns)
            if e.get("reason") == "FailedCreate" and (e.get("involvedObject") or {}).get("name") == "train"
        ],
        60,
    )
    r = sc.cluster.kubectl_dra("explain", "job/train", "-n", sc.ns, "-o", "json")
    assert r.code == 1, str(r)
    codes = [f["code"] for f in r.json["findings"]]
    assert codes[0] == "DRA208" and "exceeded quota: no-pods" in r.json["findings"][0]["message"], str(r)
    assert "DRA002" in codes and r.json["verdict"]["blocked"] is True, str(r)
    assert r.json["workload"] == {
        "kind": "Job",
        "name": "train",
        "namespace": sc.ns,
        "wantedPods": 1,
        "pods": 0,
        "templatePod": "train-(template)",
    }, str(r)
    idle = sc.cluster.kubectl_dra("explain", "job/later", "-n", sc.ns, "-o", "json")
    assert idle.code == 0 and idle.json["verdict"]["summary"] == "Job/later is suspended: it wants no pods", str(idle)


def test_lint_uses_the_cluster_as_its_reference(scenario, tmp_path):
    """kubectl dra lint --kubeconfig: the attribute names the cluster's devices publish and the classes that exist
    are the reference; a typo gets a suggestion, an unknown class is an error (exit 1)."""
    sc = scenario("lint")
    sc.device_class()
    sc.slice([device("dev-0", memory="16Gi")])
    f = tmp_path / "claim.yaml"
    f.write_text(
        "apiVersion: resource.k8s.io/v1\n"
        "kind: ResourceClaim\n"
        "metadata:\n  name: c\n"
        "spec:\n  devices:\n    requests:\n    - name: gpu\n      exactly:\n"
        f"        deviceClassName: {sc.cls}-missing\n"
        "        selectors:\n        - cel:\n"
        f'            expression: device.capacity["{sc.driver}"].memmory.compareTo(quantity("8Gi")) >= 0\n'
    )
    r = sc.cluster.kubectl_dra("lint", "-f", str(f), "-o", "json")
    assert r.code == 1, str(r)
    codes = {x["code"]: x for x in r.json["findings"]}
    assert r.json["reference"] == "cluster" and set(codes) == {"DRA703", "DRA708"}, str(r)
    assert codes["DRA703"]["evidence"]["suggestion"] == "memory" and codes["DRA703"]["line"] == 13, str(r)
