"""The pod's requests as kube-scheduler's NodeResourcesFit computes them (fit.py checks them against the node).

upstream (1.34-1.37): k8s.io/component-helpers/resource PodRequests / AggregateContainerRequests (the sum of the
containers and restartable init containers, the max with each init container plus the sidecars before it,
pod-level requests for cpu, memory and hugepages-*, plus spec.overhead), pkg/scheduler/framework/types.go
PodInfo.CalculateResource (a bound pod counts max(spec, status resources, allocated) per container, and what its
devices' nodeAllocatableResources add), pkg/scheduler/util IsScalarResourceName; amounts in nano-units, and
scheduler_units for the scheduler's own (cpu in millicores, the others whole)."""

from __future__ import annotations

import math
from functools import lru_cache

from kubectl_dra.analyze.pod.extended import defaulted_requests, is_extended_resource_name
from kubectl_dra.analyze.pod.nodealloc import status_nano
from kubectl_dra.errors import DraError
from kubectl_dra.quantity import QuantityError, parse_quantity

NATIVE = ("cpu", "memory", "ephemeral-storage")
_POD_LEVEL = ("cpu", "memory")


@lru_cache(maxsize=1024)
def is_scalar_resource_name(name: str) -> bool:
    """schedutil.IsScalarResourceName: extended, hugepages-*, kubernetes.io/-prefixed native, attachable-volumes-*."""
    return (
        is_extended_resource_name(name)
        or name.startswith("hugepages-")
        or "kubernetes.io/" in name
        or name.startswith("attachable-volumes-")
    )


NANO = 10**9


class BadQuantity(ValueError):
    """A resource list entry the API server would have refused."""


@lru_cache(maxsize=4096)
def _nano(text: str) -> int:
    """A quantity in nano-units, exact for every quantity the API server stores (it keeps at most nine decimals;
    anything finer is rounded up, as Quantity does). The same few strings recur in every pod: parsed once."""
    try:
        return math.ceil(parse_quantity(text) * NANO)
    except (QuantityError, TypeError, ValueError):
        raise BadQuantity(text) from None


def _d(x) -> dict:
    return x if isinstance(x, dict) else {}


def _l(x) -> list:
    return x if isinstance(x, list) else []


def nano_list(x) -> dict[str, int]:
    """A ResourceList in nano-units."""
    out = {}
    for k, v in _d(x).items():
        if not isinstance(v, (str, int, float)) or isinstance(v, bool):
            raise BadQuantity(f"{k}: {v!r}")
        try:
            out[str(k)] = _nano(str(v))
        except BadQuantity:
            raise BadQuantity(f"{k}: {v!r}") from None
    return out


def checked_requests(obj: dict, what: str, bound: bool = False, nalloc: bool = False) -> dict[str, int]:
    """pod_requests, with a quantity the API server would refuse as the one-line error of bad input. nalloc: with
    the pod's status.nodeAllocatableResourceClaimStatuses (DRANodeAllocatableResources, nodealloc.py)."""
    try:
        dra = None
        if nalloc:
            try:
                dra = status_nano(obj)
            except (QuantityError, TypeError, ValueError):
                raise BadQuantity("status.nodeAllocatableResourceClaimStatuses") from None
        return scheduler_units(pod_requests(obj, bound=bound, dra=dra))
    except BadQuantity as e:
        m = _d(obj.get("metadata"))
        raise DraError(f"{what} {m.get('namespace')}/{m.get('name')}: {e} is not a valid quantity") from None


def _add(into: dict, rl: dict) -> None:
    for k, v in rl.items():
        into[k] = into.get(k, 0) + v


def _max(into: dict, rl: dict) -> None:
    for k, v in rl.items():
        if v > into.get(k, 0):
            into[k] = v


def _infeasible(pod: dict) -> bool:
    for c in _l(_d(pod.get("status")).get("conditions")):
        if isinstance(c, dict) and c.get("type") == "PodResizePending":
            return c.get("reason") == "Infeasible"
    return False


