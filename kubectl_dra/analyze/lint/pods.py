"""Checks on the pod specs of every workload kind: claims that resolve to nothing (DRA708: a template or claim
neither the files nor the reference have, a container claim the pod does not list, a request the claim does not
have), resourceClaims under a container (DRA705), and a pod that asks for devices through DRA and through a
device plugin of the same vendor (DRA711)."""

from __future__ import annotations

import re

from kubectl_dra.analyze.lint.objects import _claim_spec, device_plugin_nodes
from kubectl_dra.analyze.pod.extended import IMPLICIT_PREFIX, is_extended_resource_name
from kubectl_dra.analyze.pod.extended_nodes import same_vendor
from kubectl_dra.model.kinds import BY_KIND
from kubectl_dra.model.meta import name_of, ns_of

WORKLOAD_POD_SPECS = {k.kind: k.pod_spec for k in BY_KIND.values()}
_DRIVER_LITERAL = re.compile(r'device\.driver\s*==\s*"([^"]+)"|"([^"]+)"\s*==\s*device\.driver')


def _containers(pspec: dict):
    for group in ("initContainers", "containers"):
        for i, c in enumerate(pspec.get(group) or []):
            if isinstance(c, dict):
                yield (group, i), c


def check(ctx, m) -> None:
    path = WORKLOAD_POD_SPECS.get(m.obj.get("kind"))
    if path is None:
        return
    pspec = m.obj
    for step in path:
        pspec = pspec.get(step) if isinstance(pspec, dict) else None
    if not isinstance(pspec, dict):
        return
    ns = (m.obj.get("metadata") or {}).get("namespace") or "default"
    what = f"{m.obj.get('kind')} {name_of(m.obj)}"
    claims = _pod_claims(ctx, m, path, pspec, ns, what)
    for cpath, c in _containers(pspec):
        cname = c.get("name")
        if "resourceClaims" in c:
            ctx.add(
                m,
                path + cpath + ("resourceClaims",),
                "DRA705",
                f"{what}: container {cname}: resourceClaims belongs to the pod spec; a container names the pod's "
                "claims under resources.claims[].name",
                field="resourceClaims",
            )
        for k, ref in enumerate(((c.get("resources") or {}).get("claims")) or []):
            if not isinstance(ref, dict):
                continue
            rpath = path + cpath + ("resources", "claims", k)
            if ref.get("name") not in claims:
                ctx.add(
                    m,
                    rpath + ("name",),
                    "DRA708",
                    f"{what}: container {cname} uses claim {ref.get('name')}, which the pod's resourceClaims do not "
                    "list (the API server refuses the pod)",
                    claim=ref.get("name"),
                )
                continue
            spec = claims[ref.get("name")]
            want = ref.get("request")
            if want and spec is not None and want not in _request_names(spec):
                ctx.add(
                    m,
                    rpath + ("request",),
                    "DRA708",
                    f"{what}: container {cname} uses request {want} of claim {ref.get('name')}, which has no such "
                    f"request ({', '.join(sorted(_request_names(spec))) or 'none'})",
                    claim=ref.get("name"),
                    request=want,
                )
    _dra_and_device_plugin(ctx, m, path, pspec, claims, what)


def _pod_claims(ctx, m, path: tuple, pspec: dict, ns: str, what: str) -> dict:
    """Pod claim name -> the claim spec behind it (None when unknown), reporting the ones that resolve to nothing."""
    out: dict = {}
    files = {
        ((x.obj.get("metadata") or {}).get("namespace") or "default", x.obj.get("kind"), name_of(x.obj)): x.obj
        for x in ctx.manifests
        if x.obj.get("kind") in ("ResourceClaim", "ResourceClaimTemplate")
    }
    ref = ctx.reference
    for obj in ref.templates if ref else ():
        files.setdefault((ns_of(obj), "ResourceClaimTemplate", name_of(obj)), obj)
    for obj in ref.claims if ref else ():
        files.setdefault((ns_of(obj), "ResourceClaim", name_of(obj)), obj)
    for i, pc in enumerate(pspec.get("resourceClaims") or []):
        if not isinstance(pc, dict):
            continue
        for field_, kind in (
            ("resourceClaimTemplateName", "ResourceClaimTemplate"),
            ("resourceClaimName", "ResourceClaim"),
        ):
            target = pc.get(field_)
            if not target:
                continue
            obj = files.get((ns, kind, target))
            out[pc.get("name")] = _claim_spec(obj)[1] if obj is not None else None
            known = ref is not None and ref.absent("resourceclaimtemplates.resource.k8s.io") is None
            if obj is None and known and kind == "ResourceClaimTemplate":
                ctx.add(
                    m,
                    path + ("resourceClaims", i, field_),
                    "DRA708",
                    f"{what}: pod claim {pc.get('name')} names {kind} {target}, which neither the given files nor the "
                    f"reference define in namespace {ns}",
                    template=target,
                )
        out.setdefault(pc.get("name"), None)
    return out


