"""What CI users run: the pre-commit hook's definition, the GitHub Action's lint step (scripts/action/lint.sh, run
here as the action runs it) and the SARIF that code scanning reads (rules, indexes, levels, fingerprints that survive
a line moving). The hook itself runs under the real pre-commit in tests/install/test_install_precommit.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from clirun import run

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "scenarios" / "lint-manifests" / "input.yaml"


def _sarif(path: Path) -> dict:
    return json.loads(run(["lint", str(path), "-o", "sarif"]).stdout)


def test_the_hook_is_what_pre_commit_reads():
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert {"id", "name", "entry", "language"} <= set(hook), hook
    assert hook["entry"].split()[0] == "kubectl-dra" and hook["language"] == "python" and "yaml" in hook["types"]
    import tomllib

    scripts = tomllib.loads(ROOT.joinpath("pyproject.toml").read_text())["project"]["scripts"]
    assert "kubectl-dra" in scripts, "the hook's entry is a console script the package installs"


def test_sarif_is_what_code_scanning_reads_and_its_fingerprints_survive_a_moved_line(tmp_path):
    doc = _sarif(BAD)
    run_ = doc["runs"][0]
    rules = [r["id"] for r in run_["tool"]["driver"]["rules"]]
    assert run_["tool"]["driver"]["name"] == "kubectl-dra" and rules == sorted(set(rules))
    for r in run_["tool"]["driver"]["rules"]:
        assert (
            r["helpUri"].endswith(f"/docs/codes/{r['id']}.md") and (ROOT / "docs" / "codes" / f"{r['id']}.md").exists()
        )
    results = run_["results"]
    assert results
    for x in results:
        assert rules[x["ruleIndex"]] == x["ruleId"] and x["level"] in ("error", "warning", "note")
        region = x["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
    # the same file edited above the findings: every line moves, every fingerprint stays
    f = tmp_path / "input.yaml"
    f.write_text(BAD.read_text())
    before = _sarif(f)["runs"][0]["results"]
    f.write_text("# a comment\n# and another\n\n" + BAD.read_text())
    after = _sarif(f)["runs"][0]["results"]
    line = lambda x: x["locations"][0]["physicalLocation"]["region"]["startLine"]  # noqa: E731
    assert [line(x) for x in after] == [line(x) + 3 for x in before]
    assert [x["partialFingerprints"] for x in after] == [x["partialFingerprints"] for x in before]
    assert len({x["partialFingerprints"]["kubectlDraFinding/v1"] for x in before}) == len(
        {(x["ruleId"], x["message"]["text"]) for x in before}
    )


def test_the_action_s_lint_step_writes_the_sarif_sets_its_output_and_fails_on_errors(tmp_path):
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite" and {"paths", "dump", "fail-on"} <= set(action["inputs"])
    out = tmp_path / "github_output"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PATHS": str(BAD),
        "DUMP": "",
        "FAIL_ON": "error",
        "GITHUB_OUTPUT": str(out),
        "NO_COLOR": "1",
    }
    p = subprocess.run(
        ["bash", str(ROOT / "scripts" / "action" / "lint.sh")], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert p.returncode == 1, p.stderr
    assert out.read_text().strip() == "sarif=kubectl-dra.sarif"
    assert json.loads((tmp_path / "kubectl-dra.sarif").read_text())["runs"][0]["results"]
    assert "DRA701" in p.stdout  # the findings in the job's log too
    clean = tmp_path / "ok.yaml"
    clean.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    p = subprocess.run(
        ["bash", str(ROOT / "scripts" / "action" / "lint.sh")],
        cwd=tmp_path,
        env={**env, "PATHS": str(clean)},
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stdout + p.stderr
