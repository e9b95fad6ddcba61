"""DRA-backed extended resources (KEP-5004, gate DRAExtendedResource): a container asks for `example.com/gpu: 1`
and kube-scheduler turns that into a claim of its own.

upstream (1.35-1.37): pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go
(preFilterExtendedResources, filterExtendedResources, createRequestsAndMappings, partitionContainerIndices,
createResourceRequestAndMappings, findExtendedResourceClaim) and
k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache (the name → DeviceClass mapping).
upstream (1.34): dynamicresources.go createDeviceRequests and dynamicresources/extended/util.go DeviceClassMapping.

The claim is built here exactly as the plugin builds it in Filter (request names `container-<i>-request-<j>`,
ExactCount of the container's quantity), so the allocator dry-run and the per-device reasons work on it as on any
other claim. After PreBind the scheduler has created it for real (`<pod>-extended-resources-<5>`) and recorded it in
`pod.status.extendedResourceClaimStatus`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from kubectl_dra.analyze.pod.claims import meta_of, name_of, ns_of
from kubectl_dra.analyze.pod.extended_nodes import device_plugin_nodes, double_admission, needs_dra
from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import Finding, make
from kubectl_dra.quantity import QuantityError, parse_quantity

IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"
CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
IN_MEMORY_NAME = "<extended-resources>"  # upstream specialClaimInMemName
_NAME_PART = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _qualified(name: str) -> bool:
    """apimachinery validation.IsQualifiedName."""
    prefix, _, base = name.rpartition("/")
    if "/" in prefix or not base or len(base) > 63 or not _NAME_PART.match(base):
        return False
    return not prefix or (len(prefix) <= 253 and bool(_DNS_SUBDOMAIN.match(prefix)))


def is_extended_resource_name(name: str) -> bool:
    """core/v1 helper IsExtendedResourceName: has a domain, not kubernetes.io's, not requests.*, qualified as a quota name."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return _qualified("requests." + name)


def is_dra_extended_resource_name(name: str, sem: Semantics) -> bool:
    """schedutil.IsDRAExtendedResourceName (1.35+); 1.34 knows only IsExtendedResourceName, so its scheduler never
    treats an implicit deviceclass.resource.kubernetes.io/<class> name as DRA."""
    if sem.components.implicit_extended_resource_names and name.startswith(IMPLICIT_PREFIX):
        return True
    return is_extended_resource_name(name)


def class_mapping(classes: Sequence[dict], sem: Semantics) -> dict[str, dict]:
    """Resource name → DeviceClass, as the scheduler's cache resolves it.

    1.35+ (extendedresourcecache updateResourceName2class): every class answers to its implicit name, and also to
    spec.extendedResourceName; of several classes with one extendedResourceName the newest creationTimestamp wins,
    equal timestamps the lower name. (The cache is built from informer events; a losing class seen after the
    winner also loses its implicit name there. A snapshot has no event order: every class keeps its implicit name.)
    1.34 (DeviceClassMapping): the explicit name if set, else the implicit one; of duplicates the last listed wins
    (informer order, not defined upstream: here the last in name order)."""
    out: dict[str, dict] = {}
    if not sem.components.implicit_extended_resource_names:
        for c in sorted(classes, key=name_of):
            ern = (c.get("spec") or {}).get("extendedResourceName")
            out[ern if isinstance(ern, str) and ern else IMPLICIT_PREFIX + name_of(c)] = c
        return out
    for c in classes:
        out[IMPLICIT_PREFIX + name_of(c)] = c
    explicit: dict[str, dict] = {}
    for c in classes:
        ern = (c.get("spec") or {}).get("extendedResourceName")
        if not isinstance(ern, str) or not ern:
            continue
        cur = explicit.get(ern)
        if cur is None or _newer(c, cur):
            explicit[ern] = c
    out.update(explicit)
    return out


