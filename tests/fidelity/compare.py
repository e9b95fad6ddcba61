"""Differential comparison of kubectl-dra's engine against the upstream oracle (issue 4).

    python tests/fidelity/compare.py --n 1000 [--seed S] [--versions 1.34,1.36] [--no-shrink]

For every scenario of every version: the oracle binary of that minor (tests/oracle/) and
`kubectl_dra.analyze.scenario.evaluate` get the same scenario; the outputs are compared by the rules
below. Prints an agreement table per version and per feature and ends with `agreed A of T`.
Disagreements are shrunk to minimal scenarios and written under
${KUBECTL_DRA_CACHE:-~/.cache/kubectl-dra}/fidelity/disagreements/.

What must agree (nothing else is normalised; see docs/fidelity.md):
  * cel: the list of (source, object, request, class, selector, device) entries, in order; per entry
    the result (true/false) or that it is an error, and the error text (ERROR_NORMALISERS applies);
    upstream repeats an erroring evaluation and reports every other text it gave (`otherErrors`: which
    bad attribute is named follows Go map order), ours must be one of them.
  * allocation outcome (allocated / unallocatable / failed-on-node / error) and the error text of an error
    or failed-on-node outcome (both are repeated upstream for the same reason, even where the search order
    is deterministic). failed-on-node (tests/oracle/src/main.go, shim failedOnNode; so far only 1.38
    reports it) is an Allocate error wrapping structured.ErrFailedAllocationOnNode, which kube-scheduler's
    Filter makes Unschedulable on that node with the error's text, where an error aborts the scheduling
    attempt: its own outcome, so error against failed-on-node (or against unallocatable) is an outcome
    disagreement, and the same outcome with another text an error-text one.
  * when allocated: per claim the results (request, driver, pool, device, adminAccess,
    consumedCapacity compared as exact numbers) and the nodeSelector.
  * where upstream's search order is not deterministic (1.34, 1.35 and the 1.36+ "stable"
    implementation gather pools from a Go map), the oracle runs the allocator many times and reports
    every distinct allocation it saw; ours must equal one of them.
Inconclusive (not counted in T): upstream panicked or timed out, or rejected the input; or the engine declined
(a field it does not model, or its search step budget ran out: DRA414), each counted under its own label. Where
upstream panicked the engine still runs, and the tally says whether it predicted the crash.
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
import os
import re
import signal
import sys
import time
import traceback
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
if str(HERE.parents[1]) not in sys.path:
    sys.path.insert(0, str(HERE.parents[1]))

try:
    from . import claim_reasons, generator, reasons
    from . import gates as gatesmod
    from .oracle import Oracle, cache_dir
except ImportError:  # run as a script
    sys.path.insert(0, str(HERE))
    import claim_reasons  # type: ignore
    import gates as gatesmod  # type: ignore
    import generator  # type: ignore
    import reasons  # type: ignore
    from oracle import Oracle, cache_dir  # type: ignore

# Documented differences in error *texts* that are normalised on both sides before comparing:
# (pattern, replacement, cause). Keep this list empty unless a difference is a deliberate,
# documented presentation choice; behavioural differences belong in known-differences.yaml.
ERROR_NORMALISERS: list[tuple[str, str, str]] = []

ENGINE_TIMEOUT_S = 30

# Outcomes that carry upstream's error text, compared after ERROR_NORMALISERS: "error" (Filter returns Error) and
# "failed-on-node" (an error wrapping ErrFailedAllocationOnNode: Filter returns Unschedulable for that node only).
ERROR_OUTCOMES = ("error", "failed-on-node")


# ---------------------------------------------------------------------------------------------
# Quantities (exact), independent of the engine's own parser.

_SUFFIX = {
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
}


def quantity(text: Any) -> Fraction | str:
    s = str(text).strip()
    m = re.fullmatch(r"([+-]?[0-9.]+)(?:[eE]([+-]?[0-9]+))?([a-zA-Z]*)", s)
    if not m or m.group(3) not in _SUFFIX:
        return s
    v = Fraction(m.group(1)) * _SUFFIX[m.group(3)]
    if m.group(2):
        v *= Fraction(10) ** int(m.group(2))
    return v


# ---------------------------------------------------------------------------------------------
# Canonical forms


def _prune(x: Any) -> Any:
    """Drop None, empty lists and empty maps recursively (Go's omitempty vs. explicit empties)."""
    if isinstance(x, dict):
        out = {k: _prune(v) for k, v in x.items()}
        return {k: v for k, v in out.items() if v not in (None, [], {})}
    if isinstance(x, list):
        return [_prune(v) for v in x]
    return x


def norm_error(text: str | None) -> str | None:
    if text is None:
        return None
    for pat, rep, _cause in ERROR_NORMALISERS:
        text = re.sub(pat, rep, text)
    return text


def canon_allocation(a: dict[str, Any] | None) -> dict[str, Any]:
    a = a or {}
    claims = []
    for c in a.get("claims") or []:
        results = []
        for r in c.get("results") or []:
            e = {
                "request": r.get("request"),
                "driver": r.get("driver"),
                "pool": r.get("pool"),
                "device": r.get("device"),
            }
            if r.get("adminAccess"):
                e["adminAccess"] = True
            if r.get("consumedCapacity"):
                e["consumedCapacity"] = {k: str(quantity(v)) for k, v in sorted(r["consumedCapacity"].items())}
            results.append(e)
        claims.append({"claim": c.get("claim"), "results": results, "nodeSelector": _prune(c.get("nodeSelector"))})
    return {"outcome": a.get("outcome"), "error": norm_error(a.get("error")), "claims": claims}


def cel_key(e: dict[str, Any]) -> tuple:
    return (e.get("source"), e.get("object"), e.get("request"), e.get("class"), e.get("selector"), e.get("device"))


# ---------------------------------------------------------------------------------------------
# Comparison


def inconclusive(oracle_out: dict[str, Any]) -> str | None:
    if oracle_out.get("inputError"):
        return "input rejected by the oracle: " + oracle_out["inputError"]
    outcomes = {a.get("outcome") for a in oracle_out.get("alternatives") or [oracle_out.get("allocation") or {}]}
    if "panic" in outcomes:
        return "upstream panicked: " + next(
            a.get("error") or "" for a in oracle_out["alternatives"] if a.get("outcome") == "panic"
        )
    if "timeout" in outcomes:
        return "upstream allocator timed out"
    return None


def expressions(scenario: dict[str, Any] | None) -> dict[tuple, str]:
    """(source, object, request, selector) -> CEL expression, for readable CEL disagreements."""
    out: dict[tuple, str] = {}
    if not scenario:
        return out
    for c in scenario.get("deviceClasses") or []:
        for i, sel in enumerate((c.get("spec") or {}).get("selectors") or []):
            out[("class", c["metadata"]["name"], "", i)] = (sel.get("cel") or {}).get("expression", "")
    for c in scenario.get("claims") or []:
        obj = f"{c['metadata'].get('namespace', '')}/{c['metadata']['name']}"
        for r in c["spec"]["devices"].get("requests") or []:
            bodies = (
                [(r["name"], r["exactly"])]
                if r.get("exactly")
                else [(f"{r['name']}/{b['name']}", b) for b in r.get("firstAvailable") or []]
            )
            for name, b in bodies:
                for i, sel in enumerate(b.get("selectors") or []):
                    out[("claim", obj, name, i)] = (sel.get("cel") or {}).get("expression", "")
    return out


def compare(
    oracle_out: dict[str, Any], ours: dict[str, Any], scenario: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Disagreements between the oracle output and ours: a list of {"kind", "detail"}."""
    diffs: list[dict[str, Any]] = []
    exprs = expressions(scenario)
    up_cel, our_cel = oracle_out.get("cel") or [], ours.get("cel") or []
    if [cel_key(e) for e in up_cel] != [cel_key(e) for e in our_cel]:
        up_keys, our_keys = collections.Counter(map(cel_key, up_cel)), collections.Counter(map(cel_key, our_cel))
        diffs.append(
            {
                "kind": "cel-entries",
                "detail": {
                    "missing": [list(k) for k in (up_keys - our_keys)][:5],
                    "extra": [list(k) for k in (our_keys - up_keys)][:5],
                },
            }
        )
    else:
        for u, o in zip(up_cel, our_cel):
            ue, oe = u.get("error") is not None, o.get("error") is not None
            if ue != oe or (not ue and u.get("result") != o.get("result")):
                diffs.append(
                    {
                        "kind": "cel-result",
                        "detail": {
                            "entry": list(cel_key(u)),
                            "upstream": [u.get("result"), u.get("error")],
                            "ours": [o.get("result"), o.get("error")],
                            "expression": exprs.get((u["source"], u["object"], u["request"], u["selector"])),
                        },
                    }
                )
            elif ue and norm_error(o["error"]) not in {
                norm_error(t) for t in [u["error"], *(u.get("otherErrors") or [])]
            }:
                diffs.append(
                    {
                        "kind": "cel-error-text",
                        "detail": {
                            "entry": list(cel_key(u)),
                            "upstream": u["error"],
                            "ours": o["error"],
                            "expression": exprs.get((u["source"], u["object"], u["request"], u["selector"])),
                        },
                    }
                )

    our_alloc = canon_allocation(ours.get("allocation"))
    alts = [canon_allocation(a) for a in (oracle_out.get("alternatives") or [oracle_out.get("allocation")])]
    if our_alloc in alts:
        return diffs
    up = alts[0]
    if oracle_out.get("deterministic") or len(alts) == 1:
        same_outcome = [a for a in alts if a["outcome"] == our_alloc["outcome"]]
    else:
        same_outcome = [a for a in alts if a["outcome"] == our_alloc["outcome"]]
    if not same_outcome:
        kind = "outcome"
    else:
        up = same_outcome[0]
        if our_alloc["outcome"] in ERROR_OUTCOMES:
            kind = "error-text"
        elif [
            [(r["request"], r["driver"], r["pool"], r["device"]) for r in c["results"]] for c in our_alloc["claims"]
        ] in [
            [[(r["request"], r["driver"], r["pool"], r["device"]) for r in c["results"]] for c in a["claims"]]
            for a in same_outcome
        ]:
            kind = "allocation-details"  # same devices, different adminAccess/consumedCapacity/nodeSelector
        else:
            kind = "devices"
    diffs.append(
        {
            "kind": kind,
            "detail": {
                "upstream": up,
                "ours": our_alloc,
                "upstreamAlternatives": len(alts),
                "deterministic": oracle_out.get("deterministic"),
            },
        }
    )
    return diffs


# ---------------------------------------------------------------------------------------------
# Running the engine


class EngineTimeout(Exception):
    pass


def _alarm(signum, frame):  # pragma: no cover
    raise EngineTimeout()


def run_engine(scenario: dict[str, Any]) -> dict[str, Any]:
    from kubectl_dra.analyze.scenario import evaluate  # the contract (issue 4)

    use_alarm = (
        hasattr(signal, "SIGALRM") and __import__("threading").current_thread() is __import__("threading").main_thread()
    )
    if use_alarm:
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(ENGINE_TIMEOUT_S)
    try:
        return evaluate(copy.deepcopy(scenario))
    finally:
        if use_alarm:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)


def judge(
    scenario: dict[str, Any], oracle_out: dict[str, Any], reason_stats: collections.Counter | None = None
) -> tuple[str, list[dict[str, Any]]]:
    """("agreed" | "disagreed" | "inconclusive", disagreements or [reason]). With a trace in the oracle's output
    the per-device reasons are compared too (reasons.py), their counts added to reason_stats."""
    why = inconclusive(oracle_out)
    if why:
        if why.startswith("upstream panicked: "):
            # Not counted either way, but say whether the engine foresaw the crash (finding DRA415).
            panic = why[len("upstream panicked: ") :]
            try:
                err = (run_engine(scenario).get("allocation") or {}).get("error") or ""
            except Exception:
                err = ""
            if err.startswith("kube-scheduler ") and panic and panic in err:
                why = "upstream panicked, engine predicted the crash: " + panic
        return "inconclusive", [{"kind": "inconclusive", "detail": why}]
    try:
        ours = run_engine(scenario)
    except EngineTimeout:
        return "disagreed", [{"kind": "engine-timeout", "detail": f"no answer within {ENGINE_TIMEOUT_S}s"}]
    except Exception:  # a crash of the engine is a disagreement
        return "disagreed", [{"kind": "engine-crash", "detail": traceback.format_exc(limit=8)}]
    if (ours.get("allocation") or {}).get("outcome") == "undetermined":
        # The engine declines (explain: DRA016, a field it does not model; or a limit of the local CEL engine,
        # "kubectl-dra: ..."). Counted apart, never as agreement.
        return "inconclusive", [
            {"kind": "inconclusive", "detail": "engine undetermined: " + ours["allocation"]["error"]}
        ]
    if "kubectl-dra's step budget" in ((ours.get("allocation") or {}).get("error") or ""):
        # The engine gave up and says so (DRA414, undetermined, exit 2): honest, but no verdict to compare.
        return "inconclusive", [{"kind": "inconclusive", "detail": "engine step budget exceeded (DRA414)"}]
    diffs = compare(oracle_out, ours, scenario)
    rdiffs, stats = reasons.compare_reasons(oracle_out, ours, scenario)
    diffs += rdiffs
    # The claim-level reason (claim_reasons.py): where the search ran out of candidates first, and why.
    cdiffs, cstats = claim_reasons.compare_claim(oracle_out, ours, scenario)
    diffs += cdiffs
    if reason_stats is not None:
        reason_stats.update(stats)
        reason_stats.update({"claim-" + k: n for k, n in cstats.items()})
    return ("disagreed" if diffs else "agreed"), diffs


def _detail_class(diffs: list[dict[str, Any]]) -> str:
    """A coarse class of the first disagreement (digits and quoted names blanked), so that only a
    few disagreements of each sort get shrunk."""
    d = diffs[0]["detail"]
    text = json.dumps(d.get("upstream") if isinstance(d, dict) else d)[:160]
    return re.sub(r"[0-9]+", "N", text)


RECHECK_RUNS = 400


def needs_recheck(oracle_out: dict[str, Any], diffs: list[dict[str, Any]]) -> bool:
    """A disagreement on the allocation where upstream iterates pools in Go map order: the pool
    orders Go's map iteration produces are not uniformly distributed (small maps start at a random
    slot), so a valid order can be missing from the first runs."""
    return not oracle_out.get("deterministic") and any(
        d["kind"] in ("outcome", "devices", "allocation-details", "error-text") for d in diffs
    )


def with_more_runs(oracle: Oracle, scenario: dict[str, Any], oracle_out: dict[str, Any]) -> dict[str, Any]:
    more = oracle.evaluate(dict(scenario, runs=RECHECK_RUNS))
    merged = dict(oracle_out)
    alts = list(oracle_out.get("alternatives") or [])
    for a in more.get("alternatives") or []:
        if a not in alts:
            alts.append(a)
    merged["alternatives"] = alts
    merged["runs"] = (oracle_out.get("runs") or 0) + (more.get("runs") or 0)
    return merged


def signature(diffs: list[dict[str, Any]]) -> set[str]:
    return {d["kind"] for d in diffs}


SEVERITY = [
    "engine-crash",
    "engine-timeout",
    "outcome",
    "devices",
    "allocation-details",
    "error-text",
    "cel-entries",
    "cel-result",
    "cel-error-text",
    "claim-reason",
]


def shrink_disagreement(
    oracle: Oracle, scenario: dict[str, Any], diffs: list[dict[str, Any]], max_steps: int = 300, budget_s: float = 120.0
) -> dict[str, Any]:
    # Keep the most severe kind of disagreement while shrinking (otherwise a device-choice
    # difference would happily shrink into an unrelated error-text difference).
    want = min(signature(diffs), key=lambda k: SEVERITY.index(k) if k in SEVERITY else len(SEVERITY))

    def still_fails(cand: dict[str, Any]) -> bool:
        out = oracle.evaluate(cand)
        status, d = judge(cand, out)
        return status == "disagreed" and want in signature(d)

    return generator.shrink(scenario, still_fails, max_steps=max_steps, budget_s=budget_s)


# ---------------------------------------------------------------------------------------------
# Known differences


def load_known(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    import yaml  # PyYAML is a pinned runtime dependency of kubectl-dra

    data = yaml.safe_load(path.read_text()) or []
    for e in data:
        if not e.get("cause"):
            raise ValueError(f"{path}: entry without a cause: {e}")
    return data


def _entry_matches(e: dict[str, Any], version: str, scenario_id: str, diff: dict[str, Any]) -> bool:
    if e.get("versions") and version not in [str(v) for v in e["versions"]]:
        return False
    if e.get("id") and not re.fullmatch(e["id"], scenario_id):
        return False
    if e.get("kinds") and diff["kind"] not in e["kinds"]:
        return False
    if e.get("detail") and not re.search(e["detail"], json.dumps(diff["detail"])):
        return False
    return True


def is_known(
    known: list[dict[str, Any]], scenario_id: str, diffs: list[dict[str, Any]], version: str = ""
) -> dict[str, Any] | None:
    """The known-differences entries explaining *every* disagreement of a scenario (each diff by at
    least one entry), as {"cause": "...; ...", "entries": [...]}, or None if any diff is unexplained.
    Entry fields: cause (required), versions, id (regex on the scenario id), kinds, detail (regex
    searched in the JSON of the diff's detail)."""
    used: list[dict[str, Any]] = []
    for d in diffs:
        hit = next((e for e in known if _entry_matches(e, version, scenario_id, d)), None)
        if hit is None:
            return None
        if hit not in used:
            used.append(hit)
    return {
        "cause": "; ".join(e["cause"].strip().split("\n")[0] for e in used),
        "entries": [e.get("name", "") for e in used],
    }


# ---------------------------------------------------------------------------------------------
# Runs


class Tally:
    def __init__(self):
        self.by_version: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.by_feature: dict[str, dict[str, collections.Counter]] = collections.defaultdict(
            lambda: collections.defaultdict(collections.Counter)
        )
        self.kinds: collections.Counter = collections.Counter()
        self.disagreements: list[dict[str, Any]] = []
        self.inconclusive: collections.Counter = collections.Counter()
        self.reasons: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)

    def add(self, version: str, scenario: dict[str, Any], status: str, diffs: list[dict[str, Any]]) -> None:
        self.by_version[version][status] += 1
        for f in scenario.get("features", []):
            self.by_feature[f][version][status] += 1
        if status == "disagreed":
            for k in signature(diffs):
                self.kinds[(version, k)] += 1
        if status == "inconclusive":
            self.inconclusive[diffs[0]["detail"].split(":")[0]] += 1

    def totals(self) -> tuple[int, int]:
        a = sum(c["agreed"] for c in self.by_version.values())
        t = sum(c["agreed"] + c["disagreed"] for c in self.by_version.values())
        return a, t

    def render(self, versions: list[str]) -> str:
        lines = []
        lines.append("Agreement per version")
        lines.append(
            f"{'version':<9}{'scenarios':>10}{'agreed':>9}{'disagreed':>11}{'inconclusive':>14}{'agreement':>11}"
        )
        for v in versions:
            c = self.by_version[v]
            t = c["agreed"] + c["disagreed"]
            pct = f"{100 * c['agreed'] / t:.2f}%" if t else "-"
            lines.append(
                f"{v:<9}{t + c['inconclusive']:>10}{c['agreed']:>9}{c['disagreed']:>11}{c['inconclusive']:>14}{pct:>11}"
            )
        lines.append("")
        lines.append("Per-device reasons (first visit of each request and device, against upstream's V(7) trace)")
        lines.append(f"{'version':<9}{'visits':>10}{'agreed':>9}{'skipped':>9}{'truncated':>11}{'agreement':>11}")
        for v in versions:
            c = self.reasons[v]
            pct = f"{100 * c['agreed'] / c['compared']:.2f}%" if c["compared"] else "-"
            lines.append(f"{v:<9}{c['compared']:>10}{c['agreed']:>9}{c['skipped']:>9}{c['truncated']:>11}{pct:>11}")
        lines.append("")
        lines.append("Claim-level reasons (where the search ran out of candidates first, and why; claim_reasons.py)")
        lines.append(
            f"{'version':<9}{'compared':>10}{'agreed':>9}{'classes':>9}{'position':>10}{'reason':>8}{'skipped':>9}"
        )
        for v in versions:
            c = self.reasons[v]
            lines.append(
                f"{v:<9}{c['claim-compared']:>10}{c['claim-agreed']:>9}{c['claim-classes-agreed']:>9}"
                f"{c['claim-disagreed-position']:>10}{c['claim-disagreed-reason']:>8}"
                f"{c['claim-skipped'] + c['claim-missing']:>9}"
            )
        lines.append("")
        lines.append("Agreement per feature (agreed/compared per version)")
        lines.append(f"{'feature':<34}" + "".join(f"{v:>15}" for v in versions))
        for f in sorted(self.by_feature):
            row = f"{f:<34}"
            for v in versions:
                c = self.by_feature[f][v]
                t = c["agreed"] + c["disagreed"]
                row += f"{(str(c['agreed']) + '/' + str(t)) if t else '-':>15}"
            lines.append(row)
        if self.kinds:
            lines.append("")
            lines.append("Disagreements by kind")
            for (v, k), n in sorted(self.kinds.items()):
                lines.append(f"  {v} {k}: {n}")
        if self.inconclusive:
            lines.append("")
            lines.append(
                "Inconclusive (not counted): " + ", ".join(f"{k}: {n}" for k, n in sorted(self.inconclusive.items()))
            )
        return "\n".join(lines)


def run(
    versions: list[str],
    n: int,
    seed: int | str,
    shrink: bool = True,
    known: list[dict[str, Any]] | None = None,
    out_dir: Path | None = None,
    start: int = 0,
    log: Callable[[str], None] = print,
    max_shrinks: int = 25,
    per_signature: int = 2,
    shrink_budget_s: float = 120.0,
) -> Tally:
    tally = Tally()
    known = known or []
    out_dir = out_dir or cache_dir() / "fidelity" / "disagreements"
    shrinks = 0
    shrunk: collections.Counter = collections.Counter()
    for v in versions:
        t0 = time.time()

        def finish(s, status, diffs, v=v):
            entry = is_known(known, s["id"], diffs, v) if status == "disagreed" else None
            if status == "disagreed":
                pending.append((s, diffs, entry))
            tally.add(v, s, status, diffs)

        with Oracle(v) as oracle:
            scen = generator.scenarios(v, seed, n, start)
            # The stream's writer thread feeds the oracle ahead; judge() runs our engine meanwhile.
            pending, recheck = [], []
            for s, out in oracle.stream(scen):
                status, diffs = judge(s, out, tally.reasons[v])
                if status == "disagreed" and needs_recheck(out, diffs):
                    recheck.append((s, out))
                    continue
                finish(s, status, diffs)
            # Map-order implementations: before calling a different allocation a disagreement,
            # ask upstream again with many more runs (the oracle process is free now).
            for s, out in recheck:
                status, diffs = judge(s, with_more_runs(oracle, s, out), tally.reasons[v])
                finish(s, status, diffs)
            c = tally.by_version[v]
            log(
                f"# {v}: compared {sum(c.values())} scenarios in {time.time() - t0:.1f}s "
                f"(agreed {c['agreed']}, disagreed {c['disagreed']}, inconclusive {c['inconclusive']}); "
                f"writing {len(pending)} disagreement(s)"
            )
            for s, diffs, entry in pending:
                record = {
                    "id": s["id"],
                    "version": v,
                    "kinds": sorted(signature(diffs)),
                    "known": entry,
                    "diffs": diffs,
                }
                sig = (v, tuple(sorted(signature(diffs))), _detail_class(diffs))
                if shrink and shrinks < max_shrinks and entry is None and shrunk[sig] < per_signature:
                    shrinks += 1
                    shrunk[sig] += 1
                    try:
                        record["minimal"] = shrink_disagreement(oracle, s, diffs, budget_s=shrink_budget_s)
                        out = oracle.evaluate(record["minimal"])
                        record["minimalDiffs"] = judge(record["minimal"], out)[1]
                    except Exception:
                        record["shrinkError"] = traceback.format_exc(limit=5)
                record["scenario"] = s
                out_dir.mkdir(parents=True, exist_ok=True)
                base = s["id"].replace("/", "_")
                path = out_dir / (base + ".json")
                path.write_text(json.dumps(record, indent=1))
                if record.get("minimal"):
                    # The minimal scenario alone: feed it to the oracle (`oracle < file`) or to evaluate().
                    path = out_dir / (base + ".min.json")
                    path.write_text(json.dumps(record["minimal"], indent=1))
                record["path"] = str(path)
                tally.disagreements.append(record)
                log(
                    f"DISAGREEMENT {s['id']} {','.join(record['kinds'])}{' (known: ' + entry['cause'] + ')' if entry else ''} -> {path}"
                )
        c = tally.by_version[v]
        log(
            f"# {v}: {sum(c.values())} scenarios in {time.time() - t0:.1f}s "
            f"(agreed {c['agreed']}, disagreed {c['disagreed']}, inconclusive {c['inconclusive']})"
        )
    return tally


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=int(os.environ.get("N", "200")), help="scenarios per version")
    p.add_argument("--seed", default=os.environ.get("SEED", "1"))
    p.add_argument("--start", type=int, default=0, help="first scenario index")
    p.add_argument("--versions", default=",".join(gatesmod.VERSIONS))
    p.add_argument("--no-shrink", action="store_true")
    p.add_argument("--known", type=Path, default=HERE / "known-differences.yaml")
    p.add_argument("--out-dir", type=Path, default=None)
    p.add_argument("--strict", action="store_true", help="exit 1 on a disagreement not in the known-differences file")
    p.add_argument("--json", type=Path, default=None, help="also write the tally as JSON here")
    a = p.parse_args(argv)
    versions = [v.strip() for v in a.versions.split(",") if v.strip()]
    known = load_known(a.known)
    t0 = time.time()
    tally = run(versions, a.n, a.seed, shrink=not a.no_shrink, known=known, out_dir=a.out_dir, start=a.start)
    print()
    print(f"seed {a.seed}, {a.n} scenarios per version, {time.time() - t0:.0f}s")
    print(tally.render(versions))
    out_dir = a.out_dir or cache_dir() / "fidelity" / "disagreements"
    unknown = [d for d in tally.disagreements if not d["known"]]
    if tally.disagreements:
        print(
            f"\n{len(tally.disagreements)} disagreement(s) ({len(unknown)} not in {a.known.name}) written to {out_dir}"
        )
    if a.json:
        a.json.write_text(
            json.dumps(
                {
                    "seed": a.seed,
                    "n": a.n,
                    "versions": {v: dict(tally.by_version[v]) for v in versions},
                    "kinds": {f"{v} {k}": n for (v, k), n in tally.kinds.items()},
                    "inconclusive": dict(tally.inconclusive),
                    "reasons": {v: dict(tally.reasons[v]) for v in versions},
                    "disagreements": [
                        {
                            "id": d["id"],
                            "kinds": d["kinds"],
                            "known": (d["known"] or {}).get("entries"),
                            "path": d.get("path"),
                        }
                        for d in tally.disagreements
                    ],
                    "features": {f: {v: dict(c) for v, c in fv.items()} for f, fv in tally.by_feature.items()},
                },
                indent=1,
            )
        )
    agreed, total = tally.totals()
    print(f"agreed {agreed} of {total}")
    return 1 if (unknown and a.strict) else 0


if __name__ == "__main__":
    sys.exit(main())
