"""DRA409: the values a claim's constraints compare, over the candidate devices of the requests they name, a
request's derived attribute (DRADerivedAttributes, allocator/derived.py) in place of the device's own where the
request defines one of that name."""

from __future__ import annotations

from kubectl_dra.analyze.allocator import AllocationError, attribute_value, lookup_attribute, obj_ref
from kubectl_dra.analyze.allocator.derived import DerivedValues, derived_attributes
from kubectl_dra.analyze.pod.claims import name_of as _name
from kubectl_dra.analyze.pod.dryrun_result import ClaimAnalysis
from kubectl_dra.findings.model import Finding, make


def constraint_findings(a: ClaimAnalysis, ev=None) -> list[Finding]:
    """Show the values the claim's constraints compare, over the candidate devices of the affected requests (ev: the
    analysis's SelectorEvaluator, which evaluates derived attributes)."""
    out = []
    requests = {r.name: r for alts in a.requests for r in alts}
    derived = DerivedValues(ev) if ev is not None else None
    for i, con in enumerate(((a.claim.get("spec") or {}).get("devices") or {}).get("constraints") or []):
        attr = con.get("matchAttribute") or con.get("distinctAttribute")
        if not attr:
            continue
        kind = "matchAttribute" if con.get("matchAttribute") else "distinctAttribute"
        wanted = set(con.get("requests") or [])
        values = {}
        for rname, m in a.matrices.items():
            base = rname.split("/", 1)[0]
            if wanted and base not in wanted and rname not in wanted:
                continue
            r = requests.get(rname)
            expr = derived_attributes(r).get(attr) if r is not None and derived is not None else None
            for v in m:
                if v.outcome not in ("candidate", "selected"):
                    continue
                if expr is not None:
                    try:
                        found = derived.value(attr, expr, v.entry.device, v.entry.did)
                    except AllocationError as e:
                        values[v.entry.id] = f"<{e.message}>"
                        continue
                else:
                    found = lookup_attribute(v.entry.device, v.entry.did[0], attr)
                val = attribute_value(found) if found else None
                values[v.entry.id] = "<missing>" if val is None else str(val[1])
        shown = ", ".join(f"{k}={val}" for k, val in list(values.items())[:8])
        out.append(
            make(
                "DRA409",
                f"claim {_name(a.claim)} constraint #{i} ({kind} {attr}) cannot be met by the "
                f"candidate devices: {shown or 'none'}",
                subject={"claim": obj_ref(a.claim), "constraint": i},
                attribute=attr,
                kind=kind,
                values=values,
            )
        )
    return out
