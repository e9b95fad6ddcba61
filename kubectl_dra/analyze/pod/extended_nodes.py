"""DRA-backed extended resources, the nodes' side (upstream: extendeddynamicresources.go filterExtendedResources):
whether a node serves a resource through its device plugin (node allocatable) or leaves it to DRA, and the nodes
where both may hand out the same devices. The pod's side, its claim and plan, is extended.py."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from kubectl_dra.analyze.pod.claims import name_of
from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import Finding, make
from kubectl_dra.quantity import QuantityError, parse_quantity


def _allocatable(node: dict, res: str) -> tuple[bool, Fraction]:
    alloc = (node.get("status") or {}).get("allocatable") or {}
    if res not in alloc:
        return False, Fraction(0)
    try:
        return True, parse_quantity(str(alloc[res]))
    except QuantityError:
        return True, Fraction(0)


def needs_dra(node: dict, res: str, sem: Semantics) -> bool:
    """filterExtendedResources: a mapped resource goes to DRA on a node whose allocatable lacks it or has 0 of it
    (1.34: only when the key is absent); otherwise the node's device plugin serves it and NodeResourcesFit decides."""
    present, value = _allocatable(node, res)
    if not sem.components.zero_allocatable_goes_to_dra:
        return not present
    return value <= 0


def device_plugin_nodes(nodes: Sequence[dict], resources: list[str], sem: Semantics) -> dict[str, str]:
    """Nodes that serve one of the resources through a device plugin (node allocatable): not a DRA path."""
    out = {}
    for n in nodes:
        if n.get("synthetic"):
            continue
        served = [
            f"{r} (allocatable {((n.get('status') or {}).get('allocatable') or {}).get(r)})"
            for r in resources
            if not needs_dra(n, r, sem)
        ]
        if served:
            out[name_of(n)] = "serves " + ", ".join(served) + " through a device plugin"
    return out


def same_vendor(resource: str, driver) -> bool:
    """A device plugin's resource (nvidia.com/gpu) and a DRA driver (gpu.nvidia.com) of one vendor: the resource's
    domain is the driver's name, one of its parent domains, or a subdomain of it."""
    domain = resource.split("/", 1)[0]
    return isinstance(driver, str) and (
        driver == domain or driver.endswith("." + domain) or domain.endswith("." + driver)
    )


def double_admission(nodes: Sequence[dict], ext, slices: Sequence[dict]) -> list[Finding]:
    """ext: the pod's extended.ExtendedResources. A node whose allocatable advertises a resource and whose DRA slices publish devices for the same name: the
    kubelet's device plugin and the DRA driver may hand out the same devices twice."""
    out = []
    drivers_on: dict[str, set] = {}
    for s in slices:
        spec = s.get("spec") or {}
        if spec.get("nodeName") and spec.get("devices"):
            drivers_on.setdefault(spec["nodeName"], set()).add(spec.get("driver"))
    for n in nodes:
        name = name_of(n)
        for res in ext.resources:
            present, value = _allocatable(n, res)
            if not present or value <= 0 or name not in drivers_on:
                continue
            drivers = sorted(d for d in drivers_on[name] if same_vendor(res, d))
            if drivers:
                out.append(
                    make(
                        "DRA225",
                        f"node {name} advertises {res} through a device plugin (allocatable "
                        f"{((n.get('status') or {}).get('allocatable') or {}).get(res)}) and publishes DRA "
                        f"devices of driver {', '.join(drivers)}: the same devices may be handed out "
                        "twice",
                        node=name,
                        resource=res,
                        drivers=drivers,
                    )
                )
    return out