def _request_names(spec: dict) -> set[str]:
    names = set()
    for r in (spec.get("devices") or {}).get("requests") or []:
        if isinstance(r, dict) and r.get("name"):
            names.add(r["name"])
            for sub in r.get("firstAvailable") or []:
                if isinstance(sub, dict) and sub.get("name"):
                    names.add(f"{r['name']}/{sub['name']}")
    return names


def _spec_classes(spec: dict) -> set[str]:
    out = set()
    for r in (spec.get("devices") or {}).get("requests") or []:
        if not isinstance(r, dict):
            continue
        for alt in [r.get("exactly"), r] + list(r.get("firstAvailable") or []):
            if isinstance(alt, dict) and isinstance(alt.get("deviceClassName"), str):
                out.add(alt["deviceClassName"])
    return out


def class_drivers(ctx, cls: dict) -> set[str]:
    """The drivers whose devices a class can select: those of the reference devices its selectors accept, and
    any `device.driver == "..."` the selectors name."""
    exprs = [
        ((s or {}).get("cel") or {}).get("expression")
        for s in ((cls.get("spec") or {}).get("selectors") or [])
        if isinstance(s, dict)
    ]
    exprs = [e for e in exprs if isinstance(e, str)]
    out = {a or b for e in exprs for a, b in _DRIVER_LITERAL.findall(e)}
    for sl in ctx.reference.slices if ctx.reference is not None else ():
        spec = sl.get("spec") or {}
        driver = spec.get("driver")
        if driver in out or not isinstance(driver, str):
            continue
        pool = (spec.get("pool") or {}).get("name", "")
        for d in spec.get("devices") or []:
            did = (driver, pool, d.get("name", ""))
            results = [ctx.evaluator.evaluate(e, did, d) for e in exprs]
            if all(r is not None and r.value is True for r in results):
                out.add(driver)
                break
    return out


def _dra_and_device_plugin(ctx, m, path: tuple, pspec: dict, claims: dict, what: str) -> None:
    by_ext = {}
    for name, cls in ctx.classes.items():
        by_ext[IMPLICIT_PREFIX + name] = cls
        ern = (cls.get("spec") or {}).get("extendedResourceName")
        if isinstance(ern, str) and ern:
            by_ext[ern] = cls
    dra: dict[str, str] = {}  # driver -> how the pod asks for its devices
    for claim, spec in claims.items():
        for cname in _spec_classes(spec or {}):
            for drv in class_drivers(ctx, ctx.classes[cname]) if cname in ctx.classes else ():
                dra.setdefault(drv, f"claim {claim} (DeviceClass {cname})")
    plugin_res: list[tuple[tuple, str, str]] = []
    for cpath, c in _containers(pspec):
        res = c.get("resources") or {}
        for r in sorted(set(res.get("requests") or {}) | set(res.get("limits") or {})):
            if r in by_ext:
                for drv in class_drivers(ctx, by_ext[r]):
                    dra.setdefault(drv, f"{r} (DeviceClass {name_of(by_ext[r])})")
            elif is_extended_resource_name(r):
                plugin_res.append((cpath, c.get("name"), r))
    if not dra or not plugin_res:
        return
    plugin = device_plugin_nodes(ctx)
    slice_nodes: dict[str, set] = {}
    for sl in ctx.reference.slices if ctx.reference is not None else ():
        spec = sl.get("spec") or {}
        if spec.get("nodeName"):
            slice_nodes.setdefault(spec.get("driver"), set()).add(spec["nodeName"])
    for cpath, cname, r in plugin_res:
        for drv, how in sorted(dra.items()):
            if not same_vendor(r, drv):
                continue
            both = sorted(set(plugin.get(r, ())) & slice_nodes.get(drv, set()))
            if plugin and not both:
                continue  # the reference knows the nodes, and none has both: not the same devices
            where = f" on {', '.join(both[:3])}{' ...' if len(both) > 3 else ''}" if both else ""
            ctx.add(
                m,
                path + cpath + ("resources",),
                "DRA711",
                f"{what}: container {cname} asks for {r} (a device plugin's resource) and the pod for devices of "
                f"driver {drv} through {how}: one vendor's devices managed twice{where}; neither the kubelet's "
                "device manager nor DRA sees what the other gave out",
                resource=r,
                driver=drv,
                nodes=both,
            )
