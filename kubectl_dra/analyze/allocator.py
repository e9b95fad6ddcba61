"""A faithful re-implementation of k8s.io/dynamic-resource-allocation/structured (the allocator that
kube-scheduler runs for one node), per Kubernetes minor 1.34-1.37. dra-facts.md §2 describes it.

Everything works on raw API dicts (resource.k8s.io/v1 shape). Version differences that matter:
  * 1.34: pools are gathered per node only; an incomplete pool's devices are still used for ExactCount;
    an invalid pool is an error when the search reaches it; shared counters live in the device's own
    slice; every device taint (any effect) must be tolerated.
  * 1.35+: incomplete pools are skipped (after a scan for a newer generation), invalid pools are skipped
    and reported as "invalid resource pools were encountered" when nothing fits; counter sets are per
    pool; only NoSchedule/NoExecute taints matter.
  * 1.36+: pools sorted by driver/pool and slices by name (deterministic first fit); the next device
    slot of a request resumes after the previous pick (combinations instead of permutations).
Before 1.36 the pool order is Go map order (random): we sort anyway, which is one order upstream can
take, so our pick is one upstream could also have made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any, Callable, Iterable

from kubectl_dra.analyze.nodes import NodeSelectorError, node_matches, tolerates
from kubectl_dra.features import Semantics
from kubectl_dra.quantity import parse_quantity


def _n(v):
    """An exact number as an int when it is integral (most quantities are): the search adds and
    compares capacities and counters millions of times, and int arithmetic is far cheaper than Fraction's."""
    return v.numerator if v.denominator == 1 else v


@lru_cache(maxsize=65536)
def _qty_str(text: str) -> Any:
    return _n(parse_quantity(text))


def _qty(text) -> Any:
    """parse_quantity normalised with _n, cached for strings (quantity strings repeat across devices)."""
    return _qty_str(text) if isinstance(text, str) else _n(parse_quantity(text))


ALLOCATION_RESULTS_MAX_SIZE = 32

DeviceID = tuple  # (driver, pool, device)


def device_id_str(did: DeviceID) -> str:
    return "/".join(did)


def obj_ref(obj: dict) -> str:
    """klog.KObj: "namespace/name", or "name" for cluster-scoped objects."""
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace") or ""
    return f"{ns}/{meta.get('name', '')}" if ns else meta.get("name", "")


class ErrorKind(str, Enum):
    """What kind of error Allocate() returned: the finding is chosen from this, never from the message text."""

    CEL_RUNTIME = "cel-runtime"
    CEL_COMPILE = "cel-compile"
    INEXACT = "inexact"  # an expression Kubernetes accepts that the local CEL engine cannot run
    INVALID_POOL = "invalid-pool"
    ALL_POOL = "all-pool"  # allocationMode All over an incomplete or invalid pool
    CONSTRAINT = "constraint"
    REQUEST = "request"
    CLASS = "class"
    FEATURE_DISABLED = "feature-disabled"  # a request uses a feature whose gate is off
    TIMEOUT = "timeout"  # the engine's step budget
    UPSTREAM_CRASH = "upstream-crash"  # upstream would panic
    ERROR = "error"


class AllocationError(Exception):
    """An error Allocate() returns: in kube-scheduler it aborts the scheduling attempt."""

    def __init__(self, message: str, kind: ErrorKind | str = ErrorKind.ERROR, **evidence: Any):
        super().__init__(message)
        self.message = message
        self.kind = ErrorKind(kind)
        self.evidence = evidence


# ---------------------------------------------------------------------------------------------------
# Requests


@dataclass
class Request:
    """One request without subrequests, or one subrequest (requestAccessor + requestData upstream).
    The spec never changes, so what is derived from it is computed once (the search reads it constantly)."""

    claim_index: int
    request_index: int
    sub_index: int  # -1 without subrequests
    name: str  # "req" or "req/sub"
    base_name: str
    sub_name: str
    spec: dict  # the `exactly` dict or the subrequest dict
    class_name: str
    class_obj: dict | None = None
    num_devices: int = 0
    all_devices: list | None = None  # allocationMode All

    @cached_property
    def admin_access(self) -> bool:
        return self.sub_index < 0 and bool(self.spec.get("adminAccess"))

    @cached_property
    def mode(self) -> str:
        return self.spec.get("allocationMode") or "ExactCount"

    @cached_property
    def count(self) -> int:
        c = self.spec.get("count")
        return 1 if c is None else int(c)

    @cached_property
    def selectors(self) -> list:
        return self.spec.get("selectors") or []

    @cached_property
    def tolerations(self) -> list:
        return self.spec.get("tolerations") or []

    @cached_property
    def capacity_requests(self) -> dict | None:
        cap = self.spec.get("capacity")
        if cap is None:
            return None
        return cap.get("requests") or {}


def claim_requests(claim: dict) -> list[dict]:
    return ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []


# ---------------------------------------------------------------------------------------------------
# Devices, pools


@dataclass
class Pool:
    driver: str
    name: str
    slices: list = field(default_factory=list)  # slices targeting the node, sorted by name
    not_targeting: list = field(default_factory=list)
    counter_sets: dict = field(default_factory=dict)  # name -> {counter: Fraction}
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    has_binding_conditions: bool = False

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"


def _slice_spec(s: dict) -> dict:
    return s.get("spec") or {}


def _slice_name(s: dict) -> str:
    return (s.get("metadata") or {}).get("name", "")


def _pool_key(s: dict) -> tuple[str, str]:
    spec = _slice_spec(s)
    return spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")


def _generation(s: dict) -> int:
    return int((_slice_spec(s).get("pool") or {}).get("generation") or 0)


def _slice_count(s: dict) -> int:
    return int((_slice_spec(s).get("pool") or {}).get("resourceSliceCount") or 0)


def _counter_sets_of(slices: Iterable[dict]) -> tuple[dict, str | None]:
    sets: dict[str, dict[str, Fraction]] = {}
    for s in slices:
        for cs in _slice_spec(s).get("sharedCounters") or []:
            name = cs.get("name", "")
            if name in sets:
                return sets, f"duplicate counter set name {name}"
            sets[name] = {k: parse_quantity((v or {}).get("value", "0")) for k, v in (cs.get("counters") or {}).items()}
    return sets, None


def _validate_consumption(counter_sets: dict, slices: Iterable[dict]) -> str | None:
    for s in slices:
        for d in _slice_spec(s).get("devices") or []:
            for cc in d.get("consumesCounters") or []:
                cs = counter_sets.get(cc.get("counterSet", ""))
                if cs is None:
                    return f"counter set {cc.get('counterSet', '')} not found"
                for cname in cc.get("counters") or {}:
                    if cname not in cs:
                        return f"counter {cname} not found in counter set {cc.get('counterSet', '')}"
    return None


def _duplicate_device(slices: Iterable[dict]) -> str | None:
    seen: set[str] = set()
    for s in slices:
        for d in _slice_spec(s).get("devices") or []:
            n = d.get("name", "")
            if n in seen:
                return f"duplicate device name {n}"
            seen.add(n)
    return None


def _has_binding_conditions(slices: Iterable[dict]) -> bool:
    return any(d.get("bindingConditions") is not None for s in slices for d in _slice_spec(s).get("devices") or [])


def slice_targets_node(s: dict, node: dict, sem: Semantics) -> bool | None:
    """Whether a slice is relevant for the node (None: the slice is ignored entirely for this version)."""
    spec = _slice_spec(s)
    per_device = spec.get("perDeviceNodeSelection")
    if not sem.partitionable and (per_device is not None or (sem.version >= (1, 35) and spec.get("sharedCounters"))):
        return None
    if (1, 35) <= sem.version < (1, 37) and spec.get("sharedCounters"):
        return True  # 1.35/1.36: counter slices always belong; 1.37 selects them by node like the others
    node_name, all_nodes, selector = spec.get("nodeName") or "", bool(spec.get("allNodes")), spec.get("nodeSelector")
    if node_name or all_nodes or selector is not None:
        try:
            return node_matches(node, node_name, all_nodes, selector)
        except NodeSelectorError as e:
            raise AllocationError(f"failed to perform node selection for slice {_slice_name(s)}: {e}") from None
    if per_device:
        for d in spec.get("devices") or []:
            try:
                if node_matches(node, d.get("nodeName") or "", bool(d.get("allNodes")), d.get("nodeSelector")):
                    return True
            except NodeSelectorError as e:
                raise AllocationError(
                    f"failed to perform node selection for device {d.get('name', '')} in slice {_slice_name(s)}: {e}"
                ) from None
        return False
    return None


