"""From raw API objects to the Snapshot: bucket by kind, check the shapes analysis walks, normalise to v1.
No I/O: gather/files.py and gather/live.py both end here."""

from __future__ import annotations

from kubectl_dra.errors import DraError
from kubectl_dra.model.kinds import WORKLOAD_KINDS
from kubectl_dra.model.normalize import KNOWN_VERSIONS, RESOURCE_GROUP, normalize_event, to_v1
from kubectl_dra.model.snapshot import Snapshot

_BUCKETS = {
    "Pod": "pods",
    "ResourceClaim": "claims",
    "ResourceClaimTemplate": "templates",
    "DeviceClass": "classes",
    "ResourceSlice": "slices",
    "Node": "nodes",
    "Event": "events",
    "DeviceTaintRule": "taint_rules",
    **dict.fromkeys(WORKLOAD_KINDS, "workloads"),
    "ResourceQuota": "quotas",
    "ResourcePoolStatusRequest": "pool_status_requests",
    "PodGroup": "podgroups",
}


def snapshot_from_objects(
    objs, namespace: str, source: str = "files", skip: frozenset = frozenset(), checked: dict | None = None
) -> Snapshot:
    """skip: kinds the command never reads (devices: Event), left out as if absent. checked: the objects that
    check_shapes has passed already (id() -> object); those checked here are added to it (a watch passes the
    objects of its last snapshot that it still holds, so that an update checks only what changed)."""
    if checked is None:
        checked = {}
    buckets: dict[str, list] = {v: [] for v in _BUCKETS.values()}
    seen: dict = {}
    for obj in objs:
        kind = obj.get("kind")
        bucket = _BUCKETS.get(kind)
        if bucket is None or kind in skip:
            continue
        if checked.get(id(obj)) is not obj:
            _check_shape(obj)
            checked[id(obj)] = obj
        obj = to_v1(obj)
        meta = obj.setdefault("metadata", {})
        cluster_scoped = ("DeviceClass", "ResourceSlice", "Node", "DeviceTaintRule", "ResourcePoolStatusRequest")
        if kind not in cluster_scoped and not meta.get("namespace"):
            meta = obj["metadata"] = dict(meta, namespace=namespace)
        key = (kind, meta.get("namespace") or "", meta.get("name"))
        if key in seen and kind != "Event":
            if _same_version(seen[key], obj):  # two lists that both hold it (pods of -n and of -A): once
                continue
            raise DraError(
                f"{kind} {'/'.join(k for k in key[1:] if k)} appears twice in the input, in two different versions "
                "(dumps taken at different times?)"
            )
        seen[key] = obj
        if kind == "Event":
            buckets[bucket].append(normalize_event(obj))
        else:
            buckets[bucket].append(obj)
    return Snapshot(**{k: tuple(v) for k, v in buckets.items()}, source=source)


def _same_version(a: dict, b: dict) -> bool:
    """One object read twice: the same uid and resourceVersion, or equal (objects written by hand have neither)."""
    ma, mb = a.get("metadata") or {}, b.get("metadata") or {}
    if ma.get("uid") and ma.get("resourceVersion"):
        return (ma.get("uid"), ma.get("resourceVersion")) == (mb.get("uid"), mb.get("resourceVersion"))
    return a == b


def check_shapes(objs, checked: dict) -> None:
    """The shape check of snapshot_from_objects, ahead of it (a live gather runs it on each page as it arrives,
    while the page is fresh in the CPU's caches): each object that passes goes into checked, by id() (the entry
    holds the object, so its id() cannot be reused). One that fails is left out, for snapshot_from_objects to
    report in its own order."""
    for obj in objs:
        try:
            _check_shape(obj)
        except Exception:
            continue
        checked[id(obj)] = obj


_DICT_FIELDS = {"spec", "status", "metadata"}

# The resource.k8s.io kinds kubectl-dra reads. Their apiVersion must be one whose shape normalize.to_v1 knows (v1beta2
# is v1's; v1beta1, and v1alpha3 as 1.32 served it, put a device's fields under `basic` and a request's flat). Any
# other is refused, not read as v1: an unknown version may have moved or renamed a field analysis reads, and an
# object misread (or left out with a warning) gives a confident wrong answer, such as a held device seen as free.
RESOURCE_KINDS = frozenset(
    {
        "ResourceClaim",
        "ResourceClaimTemplate",
        "DeviceClass",
        "ResourceSlice",
        "DeviceTaintRule",
        "ResourcePoolStatusRequest",
    }
)


