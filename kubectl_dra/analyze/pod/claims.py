"""Which ResourceClaims a pod uses: named claims, generated claims (template + status + owner), and the
requests of a claim with their DeviceClasses (upstream: the DynamicResources plugin's PreEnqueue/PreFilter
claim lookup, and resourceclaim.Name)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kubectl_dra.analyze.allocator import Request, claim_requests, obj_ref
from kubectl_dra.analyze.allocator.requests import request_alternatives
from kubectl_dra.analyze.pod.podgroup import (
    GANG_HINT,
    accepts_group_owner,
    not_owned_message,
    owner_group,
)
from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import Finding, make
from kubectl_dra.model.meta import is_stand_in, meta_of, name_of, ns_of
from kubectl_dra.model.snapshot import Snapshot

POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"


class Index:
    """Lookups over a snapshot."""

    def __init__(self, snap: Snapshot):
        self.snap = snap
        self.pods = {(ns_of(p), name_of(p)): p for p in snap.pods}
        self.claims = {(ns_of(c), name_of(c)): c for c in snap.claims}
        self.templates = {(ns_of(t), name_of(t)): t for t in snap.templates}
        self.classes = {name_of(c): c for c in snap.classes}
        self.nodes = sorted(snap.nodes, key=name_of)
        self.gaps = list(snap.gaps)
        # Without Node objects (offline dumps), node-local slices still name their node.
        if not self.nodes:
            names = sorted(
                {(s.get("spec") or {}).get("nodeName") for s in snap.slices if (s.get("spec") or {}).get("nodeName")}
                | {(p.get("spec") or {}).get("nodeName") for p in snap.pods if (p.get("spec") or {}).get("nodeName")}
            )
            self.nodes = [
                {"metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}}, "synthetic": True} for n in names
            ]
            self.nodes_synthetic = True
        else:
            self.nodes_synthetic = False
        # Node objects without a status (the API server always writes one: a cut or edited input): their declared
        # features and allocatable, which decide where devices and extended resources may be used, are unknown
        self.nodes_statusless = [name_of(n) for n in self.nodes if not n.get("synthetic") and not n.get("status")]

    def gap_for(self, resource: str) -> list:
        return [g for g in self.gaps if g.resource.startswith(resource)]


def terminating_holders(idx: Index) -> dict[str, tuple[str, ...]]:
    """Allocated claims whose every reserving pod is in the snapshot and being deleted (a deletionTimestamp): claim
    ref -> those pods (namespace/name). Their devices stay allocated until the kubelet unprepares them and the pods
    go, which a finalizer, a node whose kubelet is gone or a missing driver plugin can hold up."""
    out: dict[str, tuple[str, ...]] = {}
    for (ns, name), c in idx.claims.items():
        status = c.get("status") or {}
        if not status.get("allocation"):
            continue
        pods = [r.get("name") for r in status.get("reservedFor") or [] if r.get("resource") == "pods"]
        held = [idx.pods.get((ns, p)) for p in pods]
        if held and all(p is not None and meta_of(p).get("deletionTimestamp") for p in held):
            out[f"{ns}/{name}"] = tuple(f"{ns}/{p}" for p in pods)
    return out


# ---------------------------------------------------------------------------------------------------
# Claim resolution


@dataclass
class PodClaim:
    pod_claim_name: str
    source: str  # "claim" or "template"
    source_name: str
    claim: dict | None = None
    findings: list = field(default_factory=list)
    skipped: bool = False  # resourceClaimName: null in the status


# long: mirrors the resourceclaim controller's lookup of each pod claim, case by case
def resolve_pod_claims(pod: dict, idx: Index, sem: Semantics) -> list[PodClaim]:
    ns = ns_of(pod)
    pref = f"{ns}/{name_of(pod)}"
    statuses = {s.get("name"): s for s in ((pod.get("status") or {}).get("resourceClaimStatuses") or [])}
    uid = meta_of(pod).get("uid")
    out: list[PodClaim] = []
    running = (pod.get("status") or {}).get("phase") == "Running"
    for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
        pcn = entry.get("name", "")
        if entry.get("resourceClaimName"):
            pc = PodClaim(pcn, "claim", entry["resourceClaimName"])
            pc.claim = idx.claims.get((ns, pc.source_name))
            if pc.claim is None:
                if running:
                    pc.findings.append(running_claim_finding(idx, pcn, ns, pc.source_name))
                elif idx.gap_for("resourceclaims"):
                    pc.findings.append(unseen_claim_finding(idx.gap_for("resourceclaims")[0], pcn, ns, pc.source_name))
                else:
                    pc.findings.append(
                        make(
                            "DRA203",
                            f'could not find ResourceClaim "{ns}/{pc.source_name}"',
                            subject={"podClaim": pcn},
                            claim=f"{ns}/{pc.source_name}",
                        )
                    )
        elif entry.get("resourceClaimTemplateName"):
            tname = entry["resourceClaimTemplateName"]
            pc = PodClaim(pcn, "template", tname)
            st = statuses.get(pcn)
            if st is not None and st.get("resourceClaimName") is None and "resourceClaimName" in st:
                pc.skipped = True
            elif st is not None and st.get("resourceClaimName"):
                pc.claim = idx.claims.get((ns, st["resourceClaimName"]))
            if pc.claim is None and not pc.skipped:
                for c in idx.claims.values():
                    if ns_of(c) != ns:
                        continue
                    if (meta_of(c).get("annotations") or {}).get(POD_CLAIM_ANNOTATION) != pcn:
                        continue
                    if any(
                        o.get("kind") == "Pod"
                        and (o.get("uid") == uid if uid and o.get("uid") else o.get("name") == name_of(pod))
                        for o in meta_of(c).get("ownerReferences") or []
                    ) or accepts_group_owner(pod, c, sem):
                        pc.claim = c
                        break
            claim_name = (st or {}).get("resourceClaimName") or None
            if pc.claim is None and not pc.skipped and running:
                pc.findings.append(running_claim_finding(idx, pcn, ns, claim_name))
            elif pc.claim is None and claim_name and idx.gap_for("resourceclaims"):
                # the pod's status names its claim, which the input lacks (or the claims could not be read); with no
                # name in the status, the controller has not created one (it records the name as it creates it)
                pc.findings.append(unseen_claim_finding(idx.gap_for("resourceclaims")[0], pcn, ns, claim_name))
            elif pc.claim is None and not pc.skipped and not pod.get("status"):
                # the status, which the API server always writes, names the generated claim: without it, unknown
                pc.findings.append(
                    make(
                        "DRA104",
                        f"cannot tell whether the ResourceClaim of pod claim {pcn} was created: the pod has no status, "
                        "which the API server always writes (the input was cut or edited)",
                        subject={"podClaim": pcn},
                        field="status",
                    )
                )
            elif pc.claim is None and not pc.skipped:
                unseen = idx.gap_for("resourceclaimtemplates") if (ns, tname) not in idx.templates else []
                if unseen and is_stand_in(pod):  # its claim would come from a template the input may lack
                    pc.findings.append(unseen_template_finding(unseen[0], pcn, ns, tname))
                elif (ns, tname) not in idx.templates and not unseen:
                    pc.findings.append(
                        make(
                            "DRA202",
                            f'PodResourceClaim {pcn}: resource claim template "{tname}": '
                            f'resourceclaimtemplate.resource.k8s.io "{tname}" not found',
                            subject={"podClaim": pcn},
                            template=f"{ns}/{tname}",
                        )
                    )
                else:
                    pc.findings.append(
                        make(
                            "DRA201",
                            f'pod "{pref}": ResourceClaim not created yet',
                            subject={"podClaim": pcn},
                            template=f"{ns}/{tname}",
                        )
                    )
            elif pc.claim is not None and uid:
                owners = [o for o in meta_of(pc.claim).get("ownerReferences") or [] if o.get("controller")]
                # the API server never stores an ownerReference without its uid: the input was cut or edited, so
                # the owner is the pod of that name (said as DRA105), never "not owned" on that ground
                cut = [o for o in owners if o.get("kind") == "Pod" and not o.get("uid")]
                if cut:
                    pc.findings.append(edited_finding(pc.claim, "metadata.ownerReferences[].uid"))
                if not any(
                    o.get("kind") == "Pod" and (o.get("uid") == uid if o.get("uid") else o.get("name") == name_of(pod))
                    for o in owners
                ) and not accepts_group_owner(pod, pc.claim, sem):
                    pc.findings.append(
                        make(
                            "DRA205",
                            not_owned_message(pod, pc.claim, sem),
                            hint=GANG_HINT if owner_group(pc.claim) else None,
                            subject={"podClaim": pcn},
                            claim=f"{ns}/{name_of(pc.claim)}",
                            owners=[f"{o.get('kind')}/{o.get('name')}" for o in owners],
                        )
                    )
        else:
            pc = PodClaim(pcn, "invalid", "")
            pc.findings.append(
                make(
                    "DRA206",
                    f'pod "{pref}", spec.resourceClaim "{pcn}": none of the supported fields are set',
                    subject={"podClaim": pcn},
                )
            )
        if pc.claim is not None and meta_of(pc.claim).get("deletionTimestamp"):
            pc.findings.append(
                make(
                    "DRA204",
                    f'resourceclaim "{ns}/{name_of(pc.claim)}" is being deleted',
                    subject={"podClaim": pcn},
                    claim=f"{ns}/{name_of(pc.claim)}",
                )
            )
        out.append(pc)
    return out


def edited_finding(obj: dict, field: str) -> Finding:
    """DRA105: an object lacks a field the API server always sets; what depends on it is judged without it."""
    return make(
        "DRA105",
        f"{obj.get('kind')} {ns_of(obj) + '/' if ns_of(obj) else ''}{name_of(obj)} has no {field}, which the API "
        "server always sets: the input was cut or edited; kubectl-dra judges without it",
        object=f"{obj.get('kind')}/{name_of(obj)}",
        field=field,
    )


def running_claim_finding(idx: Index, pcn: str, ns: str, claim: str | None) -> Finding:
    """DRA215: a Running pod's claim is not in the snapshot. The kubelet started its containers after preparing the
    claim's devices, so it has them; the claim is missing from the input (or was removed by force since)."""
    which = f"ResourceClaim {ns}/{claim}" if claim else f"the ResourceClaim of pod claim {pcn}"
    gap = next(iter(idx.gap_for("resourceclaims")), None)
    why = gap.message if gap is not None else "it is not in the input"
    return make(
        "DRA215",
        f"the pod is Running, so the kubelet prepared its devices; {which} is not known: {why}",
        subject={"podClaim": pcn},
        claim=f"{ns}/{claim}" if claim else None,
    )


