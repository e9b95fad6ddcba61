"""Kubernetes objects as plain dicts (resource.k8s.io/v1 and core v1), the one set of builders every tier of tests
uses: unit tests on literals, the golden scenarios' inputs (tests/scenarios/make_inputs.py writes them from these,
so what a builder writes by default, key order included, is what the committed input.yaml files hold) and the e2e
tests (which send them to a real API server: there `ns=None` leaves the namespace, and the uid, to the request).

Each builder writes the least that makes a valid object; keyword arguments add the rest. Names of the form
uid-KIND-NAME are the uids the golden inputs use, so that owners and reservations line up without bookkeeping."""

from __future__ import annotations

NS = "default"
DRIVER = "gpu.example.com"
V1 = "resource.k8s.io/v1"


def meta(name: str, ns: str | None = NS, uid: str | bool = True, kind: str = "", **more) -> dict:
    """metadata: name, then namespace and uid unless ns is None (uid=True: uid-KIND-NAME; False: none)."""
    m: dict = {"name": name}
    if ns is not None:
        m["namespace"] = ns
        if uid is True:
            m["uid"] = f"uid-{kind}-{name}"
        elif uid:
            m["uid"] = uid
    m.update(more)
    return m


def node(
    name: str, allocatable: dict | None = None, hostname: bool = True, taints: list | None = None, **labels
) -> dict:
    """A Node labelled kubernetes.io/hostname=NAME (unless hostname=False) and LABELS; allocatable: its
    status.allocatable (a dict; {} for the usual 8 cpu, 32Gi, 110 pods); taints: spec.taints."""
    n = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {**({"kubernetes.io/hostname": name} if hostname else {}), **labels}},
        "spec": {"taints": taints} if taints is not None else {},
    }
    if allocatable is not None:
        n["status"] = {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110", **allocatable}}
    return n


def attributes(attrs: dict) -> dict:
    """{name: python value} -> typed device attributes (bool, int, else string)."""
    return {
        k: {"bool": v} if isinstance(v, bool) else {"int": v} if isinstance(v, int) else {"string": v}
        for k, v in attrs.items()
    }


def device(name: str, *, memory: str | None = None, attrs: dict | None = None, **extra) -> dict:
    """A device, with a memory capacity when given, typed attributes from ATTRS, and any other field as is
    (keyword-only: an e2e call of old, device(NAME, DRIVER), fails instead of reading the driver as memory)."""
    d: dict = {"name": name}
    if memory:
        d["capacity"] = {"memory": {"value": memory}}
    if attrs:
        d["attributes"] = attributes(attrs)
    d.update(extra)
    return d


def rslice(name, devices, node_name=None, pool=None, driver=DRIVER, count=1, gen=1, **spec) -> dict:
    """A ResourceSlice: pool POOL (default the node's name, else the slice's) of COUNT slices; SPEC as is."""
    s = {
        "driver": driver,
        "pool": {"name": pool or node_name or name, "generation": gen, "resourceSliceCount": count},
        "devices": devices,
    }
    if node_name:
        s["nodeName"] = node_name
    s.update(spec)
    return {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": name}, "spec": s}


def counter_slice(set_name, memory="40Gi", node_name="node-01", count=2) -> dict:
    """The slice of a node's pool that publishes only a counter set (1.35+ layout: devices in another slice)."""
    return rslice(
        f"{node_name}-counters",
        [],
        node_name,
        pool=node_name,
        count=count,
        sharedCounters=[{"name": set_name, "counters": {"memory": {"value": memory}}}],
    )


def dclass(name="gpu", expr=f'device.driver == "{DRIVER}"', **spec) -> dict:
    """A DeviceClass selecting by EXPR (CEL text, or a list of them; none when empty); SPEC as is."""
    exprs = [expr] if isinstance(expr, str) else list(expr)
    return {
        "apiVersion": V1,
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": e}} for e in exprs if e], **spec},
    }


def request(name="gpu", cls="gpu", count=1, selectors=(), mode="ExactCount", **extra) -> dict:
    """A v1 request of COUNT devices of class CLS (count only in ExactCount mode), SELECTORS (CEL text, or as is),
    EXTRA as is."""
    e = {"deviceClassName": cls, "allocationMode": mode}
    if mode == "ExactCount":
        e["count"] = count
    if selectors:
        e["selectors"] = [{"cel": {"expression": s}} if isinstance(s, str) else s for s in selectors]
    e.update(extra)
    return {"name": name, "exactly": e}


def allocation(results, node=None, driver=DRIVER) -> dict:
    """status.allocation: RESULTS as (request, pool, device), on NODE (a node selector) when given."""
    alloc: dict = {
        "devices": {"results": [{"request": r, "driver": driver, "pool": p, "device": d} for r, p, d in results]}
    }
    if node:
        alloc["nodeSelector"] = {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]
        }
    return alloc


def claim(name, requests, constraints=None, owner_pod=None, results=None, reserved=None, node=None, ns=NS,
          uid=True, **meta_) -> dict:  # fmt: skip
    """A ResourceClaim; owner_pod: generated for that pod's claim "gpu"; results (request, pool, device): allocated,
    on NODE; reserved: reserved for that pod."""
    c = {
        "apiVersion": V1,
        "kind": "ResourceClaim",
        "metadata": meta(name, ns, uid, "claim", **meta_),
        "spec": {"devices": {"requests": requests}},
    }
    if constraints:
        c["spec"]["devices"]["constraints"] = constraints
    if owner_pod:
        c["metadata"]["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": owner_pod, "uid": f"uid-pod-{owner_pod}", "controller": True}
        ]
        c["metadata"]["annotations"] = {"resource.kubernetes.io/pod-claim-name": "gpu"}
    if results is not None:
        c["status"] = {"allocation": allocation(results, node)}
        if reserved:
            c["status"]["reservedFor"] = [{"resource": "pods", "name": reserved, "uid": f"uid-pod-{reserved}"}]
    return c


