"""`kubectl dra lint`: DRA mistakes the API server accepts and the scheduler only reveals at run time, found in
manifests before they are applied. Each check is a registry code (DRA7xx) and lives once, in the module of the
objects it reads:

  * selectors.py: the CEL selectors of classes and claims (DRA701 compile, DRA702 cost, DRA703 names no device
    has, DRA709 types);
  * objects.py: API versions (DRA704, DRA712), claims' misplaced fields (DRA705) and class references (DRA708),
    DeviceTaintRules (DRA706), extendedResourceNames (DRA707, DRA710);
  * pods.py: the pod specs of every workload kind (DRA708 templates and container claims, DRA705, DRA711).

Each finding has the file, line and column it is about. The reference inventory (a live cluster or a dump)
supplies the attribute and capacity names devices really publish, the classes and templates that exist, the nodes'
device-plugin resources and the devices a taint rule would hit."""

from __future__ import annotations

from dataclasses import dataclass, field

from kubectl_dra.analyze.allocator import SelectorEvaluator
from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import Finding, make
from kubectl_dra.findings.registry import REGISTRY
from kubectl_dra.model.meta import name_of, ns_of
from kubectl_dra.model.snapshot import Snapshot

SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


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


@dataclass
class Context:
    """What every check reads (built once per run) and where the findings go."""

    manifests: list
    reference: Snapshot | None
    sem: Semantics
    evaluator: SelectorEvaluator
    attrs: dict  # {domain: {name: type}} of the reference devices
    caps: dict
    classes: dict  # DeviceClass name -> object, from the files and the reference
    templates: set  # (namespace, name) of the ResourceClaimTemplates in the files and the reference
    out: list = field(default_factory=list)

    def add(self, m, path: tuple, code: str, message: str, column_offset: int = 0, **evidence) -> None:
        line, col = m.position(path)
        self.out.append(LintFinding(m.file, line, col + column_offset, make(code, message, **evidence)))

    def add_at(self, m, line: int, col: int, code: str, message: str, **evidence) -> None:
        self.out.append(LintFinding(m.file, line, col, make(code, message, **evidence)))


def _context(manifests, reference: Snapshot | None, sem: Semantics) -> Context:
    attrs, caps = _names_in(reference) if reference is not None and reference.slices else ({}, {})
    classes = {name_of(c): c for c in (reference.classes if reference else ())}
    classes.update({name_of(m.obj): m.obj for m in manifests if m.obj.get("kind") == "DeviceClass"})
    templates = {(ns_of(t), name_of(t)) for t in (reference.templates if reference else ())}
    templates |= {
        ((m.obj.get("metadata") or {}).get("namespace") or "default", name_of(m.obj))
        for m in manifests
        if m.obj.get("kind") == "ResourceClaimTemplate"
    }
    return Context(list(manifests), reference, sem, SelectorEvaluator(sem), attrs, caps, classes, templates)


def lint(manifests, reference: Snapshot | None, sem: Semantics, reference_kind: str) -> LintReport:
    from kubectl_dra.analyze.lint import objects, pods, selectors

    ctx = _context(manifests, reference, sem)
    notes: list[str] = []
    if not ctx.attrs and not ctx.caps:
        notes.append(
            "no reference inventory (--from-file DUMP, or --context/--kubeconfig for a cluster's): attribute and capacity names were not checked"
        )
    for kind, resource, what in (
        ("DeviceClass", "deviceclasses.resource.k8s.io", "class names"),
        ("ResourceClaimTemplate", "resourceclaimtemplates.resource.k8s.io", "template names"),
    ):
        if reference is not None and reference.absent(resource) is not None:  # a kubectl get that left it out
            notes.append(f"the reference holds no {kind} objects: {what} were not checked against it")
    per_manifest = (objects.api_version, selectors.check, objects.claim, objects.taint_rule, pods.check)
    for m in ctx.manifests:
        for check in per_manifest:
            check(ctx, m)
    objects.extended_resource_names(ctx)
    out = sorted(ctx.out, key=lambda f: (f.file, f.line, f.column, f.finding.code))
    return LintReport(tuple(out), len(manifests), reference_kind, tuple(notes))
