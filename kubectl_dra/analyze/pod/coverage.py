"""Which fields of the resource.k8s.io/v1 kinds the analysis models, per minor, and the finding (DRA016) for an
object that uses one it does not.

Every field path of the pinned k8s.io/api (as `tests/oracle/v1.3x --fields` prints it, with the template's
`spec.spec` folded onto the claim's `spec`) is in exactly one of MODELLED, IGNORED or UNMODELLED;
tests/fidelity/test_api_coverage.py checks that against the Go types of each minor, so a field a new minor adds
fails the build until it is classified. A field in UNMODELLED that an object actually sets makes the verdicts that
depend on that object undetermined (exit 2) instead of a confident answer that may be wrong."""

from __future__ import annotations

from kubectl_dra.analyze.pod.nodealloc import modelled
from kubectl_dra.findings.model import Finding, make
from kubectl_dra.findings.stages import Stage

C = "ResourceClaim."
S = "ResourceSlice."
D = "DeviceClass."
_REQ = ("spec.devices.requests[].exactly.", "spec.devices.requests[].firstAvailable[].")


def _both(*leaves: str) -> set[str]:
    return {C + r + leaf for r in _REQ for leaf in leaves}


def _node_selector(prefix: str) -> set[str]:
    """core/v1 NodeSelector: nodes.py evaluates every part of it."""
    return {
        f"{prefix}.nodeSelectorTerms[].{m}[].{leaf}"
        for m in ("matchExpressions", "matchFields")
        for leaf in ("key", "operator", "values[]")
    }


# Read by the allocator port, the per-device matrix or the claim/pod analysis.
MODELLED: frozenset[str] = frozenset(
    {
        C + "spec.devices.config[].opaque.driver",
        C + "spec.devices.config[].requests[]",
        C + "spec.devices.constraints[].distinctAttribute",
        C + "spec.devices.constraints[].matchAttribute",
        C + "spec.devices.constraints[].requests[]",
        C + "spec.devices.requests[].name",
        C + "spec.devices.requests[].firstAvailable[].name",
        C + "spec.devices.requests[].exactly.adminAccess",
        *_both(
            "allocationMode",
            "derivedAttributes[].expression",  # DRADerivedAttributes (allocator/derived.py)
            "derivedAttributes[].name",
            "capacity.requests{}",
            "count",
            "deviceClassName",
            "selectors[].cel.expression",
            "tolerations[].effect",
            "tolerations[].key",
            "tolerations[].operator",
            "tolerations[].value",
        ),
        C + "status.allocation.allocationTimestamp",
        *_node_selector(C + "status.allocation.nodeSelector"),
        C + "status.allocation.devices.results[].adminAccess",
        C + "status.allocation.devices.results[].bindingConditions[]",
        C + "status.allocation.devices.results[].bindingFailureConditions[]",
        C + "status.allocation.devices.results[].consumedCapacity{}",
        C + "status.allocation.devices.results[].device",
        C + "status.allocation.devices.results[].driver",
        C + "status.allocation.devices.results[].pool",
        C + "status.allocation.devices.results[].request",
        C + "status.allocation.devices.results[].shareID",
        C + "status.allocation.devices.results[].skipNodeOperations[]",  # the driver piece (1.37+: kubelet.py)
        C + "status.devices[].conditions[].message",
        C + "status.devices[].conditions[].reason",
        C + "status.devices[].conditions[].status",
        C + "status.devices[].conditions[].type",
        C + "status.devices[].device",
        C + "status.devices[].driver",
        C + "status.devices[].pool",
        C + "status.devices[].shareID",
        C + "status.reservedFor[].name",
        C + "status.reservedFor[].resource",
        C + "status.reservedFor[].uid",
        D + "spec.selectors[].cel.expression",
        D + "spec.extendedResourceName",
        S + "spec.allNodes",
        S + "spec.driver",
        S + "spec.nodeName",
        *_node_selector(S + "spec.nodeSelector"),
        S + "spec.perDeviceNodeSelection",
        S + "spec.pool.generation",
        S + "spec.pool.name",
        S
        + "spec.skipNodeOperations[]",  # with node.status.declaredFeatures (allocator.optional_node_operations_rejection)
        S + "spec.pool.resourceSliceCount",
        S + "spec.sharedCounters[].counters{}.value",
        S + "spec.sharedCounters[].name",
        S + "spec.devices[].allNodes",
        S + "spec.devices[].allowMultipleAllocations",
        S + "spec.devices[].attributes{}.bool",
        S + "spec.devices[].attributes{}.int",
        S + "spec.devices[].attributes{}.string",
        S + "spec.devices[].attributes{}.version",
        S + "spec.devices[].attributes{}.bools[]",
        S + "spec.devices[].attributes{}.ints[]",
        S + "spec.devices[].attributes{}.strings[]",
        S + "spec.devices[].attributes{}.versions[]",
        S + "spec.devices[].bindingConditions[]",
        S + "spec.devices[].bindingFailureConditions[]",
        S + "spec.devices[].bindsToNode",
        S + "spec.devices[].capacity{}.requestPolicy.default",
        S + "spec.devices[].capacity{}.requestPolicy.validRange.max",
        S + "spec.devices[].capacity{}.requestPolicy.validRange.min",
        S + "spec.devices[].capacity{}.requestPolicy.validRange.step",
        S + "spec.devices[].capacity{}.requestPolicy.validValues[]",
        S + "spec.devices[].capacity{}.value",
        S + "spec.devices[].consumesCounters[].counterSet",
        # DRADeviceCompatibilityGroups (allocator/compat.py; with the gate off the slice is ignored: pools.py)
        S + "spec.devices[].consumesCounters[].compatibilityGroups[]",
        S + "spec.devices[].consumesCounters[].counters{}.value",
        S + "spec.devices[].name",
        S + "spec.devices[].nodeName",
        *_node_selector(S + "spec.devices[].nodeSelector"),
        S + "spec.devices[].taints[].effect",
        S + "spec.devices[].taints[].key",
        S + "spec.devices[].taints[].value",
    }
)

