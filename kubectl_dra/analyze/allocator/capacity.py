"""Consumable capacity (upstream: structured/internal/*/consumable_capacity.go): consumed amounts, request
policies, what still fits."""

from __future__ import annotations

from fractions import Fraction

from kubectl_dra.analyze.allocator.common import _n, _qty
from kubectl_dra.quantity import format_quantity, parse_quantity


class CapacityNotRepresentable(Exception):
    """errCapacityRequestNotRepresentable or errNegativeCapacity (1.37): the allocator aborts instead of skipping
    the device."""


def _not_representable(name: str, why: str) -> CapacityNotRepresentable:
    return CapacityNotRepresentable(
        f'capacity "{name}": capacity request cannot be represented in the device\'s range arithmetic: {why}'
    )


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


def consumed_capacity(
    request_caps: dict | None, device: dict, fractional: bool = False, aborts: bool = False
) -> dict | None:
    """calculateConsumedCapacity for every capacity of the device; None if a requested capacity is missing.
    fractional: the allocator's FractionalCapacityRange feature (1.37); aborts: Behaviour.capacity_errors_abort
    (1.37). Raises CapacityNotRepresentable where 1.37 aborts the allocation."""
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
                    raise _not_representable(name, f"request {requested} is not a representable milli value")
                step_m = _value(parse_quantity(vr["step"]) * 1000)
                mn_m = _value(mn * 1000)
                added = req_m - mn_m
                n = added // step_m + (1 if added % step_m else 0)
                if aborts and n > _go_div(_INT64_MAX - mn_m, step_m):
                    raise _not_representable(
                        name,
                        f"rounding request {_text(requested)} up to the next step passes the milli-value range",
                    )
                out[name] = Fraction(mn_m + step_m * n, 1000)
            else:
                if aborts and req > _INT64_MAX:
                    raise _not_representable(name, f"request {_text(requested)} exceeds MaxInt64")
                step = _value(parse_quantity(vr["step"]))
                mn_i = _value(mn)
                added = _value(req) - mn_i
                n = added // step + (1 if added % step else 0) if step else 0
                if aborts and step and mn_i >= 0 and n > _go_div(_INT64_MAX - mn_i, step):
                    raise _not_representable(
                        name, f"rounding request {_text(requested)} up to the next step passes MaxInt64"
                    )
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


def _text(requested) -> str:
    """The request as Quantity.String() shows it: the text it was parsed from."""
    return requested if isinstance(requested, str) else format_quantity(parse_quantity(requested))


def _go_div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


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


def capacity_demand(
    request_caps, device: dict, fractional: bool = False, aborts: bool = False
) -> str | list[tuple[str, Fraction, Fraction]]:
    """The part of CmpRequestOverCapacity that depends only on the request and the device: a reason
    string when the request can never fit, else per capacity (name, amount one allocation consumes, total).
    Raises CapacityNotRepresentable where 1.37 aborts the allocation: every capacity is resolved first, so an
    abort never depends on which capacity a soft rejection comes from."""
    caps = device.get("capacity") or {}
    if request_caps:
        missing = [n for n in request_caps if n not in caps]
        if missing:
            return f"device has no capacity {missing[0]}"
    resolved = []
    for name, cap in caps.items():
        requested = (request_caps or {}).get(name)
        one = consumed_capacity(
            {name: requested} if requested is not None else None, {"capacity": {name: cap}}, fractional, aborts
        )[name]
        if aborts and one < 0:
            raise CapacityNotRepresentable(f'capacity "{name}": capacity value is negative')
        resolved.append((name, cap, requested, one))
    out = []
    for name, cap, requested, one in resolved:
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
    aborts: bool = False,
) -> tuple[bool, str]:
    """CmpRequestOverCapacity. Returns (fits, reason). demand: capacity_demand(...), if already computed."""
    if demand is None:
        demand = capacity_demand(request_caps, device, fractional, aborts)
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
