"""`kubectl dra ARGS` in the test's own process: the console script's _main minus the process exit, with stdout and
stderr captured, NO_COLOR set and no KUBECONFIG. A subprocess proves the entry point, which tests/cli does for each
command and tests/install for every golden scenario on the frozen build; everything else runs here, which saves an
interpreter start and the imports per call."""

from __future__ import annotations

import gc
import io
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass

import pytest

from kubectl_dra.cli import _main


@dataclass(frozen=True)
class Result:
    """What a run printed and its exit code, named as subprocess.CompletedProcess names them."""

    args: list
    returncode: int
    stdout: str
    stderr: str

    # the short names tests/cli/test_user_paths.py reads
    code = property(lambda self: self.returncode)
    out = property(lambda self: self.stdout)
    err = property(lambda self: self.stderr)

    def __repr__(self):
        return f"exit {self.returncode}\n--- stdout\n{self.stdout[:1500]}\n--- stderr\n{self.stderr[:800]}"


def run(args, stdin: bytes | None = None) -> Result:
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NO_COLOR", "1")
        mp.delenv("KUBECONFIG", raising=False)
        mp.delenv("FORCE_COLOR", raising=False)
        if stdin is not None:
            mp.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
        try:
            with redirect_stdout(out), redirect_stderr(err):
                _main(list(args))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        finally:
            gc.enable()  # _main turns the cyclic collector off for its short-lived process
    return Result(list(args), code, out.getvalue(), err.getvalue())
