"""Helpers of the install tests: real builds, real installs, real runs.

Nothing here is mocked. The session builds (or takes from the cache under
${KUBECTL_DRA_CACHE:-$HOME/.cache/kubectl-dra}) the toolchain venv of requirements/dist.lock,
krew and validate-krew-manifest from the Go module proxy, the wheel/sdist and the PyInstaller
archive of the current work tree, all through scripts/release/build.py, the same script
`make dist` runs. Installed programs are then run with a minimal environment (env -i style):
PATH holds only the install's bin directories, a directory with kubectl/kubectl-krew, and
/usr/bin:/bin; no virtualenv, no PYTHONPATH, HOME is a temporary directory and KUBECONFIG
points at a file that does not exist (every command under test is offline).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "scripts" / "release" / "build.py"


def project_version() -> str:
    text = (ROOT / "kubectl_dra" / "__init__.py").read_text()
    return re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', text, re.M).group(1)


def build(*args: str, dist: Path | None = None) -> str:
    cmd = [sys.executable, str(BUILD)] + (["--dist", str(dist)] if dist else []) + list(args)
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=3000)
    if res.returncode != 0:
        raise AssertionError(f"{shlex.join(cmd)} failed ({res.returncode}):\n{res.stdout}\n{res.stderr[-8000:]}")
    return res.stdout


@dataclass(repr=False)
class Result:
    cmd: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def __repr__(self) -> str:
        return f"$ {shlex.join(self.cmd)}\nexit {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def run(cmd: list, env: dict, *, cwd: Path | None = None, timeout: int = 300) -> Result:
    cmd = [str(c) for c in cmd]
    p = subprocess.run(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    return Result(cmd, p.returncode, p.stdout, p.stderr)


def minimal_env(home: Path, path_dirs: list[Path], **extra: str) -> dict[str, str]:
    """env -i plus the few variables a user's shell has; no trace of the project venv."""
    path = os.pathsep.join([str(d) for d in path_dirs] + ["/usr/bin", "/bin"])
    env = {
        "PATH": path,
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "COLUMNS": "120",
        "TERM": "dumb",
        "KUBECONFIG": str(home / "no-such-kubeconfig"),
    }
    env.update(extra)
    return env


def demo_commands() -> list[tuple[str, Path]]:
    """(pod, example file) pairs of `make demo`: the bundled tutorial example."""
    text = (ROOT / "Makefile").read_text()
    found = re.findall(r"explain pod (\S+) --from-file (\S+\.ya?ml)", text)
    return [(pod, ROOT / f) for pod, f in found]


def reference_run(args: list[str], home: Path) -> Result:
    """The same command from the source tree, with the interpreter running the tests."""
    env = minimal_env(home, [], PYTHONPATH=str(ROOT))
    return run([sys.executable, "-m", "kubectl_dra", *args], env, cwd=ROOT)


def assert_same_behaviour(installed: Result, reference: Result) -> None:
    """An installed kubectl-dra answers exactly like the source tree (exit code and output)."""
    assert installed.returncode == reference.returncode, f"{installed}\n\nreference:\n{reference}"
    assert installed.stdout == reference.stdout, f"{installed}\n\nreference:\n{reference}"


def usage_line(res: Result) -> str:
    return next((ln for ln in res.stdout.splitlines() if ln.startswith("Usage:")), "")
