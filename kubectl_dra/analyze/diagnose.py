"""explain pod / explain claim / match claim: Snapshot + Semantics -> Report. Pure: no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field

from kubectl_dra.analyze.allocator import (
    AllocatedState,
    AllocationError,
    Allocator,
    Request,
    SelectorEvaluator,
    apply_taint_rules,
    claim_requests,
    obj_ref,
)
from kubectl_dra.analyze.devices import CounterView, DeviceVerdict, Reachability, Universe, device_matrix
from kubectl_dra.analyze.nodes import NodeSelectorError, node_selector_matches, pod_node_rejection
from kubectl_dra.errors import DraError
from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import UNDETERMINED, Finding, Report, make, verdict_from
from kubectl_dra.gather.normalize import event_sort_key
from kubectl_dra.gather.snapshot import Snapshot

POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
MAX_DRYRUN_NODES = 200
MAX_ALLOCATABLE_NODES = 5


def _meta(o: dict) -> dict:
    return o.get("metadata") or {}


def _name(o: dict) -> str:
    return _meta(o).get("name", "")


def _ns(o: dict) -> str:
    return _meta(o).get("namespace", "") or ""


class Index:
    """Lookups over a snapshot."""

    def __init__(self, snap: Snapshot):
        self.snap = snap
        self.pods = {(_ns(p), _name(p)): p for p in snap.pods}
        self.claims = {(_ns(c), _name(c)): c for c in snap.claims}
        self.templates = {(_ns(t), _name(t)): t for t in snap.templates}
        self.classes = {_name(c): c for c in snap.classes}
        self.nodes = sorted(snap.nodes, key=_name)
        self.gaps = list(snap.gaps)
        # Without Node objects (offline dumps), node-local slices still name their node.
        if not self.nodes:
            names = sorted({(s.get("spec") or {}).get("nodeName") for s in snap.slices if (s.get("spec") or {}).get("nodeName")}
                           | {(p.get("spec") or {}).get("nodeName") for p in snap.pods if (p.get("spec") or {}).get("nodeName")})
            self.nodes = [{"metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}}, "synthetic": True} for n in names]
            self.nodes_synthetic = True
        else:
            self.nodes_synthetic = False

    def gap_for(self, resource: str) -> list:
        return [g for g in self.gaps if g.resource.startswith(resource)]


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


def resolve_pod_claims(pod: dict, idx: Index, sem: Semantics) -> list[PodClaim]:
    ns = _ns(pod)
    pref = f"{ns}/{_name(pod)}"
    statuses = {s.get("name"): s for s in ((pod.get("status") or {}).get("resourceClaimStatuses") or [])}
    uid = _meta(pod).get("uid")
    out: list[PodClaim] = []
    for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
        pcn = entry.get("name", "")
        if entry.get("resourceClaimName"):
            pc = PodClaim(pcn, "claim", entry["resourceClaimName"])
            pc.claim = idx.claims.get((ns, pc.source_name))
            if pc.claim is None:
                if idx.gap_for("resourceclaims"):
                    pc.findings.append(_gap_finding(idx.gap_for("resourceclaims")[0]))
                else:
                    pc.findings.append(make("DRA203", f'could not find ResourceClaim "{ns}/{pc.source_name}"',
                                            subject={"podClaim": pcn}, claim=f"{ns}/{pc.source_name}"))
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
                    if _ns(c) != ns:
                        continue
                    if (_meta(c).get("annotations") or {}).get(POD_CLAIM_ANNOTATION) != pcn:
                        continue
                    if any(o.get("kind") == "Pod" and (o.get("uid") == uid if uid else o.get("name") == _name(pod))
                           for o in _meta(c).get("ownerReferences") or []):
                        pc.claim = c
                        break
            if pc.claim is None and not pc.skipped:
                if (ns, tname) not in idx.templates and not idx.gap_for("resourceclaimtemplates"):
                    pc.findings.append(make(
                        "DRA202",
                        f'PodResourceClaim {pcn}: resource claim template "{tname}": '
                        f'resourceclaimtemplate.resource.k8s.io "{tname}" not found',
                        subject={"podClaim": pcn}, template=f"{ns}/{tname}"))
                else:
                    pc.findings.append(make("DRA201", f'pod "{pref}": ResourceClaim not created yet',
                                            subject={"podClaim": pcn}, template=f"{ns}/{tname}"))
            elif pc.claim is not None and uid:
                owners = [o for o in _meta(pc.claim).get("ownerReferences") or [] if o.get("controller")]
                if not any(o.get("kind") == "Pod" and o.get("uid") == uid for o in owners):
                    word = "Pod" if sem.version >= (1, 36) else "pod"
                    pc.findings.append(make(
                        "DRA205",
                        f"ResourceClaim {ns}/{_name(pc.claim)} was not created for {word} {pref} ({word} is not owner)",
                        subject={"podClaim": pcn}, claim=f"{ns}/{_name(pc.claim)}",
                        owners=[f"{o.get('kind')}/{o.get('name')}" for o in owners]))
        else:
            pc = PodClaim(pcn, "invalid", "")
            pc.findings.append(make("DRA206", f'pod "{pref}", spec.resourceClaim "{pcn}": none of the supported fields are set',
                                    subject={"podClaim": pcn}))
        if pc.claim is not None and _meta(pc.claim).get("deletionTimestamp"):
            pc.findings.append(make("DRA204", f'resourceclaim "{ns}/{_name(pc.claim)}" is being deleted',
                                    subject={"podClaim": pcn}, claim=f"{ns}/{_name(pc.claim)}"))
        out.append(pc)
    return out


def _gap_finding(gap) -> Finding:
    return make("DRA101", f"cannot {gap.verb} {gap.resource}" + (f" in namespace {gap.namespace}" if gap.namespace else "")
                + f": {gap.message}", verb=gap.verb, resource=gap.resource, namespace=gap.namespace)


# ---------------------------------------------------------------------------------------------------
# Requests of a claim


def build_requests(claim: dict, ci: int, idx: Index) -> tuple[list[list[Request]], list[Finding]]:
    """Requests (each a list of alternatives: one entry, or the subrequests in order) and class findings."""
    out: list[list[Request]] = []
    findings: list[Finding] = []
    for ri, req in enumerate(claim_requests(claim)):
        alts: list[Request] = []
        subs = req.get("firstAvailable") or []
        if subs:
            for si, sub in enumerate(subs):
                alts.append(Request(ci, ri, si, f"{req.get('name', '')}/{sub.get('name', '')}", req.get("name", ""),
                                    sub.get("name", ""), sub, sub.get("deviceClassName") or ""))
        else:
            spec = req.get("exactly") or {}
            alts.append(Request(ci, ri, -1, req.get("name", ""), req.get("name", ""), "", spec,
                                spec.get("deviceClassName") or ""))
        for r in alts:
            r.class_obj = idx.classes.get(r.class_name)
            if r.class_obj is None and r.class_name:
                if idx.gap_for("deviceclasses"):
                    findings.append(_gap_finding(idx.gap_for("deviceclasses")[0]))
                else:
                    findings.append(make("DRA211", f"request {r.name}: device class {r.class_name} does not exist",
                                         subject={"claim": obj_ref(claim), "request": r.name}, deviceClass=r.class_name))
        out.append(alts)
    return out, findings


# ---------------------------------------------------------------------------------------------------
# The analysis shared by explain pod / explain claim / match


@dataclass
class ClaimAnalysis:
    claim: dict
    pod_claim_name: str | None
    requests: list  # list[list[Request]]
    matrices: dict = field(default_factory=dict)  # request name -> list[DeviceVerdict]
    allocated: bool = False
    dry_run: dict | None = None  # node -> results for this claim


class Analysis:
    def __init__(self, snap: Snapshot, sem: Semantics):
        self.snap = snap
        self.sem = sem
        self.idx = Index(snap)
        self.ev = SelectorEvaluator(sem)
        self.slices = list(snap.slices)
        if sem.taint_rules and snap.taint_rules:
            self.slices = apply_taint_rules(self.slices, snap.taint_rules)
        self.universe = Universe(self.slices, sem)
        self.findings: list[Finding] = []

    def allocated_state(self, exclude: set = frozenset()) -> AllocatedState:
        return AllocatedState.from_claims((c for c in self.snap.claims if obj_ref(c) not in exclude), self.sem)

    def usable_nodes(self, pod: dict | None, allocated_claims: list[dict]) -> tuple[list[dict], dict]:
        """Nodes the pod may use (pod constraints + already-allocated claims' node selectors), and why others not."""
        usable, rejected = [], {}
        for n in self.idx.nodes:
            why = pod_node_rejection(pod, n) if pod is not None else None
            if why is None:
                for c in allocated_claims:
                    sel = ((c.get("status") or {}).get("allocation") or {}).get("nodeSelector")
                    try:
                        if sel is not None and not node_selector_matches(sel, n):
                            why = f"claim {_name(c)} is allocated to devices not reachable from this node"
                            break
                    except NodeSelectorError as e:
                        why = f"claim {_name(c)} has an invalid allocation node selector: {e}"
                        break
            if why is None:
                usable.append(n)
            else:
                rejected[_name(n)] = why
        return usable, rejected

    def analyse_claims(self, claims: list[dict], pod: dict | None, pcnames: list) -> tuple[list[ClaimAnalysis], dict]:
        """Matrices for every request of every claim, then an allocator dry-run for the unallocated ones."""
        allocated = [c for c in claims if (c.get("status") or {}).get("allocation")]
        pending = [c for c in claims if not (c.get("status") or {}).get("allocation")]
        state = self.allocated_state()
        usable, rejected = self.usable_nodes(pod, allocated)
        counters = CounterView(self.universe, state, self.sem)
        reach = Reachability(usable)
        analyses = []
        for ci, (claim, pcn) in enumerate(zip(claims, pcnames)):
            reqs, cls_findings = build_requests(claim, ci, self.idx)
            self.findings.extend(cls_findings)
            ca = ClaimAnalysis(claim, pcn, reqs, allocated=claim in allocated)
            own = frozenset(
                (r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
                for r in (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
            )
            for alts in reqs:
                for r in alts:
                    if r.class_obj is None:
                        continue
                    m = device_matrix(r, self.universe, state, self.sem, self.ev,
                                      reach if pod is not None or not self.idx.nodes_synthetic else None,
                                      counters, own)
                    if ca.allocated:
                        chosen = {(x.get("driver"), x.get("pool"), x.get("device"))
                                  for x in (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
                                  if x.get("request") == r.name}
                        for v in m:
                            if v.entry.did in chosen:
                                v.outcome, v.reason, v.stage = "selected", "allocated to this claim", ""
                    ca.matrices[r.name] = m
            analyses.append(ca)
        dry = {"usable": [_name(n) for n in usable], "rejectedNodes": rejected, "allocatable": [], "failures": {},
               "error": None, "triedNodes": 0, "capped": False}
        if pending and not any(f.blocking for f in self.findings):
            self._dry_run(pending, analyses, reach, state, dry)
        return analyses, dry

    def _dry_run(self, pending, analyses, reach: Reachability, state, dry) -> None:
        alloc = Allocator(self.sem, self.idx.classes, self.slices, state, self.ev)
        by_claim = {id(a.claim): a for a in analyses}
        # Only nodes from which every pending request has at least one candidate are worth a search.
        # A device whose selector errors counts too: the search reaching it is what aborts scheduling.
        usable = reach.usable
        worth_names = None
        for c in pending:
            for alts in by_claim[id(c)].requests:
                names: set = set()
                for r in alts:
                    for v in by_claim[id(c)].matrices.get(r.name, []):
                        if v.outcome == "candidate":
                            names.update(v.nodes)
                        elif v.stage == "cel-error":
                            names.update(reach.nodes_for(v.entry))
                worth_names = names if worth_names is None else worth_names & names
        worth = [n for n in usable if worth_names is None or _name(n) in worth_names]
        dry["consideredNodes"] = len(worth)
        for n in worth[:MAX_DRYRUN_NODES]:
            dry["triedNodes"] += 1
            try:
                res = alloc.allocate(n, pending)
            except AllocationError as e:
                dry["error"] = {"node": _name(n), "message": e.message, "kind": e.kind, "evidence": e.evidence}
                break
            if res is None:
                dry["failures"][_name(n)] = "cannot allocate all claims"
                continue
            dry["allocatable"].append({
                "node": _name(n),
                "claims": [{"claim": obj_ref(c), "results": r.results, "nodeSelector": r.node_selector}
                           for c, r in zip(pending, res)],
            })
            if len(dry["allocatable"]) >= MAX_ALLOCATABLE_NODES:
                dry["capped"] = True
                break
        if len(worth) > MAX_DRYRUN_NODES and not dry["allocatable"]:
            dry["capped"] = True
        if dry["allocatable"]:
            first = dry["allocatable"][0]
            for entry in first["claims"]:
                for a in analyses:
                    if obj_ref(a.claim) == entry["claim"]:
                        a.dry_run = entry
                        picked = {(r["driver"], r["pool"], r["device"], r["request"]) for r in entry["results"]}
                        for rname, m in a.matrices.items():
                            for v in m:
                                if v.entry.did + (rname,) in picked:
                                    v.outcome, v.reason = "selected", f"selected by the dry-run on node {first['node']}"

    # -- turning the analysis into findings -----------------------------------------------------
    def device_findings(self, analyses: list[ClaimAnalysis], dry: dict, pod: dict | None) -> None:
        blind = [g for g in self.idx.gaps if g.resource.startswith(("resourceslices", "deviceclasses", "resource.k8s.io"))]
        if blind:
            g = blind[0]
            self.findings.append(make(
                "DRA103", f"cannot tell whether devices are available: {g.verb} {g.resource} was refused",
                verb=g.verb, resource=g.resource, namespace=g.namespace))
            return
        if dry.get("error"):
            err = dry["error"]
            code = {"cel-runtime": "DRA301", "cel-compile": "DRA302", "request": "DRA213", "class": "DRA211",
                    "all-pool": "DRA413", "invalid-pool": "DRA413", "constraint": "DRA409",
                    "timeout": "DRA414", "upstream-crash": "DRA415", "inexact": "DRA303"}.get(err["kind"], "DRA413")
            if "feature is disabled" in err["message"]:
                code = "DRA212"
            hint = None
            if code == "DRA301" and "no such key" not in err["message"]:
                hint = "Fix the expression or the attribute types; the error aborts scheduling until then."
            self.findings.append(make(code, err["message"], hint=hint, node=err["node"], **err.get("evidence", {})))
            return
        if dry["allocatable"]:
            nodes = [a["node"] for a in dry["allocatable"]]
            more = " (and possibly more)" if dry.get("capped") else ""
            for entry in dry["allocatable"][0]["claims"]:
                picks = ", ".join(f"{r['request']} -> {r['driver']}/{r['pool']}/{r['device']}" for r in entry["results"])
                self.findings.append(make("DRA002", f"claim {entry['claim']} is allocatable now on node(s) "
                                          f"{', '.join(nodes)}{more}: {picks}",
                                          subject={"claim": entry["claim"]}, nodes=nodes, results=entry["results"]))
                for r in entry["results"]:
                    if "/" in r["request"]:
                        base, sub = r["request"].split("/", 1)
                        self._fallback_info(entry["claim"], analyses, base, sub)
            return
        if pod is not None and not dry["usable"]:
            self.findings.append(make("DRA503", "no node passes the pod's own node constraints",
                                      rejectedNodes=dry["rejectedNodes"]))
            return
        # No node works: explain per request, from the matrices.
        explained = False
        for a in analyses:
            if a.allocated:
                continue
            for alts in a.requests:
                f = self._request_finding(a, alts)
                if f is not None:
                    self.findings.append(f)
                    explained = True
        if not explained:
            has_constraints = any(((a.claim.get("spec") or {}).get("devices") or {}).get("constraints")
                                  for a in analyses if not a.allocated)
            if has_constraints:
                for a in analyses:
                    if not a.allocated:
                        self.findings.extend(_constraint_findings(a))
            else:
                msg = "cannot allocate all claims on any node the pod may use"
                hint = None
                counters = any(v.entry.device.get("consumesCounters") for a in analyses for m in a.matrices.values()
                               for v in m if v.outcome == "candidate")
                if counters and self.sem.version < (1, 36):
                    msg += (" (the devices share counters: before 1.36 the allocator does not give back the counters of"
                            " devices it tried and rejected, so it can run out although enough are free)")
                    hint = "Upgrade kube-scheduler to 1.36+, or request devices so that fewer candidates are rejected."
                self.findings.append(make("DRA413", msg, hint=hint, triedNodes=dry["triedNodes"],
                                          failures=dry["failures"]))

    def _fallback_info(self, claim_ref, analyses, base, sub) -> None:
        for a in analyses:
            if obj_ref(a.claim) != claim_ref:
                continue
            for alts in a.requests:
                if alts and alts[0].base_name == base and alts[0].sub_name != sub:
                    skipped = [r.sub_name for r in alts if r.sub_name != sub]
                    idx = [r.sub_name for r in alts].index(sub) if sub in [r.sub_name for r in alts] else 0
                    if idx > 0:
                        self.findings.append(make("DRA004", f"request {base} falls back to subrequest {sub} "
                                                  f"(earlier: {', '.join(skipped[:idx])})",
                                                  subject={"claim": claim_ref, "request": base}))

    def _request_finding(self, a: ClaimAnalysis, alts: list[Request]) -> Finding | None:
        """Why this request (all its subrequests) cannot be satisfied, or None if it could on its own."""
        reasons = []
        subject = {"claim": obj_ref(a.claim), "request": alts[0].base_name}
        for r in alts:
            m = a.matrices.get(r.name)
            if m is None:
                return None  # class missing: reported already
            if r.mode == "All":
                # Every device that passes the selectors (and is reachable) must be allocatable at once.
                blockers = [v for v in m if v.stage in ("in-use", "taint", "counters", "capacity", "feature")]
                if blockers and len(alts) == 1:
                    v = blockers[0]
                    code = {"in-use": "DRA404", "taint": "DRA405", "counters": "DRA406", "capacity": "DRA407",
                            "feature": "DRA212"}[v.stage]
                    return make(code, f"request {r.name}: allocationMode All needs every matching device, but "
                                      f"{len(blockers)} cannot be allocated ({v.entry.id}: {v.reason})",
                                subject=subject, blocked=[f"{b.entry.id}: {b.reason}" for b in blockers[:10]])
            cands = [v for v in m if v.outcome in ("candidate", "selected")]
            need = r.count if r.mode == "ExactCount" else max(1, len(cands))
            per_node: dict[str, int] = {}
            for v in cands:
                for n in v.nodes or ("*",):
                    per_node[n] = per_node.get(n, 0) + 1
            if cands and max(per_node.values()) >= need:
                return None
            reasons.append((r, m, cands, need, per_node))
        r, m, cands, need, per_node = reasons[0]
        if len(alts) > 1:
            subject["subrequests"] = [x.name for x in alts]
        stages: dict[str, list[DeviceVerdict]] = {}
        for v in m:
            stages.setdefault(v.stage or "candidate", []).append(v)
        ev = {"devices": len(m), "byStage": {k: len(v) for k, v in sorted(stages.items())},
              "examples": {k: [x.entry.id + ": " + x.reason for x in v[:3]] for k, v in sorted(stages.items())}}
        label = f"request {r.name}" if len(alts) == 1 else f"request {alts[0].base_name} (every subrequest)"
        if not m:
            return make("DRA401", f"{label}: no ResourceSlice in the cluster publishes any device", subject=subject, **ev)
        if cands:
            best = max(per_node.values())
            return make("DRA408", f"{label}: needs {need} device(s), at most {best} available on one node",
                        subject=subject, **ev)
        if "cel-error" in stages:
            v = stages["cel-error"][0]
            return make("DRA301", f"{label}: {v.reason} on device {v.entry.id}", subject=subject, **ev)
        order = ["taint", "counters", "capacity", "in-use", "feature", "node", "request", "class", "binding", "pool"]
        for stage in order:
            if stage in stages:
                vs = stages[stage]
                code = {"taint": "DRA405", "counters": "DRA406", "capacity": "DRA407", "in-use": "DRA404",
                        "feature": "DRA212", "node": "DRA501", "request": "DRA403", "class": "DRA402",
                        "binding": "DRA412", "pool": "DRA401"}[stage]
                if stage == "node":
                    msg = f"{label}: {len(vs)} matching device(s), none on a node the pod may use ({vs[0].entry.where()})"
                elif stage == "request":
                    msg = f"{label}: no device passes the request's selectors ({vs[0].entry.id}: {vs[0].reason})"
                elif stage == "class":
                    msg = f"{label}: no device passes the selectors of class {r.class_name} ({len(vs)} device(s) checked)"
                elif stage == "in-use":
                    msg = f"{label}: every matching device is already allocated ({vs[0].entry.id}: {vs[0].reason})"
                elif stage == "pool":
                    msg = f"{label}: no usable device ({vs[0].reason})"
                    code = "DRA401"
                elif stage == "taint":
                    msg = f"{label}: every matching device has a taint the request does not tolerate ({vs[0].entry.id}: {vs[0].reason})"
                elif stage == "counters":
                    msg = f"{label}: the shared counters of every matching device are used up ({vs[0].entry.id}: {vs[0].reason})"
                elif stage == "capacity":
                    msg = f"{label}: no matching device has enough capacity left ({vs[0].entry.id}: {vs[0].reason})"
                else:
                    msg = f"{label}: every matching device is rejected ({vs[0].entry.id}: {vs[0].reason})"
                if code == "DRA412":
                    code = "DRA401"
                return make(code, msg, subject=subject, **ev)
        return None

    def pool_findings(self) -> None:
        for key, state in sorted(self.universe.pool_states.items()):
            if state.startswith("invalid"):
                self.findings.append(make("DRA411", f"resource pool {key[0]}/{key[1]} is {state}", pool=f"{key[0]}/{key[1]}"))
            elif state.startswith("incomplete"):
                self.findings.append(make("DRA410", f"resource pool {key[0]}/{key[1]} is {state}", pool=f"{key[0]}/{key[1]}"))


def _constraint_findings(a: ClaimAnalysis) -> list[Finding]:
    """Show the values the claim's constraints compare, over the candidate devices of the affected requests."""
    from kubectl_dra.analyze.allocator import _attr_value, lookup_attribute

    out = []
    for i, con in enumerate(((a.claim.get("spec") or {}).get("devices") or {}).get("constraints") or []):
        attr = con.get("matchAttribute") or con.get("distinctAttribute")
        if not attr:
            continue
        kind = "matchAttribute" if con.get("matchAttribute") else "distinctAttribute"
        wanted = set(con.get("requests") or [])
        values = {}
        for rname, m in a.matrices.items():
            base = rname.split("/", 1)[0]
            if wanted and base not in wanted and rname not in wanted:
                continue
            for v in m:
                if v.outcome in ("candidate", "selected"):
                    found = lookup_attribute(v.entry.device, v.entry.did[0], attr)
                    val = _attr_value(found) if found else None
                    values[v.entry.id] = "<missing>" if val is None else str(val[1])
        shown = ", ".join(f"{k}={val}" for k, val in list(values.items())[:8])
        out.append(make("DRA409", f"claim {_name(a.claim)} constraint #{i} ({kind} {attr}) cannot be met by the "
                                  f"candidate devices: {shown or 'none'}",
                        subject={"claim": obj_ref(a.claim), "constraint": i}, attribute=attr, kind=kind,
                        values=values))
    return out


# ---------------------------------------------------------------------------------------------------
# Public entry points


def _claim_body(a: ClaimAnalysis, all_devices: bool = True) -> dict:
    c = a.claim
    status = c.get("status") or {}
    alloc = status.get("allocation")
    body = {
        "name": _name(c),
        "namespace": _ns(c),
        "podClaimName": a.pod_claim_name,
        "state": claim_state(c),
        "allocation": None,
        "reservedFor": [f"{r.get('resource', '')}/{r.get('name', '')}" for r in status.get("reservedFor") or []],
        "requests": [],
    }
    if alloc:
        body["allocation"] = {
            "results": [{k: r.get(k) for k in ("request", "driver", "pool", "device") if k in r}
                        for r in ((alloc.get("devices") or {}).get("results") or [])],
            "nodeSelector": alloc.get("nodeSelector"),
        }
    elif a.dry_run:
        body["dryRun"] = a.dry_run
    for alts in a.requests:
        for r in alts:
            m = a.matrices.get(r.name)
            body["requests"].append({
                "name": r.name,
                "deviceClassName": r.class_name,
                "allocationMode": r.mode,
                "count": r.count if r.mode == "ExactCount" else None,
                "selectors": [((s.get("cel") or {}).get("expression")) for s in r.selectors],
                "classSelectors": [((s.get("cel") or {}).get("expression"))
                                   for s in ((r.class_obj or {}).get("spec") or {}).get("selectors") or []],
                "classFound": r.class_obj is not None,
                "devices": [v.to_dict() for v in m] if m is not None else [],
            })
    return body


def claim_state(c: dict) -> str:
    st = c.get("status") or {}
    if _meta(c).get("deletionTimestamp"):
        return "deleted"
    if st.get("allocation"):
        return "allocated,reserved" if st.get("reservedFor") else "allocated"
    return "pending"


def _semantics_finding(sem: Semantics, snap: Snapshot) -> Finding:
    gates = ", ".join(f"{k}={'true' if sem.gates[k] else 'false'}" for k in sorted(sem.overridden)) or "defaults"
    src = {"flag": "from --kubernetes-version", "server": "the API server's version",
           "default": "newest supported; pass --kubernetes-version"}[sem.version_source]
    extra = ""
    if snap.source == "live":
        extra = "; the scheduler's own feature gates and in-flight allocations are not visible through the API"
    return make("DRA003", f"assumed Kubernetes {sem.version_str} ({src}), feature gates: {gates}{extra}",
                kubernetesVersion=sem.version_str, featureGates=dict(sem.gates))


def _events_for_pod(snap: Snapshot, pod: dict) -> list[dict]:
    uid = _meta(pod).get("uid")
    evs = [e for e in snap.events
           if e["object"]["kind"] == "Pod" and e["object"]["name"] == _name(pod)
           and (e["object"]["namespace"] or _ns(pod)) == _ns(pod)
           and (not uid or not e["object"]["uid"] or e["object"]["uid"] == uid)]
    return sorted(evs, key=event_sort_key)


def explain_pod(snap: Snapshot, sem: Semantics, namespace: str, name: str) -> Report:
    an = Analysis(snap, sem)
    idx = an.idx
    pod = idx.pods.get((namespace, name))
    if pod is None:
        gaps = idx.gap_for("pods")
        if gaps:
            raise DraError(f'cannot get pod "{name}" in namespace "{namespace}": {gaps[0].message}')
        raise DraError(f'pods "{name}" not found in namespace "{namespace}"')
    an.findings.extend(_gap_finding(g) for g in snap.gaps)
    an.findings.append(_semantics_finding(sem, snap))
    pcs = resolve_pod_claims(pod, idx, sem)
    events = _events_for_pod(snap, pod)
    # The controller's own words, when it reported why it could not create a claim.
    created = [e for e in events if e["reason"] == "FailedResourceClaimCreation"]
    for pc in pcs:
        for f in pc.findings:
            if f.code in ("DRA201", "DRA202") and created:
                f = make(f.code, f.message, subject=f.subject,
                         **dict(f.evidence, event={"message": created[-1]["message"], "time": created[-1]["time"]}))
            an.findings.append(f)
    resolved = [pc for pc in pcs if pc.claim is not None and not pc.skipped]
    analyses, dry = an.analyse_claims([pc.claim for pc in resolved], pod, [pc.pod_claim_name for pc in resolved])
    node_name = (pod.get("spec") or {}).get("nodeName")
    pending = [a for a in analyses if not a.allocated]
    if not any(f.blocking for f in an.findings):
        if pending:
            an.device_findings(analyses, dry, pod)
        else:
            for a in analyses:
                picks = ", ".join(f"{r.get('request')} -> {r.get('driver')}/{r.get('pool')}/{r.get('device')}"
                                  for r in ((a.claim["status"]["allocation"].get("devices") or {}).get("results") or []))
                an.findings.append(make("DRA001", f"claim {_name(a.claim)} is allocated: {picks or 'no devices'}",
                                        subject={"claim": obj_ref(a.claim)}))
            if node_name:
                _kubelet_findings(an, pod, analyses, events)
    for a in analyses:
        if a.allocated and not node_name and not dry["usable"] and idx.nodes and not idx.nodes_synthetic:
            an.findings.append(make("DRA502", f"claim {_name(a.claim)} is allocated to devices on a node the pod cannot use",
                                    subject={"claim": obj_ref(a.claim)}, rejectedNodes=dry["rejectedNodes"]))
    an.pool_findings()
    findings = _dedupe(an.findings)
    ok = _ok_summary(analyses, dry, node_name, findings)
    verdict = verdict_from(findings, ok)
    body = {
        "pod": {"name": name, "namespace": namespace, "node": node_name, "phase": (pod.get("status") or {}).get("phase"),
                "uid": _meta(pod).get("uid")},
        "podClaims": [{"name": pc.pod_claim_name, "source": pc.source, "sourceName": pc.source_name,
                       "claim": _name(pc.claim) if pc.claim else None, "skipped": pc.skipped} for pc in pcs],
        "claims": [_claim_body(a) for a in analyses],
        "nodes": {"usable": dry["usable"], "rejected": dry["rejectedNodes"], "synthetic": idx.nodes_synthetic},
        "events": events,
    }
    return Report("Diagnosis", tuple(findings), body, sem.to_dict(), verdict)


def _ok_summary(analyses, dry, node_name, findings) -> str:
    if not analyses:
        return "the pod has no ResourceClaims to allocate"
    if any(f.code == "DRA604" for f in findings):
        return f"claims allocated and reserved; waiting for the kubelet on {node_name} to prepare the devices"
    if all(a.allocated for a in analyses):
        where = f" on node {node_name}" if node_name else ""
        return f"all {len(analyses)} claim(s) allocated{where}"
    if dry["allocatable"]:
        return f"claims allocatable now on node {dry['allocatable'][0]['node']}"
    return "nothing blocks"


def _kubelet_findings(an: Analysis, pod: dict, analyses, events) -> None:
    node = pod["spec"]["nodeName"]
    uid = _meta(pod).get("uid")
    for a in analyses:
        reserved = [r for r in ((a.claim.get("status") or {}).get("reservedFor") or [])]
        if uid and reserved is not None and not any(r.get("uid") == uid for r in reserved):
            an.findings.append(make("DRA603", f"pod is not in claim {_name(a.claim)}'s reservedFor",
                                    subject={"claim": obj_ref(a.claim)}, reservedFor=reserved))
    # The latest kubelet DRA event after the pod was scheduled decides.
    last_sched = max((e["time"] for e in events if e["reason"] == "Scheduled"), default="")
    prep = [e for e in events if e["reason"] == "FailedPrepareDynamicResources" and e["time"] >= last_sched]
    running = (pod.get("status") or {}).get("phase") in ("Running", "Succeeded")
    if prep and not running:
        e = prep[-1]
        msg = e["message"]
        code = "DRA601" if "is not registered" in msg else "DRA602"
        an.findings.append(make(code, msg, node=node, event={"reason": e["reason"], "time": e["time"],
                                                             "source": e["source"]}))
    elif not running and (pod.get("status") or {}).get("phase") == "Pending":
        an.findings.append(make("DRA604", f"pod is bound to {node}; no kubelet report on preparing its devices yet", node=node))


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen, out = set(), []
    for f in findings:
        key = (f.code, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def explain_claim(snap: Snapshot, sem: Semantics, namespace: str, name: str) -> Report:
    an = Analysis(snap, sem)
    claim = an.idx.claims.get((namespace, name))
    if claim is None:
        gaps = an.idx.gap_for("resourceclaims")
        if gaps:
            raise DraError(f'cannot get resourceclaim "{name}" in namespace "{namespace}": {gaps[0].message}')
        raise DraError(f'resourceclaims.resource.k8s.io "{name}" not found in namespace "{namespace}"')
    an.findings.extend(_gap_finding(g) for g in snap.gaps)
    an.findings.append(_semantics_finding(sem, snap))
    if _meta(claim).get("deletionTimestamp"):
        an.findings.append(make("DRA204", f'resourceclaim "{namespace}/{name}" is being deleted',
                                claim=f"{namespace}/{name}"))
    analyses, dry = an.analyse_claims([claim], None, [None])
    a = analyses[0]
    if not any(f.blocking for f in an.findings):
        if a.allocated:
            picks = ", ".join(f"{r.get('request')} -> {r.get('driver')}/{r.get('pool')}/{r.get('device')}"
                              for r in ((claim["status"]["allocation"].get("devices") or {}).get("results") or []))
            an.findings.append(make("DRA001", f"claim {name} is allocated: {picks or 'no devices'}",
                                    subject={"claim": obj_ref(claim)}))
        else:
            an.device_findings(analyses, dry, None)
    an.pool_findings()
    findings = _dedupe(an.findings)
    verdict = verdict_from(findings, _ok_summary(analyses, dry, None, findings))
    owners = [f"{o.get('kind')}/{o.get('name')}" for o in _meta(claim).get("ownerReferences") or []]
    body = {"claim": {"name": name, "namespace": namespace, "owners": owners},
            "claims": [_claim_body(a)], "nodes": {"usable": dry["usable"], "synthetic": an.idx.nodes_synthetic}}
    return Report("Diagnosis", tuple(findings), body, sem.to_dict(), verdict)


def match_claim(snap: Snapshot, sem: Semantics, claim: dict) -> Report:
    """Which devices would satisfy the claim now. A template is matched as the claim it would generate.
    An already-allocated claim is matched as if its own allocation were released."""
    if claim.get("kind") == "ResourceClaimTemplate":
        claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                 "metadata": {"name": _name(claim), "namespace": _ns(claim)},
                 "spec": (claim.get("spec") or {}).get("spec") or {}}
    me = obj_ref(claim)
    snap2 = Snapshot(**{**snap.__dict__, "claims": tuple(c for c in snap.claims if obj_ref(c) != me)})
    probe = dict(claim)
    probe.pop("status", None)
    an = Analysis(snap2, sem)
    an.findings.extend(_gap_finding(g) for g in snap.gaps)
    an.findings.append(_semantics_finding(sem, snap))
    analyses, dry = an.analyse_claims([probe], None, [None])
    if not any(f.blocking for f in an.findings):
        an.device_findings(analyses, dry, None)
    findings = _dedupe(an.findings)
    satisfiable = bool(dry["allocatable"]) and not any(f.blocking for f in findings)
    determined = satisfiable or not any(f.code in UNDETERMINED for f in findings)
    a = analyses[0]
    requests = []
    for alts in a.requests:
        for r in alts:
            m = a.matrices.get(r.name) or []
            requests.append({"name": r.name, "deviceClassName": r.class_name,
                             "devices": [v.to_dict() for v in m]})
    body = {"claim": {"name": _name(claim), "namespace": _ns(claim)}, "satisfiable": satisfiable,
            "determined": determined,
            "nodes": [x["node"] for x in dry["allocatable"]], "requests": requests,
            "dryRun": a.dry_run}
    return Report("MatchResult", tuple(findings), body, sem.to_dict(), None)