# Present in the API, but no input to whether or which device is allocated.
IGNORED: dict[str, str] = {
    C
    + "spec.devices.config[].opaque.parameters": "driver configuration, passed to the driver, not read by the allocator",
    D + "spec.config[].opaque.driver": "driver configuration (copied into the allocation result)",
    D + "spec.config[].opaque.parameters": "driver configuration (copied into the allocation result)",
    C + "status.allocation.devices.config[].opaque.driver": "result configuration",
    C + "status.allocation.devices.config[].opaque.parameters": "result configuration",
    C + "status.allocation.devices.config[].requests[]": "result configuration",
    C + "status.allocation.devices.config[].source": "result configuration",
    C + "status.allocation.devices.results[].tolerations[].effect": "copy of the request's tolerations (1.35+)",
    C + "status.allocation.devices.results[].tolerations[].key": "copy of the request's tolerations",
    C + "status.allocation.devices.results[].tolerations[].operator": "copy of the request's tolerations",
    C + "status.allocation.devices.results[].tolerations[].tolerationSeconds": "copy of the request's tolerations",
    C + "status.allocation.devices.results[].tolerations[].value": "copy of the request's tolerations",
    C + "status.devices[].conditions[].lastTransitionTime": "driver status; shown in evidence only",
    C + "status.devices[].conditions[].observedGeneration": "driver status",
    C + "status.devices[].data": "opaque driver data",
    C + "status.devices[].networkData.hardwareAddress": "network data for the workload",
    C + "status.devices[].networkData.interfaceName": "network data for the workload",
    C + "status.devices[].networkData.ips[]": "network data for the workload",
    C + "status.reservedFor[].apiGroup": "consumer reference (pods and PodGroups are told apart by resource)",
    **{C + r + "tolerations[].tolerationSeconds": "eviction timing (NoExecute), not allocation" for r in _REQ},
    S + "spec.devices[].taints[].timeAdded": "when the taint was added: eviction timing, not allocation",
    S
    + "spec.partitionTypeAttribute": "validated by the API server and the slice controller, not read by the allocator",
}

# In the API of the minors given, not modelled: set in an object, it makes the affected verdicts undetermined.
UNMODELLED: dict[str, str] = {
    S
    + "spec.devices[].nodeAllocatableResourceMappings{}.allocationMultiplier": "node-allocatable resources (DRANodeAllocatableResources, 1.36)",
    S
    + "spec.devices[].nodeAllocatableResourceMappings{}.capacityKey": "node-allocatable resources (DRANodeAllocatableResources, 1.36)",
}

