"""ResourcePoolStatusRequests (KEP-5677, resource.k8s.io/v1alpha3, gate DRAResourcePoolStatus, alpha and off by
default through 1.38): upstream's own per-pool device counts, filled in by kube-controller-manager for the requests
that exist. `kubectl dra devices` shows them beside its own counts of the same pools, counted as the controller
counts them, and says where they differ (DRA023) or where kubectl-dra's own count is short of claims it could not
read (DRA106: upstream's count then bounds what is in use). It reads them only, never creates one (the tool is
read-only), and says nothing when the API is not served or not readable.

How the controller counts (pkg/controller/resourcepoolstatusrequest/controller.go, calculatePoolStatus, the same
in v1.37.2 and v1.38.0-beta.0), once, when the request is created (syncRequest skips a request with a status), so
its counts are as of its condition's lastTransitionTime:
  total        every device of the pool's slices at the pool's highest generation, whatever the allocator would make
               of them (ignored devices, invalid pools and node reachability do not matter)
  allocated    distinct devices of the pool named by an allocation result of any ResourceClaim, AdminAccess results
               left out; a shared device (allowMultipleAllocations) counts once; a device no slice publishes counts
  unavailable  devices at that generation with a NoSchedule or NoExecute taint of their own or from a
               DeviceTaintRule (deviceUnavailable); health, used-up counters and invalid pools do not count
  available    max(0, total - allocated - unavailable): a tainted allocated device is subtracted twice
An incomplete pool (fewer slices than resourceSliceCount) gets a validationError and no counts; a pool whose
partition or shareable view is inconsistent gets a validationError and its counts ("counts stay valid")."""

from __future__ import annotations

from kubectl_dra.findings.model import Finding, make
from kubectl_dra.model.meta import name_of
from kubectl_dra.model.snapshot import TAINT_RULES

COUNTS = ("total", "allocated", "available", "unavailable")
_UPSTREAM_FIELDS = ("totalDevices", "allocatedDevices", "availableDevices", "unavailableDevices")
_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
CLAIMS = "resourceclaims.resource.k8s.io"
SLICES = "resourceslices.resource.k8s.io"


