"""Binding conditions (KEP-5007): an allocated device that must become ready before the pod is bound.

upstream: pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go, PreBind → bindClaim /
isClaimReadyForBinding / isClaimTimeout. The scheduler allocates the claim, emits `BindingConditionsPending`, then
polls until every bindingCondition of every result is True in the claim's `status.devices[]` entry for that device
(written by the driver's controller), fails as soon as one of the bindingFailureConditions is True, and gives up
after the binding timeout (counted from `allocation.allocationTimestamp`). On failure or timeout it deallocates the
claim and tries again from the start."""

from __future__ import annotations

from datetime import datetime

from kubectl_dra.analyze.allocator import obj_ref
from kubectl_dra.analyze.pod.claims import name_of
from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import Finding, make

# DynamicResourcesArgs.bindingTimeout default (BindingTimeoutDefaultSeconds in 1.34, the args default since 1.35).
BINDING_TIMEOUT_SECONDS = 600


def parse_time(text) -> datetime | None:
    if not text or not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def device_status(claim: dict, result: dict) -> dict | None:
    """The claim's status.devices entry of one allocation result (driver, pool, device, share), or None."""
    for d in (claim.get("status") or {}).get("devices") or []:
        if not isinstance(d, dict):
            continue
        if (d.get("driver"), d.get("pool"), d.get("device")) != (
            result.get("driver"),
            result.get("pool"),
            result.get("device"),
        ):
            continue
        if (d.get("shareID") or None) != (result.get("shareID") or None):
            continue
        return d
    return None


def status_conditions(status: dict | None) -> dict[str, dict]:
    """A device status's conditions by type (malformed entries skipped)."""
    out = {}
    for c in (status or {}).get("conditions") or []:
        if isinstance(c, dict) and isinstance(c.get("type"), str):
            out[c["type"]] = c
    return out


def _describe(cond: dict | None) -> str:
    if cond is None:
        return "not reported"
    st = cond.get("status")
    if st is None or st == "":
        return "reported without a status"
    extra = "".join(f", {k} {cond[k]!r}" for k in ("reason", "message") if cond.get(k))
    return f"{st}{extra}"


# long: one pass over an allocated claim's states (reserved, deallocating, binding conditions) in the kubelet's order
def binding_findings(
    claims: list[dict], pod: dict, sem: Semantics, observed_at: str | None, events: list[dict] = ()
) -> list[Finding]:
    """Findings for the pod's allocated claims whose devices wait for (or failed) their binding conditions.

    Only while the pod is not bound: once `spec.nodeName` is set the conditions were met. Earlier attempts that
    failed or timed out (the scheduler's PreBind events) are counted in the message."""
    if (pod.get("spec") or {}).get("nodeName") or not sem.binding_conditions:
        return []
    earlier = [e for e in events if e.get("reason") == "FailedScheduling" and _binding_error(e.get("message") or "")]
    history = ""
    if earlier:
        kinds = sorted({"timeout" if _binding_error(e["message"]) == "DRA423" else "failure" for e in earlier})
        history = (
            f"; the scheduler already gave up {len(earlier)} time(s) ({' and '.join(kinds)}, last at "
            f"{earlier[-1].get('time')}) and tried again"
        )
    now = parse_time(observed_at)
    out: list[Finding] = []
    for claim in claims:
        alloc = (claim.get("status") or {}).get("allocation") or {}
        started = parse_time(alloc.get("allocationTimestamp"))
        waited = int((now - started).total_seconds()) if now and started else None
        for r in (alloc.get("devices") or {}).get("results") or []:
            if not isinstance(r, dict) or not r.get("bindingConditions"):
                continue
            dev = f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}"
            status = device_status(claim, r)
            conds = status_conditions(status)
            subject = {"claim": obj_ref(claim), "device": dev, "request": r.get("request")}
            evidence = {
                "bindingConditions": {t: _describe(conds.get(t)) for t in r.get("bindingConditions") or []},
                "bindingFailureConditions": {
                    t: _describe(conds.get(t)) for t in r.get("bindingFailureConditions") or []
                },
                "allocationTimestamp": alloc.get("allocationTimestamp"),
                "waitedSeconds": waited,
                "timeoutSeconds": BINDING_TIMEOUT_SECONDS,
            }
            failed = [
                t for t in r.get("bindingFailureConditions") or [] if (conds.get(t) or {}).get("status") == "True"
            ]
            if failed:
                c = conds[failed[0]]
                out.append(
                    make(
                        "DRA422",
                        f"device {dev} of claim {name_of(claim)} failed to bind: condition "
                        f"{failed[0]} is True (reason {c.get('reason') or '<none>'}, message "
                        f"{c.get('message') or ''!r}); the scheduler deallocates the claim and "
                        "tries again",
                        subject=subject,
                        **evidence,
                    )
                )
                continue
            pending = [t for t in r.get("bindingConditions") or [] if (conds.get(t) or {}).get("status") != "True"]
            if not pending:
                continue
            where = ", ".join(f"{t} ({_describe(conds.get(t))})" for t in pending)
            if waited is not None and waited > BINDING_TIMEOUT_SECONDS:
                out.append(
                    make(
                        "DRA423",
                        f"device {dev} of claim {name_of(claim)} has waited {waited}s for binding "
                        f"condition(s) {where}, longer than the {BINDING_TIMEOUT_SECONDS}s binding "
                        "timeout: the scheduler deallocates the claim and tries again",
                        subject=subject,
                        **evidence,
                    )
                )
                continue
            so_far = (
                f"waited {waited}s of {BINDING_TIMEOUT_SECONDS}s"
                if waited is not None
                else f"allocated at {alloc.get('allocationTimestamp') or '<unknown>'}, timeout "
                f"{BINDING_TIMEOUT_SECONDS}s"
            )
            out.append(
                make(
                    "DRA421",
                    f"device {dev} of claim {name_of(claim)} waits for binding condition(s) "
                    f"{where}, set by the {r.get('driver')} driver's controller; {so_far}{history}",
                    subject=subject,
                    earlierAttempts=len(earlier),
                    **evidence,
                )
            )
    return out


