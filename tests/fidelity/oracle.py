"""Build (or reuse) and drive the upstream oracle binaries (tests/oracle/)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any, Iterable, Iterator

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "tests" / "oracle" / "build.sh"


def cache_dir() -> Path:
    return Path(os.environ.get("KUBECTL_DRA_CACHE") or Path.home() / ".cache" / "kubectl-dra")


def oracle_path(version: str) -> Path:
    """Path of the oracle for `version`, built first when missing (tests/oracle/build.sh)."""
    out = subprocess.run(["bash", str(BUILD), version], check=True, stdout=subprocess.PIPE, text=True)
    return Path(out.stdout.strip().splitlines()[-1])


class Oracle:
    """One long-lived oracle process: JSON lines in, JSON lines out, in order."""

    def __init__(self, version: str):
        self.version = version
        self.path = oracle_path(version)
        self.proc = subprocess.Popen(
            [str(self.path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )

    def evaluate(self, scenario: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(scenario, separators=(",", ":")) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"oracle {self.version} exited (rc={self.proc.poll()})")
        return json.loads(line)

    def stream(self, scenarios: Iterable[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
        """Pipeline: a writer thread feeds scenarios while results are read (and processed by the
        caller) as they come; yields (scenario, oracle output) pairs in order."""
        assert self.proc.stdin and self.proc.stdout
        pending: list[dict[str, Any]] = []
        lock = threading.Condition()
        done = [False]

        def writer():
            try:
                for s in scenarios:
                    with lock:
                        pending.append(s)
                        lock.notify()
                    self.proc.stdin.write(json.dumps(s, separators=(",", ":")) + "\n")
                    self.proc.stdin.flush()
            finally:
                with lock:
                    done[0] = True
                    lock.notify()

        t = threading.Thread(target=writer, daemon=True)
        t.start()
        while True:
            with lock:
                while not pending and not done[0]:
                    lock.wait()
                if not pending and done[0]:
                    break
                s = pending.pop(0)
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"oracle {self.version} exited (rc={self.proc.poll()})")
            yield s, json.loads(line)
        t.join()

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin
            self.proc.stdin.close()
            self.proc.wait(timeout=60)

    def __enter__(self) -> "Oracle":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
