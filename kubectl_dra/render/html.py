"""`kubectl dra report`: one self-contained HTML file to attach to a ticket (standard library only: html.escape and
hand-written markup and SVG).

Safe by construction: every string that comes from the cluster goes through _e (html.escape, quotes included)
before it reaches the page, in text and in attributes alike; the only links are to the docs of finding codes the
registry knows. The page has no script at all, and its Content-Security-Policy forbids any (default-src 'none'), any
request to another host, and any resource but inline styles and data: images: it reads the same with JavaScript
off. The input is embedded as an HTML comment (gather/bundle.py html_comment: gzip and base64, which has no `-` or
`>`), inert, and `--from-file report.html` replays it."""

from __future__ import annotations

import html
import io

from kubectl_dra.findings.registry import REGISTRY
from kubectl_dra.render.devmap import DEVICE_LEGEND, POD_LEGEND

DOCS = "https://github.com/kubectl-dra/kubectl-dra/blob/main/docs/codes/{}.md"
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

# per state: the cell's colour (glyph and colour both: the state is never told by colour alone)
_COLOURS = {
    "free": "#1a7f37", "candidate": "#1a7f37", "allocated": "#24292f", "in-use": "#24292f", "selected": "#0969da",
    "binding": "#8250df", "shared": "#0550ae", "reserved": "#1b7c83", "ahead": "#1b7c83", "exhausted": "#9a6700",
    "counters": "#9a6700", "capacity": "#9a6700", "tainted": "#bc4c00", "taint": "#bc4c00", "unhealthy": "#cf222e",
    "cel-error": "#cf222e", "unusable": "#6e7781", "pool": "#6e7781", "node": "#6e7781", "feature": "#6e7781",
    "request": "#57606a", "class": "#57606a",
}  # fmt: skip

_STYLE = """
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1f2328;background:#fff}
main{max-width:1100px;margin:0 auto;padding:16px}
h1{font-size:22px;margin:0 0 8px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d0d7de}
h3{font-size:15px;margin:18px 0 6px}
.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:8px 0}
.meta dt{font-weight:600}.meta dd{margin:0;overflow-wrap:anywhere}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eaeef2;vertical-align:top;overflow-wrap:break-word}
th{white-space:nowrap}
th{background:#f6f8fa}
.Blocked{color:#cf222e;font-weight:600}.Unknown{color:#9a6700;font-weight:600}.OK{color:#1a7f37}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;padding:8px;font-size:12px;max-width:100%}
.cells{display:flex;flex-wrap:wrap;gap:2px;font:15px/1 monospace}
.c{display:inline-block;width:18px;height:18px;text-align:center;line-height:18px;border-radius:3px;color:#fff}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;margin:6px 0}.legend span.w{color:#1f2328}
details{margin:8px 0;border:1px solid #d0d7de;border-radius:6px;padding:6px 10px}
summary{cursor:pointer;font-weight:600;overflow-wrap:anywhere}
svg.path{width:100%;height:auto;max-width:900px}
.note{color:#57606a}
td.node{width:30%}
.c.other{background:#6e7781}
""" + "".join(f".c.s-{state}{{background:{colour}}}" for state, colour in _COLOURS.items())


def _e(value) -> str:
    """Any value from the cluster, escaped for text and for a quoted attribute alike."""
    return html.escape("" if value is None else str(value), quote=True)


