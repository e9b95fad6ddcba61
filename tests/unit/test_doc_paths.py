"""Every repository file, folder or module that README.md, CONTRIBUTING.md and docs/*.md name (in `backticks` or as a
link) exists: a doc that names a file moved or renamed sends a reader nowhere (issue 44, item 9). Checked: links to
a relative target; code spans that are a path whose first part is a top-level entry of the repository (docs/,
tests/, scripts/ ...) or a subpackage of kubectl_dra (CONTRIBUTING.md's `analyze/queue/order.py`), also as a word
of a command line in a span; dotted modules `kubectl_dra.x.y` (and `module:attribute`). Bare file names are
left alone: they are named relative to what the text is about (`bench.py`, `input.yaml`). Skipped: URLs, anchors, globs and placeholders (`*`, `<name>`, `NAME`,
`$VAR`, `~`), `deploy/NAME` without an extension (kubectl's short name of deployment/NAME; the deploy/ folder's
files have one), and what a build writes (dist/, .venv/, .cache/)."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "kubectl_dra"
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
BUILT = {"dist", ".venv", ".cache", "build"}  # written by make, not in the repository
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_SPAN = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_PATH = re.compile(r"[A-Za-z0-9_.\-/:]+")
_PLACEHOLDER = re.compile(r"[*?{}<>\[\]$~]|(^|/)[A-Z][A-Z_]+(/|\.|$)")


def _roots() -> tuple[set[str], set[str]]:
    top = {p.name for p in ROOT.iterdir() if not p.name.startswith(".") or p.name in (".github",)}
    sub = {p.name for p in PACKAGE.iterdir() if p.is_dir() and not p.name.startswith("_")} | {
        p.name for p in PACKAGE.glob("*.py")
    }
    return top - BUILT, sub


def named(doc: Path) -> list[tuple[str, Path | None]]:
    """(what the doc says, the file it means; None for a module to import) for every reference checked."""
    top, sub = _roots()
    text = _FENCE.sub("", doc.read_text())
    out: list[tuple[str, Path | None]] = []
    for target in _LINK.findall(text):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        out.append((target, (doc.parent / target.split("#")[0]).resolve()))
    # a span is a path, or a command line whose words may be (`python scripts/release/build.py binary`)
    for span in (word for span in _SPAN.findall(text) for word in span.split()):
        if not _PATH.fullmatch(span) or _PLACEHOLDER.search(span) or span.startswith(("/", "./", "../")):
            continue
        if span.startswith("kubectl_dra.") and "/" not in span:
            out.append((span, None))
            continue
        first, sep, rest = span.partition("/")
        if not sep or (first == "deploy" and rest and "." not in rest):  # kubectl's deploy/NAME, not the folder
            continue
        if first in top:
            out.append((span, ROOT / span))
        elif first in sub:
            out.append((span, PACKAGE / span))
    return out


def _module_exists(name: str) -> bool:
    module, _, attr = name.partition(":")
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError:
        return False
    if spec is None:
        return False
    if attr:
        return hasattr(importlib.import_module(module), attr)
    return True


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_file_a_doc_names_exists(doc):
    missing = [what for what, path in named(doc) if not (_module_exists(what) if path is None else path.exists())]
    assert not missing, f"{doc.relative_to(ROOT)} names what the repository does not have: {missing}"


def test_the_check_sees_paths_and_skips_the_rest(tmp_path):
    doc = tmp_path / "x.md"
    doc.write_text(
        "`kubectl_dra/model/scope.py` `analyze/queue/order.py` [rbac](docs/rbac.md) `kubectl_dra.cli:main`\n"
        "`resource.k8s.io/v1` `apps/v1` `tests/scenarios/<name>/` `kubectl_dra/cli/*.py` `dist/dra.yaml` "
        "`$KREW_ROOT/bin` `~/.cache/kubectl-dra` [up](https://example.com/a.md) [here](#pip) `/api/v1/pods`\n"
        "`python scripts/gen_docs.py --check` `cli/watch.py`\n```sh\ncat docs/nothing.md\n```\n"
    )
    got = [what for what, _ in named(doc)]
    assert got == ["docs/rbac.md", "kubectl_dra/model/scope.py", "analyze/queue/order.py", "kubectl_dra.cli:main",
                   "scripts/gen_docs.py", "cli/watch.py"]  # fmt: skip


def test_the_package_cites_upstream_or_the_docs_never_an_issue_number():
    """A reader of the repository cannot resolve "issue 29": the code cites upstream code or docs/ instead."""
    cited = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in sorted(PACKAGE.rglob("*.py"))
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\bissues? \d+", line)
    ]
    assert not cited, cited


def test_every_python_file_the_package_names_exists():
    """A docstring or comment that names a module (`queue.py`, `analyze/pod/driver.py`) names one in the tree: a moved
    module leaves no pointer to nowhere."""
    files = [p for p in ROOT.rglob("*.py") if not BUILT & set(p.relative_to(ROOT).parts)]
    names = {p.name for p in files}
    rel = {p.relative_to(ROOT).as_posix() for p in files} | {
        p.relative_to(PACKAGE).as_posix() for p in files if PACKAGE in p.parents
    }
    bad = []
    for p in sorted(PACKAGE.rglob("*.py")):
        for i, line in enumerate(p.read_text().splitlines(), 1):
            for m in re.finditer(r"(?<![\w./-])([\w./-]+\.py)\b", line):
                t = m.group(1)
                ok = any(x == t or x.endswith("/" + t) for x in rel) if "/" in t else t in names
                if not ok:
                    bad.append(f"{p.relative_to(ROOT)}:{i}: {t}")
    assert not bad, bad