NODE_OPERATIONS_FEATURE = (
    "DRAOptionalNodeOperations"  # component-helpers nodedeclaredfeatures draoptionalnodeoperations
)


def skips_node_operations(s: dict) -> bool:
    return bool(_slice_spec(s).get("skipNodeOperations"))


def optional_node_operations_rejection(sem: Semantics, node: dict | None) -> str | None:
    """upstream: allocator_experimental.go allocateDevice (1.37) for a device whose slice sets skipNodeOperations:
    the feature must be on and the node must list it in status.declaredFeatures. None when the device may be used."""
    if not sem.gate("DRAOptionalNodeOperations"):
        return "its slice skips node operations (skipNodeOperations); DRAOptionalNodeOperations is off"
    declared = ((node or {}).get("status") or {}).get("declaredFeatures") or []
    if NODE_OPERATIONS_FEATURE not in declared:
        return f"its slice skips node operations, but the node does not declare {NODE_OPERATIONS_FEATURE}"
    return None


def apply_taint_rules(slices: list[dict], rules) -> list[dict]:
    """What kube-scheduler's slice tracker does with DeviceTaintRules (gate DRADeviceTaintRules): each rule's
    taint is appended to every device its selector (driver, pool, device; all optional) matches; a rule
    without a selector matches nothing. Slices are copied only when a rule applies."""
    rules = [r for r in rules if (r.get("spec") or {}).get("deviceSelector") is not None]
    if not rules:
        return slices
    out = []
    for sl in slices:
        spec = _slice_spec(sl)
        patched = None
        for rule in rules:
            sel = rule["spec"]["deviceSelector"]
            taint = rule["spec"].get("taint") or {}
            if sel.get("driver") is not None and sel["driver"] != spec.get("driver"):
                continue
            if sel.get("pool") is not None and sel["pool"] != (spec.get("pool") or {}).get("name"):
                continue
            for i, d in enumerate(spec.get("devices") or []):
                if sel.get("device") is not None and sel["device"] != d.get("name"):
                    continue
                if patched is None:
                    patched = {**sl, "spec": {**spec, "devices": [dict(x) for x in spec.get("devices") or []]}}
                dev = patched["spec"]["devices"][i]
                dev["taints"] = list(dev.get("taints") or []) + [
                    dict(taint, rule=(rule.get("metadata") or {}).get("name"))
                ]
        out.append(patched or sl)
    return out


def _order_slices(group: list[dict], sem: Semantics) -> list[dict]:
    """Slice order inside a pool: sorted by name in 1.36+ incubating/experimental; before that the order
    the scheduler's informer listed them (kept as given), with slices holding binding-condition devices
    moved last by the experimental channels of 1.34/1.35."""
    if sem.resume_search:
        return sorted(group, key=_slice_name)
    if sem.version < (1, 36) and sem.channel == "experimental":
        plain = [s for s in group if not _has_binding_conditions([s])]
        return plain + [s for s in group if _has_binding_conditions([s])]
    return list(group)


def gather_pools(slices: list[dict], node: dict, sem: Semantics) -> list[Pool]:
    """GatherPools for one node."""
    grouped: dict[tuple[str, str], list[dict]] = {}
    order: list[tuple[str, str]] = []
    plain_order: dict[tuple[str, str], int] = {}  # first seen through a slice without binding conditions
    for s in slices:
        if not slice_targets_node(s, node, sem):
            continue
        key = _pool_key(s)
        if key not in plain_order and (
            (sem.version >= (1, 35) and _slice_spec(s).get("sharedCounters")) or not _has_binding_conditions([s])
        ):
            plain_order[key] = len(plain_order)
        cur = grouped.get(key)
        if cur is None:
            grouped[key] = [s]
            order.append(key)
        elif _generation(s) > _generation(cur[0]):
            grouped[key] = [s]
        elif _generation(s) == _generation(cur[0]):
            cur.append(s)
    pools: list[Pool] = []
    for key in order:
        group = _order_slices(grouped[key], sem)
        pool = Pool(driver=key[0], name=key[1])
        gen = _generation(group[0])
        complete = len(group) == _slice_count(group[0])
        all_for_pool = group
        if sem.version >= (1, 35) and not complete:
            all_for_pool = [s for s in slices if _pool_key(s) == key and _generation(s) == gen]
            if any(_pool_key(s) == key and _generation(s) > gen for s in slices):
                continue  # obsolete: a newer generation exists somewhere
            if len(all_for_pool) != _slice_count(group[0]):
                pool.incomplete = True
                pools.append(pool)
                continue
        elif sem.version < (1, 35) and not complete:
            pool.incomplete = True
        if sem.partitionable and sem.version >= (1, 35):
            device_slices = [s for s in group if not _slice_spec(s).get("sharedCounters")]
            counter_slices = [s for s in group if _slice_spec(s).get("sharedCounters")]
        else:
            device_slices, counter_slices = group, []
        pool.slices = device_slices
        dup = _duplicate_device(device_slices)
        if dup:
            pool.invalid, pool.invalid_reason = True, dup
        elif sem.partitionable and sem.version >= (1, 35):
            names = {_slice_name(s) for s in group}
            if sem.version >= (1, 37):
                # 1.37 takes the counter sets of the whole pool, also from slices for other nodes.
                counter_slices = counter_slices + [
                    x for x in all_for_pool if _slice_name(x) not in names and _slice_spec(x).get("sharedCounters")
                ]
            counter_sets, err = _counter_sets_of(counter_slices)
            err = err or _validate_consumption(counter_sets, group)
            others = [
                s for s in all_for_pool if _slice_name(s) not in names and not _slice_spec(s).get("sharedCounters")
            ]
            err = err or _validate_consumption(counter_sets, others)
            if err:
                pool.invalid, pool.invalid_reason = True, err
            pool.counter_sets = counter_sets
            pool.not_targeting = sorted(others, key=_slice_name)
        if pool.invalid and sem.version >= (1, 35):
            pool.slices, pool.not_targeting = [], []  # upstream returns an invalid pool without its slices
        pool.has_binding_conditions = _has_binding_conditions(pool.slices)
        pools.append(pool)
    if sem.resume_search:
        # 1.36+ incubating/experimental: sorted by driver and pool name, pools with binding conditions last.
        pools.sort(key=lambda p: (p.has_binding_conditions, p.driver, p.name))
    elif sem.version < (1, 36) and sem.channel == "experimental":
        # Slices with binding conditions are added to the pool map after all others, and pools with
        # binding conditions are moved after the others (keeping the map order within both groups).
        pools.sort(key=lambda p: (p.has_binding_conditions, plain_order.get((p.driver, p.name), len(plain_order))))
    # Otherwise upstream ranges over a Go map keyed by pool. For up to 8 pools (one swiss-table group)
    # the order is a rotation of the insertion order, and the insertion order itself is the most
    # likely one: it is kept, so the engine's choice is always one upstream can make.
    return pools


# ---------------------------------------------------------------------------------------------------
# Allocated state


