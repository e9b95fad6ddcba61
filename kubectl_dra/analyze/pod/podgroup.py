"""Claims a PodGroup shares with its pods (gate DRAWorkloadResourceClaims: alpha in 1.36, beta and off in 1.37).

upstream: k8s.io/dynamic-resource-allocation/resourceclaim (IsForPod with acceptPodGroupOwner, BindTo,
IsReservedForPod), pkg/controller/resourceclaim (syncPodGroup/handlePodGroupClaim). A pod belongs to the group
`spec.schedulingGroup.podGroupName`; the resourceclaim controller creates the group's claims owned by the PodGroup
(kind PodGroup, apiVersion scheduling.k8s.io/*), records them in the pods' `status.resourceClaimStatuses`, and the
scheduler reserves them for the group (`reservedFor: {apiGroup: scheduling.k8s.io, resource: podgroups}`)."""

from __future__ import annotations

from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import Finding, make
from kubectl_dra.model.meta import meta_of, name_of, ns_of

GATE = "DRAWorkloadResourceClaims"


def pod_group(pod: dict) -> str | None:
    g = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
    return g if isinstance(g, str) and g else None


def owner_group(claim: dict) -> str | None:
    """The PodGroup that controls the claim, if any."""
    for o in meta_of(claim).get("ownerReferences") or []:
        if (
            o.get("controller")
            and o.get("kind") == "PodGroup"
            and str(o.get("apiVersion", "")).startswith("scheduling.k8s.io/")
        ):
            return o.get("name")
    return None


def reserved_groups(claim: dict) -> list[str]:
    return [
        r.get("name", "")
        for r in (claim.get("status") or {}).get("reservedFor") or []
        if isinstance(r, dict) and r.get("resource") == "podgroups" and r.get("apiGroup") == "scheduling.k8s.io"
    ]


def accepts_group_owner(pod: dict, claim: dict, sem: Semantics) -> bool:
    """IsForPod(pod, claim, acceptPodGroupOwner): the claim's controller is the pod's own PodGroup, with the gate on."""
    group = pod_group(pod)
    return bool(sem.gate(GATE) and group and owner_group(claim) == group)


def not_owned_message(pod: dict, claim: dict, sem: Semantics) -> str:
    """The scheduler's ownership message (1.36+ capitalisation; the PodGroup variant with the gate on)."""
    ns, pref = ns_of(claim), f"{ns_of(pod)}/{name_of(pod)}"
    group = pod_group(pod)
    if sem.components.capitalised_ownership_message and sem.gate(GATE) and group:
        return f"ResourceClaim {ns}/{name_of(claim)} was not created for Pod {pref} (neither Pod nor PodGroup {group} is the owner)"
    word = "Pod" if sem.components.capitalised_ownership_message else "pod"
    return f"ResourceClaim {ns}/{name_of(claim)} was not created for {word} {pref} ({word} is not owner)"


def reserved_for_pod(pod: dict, claim: dict) -> bool:
    """IsReservedForPod: the pod by UID, or its PodGroup by name."""
    uid = meta_of(pod).get("uid")
    group = pod_group(pod)
    for r in (claim.get("status") or {}).get("reservedFor") or []:
        if not isinstance(r, dict):
            continue
        if uid and r.get("uid") == uid and r.get("resource", "pods") == "pods":
            return True
        if group and r.get("resource") == "podgroups" and r.get("name") == group:
            return True
    return False


def shared_claim_findings(pod: dict, claims: list[dict], pods, sem: Semantics) -> list[Finding]:
    """DRA207 for each claim the pod shares with its PodGroup: say which group, how many of its pods exist, and that
    the claim is not the pod's to delete."""
    out = []
    for c in claims:
        group = owner_group(c) or next(iter(reserved_groups(c)), None)
        if not group:
            continue
        members = sorted(name_of(p) for p in pods if ns_of(p) == ns_of(c) and pod_group(p) == group)
        if not sem.gate(GATE) and owner_group(c):
            out.append(
                make(
                    "DRA017",
                    f"claim {name_of(c)} is owned by PodGroup {group}, which only the resourceclaim "
                    f"controller with {GATE} creates, but the gate is off in the assumed semantics: "
                    f"if the scheduler has it on, pass --feature-gates {GATE}=true",
                    subject={"claim": f"{ns_of(c)}/{name_of(c)}"},
                    gate=GATE,
                )
            )
        out.append(
            make(
                "DRA207",
                f"claim {name_of(c)} belongs to PodGroup {ns_of(c)}/{group}, shared by its pods "
                f"({len(members)} in the snapshot: {', '.join(members[:5]) or 'none'}); it is the "
                "gang's claim, not this pod's",
                subject={"claim": f"{ns_of(c)}/{name_of(c)}"},
                podGroup=group,
                pods=members,
                gateEnabled=sem.gate(GATE),
            )
        )
    return out


GANG_HINT = (
    "The claim belongs to a PodGroup and is shared by the gang: do not delete it for one pod. Check the "
    "PodGroup's status.resourceClaimStatuses and the resourceclaim controller's events on the PodGroup."
)
