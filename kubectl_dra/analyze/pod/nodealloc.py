"""Node-allocatable resources of DRA devices (KEP-5517, gate DRANodeAllocatableResources, alpha and off by default in
1.36-1.38): a device whose `nodeAllocatableResources` maps it to the node's cpu, memory, ephemeral-storage or
hugepages makes the pod that gets it ask for that much more of the node.

upstream (1.37.2 and 1.38.0-beta.0, the same rules): pkg/scheduler/framework/plugins/dynamicresources/
nodeallocatabledynamicresources.go (calculateAndCheckNodeAllocatableResources, buildNodeAllocatableDRAInfo,
addDeviceMapping, addDeviceOverhead, getDeviceFromSlices, filterSlicesForNode, nodeFitsResources,
validateNodeAllocatableDRAClaimSharing, validatePodLevelResourcesCoverDRA) and k8s.io/component-helpers/resource
addDRANodeAllocatableClaimResources (how a pod's status.nodeAllocatableResourceClaimStatuses add to its requests).

- After the allocator found devices for the pod's claims on a node, the DynamicResources Filter builds one status per
  claim that has a device with `nodeAllocatableResources` on that node: per resource, `mapping` adds
  consumedCapacity[capacityKey] x capacityMultiplier (capacityKey set) or deviceMultiplier per device, `overhead`
  sums perPod and perContainer; `containers` are the init and regular containers that name the claim. The pod's
  requests plus mapping, perPod and perContainer x containers must fit what the node has left of cpu, memory,
  ephemeral-storage and hugepages-* (NodeResourcesFit, which runs first, counts the pod's requests alone).
- The node's requested amounts (NodeInfo, PodInfo.CalculateResource) add every pod's
  status.nodeAllocatableResourceClaimStatuses the same way.
- 1.38 also refuses a negative consumed capacity or product, and looks the capacityKey up by qualified name (a
  key without a domain also matches the driver's domain).

What is not modelled, and told as undetermined instead: a claim of the pod whose device cannot be found once on the
node's slices (upstream errs, or picks among informer-ordered slices), a capacityKey mapping on a result without
consumedCapacity (upstream errs), pod-level resources beside a node-allocatable claim (the pod-level budget checks),
an allocated claim with a mapped device that another pod already holds (the sharing check), the claim behind
DRA-backed extended resources, a bound pod without a status (fit.py), and a pending pod whose claims are all
allocated (no dry-run runs for it: allocated_demand_findings). 1.36's earlier shape (`nodeAllocatableResourceMappings`,
a `resources` map in the pod's status) is not modelled at all: coverage.py keeps the slice field undetermined, and
with the gate on fit.py leaves a node unknown where a bound pod has such a status."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from kubectl_dra.findings.model import make
from kubectl_dra.model.nodes import NodeSelectorError, node_selector_matches
from kubectl_dra.quantity import QuantityError, parse_quantity

GATE = "DRANodeAllocatableResources"
NANO = 10**9


def modelled(sem) -> bool:
    """The gate is on at a minor whose shape is ported (1.37 and 1.38)."""
    return sem is not None and sem.components.node_allocatable_resources and sem.gate(GATE)


def _d(x) -> dict:
    return x if isinstance(x, dict) else {}


def _l(x) -> list:
    return x if isinstance(x, list) else []


class Unknown(ValueError):
    """What the scheduler does with the input cannot be told here: the message says why. has_na: the devices it
    concerns map node resources (where none does, the scheduler skips the device and nothing is lost)."""

    has_na = True


def _q(v, what: str) -> Fraction:
    if isinstance(v, Fraction):
        return v
    try:
        return parse_quantity(v)
    except (QuantityError, TypeError, ValueError):
        raise Unknown(f"{what} {v!r} is not a quantity") from None


def device_resources(device: dict) -> dict:
    """The device's spec.devices[].nodeAllocatableResources (empty: none)."""
    return _d(device.get("nodeAllocatableResources"))


def _reaches(spec: dict, node: dict, otherwise: bool = False) -> bool:
    """filterSlicesForNode for a slice's spec (otherwise: its perDeviceNodeSelection), deviceMatchesNode for a
    device: the node by name, every node, or a node selector that matches it (the API allows one of them)."""
    name = _d(node.get("metadata")).get("name")
    if spec.get("nodeName") and spec["nodeName"] == name:
        return True
    if spec.get("allNodes"):
        return True
    if spec.get("nodeSelector") is not None:
        try:
            return node_selector_matches(spec["nodeSelector"], node)
        except NodeSelectorError:
            return False
    return otherwise and not spec.get("nodeName")


