"""Text fits the terminal: long lines wrap under their column (or are cut with an ellipsis), -o wide never cuts."""

from __future__ import annotations

import io
from pathlib import Path

from kubectl_dra.analyze.reports.explain import explain_pod
from kubectl_dra.features import Semantics
from kubectl_dra.gather.files import load_files
from kubectl_dra.render import render
from kubectl_dra.render.options import RenderOptions

ROOT = Path(__file__).resolve().parents[2]
DUMP = ROOT / "examples" / "tutorial" / "step4-driver-missing.yaml"
POD = "recomendador-7d9c8b6f5-x2x4k"


def report():
    return explain_pod(load_files([str(DUMP)], "default"), Semantics.for_version((1, 37)), "default", POD)


def words(text: str) -> list[str]:
    return text.replace("…", " ").split()


def test_text_fits_the_width_and_keeps_every_word():
    for width in (60, 80, 120):
        out = io.StringIO()
        render(report(), RenderOptions("text", width=width), out)
        lines = out.getvalue().splitlines()
        assert max(len(x) for x in lines) <= width, [x for x in lines if len(x) > width]
        full = io.StringIO()
        render(report(), RenderOptions("wide", width=width), full)
        # Wrapping moves words to the next line; nothing that wraps is lost.
        assert "registered" in out.getvalue() and words(full.getvalue())[-1] in out.getvalue()
        assert max(len(x) for x in full.getvalue().splitlines()) > width  # wide never wraps


def test_wide_ignores_the_width_and_adds_the_details():
    a, b, plain = io.StringIO(), io.StringIO(), io.StringIO()
    render(report(), RenderOptions("wide"), a)
    render(report(), RenderOptions("wide", width=40), b)
    render(report(), RenderOptions("text"), plain)
    assert a.getvalue() == b.getvalue()
    # the allocator channel and the assumed-version finding (DRA003) are details for -o wide
    assert "allocator: " in a.getvalue() and "allocator" not in plain.getvalue()
    assert "DRA003" in a.getvalue() and "DRA003" not in plain.getvalue()
