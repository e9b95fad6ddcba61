"""What a golden scenario may write on stderr, for every runner of tests/scenarios (the source tree's and the frozen
build's, tests/install): `status` in text first says its count of pods by state (as kubectl writes its notes there)
and the queue's shortfalls (`queue: ...`); then exit 2 is exactly one `error: ...` line, and any other exit nothing."""

from __future__ import annotations

import dataclasses
import re
import subprocess

SUMMARY = re.compile(r"\d+ pods? uses? DRA: \d+ blocked, \d+ undetermined, \d+ ok")


def check_stderr(args: list[str], text, js):
    """Assert the contract on the text and JSON runs of one scenario (subprocess.CompletedProcess, or tests/install's
    Result dataclass); returns the text run without the summary line."""
    if args[0] == "status" and text.stdout:
        summary, _, rest = text.stderr.partition("\n")
        assert SUMMARY.fullmatch(summary), text.stderr
        while rest.startswith("queue: "):  # the groups of identical pods of which not all get devices
            rest = rest.partition("\n")[2]
        text = (
            dataclasses.replace(text, stderr=rest)
            if dataclasses.is_dataclass(text)  # tests/install's Result
            else subprocess.CompletedProcess(text.args, text.returncode, text.stdout, rest)
        )
    if text.returncode == 2:  # undetermined: the report on stdout, one error line on stderr
        for r in (text, js):
            assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, r
    else:
        assert text.stderr == "" and js.stderr == "", f"{text}\n{js}"
    return text
