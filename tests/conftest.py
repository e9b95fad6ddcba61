"""Shared pytest configuration."""


def pytest_addoption(parser):
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="Rewrite the expected outputs of tests/scenarios/* from the current command line",
    )