@dataclass
class AllocatedState:
    devices: set = field(default_factory=set)  # exclusively allocated device IDs
    owners: dict = field(default_factory=dict)  # device ID -> [claim ref]
    aggregated_capacity: dict = field(default_factory=dict)  # device ID -> {capacity name: Fraction}

    @classmethod
    def from_claims(cls, claims: Iterable[dict], sem: Semantics) -> "AllocatedState":
        st = cls()
        for c in claims:
            alloc = (c.get("status") or {}).get("allocation")
            if not alloc:
                continue
            for r in ((alloc.get("devices") or {}).get("results")) or []:
                if r.get("adminAccess"):
                    continue
                did = (r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
                st.owners.setdefault(did, []).append(obj_ref(c))
                if sem.consumable_capacity and r.get("shareID"):
                    agg = st.aggregated_capacity.setdefault(did, {})
                    for k, v in (r.get("consumedCapacity") or {}).items():
                        agg[k] = agg.get(k, 0) + _qty(v)
                else:
                    st.devices.add(did)
        return st

    def is_allocated(self, did: DeviceID) -> bool:
        return did in self.devices or did in self.aggregated_capacity


# ---------------------------------------------------------------------------------------------------
# Checks shared by the search and the per-device explanation


def untolerated_taint(device: dict, tolerations: list, sem: Semantics) -> dict | None:
    for taint in device.get("taints") or []:
        if not sem.taints_any_effect and taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def lookup_attribute(device: dict, driver: str, name: str) -> dict | None:
    attrs = device.get("attributes") or {}
    if name in attrs:
        return attrs[name]
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return attrs.get(ident)


def _attr_value(attr: dict) -> tuple[str, Any] | None:
    for t in ("string", "int", "bool", "version"):
        if t in attr and attr[t] is not None:
            return t, attr[t]
    return None


def _attr_set(attr: dict) -> tuple[str, frozenset] | None:
    """attributeAsSet (1.37 experimental): a non-empty list, else a scalar as a one-element set."""
    for t in ("ints", "bools", "strings", "versions"):
        if attr.get(t):
            return t[:-1], frozenset(attr[t])
    v = _attr_value(attr)
    return None if v is None else (v[0], frozenset((v[1],)))


class CapacityNotRepresentable(Exception):
    """errCapacityRequestNotRepresentable (1.37): the allocator aborts instead of skipping the device."""


_INT64_MAX = 2**63 - 1


def _safe_milli(q: Fraction) -> int | None:
    """safeMilliValue: q in milli units when that is exact (and fits int64), else None."""
    m = q * 1000
    if m.denominator != 1 or abs(m.numerator) > _INT64_MAX:
        return None
    return m.numerator


def _use_milli(vr: dict, fractional: bool) -> bool:
    """useMilli (1.37, DRAFractionalCapacityRange): milli arithmetic when every bound of the range is
    exact in milli units and the step is at least 1m (the code does not require a fractional bound)."""
    if not fractional:
        return False
    for key in ("min", "max", "step"):
        if vr.get(key) is None:
            continue
        m = _safe_milli(parse_quantity(vr[key]))
        if m is None or (key == "step" and m < 1):
            return False
    return True


def consumed_capacity(request_caps: dict | None, device: dict, fractional: bool = False) -> dict | None:
    """calculateConsumedCapacity for every capacity of the device; None if a requested capacity is missing.
    fractional: the allocator's FractionalCapacityRange feature (1.37); may raise CapacityNotRepresentable."""
    caps = device.get("capacity") or {}
    if request_caps:
        for name in request_caps:
            if name not in caps:
                return None
    out = {}
    for name, cap in caps.items():
        policy = cap.get("requestPolicy")
        requested = (request_caps or {}).get(name)
        if requested is None:
            if policy and policy.get("default") is not None:
                out[name] = parse_quantity(policy["default"])
            else:
                out[name] = parse_quantity(cap.get("value", "0"))
            continue
        req = parse_quantity(requested)
        if not policy:
            out[name] = req
            continue
        vr = policy.get("validRange")
        if vr and vr.get("min") is not None:
            mn = parse_quantity(vr["min"])
            if req < mn:
                out[name] = mn
            elif vr.get("step") is None:
                out[name] = req
            elif _use_milli(vr, fractional):
                req_m = _safe_milli(req)
                if req_m is None:
                    raise CapacityNotRepresentable(
                        f'capacity "{name}": capacity request cannot be represented in the device\'s range '
                        f"arithmetic: request {requested} is not a representable milli value"
                    )
                step_m = _value(parse_quantity(vr["step"]) * 1000)
                mn_m = _value(mn * 1000)
                added = req_m - mn_m
                n = added // step_m + (1 if added % step_m else 0)
                out[name] = Fraction(mn_m + step_m * n, 1000)
            else:
                step = _value(parse_quantity(vr["step"]))
                mn_i = _value(mn)
                added = _value(req) - mn_i
                n = added // step + (1 if added % step else 0) if step else 0
                out[name] = Fraction(mn_i + step * n)
        elif policy.get("validValues") is not None:
            for vv in policy["validValues"]:
                if req <= parse_quantity(vv):
                    out[name] = parse_quantity(vv)
                    break
            else:
                out[name] = req
        else:
            out[name] = req
    return out


def _value(q: Fraction) -> int:
    import math

    return math.ceil(q) if q >= 0 else -math.ceil(-q)


def violates_policy(amount: Fraction, policy: dict | None, fractional: bool = False) -> bool:
    if not policy:
        return False
    if policy.get("default") is not None and amount == parse_quantity(policy["default"]):
        return False
    vr = policy.get("validRange")
    if vr is not None:
        if vr.get("max") is not None and amount > parse_quantity(vr["max"]):
            return True
        if vr.get("step") is not None and _use_milli(vr, fractional):
            requested = _safe_milli(amount)
            if requested is None:
                return True
            step_m = _value(parse_quantity(vr["step"]) * 1000)
            mn_m = _value(parse_quantity(vr.get("min") or "0") * 1000)
            return (requested - mn_m) % step_m != 0
        if vr.get("step") is not None:
            step = _value(parse_quantity(vr["step"]))
            mn = _value(parse_quantity(vr.get("min") or "0"))
            return bool(step) and (_value(amount) - mn) % step != 0
        return False
    vals = policy.get("validValues") or []
    if vals:
        return not any(amount == parse_quantity(v) for v in vals)
    return False


def capacity_demand(request_caps, device: dict, fractional: bool = False) -> str | list[tuple[str, Fraction, Fraction]]:
    """The part of CmpRequestOverCapacity that depends only on the request and the device: a reason
    string when the request can never fit, else per capacity (name, amount one allocation consumes, total).
    Raises CapacityNotRepresentable where 1.37 aborts the allocation."""
    caps = device.get("capacity") or {}
    if request_caps:
        missing = [n for n in request_caps if n not in caps]
        if missing:
            return f"device has no capacity {missing[0]}"
    out = []
    for name, cap in caps.items():
        requested = (request_caps or {}).get(name)
        one = consumed_capacity(
            {name: requested} if requested is not None else None, {"capacity": {name: cap}}, fractional
        )[name]
        if violates_policy(one, cap.get("requestPolicy"), fractional):
            return f"capacity {name}: {requested} violates the device's request policy"
        out.append((name, _n(one), _qty(cap.get("value", "0"))))
    return out


def capacity_fits(
    request_caps,
    device: dict,
    already: dict | None,
    allocating: dict | None,
    demand: str | list | None = None,
    fractional: bool = False,
) -> tuple[bool, str]:
    """CmpRequestOverCapacity. Returns (fits, reason). demand: capacity_demand(...), if already computed."""
    if demand is None:
        demand = capacity_demand(request_caps, device, fractional)
    if isinstance(demand, str):
        return False, demand
    for name, one, total in demand:
        used = 0
        if already and name in already:
            used += already[name]
        if allocating and name in allocating:
            used += allocating[name]
        if one + used > total:
            from kubectl_dra.quantity import format_quantity as fq

            return False, f"capacity {name}: needs {fq(one)}, {fq(max(total - used, Fraction(0)))} of {fq(total)} left"
    return True, ""


# ---------------------------------------------------------------------------------------------------
# Selector evaluation (shared cache with the explanation matrix)


class SelectorEvaluator:
    """Compiles each expression once and evaluates it per device, caching by (expression, device)."""

    def __init__(self, sem: Semantics, cel_env=None):
        self.sem = sem
        self._env = cel_env
        self._compiled: dict[str, Any] = {}
        self._cel_inputs: dict[DeviceID, dict] = {}
        self.inexact: set[str] = set()  # expressions Kubernetes accepts but the local engine cannot run

    @property
    def env(self):
        if self._env is None:
            from kubectl_dra.cel import CelEnvironment

            self._env = CelEnvironment(version=self.sem.version, list_attributes=self.sem.list_attributes)
        return self._env

    def compile(self, expression: str):
        """Returns (compiled, None) or (None, compile error text)."""
        hit = self._compiled.get(expression)
        if hit is None:
            from kubectl_dra.cel import CelCompileError

            try:
                hit = (self.env.compile(expression), None)
            except CelCompileError as e:
                hit = (None, str(e))
                if not getattr(e, "exact", True):
                    self.inexact.add(expression)
            self._compiled[expression] = hit
        return hit

    def cel_device(self, did: DeviceID, device: dict) -> dict:
        d = self._cel_inputs.get(did)
        if d is None:
            d = {
                "driver": did[0],
                "name": did[2],
                "attributes": device.get("attributes") or {},
                "capacity": device.get("capacity") or {},
                # stable (all versions) and 1.34/1.35 incubating build cel.Device without this field.
                "allowMultipleAllocations": self.sem.cel_sees_multi_allocations
                and bool(device.get("allowMultipleAllocations")),
            }
            self._cel_inputs[did] = d
        return d

    def evaluate(self, expression: str, did: DeviceID, device: dict):
        """Returns an EvalResult-like object (value, error, reads) or raises nothing; compile errors
        come back as (None, error) via .compile()."""
        compiled, err = self.compile(expression)
        if compiled is None:
            return None
        return compiled.evaluate(self.cel_device(did, device))


def selector_expression(sel: dict) -> str | None:
    cel = sel.get("cel")
    if not cel:
        return None
    return cel.get("expression")


# ---------------------------------------------------------------------------------------------------
# The allocator


@dataclass
class AllocationResult:
    results: list  # [{request, driver, pool, device, adminAccess?, consumedCapacity?, tolerations?}]
    node_selector: dict | None
    config: list


class Allocator:
    """structured.NewAllocator(...) for a set of slices, classes and allocated claims."""

    def __init__(
        self,
        sem: Semantics,
        classes: dict[str, dict],
        slices: list[dict],
        allocated: AllocatedState,
        evaluator: SelectorEvaluator | None = None,
    ):
        self.sem = sem
        self.classes = classes
        self.slices = slices
        self.allocated = allocated
        self.evaluator = evaluator or SelectorEvaluator(sem)
        self.steps = 0
        self.max_steps = 2_000_000

    # -- entry point ------------------------------------------------------------------------------
    def allocate(self, node: dict, claims: list[dict]) -> list[AllocationResult] | None:
        """Returns one AllocationResult per claim, None when the claims do not fit on the node, or raises
        AllocationError with upstream's error text."""
        run = _Run(self, node, claims)
        return run.run()


class _Run:
    def __init__(self, a: Allocator, node: dict, claims: list[dict]):
        self.a = a
        self.sem = a.sem
        self.fractional = "FractionalCapacityRange" in a.sem.allocator_features
        self.node = node
        self.claims = claims
        self.pools: list[Pool] = []
        self.requests: dict[tuple[int, int, int], Request] = {}
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.constraints: list[list[_Constraint]] = []
        self.match_cache: dict[tuple, bool] = {}
        self.demand_cache: dict[tuple, Any] = {}  # (claim, request, subrequest, device) -> capacity_demand
        self.consumed_cache: dict[tuple, dict] = {}  # same key -> consumed_capacity
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self.consumed_counters: dict[str, dict[str, dict[str, Fraction]]] = {}
        self.available_counters: dict[str, dict[str, dict[str, Fraction]]] = {}
        self.results: list[list[dict]] = [[] for _ in claims]
        self.failed_from: set[tuple] = set()  # _boundary_state keys whose search failed

    # -- setup -------------------------------------------------------------------------------------
    def run(self):
        sem = self.sem
        try:
            self.pools = gather_pools(self.a.slices, self.node, sem)
        except AllocationError as e:
            raise AllocationError(f"gather pool information: {e.message}") from None
        for ci, claim in enumerate(self.claims):
            ref = obj_ref(claim)
            min_per_claim = 0
            for ri, req in enumerate(claim_requests(claim)):
                subs = req.get("firstAvailable") or []
                exactly = req.get("exactly")
                if subs and not sem.prioritized_list:
                    raise AllocationError(
                        f"claim {ref}, request {req.get('name', '')}: has subrequests, but the DRAPrioritizedList feature is disabled",
                        kind=ErrorKind.FEATURE_DISABLED,
                    )
                if sem.code_consumable_capacity and not sem.consumable_capacity:
                    if sem.version == (1, 34) and any(sub.get("capacity") is not None for sub in subs):
                        raise AllocationError(
                            f"claim {ref}, request {req.get('name', '')}: has capacity requests, but the DRAConsumableCapacity feature is disabled",
                            kind=ErrorKind.FEATURE_DISABLED,
                        )
                    if exactly is not None and exactly.get("capacity") is not None:
                        raise AllocationError(
                            f"claim {ref}, request {req.get('name', '')}: has capacity requests, but the DRAConsumableCapacity feature is disabled",
                            kind=ErrorKind.FEATURE_DISABLED,
                        )
                    for sub in subs:
                        if sub.get("capacity") is not None:
                            raise AllocationError(
                                f"claim {ref}, subrequest {sub.get('name', '')}: has capacity requests, but the DRAConsumableCapacity feature is disabled",
                                kind=ErrorKind.FEATURE_DISABLED,
                            )
                if subs:
                    min_req = None
                    for si, sub in enumerate(subs):
                        r = Request(
                            ci,
                            ri,
                            si,
                            f"{req.get('name', '')}/{sub.get('name', '')}",
                            req.get("name", ""),
                            sub.get("name", ""),
                            sub,
                            sub.get("deviceClassName") or "",
                        )
                        self._validate(r, ref)
                        self.requests[(ci, ri, si)] = r
                        min_req = r.num_devices if min_req is None else min(min_req, r.num_devices)
                    min_req = min_req or 0
                else:
                    spec = exactly or {}
                    r = Request(
                        ci,
                        ri,
                        -1,
                        req.get("name", ""),
                        req.get("name", ""),
                        "",
                        spec,
                        spec.get("deviceClassName") or "",
                    )
                    if exactly is None:
                        raise AllocationError(
                            f"claim {ref}, request {req.get('name', '')}: missing device class name (unsupported request type?)",
                            kind=ErrorKind.REQUEST,
                        )
                    self._validate(r, ref)
                    self.requests[(ci, ri, -1)] = r
                    min_req = r.num_devices
                if min_req > ALLOCATION_RESULTS_MAX_SIZE - min_per_claim:
                    raise AllocationError(
                        f"claim {ref}, request {req.get('name', '')}: adding {min_req} devices exceeds the claim limit "
                        f"of {ALLOCATION_RESULTS_MAX_SIZE}, with {min_per_claim} already accounted for",
                        kind=ErrorKind.REQUEST,
                    )
                min_per_claim += min_req
            cons = []
            # Set semantics for list-typed attributes: only where the allocator gets ListTypeAttributes
            # (1.37 "experimental"; 1.36's plugin never passes it).
            as_sets = "ListTypeAttributes" in self.sem.allocator_features
            for i, c in enumerate(((claim.get("spec") or {}).get("devices") or {}).get("constraints") or []):
                if c.get("matchAttribute"):
                    cls = _MatchAttributeSet if as_sets else _MatchAttribute
                    cons.append(cls(set(c.get("requests") or []), c["matchAttribute"]))
                elif c.get("distinctAttribute") and self.sem.code_consumable_capacity:
                    if as_sets:
                        cls = _DistinctAttributeSet
                    elif self.sem.version == (1, 34):
                        cls = _DistinctAttributePointers
                    else:
                        cls = _DistinctAttributeAll if self.sem.version >= (1, 37) else _DistinctAttribute
                    cons.append(cls(set(c.get("requests") or []), c["distinctAttribute"]))
                else:
                    raise AllocationError(
                        f"claim {ref}, constraint #{i}: empty constraint (unsupported constraint type?)",
                        kind=ErrorKind.REQUEST,
                    )
            self.constraints.append(cons)
        # Upstream starts the search with a fresh selector cache (deviceMatchesRequest = make(...)): what
        # validation cached, possibly under another subrequest's key (see above), is dropped.
        self.match_cache = {}
        try:
            done = self.allocate_one(0, 0, -1, 0, False, (0, 0, 0))
        except _MaxSizeExceeded:
            raise AllocationError("allocation max size exceeded") from None
        if not done:
            if self.sem.version >= (1, 35) and any(p.invalid for p in self.pools):
                raise AllocationError("invalid resource pools were encountered", kind=ErrorKind.INVALID_POOL)
            return None
        return [self._result(ci) for ci in range(len(self.claims))]

    def _validate(self, r: Request, ref: str) -> None:
        for i, sel in enumerate(r.selectors):
            if not selector_expression(sel):
                raise AllocationError(
                    f"claim {ref}, request {r.base_name}, selector #{i}: CEL expression empty (unsupported selector type?)",
                    kind=ErrorKind.REQUEST,
                )
        if not self.sem.admin_access and r.sub_index < 0 and r.spec.get("adminAccess") is not None:
            raise AllocationError(
                f"claim {ref}, request {r.base_name}: admin access is requested, but the feature is disabled",
                kind=ErrorKind.FEATURE_DISABLED,
            )
        if not r.class_name:
            raise AllocationError(
                f"claim {ref}, request {r.name}: missing device class name (unsupported request type?)",
                kind=ErrorKind.REQUEST,
            )
        cls = self.a.classes.get(r.class_name)
        if cls is None:
            raise AllocationError(
                f"claim {ref}, request {r.name}: could not retrieve device class {r.class_name}: "
                f'deviceclass.resource.k8s.io "{r.class_name}" not found',
                kind=ErrorKind.CLASS,
            )
        r.class_obj = cls
        if r.mode == "ExactCount":
            r.num_devices = r.count
        elif r.mode == "All":
            r.all_devices = []
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"claim {ref}, request {r.sub_name or r.base_name}: asks for all devices, but resource pool {pool.id} is currently being updated",
                        kind=ErrorKind.ALL_POOL,
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"claim {ref}, request {r.sub_name or r.base_name}: asks for all devices, but resource pool {pool.id} is currently invalid",
                        kind=ErrorKind.ALL_POOL,
                    )
                # Before 1.36 the selector cache key of subrequest i is still that of subrequest i-1 while it
                # is validated (requestKey.subRequestIndex is set after validateDeviceRequest): results are
                # shared with, and stored for, the previous subrequest.
                key_sub = r.sub_index - 1 if self.sem.version < (1, 36) and r.sub_index > 0 else r.sub_index
                for s in pool.slices:
                    for d in _slice_spec(s).get("devices") or []:
                        did = (pool.driver, pool.name, d.get("name", ""))
                        if not self.is_selectable(r, s, d, did, key_sub):
                            continue
                        if self.sem.consumable_capacity:
                            if self.sem.version >= (1, 37):
                                # 1.37 checks the static capacity only: shares in use are not subtracted
                                # here, so they make the allocation fail later.
                                try:
                                    ok, _ = capacity_fits(
                                        r.capacity_requests, d, None, None, fractional=self.fractional
                                    )
                                except CapacityNotRepresentable as e:
                                    raise AllocationError(
                                        f"claim {ref}, request {r.sub_name or r.base_name}: checking capacity for "
                                        f"device {d.get('name', '')}: {e}",
                                        kind=ErrorKind.REQUEST,
                                    ) from None
                            else:
                                ok, _ = self._capacity_ok(r, d, did)
                            if not ok:
                                continue
                        r.all_devices.append((did, d, s, pool))
            r.num_devices = len(r.all_devices)
        else:
            raise AllocationError(
                f"claim {ref}, request {r.name}: unsupported count mode {r.mode}", kind=ErrorKind.REQUEST
            )

    # -- search ------------------------------------------------------------------------------------
    def allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: tuple) -> bool:
        self.a.steps += 1
        if self.a.steps > self.a.max_steps:
            raise AllocationError(
                "filter operation aborted: search exceeded kubectl-dra's step budget", kind=ErrorKind.TIMEOUT
            )
        if ci >= len(self.claims):
            return True
        reqs = claim_requests(self.claims[ci])
        if ri >= len(reqs):
            if ci + 1 >= len(self.claims):
                return True
            # Upstream searches the later claims again for every allocation of the earlier ones. A later
            # search that failed (no error) from the very same state fails again, so it is not repeated:
            # same outcome and devices as upstream, far fewer steps when a late claim cannot be satisfied.
            key = self._boundary_state(ci + 1)
            if key in self.failed_from:
                return False
            try:
                done = self.allocate_one(ci + 1, 0, -1, 0, False, (0, 0, 0))
            except _MaxSizeExceeded:
                done = False
            if not done:
                self.failed_from.add(key)
            return done
        if not in_sub and (reqs[ri].get("firstAvailable") or []):
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.requests:
                try:
                    ok = self.allocate_one(ci, ri, sub, 0, True, (0, 0, 0))
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.selected_sub[(ci, ri)] = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded()
            return False
        r = self.requests[(ci, ri, si)]
        if r.mode == "All" and not r.all_devices:
            return False
        if di >= r.num_devices:
            return self.allocate_one(ci, ri + 1, -1, 0, False, (0, 0, 0))
        if r.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE - len(self.results[ci]):
            raise _MaxSizeExceeded()
        if r.mode == "All":
            did, d, s, pool = r.all_devices[di]
            ok, undo = self.allocate_device(r, did, d, s, pool, True, di)
            if not ok:
                return False
            # Before 1.36 the next "all" device is looked up without the subrequest index, i.e. as a device
            # of the first subrequest (allocateOne's deviceIndices literal omits subRequestIndex).
            next_si = 0 if self.sem.version < (1, 36) and si > 0 else si
            try:
                done = self.allocate_one(ci, ri, next_si, di + 1, in_sub, (0, 0, 0))
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        resume = self.sem.resume_search
        p0, s0, d0 = start if resume else (0, 0, 0)
        for pi in range(p0, len(self.pools)):
            pool = self.pools[pi]
            if pool.invalid:
                if self.sem.version < (1, 35):
                    raise AllocationError(
                        f"pool {pool.name} is invalid: {pool.invalid_reason}", kind=ErrorKind.INVALID_POOL
                    )
                continue
            if pool.incomplete and self.sem.version >= (1, 35):
                continue
            for sj in range(s0 if pi == p0 else 0, len(pool.slices)):
                s = pool.slices[sj]
                devices = _slice_spec(s).get("devices") or []
                for dj in range(d0 if (pi == p0 and sj == s0) else 0, len(devices)):
                    d = devices[dj]
                    did = (pool.driver, pool.name, d.get("name", ""))
                    if r.admin_access and ci in self.allocating.get(did, ()):
                        continue
                    if not r.admin_access and self._in_use(did):
                        continue
                    if not self.is_selectable(r, s, d, did):
                        continue
                    if self.sem.consumable_capacity:
                        ok, _ = self._capacity_ok(r, d, did)
                        if not ok:
                            continue
                    ok, undo = self.allocate_device(r, did, d, s, pool, False, di)
                    if not ok:
                        continue
                    try:
                        done = self.allocate_one(ci, ri, si, di + 1, in_sub, (pi, sj, dj + 1))
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _boundary_state(self, c: int) -> tuple:
        """Everything the search of claims c.. reads that earlier claims change, including what the
        pre-1.36 bookkeeping leaks (in-flight marks, counters, constraint state of later claims)."""
        return (
            c,
            # in use, and by which later claim (a pre-1.36 leak; admin access looks at its own claim)
            frozenset((did, frozenset(x for x in cs if x >= c)) for did, cs in self.allocating.items() if cs),
            frozenset((did, frozenset(v.items())) for did, v in self.allocating_capacity.items()),
            frozenset(
                (scope, name, frozenset((k, v) for k, v in cs.items() if v))
                for scope, sets in self.consumed_counters.items()
                for name, cs in sets.items()
            ),
            tuple(con.state() for cons in self.constraints[c:] for con in cons),
            tuple(len(self.results[i]) for i in range(c, len(self.claims))),
        )

    def _in_use(self, did: DeviceID) -> bool:
        return did in self.a.allocated.devices or bool(self.allocating.get(did))

    def _consumed(self, r: Request, d: dict, did: DeviceID) -> dict:
        """What one allocation of the device for the request consumes (a fresh dict, callers keep it)."""
        key = (r.claim_index, r.request_index, r.sub_index, did)
        c = self.consumed_cache.get(key)
        if c is None:
            c = consumed_capacity(r.capacity_requests, d, self.fractional) or {}
            c = self.consumed_cache[key] = {k: _n(v) for k, v in c.items()}
        return dict(c)

    def _capacity_ok(self, r: Request, d: dict, did: DeviceID) -> tuple[bool, str]:
        key = (r.claim_index, r.request_index, r.sub_index, did)
        demand = self.demand_cache.get(key)
        if demand is None:
            try:
                demand = self.demand_cache[key] = capacity_demand(r.capacity_requests, d, self.fractional)
            except CapacityNotRepresentable as e:
                raise AllocationError(
                    f"claim {obj_ref(self.claims[r.claim_index])}, request {r.sub_name or r.base_name}: checking "
                    f"capacity for device {device_id_str(did)}: {e}",
                    kind=ErrorKind.REQUEST,
                ) from None
        return capacity_fits(
            r.capacity_requests,
            d,
            self.a.allocated.aggregated_capacity.get(did),
            self.allocating_capacity.get(did),
            demand,
        )

    def is_selectable(self, r: Request, s: dict, d: dict, did: DeviceID, key_sub: int | None = None) -> bool:
        if not self.sem.binding_conditions and d.get("bindingConditions"):
            return False
        key = (did, r.claim_index, r.request_index, r.sub_index if key_sub is None else key_sub)
        hit = self.match_cache.get(key)
        if hit is not None:
            return hit
        if r.class_obj is not None:
            if not self._selectors_match(
                r, d, did, r.class_obj, ((r.class_obj.get("spec") or {}).get("selectors")) or []
            ):
                self.match_cache[key] = False
                return False
        if not self._selectors_match(r, d, did, None, r.selectors):
            self.match_cache[key] = False
            return False
        if _slice_spec(s).get("perDeviceNodeSelection"):
            try:
                ok = node_matches(self.node, d.get("nodeName") or "", bool(d.get("allNodes")), d.get("nodeSelector"))
            except NodeSelectorError as e:
                raise AllocationError(f"failed to parse node selector: {e}") from None
            if not ok:
                self.match_cache[key] = False
                return False
        self.match_cache[key] = True
        return True

    def _selectors_match(self, r: Request, d: dict, did: DeviceID, cls: dict | None, selectors: list) -> bool:
        ev = self.a.evaluator
        for i, sel in enumerate(selectors):
            expr = selector_expression(sel) or ""
            where = (
                f"class {(cls.get('metadata') or {}).get('name', '')}"
                if cls is not None
                else f"claim {obj_ref(self.claims[r.claim_index])}"
            )
            compiled, cerr = ev.compile(expr)
            if compiled is None and expr in ev.inexact:
                raise AllocationError(
                    f"{where}: selector #{i}: {cerr}", kind=ErrorKind.INEXACT, selector=i, expression=expr
                )
            if compiled is None:
                raise AllocationError(
                    f"{where}: selector #{i}: CEL compile error: {cerr}",
                    kind=ErrorKind.CEL_COMPILE,
                    selector=i,
                    expression=expr,
                    device=device_id_str(did),
                )
            res = compiled.evaluate(ev.cel_device(did, d))
            if res.error is not None and not getattr(res, "exact", True):
                raise AllocationError(
                    f"{where}: selector #{i} on device {device_id_str(did)}: {res.error}",
                    kind=ErrorKind.INEXACT,
                    selector=i,
                    expression=expr,
                    device=device_id_str(did),
                    cel_error=res.error,
                )
            if res.error is not None:
                on = f" on device {device_id_str(did)}" if self.sem.version >= (1, 37) else ""
                raise AllocationError(
                    f"{where}: selector #{i}{on}: CEL runtime error: {res.error}",
                    kind=ErrorKind.CEL_RUNTIME,
                    selector=i,
                    expression=expr,
                    device=device_id_str(did),
                    cel_error=res.error,
                    source="class" if cls is not None else "claim",
                    request=r.name,
                )
            if not res.value:
                return False
        return True

    def allocate_device(self, r: Request, did, d, s, pool: Pool, must: bool, di: int):
        """di: the position of this device within its request (0 for the first device)."""
        if self.sem.version < (1, 36):
            return self._allocate_device_legacy(r, did, d, s, pool, must, di)
        sem = self.sem
        ci = r.claim_index
        admitted = self._admit(r, did, d, s, pool)
        if admitted is None:
            return False, None
        multi, _, counters_reserved = admitted
        undo_steps: list[Callable[[], None]] = []
        if counters_reserved:
            undo_steps.append(lambda: self._release_counters(d, s, pool))

        def rollback():
            for fn in reversed(undo_steps):
                fn()

        if sem.device_taints and untolerated_taint(d, r.tolerations, sem) is not None:
            rollback()
            return False, None
        for c in self.constraints[ci]:
            if not c.add(r.base_name, r.sub_name, d, did):
                rollback()
                if must:
                    raise self._constraint_error(r, did)
                return False, None
            undo_steps.append(lambda c=c: c.remove(r.base_name, r.sub_name, d, did))
        if not multi:
            self.allocating.setdefault(did, set()).add(ci)
            undo_steps.append(lambda: self.allocating[did].discard(ci))
        consumed = None
        if sem.consumable_capacity:
            ok, _ = self._capacity_ok(r, d, did)
            if not ok:
                rollback()
                return False, None
            if multi:
                consumed = self._consumed(r, d, did)
                existed = did in self.allocating_capacity
                self._capacity_insert(did, consumed)

                def _undo_cap(consumed=consumed, existed=existed):
                    self._capacity_remove(did, consumed)
                    if existed and did not in self.allocating_capacity:
                        self.allocating_capacity[did] = {}

                undo_steps.append(_undo_cap)
        res = {"request": r.name, "driver": did[0], "pool": did[1], "device": did[2], "_device": d, "_slice": s}
        if r.admin_access:
            res["adminAccess"] = True
        if consumed:
            res["consumedCapacity"] = consumed
        if multi:
            res["_shared"] = True
        self.results[ci].append(res)
        undo_steps.append(lambda: self.results[ci].pop())
        return True, rollback

    def _admit(self, r: Request, did, d, s, pool: Pool):
        """The checks every allocateDevice starts with: in use, counters gate, counters (reserved here).
        Returns None to reject, else (multi-allocatable, consumesCounters, counters reserved)."""
        sem = self.sem
        ci = r.claim_index
        multi = sem.consumable_capacity and bool(d.get("allowMultipleAllocations"))
        if not multi and r.admin_access and ci in self.allocating.get(did, ()):
            return None
        if not r.admin_access and self._in_use(did):
            return None
        if (
            sem.optional_node_operations_code
            and skips_node_operations(s)
            and optional_node_operations_rejection(sem, self.node) is not None
        ):
            return None
        consumes = d.get("consumesCounters") or []
        if not sem.partitionable and consumes:
            return None
        skip_counters = multi and (did in self.a.allocated.aggregated_capacity or did in self.allocating_capacity)
        if consumes and not (sem.version >= (1, 35) and skip_counters):
            if not self._reserve_counters(d, s, pool):
                return None
            return multi, consumes, True
        return multi, consumes, False

    def _constraint_error(self, r: Request, did) -> AllocationError:
        return AllocationError(
            f"claim {obj_ref(self.claims[r.claim_index])}, request {r.sub_name or r.base_name}: cannot add device "
            f"{device_id_str(did)} because a claim constraint would not be satisfied",
            kind=ErrorKind.CONSTRAINT,
        )

    def _allocate_device_legacy(self, r: Request, did, d, s, pool: Pool, must: bool, di: int):
        """allocateDevice before 1.36, including its bookkeeping leaks (kept on purpose, they decide
        outcomes): counters reserved for a device stay reserved when its taint or constraint check fails;
        a failed capacity check leaves the constraints and the in-flight mark behind; undoing a shared
        (multi-allocatable) device never releases its counters."""
        sem = self.sem
        ci = r.claim_index
        admitted = self._admit(r, did, d, s, pool)
        if admitted is None:
            return False, None
        multi, consumes, _ = admitted
        if sem.device_taints and untolerated_taint(d, r.tolerations, sem) is not None:
            return False, None
        cons = self.constraints[ci]
        for i, c in enumerate(cons):
            if not c.add(r.base_name, r.sub_name, d, did):
                if must:
                    raise self._constraint_error(r, did)
                for e in range(i):
                    cons[e].remove(r.base_name, r.sub_name, d, did)
                return False, None
        mark = not (multi and sem.code_consumable_capacity)
        if mark:
            self.allocating.setdefault(did, set()).add(ci)
        consumed = None
        if sem.consumable_capacity:
            ok, _ = (
                self._capacity_ok(r, *self._capacity_device_1_34(s, did, di))
                if sem.version == (1, 34)
                else self._capacity_ok(r, d, did)
            )
            if not ok:
                return False, None
            if multi:
                consumed = self._consumed(r, d, did)
                self._capacity_insert(did, consumed)
        res = {"request": r.name, "driver": did[0], "pool": did[1], "device": did[2], "_device": d, "_slice": s}
        if r.admin_access:
            res["adminAccess"] = True
        if consumed:
            res["consumedCapacity"] = consumed
        if multi:
            res["_shared"] = True
        results = self.results[ci]
        n = len(results)
        results.append(res)

        def undo():
            for c in cons:
                c.remove(r.base_name, r.sub_name, d, did)
            self.allocating.get(did, set()).discard(ci)
            if multi:
                self._capacity_remove(did, consumed or {})
            elif sem.partitionable and consumes:
                self._release_counters(d, s, pool)
            del results[n:]

        return True, undo

    def _capacity_device_1_34(self, s: dict, did, di: int) -> tuple[dict, DeviceID]:
        """1.34's allocateDevice (DRAConsumableCapacity on) checks the capacity of the wrong device:
        slice.Spec.Devices[i] with i = the position of the device within its request, not the candidate
        itself (fixed in 1.35). Where i is past the end of the slice kube-scheduler 1.34 panics."""
        devices = _slice_spec(s).get("devices") or []
        if di >= len(devices):
            raise AllocationError(
                f"kube-scheduler 1.34 would crash here: runtime error: index out of range [{di}] with length "
                f"{len(devices)} (upstream bug in its DRAConsumableCapacity capacity check while allocating device "
                f"{device_id_str(did)}, fixed in 1.35)",
                kind=ErrorKind.UPSTREAM_CRASH,
                device=device_id_str(did),
            )
        wrong = devices[di]
        return wrong, (did[0], did[1], wrong.get("name", ""))

    # -- in-flight consumable capacity (ConsumedCapacityCollection Insert/Remove) ------------------
    def _capacity_insert(self, did, consumed: dict) -> None:
        agg = self.allocating_capacity.get(did)
        if agg is None:
            self.allocating_capacity[did] = dict(consumed)
            return
        for k, v in consumed.items():
            agg[k] = agg.get(k, 0) + v

    def _capacity_remove(self, did, consumed: dict) -> None:
        agg = self.allocating_capacity.get(did)
        if agg is None:
            return
        for k, v in consumed.items():
            if k in agg:
                agg[k] -= v
        if all(v == 0 for v in agg.values()):
            del self.allocating_capacity[did]

    # -- counters ----------------------------------------------------------------------------------
    def _counter_scope(self, s: dict, pool: Pool) -> tuple[str, dict, list]:
        if not self.sem.per_slice_counters:
            return pool.id, pool.counter_sets, pool.slices + pool.not_targeting
        sets, _ = _counter_sets_of([s])
        return f"{pool.id}/{_slice_name(s)}", sets, [s]

    def _reserve_counters(self, d: dict, s: dict, pool: Pool) -> bool:
        scope, sets, scope_slices = self._counter_scope(s, pool)
        avail = self.available_counters.get(scope)
        if avail is None:
            avail = {name: {k: _n(v) for k, v in cs.items()} for name, cs in sets.items()}
            for sl in scope_slices:
                spec = _slice_spec(sl)
                for dev in spec.get("devices") or []:
                    did = (spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""), dev.get("name", ""))
                    if not self.a.allocated.is_allocated(did):
                        continue
                    for cc in dev.get("consumesCounters") or []:
                        cs = avail.get(cc.get("counterSet", ""))
                        if cs is None:
                            continue
                        for name, c in (cc.get("counters") or {}).items():
                            if name in cs:
                                cs[name] -= _qty((c or {}).get("value", "0"))
            self.available_counters[scope] = avail
        consumed = self.consumed_counters.setdefault(scope, {})
        self._add_consumption(consumed, d, +1)
        for set_name, counters in avail.items():
            used = consumed.get(set_name, {})
            for cname, value in counters.items():
                if value < used.get(cname, 0):
                    self._add_consumption(consumed, d, -1)
                    return False
        return True

    def _release_counters(self, d: dict, s: dict, pool: Pool) -> None:
        scope, _, _ = self._counter_scope(s, pool)
        self._add_consumption(self.consumed_counters.setdefault(scope, {}), d, -1)

    @staticmethod
    def _add_consumption(consumed: dict, d: dict, sign: int) -> None:
        for cc in d.get("consumesCounters") or []:
            cs = consumed.setdefault(cc.get("counterSet", ""), {})
            for name, c in (cc.get("counters") or {}).items():
                cs[name] = cs.get(name, 0) + sign * _qty((c or {}).get("value", "0"))

    # -- result ------------------------------------------------------------------------------------
    def _result(self, ci: int) -> AllocationResult:
        claim = self.claims[ci]
        out = []
        for res in self.results[ci]:
            r = self._request_for(ci, res["request"])
            entry = {k: v for k, v in res.items() if not k.startswith("_")}
            if self.sem.version >= (1, 35) and r is not None and r.tolerations:
                entry["tolerations"] = r.tolerations
            d = res["_device"]
            if self.sem.binding_conditions and d.get("bindingConditions"):
                entry["bindingConditions"] = d.get("bindingConditions")
                entry["bindingFailureConditions"] = d.get("bindingFailureConditions")
            if res.get("_shared"):
                entry["shareID"] = "<generated>"
            out.append(entry)
        return AllocationResult(
            results=out, node_selector=self._node_selector(self.results[ci]), config=self._config(ci, claim)
        )

    def _request_for(self, ci: int, name: str) -> Request | None:
        for r in self.requests.values():
            if r.claim_index == ci and r.name == name:
                return r
        return None

    def _node_selector(self, results: list[dict]) -> dict | None:
        fields: list[dict] = []
        exprs: list[dict] = []
        node_name = (self.node.get("metadata") or {}).get("name", "")
        for res in results:
            s, d = res["_slice"], res["_device"]
            spec = _slice_spec(s)
            if spec.get("perDeviceNodeSelection"):
                nn, ns = d.get("nodeName"), d.get("nodeSelector")
            else:
                nn, ns = spec.get("nodeName"), spec.get("nodeSelector")
            if nn or d.get("bindsToNode"):
                return {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                    ]
                }
            if ns is not None:
                terms = ns.get("nodeSelectorTerms") or []
                if len(terms) > 1:
                    raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
                if terms:
                    for src, dst in (
                        (terms[0].get("matchFields") or [], fields),
                        (terms[0].get("matchExpressions") or [], exprs),
                    ):
                        for req in src:
                            if not any(
                                e.get("key") == req.get("key")
                                and e.get("operator") == req.get("operator")
                                and set(e.get("values") or []) == set(req.get("values") or [])
                                for e in dst
                            ):
                                dst.append(req)
        if fields or exprs:
            term = {}
            if exprs:
                term["matchExpressions"] = exprs
            if fields:
                term["matchFields"] = fields
            return {"nodeSelectorTerms": [term]}
        return None

    def _config(self, ci: int, claim: dict) -> list:
        out: list[dict] = []
        reqs = claim_requests(claim)
        by_class: dict[str, tuple[int, int]] = {}
        for ri, _ in enumerate(reqs):
            r = self.requests.get((ci, ri, -1)) or self.requests.get((ci, ri, self.selected_sub.get((ci, ri), 0)))
            if r is None or r.class_obj is None:
                continue
            cname = r.class_name
            if cname in by_class:
                a, b = by_class[cname]
                for i in range(a, b):
                    out[i]["requests"].append(r.name)
                continue
            start = len(out)
            for cfg in (r.class_obj.get("spec") or {}).get("config") or []:
                out.append(dict(cfg, source="FromClass", requests=[r.name]))
            by_class[cname] = (start, len(out))
        for cfg in ((claim.get("spec") or {}).get("devices") or {}).get("config") or []:
            wanted = cfg.get("requests") or []
            if not wanted:
                out.append(dict(cfg, source="FromClaim"))
                continue
            for ri, req in enumerate(reqs):
                if req.get("name") in wanted:
                    out.append(dict(cfg, source="FromClaim"))
                    continue
                if (ci, ri) in self.selected_sub:
                    sub = (req.get("firstAvailable") or [])[self.selected_sub[(ci, ri)]]
                    if f"{req.get('name')}/{sub.get('name')}" in wanted:
                        out.append(dict(cfg, source="FromClaim"))
        return out


