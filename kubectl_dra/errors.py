"""Exit codes and the one error type the command line turns into `error: ...` + exit 2."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0  # nothing blocks: allocated, or allocatable now
    BLOCKED = 1  # blocked / not satisfiable
    ERROR = 2  # the tool could not do its job
    INTERRUPTED = 130  # Ctrl-C
    # stdout's reader went away (`| head`): the process ends killed by SIGPIPE, as kubectl does (a shell says 141);
    # in-process (tests) the code itself
    READER_GONE = 141


class DraError(Exception):
    """The tool could not do its job (bad input, object not found, API or auth failure): exit 2."""

    exit_code = ExitCode.ERROR

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message