def _newer(a: dict, b: dict) -> bool:
    ta, tb = meta_of(a).get("creationTimestamp") or "", meta_of(b).get("creationTimestamp") or ""
    if ta != tb:
        return ta > tb
    return name_of(a) < name_of(b)


def _int_quantity(q) -> int | None:
    """resource.Quantity.AsInt64: only integral values; anything else (or 0) and the container is skipped."""
    try:
        v = parse_quantity(q if isinstance(q, (str, int)) else str(q))
    except (QuantityError, ValueError, TypeError):
        return None
    if not isinstance(v, Fraction) or v.denominator != 1 or v <= 0 or v >= 2**63:
        return None
    return int(v)


@dataclass(frozen=True)
class ContainerRequest:
    index: int  # into initContainers ++ containers
    container: str
    resource: str
    quantity: int
    long_lived: bool  # a regular container or a restartable (sidecar) init container
    key_index: int  # position of the resource in the container's sorted request names


@dataclass
class ExtendedResources:
    """What the pod asks for through extended resources that a DeviceClass maps, and how upstream turns it into a claim."""

    requests: list[ContainerRequest]
    classes: dict[str, dict]  # resource name → DeviceClass
    gate: bool

    @property
    def resources(self) -> list[str]:
        return sorted({r.resource for r in self.requests})


def defaulted_requests(container: dict) -> dict:
    """A container's resources.requests as the API server stores them: SetDefaults_Pod (pkg/apis/core/v1/defaults.go)
    copies every limit that has no request into requests, so `limits: {example.com/gpu: 1}` alone asks for one
    (a pod read from the cluster already has them; a manifest or a workload's template may not). Requests that are
    set are kept as they are."""
    res = container.get("resources")
    res = res if isinstance(res, dict) else {}
    reqs, limits = res.get("requests"), res.get("limits")
    reqs = reqs if isinstance(reqs, dict) else {}
    if not isinstance(limits, dict) or not limits:
        return reqs
    return {**{k: v for k, v in limits.items() if k not in reqs}, **reqs}


def pod_extended_resources(pod: dict, classes: Sequence[dict], sem: Semantics) -> ExtendedResources:
    spec = pod.get("spec") or {}
    mapping = class_mapping(classes, sem) if classes else {}
    containers = [(c, False) for c in spec.get("initContainers") or [] if isinstance(c, dict)]
    containers = [(c, c.get("restartPolicy") == "Always") for c, _ in containers]
    containers += [(c, True) for c in spec.get("containers") or [] if isinstance(c, dict)]
    out: list[ContainerRequest] = []
    for i, (c, long_lived) in enumerate(containers):
        reqs = defaulted_requests(c)
        keys = sorted(str(k) for k in reqs)
        for name in keys:
            if name not in mapping or not is_dra_extended_resource_name(name, sem):
                continue
            q = _int_quantity(reqs[name])
            if q is None:
                continue
            out.append(ContainerRequest(i, str(c.get("name") or ""), name, q, long_lived, keys.index(name)))
    return ExtendedResources(out, {r.resource: mapping[r.resource] for r in out}, sem.gate("DRAExtendedResource"))


def unmapped_extended(pod: dict, sem: Semantics) -> list[str]:
    """The extended resources the pod's containers ask for (the names a DeviceClass may map), whether or not a class
    maps them: what the DeviceClasses decide when the input holds none."""
    spec = pod.get("spec") or {}
    names: set[str] = set()
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or []:
            if isinstance(c, dict):
                names.update(str(n) for n in defaulted_requests(c) if is_dra_extended_resource_name(str(n), sem))
    return sorted(names)


def uses_dra(pod: dict, classes: list[dict], sem: Semantics) -> bool:
    """The pod has ResourceClaims (named or from templates) or asks for a DRA-backed extended resource (a class maps
    it and DRAExtendedResource is on: with the gate off it is a device plugin's resource)."""
    if (pod.get("spec") or {}).get("resourceClaims"):
        return True
    if not classes:
        return False
    ext = pod_extended_resources(pod, classes, sem)
    return ext.gate and bool(ext.requests)


