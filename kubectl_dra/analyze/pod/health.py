"""After the pod has its devices: device health reported by the kubelet and evictions by device taints.

upstream: the kubelet's DRA health (KEP-4680, gate ResourceHealthStatus) writes
`status.containerStatuses[].allocatedResourcesStatus[] = {name: "claim:<claim>[/<request>]", resources: [{resourceID:
"<driver>/<pool>/<device>", health: Healthy|Unhealthy|Unknown, message}]}`; the device-taint-eviction-controller of
kube-controller-manager (pkg/controller/devicetainteviction, addConditionAndDeletePod) sets the pod condition
`DisruptionTarget=True, reason DeletionByDeviceTaintManager, message "Device Taint manager: deleting due to NoExecute
taint"` and deletes a pod whose allocated device has a NoExecute taint it does not tolerate."""

from __future__ import annotations

from kubectl_dra.analyze.allocator import device_id_str, obj_ref
from kubectl_dra.findings.model import Finding, make

EVICTION_REASON = "DeletionByDeviceTaintManager"


def health_findings(pod: dict) -> list[Finding]:
    """DRA605 for every DRA device a container's status reports as not Healthy."""
    st = pod.get("status") or {}
    out = []
    for key in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"):
        for cs in st.get(key) or []:
            if not isinstance(cs, dict):
                continue
            for ars in cs.get("allocatedResourcesStatus") or []:
                if not isinstance(ars, dict) or not str(ars.get("name", "")).startswith("claim:"):
                    continue
                for res in ars.get("resources") or []:
                    if not isinstance(res, dict):
                        continue
                    health = res.get("health") or "Unknown"
                    if health == "Healthy":
                        continue
                    msg = f": {res['message']}" if res.get("message") else ""
                    out.append(
                        make(
                            "DRA605",
                            f"container {cs.get('name', '')}: device {res.get('resourceID', '<unknown>')} "
                            f"({ars['name']}) is {health}{msg}",
                            subject={"container": cs.get("name", ""), "resource": ars["name"]},
                            device=res.get("resourceID"),
                            health=health,
                            healthMessage=res.get("message"),
                        )
                    )
    return out


def eviction_findings(pod: dict, claims: list[dict], slices: list[dict]) -> list[Finding]:
    """DRA606 when the device taint eviction controller deletes the pod, naming the NoExecute taints of its devices."""
    cond = next(
        (
            c
            for c in (pod.get("status") or {}).get("conditions") or []
            if isinstance(c, dict)
            and c.get("type") == "DisruptionTarget"
            and c.get("status") == "True"
            and c.get("reason") == EVICTION_REASON
        ),
        None,
    )
    if cond is None:
        return []
    devices: dict[tuple, str] = {}
    for c in claims:
        for r in (((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []:
            devices[(r.get("driver"), r.get("pool"), r.get("device"))] = obj_ref(c)
    taints = []
    for s in slices:
        spec = s.get("spec") or {}
        pool = (spec.get("pool") or {}).get("name")
        for d in spec.get("devices") or []:
            did = (spec.get("driver"), pool, d.get("name"))
            if did not in devices:
                continue
            for t in d.get("taints") or []:
                if t.get("effect") != "NoExecute":
                    continue
                src = (
                    f"DeviceTaintRule {t['rule']}"
                    if t.get("rule")
                    else f"ResourceSlice {(s.get('metadata') or {}).get('name')}"
                )
                taints.append(
                    {
                        "device": device_id_str(did),
                        "claim": devices[did],
                        "source": src,
                        "taint": f"{t.get('key')}={t.get('value') or ''}:NoExecute",
                        "timeAdded": t.get("timeAdded"),
                    }
                )
    named = "; ".join(
        f"{x['device']} has {x['taint']} from {x['source']}"
        + (f", added {x['timeAdded']}" if x.get("timeAdded") else "")
        for x in taints[:3]
    )
    when = cond.get("lastTransitionTime") or "<unknown>"
    return [
        make(
            "DRA606",
            f"the device taint eviction controller is deleting the pod (since {when}): "
            + (
                named
                or "a device of its claims has a NoExecute taint it does not tolerate (the taint is no longer visible)"
            ),
            condition={k: cond.get(k) for k in ("reason", "message", "lastTransitionTime")},
            taints=taints,
        )
    ]