def find_device(slices, node: dict, result: dict) -> dict | None:
    """getDeviceFromSlices over the node's slices: the device a result names, None where there is none. The
    scheduler takes the first slice in its informer's order: where several slices name the device and disagree on
    what it maps, or on whether it is on the node, which one it takes cannot be told (Unknown)."""
    found = []
    for sl in slices:
        spec = _d(sl.get("spec"))
        if spec.get("driver") != result.get("driver") or _d(spec.get("pool")).get("name") != result.get("pool"):
            continue
        if not _reaches(spec, node, bool(spec.get("perDeviceNodeSelection"))):
            continue
        for dev in _l(spec.get("devices")):
            if isinstance(dev, dict) and dev.get("name") == result.get("device"):
                ok = not spec.get("perDeviceNodeSelection") or _reaches(dev, node)
                found.append((ok, device_resources(dev) if ok else None, dev))
                break
    if not found:
        return None
    if len({repr(x[:2]) for x in found}) > 1:
        e = Unknown(
            f"device {result.get('device')} of pool {result.get('pool')} is in several slices for the node that "
            "disagree on its nodeAllocatableResources; which one the scheduler reads cannot be told"
        )
        e.has_na = any(device_resources(x[2]) for x in found)
        raise e
    ok, _, dev = found[0]
    if not ok:
        e = Unknown(f"device {result.get('device')} does not match the node (the scheduler's Filter errs)")
        e.has_na = bool(device_resources(dev))
        raise e
    return dev


def _lookup(consumed: dict, key: str, driver: str, v138: bool):
    """result.ConsumedCapacity[capacityKey] (1.37) or draapi.LookupByQualifiedName (1.38)."""
    if not v138:
        return consumed.get(key)
    domain, sep, name = key.partition("/")
    if sep:
        if key in consumed:
            return consumed[key]
        return consumed.get(name) if domain == driver else None
    got = consumed.get(f"{driver}/{key}")
    return got if got is not None else consumed.get(key)


def _mapping(res: str, m: dict, result: dict, claim: str, v138: bool) -> Fraction | None:
    """addDeviceMapping: what one device result adds to the claim's mapped amount of res (None: nothing)."""
    key = m.get("capacityKey")
    if key:
        consumed = result.get("consumedCapacity")
        if not consumed:
            raise Unknown(
                f"{claim}: device {result.get('device')} maps {res} by capacityKey {key}, but its allocation "
                "has no consumedCapacity (the scheduler's Filter errs on a nil one)"
            )
        got = _lookup(consumed, key, result.get("driver", ""), v138)
        if got is None:
            return None
        amount = _q(got, "consumedCapacity")
        if v138 and amount < 0:
            raise Unknown(f"{claim}: consumedCapacity {key} is negative (the scheduler's Filter errs)")
        if m.get("capacityMultiplier") is not None:
            amount *= _q(m["capacityMultiplier"], "capacityMultiplier")
        if v138 and amount < 0:
            raise Unknown(f"{claim}: the {res} it maps is negative (the scheduler's Filter errs)")
        return amount
    if m.get("deviceMultiplier") is not None:
        return _q(m["deviceMultiplier"], "deviceMultiplier")
    return None


@dataclass
class ClaimStatus:
    """v1.NodeAllocatableResourceClaimStatus, as buildNodeAllocatableDRAInfo builds it."""

    claim: str  # the pod's name for the claim (resourceClaimName)
    containers: list = field(default_factory=list)
    mapping: dict = field(default_factory=dict)  # resource -> Fraction
    overhead: dict = field(default_factory=dict)  # resource -> [perPod or None, perContainer or None]
    mapped: bool = False  # a device maps a resource (the sharing check)

    def amounts(self) -> dict:
        """addDRANodeAllocatableClaimResources for this claim: mapping + perPod + perContainer x containers."""
        out: dict = {}
        for k, v in self.mapping.items():
            out[k] = out.get(k, 0) + v
        for k, (per_pod, per_ctr) in self.overhead.items():
            v = (per_pod or 0) + ((per_ctr or 0) * len(self.containers) if self.containers else 0)
            out[k] = out.get(k, 0) + v
        return out

    def to_dict(self) -> dict:
        return {
            "resourceClaimName": self.claim,
            "containers": list(self.containers),
            "mapping": [{"name": k, "quantity": _text(v)} for k, v in sorted(self.mapping.items())],
            "overhead": [
                {
                    "name": k,
                    **({"perPod": _text(a)} if a is not None else {}),
                    **({"perContainer": _text(b)} if b is not None else {}),
                }
                for k, (a, b) in sorted(self.overhead.items())
            ],
        }


