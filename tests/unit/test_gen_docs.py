"""scripts/gen_docs.py's README blocks: `make docs` rewrites the sample output between README.md's markers from
the real command line, and `make docs-check` fails when a block differs, is missing or is unknown."""

from __future__ import annotations

import gc
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    yield mod
    gc.enable()  # the CLI run in-process turns the cyclic collector off, as its short-lived process does


def _readme():
    return (ROOT / "README.md").read_text()


def test_every_sample_has_a_block_and_is_current(gen_docs):
    text = _readme()
    for name in gen_docs.README_SAMPLES:
        assert f"<!-- BEGIN generated: {name} " in text and f"<!-- END generated: {name} -->" in text
    assert gen_docs.readme(text) == text, "README.md's sample output is stale: run `make docs`"


def test_a_stale_block_is_rewritten(gen_docs):
    text = _readme()
    stale = text.replace("$ echo $?\n1\n", "$ echo $?\n0\n", 1)
    assert stale != text
    assert gen_docs.readme(stale) == text


def test_the_sample_is_an_80_column_terminal(gen_docs):
    out, code = gen_docs.run_terminal(gen_docs.README_SAMPLES["explain"])
    assert code == 1
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "\x1b[" not in out


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.replace("<!-- END generated: explain -->", ""),
        lambda t: t.replace("generated: explain", "generated: explained"),
    ],
    ids=["missing", "unknown"],
)
def test_a_lost_or_unknown_block_fails(gen_docs, edit):
    with pytest.raises(SystemExit):
        gen_docs.readme(edit(_readme()))