def unseen_claim_finding(gap, pcn: str, ns: str, claim: str | None) -> Finding:
    """The pod's claim is not in the snapshot and the claims were not all read: DRA104 (the input holds none) or
    DRA103 (the read was refused), which leave the answer open, never "not created" or "missing"."""
    which = f"ResourceClaim {ns}/{claim}" if claim else f"the ResourceClaim of pod claim {pcn}"
    return _unseen(gap, f"cannot tell whether {which} exists or what it holds", pcn, kind="ResourceClaim")


def unseen_template_finding(gap, pcn: str, ns: str, template: str) -> Finding:
    """A pod kubectl-dra made up from a pod template names a ResourceClaimTemplate the snapshot lacks, and the
    templates were not all read: DRA104 or DRA103, never "missing" nor "not created" (its claim is made up too)."""
    what = f"cannot tell what pod claim {pcn} asks for: ResourceClaimTemplate {ns}/{template} is not in the input"
    return _unseen(gap, what, pcn)


def _unseen(gap, what: str, pcn: str, **absent) -> Finding:
    """DRA104 when the input holds no object of the gap's kind (absent: its evidence), DRA103 when the read was
    refused."""
    if gap.reason == "absent":
        return make("DRA104", f"{what}: {gap.message}", subject={"podClaim": pcn}, **absent, resource=gap.resource)
    return make(
        "DRA103",
        f"{what}: {gap.verb} {gap.resource} was refused",
        subject={"podClaim": pcn},
        verb=gap.verb,
        resource=gap.resource,
        namespace=gap.namespace,
    )


