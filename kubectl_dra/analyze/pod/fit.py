"""NodeResourcesFit: the pod's requests against what the node has left, as kube-scheduler's Filter checks them.

upstream (1.34-1.37): pkg/scheduler/framework/plugins/noderesources/fit.go (computePodResourceRequest,
fitsRequest, shouldDelegateResourceToDRA 1.35+, the resourceToDeviceClass check of 1.34),
pkg/scheduler/framework/types.go (Resource.Add for a node's allocatable and the bound pods, SetMaxResource for the
pod's own request, PodInfo.CalculateResource: bound pods with UseStatusResources), pkg/scheduler/util
IsScalarResourceName, and k8s.io/component-helpers/resource PodRequests / AggregateContainerRequests (the sum of the
containers and restartable init containers, the max with each init container plus the sidecars before it,
pod-level requests for cpu, memory and hugepages-*, plus spec.overhead).

PodLevelResources (beta, on from 1.34) and InPlacePodVerticalScaling (beta on from 1.33, GA later) are on by default
in every supported minor: pod-level requests count, and a bound pod counts max(spec, status resources, allocated)
per container. The scheduler's node cache holds the pods with spec.nodeName set that are not Succeeded or Failed
(pods being deleted included): those are what a node has given away. Pods nominated to a node
(status.nominatedNodeName, after a preemption) with a priority not below the pod's count there too in the scheduler's
Filter (RunFilterPluginsWithNominatedPods); kubectl-dra counts them as pods ahead of it in the queue (the queue's
crowd check: any pod ahead that may use the node), not in an --alone answer."""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from kubectl_dra.analyze.pod.claims import name_of
from kubectl_dra.analyze.pod.extended import class_mapping
from kubectl_dra.analyze.pod.extended_nodes import needs_dra
from kubectl_dra.analyze.pod.nodealloc import modelled, node_check
from kubectl_dra.analyze.pod.resources import (
    NANO,
    NATIVE,
    BadQuantity,
    checked_requests,
    nano_list,
    pod_requests,
    scheduler_units,
)
from kubectl_dra.errors import DraError
from kubectl_dra.features import Semantics
from kubectl_dra.model.words import SHOWN, few


def _d(x) -> dict:
    return x if isinstance(x, dict) else {}


@dataclass(frozen=True)
class Shortfall:
    resource: str  # "cpu", "memory", "pods", "example.com/foo"
    requested: int  # scheduler units (cpu: millicores)
    used: int
    capacity: int
    alone: bool = False  # judged without the bound pods: the pod alone asks for more than the node has
    mapped: int = 0  # of requested, what its devices' nodeAllocatableResources add (nodealloc.py)

    @property
    def reason(self) -> str:
        return "Too many pods" if self.resource == "pods" else f"Insufficient {self.resource}"

    @property
    def free(self) -> int:
        return max(0, self.capacity - self.used)

    def describe(self) -> str:
        if self.resource == "pods":
            return f"no room for another pod ({self.used} of {self.capacity} pods run there)"
        f, c, r = (fmt_amount(self.resource, x) for x in (self.free, self.capacity, self.requested))
        if self.mapped:
            r += f", {fmt_amount(self.resource, self.mapped)} of it what its devices' nodeAllocatableResources add"
        if self.alone:
            return f"{c} {self.resource} in all (the pod requests {r})"
        return f"{f} of {c} {self.resource} free (the pod requests {r})"

    def to_dict(self) -> dict:
        out = {"resource": self.resource, "requested": self.requested, "used": self.used, "capacity": self.capacity}
        if self.mapped:
            out["nodeAllocatable"] = self.mapped
        return out


def fmt_amount(resource: str, v: int) -> str:
    if resource == "cpu":
        return str(Fraction(v, 1000)) if v % 1000 == 0 else format(v / 1000, "g")
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if v and v % size == 0:
                return f"{v // size}{unit}"
            if v >= size:
                return f"{v / size:.1f}{unit}"
    return str(v)


@dataclass(frozen=True)
class NodeFit:
    """fits: True, False, or None (unknown: the pods bound to the node are not in the input)."""

    node: str
    fits: bool | None
    shortfalls: tuple = ()
    missing: str = ""  # unknown: "pods" (bound to it), "allocatable" (its status.allocatable), "node" (no Node),
    # "nodealloc" (what its devices' node-allocatable resources add cannot be told: why)
    why: str = ""

    def describe(self) -> str:
        return ", and ".join(s.describe() for s in self.shortfalls)

    def to_dict(self) -> dict:
        return {"node": self.node, "fits": self.fits, "shortfalls": [s.to_dict() for s in self.shortfalls]}


