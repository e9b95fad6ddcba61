"""What is already allocated (upstream: AllocatedState, built by the scheduler from its claim cache)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from kubectl_dra.analyze.allocator.common import DeviceID, _qty, obj_ref
from kubectl_dra.features import Semantics


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