def _text(v: Fraction) -> str:
    return str(v.numerator) if v.denominator == 1 else format(float(v), "g")


def claim_status(name: str, ref: str, results: list, slices, node: dict, v138: bool) -> ClaimStatus | None:
    """The status of one claim (name: the pod's name for it; ref: how messages name it), None when no device of it maps
    anything on the node."""
    devices = []
    for r in results:
        try:
            devices.append(find_device(slices, node, r))
        except Unknown as e:
            if e.has_na:
                raise
            devices.append(None)  # calculateAndCheckNodeAllocatableResources logs the error and goes on
    if not any(d is not None and device_resources(d) for d in devices):
        return None  # calculateAndCheckNodeAllocatableResources skips a claim none of whose devices maps anything
    st = ClaimStatus(name)
    for r in results:
        dev = find_device(slices, node, r)
        if dev is None:
            raise Unknown(f"{ref}: device {r.get('device')} is not on the node's slices (the Filter errs)")
        for res, spec in device_resources(dev).items():
            spec = _d(spec)
            if spec.get("mapping") is not None:
                st.mapped = True
                got = _mapping(res, _d(spec["mapping"]), r, ref, v138)
                if got is not None:
                    st.mapping[res] = st.mapping.get(res, 0) + got
            over = _d(spec.get("overhead"))
            if over.get("perPod") is None and over.get("perContainer") is None:
                continue
            cur = st.overhead.setdefault(res, [None, None])
            for i, k in enumerate(("perPod", "perContainer")):
                if over.get(k) is not None:
                    cur[i] = (cur[i] or 0) + _q(over[k], f"overhead.{k}")
    if not st.mapping and not st.overhead:
        return None
    return st


@dataclass(frozen=True)
class Demand:
    """What the pod's claims add on one node. active: some claim has a device with nodeAllocatableResources there
    (the Filter's check runs); unknown: why it cannot be told ("" when it can)."""

    active: bool
    statuses: tuple = ()
    unknown: str = ""

    def amounts(self) -> dict:
        out: dict = {}
        for st in self.statuses:
            for k, v in st.amounts().items():
                out[k] = out.get(k, 0) + v
        return out

    def nano(self) -> dict:
        """The amounts in nano-units, rounded up (fit.py's units: the pod's own requests are whole nano-units, so
        rounding the sum up to a milli or a unit is the same)."""
        return {k: math.ceil(v * NANO) for k, v in self.amounts().items()}

    def to_dict(self) -> dict:
        return {"statuses": [s.to_dict() for s in self.statuses], **({"unknown": self.unknown} if self.unknown else {})}


INACTIVE = Demand(False)


def _pod_level(pod: dict) -> bool:
    res = _d(_d(pod.get("spec")).get("resources"))
    return bool(_d(res.get("requests")) or _d(res.get("limits")))


def _reserved_elsewhere(pod: dict, claim: dict) -> bool:
    uid = _d(pod.get("metadata")).get("uid")
    held = _l(_d(claim.get("status")).get("reservedFor"))
    return bool(held) and not any(
        isinstance(x, dict) and x.get("resource") == "pods" and x.get("uid") == uid for x in held
    )


