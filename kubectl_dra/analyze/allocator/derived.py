"""Derived attributes (DRADerivedAttributes, alpha in 1.37 and 1.38; upstream: allocator_<channel>.go
validateDeviceRequest and lookupAttribute, dynamic-resource-allocation/cel EvaluateDerivedAttribute).

A request (or subrequest) may define `derivedAttributes`: a name and a CEL expression evaluated on a candidate
device. The allocator uses them only in the claim's constraints: a matchAttribute or distinctAttribute naming one
reads the expression's value for the device (once per device and expression), in place of the device's own attribute
of that name. Any channel without the feature (the gate off, or a channel that lacks it) refuses such a request when
it validates it. A compile error, a runtime error, or a value that is no attribute aborts the allocation."""

from __future__ import annotations

from dataclasses import replace

from kubectl_dra.analyze.allocator.common import AllocationError, ErrorKind, device_id_str
from kubectl_dra.analyze.allocator.requests import Request
from kubectl_dra.features import Semantics

NOT_DERIVED = object()


def derived_attributes(r: Request) -> dict[str, str]:
    """Name -> expression, the last definition of a name winning (a Go map filled in order); 1.37+ fields only."""
    return {a.get("name", ""): a.get("expression", "") for a in r.spec.get("derivedAttributes") or []}


def check_derived_allowed(sem: Semantics, r: Request, claim_ref: str) -> None:
    """validateDeviceRequest's first check (1.37+, every channel)."""
    if sem.version < (1, 37) or not r.spec.get("derivedAttributes"):
        return
    if not sem.derived_attributes:
        raise AllocationError(
            f"claim {claim_ref}, request {r.sub_name or r.base_name}: cannot handle request with derived attributes, "
            "the feature is disabled",
            kind=ErrorKind.FEATURE_DISABLED,
        )


class DerivedValues:
    """lookupAttribute's derived half for one allocation: the value of a derived attribute for a device, cached per
    (device, expression) as derivedAttributesCache is."""

    def __init__(self, evaluator):
        self.ev = evaluator
        self.cache: dict[tuple, dict] = {}

    def provider(self, r: Request):
        """None when the request defines no derived attributes, else name, device, ID -> the attribute as a slice
        publishes one, or NOT_DERIVED for a name the request does not define."""
        defined = derived_attributes(r) if r.spec.get("derivedAttributes") else None
        if not defined:
            return None

        def lookup(name: str, d: dict, did) -> dict | object:
            expr = defined.get(name)
            if expr is None:
                return NOT_DERIVED
            return self.value(name, expr, d, did)

        return lookup

    def value(self, name: str, expr: str, d: dict, did) -> dict:
        key = (did, expr)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        from kubectl_dra.cel import CelCompileError
        from kubectl_dra.cel._derived import SEMVER_BUILD

        try:
            compiled = self.ev.env.compile(expr, derived=True)
        except CelCompileError as e:
            raise AllocationError(f"compile derived attribute {name} failed: {e}", kind=ErrorKind.CEL_COMPILE) from None
        res = compiled.evaluate(self.ev.cel_device(did, d))
        if res.error is None and res.build_dropped and not self.ev.sem.behaviour.attributes_converted_once:
            res = replace(res, error=SEMVER_BUILD, exact=False)  # 1.37 compares the strings, build included
        if res.error is not None and not res.exact:  # the local engine's limit, not Kubernetes' answer: open
            raise AllocationError(
                f"derived attribute {name} on device {device_id_str(did)}: {res.error}",
                kind=ErrorKind.INEXACT,
                device=device_id_str(did),
            )
        if res.error is not None:
            raise AllocationError(
                f"evaluate derived attribute {name} on device {device_id_str(did)} failed: "
                f"{getattr(res, 'device_matches_error', None) or res.error}",
                kind=ErrorKind.CEL_RUNTIME,
                device=device_id_str(did),
            )
        self.cache[key] = res.value
        return res.value
