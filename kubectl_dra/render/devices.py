"""`kubectl dra devices` for people: a summary per node (and per class, with partition headroom) by default, the
device list with --list or any filter, the holders of a node's devices with --node; JSON/YAML from
InventoryReport.to_dict. Tables as kubectl get prints them; the last column wraps at the terminal (wide: whole),
and the summary's count columns that are zero everywhere are left out (wide: all of them)."""

from __future__ import annotations

from kubectl_dra.render.escape import esc
from kubectl_dra.render.table import fit_table
from kubectl_dra.render.terminal import Out

DETAIL_LINES = 6  # at a width, a last cell wraps onto at most this many lines (-o wide: whole)
_STATE_STYLE = {"free": "green", "allocated": None, "shared": "cyan", "tainted": "yellow", "unhealthy": "bold red"}
_STATE_STYLE.update(unusable="red", exhausted="yellow")


def render_inventory(report, opts, stream, listing: bool, rows_only: bool = False) -> None:
    """`devices`: the summary, or the device list (listing); rows_only: the list's rows alone (--no-headers)."""
    fmt = opts.format
    if fmt == "json":
        _stream_json(report, stream)
        return
    if fmt == "yaml":
        from kubectl_dra.render.structured import data_to

        stream.write(data_to(report.to_dict(), fmt))
        return
    wide = opts.wide
    out = Out(stream, opts.color, opts.fit_width)
    if not report.rows:
        return  # the command says "No devices ..." on stderr, as kubectl get does
    if rows_only:
        _devices(out, report, wide, header=False)
        return
    if listing:
        _devices(out, report, wide)
        if report.plugins:
            out.blank()
            _plugin_notes(out, report)
        if report.filters.get("node"):
            holders = report.holders()
            out.blank()
            if holders:
                _table(
                    out,
                    ["POD", "CLAIMS", "DEVICES"],
                    [[esc(h["pod"]), esc(", ".join(h["claims"])), esc(", ".join(h["devices"]))] for h in holders],
                )
            else:
                out.line(f"No pod uses a device of node {esc(report.filters['node'])}.")
    else:
        _summary(out, report, wide)
        if report.pool_status:
            _pool_status(out, report)
    if report.counters:
        out.blank()
        _table(
            out,
            ["POOL", "COUNTER SET", "COUNTER", "CAPACITY", "USED", "LEFT"],
            [
                [
                    esc(f"{c['driver']}/{c['pool']}"),
                    esc(c["counterSet"]),
                    esc(c["counter"]),
                    c["capacity"],
                    c["used"],
                    c["left"],
                ]
                for c in report.counters
            ],
        )
    if report.headroom:
        out.blank()
        rows = [
            [esc(f"{h.driver}/{h.pool}"), esc(h.shape), esc(h.example), str(h.free), str(h.fit)]
            for h in report.headroom
        ]
        _table(out, ["POOL", "PARTITION (COUNTERS CONSUMED)", "E.G.", "FREE", "FIT NOW"], rows, droppable=("E.G.",))
        out.line(
            "FIT NOW: how many more of that partition can be allocated together (partitions of one pool compete for "
            "its counters: alternatives, not a sum).",
            wrap=0,
        )


def render_inventory_fleet(answers, opts, stream, listing: bool) -> None:
    """Several clusters' inventories (cli/fleet.py): the summary per class (listing: the device list) as one table
    with a CLUSTER column, then a line for each cluster not read naming why; JSON/YAML one DeviceInventoryList.
    Each cluster's per-node summary, counters, headroom and plugin notes are in its own document (-o json)."""
    fmt = opts.format
    if fmt in ("json", "yaml"):
        from kubectl_dra.render.structured import data_to

        stream.write(data_to(inventory_fleet_doc(answers), fmt))
        return
    out = Out(stream, opts.color, opts.fit_width)
    read = [a for a in answers if a.report is not None]
    if listing:
        headers = ["CLUSTER", "DEVICE", "NODE", "CLASSES", "STATE", "DETAIL"]
        rows, styles = [], []
        for a in answers:
            if a.report is None:
                rows.append([esc(a.context), "-", "-", "-", "-", esc(f"not read: {a.error}")])
                styles.append(None)
                continue
            for r in a.report.rows:
                cells, style = _device_row(r, False)
                rows.append([esc(a.context), *cells])
                styles.append([None, *style])
        if rows:
            _table(out, headers, rows, styles, droppable=("CLASSES",), header=opts.header)
        return
    wide = opts.wide
    every = read[0].report.states if read else ()
    states = [s for s in every if wide or s in _CORE_STATES or any(a.report.state_counts.get(s) for a in read)]
    rows = [
        [esc(a.context), esc(g["class"]), str(g["devices"])] + [str(g[s]) for s in states]
        for a in read
        for g in a.report.summary("class")
    ]
    if rows:
        _table(out, ["CLUSTER", "CLASS", "DEVICES"] + [s.upper() for s in states], rows, header=opts.header)
    for a in answers:
        if a.report is None:
            out.line(esc(a.context), f": not read: {esc(a.error)}", wrap=2)
        else:  # upstream's pool counts that differ from the cluster's own (DRA023, DRA106): its table is -o json's
            for f in a.report.findings:
                out.line(esc(a.context), ": ", (f"{f.severity} {f.code}: ", "bold"), esc(f.message), wrap=2)
    if read and opts.header:
        total = sum(len(a.report.rows) for a in read)
        free = sum(a.report.state_counts["free"] for a in read)
        out.blank()
        out.line(
            f"{total} device(s), {free} free, in {len(read)} of {len(answers)} cluster(s). Per node: one --context; "
            "list them with --list.",
            wrap=0,
        )


