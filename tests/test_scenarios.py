"""Golden scenarios: every tests/scenarios/<name>/ runs through the command line (in this process: tests/clirun.py;
tests/install runs each one again through the frozen build's binary), in text and JSON, with its exit code checked. `make golden` rewrites the
expected files after an intended change; review the diff."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from clirun import run
from golden_stderr import check_stderr

HERE = Path(__file__).resolve().parent / "scenarios"
SCENARIOS = sorted(p.name for p in HERE.iterdir() if (p / "cmd").exists())


@pytest.mark.parametrize("name", SCENARIOS)
def test_scenario(name, request):
    d = HERE / name
    # ./FILE in a command is a file of the scenario's own folder (devices --request ./request.yaml)
    args = [str(d / a[2:]) if a.startswith("./") else a for a in shlex.split((d / "cmd").read_text())]
    args += ["--from-file", str(d / "input.yaml")]
    text = run(args)
    js = run(args + ["-o", "json"])
    assert text.returncode == js.returncode
    text = check_stderr(args, text, js)
    sarif = run(args + ["-o", "sarif"]) if args[0] == "lint" else None  # lint's third format
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
