"""The differential-testing entry point: one oracle scenario in, the oracle's output shape out.

Scenario: {"version": "1.36", "featureGates": {...}, "node": Node, "deviceClasses": [...],
           "claims": [claims to allocate, in order], "allocatedClaims": [...], "slices": [...]}
Output:   {"cel": [per device x selector results], "allocation": {"outcome", "error", "claims"}}
(tests/oracle/src/main.go produces the same shape from upstream Go code.)
With "trace": true also "reasons": for every request (or subrequest) of every claim and every device, each check
that rejects the device (analyze/devices/checks.py device_checks, as explain shows them) for the scenario's node;
the fidelity suite compares them with upstream's own per-device trace; and, when nothing could be allocated,
"claimOutcome": where the search ran out of candidates first and why (allocator/why.py), compared with the deepest
position of upstream's search (tests/oracle/src/trace.go)."""

from __future__ import annotations

from kubectl_dra.analyze.allocator import (
    AllocatedState,
    AllocationError,
    Allocator,
    ErrorKind,
    NodeFailure,
    SelectorEvaluator,
    obj_ref,
    selector_expression,
)
from kubectl_dra.analyze.allocator.requests import claim_requests, request_alternatives
from kubectl_dra.analyze.devices.checks import MatrixContext, device_checks
from kubectl_dra.analyze.devices.universe import CounterView, Reachability, Universe
from kubectl_dra.analyze.pod.coverage import unmodelled_fields
from kubectl_dra.features import KNOWN_GATES, Semantics, parse_version
from kubectl_dra.findings.stages import Stage
from kubectl_dra.model.normalize import to_v1
from kubectl_dra.quantity import format_quantity

# The oracle's outcome for an error that fails only the node (tests/oracle/src/main.go).
NODE_FAILURE_OUTCOME = "failed-on-node"


def _selectors(sels) -> list[str]:
    return [selector_expression(s) or "" for s in sels or []]


