"""Differential fidelity tests against upstream Kubernetes code (issue 4, docs/fidelity.md).

Marked `oracle`: builds the four upstream oracles on first use (tests/oracle/build.sh, cached under
${KUBECTL_DRA_CACHE:-~/.cache/kubectl-dra}/oracle) and never skips. The main test runs a fixed-seed
set of CI_N scenarios per Kubernetes minor through the oracle and kubectl-dra's engine and fails on
any disagreement that known-differences.yaml does not list (with its cause).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from . import claim_reasons, compare, gates, generator, reasons
from .oracle import Oracle

pytestmark = pytest.mark.oracle

HERE = Path(__file__).resolve().parent
CI_SEED = "ci"
CI_N = 300
VERSIONS = list(gates.VERSIONS)


@pytest.fixture(scope="module", params=VERSIONS)
def oracle(request):
    with Oracle(request.param) as o:
        yield o


# --- the oracle alone, on hand-written scenarios ----------------------------------------------


def tutorial(version: str) -> dict:
    s = json.loads((HERE / "scenarios" / "tutorial.json").read_text())
    s["version"] = version
    s["featureGates"] = gates.defaults(version)
    return s


def test_oracle_tutorial_picks_the_24gi_gpu(oracle):
    out = oracle.evaluate(tutorial(oracle.version))
    assert out.get("inputError") is None
    assert out["version"] == oracle.version
    by_device = {(e["source"], e["device"]): e["result"] for e in out["cel"]}
    assert by_device == {
        ("class", "gpu.example.com/node-1/gpu-0"): True,
        ("class", "gpu.example.com/node-1/gpu-1"): True,
        ("claim", "gpu.example.com/node-1/gpu-0"): True,
        ("claim", "gpu.example.com/node-1/gpu-1"): False,
    }
    alloc = out["allocation"]
    assert alloc["outcome"] == "allocated", alloc
    assert alloc["claims"][0]["results"] == [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}
    ]
    assert alloc["claims"][0]["nodeSelector"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]
    }


def test_oracle_tutorial_without_a_big_enough_gpu(oracle):
    s = tutorial(oracle.version)
    s["slices"][0]["spec"]["devices"][0]["capacity"]["memory"]["value"] = "16Gi"
    out = oracle.evaluate(s)
    assert out["allocation"] == {"outcome": "unallocatable", "error": None, "claims": []}


def test_oracle_traces_the_allocators_per_device_decisions(oracle):
    s = tutorial(oracle.version)
    s["trace"] = True
    out = oracle.evaluate(s)
    devices = {"gpu.example.com/node-1/gpu-0", "gpu.example.com/node-1/gpu-1"}
    got = [(v["request"], v["device"], v["stage"]) for v in reasons.visits(out["trace"], s["claims"], devices)]
    # The search looks at gpu-0 first and takes it (the 24Gi one passes the request's selector).
    assert got == [("gpu", "gpu.example.com/node-1/gpu-0", "allocated")]
    s["slices"][0]["spec"]["devices"][0]["capacity"]["memory"]["value"] = "16Gi"
    out = oracle.evaluate(s)
    got = [(v["device"], v["stage"]) for v in reasons.visits(out["trace"], s["claims"], devices)]
    assert got == [("gpu.example.com/node-1/gpu-0", "request"), ("gpu.example.com/node-1/gpu-1", "request")]
    # The engine's reasons agree; a wrong one is caught.
    ours = compare.run_engine(s)
    diffs, stats = reasons.compare_reasons(out, ours, s)
    assert diffs == [] and stats["compared"] == 2 == stats["agreed"]
    for r in ours["reasons"]:
        r["stages"] = ["class"]
    diffs, stats = reasons.compare_reasons(out, ours, s)
    assert [(d["detail"]["upstream"], d["detail"]["ours"]) for d in diffs] == [("request", "class")] * 2


def test_oracle_records_where_upstreams_search_ran_out_and_the_engine_agrees(oracle):
    """Issue 29 item 4: one free device, two requests of one claim and a matchAttribute that the device satisfies.
    Upstream's search gets to the second request and finds the device taken by the first: "distinct"."""
    s = tutorial(oracle.version)
    s["trace"] = True
    c = s["claims"][0]["spec"]["devices"]
    c["requests"] = [
        {"name": n, "exactly": {"deviceClassName": "gpu-inferencia", "allocationMode": "ExactCount", "count": 1}}
        for n in ("main", "helper")
    ]
    c["constraints"] = [{"matchAttribute": "gpu.example.com/numa"}]
    for d in s["slices"][0]["spec"]["devices"]:
        d["attributes"] = {"numa": {"int": 0}}
    s["slices"][0]["spec"]["devices"].pop()  # one device
    out = oracle.evaluate(s)
    assert out["allocation"]["outcome"] == "unallocatable"
    up = claim_reasons.upstream_outcome(out["deepest"], s, out["implementation"])
    assert (up["claim"], up["request"], up["slot"], up["reason"]) == (0, 1, 0, "distinct")
    ours = compare.run_engine(s)
    assert claim_reasons.compare_claim(out, ours, s) == ([], {"compared": 1, "agreed": 1, "classes-agreed": 1})
    # A different reason (or position) is caught.
    ours["claimOutcome"]["reason"] = "constraint"
    diffs, stats = claim_reasons.compare_claim(out, ours, s)
    assert [d["detail"]["what"] for d in diffs] == ["reason"] and stats["disagreed-reason"] == 1
    # Two devices whose values differ: the constraint is why, at the second request.
    s["slices"][0]["spec"]["devices"] = [
        {"name": f"gpu-{i}", "attributes": {"numa": {"int": i}}, "capacity": {"memory": {"value": "24Gi"}}}
        for i in range(2)
    ]
    out = oracle.evaluate(s)
    up = claim_reasons.upstream_outcome(out["deepest"], s, out["implementation"])
    assert (up["request"], up["reason"]) == (1, "constraint")
    assert claim_reasons.compare_claim(out, compare.run_engine(s), s)[0] == []


