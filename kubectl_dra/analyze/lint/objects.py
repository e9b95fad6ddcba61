"""Checks on the DRA objects themselves: API versions (DRA704 not served, DRA712 off by default), ResourceClaims'
and templates' misplaced fields (DRA705) and class references (DRA708), DeviceTaintRules (DRA706), and the
DeviceClasses' extendedResourceNames (DRA707 duplicates, DRA710 a device plugin's resource too)."""

from __future__ import annotations

from kubectl_dra.analyze.lint import apiversions
from kubectl_dra.model.meta import name_of

# resource.k8s.io/v1 (and v1beta2) moved these from the request into requests[].exactly
_EXACTLY_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity")


def api_version(ctx, m) -> None:
    o, kind = m.obj, m.obj.get("kind")
    group, _, version = str(o.get("apiVersion") or "").rpartition("/")
    if group != apiversions.GROUP:
        return
    verdict = apiversions.served(version, str(kind), ctx.sem.version)
    if verdict is None:
        return
    code, why = verdict
    fix = apiversions.suggestion(str(kind), ctx.sem.version)
    ctx.add(
        m,
        ("apiVersion",),
        code,
        f"{kind} {name_of(o)}: {why}" + (f": write it as {fix}" if fix and fix != o.get("apiVersion") else ""),
        apiVersion=o.get("apiVersion"),
        kubernetesVersion=ctx.sem.version_str,
    )


def _claim_spec(o: dict) -> tuple[tuple, dict]:
    spec = o.get("spec") or {}
    if o.get("kind") == "ResourceClaim":
        return ("spec",), spec
    return ("spec", "spec"), (spec.get("spec") or {})


def claim(ctx, m) -> None:
    o, kind = m.obj, m.obj.get("kind")
    if kind not in ("ResourceClaim", "ResourceClaimTemplate"):
        return
    what = f"{kind} {name_of(o)}"
    base, cs = _claim_spec(o)
    for where, holder in ((base, cs), (base + ("devices",), cs.get("devices") or {})):
        if isinstance(holder, dict) and "tolerations" in holder:
            ctx.add(
                m,
                where + ("tolerations",),
                "DRA705",
                f"{what}: tolerations belong to a request (requests[].exactly.tolerations or "
                "firstAvailable[].tolerations), not here",
                field="tolerations",
            )
    v1beta1 = str(o.get("apiVersion") or "").endswith("/v1beta1")
    for i, r in enumerate((cs.get("devices") or {}).get("requests") or []):
        if not isinstance(r, dict):
            continue
        rp = base + ("devices", "requests", i)
        _misplaced_in_request(ctx, m, rp, r, what, v1beta1)
        alts = [(("exactly",), r.get("exactly"))] + [
            (("firstAvailable", j), s) for j, s in enumerate(r.get("firstAvailable") or [])
        ]
        if v1beta1:
            alts.append(((), r))
        for alt_path, alt in alts:
            cname = alt.get("deviceClassName") if isinstance(alt, dict) else None
            known = ctx.reference is not None and ctx.reference.absent("deviceclasses.resource.k8s.io") is None
            if cname and known and cname not in ctx.classes:
                ctx.add(
                    m,
                    rp + alt_path + ("deviceClassName",),
                    "DRA708",
                    f"{what}: request {r.get('name')} names DeviceClass {cname}, which neither "
                    "the given files nor the reference define",
                    deviceClass=cname,
                )