# long: the fidelity suite's contract: one function the oracle comparison calls, field by field
def evaluate(scenario: dict) -> dict:
    # The scenario's gate map is complete: a gate it does not name is off (as the oracle builds Features).
    gates = {k: False for k in KNOWN_GATES}
    gates.update({k: bool(v) for k, v in (scenario.get("featureGates") or {}).items() if k in KNOWN_GATES})
    sem = Semantics.for_version(parse_version(str(scenario.get("version", "1.37"))), gates, "flag")
    classes = [to_v1(c) for c in scenario.get("deviceClasses") or []]
    claims = [to_v1(c) for c in scenario.get("claims") or []]
    slices = [to_v1(s) for s in scenario.get("slices") or []]
    allocated = [to_v1(c) for c in scenario.get("allocatedClaims") or []]
    by_name = {(c.get("metadata") or {}).get("name", ""): c for c in classes}
    ev = SelectorEvaluator(sem)

    cel: list[dict] = []

    def run(source, obj, request, cls, idx, expr):
        for s in slices:
            spec = s.get("spec") or {}
            driver, pool = spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")
            for d in spec.get("devices") or []:
                did = (driver, pool, d.get("name", ""))
                entry = {
                    "source": source,
                    "object": obj,
                    "request": request,
                    "class": cls,
                    "selector": idx,
                    "device": "/".join(did),
                    "result": None,
                    "error": None,
                }
                compiled, err = ev.compile(expr)
                if compiled is None:
                    entry["error"] = err
                else:
                    res = compiled.evaluate(ev.cel_device(did, d))
                    if res.error is not None:
                        # Per-device results as cel.CompilationResult.DeviceMatches returns them (no 1.37 hint).
                        entry["error"] = getattr(res, "device_matches_error", None) or res.error
                    else:
                        entry["result"] = bool(res.value)
                cel.append(entry)

    seen: set = set()

    def do_class(name):
        if name in seen:
            return
        seen.add(name)
        c = by_name.get(name)
        if c is None:
            return
        for i, expr in enumerate(_selectors((c.get("spec") or {}).get("selectors"))):
            run("class", name, "", name, i, expr)

    for claim in claims:
        for r in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
            if r.get("exactly") is not None:
                do_class(r["exactly"].get("deviceClassName", ""))
            for sub in r.get("firstAvailable") or []:
                do_class(sub.get("deviceClassName", ""))
    for claim in claims:
        obj = f"{(claim.get('metadata') or {}).get('namespace', '')}/{(claim.get('metadata') or {}).get('name', '')}"
        for r in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
            if r.get("exactly") is not None:
                for i, expr in enumerate(_selectors(r["exactly"].get("selectors"))):
                    run("claim", obj, r.get("name", ""), r["exactly"].get("deviceClassName", ""), i, expr)
            for sub in r.get("firstAvailable") or []:
                for i, expr in enumerate(_selectors(sub.get("selectors"))):
                    run(
                        "claim",
                        obj,
                        f"{r.get('name', '')}/{sub.get('name', '')}",
                        sub.get("deviceClassName", ""),
                        i,
                        expr,
                    )

    unmodelled = sorted(
        {
            f"{kind} {f}"
            for kind, objs in (("ResourceClaim", claims), ("DeviceClass", classes), ("ResourceSlice", slices))
            for o in objs
            for f in unmodelled_fields(kind, o, sem)
        }
    )
    if unmodelled:
        # As explain does (DRA016): no verdict on what the analysis does not model.
        return {"cel": cel, "allocation": {"outcome": "undetermined", "error": "; ".join(unmodelled), "claims": []}}
    state = AllocatedState.from_claims(allocated, sem)
    reasons = (
        device_reasons(sem, by_name, slices, claims, state, ev, scenario.get("node") or {})
        if scenario.get("trace")
        else None
    )
    alloc = Allocator(sem, by_name, slices, state, ev)
    out = {"outcome": "unallocatable", "error": None, "claims": []}
    try:
        res = alloc.allocate(scenario.get("node") or {}, claims)
    except NodeFailure as e:  # 1.38: Unschedulable on this node (ErrFailedAllocationOnNode), not an abort
        out.update(outcome=NODE_FAILURE_OUTCOME, error=e.message)
        return _with_reasons({"cel": cel, "allocation": out}, reasons)
    except AllocationError as e:
        # the local engine's limit (ErrorKind.INEXACT: "kubectl-dra: ...") is no Kubernetes error: undetermined, as
        # explain answers it
        out.update(outcome="undetermined" if e.kind == ErrorKind.INEXACT else "error", error=e.message)
        return _with_reasons({"cel": cel, "allocation": out}, reasons)
    if res is None and reasons is not None and alloc.last_failure is not None:
        # Where the search ran out of candidates first and why (allocator/why.py): compared with upstream's.
        w = alloc.last_failure
        return _with_reasons(
            {"cel": cel, "allocation": out, "claimOutcome": dict(w.to_dict(), skipped=w.skipped)}, reasons
        )
    if res is not None:
        out["outcome"] = "allocated"
        for claim, r in zip(claims, res):
            results = []
            for x in r.results:
                e = {"request": x["request"], "driver": x["driver"], "pool": x["pool"], "device": x["device"]}
                if x.get("adminAccess"):
                    e["adminAccess"] = True
                if x.get("consumedCapacity"):
                    e["consumedCapacity"] = {k: format_quantity(v) for k, v in x["consumedCapacity"].items()}
                results.append(e)
            out["claims"].append({"claim": obj_ref(claim), "results": results, "nodeSelector": r.node_selector})
    return _with_reasons({"cel": cel, "allocation": out}, reasons)


def _with_reasons(out: dict, reasons: list | None) -> dict:
    if reasons is not None:
        out["reasons"] = reasons
    return out


def device_reasons(sem: Semantics, classes: dict, slices: list, claims: list, state, ev, node: dict) -> list[dict]:
    """Per claim, request and device: every stage device_checks rejects it at, for this node alone."""
    universe = Universe(slices, sem)
    ctx = MatrixContext(universe, state, sem, ev, Reachability([node]), CounterView(universe, state, sem))
    out = []
    for ci, claim in enumerate(claims):
        for ri, req in enumerate(claim_requests(claim)):
            for r in request_alternatives(req, ci, ri):
                r.class_obj = classes.get(r.class_name)
                if r.class_obj is None:
                    continue
                class_sel = (r.class_obj.get("spec") or {}).get("selectors") or []
                seen: dict[str, dict] = {}
                for e in universe.entries:
                    try:
                        stages = [
                            "capacity-indexed"
                            if ev.get("indexedCheck")
                            else "shared-in-use"
                            if ev.get("activeShare")
                            else "node-operations"
                            if ev.get("nodeOperations")
                            else st.value
                            for st, _why, ev, _n in device_checks(r, class_sel, e, ctx)
                            if st is not None
                        ]
                    except AllocationError:
                        stages = ["error"]
                    row = {"claim": ci, "request": r.name, "device": e.id, "stages": stages}
                    prev = seen.get(e.id)
                    # Two generations of a pool list the same device: the one this node uses counts.
                    if prev is not None and not ({Stage.NODE.value, Stage.POOL.value} & set(prev["stages"])):
                        continue
                    if prev is not None:
                        out.remove(prev)
                    seen[e.id] = row
                    out.append(row)
    return out