def test_oracle_reports_cel_runtime_errors_and_the_allocator_error(oracle):
    s = tutorial(oracle.version)
    s["claims"][0]["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
        {"cel": {"expression": 'device.attributes["gpu.example.com"].model == "x"'}}
    ]
    out = oracle.evaluate(s)
    errors = {e["error"] for e in out["cel"] if e["source"] == "claim"}
    assert errors == {"no such key: model"}
    assert out["allocation"]["outcome"] == "error"
    assert "CEL runtime error: no such key: model" in out["allocation"]["error"]
    assert out["allocation"]["error"].startswith("claim tienda/recomendador-gpu: selector #0")


def test_oracle_rejects_fields_its_api_version_does_not_know(oracle):
    s = tutorial(oracle.version)
    s["slices"][0]["spec"]["devices"][0]["noSuchField"] = 1
    assert "noSuchField" in (oracle.evaluate(s).get("inputError") or "")


# --- the generator and the shrinker ---------------------------------------------------------


def test_generator_is_reproducible():
    for v in VERSIONS:
        assert generator.generate(v, 7, 3) == generator.generate(v, 7, 3)
        assert generator.generate(v, 7, 3) != generator.generate(v, 7, 4)


def test_generator_covers_the_issue_feature_list():
    seen: set[str] = set()
    for v in VERSIONS:
        for s in generator.scenarios(v, CI_SEED, CI_N):
            seen.update(s["features"])
    required = {
        "cel-int-attr",
        "cel-bool-attr",
        "cel-string-attr",
        "cel-semver",
        "cel-quantity",
        "cel-quantity-arith",
        "cel-string-ext",
        "cel-matches",
        "cel-optional",
        "cel-bind",
        "cel-has",
        "cel-missing-id",
        "cel-unknown-domain",
        "attr-unqualified-name",
        "cel-heterogeneous-eq",
        "cel-int-vs-double",
        "cel-type-error",
        "cel-runtime-error",
        "cel-compile-error",
        "count-1",
        "count-n",
        "mode-all",
        "first-available",
        "match-attribute",
        "distinct-attribute",
        "devices-in-use",
        "admin-access",
        "taint-NoSchedule",
        "taint-NoExecute",
        "taint-None",
        "tolerations",
        "partitionable",
        "consumable-capacity",
        "capacity-request-policy",
        "binding-conditions",
        "pool-incomplete",
        "pool-invalid",
        "several-pools",
        "several-slices",
        "slice-nodeName",
        "slice-nodeSelector",
        "slice-allNodes",
        "slice-perDevice",
        "attr-list",
        "constraint-list-attr",
        "capacity-fractional-range",
        # 1.37+ alpha features, each with its gate on and off (gen_alpha.py)
        "compatibility-groups-gate-on",
        "compatibility-groups-gate-off",
        "derived-attributes-gate-on",
        "derived-attributes-gate-off",
    }
    assert required <= seen, sorted(required - seen)


def test_shrinker_keeps_the_failure_and_removes_the_rest():
    s = generator.generate("1.36", 11, 0)
    # Plant one recognisable device and shrink on "that device is still there".
    s["slices"][0]["spec"]["devices"].append({"name": "needle", "attributes": {"model": {"string": "x"}}})

    def still_fails(c):
        return any(d["name"] == "needle" for sl in c["slices"] for d in sl["spec"].get("devices", []))

    m = generator.shrink(s, still_fails)
    assert still_fails(m)
    assert len(m["slices"]) == 1 and [d["name"] for d in m["slices"][0]["spec"]["devices"]] == ["needle"]
    assert m["claims"] == [] and m["allocatedClaims"] == []