def _int(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _generation(sl: dict) -> int:
    g = ((sl.get("spec") or {}).get("pool") or {}).get("generation")
    return g if isinstance(g, int) and not isinstance(g, bool) else 0


def _pool_of(sl: dict) -> tuple[str, str]:
    spec = sl.get("spec") or {}
    return spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")


def counts_as_upstream(slices, entries, state) -> dict[tuple[str, str], dict]:
    """(driver, pool) -> total, allocated, available, unavailable as the controller counts them (module docstring),
    from the same snapshot: slices the published ones, entries the universe's (their devices carry the
    DeviceTaintRules' taints), state the allocated claims (AllocatedState; the queue's estimates left out)."""
    newest: dict = {}
    for sl in slices:
        key = _pool_of(sl)
        newest[key] = max(newest.get(key, _generation(sl)), _generation(sl))
    out: dict = {}
    for e in entries:
        key = (e.did[0], e.did[1])
        if _generation(e.slice) != newest.get(key, 0):
            continue
        c = out.setdefault(key, dict.fromkeys(COUNTS, 0))
        c["total"] += 1
        if any(isinstance(t, dict) and t.get("effect") in _BLOCKING_EFFECTS for t in e.device.get("taints") or []):
            c["unavailable"] += 1
    for did, refs in state.owners.items():
        if any(r not in state.estimated for r in refs):
            out.setdefault((did[0], did[1]), dict.fromkeys(COUNTS, 0))["allocated"] += 1
    for c in out.values():
        c["available"] = max(0, c["total"] - c["allocated"] - c["unavailable"])
    return out


def _answer(status: dict) -> str:
    """What a request without per-pool counts is: pending (no status yet), failed, or answered with no pool."""
    if not status:
        return "pending"
    cond = next((c for c in status.get("conditions") or [] if isinstance(c, dict)), {})
    if cond.get("type") == "Failed":
        return "failed"
    return "no pool"


def upstream_pool_status(requests, ours: dict) -> list[dict]:
    """One entry per pool a request reports (or per request without per-pool counts), with kubectl-dra's counts of
    the same pool as the controller counts them (None when kubectl-dra sees none of its devices)."""
    out = []
    for rq in sorted(requests or (), key=name_of):
        spec, st = rq.get("spec") or {}, rq.get("status") or {}
        cond = next((c for c in st.get("conditions") or [] if isinstance(c, dict)), None)
        condition = (
            {k: cond.get(k) for k in ("type", "status", "reason", "message", "lastTransitionTime")} if cond else None
        )
        pools = [p for p in st.get("pools") or [] if isinstance(p, dict)]
        if not pools:
            key = (spec.get("driver"), spec.get("poolName"))
            out.append({"request": name_of(rq), "driver": key[0], "pool": key[1], "node": None, "answer": _answer(st),
                        "upstream": None, "condition": condition, "kubectlDra": ours.get(key)})  # fmt: skip
            continue
        for p in pools:
            key = (p.get("driver") or spec.get("driver"), p.get("poolName"))
            up = {k: _int(p.get(f)) for k, f in zip(COUNTS, _UPSTREAM_FIELDS, strict=True)}
            up["validationError"] = p.get("validationError")
            out.append({"request": name_of(rq), "driver": key[0], "pool": key[1], "node": p.get("nodeName"),
                        "answer": "counted" if up["total"] is not None else "no counts",
                        "upstream": up, "condition": condition, "kubectlDra": ours.get(key)})  # fmt: skip
    return out


def _pool_words(p: dict) -> str:
    return f"pool {p['driver']}/{p['pool']}" + (f" (node {p['node']})" if p.get("node") else "")


def _as_of(p: dict) -> str:
    when = (p.get("condition") or {}).get("lastTransitionTime")
    return f" as of {when}" if when else ""


def pool_status_findings(entries: list[dict], gaps) -> list[Finding]:
    """DRA023 per pool whose counts differ from upstream's, each count that differs with both numbers; DRA106 where
    kubectl-dra could not read every ResourceClaim and counts fewer allocated devices than upstream: not a
    disagreement, upstream's count bounds what is in use. A request without counts (pending, failed, an incomplete
    pool) is neither. gaps: the snapshot's (what could not be read)."""
    claims_gap = next((g for g in gaps if g.resource == CLAIMS), None)
    rules_unread = any(g.resource == TAINT_RULES for g in gaps)
    slices_read = not any(g.resource == SLICES for g in gaps)
    out = []
    for p in entries:
        up, ours = p["upstream"], p["kubectlDra"]
        if up is None or up["total"] is None or (ours is None and not slices_read):
            continue
        ours = ours or dict.fromkeys(COUNTS, 0)  # the slices were read and publish no device of the pool now
        skip = set()
        if claims_gap is not None:  # ours may be short of claims it could not read: fewer is no disagreement
            skip.add("available")
            if ours["allocated"] < (up["allocated"] or 0):
                skip.add("allocated")
        if rules_unread:
            skip |= {"unavailable", "available"}
        differ = [k for k in COUNTS if k not in skip and up[k] is not None and up[k] != ours[k]]
        subject = {"request": p["request"], "driver": p["driver"], "pool": p["pool"], "node": p["node"]}
        if differ:
            diffs = "; ".join(f"{k}: upstream {up[k]}, kubectl-dra {ours[k]}" for k in differ)
            invalid = f" (its validationError: {up['validationError']})" if up.get("validationError") else ""
            out.append(make("DRA023",
                            f"ResourcePoolStatusRequest {p['request']} counts {_pool_words(p)}{_as_of(p)} otherwise "
                            f"than kubectl-dra does now: {diffs}{invalid}",
                            subject=subject, upstream={k: up[k] for k in COUNTS},
                            kubectlDra=dict(ours), differ=differ))  # fmt: skip
        if claims_gap is not None and "allocated" in skip:
            if claims_gap.reason == "absent":
                why = "the input holds no ResourceClaim"
            else:
                why = f"it may not list them in {f'namespace {claims_gap.namespace}' if claims_gap.namespace else 'every namespace'}"
            out.append(make("DRA106",
                            f"{_pool_words(p)}: kubectl-dra counts {ours['allocated']} of {ours['total']} devices "
                            f"allocated in the ResourceClaims it could read ({why}); "
                            f"ResourcePoolStatusRequest {p['request']} counted {up['allocated']} allocated and "
                            f"{up['available']} available of {up['total']}{_as_of(p)}: that bounds what is in use",
                            subject=subject, upstream={k: up[k] for k in COUNTS},
                            kubectlDra=dict(ours)))  # fmt: skip
    return out
