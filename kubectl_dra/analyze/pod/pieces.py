"""The tutorial's four pieces at a glance (class, device, node, driver), from a pod's findings and report body.

Each piece is "ok" (with one line of evidence), "missing" (the first blocking finding that points at it), "waiting"
(not reached yet in the pod's life: no node before binding, the kubelet only after it) or "unknown" (an earlier piece
is missing, or the analysis left the answer open). A pure function of what explain_pod already decided."""

from __future__ import annotations

from kubectl_dra.findings.model import UNDETERMINED, Finding

PIECES_SHOWN = ("class", "device", "node", "driver")


def _short(devices: list[str], limit: int = 2) -> str:
    more = f" and {len(devices) - limit} more" if len(devices) > limit else ""
    return ", ".join(devices[:limit]) + more


# long: one table of the four pieces; each branch is a row of it
def pod_pieces(findings: tuple[Finding, ...] | list[Finding], body: dict) -> list[dict]:
    """[{"piece", "state", "evidence"}] for a pod that uses DRA; [] for one that does not."""
    claims = body.get("claims") or []
    missing: dict[str, Finding] = {}
    for f in findings:
        if f.blocking and f.missing and not f.evidence.get("behind"):  # (behind another: not this piece's reason)
            missing.setdefault(f.missing, f)
    if not claims and "claim" not in missing:
        return []  # no claim at all (extended resources left to device plugins): nothing of DRA's to show
    open_ = next((f for f in findings if f.code in UNDETERMINED), None)
    pod = body.get("pod") or {}
    node, phase = pod.get("node"), pod.get("phase")
    allocated = [c for c in claims if c.get("allocation")]
    all_allocated = bool(claims) and len(allocated) == len(claims)
    allocatable = next((f for f in findings if f.code == "DRA002"), None)
    via_plugin = next((f for f in findings if f.code == "DRA227"), None)  # no DRA device needed on that node
    rows: list[dict] = []
    stop: str | None = None  # why the pieces after a missing one are not judged

    def add(piece: str, state: str, evidence: str) -> None:
        rows.append({"piece": piece, "state": state, "evidence": " ".join(evidence.split())})

    if "claim" in missing:
        add("claim", "missing", missing["claim"].message)
        stop = "blocked at the claim"
    for piece in PIECES_SHOWN:
        if piece in missing:
            add(piece, "missing", missing[piece].message)
            # not registered, or the plugin fails to prepare: its pod on the node is the next thing to look at (a
            # CDI or claim error comes after the plugin answered)
            if piece == "driver" and missing[piece].code in ("DRA601", "DRA602") and (words := _plugin_words(findings)):
                rows[-1]["plugin"] = words
            stop = stop or f"blocked at the {piece}"  # not "missing": a device may exist and be taken
            continue
        if stop is not None:
            add(piece, "unknown", f"not judged: {stop}")
            continue
        if piece == "class":
            names = sorted(
                {r["deviceClassName"] for c in claims for r in c.get("requests") or [] if r.get("deviceClassName")}
            )
            unseen = next(
                (f for f in findings if f.code == "DRA104" and "deviceclasses" in f.evidence.get("resource", "")), None
            )
            gone = sorted({f.evidence["deviceClass"] for f in findings if f.code == "DRA214"})
            if names and gone:  # an allocated claim keeps its devices without its class
                add(piece, "ok", f"claims allocated; DeviceClass {', '.join(gone)} deleted since")
            elif names and unseen is not None and not all_allocated:
                add(piece, "unknown", f"DeviceClass {', '.join(names)}: the input holds no DeviceClass objects")
            elif names and unseen is not None:
                add(piece, "ok", "claims allocated (the input holds no DeviceClass objects)")
            elif names:
                add(piece, "ok", f"DeviceClass {', '.join(names)} exists")
            else:
                add(piece, "unknown", "no request names a class")
        elif piece == "device" and "node" in missing and (free := missing["node"].evidence.get("freeOnUnusableNodes")):
            add(piece, "unknown", f"{free} free matching device(s), on nodes the pod cannot use")
        elif piece == "device" and "node" in missing and not all_allocated and allocatable is None:
            add(piece, "unknown", "not judged: no node the pod may use")
        elif piece == "device":
            if all_allocated:
                devs = [
                    f"{r['driver']}/{r['pool']}/{r['device']}" for c in allocated for r in c["allocation"]["results"]
                ]
                add(piece, "ok", "allocated: " + (_short(devs) or "no devices"))
            elif allocatable is not None:
                picks = [f"{r['driver']}/{r['pool']}/{r['device']}" for r in allocatable.evidence.get("results") or []]
                add(piece, "ok", "allocatable now: " + (_short(picks) or "no devices"))
            elif via_plugin is not None:
                served = ", ".join(via_plugin.evidence.get("resources") or [])
                add(piece, "ok", f"{served} from the device plugin of {via_plugin.evidence.get('node')}")
            elif open_ is not None:
                add(piece, "unknown", open_.message)
                stop = "the device verdict is open"
            else:
                add(piece, "unknown", "no dry-run result")
                stop = "the device verdict is open"
        elif piece == "node":
            pre = next((f for f in findings if f.code == "DRA507"), None)
            if open_ is not None and open_.code in ("DRA022", "DRA506", "DRA508") and not node:  # its filters decide
                add(piece, "unknown", open_.message)
            elif pre is not None and not node:
                where = pre.evidence.get("where") or pre.evidence.get("node")  # "one of A, B" for a tie
                add(piece, "waiting", f"not bound yet; {where} once its preemption victims are gone")
            elif node:
                add(piece, "ok", f"bound to {node}")
            elif allocatable is not None:
                nodes = allocatable.evidence.get("nodes") or []
                add(piece, "waiting", f"not bound yet; the claims fit on {_short(nodes, 3)}")
            elif via_plugin is not None:
                add(piece, "waiting", f"not bound yet; the pod fits on {via_plugin.evidence.get('node')}")
            else:
                add(piece, "waiting", "not bound yet")
        else:  # driver: the kubelet on the pod's node prepares the devices after binding
            if phase in ("Running", "Succeeded"):
                add(piece, "ok", f"devices prepared (pod {phase})")
            elif node:
                add(piece, "waiting", f"waiting for the kubelet on {node} to prepare the devices")
            else:
                add(piece, "waiting", "the kubelet prepares the devices once the pod is bound")
    return rows


def _plugin_words(findings) -> str | None:
    """A few words on the node's kubelet plugin (DRA607's judgement) for the missing driver piece's line."""
    f = next((f for f in findings if f.code == "DRA607"), None)
    plugin = (f.evidence.get("plugin") or {}) if f is not None else {}
    state, pod = plugin.get("state"), plugin.get("pod") or {}
    if state == "pod-not-ready" and pod.get("bound") is False:
        why = (pod.get("unscheduled") or {}).get("reason")
        return "its plugin pod is not scheduled" + (f" ({why})" if why else "")
    if state == "pod-not-ready":
        why = pod.get("waiting") or pod.get("phase")
        return "its plugin pod is not ready" + (f" ({why})" if why else "")
    if state == "pod-ready":
        return "its plugin pod is ready"
    if state in ("not-covered", "no-pod"):
        return "no plugin pod on the node"
    if state == "not-found":
        return "no kubelet plugin found"
    return None
