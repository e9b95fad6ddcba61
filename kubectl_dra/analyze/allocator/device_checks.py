"""The per-device checks of one allocation run (upstream: allocator_<channel>.go isSelectable, selectorsMatch, and
the consumable-capacity checks of allocateDevice): whether a device is in use, passes its class's and request's CEL
selectors and per-device node selection, and has the capacity a request asks for. A mixin of search.py's _Run,
whose state (the allocator, the caches, what is being allocated) it reads."""

from __future__ import annotations

from kubectl_dra.analyze.allocator.capacity import (
    CapacityNotRepresentable,
    capacity_demand,
    capacity_fits,
    consumed_capacity,
)
from kubectl_dra.analyze.allocator.common import AllocationError, DeviceID, ErrorKind, _n, device_id_str, obj_ref
from kubectl_dra.analyze.allocator.pools import slice_spec
from kubectl_dra.analyze.allocator.requests import Request
from kubectl_dra.analyze.allocator.selection import selector_expression
from kubectl_dra.model.nodes import NodeSelectorError, node_matches


class DeviceChecks:
    """The checks allocateDevice runs on one device for one request (search.py _Run's)."""

    def _in_use(self, did: DeviceID) -> bool:
        return did in self.a.allocated.devices or bool(self.allocating.get(did))

    def _consumed(self, r: Request, d: dict, did: DeviceID) -> dict:
        """What one allocation of the device for the request consumes (a fresh dict, callers keep it)."""
        key = (r.claim_index, r.request_index, r.sub_index, did)
        c = self.consumed_cache.get(key)
        if c is None:
            c = consumed_capacity(r.capacity_requests, d, self.fractional, self.capacity_aborts, self._cap_driver(did))
            c = c or {}
            c = self.consumed_cache[key] = {k: _n(v) for k, v in c.items()}
        return dict(c)

    def _capacity_ok(self, r: Request, d: dict, did: DeviceID) -> tuple[bool, str]:
        key = (r.claim_index, r.request_index, r.sub_index, did)
        demand = self.demand_cache.get(key)
        if demand is None:
            try:
                demand = self.demand_cache[key] = capacity_demand(
                    r.capacity_requests, d, self.fractional, self.capacity_aborts, self._cap_driver(did)
                )
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
            driver=self._cap_driver(did),
        )

    def _cap_driver(self, did: DeviceID) -> str | None:
        """The driver that unqualified capacity names belong to (1.38, Behaviour.qualified_capacity_names)."""
        return did[0] if self.sem.behaviour.qualified_capacity_names else None

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
        if slice_spec(s).get("perDeviceNodeSelection"):
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
            compiled, cerr = ev.compile(expr)
            if compiled is not None:
                res = ev.result(compiled, expr, did, d)
                if res.error is None:
                    if not res.value:
                        return False
                    continue
            where = (  # (only for the errors below: the common path above builds no text)
                f"class {(cls.get('metadata') or {}).get('name', '')}"
                if cls is not None
                else f"claim {obj_ref(self.claims[r.claim_index])}"
            )
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
            # res: the error the evaluation above met
            if not getattr(res, "exact", True):
                raise AllocationError(
                    f"{where}: selector #{i} on device {device_id_str(did)}: {res.error}",
                    kind=ErrorKind.INEXACT,
                    selector=i,
                    expression=expr,
                    device=device_id_str(did),
                    cel_error=res.error,
                )
            on = f" on device {device_id_str(did)}" if self.sem.behaviour.cel_error_names_device else ""
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
        return True