class _MaxSizeExceeded(Exception):
    pass


class _Constraint:
    def __init__(self, request_names: set, attribute: str):
        self.request_names = request_names
        self.attribute = attribute

    def state(self) -> tuple:
        """A hashable snapshot of what add() reads (see _Run._boundary_state)."""
        raise NotImplementedError

    def applies(self, base: str, sub: str) -> bool:
        if not self.request_names:
            return True
        if not sub:
            return base in self.request_names
        return base in self.request_names or f"{base}/{sub}" in self.request_names


class _MatchAttribute(_Constraint):
    def __init__(self, request_names, attribute):
        super().__init__(request_names, attribute)
        self.value = None
        self.num = 0

    def add(self, base, sub, d, did) -> bool:
        if not self.applies(base, sub):
            return True
        attr = lookup_attribute(d, did[0], self.attribute)
        if attr is None:
            return False
        v = _attr_value(attr)
        if self.num == 0:
            self.value, self.num = v, 1
            return True
        if v is None or self.value is None or v != self.value:
            return False
        self.num += 1
        return True

    def remove(self, base, sub, d, did) -> None:
        if self.applies(base, sub):
            self.num -= 1

    def state(self) -> tuple:
        return self.value, self.num


class _DistinctAttribute(_Constraint):
    """Upstream quirk kept on purpose: values are remembered per request name, overwritten per device."""

    def __init__(self, request_names, attribute):
        super().__init__(request_names, attribute)
        self.values: dict[str, tuple] = {}
        self.num = 0

    def add(self, base, sub, d, did) -> bool:
        if not self.applies(base, sub):
            return True
        attr = lookup_attribute(d, did[0], self.attribute)
        if attr is None:
            return False
        v = _attr_value(attr)
        if self.num == 0:
            self.values[base] = v
            self.num = 1
            return True
        if v is None:
            return False
        for other in self.values.values():
            if other is not None and other == v:
                return False
        self.values[base] = v
        self.num += 1
        return True

    def remove(self, base, sub, d, did) -> None:
        if self.applies(base, sub):
            self.values.pop(base, None)
            self.num -= 1

    def state(self) -> tuple:
        return tuple(self.values.items()), self.num


