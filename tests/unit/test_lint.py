"""kubectl dra lint: positions in the file, SARIF, --fail-on and the reference inventory, through the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys

CLASS = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu
spec:
  selectors:
  - cel:
      expression: {expr}
"""
SLICE = """apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: s
spec:
  driver: gpu.example.com
  nodeName: node-01
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    capacity:
      memory: {value: 24Gi}
"""


def run(*args, stdin=None):
    env = dict(os.environ, NO_COLOR="1")
    env.pop("KUBECONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "kubectl_dra", "lint", *args],
        capture_output=True,
        text=True,
        env=env,
        input=stdin,
        timeout=120,
    )


def test_cel_error_positions_follow_the_scalar_style(tmp_path):
    # cel-go points at column 17 of the expression (the end, after the dangling operator); its text starts at
    # column 19 of the line, 20 when quoted.
    for expr, col in (("device.driver ==", 35), ('"device.driver =="', 36)):
        f = tmp_path / "c.yaml"
        f.write_text(CLASS.format(expr=expr))
        r = run("-f", str(f))
        assert r.returncode == 1 and f"c.yaml:8:{col}: DRA701 error" in r.stdout, (expr, r.stdout)
    f.write_text(CLASS.format(expr="|\n        device.driver ==\n          && true"))
    r = run("-f", str(f))
    assert r.returncode == 1 and "c.yaml:10:11: DRA701 error" in r.stdout, r.stdout  # the && of the second line


def test_attribute_names_need_a_reference(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text(CLASS.format(expr='\'device.capacity["gpu.example.com"].memmory.isGreaterThan(quantity("1Gi"))\''))
    r = run("-f", str(f))
    assert r.returncode == 0 and r.stdout == "" and r.stderr.startswith("note: no reference inventory"), r
    ref = tmp_path / "dump.yaml"
    ref.write_text(SLICE)
    r = run("-f", str(f), "--from-file", str(ref))
    assert r.returncode == 0 and "DRA703 warning" in r.stdout and 'did you mean "memory"' in r.stdout, r.stdout
    r = run("-f", str(f), "--from-file", str(ref), "--fail-on", "warning")
    assert r.returncode == 1, r


def test_sarif_and_stdin(tmp_path):
    r = run("-f", "-", "-o", "sarif", stdin=CLASS.format(expr="device.driver =="))
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["version"] == "2.1.0" and doc["$schema"].endswith("sarif-2.1.0.json")
    run_ = doc["runs"][0]
    assert run_["tool"]["driver"]["name"] == "kubectl-dra" and run_["tool"]["driver"]["rules"][0]["id"] == "DRA701"
    res = run_["results"][0]
    assert res["ruleId"] == "DRA701" and res["level"] == "error"
    region = res["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (8, 35) and res["locations"][0]["physicalLocation"][
        "artifactLocation"
    ]["uri"] == "<stdin>"


def test_bad_input_is_one_line(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text("kind: [unclosed\n")
    r = run("-f", str(f))
    assert r.returncode == 2 and r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, r.stderr
    r = run()
    assert r.returncode == 2 and "give the manifests as FILE arguments or with -f" in r.stderr, r.stderr


def test_sarif_validates_against_the_sarif_2_1_0_schema(tmp_path):
    """The SARIF 2.1.0 JSON schema (tests/unit/data/sarif-schema-2.1.0.json, from the @microsoft/sarif-multitool-linux
    5.7.0 npm package, sha256 1c49a0f2...) accepts the golden scenario's SARIF and one made here; a SARIF result
    without its message is refused (the validation can fail)."""
    from pathlib import Path

    import jsonschema

    here = Path(__file__).parent
    schema = json.loads((here / "data" / "sarif-schema-2.1.0.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    golden = json.loads((here.parent / "scenarios" / "lint-manifests" / "expected.sarif").read_text())
    r = run("-f", "-", "-o", "sarif", stdin=CLASS.format(expr="device.driver =="))
    for doc in (golden, json.loads(r.stdout)):
        errors = sorted(validator.iter_errors(doc), key=str)
        assert not errors, errors[:3]
    assert len(golden["runs"][0]["results"]) >= 20
    broken = json.loads(r.stdout)
    del broken["runs"][0]["results"][0]["message"]
    assert list(validator.iter_errors(broken))
