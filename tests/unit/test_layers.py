"""The one-way layers, enforced: cli -> gather -> model (the snapshot) -> analyze -> findings -> render. Analysis,
the model and findings import no click, rich or kubernetes; only gather does I/O; analysis never imports gather;
renderers never import analysis."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "kubectl_dra"

FORBIDDEN = {
    "analyze": {
        "click",
        "rich",
        "kubernetes",
        "kubectl_dra.cli",
        "kubectl_dra.render",
        "kubectl_dra.gather",
        "urllib",
        "requests",
        "subprocess",
        "socket",
    },
    "model": {
        "click",
        "rich",
        "kubernetes",
        "kubectl_dra.cli",
        "kubectl_dra.render",
        "kubectl_dra.gather",
        "kubectl_dra.analyze",
        "urllib",
        "requests",
        "subprocess",
        "socket",
        "pathlib",
    },
    "findings": {"click", "rich", "kubernetes", "kubectl_dra.cli", "kubectl_dra.analyze", "kubectl_dra.gather"},
    "render": {"kubernetes", "kubectl_dra.analyze", "kubectl_dra.gather", "kubectl_dra.cli"},
    "gather": {"click", "rich", "kubectl_dra.analyze", "kubectl_dra.render", "kubectl_dra.cli"},
    "cel": {"click", "rich", "kubernetes", "kubectl_dra.cli", "kubectl_dra.analyze", "kubectl_dra.gather"},
}


def imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
    return out


def test_layers():
    bad = []
    for layer, forbidden in FORBIDDEN.items():
        for f in (PKG / layer).rglob("*.py"):
            for mod in imports(f):
                if any(mod == x or mod.startswith(x + ".") for x in forbidden):
                    bad.append(f"{f.relative_to(PKG)} imports {mod}")
    assert not bad, bad


def test_analysis_does_no_file_io():
    for f in (PKG / "analyze").rglob("*.py"):
        text = f.read_text()
        assert "open(" not in text and ".read_text(" not in text, f
