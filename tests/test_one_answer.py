"""One answer per pod: every row of `status` is the verdict `explain pod NAME` and `explain pod -l SELECTOR` give that
pod on the same input (docs/cli.md promises it; issue 45). Checked on the input of every golden scenario (status -A
over it, not the scenario's own command) and on the queue sequences of the fidelity suite (tests/fidelity: the
generated ones of test_queue_sequential.py, a few per minor, and the hand-written ones under sequences/), whose
pods compete in the scheduler's queue: the one judgement of the queue (analyze/queue/) must not depend on which of
the commands asks, nor on which pods the command names."""

from __future__ import annotations

import copy
import html
import json
import re
import shlex
from pathlib import Path

import pytest
import yaml
from clirun import run

HERE = Path(__file__).resolve().parent / "scenarios"
SEQUENCES = Path(__file__).resolve().parent / "fidelity" / "sequences"
# The semantics a scenario's command sets, which every command of the check must share
_SHARED = ("--kubernetes-version", "--feature-gates")
# A selector every pod matches (a label no pod has): explain pod -l over a whole namespace
EVERY_POD = "!kubectl-dra.example/none"
GENERATED = 6  # generated queue sequences per minor


def _state(v: dict) -> tuple:
    state = "Unknown" if not v["determined"] else "Blocked" if v["blocked"] else "OK"
    return state, v["missing"] if state == "Blocked" else None


def _shared(cmd: list[str]) -> list[str]:
    return [a for i, a in enumerate(cmd) if a in _SHARED or (i and cmd[i - 1] in _SHARED)]


def _rows(args: list[str]) -> dict | None:
    """status's rows, (namespace, pod) -> (state, missing); None where status does not read the input (lint's
    manifests, an input without pods: their own scenarios say so)."""
    r = run(["status", "-o", "json", *args])
    if r.returncode not in (0, 1, 2) or not r.stdout.strip():
        return None
    return {(x["namespace"], x["pod"]): (x["state"], x["missing"] if x["state"] == "Blocked" else None) for x in
            json.loads(r.stdout).get("items") or []}  # fmt: skip


# The HTML report's table of pods (render/html.py _pods) and the summary line of each pod it explains in full
_REPORT_ROW = re.compile(r'<tr><td>([^<]*)</td><td class="(\w+)">\w+</td><td>([^<]*)</td>')
_REPORT_EXPLAINED = re.compile(r"<details(?: open)?><summary>([^<]*?): (Blocked|Undetermined|OK): ")


def _report_rows(args: list[str]) -> dict | None:
    """What `kubectl dra report` says of each pod: (namespace, pod) -> (state, missing) from its table, and the state
    of each pod it explains in full (None where status does not read the input)."""
    r = run(["report", *args])
    if r.returncode not in (0, 1, 2) or "<html" not in r.stdout:
        return None
    rows = {}
    for pod, state, missing in _REPORT_ROW.findall(r.stdout):
        ns, name = html.unescape(pod).split("/", 1)
        rows[(ns, name)] = (state, html.unescape(missing) or None if state == "Blocked" else None)
    for pod, verdict in _REPORT_EXPLAINED.findall(r.stdout):
        ns, name = html.unescape(pod).split("/", 1)
        state = {"Undetermined": "Unknown"}.get(verdict, verdict)
        assert rows[(ns, name)][0] == state, (
            f"{ns}/{name}: the report's table says {rows[(ns, name)]}, its explanation {state}"
        )
    return rows


def _one_answer(inp: str, shared: list[str]) -> int:
    """Check every pod status lists on the input, namespace by namespace (an object of the input without a namespace
    is read into the namespace asked about, as kubectl does: each command asks about the same one); returns how
    many pods were checked. The HTML report of the whole input says the same of each pod as status -A."""
    every = _rows(["-A", *shared, "--from-file", inp])
    if every is not None:
        assert _report_rows(["-A", *shared, "--from-file", inp]) == every, "the report and status -A differ"
    checked = 0
    for ns in sorted({ns for ns, _ in every or ()}):
        rows = _rows(["-n", ns, *shared, "--from-file", inp]) or {}
        got = run(["explain", "pod", "-l", EVERY_POD, "-n", ns, *shared, "--from-file", inp, "-o", "json"])
        by_label = {
            (x["pod"]["namespace"], x["pod"]["name"]): _state(x["verdict"])
            for x in json.loads(got.stdout).get("items") or []
        }
        for (ns_, name), row in rows.items():
            got = run(["explain", "pod", name, "-n", ns_, *shared, "--from-file", inp, "-o", "json"])
            alone = _state(json.loads(got.stdout)["verdict"])
            assert (row, row) == (alone, by_label.get((ns_, name))), (
                f"{ns_}/{name}: status {row}, explain pod NAME {alone}, explain pod -l {by_label.get((ns_, name))}"
            )
            checked += 1
    return checked


def _golden(name: str) -> bool:
    return (HERE / name / "cmd").exists() and (HERE / name / "input.yaml").exists()


GOLDEN = sorted(p.name for p in HERE.iterdir() if _golden(p.name))


@pytest.mark.parametrize("name", GOLDEN)
def test_each_pod_has_one_verdict_on_every_golden_input(name):
    d = HERE / name
    _one_answer(str(d / "input.yaml"), _shared(shlex.split((d / "cmd").read_text())))


def _sequence_input(s: dict, path: Path) -> list[str]:
    """The sequence as an input file (the objects test_queue_sequential.ours judges) and the flags of its
    semantics."""
    from fidelity.test_queue_sequential import pod_object, pods_of

    from kubectl_dra.features import KNOWN_GATES

    pods = pods_of(s)
    node = copy.deepcopy(s["node"])
    node.setdefault("status", {})["allocatable"] = {"cpu": "64", "memory": "256Gi", "pods": "110"}
    objs = [node, *s["deviceClasses"], *s["slices"], *s["allocatedClaims"], *s["claims"]]
    objs += [pod_object(name, cs, i) for i, (name, cs) in enumerate(pods.items())]
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objs}, sort_keys=False))
    gates = ",".join(f"{k}={str(bool(v)).lower()}" for k, v in sorted(s["featureGates"].items()) if k in KNOWN_GATES)
    return ["--kubernetes-version", s["version"], *(["--feature-gates", gates] if gates else [])]


def _sequences() -> list:
    from fidelity import gates

    out = [("generated", v, i) for v in gates.VERSIONS for i in range(GENERATED)]
    return out + [("fixed", v, p.name) for v in gates.VERSIONS for p in sorted(SEQUENCES.glob("*.json"))]


@pytest.mark.parametrize("kind,version,which", _sequences(), ids=lambda x: str(x))
def test_each_pod_has_one_verdict_on_the_queue_sequences(kind, version, which, tmp_path):
    from fidelity import gates
    from fidelity.test_queue_sequential import SEED, gen_sequence

    if kind == "generated":
        s = gen_sequence(version, SEED, which)
    else:
        base = json.loads((SEQUENCES / which).read_text())
        s = dict(base, version=version, featureGates=dict(gates.defaults(version), **base["meta"].get("gates", {})))
    path = tmp_path / "input.yaml"
    shared = _sequence_input(s, path)
    assert _one_answer(str(path), shared), "status lists the sequence's pods"
