"""One answer per pod: every row of `status` is the verdict `explain pod` gives that pod on the same input (docs/cli.md
promises it). Checked on every golden scenario whose command is status (not --alone, which judges each pod alone)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from clirun import run

HERE = Path(__file__).resolve().parent / "scenarios"
# status's own flags: what it is asked about and how it prints; the rest (--kubernetes-version, --feature-gates)
# are the semantics explain pod must share
_OWN = {"-A", "--all-namespaces", "-n", "--namespace", "-l", "--selector", "-o", "--output"}


def _status(name: str) -> bool:
    """A status scenario that lists pods (not --alone)."""
    cmd = shlex.split((HERE / name / "cmd").read_text())
    if cmd[0] != "status" or "--alone" in cmd:
        return False
    return bool(json.loads((HERE / name / "expected.json").read_text()).get("items"))


SCENARIOS = sorted(p.name for p in HERE.iterdir() if (p / "cmd").exists() and _status(p.name))


def _shared(args: list[str]) -> list[str]:
    out, skip = [], False
    for a in args[1:]:
        if skip:
            skip = False
        elif a in _OWN:
            skip = a not in ("-A", "--all-namespaces")
        elif not a.startswith("-o"):
            out.append(a)
    return out


@pytest.mark.parametrize("name", SCENARIOS)
def test_each_status_row_is_the_pod_s_explain_verdict(name):
    d = HERE / name
    args = shlex.split((d / "cmd").read_text())
    inp = ["--from-file", str(d / "input.yaml")]
    doc = json.loads(run([*args, *inp, "-o", "json"]).stdout)
    assert doc["items"], "the scan lists pods"
    for row in doc["items"]:
        r = run(["explain", "pod", row["pod"], "-n", row["namespace"], *_shared(args), *inp, "-o", "json"])
        v = json.loads(r.stdout)["verdict"]
        state = "Unknown" if not v["determined"] else "Blocked" if v["blocked"] else "OK"
        assert (state, v["missing"] if state == "Blocked" else None) == (
            row["state"],
            row["missing"] if row["state"] == "Blocked" else None,
        ), f"{row['namespace']}/{row['pod']}: status {row['state']} {row['missing']}, explain {state} {v['missing']}"