def _misplaced_in_request(ctx, m, rp: tuple, r: dict, what: str, v1beta1: bool) -> None:
    """v1 and v1beta2 read a request's device fields under `exactly`; v1beta1 has no `exactly`; a subrequest
    (firstAvailable[]) has the fields itself. Anywhere else the API server drops them (or strict decoding
    refuses them) and the request is not what the file says."""
    name = r.get("name")
    if v1beta1:
        if "exactly" in r:
            ctx.add(
                m,
                rp + ("exactly",),
                "DRA705",
                f"{what}: request {name}: exactly is a resource.k8s.io/v1 field; v1beta1 reads deviceClassName, "
                "selectors and count on the request itself",
                field="exactly",
            )
    else:
        for f in _EXACTLY_FIELDS:
            if f in r:
                ctx.add(
                    m,
                    rp + (f,),
                    "DRA705",
                    f"{what}: request {name}: {f} belongs under exactly (requests[].exactly.{f}) in "
                    f"{o_api(m)}; on the request itself it is not read (the v1beta1 shape)",
                    field=f,
                )
    for j, sub in enumerate(r.get("firstAvailable") or []):
        if isinstance(sub, dict) and "exactly" in sub:
            ctx.add(
                m,
                rp + ("firstAvailable", j, "exactly"),
                "DRA705",
                f"{what}: request {name}: a firstAvailable entry has its fields itself (deviceClassName, "
                "selectors, count), not under exactly",
                field="exactly",
            )


def o_api(m) -> str:
    return str(m.obj.get("apiVersion") or "resource.k8s.io/v1")


def taint_rule(ctx, m) -> None:
    o = m.obj
    if o.get("kind") != "DeviceTaintRule":
        return
    spec = o.get("spec") or {}
    sel = spec.get("deviceSelector")
    if sel:
        return
    effect = (spec.get("taint") or {}).get("effect")
    ref = ctx.reference
    hit = sum(len((s.get("spec") or {}).get("devices") or []) for s in (ref.slices if ref else ()))
    what = (
        "no selector: it matches no device from 1.37.1, but every device on 1.34-1.37.0"
        if sel is None
        else "an empty selector: it matches every device"
    )
    consequence = ""
    if effect == "NoExecute":
        consequence = f"; with {effect} it evicts every pod using a DRA device"
    elif effect == "NoSchedule":
        consequence = f"; with {effect} no new claim gets a device"
    ctx.add(
        m,
        ("spec", "deviceSelector") if sel is not None else ("spec",),
        "DRA706",
        f"DeviceTaintRule {name_of(o)} has {what}"
        + (f" ({hit} in the reference inventory)" if ref is not None else "")
        + consequence,
        effect=effect,
        devices=hit,
    )


def device_plugin_nodes(ctx) -> dict[str, list[str]]:
    """Extended resources (domain/name) the reference nodes advertise in status.allocatable: device plugins'."""
    out: dict[str, list[str]] = {}
    for n in ctx.reference.nodes if ctx.reference is not None else ():
        for res, q in (((n.get("status") or {}).get("allocatable")) or {}).items():
            if "/" in str(res) and str(q) not in ("0", ""):
                out.setdefault(str(res), []).append(name_of(n))
    return out


def extended_resource_names(ctx) -> None:
    by_name: dict[str, list] = {}
    for m in ctx.manifests:
        if m.obj.get("kind") == "DeviceClass":
            ern = (m.obj.get("spec") or {}).get("extendedResourceName")
            if isinstance(ern, str) and ern:
                by_name.setdefault(ern, []).append(m)
    plugin = device_plugin_nodes(ctx)
    for ern, ms in sorted(by_name.items()):
        for m in ms if ern in plugin else ():
            nodes = sorted(plugin[ern])
            ctx.add(
                m,
                ("spec", "extendedResourceName"),
                "DRA710",
                f"DeviceClass {name_of(m.obj)}: extendedResourceName {ern} is also advertised by a device plugin on "
                f"{len(nodes)} node(s) ({', '.join(nodes[:3])}{' ...' if len(nodes) > 3 else ''}): there the scheduler "
                "counts it against the node's allocatable, not DRA, and the same GPUs can be handed out twice",
                extendedResourceName=ern,
                nodes=nodes,
            )
        if len(ms) > 1:
            for m in ms:
                ctx.add(
                    m,
                    ("spec", "extendedResourceName"),
                    "DRA707",
                    f"DeviceClass {name_of(m.obj)}: extendedResourceName {ern} is also the name of "
                    + ", ".join(name_of(x.obj) for x in ms if x is not m)
                    + " (the scheduler maps it to the newest class only)",
                    extendedResourceName=ern,
                )