class _DistinctAttributePointers(_DistinctAttribute):
    """1.34 compares the attribute *pointers* (attribute.IntValue == attr.IntValue, fixed in 1.35 to
    compare values): only the very same device's attribute counts as a duplicate, i.e. a shareable
    device picked twice. Identity of the attribute object plays the pointer here."""

    def add(self, base, sub, d, did) -> bool:
        if not self.applies(base, sub):
            return True
        attr = lookup_attribute(d, did[0], self.attribute)
        if attr is None:
            return False
        if self.num and any(other is attr for other in self.values.values()):
            return False
        self.values[base] = attr
        self.num += 1
        return True

    def state(self) -> tuple:
        # the identity of the attribute object plays the pointer
        return tuple((k, id(v)) for k, v in self.values.items()), self.num


class _DistinctAttributeAll(_Constraint):
    """1.37: every affected device is compared with every device added before it."""

    def __init__(self, request_names, attribute):
        super().__init__(request_names, attribute)
        self.values: list = []

    def add(self, base, sub, d, did) -> bool:
        if not self.applies(base, sub):
            return True
        attr = lookup_attribute(d, did[0], self.attribute)
        if attr is None:
            return False
        v = _attr_value(attr)
        if self.values and (v is None or any(other is not None and other == v for other in self.values)):
            return False
        self.values.append(v)
        return True

    def remove(self, base, sub, d, did) -> None:
        if self.applies(base, sub):
            self.values.pop()

    def state(self) -> tuple:
        return tuple(self.values)


