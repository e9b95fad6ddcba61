"""Normalise resource.k8s.io v1beta1/v1beta2 objects to the v1 shape, and events to one shape."""

from __future__ import annotations

import copy

from kubectl_dra.errors import DraError

RESOURCE_GROUP = "resource.k8s.io"
# The versions whose shape to_v1 knows; any other is refused (model/objects.py names the object), never read as v1
KNOWN_VERSIONS = ("v1", "v1beta2", "v1beta1", "v1alpha3")

_REQUEST_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity")


def _request_to_v1(req: dict) -> dict:
    if "exactly" in req or "firstAvailable" in req and req.get("firstAvailable"):
        return req
    out = {k: v for k, v in req.items() if k not in _REQUEST_FIELDS}
    exactly = {k: req[k] for k in _REQUEST_FIELDS if k in req}
    if exactly:
        out["exactly"] = exactly
    return out


def _device_to_v1(dev: dict) -> dict:
    basic = dev.get("basic")
    if basic is None:
        return dev
    out = {k: v for k, v in dev.items() if k != "basic"}
    out.update(basic)
    return out


def to_v1(obj: dict) -> dict:
    """Return obj in resource.k8s.io/v1 shape (a copy when anything changes)."""
    api = obj.get("apiVersion", "")
    if not api.startswith("resource.k8s.io/") or api == "resource.k8s.io/v1":
        return obj
    if api.partition("/")[2] not in KNOWN_VERSIONS:
        raise DraError(f"{obj.get('kind')} {(obj.get('metadata') or {}).get('name')}: unknown apiVersion {api}")
    obj = copy.deepcopy(obj)
    obj["apiVersion"] = "resource.k8s.io/v1"
    kind = obj.get("kind")
    spec = obj.get("spec") or {}
    if kind == "ResourceClaim":
        _claim_spec(spec)
    elif kind == "ResourceClaimTemplate":
        _claim_spec((spec.get("spec") or {}))
    elif kind == "ResourceSlice":
        spec["devices"] = [_device_to_v1(d) for d in spec.get("devices") or []]
    return obj


def _claim_spec(spec: dict) -> None:
    devices = spec.get("devices") or {}
    if devices.get("requests"):
        devices["requests"] = [_request_to_v1(r) for r in devices["requests"]]


def event_sort_key(ev: dict) -> tuple:
    """Time order as `kubectl get events --sort-by=.lastTimestamp`, with series and eventTime handled."""
    return (norm_time(ev.get("time")), norm_time(ev.get("firstTime")), ev.get("name") or "")


# client-go's event correlator (EventAggregate) puts this before the newest message once it aggregates similar
# events of one object: the words that follow are the event's own.
AGGREGATED = "(combined from similar events): "


def event_words(note: str) -> str:
    """An event's note (core/v1 message) as its source wrote it, without the correlator's aggregation prefix: the
    cluster's text, read as kubectl's event printing would, not a message of kubectl-dra's."""
    return note[len(AGGREGATED) :] if note.startswith(AGGREGATED) else note


def normalize_event(ev: dict) -> dict:
    """core/v1 Event or events.k8s.io/v1 Event -> {type, reason, message, object, source, time, first, count}."""
    if ev.get("apiVersion", "").startswith("events.k8s.io"):
        regarding = ev.get("regarding") or {}
        series = ev.get("series") or {}
        src = ev.get("deprecatedSource") or {}
        component = ev.get("reportingController") or src.get("component") or ""
        host = src.get("host") or ""
        message = ev.get("note") or ""
        last = series.get("lastObservedTime") or ev.get("deprecatedLastTimestamp") or ev.get("eventTime") or ""
        first = ev.get("deprecatedFirstTimestamp") or ev.get("eventTime") or last
        count = series.get("count") or ev.get("deprecatedCount") or 1
    else:
        regarding = ev.get("involvedObject") or {}
        series = ev.get("series") or {}
        src = ev.get("source") or {}
        component = src.get("component") or ev.get("reportingComponent") or ""
        host = src.get("host") or ev.get("reportingInstance") or ""
        message = ev.get("message") or ""
        last = (
            series.get("lastObservedTime")
            or ev.get("lastTimestamp")
            or ev.get("eventTime")
            or ev.get("firstTimestamp")
            or ""
        )
        first = ev.get("firstTimestamp") or ev.get("eventTime") or last
        count = series.get("count") or ev.get("count") or 1
    if not last:
        last = (ev.get("metadata") or {}).get("creationTimestamp") or ""
    return {
        "type": ev.get("type") or "",
        "reason": ev.get("reason") or "",
        "message": message,
        "object": {
            "kind": regarding.get("kind") or "",
            "namespace": regarding.get("namespace") or (ev.get("metadata") or {}).get("namespace") or "",
            "name": regarding.get("name") or "",
            "uid": regarding.get("uid") or "",
        },
        "source": {"component": component, "host": host},
        "time": str(last or ""),
        "firstTime": str(first or ""),
        "count": int(count) if str(count).isdigit() else 1,
        "name": (ev.get("metadata") or {}).get("name") or "",
    }


def norm_time(t) -> str:
    """RFC3339 and RFC3339 micro timestamps sort correctly as strings once normalised to ...Z."""
    if not t:
        return ""
    t = str(t)
    if t.endswith("+00:00"):
        t = t[:-6] + "Z"
    if "." not in t and t.endswith("Z"):
        t = t[:-1] + ".000000Z"
    elif "." in t and t.endswith("Z"):
        head, frac = t[:-1].split(".", 1)
        t = f"{head}.{(frac + '000000')[:6]}Z"
    return t
