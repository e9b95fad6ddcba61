"""The e2e scenarios' objects on a real cluster: tests/builders.py's, as a server takes them (no namespace or uid:
the request places them), pods that the pause image runs, and the Scenario that creates and deletes them."""

from __future__ import annotations

import re

import builders
import pytest
from builders import request
from e2e_helpers import ApiError, wait_for

RES = "/apis/resource.k8s.io/v1"


def claim(name: str, requests: list[dict], constraints: list[dict] | None = None) -> dict:
    """A ResourceClaim to create in the test's namespace (the request names the namespace, the server the uid)."""
    return builders.claim(name, requests, constraints, ns=None)


PAUSE = "registry.k8s.io/pause:3.10"


def pod(
    name: str,
    claims: dict[str, str] | None = None,
    templates: dict[str, str] | None = None,
    gated: bool = False,
    node_selector: dict | None = None,
) -> dict:
    """A pod for a real cluster: the pause image, a little cpu and memory, deleted at once.
    claims: pod claim name -> ResourceClaim name; templates: pod claim name -> template name."""
    refs = [(k, "claim", v) for k, v in (claims or {}).items()]
    refs += [(k, "template", v) for k, v in (templates or {}).items()]
    app = {
        "name": "app",
        "image": PAUSE,
        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}, "claims": [{"name": k} for k, _, _ in refs]},
    }
    spec: dict = {"terminationGracePeriodSeconds": 0}
    if gated:
        spec["schedulingGates"] = [{"name": "kubectl-dra.e2e/predict-first"}]
    if node_selector:
        spec["nodeSelector"] = node_selector
    return builders.pod(name, refs, ns=None, containers=[app], phase=None, **spec)


def hog(sc, cpu: str) -> str:
    """A pod bound to node-01 that requests cpu (and stays Pending: no kubelet runs it)."""
    name = "etl-hog"
    etl = {"name": "etl", "image": PAUSE, "resources": {"requests": {"cpu": cpu}}}
    spec = {"terminationGracePeriodSeconds": 0}
    obj = builders.pod(name, (), "node-01", ns=None, containers=[etl], phase=None, **spec)
    del obj["spec"]["resourceClaims"]
    sc.api.post(f"/api/v1/namespaces/{sc.ns}/pods", obj)
    return name


def release(sc, name: str) -> None:
    """The hog goes before the next test: a bound pod being deleted still holds its cpu in the scheduler's cache."""
    path = f"/api/v1/namespaces/{sc.ns}/pods/{name}"
    sc.api.delete(path + "?gracePeriodSeconds=0")
    wait_for(f"{path} to be deleted", lambda: sc.api.get(path, ok404=True) is None, 60, 0.5)


class Scenario:
    """One scenario's driver, DeviceClass and ResourceSlices; cluster-scoped objects are deleted
    when the test ends (namespaced ones go with the test's namespace)."""

    def __init__(self, cluster, ns: str, name: str):
        self.cluster, self.api, self.ns, self.name = cluster, cluster.api, ns, name
        self.driver = f"{name}.example.com"
        self.cls = f"{name}-class"
        self._cluster_objs: list[str] = []

    def device_class(self) -> None:
        self._create_cluster(f"{RES}/deviceclasses", builders.dclass(self.cls, f'device.driver == "{self.driver}"'))

    def slice(
        self,
        devices: list[dict],
        node: str = "node-01",
        suffix: str = "",
        pool: str | None = None,
        slice_count: int = 1,
        shared_counters: list[dict] | None = None,
    ) -> None:
        more = {"sharedCounters": shared_counters} if shared_counters else {}
        obj = builders.rslice(f"{self.name}-{node}{suffix}", devices, node, pool, self.driver, slice_count, **more)
        if not devices:
            del obj["spec"]["devices"]
        self._create_cluster(f"{RES}/resourceslices", obj)

    def _create_cluster(self, collection: str, obj: dict) -> None:
        path = f"{collection}/{obj['metadata']['name']}"
        self.api.delete(path)
        wait_for(f"{path} to be deleted", lambda: self.api.get(path, ok404=True) is None, 30, 0.2)
        self.api.post(collection, obj)
        self._cluster_objs.append(path)

    def create(self, obj: dict) -> dict:
        kind = obj["kind"]
        coll = {
            "ResourceClaim": f"{RES}/namespaces/{self.ns}/resourceclaims",
            "ResourceClaimTemplate": f"{RES}/namespaces/{self.ns}/resourceclaimtemplates",
            "Pod": f"/api/v1/namespaces/{self.ns}/pods",
        }[kind]
        return self.api.post(coll, obj)

    def gpu_template(self, name: str = "gpu") -> None:
        """A ResourceClaimTemplate of one device of this scenario's class."""
        template = builders.template(name, [request("gpu", self.cls)], ns=None)
        self.api.post(f"{RES}/namespaces/{self.ns}/resourceclaimtemplates", template)

    def deployment(self, name: str, replicas: int, template: str = "gpu") -> None:
        """A Deployment whose pods (label app=NAME) each claim one device through the template."""
        spec = pod("x", templates={"gpu": template})
        spec["metadata"] = {"labels": {"app": name}}
        self.api.post(
            f"/apis/apps/v1/namespaces/{self.ns}/deployments",
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": name},
                "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": spec},
            },
        )

    def priority_class(self, name: str, value: int) -> None:
        self._create_cluster(
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value},
        )

    def ungate(self, pod_name: str) -> None:
        self.api.patch(
            f"/api/v1/namespaces/{self.ns}/pods/{pod_name}",
            [{"op": "remove", "path": "/spec/schedulingGates"}],
            kind="json",
        )

    def cleanup(self) -> None:
        for path in reversed(self._cluster_objs):
            try:
                self.api.delete(path)
            except ApiError:
                pass


