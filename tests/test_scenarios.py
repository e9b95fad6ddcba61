"""Golden scenarios: every tests/scenarios/<name>/ runs through the real command line (a subprocess of
`python -m kubectl_dra`), in text and JSON, with its exit code checked. `make golden` rewrites the
expected files after an intended change; review the diff."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from golden_stderr import check_stderr

HERE = Path(__file__).resolve().parent / "scenarios"
SCENARIOS = sorted(p.name for p in HERE.iterdir() if (p / "cmd").exists())


def run_cli(args, cwd=None):
    env = dict(os.environ, NO_COLOR="1")
    env.pop("KUBECONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "kubectl_dra", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120
    )


@pytest.mark.parametrize("name", SCENARIOS)
def test_scenario(name, request):
    d = HERE / name
    args = shlex.split((d / "cmd").read_text()) + ["--from-file", str(d / "input.yaml")]
    text = run_cli(args)
    js = run_cli(args + ["-o", "json"])
    assert text.returncode == js.returncode
    text = check_stderr(args, text, js)
    sarif = run_cli(args + ["-o", "sarif"]) if args[0] == "lint" else None  # lint's third format
    if request.config.getoption("--update-golden"):
        (d / "expected.txt").write_text(text.stdout)
        (d / "expected.json").write_text(js.stdout)
        (d / "expected.exit").write_text(f"{text.returncode}\n")
        if sarif is not None:
            (d / "expected.sarif").write_text(sarif.stdout)
        return
    assert text.returncode == int((d / "expected.exit").read_text())
    assert text.stdout == (d / "expected.txt").read_text()
    assert json.loads(js.stdout) == json.loads((d / "expected.json").read_text())
    if sarif is not None:
        assert sarif.returncode == text.returncode and sarif.stderr == text.stderr
        assert json.loads(sarif.stdout) == json.loads((d / "expected.sarif").read_text())
