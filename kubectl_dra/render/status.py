"""The scan (`kubectl dra status`) as kubectl get prints a list: one line per pod, the reason last and wrapped to
the terminal (-o wide: whole, with the node and the finding codes); JSON/YAML from ScanReport.to_dict."""

from __future__ import annotations

from kubectl_dra.render.escape import esc
from kubectl_dra.render.table import fit_table
from kubectl_dra.render.terminal import Out

_STATE_STYLE = {"Blocked": "bold red", "Unknown": "bold yellow", "OK": "green"}
REASON_LINES = 5  # at a width, a reason wraps onto at most this many lines (explain and -o wide show it whole)


def render_scan(report, opts, stream) -> None:
    fmt, color, width, header = opts.format, opts.color, opts.width, opts.header
    if fmt in ("json", "yaml"):
        from kubectl_dra.render.structured import data_to

        stream.write(data_to(report.to_dict(), fmt))
        return
    if not report.rows:
        return
    every_ns = report.scope.get("namespace") is None
    _table([(None, report, r) for r in report.rows], fmt, stream, color, width, header, every_ns, cluster=False)


def render_fleet(answers, opts, stream) -> None:
    """Several clusters' scans (cli/fleet.py): one table with a CLUSTER column, a cluster not scanned as one Unknown
    line naming why; JSON/YAML one StatusList."""
    fmt, color, width, header = opts.format, opts.color, opts.width, opts.header
    if fmt in ("json", "yaml"):
        from kubectl_dra.render.structured import data_to

        stream.write(data_to(fleet_doc(answers), fmt))
        return
    lines = []
    for a in answers:
        if a.report is None:
            lines.append((a.context, None, a.error))
        else:
            lines.extend((a.context, a.report, r) for r in a.report.rows)
    every_ns = any(a.report is not None and a.report.scope.get("namespace") is None for a in answers)
    if lines:
        _table(lines, fmt, stream, color, width, header, every_ns, cluster=True)


def _table(lines, fmt, stream, color, width, header, every_ns: bool, cluster: bool) -> None:
    """lines: (cluster, report, row), or (cluster, None, why it was not scanned)."""
    wide = fmt == "wide"
    headers = (["CLUSTER"] if cluster else []) + (["NAMESPACE"] if every_ns else [])
    headers += ["POD", "OWNER", "PHASE", "STATE", "MISSING", "AGE"]
    if wide:
        headers += ["NODE", "CODES"]
    headers.append("REASON")
    rows, states = [], []
    for ctx, report, r in lines:
        head = [esc(ctx)] if cluster else []
        if report is None:  # a cluster not scanned: its one line
            n = len(headers) - len(head) - 1
            cells = head + ["-"] * n + [esc(f"not scanned: {r}")]
            cells[headers.index("STATE")] = "Unknown"
            rows.append(cells)
            states.append("Unknown")
            continue
        cells = (
            head
            + ([esc(r.namespace)] if every_ns else [])
            + [
                esc(r.pod),
                esc(r.owner) if r.owner else "<none>",
                esc(r.phase),
                r.state,
                r.missing or "-",
                r.age,
            ]
        )
        if wide:
            cells += [esc(r.node) if r.node else "<none>", ",".join(r.codes) or "-"]
        cells.append(esc(r.reason))
        rows.append(cells)
        states.append(r.state)
    out = Out(stream, color, None if wide else width)
    state_col = headers.index("STATE")
    styles = [[_STATE_STYLE.get(st) if i == state_col else None for i in range(len(headers))] for st in states]
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


def fleet_doc(answers) -> dict:
    """The StatusList document: per context its Status, or why it was not scanned; the counts over all."""
    from kubectl_dra.findings.model import SCHEMA_VERSION

    scanned = [a.report for a in answers if a.report is not None]
    return {
        "apiVersion": SCHEMA_VERSION,
        "kind": "StatusList",
        "summary": {
            "clusters": len(answers),
            "unreachable": sum(1 for a in answers if a.report is None),
            "pods": sum(len(r.rows) for r in scanned),
            "blocked": sum(1 for r in scanned for x in r.rows if x.state == "Blocked"),
            "unknown": sum(1 for r in scanned for x in r.rows if x.state == "Unknown"),
            "ok": sum(1 for r in scanned for x in r.rows if x.state == "OK"),
            "determined": all(a.determined for a in answers),
        },
        "items": [a.to_dict() for a in answers],
    }