def _scenarios(cluster, ns):
    made = []

    def make(name: str) -> Scenario:
        s = Scenario(cluster, ns, name)
        made.append(s)
        return s

    return make, made


@pytest.fixture
def scenario(cluster, namespace):
    """scenario(name) -> Scenario on the default-gates cluster, in this test's namespace."""
    make, made = _scenarios(cluster, namespace)
    yield make
    for s in made:
        s.cleanup()


def _module_cluster_scenarios(c, request):
    ns = c.create_namespace(re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())[:40].strip("-"))
    make, made = _scenarios(c, ns)
    yield make
    for s in made:
        s.cleanup()
    c.delete_namespace(ns)


@pytest.fixture
def gates_scenario(gates_cluster, request):
    """The same on the cluster with the DRA beta/alpha gates on."""
    yield from _module_cluster_scenarios(gates_cluster, request)


@pytest.fixture
def gang_scenario(gang_cluster, request):
    """The same on the cluster with gang scheduling on (GenericWorkload)."""
    yield from _module_cluster_scenarios(gang_cluster, request)


@pytest.fixture
def alpha_scenario(alpha_cluster, request):
    """The same on the cluster with the allocator's alpha gates on (conftest.py ALPHA_GATES)."""
    yield from _module_cluster_scenarios(alpha_cluster, request)


@pytest.fixture
def nodealloc_scenario(nodealloc_cluster, request):
    """The same on the cluster with DRANodeAllocatableResources on."""
    yield from _module_cluster_scenarios(nodealloc_cluster, request)


@pytest.fixture
def scenario_1_38(cluster_1_38, request):
    """The same on the v1.38.0-beta.0 control plane."""
    yield from _module_cluster_scenarios(cluster_1_38, request)


# --- kubectl-dra verdicts ----------------------------------------------------------------------


def selected_devices(match_doc: dict) -> list[tuple[str, str, str]]:
    return sorted(
        (d["driver"], d["pool"], d["device"])
        for q in match_doc["requests"]
        for d in q["devices"]
        if d["outcome"] == "selected"
    )


def device_outcomes(match_doc: dict) -> dict[str, str]:
    return {d["device"]: d["outcome"] for q in match_doc["requests"] for d in q["devices"]}


def explained_allocation(explain_doc: dict, claim_name: str) -> list[tuple[str, str, str]]:
    c = next((c for c in explain_doc["claims"] if c["name"] == claim_name), None)
    assert c is not None, f"claim {claim_name} not in kubectl-dra's claims: {explain_doc['claims']}"
    if not c.get("allocation"):
        return []
    return sorted((r["driver"], r["pool"], r["device"]) for r in c["allocation"]["results"])


def predict_and_schedule(sc, pod_name: str, claim_name: str):
    """Ask kubectl-dra first (pod gated), then let the real scheduler act.

    Returns (bound pod, real allocation, kubectl-dra match result)."""
    prediction = sc.cluster.kubectl_dra("match", "claim", claim_name, "-n", sc.ns, "-o", "json")
    sc.ungate(pod_name)
    bound = sc.cluster.wait_bound(sc.ns, pod_name, timeout=60)
    real = sc.cluster.allocated_devices(sc.ns, claim_name)
    return bound, real, prediction


def assert_agrees_bound(sc, pod_name: str, claim_name: str, real, prediction) -> dict:
    assert prediction.code == 0, str(prediction)
    assert prediction.json["satisfiable"] is True, str(prediction)
    assert selected_devices(prediction.json) == real, f"real allocation {real}\n{prediction}"
    r = sc.cluster.kubectl_dra("explain", "pod", pod_name, "-n", sc.ns, "-o", "json")
    assert r.code == 0, str(r)
    assert r.json["verdict"]["blocked"] is False, str(r)
    assert explained_allocation(r.json, claim_name) == real, str(r)
    return r.json


def assert_agrees_blocked(
    sc, pod_name: str, claim_name: str | None = None, missing=None, match_unsatisfiable: bool = True
) -> dict:
    r = sc.cluster.kubectl_dra("explain", "pod", pod_name, "-n", sc.ns, "-o", "json")
    assert r.code == 1, str(r)
    doc = r.json
    assert doc["verdict"]["blocked"] is True, str(r)
    if missing is not None:
        assert doc["verdict"]["missing"] == missing, str(r)
    if claim_name and match_unsatisfiable:
        m = sc.cluster.kubectl_dra("match", "claim", claim_name, "-n", sc.ns, "-o", "json")
        assert m.code == 1, str(m)
        assert m.json["satisfiable"] is False, str(m)
        doc["_match"] = m.json
    return doc
