"""The scan (`kubectl dra status`) as kubectl get prints a list: one line per pod, the reason last and wrapped to
the terminal (-o wide: whole, with the node and the finding codes); JSON/YAML from ScanReport.to_dict."""

from __future__ import annotations

from kubectl_dra.render.escape import esc
from kubectl_dra.render.table import fit_table
from kubectl_dra.render.terminal import _Out

_STATE_STYLE = {"Blocked": "bold red", "Unknown": "bold yellow", "OK": "green"}
REASON_LINES = 5  # at a width, a reason wraps onto at most this many lines (explain and -o wide show it whole)


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
    out = _Out(stream, color, None if wide else width)
    state_col = headers.index("STATE")
    styles = [[_STATE_STYLE.get(r.state) if i == state_col else None for i in range(len(headers))] for r in report.rows]
    # At a narrow terminal OWNER, then PHASE, then AGE make room; the pod, its state, what is missing and the
    # reason (wrapped under its column or below the row) always stay.
    fit_table(
        out,
        headers,
        rows,
        styles=styles,
        droppable=("OWNER", "PHASE", "AGE"),
        max_lines=REASON_LINES,
        header=header,
        min_room=50,  # a reason squeezed into fewer columns reads worse than one on the lines below its pod
    )
