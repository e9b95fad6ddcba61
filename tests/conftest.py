"""Shared pytest configuration."""

import signal

# A run started as a background job (`make test &`, nohup, a CI step that backgrounds it) inherits SIGINT ignored,
# and an ignored signal stays ignored across exec: the tests that stop a `-w` or a blocked request with Ctrl-C
# (SIGINT) would wait for a process that never sees it. Handled here, it is back to the default in every child.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_addoption(parser):
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="Rewrite the expected outputs of tests/scenarios/* from the current command line",
    )