def inventory_fleet_doc(answers) -> dict:
    """The DeviceInventoryList document: per context its DeviceInventory, or why it was not read; the counts over
    all the clusters read."""
    from kubectl_dra.findings.model import SCHEMA_VERSION

    read = [a.report for a in answers if a.report is not None]
    every = read[0].states if read else ()
    return {
        "apiVersion": SCHEMA_VERSION,
        "kind": "DeviceInventoryList",
        "summary": {
            "clusters": len(answers),
            "unreachable": len(answers) - len(read),
            "devices": sum(len(r.rows) for r in read),
            **{s: sum(r.state_counts[s] for r in read) for s in every},
            "determined": all(a.determined for a in answers),
        },
        "items": [a.to_dict("inventory") for a in answers],
    }


def _stream_json(report, stream) -> None:
    """The inventory as -o json writes it (kubectl's two-space indent), the device list last and a chunk of devices
    at a time: 40,000 devices never exist as one list of dicts and one string at once."""
    from kubectl_dra import jsonio
    from kubectl_dra.render.structured import _default

    # UTF-8 bytes straight to the stream's buffer when it has one (sys.stdout): 17 MB are neither decoded nor
    # encoded again
    binary = getattr(stream, "buffer", None)
    if binary is not None:
        stream.flush()
        write = binary.write
    else:

        def write(data: bytes) -> None:
            stream.write(data.decode("utf-8"))

    head = jsonio.dumps_utf8(report.to_dict(items=False), default=_default)
    if not report.rows or not head.endswith(b"\n}"):
        write(jsonio.dumps_utf8(report.to_dict(), default=_default) + b"\n")
        return
    write(head[:-2] + b',\n  "items": [')
    rows = report.rows
    for start in range(0, len(rows), _CHUNK):
        # a chunk of devices as one indented array, its brackets cut and its lines indented one level more
        text = jsonio.dumps_utf8([r.to_dict() for r in rows[start : start + _CHUNK]], default=_default)
        write((b"," if start else b"") + text[1:-2].replace(b"\n", b"\n  "))
    write(b"\n  ]\n}\n")


_CHUNK = 512  # devices per serialisation: few calls, and never more than this many row dicts at once


def _pool_status(out: Out, report) -> None:
    """ResourcePoolStatusRequests that exist (upstream's counts, alpha), kubectl-dra's count of the same pool, counted
    as the controller counts, in parentheses where it differs; then what the differences mean (DRA023, DRA106)."""

    def cell(up, ours, k: str) -> str:
        v = "-" if up[k] is None else str(up[k])
        if ours is not None and up[k] is not None and ours[k] != up[k]:
            v += f" ({ours[k]})"
        return v

    rows, notes = [], []
    for p in report.pool_status:
        up, ours = p["upstream"], p["kubectlDra"]
        if up is None or up["total"] is None:
            cells = [p["answer"], "-", "-", "-"]
        else:
            cells = [cell(up, ours, k) for k in ("total", "allocated", "available", "unavailable")]
        rows.append([p["request"], f"{p['driver']}/{p['pool'] or '*'}", p["node"] or "-", *cells])
        why = (up or {}).get("validationError") or ""
        if not why and p["answer"] != "counted":
            why = (p["condition"] or {}).get("message") or ""
        if why:
            notes.append(f"{p['request']}: {why}")
    out.blank()
    out.line(
        "ResourcePoolStatusRequests (alpha): upstream's counts as of when each was answered, kubectl-dra's "
        "count now in parentheses where it differs:",
        wrap=0,
    )
    _table(
        out,
        ["REQUEST", "POOL", "NODE", "TOTAL", "ALLOC", "AVAIL", "UNAVAIL"],
        [[esc(c) for c in r] for r in rows],
        droppable=("NODE",),
    )
    for line in notes:
        out.line(esc(line), wrap=2)
    for f in report.findings:
        out.line((f"{f.severity} {f.code}: ", "bold"), esc(f.message), wrap=2)


# Always shown in the summary; the other states' columns only where some device is in them (all with -o wide).
_CORE_STATES = ("free", "allocated")


