"""What a command is asked about, found in the snapshot before any analysis: the pods a label selector picks
(explain pod -l), the claim match looks at (named, from a manifest, or the one kube-scheduler would build for a pod's
DRA-backed extended resources) and the devices filters that must name something that exists. A target that finds
nothing is an error that says what does exist; cli/ only turns the flags into these calls."""

from __future__ import annotations

from kubectl_dra.errors import DraError
from kubectl_dra.features import Semantics
from kubectl_dra.model.labels import matches
from kubectl_dra.model.snapshot import Snapshot


def selected_pods(snap: Snapshot, reqs, namespace: str, all_namespaces: bool) -> list[tuple[str, str]]:
    """(namespace, name) of each pod the parsed label selector picks, sorted: in `namespace`, or with -A in any (a pod
    without a namespace is in the command's)."""
    return sorted(
        (p["metadata"].get("namespace") or namespace, p["metadata"]["name"])
        for p in snap.pods
        if (all_namespaces or (p["metadata"].get("namespace") or namespace) == namespace)
        and matches(reqs, p["metadata"].get("labels"))
    )


def claim_to_match(
    snap: Snapshot, sem: Semantics, namespace: str, name: str | None, manifest: dict | None, filename: str | None
) -> dict:
    """The claim `match claim` answers for: the -f manifest's ResourceClaim or template; for a Pod manifest, the claim
    kube-scheduler would build from its DRA-backed extended resources (an error if it asks for none a DeviceClass
    maps); else claim `name` in `namespace` (kubectl's not-found error, with the namespaces that have one)."""
    claim = manifest
    if claim is not None and claim.get("kind") == "Pod":
        from kubectl_dra.analyze.pod.extended import extended_claim_for

        claim = extended_claim_for(claim, snap, sem)
        if claim is None:
            raise DraError(
                f"{filename}: the pod requests no extended resource that a DeviceClass maps "
                "(with DRAExtendedResource on)"
            )
    if claim is None:
        claim = next(
            (c for c in snap.claims if c["metadata"].get("namespace") == namespace and c["metadata"]["name"] == name),
            None,
        )
        if claim is None:
            from kubectl_dra.model.scope import not_found

            raise not_found(snap, "ResourceClaim", name, namespace)
    return claim


def check_device_filters(snap: Snapshot, node, driver, device_class, pool) -> tuple:
    """A --node, --class, --driver or --pool that names nothing in the cluster is a typo, not an empty answer: one
    error (exit 2) saying so, with the nearest name. A name that exists and matches no device is the normal empty
    answer. Unchecked where the kind could not be read. --pool also takes DRIVER/POOL, as the output prints a pool:
    returns the (driver, pool) filters to apply."""
    import difflib

    unread = {g.resource.split(".")[0] for g in snap.gaps}

    def missing(what: str, name: str, known: set) -> DraError:
        near = difflib.get_close_matches(name, sorted(known), n=1)
        hint = f' (did you mean "{near[0]}"?)' if near else ""
        return DraError(f'{what} "{name}" not found{hint}')

    specs = [sl.get("spec") or {} for sl in snap.slices]
    if node and not {"nodes", "resourceslices"} & unread:
        known = {(n.get("metadata") or {}).get("name") for n in snap.nodes} | {s.get("nodeName") for s in specs}
        if node not in known:
            raise missing("node", node, {k for k in known if isinstance(k, str)})
    if device_class and "deviceclasses" not in unread:
        known = {(c.get("metadata") or {}).get("name") for c in snap.classes}
        if device_class not in known:
            raise missing("DeviceClass", device_class, {k for k in known if isinstance(k, str)})
    if "resourceslices" in unread:
        return driver, pool
    drivers = {s.get("driver") for s in specs if isinstance(s.get("driver"), str)}
    if driver and driver not in drivers and "deviceclasses" not in unread:
        # a driver a DeviceClass names exists for the user even with nothing published: the empty answer, whose
        # note says why (no slices of it; its kubelet plugin's state), not "not found"
        from kubectl_dra.analyze.pod.daemonset import class_expressions, drivers_named

        drivers |= {d for c in snap.classes for d in drivers_named(class_expressions(c))}
    if driver and driver not in drivers:
        raise missing("driver", driver, drivers)
    pools = {(s.get("driver"), (s.get("pool") or {}).get("name")) for s in specs}
    if pool and not any(p == pool and (not driver or d == driver) for d, p in pools):
        d, _, p = pool.partition("/")  # DRIVER/POOL; a pool name may hold slashes, a driver name never does
        if p and (d, p) in pools and (not driver or driver == d):
            return d, p
        known = {p for d, p in pools if isinstance(p, str) and (not driver or d == driver)}
        known |= {f"{d}/{p}" for d, p in pools if isinstance(p, str) and (not driver or d == driver)}
        raise missing("pool", pool, known)
    return driver, pool
