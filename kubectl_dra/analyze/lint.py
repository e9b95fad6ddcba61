"""`kubectl dra lint`: DRA mistakes the API server accepts and the scheduler only reveals at run time, found in
manifests before they are applied. Each check is a registry code (DRA7xx); each finding has the file, line and
column it is about. The reference inventory (a live cluster or a dump) supplies the attribute and capacity names
devices really publish, the classes and templates that exist, and the devices a taint rule would hit."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from kubectl_dra.analyze.allocator import SelectorEvaluator
from kubectl_dra.analyze.meta import name_of, ns_of
from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import Finding, make
from kubectl_dra.findings.registry import REGISTRY
from kubectl_dra.model.snapshot import Snapshot

SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
WORKLOAD_POD_SPECS = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
# device.attributes["domain"].name, device.capacity["domain"].name, and the ["name"] index form
_REF = re.compile(r'device\.(attributes|capacity)\[\s*"([^"]+)"\s*\](?:\.([A-Za-z_][A-Za-z0-9_]*)|\[\s*"([^"]+)"\s*\])')
_CEL_POS = re.compile(r"<input>:(\d+):(\d+):")
# an attribute compared with a literal: device.attributes["d"].name <op> "x" | 12 | true (and the literal first)
_ATTR = r'device\.attributes\[\s*"([^"]+)"\s*\]\.([A-Za-z_][A-Za-z0-9_]*)'
_LIT = r'("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false)'
_CMP = re.compile(rf"{_ATTR}\s*(==|!=|<=|>=|<|>)\s*{_LIT}|{_LIT}\s*(==|!=|<=|>=|<|>)\s*{_ATTR}")
_LIT_TYPE = {"string": "a string", "int": "a number", "bool": "a bool"}
_FIX = {
    "version": 'semver("...") (or .isGreaterThan / .compareTo)',
    "int": "a number",
    "bool": "true or false",
    "string": 'a "string"',
}
SELECTOR_MAX_COST = 1_000_000  # k8s.io/api resource/v1 CELSelectorExpressionMaxCost, checked by API validation


@dataclass(frozen=True)
class LintFinding:
    file: str
    line: int
    column: int
    finding: Finding

    @property
    def severity(self) -> str:
        return REGISTRY[self.finding.code].severity

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "column": self.column, **self.finding.to_dict()}


@dataclass(frozen=True)
class LintReport:
    findings: tuple[LintFinding, ...]
    objects: int
    reference: str  # "cluster", "dump", "none"
    notes: tuple[str, ...] = field(default=())

    def worst(self) -> int:
        return max((SEVERITY_RANK[f.severity] for f in self.findings), default=-1)

    def to_dict(self) -> dict:
        from kubectl_dra.findings.model import SCHEMA_VERSION

        return {
            "apiVersion": SCHEMA_VERSION,
            "kind": "LintResult",
            "objects": self.objects,
            "reference": self.reference,
            "notes": list(self.notes),
            "findings": [f.to_dict() for f in self.findings],
        }


def _names_in(snap: Snapshot) -> tuple[dict, dict]:
    """Qualified attribute and capacity names the reference devices publish: {domain: {name: type}}."""
    attrs: dict[str, dict] = {}
    caps: dict[str, dict] = {}
    for sl in snap.slices:
        spec = sl.get("spec") or {}
        driver = spec.get("driver", "")
        for d in spec.get("devices") or []:
            for n, v in (d.get("attributes") or {}).items():
                dom, _, short = n.rpartition("/")
                attrs.setdefault(dom or driver, {})[short] = next(iter(v), "?") if isinstance(v, dict) else "?"
            for n in d.get("capacity") or {}:
                dom, _, short = n.rpartition("/")
                caps.setdefault(dom or driver, {})[short] = "quantity"
    return attrs, caps


def _selectors(m) -> list[tuple[tuple, str]]:
    """(path of the expression, expression) of every CEL selector in a manifest."""
    o, kind, out = m.obj, m.obj.get("kind"), []

    def sels(base: tuple, lst):
        for i, s in enumerate(lst or []):
            expr = ((s or {}).get("cel") or {}).get("expression") if isinstance(s, dict) else None
            if isinstance(expr, str):
                out.append((base + (i, "cel", "expression"), expr))

    spec = o.get("spec") or {}
    if kind == "DeviceClass":
        sels(("spec", "selectors"), spec.get("selectors"))
    elif kind in ("ResourceClaim", "ResourceClaimTemplate"):
        base = ("spec",) if kind == "ResourceClaim" else ("spec", "spec")
        cs = spec if kind == "ResourceClaim" else (spec.get("spec") or {})
        for i, r in enumerate((cs.get("devices") or {}).get("requests") or []):
            if not isinstance(r, dict):
                continue
            rp = base + ("devices", "requests", i)
            if isinstance(r.get("exactly"), dict):
                sels(rp + ("exactly", "selectors"), r["exactly"].get("selectors"))
            sels(rp + ("selectors",), r.get("selectors"))  # v1beta1 shape
            for j, sub in enumerate(r.get("firstAvailable") or []):
                if isinstance(sub, dict):
                    sels(rp + ("firstAvailable", j, "selectors"), sub.get("selectors"))
    return out


def lint(manifests, reference: Snapshot | None, sem: Semantics, reference_kind: str) -> LintReport:
    ev = SelectorEvaluator(sem)
    out: list[LintFinding] = []
    notes: list[str] = []
    attrs, caps = _names_in(reference) if reference is not None and reference.slices else ({}, {})
    if not attrs and not caps:
        notes.append(
            "no reference inventory (no --from-file dump or cluster devices): attribute and capacity names were not checked"
        )

    def add(m, path: tuple, code: str, message: str, **ev_) -> None:
        line, col = m.position(path)
        out.append(LintFinding(m.file, line, col, make(code, message, **ev_)))

    classes = {name_of(c) for c in (reference.classes if reference else ())}
    templates = {(ns_of(t), name_of(t)) for t in (reference.templates if reference else ())}
    classes |= {name_of(m.obj) for m in manifests if m.obj.get("kind") == "DeviceClass"}
    templates |= {
        ((m.obj.get("metadata") or {}).get("namespace") or "default", name_of(m.obj))
        for m in manifests
        if m.obj.get("kind") == "ResourceClaimTemplate"
    }
    ext_names: dict[str, list] = {}
    for m in manifests:
        o, kind = m.obj, m.obj.get("kind")
        api = str(o.get("apiVersion") or "")
        if api == "resource.k8s.io/v1beta1":
            add(
                m,
                ("apiVersion",),
                "DRA704",
                f"{kind} {name_of(o)} uses resource.k8s.io/v1beta1, deprecated and not served from Kubernetes 1.38: "
                "write it as resource.k8s.io/v1",
                apiVersion=api,
            )
        for path, expr in _selectors(m):
            compiled, err = ev.compile(expr)
            if compiled is None:
                line, col = m.position(path)
                pos = _CEL_POS.search(err or "")
                if pos:  # cel-go's line and column inside the expression, from where its text starts in the file
                    el, ec = int(pos.group(1)), int(pos.group(2))
                    if el == 1:
                        col = col + ec - 1
                    else:  # a later line of a block scalar: its indentation in the file plus cel-go's column
                        line += el - 1
                        text = m.lines[line - 1] if 0 < line <= len(m.lines) else ""
                        sub = expr.splitlines()[el - 1] if el - 1 < len(expr.splitlines()) else ""
                        col = max(1, len(text) - len(sub)) + ec if text.endswith(sub) else ec
                code = "DRA702" if "cost" in (err or "").lower() else "DRA701"
                out.append(
                    LintFinding(
                        m.file,
                        line,
                        col,
                        make(code, f"{kind} {name_of(o)}: {' '.join(str(err).split())}", expression=expr),
                    )
                )
                continue
            cost = getattr(compiled, "estimated_cost", 0) or 0
            if cost > SELECTOR_MAX_COST:
                add(
                    m,
                    path,
                    "DRA702",
                    f"{kind} {name_of(o)}: the selector's estimated worst-case cost is {cost:,.0f}, over Kubernetes' "
                    f"limit of {SELECTOR_MAX_COST:,} (CELSelectorExpressionMaxCost): the API server refuses it",
                    estimatedCost=round(cost),
                )
            for cmp_ in _CMP.finditer(expr):
                g = cmp_.groups()
                domain, short, lit = (g[0], g[1], g[3]) if g[0] else (g[5], g[6], g[4])
                have = (attrs.get(domain) or {}).get(short)
                lit_type = "string" if lit.startswith('"') else "bool" if lit in ("true", "false") else "int"
                if have and have in _FIX and have != lit_type and not (have == "int" and lit_type == "int"):
                    add(
                        m,
                        path,
                        "DRA709",
                        f"{kind} {name_of(o)}: attribute {domain}/{short} is a {have} in the reference inventory but is "
                        f"compared with {_LIT_TYPE[lit_type]} ({lit}): compare it with {_FIX[have]}",
                        attribute=f"{domain}/{short}",
                        attributeType=have,
                        literal=lit,
                    )
            for ref in _REF.finditer(expr):
                section, domain, short = ref.group(1), ref.group(2), ref.group(3) or ref.group(4)
                known = attrs if section == "attributes" else caps
                if not known:
                    continue
                names = known.get(domain, {})
                if short in names:
                    continue
                pool = sorted({n for d in known.values() for n in d})
                guess = difflib.get_close_matches(short, pool, n=1)
                line, col = m.position(path)
                if "\n" not in expr[: ref.start()]:
                    col += ref.start()  # where the reference is, on the expression's first line
                out.append(
                    LintFinding(
                        m.file,
                        line,
                        col,
                        make(
                            "DRA703",
                            f"{kind} {name_of(o)}: no device in the reference inventory has {section[:-1] if section == 'attributes' else 'capacity'} "
                            f'"{domain}/{short}"' + (f' (did you mean "{guess[0]}"?)' if guess else ""),
                            section=section,
                            domain=domain,
                            name=short,
                            suggestion=guess[0] if guess else None,
                        ),
                    )
                )
        spec = o.get("spec") or {}
        if kind in ("ResourceClaim", "ResourceClaimTemplate"):
            cs = spec if kind == "ResourceClaim" else (spec.get("spec") or {})
            base = ("spec",) if kind == "ResourceClaim" else ("spec", "spec")
            for where, holder in ((base, cs), (base + ("devices",), cs.get("devices") or {})):
                if isinstance(holder, dict) and "tolerations" in holder:
                    add(
                        m,
                        where + ("tolerations",),
                        "DRA705",
                        f"{kind} {name_of(o)}: tolerations belong to a request (requests[].exactly.tolerations or "
                        "firstAvailable[].tolerations), not here",
                    )
            for i, r in enumerate((cs.get("devices") or {}).get("requests") or []):
                if not isinstance(r, dict):
                    continue
                for alt_path, alt in [(("exactly",), r.get("exactly"))] + [
                    (("firstAvailable", j), s) for j, s in enumerate(r.get("firstAvailable") or [])
                ]:
                    cname = (alt or {}).get("deviceClassName") if isinstance(alt, dict) else None
                    if cname and reference is not None and cname not in classes:
                        add(
                            m,
                            base + ("devices", "requests", i) + alt_path + ("deviceClassName",),
                            "DRA708",
                            f"{kind} {name_of(o)}: request {r.get('name')} names DeviceClass {cname}, which neither "
                            "the given files nor the reference define",
                            deviceClass=cname,
                        )
        elif kind == "DeviceClass":
            ern = spec.get("extendedResourceName")
            if isinstance(ern, str) and ern:
                ext_names.setdefault(ern, []).append(m)
        elif kind == "DeviceTaintRule":
            sel = spec.get("deviceSelector")
            effect = (spec.get("taint") or {}).get("effect")
            if not sel:
                hit = sum(
                    len((s.get("spec") or {}).get("devices") or []) for s in (reference.slices if reference else ())
                )
                what = (
                    "no selector: it matches no device from 1.37.1, but every device on 1.34-1.37.0"
                    if sel is None
                    else "an empty selector: it matches every device"
                )
                add(
                    m,
                    ("spec", "deviceSelector") if sel is not None else ("spec",),
                    "DRA706",
                    f"DeviceTaintRule {name_of(o)} has {what}"
                    + (f" ({hit} in the reference inventory)" if reference is not None else "")
                    + (
                        f"; with {effect} "
                        + (
                            "it evicts every pod using a DRA device"
                            if effect == "NoExecute"
                            else "no new claim gets a device"
                        )
                        if effect in ("NoExecute", "NoSchedule")
                        else ""
                    ),
                    effect=effect,
                    devices=hit,
                )
        path = WORKLOAD_POD_SPECS.get(kind)
        if path is not None:
            pspec = o
            for step in path:
                pspec = (pspec or {}).get(step) if isinstance(pspec, dict) else None
            ns = (o.get("metadata") or {}).get("namespace") or "default"
            for i, pc in enumerate(((pspec or {}).get("resourceClaims")) or []):
                t = (pc or {}).get("resourceClaimTemplateName") if isinstance(pc, dict) else None
                if t and reference is not None and (ns, t) not in templates:
                    add(
                        m,
                        path + ("resourceClaims", i, "resourceClaimTemplateName"),
                        "DRA708",
                        f"{kind} {name_of(o)}: pod claim {pc.get('name')} names ResourceClaimTemplate {t}, which "
                        f"neither the given files nor the reference define in namespace {ns}",
                        template=t,
                    )
    plugin_nodes: dict[str, list] = {}
    for n in reference.nodes if reference is not None else ():
        for res, q in (((n.get("status") or {}).get("allocatable")) or {}).items():
            if "/" in str(res) and str(q) not in ("0", ""):
                plugin_nodes.setdefault(str(res), []).append(name_of(n))
    for ern, ms in sorted(ext_names.items()):
        for m in ms if ern in plugin_nodes else ():
            nodes = sorted(plugin_nodes[ern])
            add(
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
                add(
                    m,
                    ("spec", "extendedResourceName"),
                    "DRA707",
                    f"DeviceClass {name_of(m.obj)}: extendedResourceName {ern} is also the name of "
                    + ", ".join(name_of(x.obj) for x in ms if x is not m)
                    + " (the scheduler maps it to the newest class only)",
                    extendedResourceName=ern,
                )
    out.sort(key=lambda f: (f.file, f.line, f.column, f.finding.code))
    return LintReport(tuple(out), len(manifests), reference_kind, tuple(notes))
