"""The device map at a terminal (`devices -o map`, `explain pod NAME --map`): a row per node or group of nodes, a
cell per device, each state a glyph AND a colour (NO_COLOR, a dumb terminal: ASCII glyphs alone, the state never
told by colour alone), counts per row, a legend of the states drawn. Fits 80 columns: a row's cells wrap under
themselves. The cells' states come from the analysis (analyze/reports/devmap.py, the explain report's stages):
nothing is judged here."""

from __future__ import annotations

from kubectl_dra.render.escape import esc
from kubectl_dra.render.terminal import Out

# state -> (glyph, ASCII glyph, style, words): the device states of analyze/reports/devmap.py
DEVICE_LEGEND = {
    "allocated": ("●", "#", "bold", "allocated"),
    "binding": ("◔", "b", "magenta", "allocated, waiting for binding conditions"),
    "shared": ("◑", "s", "blue", "shared, partly consumed"),
    "reserved": ("◐", "r", "cyan", "a pending pod would take it (estimated)"),
    "exhausted": ("◌", "x", "yellow", "its shared counters are used up"),
    "tainted": ("▲", "T", "yellow", "tainted NoSchedule/NoExecute"),
    "unhealthy": ("✗", "!", "bold red", "unhealthy"),
    "unusable": ("∅", "-", "red", "unusable (pool incomplete, ignored)"),
    "free": ("○", ".", "green", "free"),
}

# state -> (glyph, ASCII glyph, style, words): explain pod --map, each device's first failed check for the pod
# (findings/stages.py: the words are the text report's labels of the stages)
POD_LEGEND = {
    "selected": ("◉", "@", "bold cyan reverse", "the dry-run's pick"),
    "candidate": ("○", ".", "green", "candidate"),
    "capacity": ("◍", "c", "yellow", "not enough capacity"),
    "counters": ("◌", "x", "yellow", "shared counters exhausted"),
    "taint": ("▲", "T", "yellow", "untolerated taint"),
    "feature": ("⊘", "f", "red", "feature disabled"),
    "ahead": ("◐", "r", "cyan", "goes to a pod ahead in the queue (estimated)"),
    "in-use": ("●", "#", "bold", "already allocated"),
    "node": ("×", "n", "magenta", "not on a node the pod can use"),
    "cel-error": ("‼", "E", "bold red", "a selector errs"),
    "request": ("◇", "q", "blue", "fails the request's selector"),
    "class": ("□", "k", "blue", "fails the class's selector"),
    "binding": ("◔", "b", "red", "binding conditions unsupported"),
    "pool": ("∅", "-", "red", "pool unusable"),
}

WIDTH = 80  # to a pipe or a file: the map is drawn for 80 columns
_LABEL = 24  # the NODE column (a longer name is cut with "…": the JSON and the HTML report have it whole)


def glyph(legend: dict, state: str, ascii_marks: bool) -> tuple[str, str | None]:
    g, a, style, _ = legend.get(state) or ("?", "?", None, state)
    return (a if ascii_marks else g), style


def render_map(
    dmap, out: Out, legend: dict = DEVICE_LEGEND, title: str | None = None, usable=("free",), column: str = "FREE"
) -> None:
    """dmap: a DeviceMap (analyze/reports/devmap.py), its cells' states keys of legend; the column counts the cells
    of each row in the states usable."""
    width = out.width or WIDTH
    if title:
        out.line(title, wrap=2)
    if not dmap.rows:
        out.line("No devices to draw.")
        return
    many = any(len(r.nodes) > 1 for r in dmap.rows)
    head = f"{'NODE':<{_LABEL}} " + (f"{'NODES':>5} " if many else "") + f"{'DEV':>4} {column:>4}  "
    room = max(8, width - len(head))
    out.line(head + "MAP")
    used: set[str] = set()
    for r in dmap.rows:
        name = _label(r.nodes, out.ascii)
        free = sum(1 for c in r.cells if c.state in usable)
        lead = f"{name:<{_LABEL}} " + (f"{len(r.nodes):>5} " if many else "") + f"{len(r.cells):>4} {free:>4}  "
        parts = []
        for c in r.cells:
            used.add(c.state)
            g, style = glyph(legend, c.state, out.ascii)
            parts.append((g, style))
        lines = [parts[i : i + room] for i in range(0, len(parts), room)] or [[]]
        ctrs = [esc(c) for c in r.counters]
        if len(lines) == 1 and ctrs and len(parts) + 2 + len(ctrs[0]) <= room:
            lines[0] = lines[0] + [f"  {ctrs.pop(0)}"]  # the counters beside the cells when they fit
        for i, chunk in enumerate(lines):
            out.line(lead if i == 0 else " " * len(head), *chunk, cut=False)
        for ctr in ctrs:
            out.line(" " * len(head), ctr, wrap=len(head))
    out.blank()
    _legend(out, legend, used, width)


def _label(nodes: tuple, ascii_marks: bool) -> str:
    """A node's name, or a group's first and last ("node-0001…node-0120", the NODES column counts them), cut to the
    column with "…" (ASCII: "..")."""
    dots = ".." if ascii_marks else "…"
    name = esc(nodes[0]) if len(nodes) == 1 else f"{esc(nodes[0])}{dots}{esc(nodes[-1])}"
    if len(name) > _LABEL and len(nodes) > 1:
        name = f"{esc(nodes[0])}{dots}"
    return name if len(name) <= _LABEL else name[: _LABEL - len(dots)] + dots


def _legend(out: Out, legend: dict, used: set, width: int) -> None:
    """The states drawn (free and allocated always), as many to a line as fit."""
    entries = []
    for state, (g, a, style, words) in legend.items():
        if state in used or state in ("free", "allocated"):
            entries.append(((a if out.ascii else g), style, words))
    line: list = []
    size = 0
    for g, style, words in entries:
        piece = len(g) + 1 + len(words) + 3
        if line and size + piece > width:
            out.line(*line, cut=False)
            line, size = [], 0
        line += (["   "] if line else []) + [(g, style), f" {words}"]
        size += piece
    if line:
        out.line(*line, cut=False)