# Modelled only with their feature gate on at the minors whose shape is ported (nodealloc.modelled: 1.37 and 1.38);
# elsewhere an object that sets one makes the verdicts that depend on it undetermined, as UNMODELLED's do (with the
# gate off the scheduler ignores them; kubectl-dra, told nothing of the gate, does not assume so).
GATED: dict[str, str] = {
    S
    + f"spec.devices[].nodeAllocatableResources{{}}.{leaf}": "node-allocatable resources (DRANodeAllocatableResources, "
    "modelled with the gate on in 1.37 and 1.38)"
    for leaf in (
        "mapping.capacityKey",
        "mapping.capacityMultiplier",
        "mapping.deviceMultiplier",
        "overhead.perContainer",
        "overhead.perPod",
    )
}
MODELLED = MODELLED | frozenset(GATED)


def normalize(path: str) -> str:
    """`ResourceClaimTemplate.spec.spec.X` is the claim's `spec.X`."""
    if path.startswith("ResourceClaimTemplate.spec.spec."):
        return C + "spec." + path[len("ResourceClaimTemplate.spec.spec.") :]
    return path


def _present(obj, segments: list[str]) -> bool:
    """Whether obj sets the field at the path (each segment a key, `[]` a list, `{}` a map); empty values do not count."""
    if not segments:
        return obj not in (None, "", [], {})
    seg, rest = segments[0], segments[1:]
    if seg.endswith("[]") or seg.endswith("{}"):
        key = seg[:-2]
        val = obj.get(key) if isinstance(obj, dict) else None
        items = val if isinstance(val, list) else list(val.values()) if isinstance(val, dict) else []
        if not rest:
            return bool(items)
        return any(_present(x, rest) for x in items)
    if not isinstance(obj, dict) or seg not in obj:
        return False
    return _present(obj[seg], rest)


# Unmodelled fields whose feature gate, when off, makes upstream ignore the object in a way the analysis models
# (none now: counter compatibility groups, which were, are modelled with the gate on too).
MODELLED_WHEN_OFF: dict[str, str] = {}


_DEVICE_PREFIX = S + "spec.devices[]."
# The device-level keys under which every UNMODELLED slice path lies: a slice whose devices set none of them sets
# no UNMODELLED field (checked first: 5,000 slices x 8 devices x every path was a third of `explain pod`'s time).
_SLICE_DEVICE_KEYS = frozenset(
    p[len(_DEVICE_PREFIX) :].split(".", 1)[0].rstrip("[]{}")
    for p in (*UNMODELLED, *GATED)
    if p.startswith(_DEVICE_PREFIX)
)
_ONLY_DEVICE_PATHS = all(p.startswith(_DEVICE_PREFIX) for p in (*UNMODELLED, *GATED) if p.startswith(S))


def unmodelled_fields(kind: str, obj: dict, sem=None) -> list[str]:
    """The UNMODELLED paths (field names, without the kind) that obj sets (under sem's gates, when given)."""
    if kind == "ResourceSlice" and _ONLY_DEVICE_PATHS:
        devices = (obj.get("spec") or {}).get("devices") or []
        if not any(k in d for d in devices for k in _SLICE_DEVICE_KEYS):
            return []
    out = []
    paths = list(UNMODELLED) if modelled(sem) else [*UNMODELLED, *GATED]
    for path in paths:
        gate = MODELLED_WHEN_OFF.get(path)
        if gate and sem is not None and not sem.gate(gate):
            continue
        k, _, rest = path.partition(".")
        if k == kind and _present(obj, rest.split(".")):
            out.append(rest)
        elif kind == "ResourceClaimTemplate" and k == "ResourceClaim" and rest.startswith("spec."):
            if _present(obj, ["spec", *rest.split(".")]):
                out.append("spec." + rest)
    return sorted(set(out))


