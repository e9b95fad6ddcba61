"""pre-commit: the repository's hook (.pre-commit-hooks.yaml) run by the real pre-commit (pinned in
requirements/dist.lock) in a scratch git repository, as a user's .pre-commit-config.yaml names it: pre-commit clones
this repository at its HEAD, installs it into its own virtualenv from the package index (pip's cache shared with the
user's), and runs `kubectl-dra lint` on the staged YAML files. A staged manifest with a selector that does not compile
fails the commit and names the finding; a clean one and a file that is not a Kubernetes object pass."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from install_helpers import minimal_env, run

pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "scenarios" / "lint-manifests" / "input.yaml"


def _git(*args: str, cwd: Path, env: dict) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


def test_the_hook_fails_a_commit_with_a_broken_selector_and_passes_a_clean_one(tools, tmp_path):
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    home = tmp_path / "home"
    home.mkdir()
    env = minimal_env(
        home,
        [Path(tools["pre-commit"]).parent, Path("/usr/bin"), Path("/bin")],
        PRE_COMMIT_HOME=str(tmp_path / "pre-commit-cache"),
        PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")),
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    repo = tmp_path / "manifests"
    repo.mkdir()
    _git("init", "-q", cwd=repo, env=env)
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {ROOT}\n    rev: {head.strip()}\n    hooks:\n      - id: kubectl-dra-lint\n"
    )
    (repo / "claim.yaml").write_text(BAD.read_text())
    (repo / "values.yaml").write_text("replicas: 3\nimage: registry.example/app:1\n")
    _git("add", ".", cwd=repo, env=env)
    bad = run([tools["pre-commit"], "run", "--files", "claim.yaml", "values.yaml"], env, cwd=repo, timeout=900)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "kubectl dra lint" in bad.stdout and "Failed" in bad.stdout, bad.stdout
    assert "claim.yaml:32:58: DRA701 error" in bad.stdout, bad.stdout
    (repo / "claim.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n")
    _git("add", ".", cwd=repo, env=env)
    ok = run([tools["pre-commit"], "run", "--files", "claim.yaml", "values.yaml"], env, cwd=repo, timeout=300)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Passed" in ok.stdout, ok.stdout
