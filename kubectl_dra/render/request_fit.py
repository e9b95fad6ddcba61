"""`kubectl dra devices --class C --request FILE` for people: a table per node (NODE / FIT / FIRST-LIMIT, as the
devices summary prints its tables) and the total in one line; JSON/YAML from RequestFitReport.to_dict."""

from __future__ import annotations

from kubectl_dra.render.escape import esc
from kubectl_dra.render.table import fit_table
from kubectl_dra.render.terminal import Out

LIMIT_LINES = 3  # at a width, FIRST-LIMIT wraps onto at most this many lines (-o wide: whole)


def render_request_fit(report, opts, stream) -> None:
    fmt, color, width = opts.format, opts.color, opts.width
    if fmt in ("json", "yaml"):
        from kubectl_dra.render.structured import data_to

        stream.write(data_to(report.to_dict(), fmt))
        return
    wide = fmt == "wide"
    out = Out(stream, color, None if wide else width)
    for f in report.findings:
        out.line((f"{f.severity} {f.code}: ", "bold"), esc(f.message), wrap=2)
    if report.nodes:
        headers = ["NODE", "FIT"] + (["SHARED"] if wide else []) + ["FIRST-LIMIT"]
        rows = []
        for n in report.nodes:
            cells = [esc(n.node), f"{n.fit}+" if n.capped else str(n.fit)]
            if wide:
                cells.append("yes" if n.shared else "no")
            cells.append(esc(n.limit) or "-")
            rows.append(cells)
        fit_table(out, headers, rows, max_lines=LIMIT_LINES)
        out.blank()
    cls = f"class {esc(report.device_class)}" + (", from --class" if report.filled_class else "")
    more = f"at least {report.total}" if report.total_capped else str(report.total)
    if report.undetermined:  # the error line says why (exit 2)
        out.line(f"Total: undetermined for {esc(report.claim)} ({cls}).", wrap=2)
        return
    out.line(f"Total: {more} more of {esc(report.claim)} fit ({cls}).", wrap=2)
    if report.shared:
        out.line("Devices several nodes reach count once: the total fills the nodes in order.")
        if report.total_limit and not report.total_capped:
            out.line(f"The next does not fit: {esc(report.total_limit)}.", wrap=2)
    elif report.nodes:
        out.line("Each node's devices are its own: the total is the sum of the nodes.")
    if report.in_flight:
        n = len(report.in_flight)
        verb = "take their" if n > 1 else "takes its"
        out.line(f"Counted after {n} pending pod{'s' if n > 1 else ''} in the queue {verb} devices.")
    if report.no_candidate:
        n = report.no_candidate
        out.line(f"{n} other node{'s have' if n > 1 else ' has'} no free device the request can use.")
    if report.rejected:
        n = len(report.rejected)
        out.line(f"{n} node{'s' if n > 1 else ''} its pods may not use (taints, ...) left out.")