def unseen_binding_findings(snap, picks) -> list[Finding]:
    """DRA104 when the input holds no Events and devices the dry-run picks (its claims' results) have
    bindingConditions: the scheduler waits in PreBind for them, and only its events tell whether its last wait
    failed or timed out (prebind_failure)."""
    unseen = snap.absent("events")
    if unseen is None:
        return []
    wanted = {(r.get("driver"), r.get("pool"), r.get("device")) for entry in picks for r in entry.results}
    out = []
    for sl in snap.slices:
        spec = sl.get("spec") or {}
        driver, pool = spec.get("driver"), (spec.get("pool") or {}).get("name")
        for d in spec.get("devices") or []:
            if (driver, pool, d.get("name")) in wanted and d.get("bindingConditions"):
                out.append(f"{driver}/{pool}/{d.get('name')}")
    if not out:
        return []
    return [
        make(
            "DRA104",
            f"the devices the dry-run picks ({', '.join(sorted(set(out)))}) wait for binding conditions: whether the "
            f"scheduler's last attempt on them failed or timed out cannot be told: {unseen.message}",
            resource=unseen.resource,
        )
    ]


def prebind_failure(events: list[dict], claims: list[dict]) -> Finding | None:
    """The scheduler's newest attempt failed in PreBind on binding conditions (and deallocated the claim), and no
    new wait has begun since (events are oldest first)."""
    last_wait = ""
    failed = None
    for e in events:
        if e.get("reason") == "BindingConditionsPending":
            last_wait = e.get("time") or ""
        elif e.get("reason") == "FailedScheduling" and _binding_error(e.get("message") or ""):
            failed = e
    if failed is None or (last_wait and last_wait > (failed.get("time") or "")):
        return None
    msg = failed.get("message") or ""
    return make(
        _binding_error(msg),
        f"the scheduler's last attempt failed while waiting for binding conditions: {msg}; "
        "it deallocates the claim and tries again",
        event={"message": msg, "time": failed.get("time")},
        claims=[obj_ref(c) for c in claims],
    )


def _binding_error(msg: str) -> str | None:
    """1.36+: `device binding failed: claim=...` / `device binding timeout: ...`; 1.34/1.35: `claim X binding failed:
    reason=...` / `claim X binding timeout` (both wrapped in `running PreBind plugin "DynamicResources": `)."""
    if "PreBind" not in msg and "binding" not in msg:
        return None
    if "device binding failed" in msg or " binding failed: reason=" in msg:
        return "DRA422"
    if "binding timeout" in msg:
        return "DRA423"
    return None
