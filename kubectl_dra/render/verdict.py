"""The Verdict line of explain's text (and each line of `explain -w`): its words for a report's dict, read from the
findings' codes and evidence, never from their messages."""

from __future__ import annotations

from kubectl_dra.findings.stages import Stage

_OPEN_REASONS = (
    ("DRA005", "the analysis and the scheduler disagree"),
    ("DRA016", "an object sets a field kubectl-dra does not model"),
    ("DRA017", "the objects show a feature gate the assumed semantics have off"),
    ("DRA019", "the workload has no pods, and why is not visible"),
    ("DRA020", "the server's patch predates an allocator fix that matters here"),
    ("DRA506", "the free cpu, memory or pods of the node are unknown"),
    ("DRA508", "whether preempting pods of lower priority makes room is unknown"),
    ("DRA022", "a scheduler filter kubectl-dra does not reproduce"),
    ("DRA104", "the input lacks what the answer needs"),
    ("DRA018", "the input has no Node objects"),
)


def decisive(d: dict) -> dict | None:
    """The finding the verdict's summary repeats: said once, in the Summary; the pieces and findings point to it."""
    summary = d["verdict"]["summary"]
    return next((f for f in d["findings"] if f["message"] and summary.startswith(f["message"])), None)


def verdict_headline(d: dict) -> tuple[str, str]:
    """The Verdict's words and style for a report's dict: explain's Verdict line and each line of `explain -w`."""
    v = d["verdict"]
    if not v.get("determined", True):
        codes = {f["code"] for f in d["findings"]}
        why = next((w for c, w in _OPEN_REASONS if c in codes), "the analysis is incomplete")
        return f"Unknown: {why}", "bold yellow"
    if v["blocked"]:
        what, detail = blocked_why(decisive(d), v)
        return f"Blocked: {what}{': ' + detail if detail else ''}", "bold red"
    if any(f["code"] == "DRA021" for f in d["findings"]):
        return "OK for DRA: the scheduler holds the pod for other reasons", "bold yellow"
    if any(f["code"] == "DRA507" for f in d["findings"]):
        return "OK: placed once pods of lower priority are preempted", "bold green"
    return "OK: nothing blocks", "bold green"


# The Verdict's words for the finding that blocks: (what, detail). What the evidence shows, not which piece is
# "missing" (a device that exists but is taken, or allocated and waiting, is not missing).
_BLOCKED = {
    "DRA006": "scheduling gated",
    "DRA102": "the resource API is not served",
    "DRA201": "claim not created",
    "DRA202": "claim template missing",
    "DRA203": "claim missing",
    "DRA204": "claim being deleted",
    "DRA205": "claim not owned by the pod",
    "DRA206": "the pod's claim reference is invalid",
    "DRA208": "the workload's pods are not created",
    "DRA209": "device quota exhausted",
    "DRA211": "DeviceClass missing",
    "DRA212": "a feature the request uses is disabled",
    "DRA213": "the request is invalid",
    "DRA301": "a CEL selector fails on a device",
    "DRA302": "a CEL selector does not compile",
    "DRA401": "no usable device published",
    "DRA402": "no device matches the class",
    "DRA403": "no device matches the request",
    "DRA404": "no free device",
    "DRA405": "no untainted device",
    "DRA406": "no free device: shared counters used up",
    "DRA407": "no device with enough capacity left",
    "DRA408": "not enough devices",
    "DRA409": "no devices meet the claim's constraints",
    "DRA412": "binding conditions unsupported",
    "DRA413": "no allocation fits",
    "DRA416": "an attribute value is not supported",
    "DRA417": "allocated capacity is negative",
    "DRA418": "no device whose counter compatibility groups fit",
    "DRA421": "waiting for binding conditions",
    "DRA422": "binding failed",
    "DRA423": "binding timed out",
    "DRA501": "no matching device on a node the pod may use",
    "DRA502": "claim allocated on another node",
    "DRA503": "no node the pod may use",
    "DRA601": "driver not registered",
    "DRA602": "driver failed to prepare the devices",
    "DRA603": "pod not reserved in its claim",
    "DRA606": "evicted by a device taint",
    "DRA608": "CDI devices not injected",
    "DRA609": "kubelet refused the claim",
}


# The repairable stages when the request has candidates, too few on one node (request_findings.py, DRA408)
_SHORT = {
    "DRA404": "not enough free devices",
    "DRA405": "not enough untainted devices",
    "DRA406": "not enough free devices: shared counters used up",
    "DRA407": "not enough devices with capacity left",
    "DRA418": "not enough devices whose counter compatibility groups fit",
}


def blocked_why(f: dict | None, v: dict) -> tuple[str, str]:
    if f is None:
        return (f"missing {v['missing']}" if v.get("missing") else "see the findings"), ""
    what = _BLOCKED.get(f["code"]) or (f.get("name") or "").replace("-", " ") or f"missing {v.get('missing')}"
    if f["code"] in _SHORT and ((f.get("evidence") or {}).get("byStage") or {}).get("candidate"):
        what = _SHORT[f["code"]]  # some are free, too few on one node (DRA408 beside it): not "no free device"
    detail = ""
    if f["code"] == "DRA404":
        by = (f.get("evidence") or {}).get("byStage") or {}
        taken = by.get(Stage.IN_USE.value, 0)
        matching = sum(n for st, n in by.items() if (s := Stage.named(st)) is None or not s.selects)
        held = (f.get("evidence") or {}).get("terminating") or 0
        if taken and taken == matching and held == taken:  # every one is held by pods being deleted
            detail = "held by a terminating pod" if taken == 1 else f"all {taken} held by terminating pods"
        elif taken and taken == matching:
            detail = "the matching device is allocated" if taken == 1 else f"all {taken} matching devices are allocated"
        elif taken:
            detail = f"{taken} of {matching} matching devices are allocated"
    return what, detail