def render_html(ov, read: dict, embedded: str, report_text) -> str:
    """ov: an Overview (analyze/reports/overview.py). read: what was read and when (source, server version, scope,
    time, tool version, gaps). embedded: the input as gather/bundle.py html_comment makes it. report_text: a
    function that writes an explain Report as the terminal's text (no colour) to a stream."""
    out = io.StringIO()
    w = out.write
    w('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n')
    w(f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n')
    w('<meta name="viewport" content="width=device-width, initial-scale=1">\n')
    w('<meta name="referrer" content="no-referrer">\n')
    w(f"<title>kubectl-dra report: {_e(read.get('scope'))}</title>\n<style>{_STYLE}</style></head><body><main>\n")
    w("<h1>kubectl-dra report</h1>\n")
    _meta(w, ov, read)
    _pods(w, ov)
    _explained(w, ov, report_text)
    _node_map(w, ov)
    _findings(w, ov)
    w("</main>\n")
    w(embedded)
    w("\n</body></html>\n")
    return out.getvalue()


def _meta(w, ov, read: dict) -> None:
    scan = ov.scan
    n = {s: sum(1 for r in scan.rows if r.state == s) for s in ("Blocked", "Unknown", "OK")}
    rows = [
        ("Read", f"{read.get('source')} at {read.get('observedAt') or 'an unknown time'}"),
        ("Kubernetes", read.get("serverVersion") or "unknown (files without a version)"),
        ("Semantics", read.get("semantics")),
        ("Scope", read.get("scope")),
        ("Pods using DRA", f"{len(scan.rows)}: {n['Blocked']} blocked, {n['Unknown']} undetermined, {n['OK']} ok"),
        ("Devices", f"{len(ov.inventory.rows)} on {len(ov.map.rows)} node(s) or places"),
        ("Made by", f"kubectl-dra {read.get('version')} at {read.get('generatedAt')}"),
    ]
    unseen = list(scan.unseen) + list(ov.inventory.unseen)
    if unseen:
        rows.append(("Not seen", "; ".join(unseen)))
    w('<dl class="meta">')
    for k, v in rows:
        w(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>")
    w("</dl>\n")
    w(
        '<p class="note">The input is embedded in this file: <code>kubectl dra status -A --from-file '
        "report.html</code> (or any command) replays it offline, redacted as <code>kubectl dra dump</code> "
        "redacts.</p>\n"
    )


def _pods(w, ov) -> None:
    w("<h2>Pods and verdicts</h2>\n")
    if not ov.scan.rows:
        w('<p class="note">No pod in scope uses DRA.</p>\n')
        return
    w('<div class="scroll"><table><thead><tr><th>Pod</th><th>State</th><th>Missing</th><th>Reason</th>')
    w("<th>Codes</th></tr></thead><tbody>\n")
    for r in ov.scan.rows:
        codes = " ".join(_code(c) for c in r.codes)
        w(f'<tr><td>{_e(r.namespace)}/{_e(r.pod)}</td><td class="{_e(r.state)}">{_e(r.state)}</td>')
        w(f"<td>{_e(r.missing or '')}</td><td>{_e(r.reason)}</td><td>{codes}</td></tr>\n")
    w("</tbody></table></div>\n")


def _code(code: str) -> str:
    """A finding code as a link to its docs page, only for a code the registry knows (nothing else is a link)."""
    if code in REGISTRY:
        return f'<a href="{DOCS.format(code)}" rel="noreferrer">{code}</a>'
    return _e(code)


def _explained(w, ov, report_text) -> None:
    if not ov.explained:
        return
    w("<h2>Why the blocked and undetermined pods wait</h2>\n")
    for i, ex in enumerate(ov.explained):
        r = ex.report
        pod = (r.body or {}).get("pod") or {}
        name = f"{pod.get('namespace', '')}/{pod.get('name', '')}"
        verdict = "Undetermined" if not r.determined else "Blocked" if r.blocked else "OK"
        w(f"<details{' open' if i < 3 else ''}><summary>{_e(name)}: {_e(verdict)}: {_e(r.summary)}</summary>\n")
        _path(w, r)
        w("<h3>Device map for the pod (each device marked by the first check it fails)</h3>\n")
        _map(w, ex.map, POD_LEGEND)
        buf = io.StringIO()
        report_text(r, buf)
        w(f"<h3>The explanation</h3>\n<pre>{_e(buf.getvalue())}</pre>\n</details>\n")
    if ov.more:
        w(
            f'<p class="note">{ov.more} more blocked or undetermined pod(s): explain them with kubectl dra explain pod.</p>\n'
        )


_BOX_CHARS = 24  # the characters of a name a box of the path shows (the rest in its title)


def _path(w, r) -> None:
    """pod -> claim -> request -> device -> node as a picture: a row of boxes per request (hand-written SVG)."""
    body = r.body or {}
    pod = body.get("pod") or {}
    node = pod.get("node") or ""
    rows = []
    for c in body.get("claims") or []:
        results = ((c.get("allocation") or {}).get("results")) or ((c.get("dryRun") or {}).get("results")) or []
        for req in c.get("requests") or [None]:
            rname = (req or {}).get("name")
            devs = [
                x
                for x in results
                if x.get("request") in (rname, None) or str(x.get("request", "")).startswith(f"{rname}/")
            ]
            dev = ", ".join(f"{x.get('driver')}/{x.get('pool')}/{x.get('device')}" for x in devs) or "no device"
            where = node or (devs[0].get("pool") if devs else "") or "no node"
            rows.append((pod.get("name", ""), c.get("name", ""), rname or "", dev, where))
    if not rows:
        return
    heads = ("pod", "claim", "request", "device", "node")
    bw, gap, bh = 168, 24, 40
    width, height = 5 * bw + 4 * gap, 22 + len(rows) * (bh + 10)
    w(f'<svg class="path" viewBox="0 0 {width} {height}" role="img" aria-label="pod, claim, request, device, node">')
    for k, h in enumerate(heads):
        w(f'<text x="{k * (bw + gap) + 4}" y="14" font-size="12" fill="#57606a">{h}</text>')
    for i, row in enumerate(rows):
        y = 22 + i * (bh + 10)
        for k, text in enumerate(row):
            x = k * (bw + gap)
            missing = text in ("no device", "no node")
            fill = "#fff8c5" if missing else "#f6f8fa"
            # a cut name is squeezed into the box, never past it (a proportional font's width is not known here)
            cut = len(text) > _BOX_CHARS
            short = text[: _BOX_CHARS - 1] + "…" if cut else text
            fit = f' textLength="{bw - 12}" lengthAdjust="spacingAndGlyphs"' if cut else ""
            w(f'<g><title>{_e(heads[k])}: {_e(text)}</title><rect x="{x}" y="{y}" width="{bw}" height="{bh}" rx="5" ')
            w(
                f'fill="{fill}" stroke="#8c959f"/><text x="{x + 6}" y="{y + 25}" font-size="12"{fit}>{_e(short)}</text></g>'
            )
            if k < 4:
                w(f'<path d="M{x + bw} {y + bh / 2}h{gap - 4}" stroke="#57606a" fill="none"/>')
                w(f'<path d="M{x + bw + gap - 6} {y + bh / 2 - 4}l5 4l-5 4z" fill="#57606a"/>')
    w("</svg>\n")


def _node_map(w, ov) -> None:
    w("<h2>Devices, node by node</h2>\n")
    _map(w, ov.map, DEVICE_LEGEND)
    if ov.map.estimated:
        w(
            f'<p class="note">Estimated: what pending pod(s) {_e(", ".join(ov.map.estimated))} would take in the queue.</p>\n'
        )


def _map(w, dmap, legend: dict) -> None:
    if not dmap.rows:
        w('<p class="note">No device to draw.</p>\n')
        return
    used = {c.state for r in dmap.rows for c in r.cells}
    w('<div class="legend">')
    for state, (glyph, _, _, words) in legend.items():
        if state in used:
            w(f'<span><span class="{_cell_class(state)}">{glyph}</span> ')
            w(f'<span class="w">{_e(words)}</span></span>')
    w("</div>\n")
    w('<div class="scroll"><table><thead><tr><th>Node</th><th>Devices</th></tr></thead><tbody>\n')
    for r in dmap.rows:
        counts = ", ".join(f"{n} {legend.get(s, ('', '', '', s))[3]}" for s, n in r.counts.items())
        w(f'<tr><td class="node">{_e(_nodes(r.nodes))}</td><td><div class="note">{len(r.cells)}: {_e(counts)}</div>')
        w('<div class="cells">')
        for c in r.cells:
            words = legend.get(c.state, ("?", "?", None, c.state))[3]
            title = (
                f"{c.device}: {words}" + (f"; {c.holder}" if c.holder else "") + (f"; {c.detail}" if c.detail else "")
            )
            glyph = legend.get(c.state, ("?",))[0]
            w(f'<span class="{_cell_class(c.state)}" title="{_e(title)}">{glyph}</span>')
        w("</div>")
        for ctr in r.counters:
            w(f'<div class="note">{_e(ctr)}</div>')
        w("</td></tr>\n")
    w("</tbody></table></div>\n")


def _cell_class(state: str) -> str:
    """A cell's classes: its state's colour from the style sheet (a class per state, not a style per cell: 40,000
    cells)."""
    return f"c s-{state}" if state in _COLOURS else "c other"


def _nodes(nodes: tuple) -> str:
    """A row's node, or its group's: a few by name, else the first and the last and how many."""
    if len(nodes) <= 3:
        return ", ".join(nodes)
    return f"{nodes[0]} … {nodes[-1]} ({len(nodes)} nodes)"


def _findings(w, ov) -> None:
    if not ov.findings:
        return
    w("<h2>Findings</h2>\n<dl>\n")
    for code, n in ov.findings:
        rule = REGISTRY.get(code)
        if rule is None:
            continue
        w(f"<dt>{_code(code)} <code>{_e(rule.name)}</code> ({rule.severity}; {n} pod(s))</dt>")
        w(f"<dd>{_e(rule.summary)} <em>How to fix:</em> {_e(rule.hint)}</dd>\n")
    w("</dl>\n")