class BoundPods:
    """The pods bound to each node, grouped once (pods + nodes, never their product); their requests are added up
    only for the nodes the fit is checked on (the few where the claims fit), once per node."""

    def __init__(self, pods, complete: bool, live: bool = False, nalloc: bool = False, unported: bool = False):
        self.nalloc = nalloc  # DRANodeAllocatableResources (nodealloc.modelled): pods' node-allocatable statuses count
        # the gate on at a minor whose shape is not ported (1.36): a pod's node-allocatable statuses are not read
        self.live = live  # read from a cluster (or a bundle of one): nodes are as the scheduler sees them
        self.refused = None  # the Gap when the bound pods could not be listed
        self.complete = complete  # every node's bound pods are in the input (a live read or a bundle that has them)
        self.by_node: dict[str, list] = {}
        self.seen: set = set()  # nodes that some pod of the input names, terminated or not
        # node -> why what its bound pods' node-allocatable claim statuses add is unknown (no status; not ported)
        self.statusless: dict = {}
        self.nominated: dict[str, list] = {}  # node -> the pending pods nominated to it (status.nominatedNodeName)
        self._used: dict[str, dict[str, int]] = {}
        self._requests: dict[int, tuple] = {}
        self._allocatable: dict[int, tuple] = {}  # id(node) -> (node, allocatable in scheduler units, pod capacity)
        for p in pods:
            node = (p.get("spec") or {}).get("nodeName")
            if not node:
                nom = (p.get("status") or {}).get("nominatedNodeName")
                if nom and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                    self.nominated.setdefault(nom, []).append(p)
                continue
            self.seen.add(node)
            if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                self.by_node.setdefault(node, []).append(p)
                if nalloc and not isinstance(p.get("status"), dict):  # an edited input: the API writes one
                    self.statusless[node] = _STATUSLESS
                elif unported and (p.get("status") or {}).get("nodeAllocatableResourceClaimStatuses"):
                    self.statusless[node] = _UNPORTED

    def count(self, node: str) -> int:
        return len(self.by_node.get(node, ()))

    def requests(self, pod: dict) -> dict[str, int]:
        """One pod's requests as the node cache counts them (a bound pod's with its status resources)."""
        hit = self._requests.get(id(pod))
        if hit is None or hit[0] is not pod:
            node = (pod.get("spec") or {}).get("nodeName")
            hit = self._requests[id(pod)] = (
                pod,
                checked_requests(pod, f"pod bound to {node}" if node else "pod", bool(node), self.nalloc),
            )
        return hit[1]

    def used(self, node: str) -> dict[str, int]:
        """What the node's bound pods request, as the scheduler's NodeInfo.Requested adds them up."""
        got = self._used.get(node)
        if got is None:
            got = self._used[node] = {}
            for p in self.by_node.get(node, ()):
                for k, v in self.requests(p).items():
                    got[k] = got.get(k, 0) + v
        return got

    def allocatable(self, node: dict) -> tuple[dict, int]:
        """The node's status.allocatable in the scheduler's units and its pod capacity, parsed once per node object
        (the queue's dry-run checks a node for every pod it tries there)."""
        hit = self._allocatable.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1], hit[2]
        try:
            alloc = scheduler_units(nano_list(_d(_d(node.get("status")).get("allocatable"))))
            pods = nano_list({"pods": _d(_d(node.get("status")).get("allocatable")).get("pods", 0)})["pods"]
        except BadQuantity as e:
            raise DraError(f"node {name_of(node)}: status.allocatable {e} is not a valid quantity") from None
        self._allocatable[id(node)] = (node, alloc, -(-pods // NANO))
        return alloc, -(-pods // NANO)

    def known(self, node: str) -> bool:
        """A file without every pod cannot tell "no pods there" from "pods left out": a node counts as known when the
        input has some pod on it (a real node runs at least its DaemonSets' pods)."""
        return self.complete or node in self.seen


class Fit:
    """NodeResourcesFit for one pod, node by node."""

    def __init__(self, pod: dict, bound: BoundPods, classes, sem: Semantics):
        self.pod = pod
        self.bound = bound
        self.sem = sem
        self.request = checked_requests(pod, "pod")
        # the order the shortfalls are listed in: native resources first, then by name
        self._wanted = sorted(
            ((r, w) for r, w in self.request.items() if w > 0), key=lambda kv: (kv[0] not in NATIVE, kv[0])
        )
        self.mapping = class_mapping(list(classes), sem) if sem.gate("DRAExtendedResource") and classes else {}
        self.uid = ((pod.get("metadata") or {}).get("uid")) or None
        # DRANodeAllocatableResources (nodealloc.py): node name -> the Demand of the devices the dry-run picked there,
        # checked as the DynamicResources Filter checks it (the pod's requests plus the demand)
        self.nalloc = modelled(sem)
        self.na: dict = {}
        self._request_nano = pod_requests(pod) if self.nalloc else {}

    def key(self) -> str:
        return repr(sorted(self.request.items()))

    def na_key(self, analyses) -> tuple | None:
        """With node-allocatable resources modelled, what else the devices' demand depends on (nodealloc.pod_demand):
        which containers name which claim, pod-level resources, the pod's names for its claims, and the pod itself
        where a claim is allocated (whether another pod holds it)."""
        if not self.nalloc:
            return None
        spec = self.pod.get("spec") or {}
        refs = tuple(
            (c.get("name"), tuple(r.get("name") for r in (c.get("resources") or {}).get("claims") or []))
            for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])
        )
        mine = self.uid if any(a.allocated for a in analyses) else None
        return (refs, repr(spec.get("resources")), tuple(a.pod_claim_name for a in analyses), mine)

    def _nodealloc(self, name: str, alloc: dict, used: dict, out: list) -> str:
        """The DynamicResources Filter's check of what the devices picked on the node map (nodealloc.node_check),
        run where NodeResourcesFit passes: shortfalls added to out; why it cannot be told, or ""."""
        demand = self.na.get(name)
        if demand is None or not demand.active:
            return ""
        if demand.unknown:
            return demand.unknown
        for res, want, have, mapped in node_check(
            demand, self._request_nano, self.request, alloc, used, scheduler_units
        ):
            out.append(Shortfall(res, want, used.get(res, 0), have, mapped=mapped))
        return ""

    def _delegated(self, res: str, node: dict) -> bool:
        """shouldDelegateResourceToDRA (1.35+; 1.34 its resourceToDeviceClass check): an extended resource that a
        DeviceClass maps and the node has none of goes to DRA, not to NodeResourcesFit."""
        return res in self.mapping and needs_dra(node, res, self.sem)

    def check(self, node: dict, extra: tuple | None = None) -> NodeFit:
        """extra: (requests, pod count) that pods placed on the node after the snapshot add (the queue's dry-run)."""
        name = name_of(node)
        if node.get("synthetic"):  # no Node objects in the input: the node is inferred from the slices
            return NodeFit(name, None, missing="node")
        if not isinstance((node.get("status") or {}).get("allocatable"), dict) and not self.bound.live:
            # A node always has status.allocatable; a file without it left the node's status out (a live read of
            # a node without one is what the scheduler sees: room for no pod).
            return NodeFit(name, None, missing="allocatable")
        alloc, pods_cap = self.bound.allocatable(node)
        statusless = name in self.bound.statusless
        known = self.bound.known(name) and not statusless
        used = self.bound.used(name) if known else {}
        count = self.bound.count(name) if known else 0
        if extra is not None:
            used = {k: used.get(k, 0) + extra[0].get(k, 0) for k in set(used) | set(extra[0])}
            count += extra[1]
        out = []
        if count + 1 > pods_cap:
            out.append(Shortfall("pods", 1, count, pods_cap))
        for res, want in self._wanted:
            if res not in NATIVE and self._delegated(res, node):
                continue
            have = alloc.get(res, 0)
            if want > have - used.get(res, 0):
                out.append(Shortfall(res, want, used.get(res, 0), have))
        if not out and self.na:  # the Filter's own check runs after NodeResourcesFit passes
            why = self._nodealloc(name, alloc, used, out)
            if why:
                return NodeFit(name, None, missing="nodealloc", why=why)
        if out:
            # Without the bound pods, only what the pod alone exceeds is certain.
            certain = [
                replace(s, alone=True)
                for s in out
                if s.requested > s.capacity or (s.resource == "pods" and s.capacity == 0)
            ]
            if known or certain:
                return NodeFit(name, False, tuple(certain if not known else out))
        if statusless:
            return NodeFit(name, None, missing="nodealloc", why=self.bound.statusless[name])
        return NodeFit(name, True if known else None, missing="" if known else "pods")


_STATUSLESS = (
    "a pod bound to it has no status in the input, so what its status.nodeAllocatableResourceClaimStatuses add is "
    "unknown"
)
_UNPORTED = (
    "a pod bound to it has status.nodeAllocatableResourceClaimStatuses, which this minor's scheduler counts in a shape "
    "kubectl-dra does not model"
)


def pod_fit(snap, cache, pod: dict, sem: Semantics) -> Fit | None:
    """The pod's Fit (None for a bound pod: the scheduler no longer filters nodes for it). The bound pods are
    indexed once per analysis (cache: its pod/cache.py Cache)."""
    if (pod.get("spec") or {}).get("nodeName"):
        return None
    if cache.bound_pods is None:
        from kubectl_dra.model.snapshot import BOUND_PODS

        refused = next((g for g in snap.gaps if g.resource == BOUND_PODS), None)
        on = sem.gate("DRANodeAllocatableResources")
        cache.bound_pods = BoundPods(
            snap.pods,
            snap.bound_pods and refused is None,
            snap.source != "files",
            modelled(sem),
            on and not modelled(sem),
        )
        cache.bound_pods.refused = refused
    return Fit(pod, cache.bound_pods, snap.classes, sem)


def _missing(bound: BoundPods, unknown: dict) -> str:
    """What the input lacks to decide NodeResourcesFit on the unknown nodes."""
    out = []
    inferred = sorted(n for n, f in unknown.items() if f.missing == "node")
    status = sorted(n for n, f in unknown.items() if f.missing == "allocatable")
    pods = sorted(n for n, f in unknown.items() if f.missing == "pods")
    for n, f in sorted(unknown.items()):
        if f.missing == "nodealloc":
            out.append(f"on {n}, what node-allocatable resources (DRANodeAllocatableResources) add: {f.why}")
    if inferred:
        out.append(f"the input has no Node objects ({few(inferred)} inferred from the slices)")
    if status:
        out.append(f"the input has no status.allocatable for {few(status)}")
    if pods and bound.refused is not None:
        out.append(f"the pods bound to {few(pods)} could not be listed ({bound.refused.message})")
    elif pods:
        out.append(f"the input has no pod bound to {few(pods)}, and cannot tell an empty node from pods left out")
    return "; ".join(out)


def _each(names: list[str], why: dict) -> str:
    more = f"; and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
    return "; ".join(f"{n}: {why[n]}" for n in names[:SHOWN]) + more


def fit_findings(dry, fit: Fit | None) -> list:
    """DRA504 when NodeResourcesFit rejects every node where the claims fit; DRA506 when it may, because the pods
    bound to those nodes are unknown or the search stopped before it found a node with room; DRA505 (info) when it
    drops some of them and others remain. Where every node is rejected, whether preempting pods of lower priority
    makes room (dry.preemption, preempt.py: DRA507, placed once they are gone; DRA508, open)."""
    from kubectl_dra.analyze.pod.dryrun_search import MAX_DRYRUN_NODES
    from kubectl_dra.findings.model import make

    if fit is None or not dry.allocatable or dry.error_decides:
        return []
    placeable, rejected, unknown = dry.placeable_nodes, dry.fit_rejected, dry.fit_unknown
    why = {n: f.describe() for n, f in rejected.items()}
    evidence = {"fit": {n: f.to_dict() for n, f in dry.fit.items()}, "requests": fit.request}
    names = sorted(rejected)
    if placeable:
        if not rejected:
            return []
        mapped = any(s.mapped for f in rejected.values() for s in f.shortfalls)
        return [
            make(
                "DRA505",
                # (the DynamicResources Filter checks what the devices' nodeAllocatableResources add: nodealloc.py)
                ("NodeResourcesFit and DynamicResources drop " if mapped else "NodeResourcesFit drops ")
                + (
                    f"{names[0]}, where the claims also fit: it has {why[names[0]]}"
                    if len(names) == 1
                    else f"{len(names)} nodes where the claims also fit ({_each(names, why)})"
                )
                + f"; the pod fits on {few(placeable)}",
                nodes=names,
                **evidence,
            )
        ]
    if unknown:
        unames = sorted(unknown)
        also = f"; where it is known, the pod does not fit ({_each(names, why)})" if names else ""
        return [
            make(
                "DRA506",
                f"the claims fit on {few(unames)}, but whether the pod's requests fit there is unknown: "
                + _missing(fit.bound, unknown)
                + also,
                nodes=unames,
                **evidence,
            )
        ]
    if dry.capped:  # the search stopped (its node budget) before it found a node with room: another may have it
        return [
            make(
                "DRA506",
                f"NodeResourcesFit rejects the {len(names)} node(s) where the dry-run found the claims fit "
                f"({_each(names, why)}), and the dry-run stopped after {MAX_DRYRUN_NODES} of "
                f"{dry.considered_nodes} nodes: a node it did not try may have room",
                nodes=names,
                **evidence,
            )
        ]
    if len(names) == 1:
        msg = f"{names[0]} is the only node where the claims fit, and it has {why[names[0]]}"
    else:
        msg = f"the claims fit only on nodes that lack room for the pod: {_each(names, why)}"
    if dry.preemption is not None:
        from kubectl_dra.analyze.pod.preempt import preemption_findings

        got = preemption_findings(dry.preemption, names, msg, evidence)
        if got is not None:
            return got
    return [make("DRA504", msg, nodes=names, **evidence)]
