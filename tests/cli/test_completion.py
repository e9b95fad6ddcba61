"""The lines `kubectl dra completion --help` (and docs/install.md) give, run as given: `kubectl dra <TAB>` through
kubectl's plugin completion (kubectl >= 1.26 asks kubectl_complete-dra on PATH) for a pipx/pip install from the
clone and for a krew install, and `kubectl-dra <TAB>` in bash (issue 44, item 9: the help suggested only the
latter, which leaves `kubectl dra <TAB>` doing nothing). kubectl-dra itself is a shim running this checkout;
tests/install does the same with the real installs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KUBECTL = shutil.which("kubectl")


def _help_lines() -> dict[str, str]:
    """The example lines of `completion --help`, by the comment above each."""
    env = dict(os.environ, COLUMNS="200")
    out = subprocess.run([sys.executable, "-m", "kubectl_dra", "completion", "--help"], capture_output=True,
                         text=True, env=env, check=True).stdout  # fmt: skip
    lines = [ln.strip() for ln in out.split("Examples:")[1].split("Options:")[0].strip().splitlines()]
    return {c.lstrip("# "): cmd for c, cmd in zip(lines[::2], lines[1::2])}


def _shim(bindir: Path) -> None:
    """kubectl-dra on PATH, as pipx puts it there: this checkout's CLI."""
    exe = bindir / "kubectl-dra"
    exe.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m kubectl_dra "$@"\n')
    exe.chmod(0o755)


def _run_help_line(line: str, bindir: Path, env: dict) -> None:
    """The help's line as a user runs it (in the clone), with ~/.local/bin being bindir."""
    subprocess.run(["bash", "-c", line.replace("~/.local/bin", str(bindir))], cwd=ROOT, env=env, check=True)


def _kubectl_complete(env: dict, *words: str) -> list[str]:
    r = subprocess.run([KUBECTL, "__complete", "dra", *words], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r
    return r.stdout.splitlines()


def _kubectl_version() -> tuple[int, int]:
    out = subprocess.run([KUBECTL, "version", "--client"], capture_output=True, text=True).stdout
    m = re.search(r"v1\.(\d+)", out)
    return (1, int(m.group(1))) if m else (0, 0)


needs_kubectl = pytest.mark.skipif(
    KUBECTL is None or _kubectl_version() < (1, 26), reason="kubectl >= 1.26 completes plugins' arguments"
)


@needs_kubectl
def test_the_pipx_line_makes_kubectl_dra_tab_complete(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    _shim(bindir)
    env = dict(os.environ, PATH=f"{bindir}:{os.path.dirname(KUBECTL)}:/usr/bin:/bin", HOME=str(tmp_path))
    env.pop("KUBECONFIG", None)
    assert "status" not in "\n".join(_kubectl_complete(env, ""))  # without the bridge kubectl completes nothing
    _run_help_line(_help_lines()["kubectl dra <TAB>, installed from the clone with pipx or pip (run in the clone)"],
                   bindir, env)  # fmt: skip
    got = _kubectl_complete(env, "")
    assert {"status", "explain", "devices", "match", "completion"} <= set(got) and got[-1] == ":4", got
    assert _kubectl_complete(env, "explain", "")[-1] == ":4"
    assert _kubectl_complete(env, "status", "--from-file", "")[-1] == ":0"  # file names: the shell's


@needs_kubectl
def test_the_krew_line_links_the_bridge_krew_unpacked(tmp_path):
    store, krew_bin, bindir = tmp_path / "store" / "dra" / "v0.1.0", tmp_path / "krew" / "bin", tmp_path / "bin"
    for d in (store, krew_bin, bindir):
        d.mkdir(parents=True)
    _shim(store)
    shutil.copy(ROOT / "packaging" / "kubectl_complete-dra", store / "kubectl_complete-dra")
    (krew_bin / "kubectl-dra").symlink_to(store / "kubectl-dra")
    env = dict(os.environ, PATH=f"{bindir}:{krew_bin}:{os.path.dirname(KUBECTL)}:/usr/bin:/bin", HOME=str(tmp_path))
    env.pop("KUBECONFIG", None)
    _run_help_line(_help_lines()["kubectl dra <TAB>, installed with krew"], bindir, env)
    assert (bindir / "kubectl_complete-dra").resolve() == store / "kubectl_complete-dra"
    assert sorted(_kubectl_complete(env, "explain", "")) == [":4", "claim", "pod"]


def test_the_bash_line_completes_kubectl_dra_itself(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    _shim(bindir)
    env = dict(os.environ, PATH=f"{bindir}:/usr/bin:/bin")
    line = _help_lines()["kubectl-dra <TAB> in bash, in this shell"]
    script = (
        f"{line}\n"
        'COMP_WORDS=(kubectl-dra ex); COMP_CWORD=1; _kubectl_dra_completion kubectl-dra; echo "1:${COMPREPLY[*]}"\n'
    )
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0 and "1:explain" in r.stdout.splitlines(), r
