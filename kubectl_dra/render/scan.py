"""The scan (`kubectl dra status`) as kubectl get prints a list: one line per pod, the reason last and cut to the
terminal (-o wide: whole, with the node and the finding codes); JSON/YAML from ScanReport.to_dict."""

from __future__ import annotations

from kubectl_dra.render.escape import esc
from kubectl_dra.render.text import _Out

_STATE_STYLE = {"Blocked": "bold red", "Unknown": "bold yellow", "OK": "green"}


def render_scan(report, fmt: str, stream, color: bool = False, width: int | None = None, header: bool = True) -> None:
    if fmt in ("json", "yaml"):
        from kubectl_dra.render.structured import data_to

        stream.write(data_to(report.to_dict(), fmt))
        return
    if not report.rows:
        return
    wide = fmt == "wide"
    every_ns = report.scope.get("namespace") is None
    headers = (["NAMESPACE"] if every_ns else []) + ["POD", "OWNER", "PHASE", "STATE", "MISSING", "AGE"]
    if wide:
        headers += ["NODE", "CODES"]
    headers.append("REASON")
    rows = []
    for r in report.rows:
        cells = ([esc(r.namespace)] if every_ns else []) + [
            esc(r.pod),
            esc(r.owner) if r.owner else "<none>",
            esc(r.phase),
            r.state,
            r.missing or "-",
            r.age,
        ]
        if wide:
            cells += [esc(r.node) if r.node else "<none>", ",".join(r.codes) or "-"]
        cells.append(esc(r.reason))
        rows.append(cells)
    widths = [max(len(h), *(len(c[i]) for c in rows)) for i, h in enumerate(headers)]
    out = _Out(stream, color, None if wide else width)
    state_col = headers.index("STATE")
    if header:
        out.line("   ".join(h.ljust(widths[i]) for i, h in enumerate(headers)).rstrip())
    for r, cells in zip(report.rows, rows):
        parts = []
        for i, c in enumerate(cells):
            last = i == len(cells) - 1
            text = c if last else c.ljust(widths[i]) + "   "
            parts.append((text, _STATE_STYLE.get(r.state)) if i == state_col else text)
        out.line(*parts)