def pod_demand(pod: dict, claims: list, slices, node: dict, sem) -> Demand:
    """claims: (the pod's name for the claim or None, the claim, its allocation results on this node: the
    status's for an allocated claim, the dry-run's for a pending one, None for one not allocated there)."""
    v138 = sem.components.node_allocatable_qualified_keys
    ref = lambda c: f"{_d(c.get('metadata')).get('namespace')}/{_d(c.get('metadata')).get('name')}"  # noqa: E731
    statuses = []
    try:
        for pcn, claim, results in claims:
            if not results:
                continue
            # (named as the pod names it: pods with the same claim names share one dry-run, fit.na_key)
            label = f"the pod's claim {pcn}" if pcn else "the claim for the pod's extended resources"
            st = claim_status(pcn or "", label, results, slices, node, v138)
            if st is None:
                continue
            if pcn is None:
                raise Unknown("the claim for the pod's extended resources maps node resources")
            if st.mapped and _d(claim.get("status")).get("allocation") and _reserved_elsewhere(pod, claim):
                raise Unknown(f"claim {ref(claim)} has a mapped device and is held by another pod (the sharing check)")
            statuses.append(st)
    except Unknown as e:
        return Demand(True, (), str(e))
    if not statuses:
        return INACTIVE
    by_name = {st.claim: st for st in statuses}
    spec = _d(pod.get("spec"))
    for c in _l(spec.get("initContainers")) + _l(spec.get("containers")):
        for rc in _l(_d(_d(c).get("resources")).get("claims")):
            st = by_name.get(_d(rc).get("name"))
            if st is not None:
                st.containers.append(_d(c).get("name"))
    if _pod_level(pod):
        return Demand(True, tuple(statuses), "the pod sets pod-level resources beside a node-allocatable claim")
    return Demand(True, tuple(sorted(statuses, key=lambda s: s.claim)))


def node_check(demand: Demand, request_nano: dict, request: dict, alloc: dict, used: dict, units) -> list[tuple]:
    """nodeFitsResources: the pod's requests (request_nano, nano-units) plus the demand, rounded once to the
    scheduler's units (units: resources.scheduler_units), against what the node has left of cpu, memory,
    ephemeral-storage and hugepages-* (alloc minus used, scheduler units). Per resource short: (name, wanted,
    allocatable, what of wanted the devices add beyond request: the pod's own requests in scheduler units)."""
    total = dict(request_nano)
    for k, v in demand.nano().items():
        total[k] = total.get(k, 0) + v
    want = units(total)
    out = []
    for res in sorted(want, key=lambda r: (r not in _NATIVE, r)):
        if res not in _NATIVE and not res.startswith("hugepages-"):
            continue
        w, have = want[res], alloc.get(res, 0)
        if (w > 0 or res.startswith("hugepages-")) and w > have - used.get(res, 0):
            out.append((res, w, have, w - request.get(res, 0)))
    return out


_NATIVE = ("cpu", "memory", "ephemeral-storage")


def status_nano(pod: dict) -> dict:
    """addDRANodeAllocatableClaimResources over a pod's status.nodeAllocatableResourceClaimStatuses, in nano-units
    (API quantities: whole nano-units). Raises ValueError on a quantity the API server would refuse."""
    out: dict = {}
    for st in _l(_d(pod.get("status")).get("nodeAllocatableResourceClaimStatuses")):
        st = _d(st)
        n = len(_l(st.get("containers")))
        for m in _l(st.get("mapping")):
            m = _d(m)
            if m.get("quantity") is not None:
                out[m.get("name")] = out.get(m.get("name"), 0) + math.ceil(parse_quantity(m["quantity"]) * NANO)
        for o in _l(st.get("overhead")):
            o = _d(o)
            v = Fraction(0)
            if o.get("perPod") is not None:
                v += parse_quantity(o["perPod"])
            if o.get("perContainer") is not None and n:
                v += parse_quantity(o["perContainer"]) * n
            out[o.get("name")] = out.get(o.get("name"), 0) + math.ceil(v * NANO)
    return out


def allocated_demand_findings(claims: list, slices) -> list:
    """DRA506 for a pending pod whose claims are all allocated, one of them to a device that maps node resources:
    the DynamicResources Filter checks what it adds on the allocation's node, which this analysis (no dry-run for
    such a pod) does not."""
    index = {}
    for sl in slices:
        spec = _d(sl.get("spec"))
        for dev in _l(spec.get("devices")):
            if isinstance(dev, dict) and device_resources(dev):
                index[(spec.get("driver"), _d(spec.get("pool")).get("name"), dev.get("name"))] = True
    for c in claims:
        for r in _l(_d(_d(_d(c.get("status")).get("allocation")).get("devices")).get("results")):
            r = _d(r)
            if index.get((r.get("driver"), r.get("pool"), r.get("device"))):
                name = _d(c.get("metadata")).get("name")
                return [
                    make(
                        "DRA506",
                        f"claim {name} is allocated to device {r.get('device')}, whose nodeAllocatableResources "
                        "(DRANodeAllocatableResources) add to the pod's cpu, memory or other requests on its node: "
                        "whether the pod fits there with them is not checked for a pod whose claims are all allocated",
                        claim=name,
                        nodes=[],
                    )
                ]
    return []