def test_comparison_flags_a_changed_device_choice_and_accepts_an_identical_answer():
    up = {
        "deterministic": True,
        "cel": [],
        "allocation": {
            "outcome": "allocated",
            "error": None,
            "claims": [
                {
                    "claim": "ns/c",
                    "results": [{"request": "r", "driver": "d", "pool": "p", "device": "a"}],
                    "nodeSelector": None,
                }
            ],
        },
    }
    up["alternatives"] = [up["allocation"]]
    ours = copy.deepcopy({"cel": up["cel"], "allocation": up["allocation"]})
    assert compare.compare(up, ours) == []
    ours["allocation"]["claims"][0]["results"][0]["device"] = "b"
    assert [d["kind"] for d in compare.compare(up, ours)] == ["devices"]
    # Map-order versions: any allocation upstream produced in one of its runs is accepted.
    alt = copy.deepcopy(up["allocation"])
    alt["claims"][0]["results"][0]["device"] = "b"
    up2 = dict(up, deterministic=False, alternatives=[up["allocation"], alt])
    assert compare.compare(up2, ours) == []


def test_quantities_compare_exactly():
    assert compare.quantity("1Gi") == compare.quantity("1024Mi") == 2**30
    assert compare.quantity("1500m") == compare.quantity("1.5")
    assert compare.quantity("50M") != compare.quantity("50Mi")


# --- the differential test itself -----------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_engine_agrees_with_upstream(version, tmp_path):
    known = compare.load_known(HERE / "known-differences.yaml")
    lines: list[str] = []
    tally = compare.run(
        [version],
        CI_N,
        CI_SEED,
        shrink=True,
        known=known,
        out_dir=tmp_path,
        log=lines.append,
        max_shrinks=3,
        shrink_budget_s=60,
    )
    c = tally.by_version[version]
    assert sum(c.values()) == CI_N
    assert tally.inconclusive.get("input rejected by the oracle", 0) == 0, "generator produced invalid objects"
    # The per-device reasons were compared with upstream's trace on many devices, and left few visits unread.
    r = tally.reasons[version]
    assert r["compared"] > 5 * CI_N, dict(r)
    assert r["skipped"] < r["compared"] / 50, dict(r)
    # The claim-level reason was compared wherever both searches found nothing (a quarter of the set or more).
    assert r["claim-compared"] > CI_N // 4 and not r["claim-missing"] and not r["claim-skipped"], dict(r)
    unknown = [d for d in tally.disagreements if not d["known"]]
    report = "\n".join(
        f"{d['id']}: {', '.join(d['kinds'])}\n    {json.dumps(d['diffs'][0]['detail'])[:600]}\n    file: {d['path']}"
        for d in unknown[:15]
    )
    assert not unknown, (
        f"{len(unknown)} disagreement(s) with upstream {version} not listed in "
        f"known-differences.yaml:\n{report}\n" + tally.render([version])
    )


@pytest.mark.parametrize("path", sorted((HERE / "scenarios").rglob("*.json")), ids=lambda p: p.stem)
def test_fixed_scenarios(path):
    """Hand-written and minimal scenarios, every version (from the scenario's minVersion: a field older minors' API
    does not have, such as derivedAttributes, is refused by their oracle): agree, or be explained by
    known-differences.yaml."""
    known = compare.load_known(HERE / "known-differences.yaml")
    base = json.loads(path.read_text())
    since = tuple(int(x) for x in base.pop("minVersion", "1.0").split("."))  # the test's, not the oracle's
    # minors where the engine must decline (a limit of the local CEL engine) while upstream decides
    declines = base.pop("undeterminedOn", [])
    for version in VERSIONS:
        if tuple(int(x) for x in version.split(".")) < since:
            continue
        s = copy.deepcopy(base)
        if s.get("version") != version:
            s["version"] = version
            s["featureGates"] = gates.defaults(version)
        with Oracle(version) as o:
            out = o.evaluate(s)
        status, diffs = compare.judge(s, out)
        if version in declines and s.get("version") == base.get("version"):
            assert status == "inconclusive" and "kubectl-dra:" in diffs[0]["detail"], diffs
            assert (out.get("allocation") or {}).get("outcome") in ("allocated", "unallocatable", "error"), out
            continue
        assert status != "inconclusive" or "panicked" in diffs[0]["detail"], diffs
        if status == "disagreed":
            assert compare.is_known(known, s.get("id", path.stem), diffs, version), (
                f"{path.name} on {version}: {json.dumps(diffs)[:1500]}"
            )
