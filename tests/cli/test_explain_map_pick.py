"""explain pod NAME --map: the line under the map names the dry-run's pick, or says why there is none."""

from __future__ import annotations

from pathlib import Path

from clirun import run

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def test_a_pod_that_fits_in_every_order_on_devices_no_order_fixes_has_no_fixed_pick():
    """queue-choice-certain's pair fits in every order of anywhere, ahead of it, on node-01's GPUs, but which ones
    depends on anywhere's node: the map marks no pick, and the line says why instead of "the dry-run allocates no
    device" (it does, in each order)."""
    r = run(["explain", "pod", "pair", "-n", "ml-team", "--map", "--kubernetes-version", "1.37",
             "--from-file", str(SCENARIOS / "queue-choice-certain" / "input.yaml")])  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "No fixed pick: the pod gets devices, but which, and on which node, is open: fits in every order" in r.stdout
    assert "No pick: the dry-run allocates no device" not in r.stdout and "The dry-run's pick:" not in r.stdout


def test_a_pod_with_a_fixed_pick_names_it():
    r = run(["explain", "pod", "trainer-1", "-n", "gpu-lab", "--map", "--kubernetes-version", "1.37",
             "--from-file", str(SCENARIOS / "explain-pod-map" / "input.yaml")])  # fmt: skip
    assert "The dry-run's pick: gpu.example.com/node-06/gpu-0 on node-06" in r.stdout, r.stdout