def aggregate(pod: dict, pick) -> dict[str, int]:
    """aggregateContainerResourcesByFn: containers and sidecars summed; the max with each init container (plus the
    sidecars started before it)."""
    spec = _d(pod.get("spec"))
    result: dict = {}
    for c in _l(spec.get("containers")):
        if isinstance(c, dict):
            _add(result, pick(c))
    sidecars: dict = {}
    inits: dict = {}
    for c in _l(spec.get("initContainers")):
        if not isinstance(c, dict):
            continue
        rl = pick(c)
        if c.get("restartPolicy") == "Always":
            _add(result, rl)
            _add(sidecars, rl)
            use = dict(sidecars)
        else:
            use = dict(rl)
            _add(use, sidecars)
        _max(inits, use)
    _max(result, inits)
    return result


def as_spec(pod: dict, statuses: dict) -> bool:
    """Every container's status says what its spec says (the common case of a running pod): the max of the three
    is the spec's, without aggregating the other two."""
    spec = _d(pod.get("spec"))
    for c in _l(spec.get("containers")) + _l(spec.get("initContainers")):
        if not isinstance(c, dict):
            return False
        cs = statuses.get(c.get("name"))
        if cs is None:
            continue
        want = defaulted_requests(c)
        alloc, actual = cs.get("allocatedResources"), _d(cs.get("resources")).get("requests")
        if (alloc is not None and alloc != want) or (actual is not None and actual != want):
            return False
    return True


def pod_requests(pod: dict, bound: bool = False, dra: dict | None = None) -> dict[str, int]:
    """component-helpers PodRequests, in nano-units. bound: as the node cache counts a pod already on a node
    (UseStatusResources: max of spec, status.containerStatuses[].resources.requests and .allocatedResources, per
    aggregate). dra: what its node-allocatable claims add (addDRANodeAllocatableClaimResources: to the spec's and the
    allocated aggregates, before pod-level requests replace them)."""
    spec_pick = lambda c: nano_list(defaulted_requests(c))  # noqa: E731
    reqs = aggregate(pod, spec_pick)
    if dra:
        _add(reqs, dra)
    statuses: dict = {}
    if bound:
        status = _d(pod.get("status"))
        for cs in _l(status.get("containerStatuses")) + _l(status.get("initContainerStatuses")):
            if isinstance(cs, dict) and cs.get("name") not in statuses:
                statuses[cs.get("name")] = cs
    infeasible = bound and _infeasible(pod)
    if bound and (infeasible or not as_spec(pod, statuses)):

        def allocated(c):
            cs = statuses.get(c.get("name")) or {}
            if cs.get("allocatedResources") is not None:
                return nano_list(cs["allocatedResources"])
            return {} if infeasible else spec_pick(c)

        def actuated(c):
            cs = statuses.get(c.get("name")) or {}
            if _d(cs.get("resources")).get("requests") is not None:
                return nano_list(cs["resources"]["requests"])
            if cs.get("allocatedResources") is not None:
                return nano_list(cs["allocatedResources"])
            return {} if infeasible else spec_pick(c)

        out: dict = {} if infeasible else dict(reqs)
        _max(out, aggregate(pod, actuated))
        got = aggregate(pod, allocated)
        if dra:
            _add(got, dra)
        _max(out, got)
        reqs = out
    level = nano_list(_d(_d(pod.get("spec")).get("resources")).get("requests"))
    if any(k in _POD_LEVEL or k.startswith("hugepages-") for k in level):
        for k, v in level.items():
            if k in _POD_LEVEL or k.startswith("hugepages-"):
                reqs[k] = v
    _add(reqs, nano_list(_d(pod.get("spec")).get("overhead")))
    return reqs


def scheduler_units(rl: dict[str, int]) -> dict[str, int]:
    """framework.Resource: cpu in millicores (MilliValue), the rest in units (Value), both rounded up; names the
    scheduler does not track (pods in a request, unknown native names) left out."""
    out = {}
    for k, v in rl.items():
        if k == "cpu":
            out[k] = -(-v // (NANO // 1000))
        elif k in NATIVE[1:] or is_scalar_resource_name(k):
            out[k] = -(-v // NANO)
    return out