def _req_name(r: ContainerRequest) -> str:
    return f"container-{r.index}-request-{r.key_index}"


def build_requests(ext: ExtendedResources, resources: list[str], sem: Semantics) -> tuple[list[dict], list[dict]]:
    """The claim's device requests and the container → request mappings for the resources that need DRA.

    1.35+ createRequestsAndMappings: per resource (sorted), each long-lived container gets its own request; a plain
    init container first reuses the requests of long-lived containers at its index or later, adding their counts
    until it has enough, and asks for the rest itself; of the init containers' own requests only the largest is kept.
    Requests are sorted by name. 1.34 createDeviceRequests: one request per container and resource."""
    requests: list[dict] = []
    mappings: list[dict] = []

    def request(r: ContainerRequest, count: int) -> dict:
        cls = name_of(ext.classes[r.resource])
        return {
            "name": _req_name(r),
            "exactly": {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count},
        }

    for res in sorted(resources):
        rs = [r for r in ext.requests if r.resource == res]
        if not sem.components.extended_requests_by_lifetime:
            for r in rs:
                requests.append(request(r, r.quantity))
                mappings.append({"containerName": r.container, "resourceName": res, "requestName": _req_name(r)})
            continue
        long_lived = [r for r in rs if r.long_lived]
        for r in long_lived:
            requests.append(request(r, r.quantity))
            mappings.append({"containerName": r.container, "resourceName": res, "requestName": _req_name(r)})
        short: list[tuple[dict, int]] = []  # (request, count)
        short_maps: list[dict] = []
        for r in (x for x in rs if not x.long_lived):
            total = 0
            for ll in (x for x in long_lived if x.index >= r.index):
                if total >= r.quantity:
                    break
                short_maps.append({"containerName": r.container, "resourceName": res, "requestName": _req_name(ll)})
                total += ll.quantity
            if total < r.quantity:
                own = request(r, r.quantity - total)
                short.append((own, r.quantity - total))
                short_maps.append({"containerName": r.container, "resourceName": res, "requestName": own["name"]})
        if short:
            keep = max(short, key=lambda t: t[1])[0]  # max() keeps the first of equal counts
            dropped = {s[0]["name"] for s in short if s[0] is not keep}
            for m in short_maps:
                if m["requestName"] in dropped:
                    m["requestName"] = keep["name"]
            requests.append(keep)
        mappings.extend(short_maps)
    if sem.components.extended_requests_by_lifetime:
        requests.sort(key=lambda r: r["name"])
    return requests, mappings