class _MatchAttributeSet(_Constraint):
    """DRAListTypeAttributes (1.37): the values of all devices must have a non-empty intersection;
    a stack of intersections so that remove() restores the previous one."""

    def __init__(self, request_names, attribute):
        super().__init__(request_names, attribute)
        self.stack: list[tuple[str, frozenset]] = []

    def add(self, base, sub, d, did) -> bool:
        if not self.applies(base, sub):
            return True
        attr = lookup_attribute(d, did[0], self.attribute)
        if attr is None:
            return False
        new = _attr_set(attr)
        if new is None:
            return False
        if self.stack:
            kind, values = self.stack[-1]
            if kind != new[0] or not (values & new[1]):
                return False
            new = (kind, values & new[1])
        self.stack.append(new)
        return True

    def remove(self, base, sub, d, did) -> None:
        if self.applies(base, sub):
            self.stack.pop()

    def state(self) -> tuple:
        return tuple(self.stack)


class _DistinctAttributeSet(_Constraint):
    """DRAListTypeAttributes (1.37): the values of the devices must be pairwise disjoint."""

    def __init__(self, request_names, attribute):
        super().__init__(request_names, attribute)
        self.values: list[tuple[str, frozenset] | None] = []

    def add(self, base, sub, d, did) -> bool:
        if not self.applies(base, sub):
            return True
        attr = lookup_attribute(d, did[0], self.attribute)
        if attr is None:
            return False
        new = _attr_set(attr)
        if new is None:
            return False
        if any(old is not None and old[0] == new[0] and old[1] & new[1] for old in self.values):
            return False
        self.values.append(new)
        return True

    def remove(self, base, sub, d, did) -> None:
        if self.applies(base, sub):
            self.values.pop()

    def state(self) -> tuple:
        return tuple(self.values)