def _summary(out: Out, report, wide: bool) -> None:
    states = [s for s in report.states if wide or s in _CORE_STATES or report.state_counts.get(s)]
    by_node = report.summary("node")
    headers = ["NODE", "DEVICES"] + [s.upper() for s in states]
    rows = [[esc(g["node"]), str(g["devices"])] + [str(g[s]) for s in states] for g in by_node]
    if wide and report.plugins:
        # -o wide: each node's plugin status per driver (the text's notes below say why where not serving)
        per: dict = {}
        for p in report.plugins:
            per.setdefault(p.node, []).append(f"{p.driver}:{'likely-' if p.likely else ''}{p.status}")
        headers.append("PLUGINS")
        rows = [r + [esc(",".join(per.get(g["node"], []))) or "-"] for r, g in zip(rows, by_node, strict=True)]
    _table(out, headers, rows)
    if report.plugins:
        out.blank()
        _plugin_notes(out, report)
    out.blank()
    by_class = report.summary("class")
    _table(
        out,
        ["CLASS", "DEVICES"] + [s.upper() for s in states],
        [[esc(g["class"]), str(g["devices"])] + [str(g[s]) for s in states] for g in by_class],
    )
    total = len(report.rows)
    free = report.state_counts["free"]
    out.blank()
    out.line(
        f"{total} device(s), {free} free, on {len(by_node)} node(s) or node groups. List them with --list, or "
        "filter: --node, --driver, --class, --pool, --free, --where CEL.",
        wrap=0,
    )


def _devices(out: Out, report, wide: bool, header: bool = True) -> None:
    headers = ["DEVICE", "NODE", "CLASSES", "STATE"]
    if wide:
        headers += ["ATTRIBUTES", "CAPACITY"]
    headers.append("DETAIL")
    rows, styles = [], []
    for r in report.rows:
        cells, style = _device_row(r, wide)
        rows.append(cells)
        styles.append(style)
    # DETAIL names who holds the device (the claim and its pods) or why it is unusable: it wraps, never cut
    _table(out, headers, rows, styles, droppable=("CLASSES",), header=header)


def _device_row(r, wide: bool) -> tuple[list[str], list]:
    """One device's cells (DEVICE, NODE, CLASSES, STATE, [ATTRIBUTES, CAPACITY,] DETAIL) and their styles: the
    list of one cluster and of several (render_inventory_fleet puts a CLUSTER cell in front)."""
    cells = [esc(r.id), esc(r.node or r.where), esc(",".join(r.classes)) or "<none>", r.state]
    if wide:
        cells += [
            esc(",".join(f"{k}={v}" for k, v in sorted(r.attributes.items()))) or "-",
            esc(",".join(f"{k}={v}" for k, v in sorted(r.capacity.items()))) or "-",
        ]
    detail = r.detail + (f"; pods {', '.join(r.pods)}" if r.pods else "")
    cells.append(esc(detail) or "-")
    return cells, [None, None, None, _STATE_STYLE.get(r.state)]


def _table(
    out: Out, headers: list[str], rows: list[list[str]], styles=None, droppable: tuple = (), header=True
) -> None:
    fit_table(out, headers, rows, styles=styles, droppable=droppable, max_lines=DETAIL_LINES, header=header)


_SHOWN_NODES = 3  # nodes named in one plugin note before "and N more"


def _plugin_notes(out: Out, report) -> None:
    """Whether a kubelet plugin serves each driver on each node with its devices: one line when all do, else a
    line per (driver, status, reason) that is not serving, naming its nodes, e.g.
    "node-07: gpu.example.com plugin not ready (CrashLoopBackOff, 12 restarts)"."""
    ps = report.plugins
    serving = {p.node for p in ps if p.status == "serving"} - {p.node for p in ps if p.status != "serving"}
    nodes = len({p.node for p in ps})
    if len(serving) == nodes and not any(p.reason for p in ps):
        out.line(f"Kubelet plugins: a Ready pod on each of the {nodes} node(s) for every driver of their devices "
                 "(registration itself is not visible in the API).", wrap=2)  # fmt: skip
        return
    reasons = {(p.status, p.reason) for p in ps}
    if len(reasons) == 1 and ps[0].status == "unknown":  # e.g. a file without DaemonSets: one line, not one per driver
        out.line(f"Kubelet plugins: not known on any node: {esc(ps[0].reason)}", wrap=2)
        return
    groups: dict = {}
    for p in ps:
        if p.status != "serving" or p.reason:  # serving with a reason: likely, the pod itself is not Ready
            groups.setdefault(p.words(), []).append(p.node)
    out.line(
        f"Kubelet plugins (Ready on {len(serving)} of {nodes} node(s); a node without a Ready one cannot prepare "
        "that driver's devices):",
        wrap=2,
    )
    for words, names in groups.items():
        more = f" and {len(names) - _SHOWN_NODES} more" if len(names) > _SHOWN_NODES else ""
        out.line(
            "  ", f"{esc(', '.join(names[:_SHOWN_NODES]))}{more}: {esc(words)}", wrap=4
        )  # (the indent a part: kept)
