"""ResourcePoolStatusRequests (KEP-5677, resource.k8s.io/v1alpha3, gate DRAResourcePoolStatus, alpha and off by
default through 1.38): upstream's own per-pool device counts, filled in by kube-controller-manager for the requests
that exist. `kubectl dra devices` shows them beside its own counts of the same pools; it reads them only, never
creates one (the tool is read-only), and says nothing when the API is not served or not readable."""

from __future__ import annotations

from kubectl_dra.model.meta import name_of

# kubectl-dra's device states as upstream's four counts see them
_ALLOCATED = ("allocated", "shared")
_UNAVAILABLE = ("tainted", "unhealthy", "unusable", "exhausted")


def _int(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def ours_by_pool(rows) -> dict[tuple[str, str], dict]:
    out: dict = {}
    for r in rows:
        c = out.setdefault((r.driver, r.pool), {"total": 0, "allocated": 0, "free": 0, "unavailable": 0})
        c["total"] += 1
        if r.state in _ALLOCATED:
            c["allocated"] += 1
        elif r.state in _UNAVAILABLE:
            c["unavailable"] += 1
        else:
            c["free"] += 1
    return out


def upstream_pool_status(requests, rows) -> list[dict]:
    """One entry per pool a request reports (or per request without a status yet), with kubectl-dra's counts of
    the same pool (None when none of the listed devices is in it)."""
    if not requests:
        return []
    ours = ours_by_pool(rows)
    out = []
    for rq in sorted(requests, key=name_of):
        spec, st = rq.get("spec") or {}, rq.get("status") or {}
        cond = next(iter(st.get("conditions") or []), None) or {}
        pools = [p for p in st.get("pools") or [] if isinstance(p, dict)]
        if not pools:
            out.append(
                {
                    "request": name_of(rq),
                    "driver": spec.get("driver"),
                    "pool": spec.get("poolName"),
                    "node": None,
                    "upstream": None,
                    "condition": {k: cond.get(k) for k in ("type", "status", "reason", "message")} if cond else None,
                    "kubectlDra": ours.get((spec.get("driver"), spec.get("poolName"))),
                }
            )
            continue
        for p in pools:
            key = (p.get("driver") or spec.get("driver"), p.get("poolName"))
            out.append(
                {
                    "request": name_of(rq),
                    "driver": key[0],
                    "pool": key[1],
                    "node": p.get("nodeName"),
                    "upstream": {
                        "total": _int(p.get("totalDevices")),
                        "allocated": _int(p.get("allocatedDevices")),
                        "available": _int(p.get("availableDevices")),
                        "unavailable": _int(p.get("unavailableDevices")),
                        "validationError": p.get("validationError"),
                    },
                    "condition": None,
                    "kubectlDra": ours.get(key),
                }
            )
    return out
