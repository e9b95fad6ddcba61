"""promtool, pinned: Debian bookworm's `prometheus` package at PROMETHEUS_DEB, fetched with `apt-get download` (no
root, nothing installed) and unpacked into the cache; only its usr/bin/promtool is used. A promtool already on PATH
is used as it is. Building promtool from the Go module proxy instead took over 25 minutes on the 2-core CI machine.

    python tests/promtool.py        prints the binary's path (fetching it first if need be)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

PROMETHEUS_DEB = "2.42.0+ds-5+deb12u1"


def cached() -> Path:
    cache = Path(os.environ.get("KUBECTL_DRA_CACHE") or Path.home() / ".cache" / "kubectl-dra")
    return cache / "tools" / f"prometheus-{PROMETHEUS_DEB}" / "usr" / "bin" / "promtool"


def ensure_promtool() -> str:
    """The promtool binary. Raises RuntimeError naming what failed: a pinned package the mirror no longer serves
    is a pin to move, not a reason to skip."""
    found = shutil.which("promtool")
    if found:
        return found
    binary = cached()
    if binary.is_file():
        return str(binary)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    with tempfile.TemporaryDirectory(prefix="kubectl-dra-promtool-") as tmp:
        os.chmod(tmp, 0o755)  # apt's sandbox user reads the directory it downloads into
        get = ["apt-get", "download", f"prometheus={PROMETHEUS_DEB}"]
        done = subprocess.run(get, cwd=tmp, env=env, capture_output=True, text=True)
        if done.returncode != 0:  # a fresh machine has no package lists yet
            sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
            subprocess.run([*sudo, "apt-get", "update"], env=env, capture_output=True, check=False)
            done = subprocess.run(get, cwd=tmp, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"apt-get download prometheus={PROMETHEUS_DEB} failed: {done.stderr.strip()[-500:]}")
        deb = next(Path(tmp).glob("prometheus_*.deb"))
        unpacked = Path(tmp) / "x"
        subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], check=True, capture_output=True)
        binary.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(unpacked / "usr" / "bin" / "promtool", binary.with_suffix(".part"))
        os.replace(binary.with_suffix(".part"), binary)
    return str(binary)


if __name__ == "__main__":
    print(ensure_promtool())