def in_memory_claim(pod: dict, requests: list[dict]) -> dict:
    """The claim as the scheduler holds it before PreBind creates it (generateName <pod>-extended-resources-)."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": IN_MEMORY_NAME,
            "namespace": ns_of(pod),
            "generateName": f"{name_of(pod)}-extended-resources-",
            "annotations": {CLAIM_ANNOTATION: "true"},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": name_of(pod),
                    "uid": meta_of(pod).get("uid"),
                    "controller": True,
                }
            ],
        },
        "spec": {"devices": {"requests": requests}},
    }


def extended_claims(claims: dict) -> list[dict]:
    """The claims kube-scheduler created for extended resources (its annotation), in the order of claims."""
    return [c for c in claims.values() if (meta_of(c).get("annotations") or {}).get(CLAIM_ANNOTATION) == "true"]


def find_claim(pod: dict, claims: dict, annotated: list | None = None) -> tuple[dict | None, list[dict], list[Finding]]:
    """The scheduler-created claim: the one pod.status.extendedResourceClaimStatus names, else (findExtendedResourceClaim)
    one with the annotation and the pod as controller owner. Returns (claim, requestMappings, findings)."""
    ns, uid = ns_of(pod), meta_of(pod).get("uid")
    st = (pod.get("status") or {}).get("extendedResourceClaimStatus")
    findings: list[Finding] = []
    mappings: list[dict] = []
    if st is not None:
        if not isinstance(st, dict) or not isinstance(st.get("resourceClaimName"), str):
            findings.append(
                make(
                    "DRA222",
                    "pod.status.extendedResourceClaimStatus is malformed: it has no resourceClaimName string",
                    status=st if isinstance(st, dict) else str(st),
                )
            )
            st = {}
        raw = st.get("requestMappings") or []
        if not isinstance(raw, list) or not all(isinstance(m, dict) for m in raw):
            findings.append(
                make(
                    "DRA222",
                    "pod.status.extendedResourceClaimStatus.requestMappings is not a list of "
                    "{containerName, resourceName, requestName}",
                    status=st,
                )
            )
            raw = []
        mappings = [{k: str(m.get(k, "")) for k in ("containerName", "resourceName", "requestName")} for m in raw]
        name = st.get("resourceClaimName")
        if name and (ns, name) in claims:
            return claims[(ns, name)], mappings, findings
    for c in claims.values() if annotated is None else annotated:
        if ns_of(c) != ns or (meta_of(c).get("annotations") or {}).get(CLAIM_ANNOTATION) != "true":
            continue
        if any(
            o.get("kind") == "Pod"
            and o.get("controller")
            and o.get("name") == name_of(pod)
            and (not uid or o.get("uid") == uid)
            for o in meta_of(c).get("ownerReferences") or []
        ):
            return c, mappings, findings
    return None, mappings, findings


@dataclass
class ExtendedPlan:
    """What explain pod does with the pod's extended resources: the claim to analyse (the scheduler's own once it
    exists, else the one it would build), the nodes that serve them through a device plugin instead, the mappings."""

    resources: list[str]
    claim: dict | None = None
    created: bool = False  # the scheduler created it (PreBind); else in memory only
    mappings: list[dict] = field(default_factory=list)
    plugin_nodes: dict[str, str] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "resources": self.resources,
            "claim": name_of(self.claim) if self.claim else None,
            "created": self.created,
            "requestMappings": self.mappings,
            "devicePluginNodes": self.plugin_nodes,
        }


def plan(
    pod: dict,
    classes: Sequence[dict],
    claims: dict,
    nodes: Sequence[dict],
    slices: Sequence[dict],
    sem: Semantics,
    annotated: list | None = None,
) -> ExtendedPlan | None:
    """annotated: extended_claims(claims), when the caller has it already."""
    ext = pod_extended_resources(pod, classes, sem)
    existing, mappings, findings = find_claim(pod, claims, annotated) if ext.gate else (None, [], [])
    if not ext.requests and existing is None:
        return None
    p = ExtendedPlan(ext.resources, mappings=mappings, findings=findings)
    if not ext.gate:
        p.findings.append(
            make(
                "DRA221",
                f"{', '.join(ext.resources)} is requested as an extended resource, but DRAExtendedResource is "
                f"off in the assumed Kubernetes {sem.version_str}: it is a device-plugin resource "
                "(NodeResourcesFit decides), not DRA",
                resources=ext.resources,
            )
        )
        return p
    if existing is not None:
        p.claim, p.created = existing, True
        alloc = (existing.get("status") or {}).get("allocation")
        if not alloc and ((existing.get("spec") or {}).get("devices") or {}).get("requests"):
            # Never reused: Filter fails every node, PostFilter deletes it, the next attempt builds a new one.
            p.findings.append(
                make(
                    "DRA223",
                    f"the scheduler's extended-resource claim {name_of(existing)} from an earlier attempt is not "
                    "allocated: the scheduler rejects every node with 'cannot schedule extended resource claim', "
                    "deletes the claim and tries again with a new one",
                    claim=name_of(existing),
                )
            )
            p.claim, p.created = None, False
        else:
            return p
    bound = (pod.get("spec") or {}).get("nodeName")
    if bound:  # only the node the pod is bound to counts
        nodes = [n for n in nodes if name_of(n) == bound]
    p.plugin_nodes = device_plugin_nodes(nodes, ext.resources, sem)
    p.findings.extend(double_admission(nodes, ext, slices))
    dra_nodes = [n for n in nodes if name_of(n) not in p.plugin_nodes]
    needed = [r for r in ext.resources if any(needs_dra(n, r, sem) for n in dra_nodes)] if dra_nodes else []
    if not needed:
        p.findings.append(
            make(
                "DRA224",
                f"{', '.join(ext.resources)}: "
                + (f"node {bound} serves" if bound else "every node serves")
                + " it through a device plugin, so the DynamicResources plugin leaves it to NodeResourcesFit",
                nodes=p.plugin_nodes,
            )
        )
        return p
    requests, maps = build_requests(ext, needed, sem)
    p.claim, p.mappings = in_memory_claim(pod, requests), maps
    return p


def via_plugin_finding(p: ExtendedPlan, node: str | None) -> Finding | None:
    """DRA227: the node where the dry-run places the pod serves its extended resources through a device plugin."""
    if node is None or node not in p.plugin_nodes:
        return None
    them = "it" if len(p.resources) == 1 else "them"
    return make(
        "DRA227",
        f"node {node} {p.plugin_nodes[node]}: the scheduler allocates no DRA device for {them} there, and "
        f"NodeResourcesFit counts {them} against the node's allocatable",
        node=node,
        resources=p.resources,
    )


def prebind_defect_finding(p: ExtendedPlan | None, dry, own_claims: bool, sem: Semantics) -> Finding | None:
    """DRA228 when every node where the pod fits serves its extended resources through a device plugin and the pod
    has claims of its own (the scheduler fails PreBind there, forever); DRA229 when other nodes fit too."""
    if p is None or p.created or p.claim is None or not p.plugin_nodes or not own_claims:
        return None
    if not sem.components.prebind_fails_without_mappings:
        return None
    fits = [x.node for x in dry.allocatable if dry._fit_state(x.node) is not False]
    bad = [n for n in fits if n in p.plugin_nodes]
    if not bad:
        return None
    good = [n for n in fits if n not in p.plugin_nodes]
    them = ", ".join(p.resources)
    where = bad[0] if len(bad) == 1 else f"{len(bad)} nodes ({', '.join(bad[:3])}{', ...' if len(bad) > 3 else ''})"
    if good or dry.capped:
        return make(
            "DRA229",
            f"the pod fits on {where}, whose device plugin serves {them}, and on {', '.join(good) or 'nodes not tried'}: "
            f"on the first, kube-scheduler {sem.version_str} fails PreBind ('nil or empty request mappings') because "
            "the pod has claims of its own (DRA228); which node it picks decides",
            nodes=bad,
            other=good,
        )
    return make(
        "DRA228",
        f"the pod fits only on {where}, whose device plugin serves {them}; with claims of its own there, "
        f"kube-scheduler {sem.version_str} fails PreBind ('nil or empty request mappings') on every attempt and the "
        "pod stays Pending (a known upstream defect)",
        nodes=bad,
    )


def extended_claim_for(pod: dict, snap, sem: Semantics) -> dict | None:
    """For `match claim -f pod.yaml`: the claim the scheduler would build for the pod's extended resources now."""
    ns = ns_of(pod) or "default"
    pod = dict(pod, metadata=dict(meta_of(pod), namespace=ns))
    claims = {(ns_of(c), name_of(c)): c for c in snap.claims}
    p = plan(pod, list(snap.classes), claims, list(snap.nodes), list(snap.slices), sem)
    if p is None or p.claim is None or p.created:
        return None
    return dict(p.claim, metadata=dict(p.claim["metadata"], name=f"{name_of(pod)}-extended-resources"))
