"""The one-way layers, enforced: cli -> gather -> model (the snapshot) -> analyze -> findings -> render. Analysis,
the model and findings import no click, rich or kubernetes; only gather does I/O; analysis never imports gather;
renderers never import analysis.

Inside analyze/, one way too: reports -> queue (and lint, the oracle contract) -> pod -> devices -> allocator. A
package imports from its own tier and the ones below it, never from one above (a lazy import inside a function
counts: the queue once imported the status and explain reports that import it)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

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


# analyze/'s tiers, lowest first: what each first-level name under kubectl_dra.analyze belongs to.
ANALYZE_TIERS = (
    {"allocator"},  # the upstream allocator's port
    {"devices"},  # every published device, and why not (explain's per-device checks, the universe, pool status)
    {"pod"},  # findings about one pod: its claims, the dry-run, the verdicts, the pod-level paths
    # the queue (explain and status run it, and hand it explain_pod to judge the other pending pods with: it never
    # imports a report, even lazily); lint; the contract the fidelity suite calls
    {"queue", "lint", "scenario"},
    {"reports"},  # one module per command
)


def _tier(module: str) -> int | None:
    """The tier of a kubectl_dra.analyze module (None: the package itself, or not analysis)."""
    parts = module.split(".")
    if parts[:2] != ["kubectl_dra", "analyze"] or len(parts) < 3:
        return None
    return next((i for i, names in enumerate(ANALYZE_TIERS) if parts[2] in names), -1)


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


def _module(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


@pytest.mark.parametrize("package", ["gather", "cli", "analyze"])
def test_no_import_circle(package):
    """Lazy imports inside functions count: a circle they hide is still a circle (gather/live.py once asked
    gather/watch.py for LiveSession while watch.py asked live.py for the snapshot; cli/watch.py and cli/status.py
    once needed each other)."""
    graph = {}
    for f in (PKG / package).rglob("*.py"):
        me = _module(f)  # (a package's `from itself import submodule` is no circle)
        graph[me] = {m for m in imports(f) if m.startswith(f"kubectl_dra.{package}.") and m != me}
    seen: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(m, path):
        seen[m] = 1
        for n in sorted(graph.get(m, ())):
            if seen.get(n) == 1:
                raise AssertionError(" -> ".join([*path, m, n]))
            if n not in seen:
                visit(n, [*path, m])
        seen[m] = 2

    for m in sorted(graph):
        if m not in seen:
            visit(m, [])


def test_analyze_tiers():
    bad = []
    for f in (PKG / "analyze").rglob("*.py"):
        me = _tier(_module(f))
        if me is None:
            continue  # analyze/__init__.py: preload imports the analysis it warms
        assert me >= 0, f"{f.relative_to(PKG)}: not in ANALYZE_TIERS"
        for mod in imports(f):
            them = _tier(mod)
            if them is not None and them > me:
                bad.append(f"{f.relative_to(PKG)} (tier {me}) imports {mod} (tier {them})")
    assert not bad, bad


def test_every_analyze_package_has_a_tier():
    names = {p.stem if p.is_file() else p.name for p in (PKG / "analyze").iterdir() if p.name != "__pycache__"}
    names -= {"__init__"}
    assert names == set().union(*ANALYZE_TIERS)


def test_long_functions_say_why():
    """No function over 80 lines without a reason beside it: a `# long: ...` comment on the line above (issue 31)."""
    bad = []
    for f in PKG.rglob("*.py"):
        lines = f.read_text().splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 80:
                first = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
                if not (first > 0 and lines[first - 1].strip().startswith("# long: ")):
                    bad.append(
                        f"{f.relative_to(PKG)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
                    )
    assert not bad, bad
