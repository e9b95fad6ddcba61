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


def qualified(name: str, driver: str) -> str:
    """draapi.MakeFullyQualifiedName: an unqualified capacity name is the driver's."""
    return name if "/" in name else f"{driver}/{name}"


def resolve(request_caps: dict | None, device: dict, driver: str | None) -> tuple[bool, dict | None, dict, dict]:
    """1.38 (Behaviour.qualified_capacity_names, driver given): the request's capacities and the device's, both keyed
    by the device's own spelling of each capacity, as resolveCapacityRequests meets them after the slice's
    conversion (of `x` and `<driver>/x` on one device the qualified entry wins). Returns (missing, requests,
    capacities, error names): missing when a request names a capacity the device lacks; error names maps each key
    to the name the errors print (fully qualified from 1.38). Raises CapacityNotRepresentable for a capacity requested both ways.
    Without a driver (1.34-1.37) names must match exactly and nothing is renamed."""
    caps = device.get("capacity") or {}
    if driver is None:
        missing = bool(request_caps) and any(n not in caps for n in request_caps)
        return missing, request_caps, caps, {n: n for n in caps}
    by_fq: dict[str, str] = {}
    for name in caps:
        fq = qualified(name, driver)
        if fq not in by_fq or "/" in name:
            by_fq[fq] = name
    dev_caps = {name: caps[name] for name in by_fq.values()}
    asked: dict[str, str] = {}
    out: dict = {}
    for name, q in (request_caps or {}).items():
        fq = qualified(name, driver)
        if fq not in by_fq:
            return True, None, dev_caps, {}
        if fq in asked:  # the identifier, then the spelling met second, then the other one
            ident = fq.rpartition("/")[2]
            other = ident if name == fq else fq
            raise CapacityNotRepresentable(f'capacity "{ident}" requested both as "{name}" and as "{other}"')
        asked[fq] = name
        out[by_fq[fq]] = q
    return False, (out if request_caps is not None else None), dev_caps, {n: fq for fq, n in by_fq.items()}


def consumed_capacity(
    request_caps: dict | None,
    device: dict,
    fractional: bool = False,
    aborts: bool = False,
    driver: str | None = None,
) -> dict | None:
    """calculateConsumedCapacity for every capacity of the device; None if a requested capacity is missing.
    fractional: the allocator's FractionalCapacityRange feature (1.37); aborts: Behaviour.capacity_errors_abort
    (1.37); driver: the device's driver when names resolve to fully-qualified ones (1.38, see resolve()). Raises
    CapacityNotRepresentable where 1.37 aborts the allocation. Keys are the device's spelling."""
    missing, request_caps, caps, shown = resolve(request_caps, device, driver)
    if missing:
        return None
    out = {}
    for name, cap in caps.items():
        policy = cap.get("requestPolicy")
        requested = (request_caps or {}).get(name)
        if driver is not None and requested is not None and parse_quantity(requested) < 0:
            # 1.38 refuses a negative request before rounding, naming the capacity fully qualified
            raise CapacityNotRepresentable(
                f'capacity "{shown[name]}": capacity value is negative: request {_text(requested)}'
            )
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
                    raise _not_representable(shown[name], f"request {requested} is not a representable milli value")
                step_m = _value(parse_quantity(vr["step"]) * 1000)
                mn_m = _value(mn * 1000)
                added = req_m - mn_m
                n = added // step_m + (1 if added % step_m else 0)
                if aborts and n > _go_div(_INT64_MAX - mn_m, step_m):
                    raise _not_representable(
                        shown[name],
                        f"rounding request {_text(requested)} up to the next step passes the milli-value range",
                    )
                out[name] = Fraction(mn_m + step_m * n, 1000)
            else:
                if aborts and req > _INT64_MAX:
                    raise _not_representable(shown[name], f"request {_text(requested)} exceeds MaxInt64")
                step = _value(parse_quantity(vr["step"]))
                mn_i = _value(mn)
                added = _value(req) - mn_i
                n = added // step + (1 if added % step else 0) if step else 0
                if aborts and step and mn_i >= 0 and n > _go_div(_INT64_MAX - mn_i, step):
                    raise _not_representable(
                        shown[name], f"rounding request {_text(requested)} up to the next step passes MaxInt64"
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
    request_caps, device: dict, fractional: bool = False, aborts: bool = False, driver: str | None = None
) -> str | list[tuple[str, Fraction, Fraction]]:
    """The part of CmpRequestOverCapacity that depends only on the request and the device: a reason
    string when the request can never fit, else per capacity (name, amount one allocation consumes, total).
    Raises CapacityNotRepresentable where 1.37 aborts the allocation: every capacity is resolved first, so an
    abort never depends on which capacity a soft rejection comes from. driver: see resolve() (1.38)."""
    missing, resolved_caps, caps, shown = resolve(request_caps, device, driver)
    if missing:
        names = [
            n
            for n in request_caps
            if (qualified(n, driver) if driver else n) not in ({qualified(c, driver) for c in caps} if driver else caps)
        ]
        return f"device has no capacity {names[0] if names else next(iter(request_caps))}"
    resolved = []
    for name, cap in caps.items():
        requested = (resolved_caps or {}).get(name)
        one = (
            consumed_capacity(
                {name: requested} if requested is not None else None, {"capacity": {name: cap}}, fractional, aborts
            )[name]
            if driver is None
            else _one(name, cap, requested, shown[name], fractional, aborts)
        )
        if aborts and one < 0:
            raise CapacityNotRepresentable(f'capacity "{shown[name]}": capacity value is negative')
        resolved.append((name, cap, requested, one))
    out = []
    for name, cap, requested, one in resolved:
        if violates_policy(one, cap.get("requestPolicy"), fractional):
            return f"capacity {name}: {requested} violates the device's request policy"
        out.append((name, _n(one), _qty(cap.get("value", "0"))))
    return out