def read_gap_findings(gaps, skip=()) -> list[Finding]:
    """What could not be read, as a report's first findings (DRA101, DRA102); skip: resources another finding covers.
    A kind the input holds none of (reason "absent") is said where an answer depends on it (DRA104), not here."""
    return [gap_finding(g) for g in gaps if g.resource not in skip and g.reason != "absent"]


def gap_finding(gap) -> Finding:
    if gap.reason == "not-served" and gap.resource == "resource.k8s.io":
        return make("DRA102", f"the API server does not serve resource.k8s.io: {gap.message}", resource=gap.resource)
    return make(
        "DRA101",
        f"cannot {gap.verb} {gap.resource}"
        + (f" in namespace {gap.namespace}" if gap.namespace else "")
        + f": {gap.message}",
        verb=gap.verb,
        resource=gap.resource,
        namespace=gap.namespace,
    )


# ---------------------------------------------------------------------------------------------------
# Requests of a claim


def build_requests(
    claim: dict, ci: int, idx: Index, allocated: bool = False
) -> tuple[list[list[Request]], list[Finding]]:
    """Requests (each a list of alternatives: one entry, or the subrequests in order) and class findings.
    allocated: the claim is allocated, so a class that is gone blocks nothing (the scheduler reads a class only to
    allocate; the kubelet prepares from the allocation result): DRA214, a warning for the next claim of it."""
    out: list[list[Request]] = []
    findings: list[Finding] = []
    for ri, req in enumerate(claim_requests(claim)):
        subs = req.get("firstAvailable") or []
        alts = request_alternatives(req, ci, ri)
        if not subs and not isinstance(req.get("exactly"), dict):
            # upstream PreFilter: neither exactly nor firstAvailable
            findings.append(
                make(
                    "DRA213",
                    f"resource claim {obj_ref(claim)}, request {req.get('name', '')}: unknown request type",
                    subject={"claim": obj_ref(claim), "request": req.get("name")},
                )
            )
            out.append(alts)
            continue
        for r in alts:
            r.class_obj = idx.classes.get(r.class_name)
            if not r.class_name:
                # upstream validateDeviceClass: an Error status, the pod gets `running PreFilter plugin ...`
                findings.append(
                    make(
                        "DRA213",
                        f"request {r.name}: unsupported request type",
                        subject={"claim": obj_ref(claim), "request": r.name},
                    )
                )
            elif r.class_obj is None:
                gap = next(iter(idx.gap_for("deviceclasses")), None)
                if gap is not None:
                    if gap.reason != "absent" and not allocated:  # an absent kind: device_findings says so (DRA104)
                        findings.append(gap_finding(gap))
                elif allocated:
                    findings.append(
                        make(
                            "DRA214",
                            f"claim {obj_ref(claim)} is allocated, but the device class {r.class_name} of its "
                            f"request {r.name} no longer exists: the allocation stands; a new claim of this class "
                            "cannot be allocated until the class exists again",
                            subject={"claim": obj_ref(claim), "request": r.name},
                            deviceClass=r.class_name,
                        )
                    )
                else:
                    findings.append(
                        make(
                            "DRA211",
                            f"request {r.name}: device class {r.class_name} does not exist",
                            subject={"claim": obj_ref(claim), "request": r.name},
                            deviceClass=r.class_name,
                        )
                    )
        out.append(alts)
    return out, findings


# ---------------------------------------------------------------------------------------------------
# The analysis shared by explain pod / explain claim / match