def _check_shape(obj: dict) -> None:
    """Reject objects whose structure is wrong where analysis walks it, with a one-line error."""
    name = f"{obj.get('kind')} {obj['metadata'].get('name')}"
    kind = obj.get("kind")
    if kind in RESOURCE_KINDS:
        _check_version(obj, kind)
    for f in _DICT_FIELDS:
        if f in obj and obj[f] is not None and not isinstance(obj[f], dict):
            raise DraError(f"{name}: .{f} must be a mapping")
    spec = obj.get("spec") or {}
    if kind == "ResourceSlice":
        _expect_list(spec, "devices", name)
        devices = spec.get("devices") or []
        for i, d in enumerate(() if _plain_devices(devices) else devices):
            if not isinstance(d, dict) or not isinstance(d.get("name", ""), str):
                raise DraError(f"{name}: .spec.devices[{i}] must be a mapping with a name")
            for m in ("attributes", "capacity", "basic"):
                if m in d and d[m] is not None and not isinstance(d[m], dict):
                    raise DraError(f"{name}: .spec.devices[{i}].{m} must be a mapping")
            for aname, a in (d.get("attributes") or {}).items():
                if not isinstance(a, dict):
                    raise DraError(f"{name}: device {d.get('name')} attribute {aname} must be a mapping")
            for cname, c in (d.get("capacity") or {}).items():
                if not isinstance(c, dict):
                    raise DraError(f"{name}: device {d.get('name')} capacity {cname} must be a mapping")
        if not isinstance(spec.get("driver", ""), str):
            raise DraError(f"{name}: .spec.driver must be a string")
        if "pool" in spec and not isinstance(spec["pool"], dict):
            raise DraError(f"{name}: .spec.pool must be a mapping")
    elif kind in ("ResourceClaim", "ResourceClaimTemplate"):
        inner = spec.get("spec") if kind == "ResourceClaimTemplate" else spec
        if inner is not None and not isinstance(inner, dict):
            raise DraError(f"{name}: .spec.spec must be a mapping")
        devices = (inner or {}).get("devices") or {}
        if not isinstance(devices, dict):
            raise DraError(f"{name}: .spec.devices must be a mapping")
        _expect_list(devices, "requests", name)
        for i, r in enumerate(devices.get("requests") or []):
            if not isinstance(r, dict):
                raise DraError(f"{name}: request #{i} must be a mapping")
            for sel_holder in [r.get("exactly") or r] + list(r.get("firstAvailable") or []):
                if not isinstance(sel_holder, dict):
                    raise DraError(f"{name}: request {r.get('name')} has a malformed subrequest")
                for s in sel_holder.get("selectors") or []:
                    expr = ((s or {}).get("cel") or {}).get("expression") if isinstance(s, dict) else None
                    if expr is not None and not isinstance(expr, str):
                        raise DraError(f"{name}: request {r.get('name')}: CEL expression must be a string")
    elif kind == "DeviceClass":
        _expect_list(spec, "selectors", name)
    elif kind == "Pod":
        _expect_list(spec, "resourceClaims", name)
        for f in ("schedulingGroup", "workloadRef"):
            if spec.get(f) is not None and not isinstance(spec[f], dict):
                raise DraError(f"{name}: .spec.{f} must be a mapping")
    elif kind == "PodGroup":
        policy = spec.get("schedulingPolicy")
        if policy is not None and not isinstance(policy, dict):
            raise DraError(f"{name}: .spec.schedulingPolicy must be a mapping")
        gang = (policy or {}).get("gang")
        if gang is not None and not isinstance(gang, dict):
            raise DraError(f"{name}: .spec.schedulingPolicy.gang must be a mapping")
        count = (gang or {}).get("minCount")
        if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count < 0):
            raise DraError(f"{name}: .spec.schedulingPolicy.gang.minCount must be a non-negative integer")


def _check_version(obj: dict, kind: str) -> None:
    """A resource.k8s.io object of a version normalize.to_v1 knows, else a one-line error naming it."""
    api = obj.get("apiVersion")
    group, _, version = api.rpartition("/") if isinstance(api, str) else ("", "", "")
    if group == RESOURCE_GROUP and version in KNOWN_VERSIONS:
        return
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    ns = meta.get("namespace")
    who = f"{kind} {ns + '/' if isinstance(ns, str) and ns else ''}{meta.get('name')}"
    known = f"{RESOURCE_GROUP}/{KNOWN_VERSIONS[0]}, " + ", ".join(KNOWN_VERSIONS[1:])
    if not api:
        raise DraError(f"{who} has no apiVersion: kubectl-dra reads {known} (write the one it was made with)")
    raise DraError(f"{who}: apiVersion {api!s} is not one kubectl-dra reads ({known}; kubectl get -o yaml writes v1)")


def _plain_devices(devices: list) -> bool:
    """True when every device, its attributes, capacities and basic are plain dicts and its name a string (what
    JSON and YAML decoding give): the per-field walk of _check_shape would pass. Exact types, no isinstance calls;
    anything else (a subclass, a wrong type) takes that walk, which decides."""
    for d in devices:
        if type(d) is not dict or type(d.get("name", "")) is not str:
            return False
        for m in ("attributes", "capacity"):  # maps of mappings
            x = d.get(m)
            if x is not None:
                if type(x) is not dict:
                    return False
                for v in x.values():
                    if type(v) is not dict:
                        return False
        b = d.get("basic")
        if b is not None and type(b) is not dict:
            return False
    return True


def _expect_list(d: dict, key: str, name: str) -> None:
    if key in d and d[key] is not None and not isinstance(d[key], list):
        raise DraError(f"{name}: .{key} must be a list")