def _one(name: str, cap: dict, requested, fq: str, fractional: bool, aborts: bool) -> Fraction:
    """One capacity's consumed amount with 1.38's names: the errors print the fully-qualified name fq."""
    if requested is not None and parse_quantity(requested) < 0:
        raise CapacityNotRepresentable(f'capacity "{fq}": capacity value is negative: request {_text(requested)}')
    try:
        got = consumed_capacity(
            {name: requested} if requested is not None else None, {"capacity": {name: cap}}, fractional, aborts
        )
    except CapacityNotRepresentable as e:
        raise CapacityNotRepresentable(str(e).replace(f'capacity "{name}"', f'capacity "{fq}"', 1)) from None
    return got[name]


def _used(amounts: dict | None, name: str, driver: str | None) -> Fraction:
    """What earlier allocations consumed of the capacity: by its name, or from 1.38 by its fully-qualified name
    (AllocatedState is keyed that way then, allocations in flight by the device's spelling)."""
    if not amounts:
        return 0
    if driver is None:
        return amounts.get(name, 0)
    fq = qualified(name, driver)
    return sum((v for k, v in amounts.items() if qualified(k, driver) == fq), 0)


def capacity_fits(
    request_caps,
    device: dict,
    already: dict | None,
    allocating: dict | None,
    demand: str | list | None = None,
    fractional: bool = False,
    aborts: bool = False,
    driver: str | None = None,
) -> tuple[bool, str]:
    """CmpRequestOverCapacity. Returns (fits, reason). demand: capacity_demand(...), if already computed."""
    if demand is None:
        demand = capacity_demand(request_caps, device, fractional, aborts, driver)
    if isinstance(demand, str):
        return False, demand
    for name, one, total in demand:
        used = _used(already, name, driver) + _used(allocating, name, driver)
        if one + used > total:
            from kubectl_dra.quantity import format_quantity as fq

            return False, f"capacity {name}: needs {fq(one)}, {fq(max(total - used, Fraction(0)))} of {fq(total)} left"
    return True, ""
