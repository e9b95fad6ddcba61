"""The requests of a claim as the allocator sees them (upstream: requestAccessors, the exactly/firstAvailable
split of allocator.go)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property


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


def request_alternatives(req: dict, ci: int, ri: int) -> list[Request]:
    """The Request of an `exactly` request, or one per `firstAvailable` subrequest in order (named `req/sub`)."""
    name = req.get("name", "")
    subs = req.get("firstAvailable") or []
    if subs:
        return [
            Request(
                ci,
                ri,
                si,
                f"{name}/{sub.get('name', '')}",
                name,
                sub.get("name", ""),
                sub,
                sub.get("deviceClassName") or "",
            )
            for si, sub in enumerate(subs)
        ]
    spec = req.get("exactly") or {}
    return [Request(ci, ri, -1, name, name, "", spec, spec.get("deviceClassName") or "")]