def template(name, requests, ns=NS) -> dict:
    return {
        "apiVersion": V1,
        "kind": "ResourceClaimTemplate",
        "metadata": meta(name, ns, False),
        "spec": {"spec": {"devices": {"requests": requests}}},
    }


APP = {"name": "app", "image": "registry.example/app:1"}


def pod(name, claims=(("gpu", "claim", None),), node_name=None, statuses=None, ns=NS, uid=True, containers=None,
        phase="Pending", labels=None, created=None, **spec) -> dict:  # fmt: skip
    """A Pod; claims: (pod claim name, "claim" or "template", the ResourceClaim's or template's name); statuses:
    {pod claim name: generated claim}; containers: default one app container; phase None: no status."""
    rc = []
    for pcn, kind, ref in claims:
        rc.append({"name": pcn, ("resourceClaimName" if kind == "claim" else "resourceClaimTemplateName"): ref})
    more = {}
    if labels:
        more["labels"] = labels
    if created:
        more["creationTimestamp"] = created
    p = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta(name, ns, uid, "pod", **more),
        "spec": {"resourceClaims": rc, "containers": [dict(APP)] if containers is None else containers, **spec},
    }
    if phase:
        p["status"] = {"phase": phase}
    if node_name:
        p["spec"]["nodeName"] = node_name
    if statuses is not None:
        p.setdefault("status", {})["resourceClaimStatuses"] = [
            {"name": k, "resourceClaimName": v} for k, v in statuses.items()
        ]
    return p


def container(name, cpu=None, memory=None, image="x", restart=None, limits=None, **requests) -> dict:
    """A container requesting CPU and MEMORY where given, and REQUESTS (a__b for a/b, a_b for a.b: example_com__gpu
    is example.com/gpu); restart: its restartPolicy ("Always": a sidecar)."""
    reqs = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    reqs |= {k.replace("__", "/").replace("_", "."): v for k, v in requests.items()}
    c = {"name": name, "image": image, "resources": {"requests": reqs}}
    if limits:
        c["resources"]["limits"] = limits
    if restart:
        c["restartPolicy"] = restart
    return c


def event(pod_name, reason, message, time, type_="Warning", component="default-scheduler", n=1, ns=NS,
          pod_uid=None) -> dict:  # fmt: skip
    """An Event about pod POD_NAME (uid uid-pod-NAME unless given)."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{pod_name}.{n}", "namespace": ns},
        "involvedObject": {"kind": "Pod", "name": pod_name, "namespace": ns, "uid": pod_uid or f"uid-pod-{pod_name}"},
        "type": type_,
        "reason": reason,
        "message": message,
        "source": {"component": component},
        "firstTimestamp": time,
        "lastTimestamp": time,
        "count": 1,
    }