def coverage_findings(objects: list[tuple[str, dict]], sem=None, cache=None) -> list[Finding]:
    """DRA016 for every object (kind, object) of the analysis that sets a field the analysis does not model.
    cache (an Analysis's, pod/cache.py): each object's unmodelled fields are looked up once per snapshot."""
    out = []
    seen = set()
    for kind, obj in objects:
        name = (obj.get("metadata") or {}).get("name", "")
        if cache is None:
            fields = unmodelled_fields(kind, obj, sem)
        else:
            fields = cache.unmodelled.get(obj)
            if fields is None:
                fields = cache.unmodelled.put(obj, unmodelled_fields(kind, obj, sem))
        for f in fields:
            key = (kind, name, f)
            if key in seen:
                continue
            seen.add(key)
            what = (
                UNMODELLED.get(f"{kind}.{f}")
                or UNMODELLED.get(normalize(f"{kind}.{f}"))
                or GATED.get(f"{kind}.{f}", "")
            )
            out.append(
                make(
                    "DRA016",
                    f"{kind} {name} sets {f}, which kubectl-dra does not model ({what}): the verdict "
                    "that depends on it is undetermined",
                    kind=kind,
                    name=name,
                    field=f,
                )
            )
    return out


def taint_rule_findings(gaps: dict[str, str]) -> list[Finding]:
    """DRA016 for each DeviceTaintRule whose 1.34 CEL selectors cannot be judged here (Analysis.taint_rule_gaps)."""
    return [
        make(
            "DRA016",
            f"DeviceTaintRule {name} selects devices with CEL that cannot be judged here ({why}); where it does not "
            "compile, the scheduler's slice tracker fails to apply it and keeps its previous view of the slices: "
            "the verdict that depends on them is undetermined",
            kind="DeviceTaintRule",
            name=name,
            field="spec.deviceSelector.selectors[].cel.expression",
        )
        for name, why in sorted(gaps.items())
    ]


def _past_class(matrix, cache) -> list[dict]:
    """The slices of the devices in a matrix that got past the class selectors, once per matrix with a cache."""
    if cache is not None:
        hit = cache.past_class.get(matrix)
        if hit is not None:
            return hit
        origin = cache.origin.get(matrix)  # a copy of a shared matrix with a few devices marked selected
        if origin is not None:
            base = _past_class(origin[0], cache)
            extra = []
            for i in origin[1]:
                sl = matrix[i].entry.slice
                if (
                    matrix[i].stage is not Stage.CLASS
                    and not any(x is sl for x in base)
                    and not any(x is sl for x in extra)
                ):
                    extra.append(sl)
            return base + extra if extra else base  # the origin's own list when nothing is added (a cache key)
    seen: set[int] = set()
    out = []
    for v in matrix:
        if v.stage is not Stage.CLASS and id(v.entry.slice) not in seen:
            seen.add(id(v.entry.slice))
            out.append(v.entry.slice)
    if cache is not None:
        cache.past_class.put(matrix, out)
    return out


def analysed_objects(analyses, cache=None) -> list[tuple[str, dict]]:
    """What a verdict depends on: the claims, their requests' DeviceClasses, and the slices of every device that
    got past the class selectors (a field on a device the class excludes changes nothing)."""
    out: list[tuple[str, dict]] = []
    seen: set[int] = set()

    def add(kind: str, obj: dict | None) -> None:
        if obj is not None and id(obj) not in seen:
            seen.add(id(obj))
            out.append((kind, obj))

    for a in analyses:
        add("ResourceClaim", a.claim)
        for alts in a.requests:
            for r in alts:
                add("DeviceClass", r.class_obj)
        for matrix in a.matrices.values():
            for sl in _past_class(matrix, cache):
                add("ResourceSlice", sl)
    return out


def analyses_coverage(analyses, sem, cache) -> list[Finding]:
    """coverage_findings(analysed_objects(analyses)) with the slices' part computed once per shared matrix: the
    DRA016 findings of a matrix's slices are the same for every pod whose request has that shape."""
    out: list[Finding] = []
    seen: set = set()

    def take(findings: list[Finding]) -> None:
        for f in findings:
            key = (f.evidence.get("kind"), f.evidence.get("name"), f.evidence.get("field"))
            if key not in seen:
                seen.add(key)
                out.append(f)

    for a in analyses:
        objs = [("ResourceClaim", a.claim)] + [
            ("DeviceClass", r.class_obj) for alts in a.requests for r in alts if r.class_obj is not None
        ]
        take(coverage_findings(objs, sem, cache))
        for matrix in a.matrices.values():
            slices = _past_class(matrix, cache)
            found = cache.slice_coverage.get(slices)
            if found is None:
                found = cache.slice_coverage.put(
                    slices, coverage_findings([("ResourceSlice", sl) for sl in slices], sem, cache)
                )
            take(found)
    return out
