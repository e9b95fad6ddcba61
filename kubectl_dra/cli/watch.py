"""The -w loops: the first answer, then what changes, as the cluster changes, until Ctrl-C."""

from __future__ import annotations

import sys
from dataclasses import replace

from kubectl_dra.cli.common import note, one_line, render_options, scan_rows, short_unseen
from kubectl_dra.cli.options import Options
from kubectl_dra.errors import DraError, ExitCode


def _watch_loop(session, first, each) -> None:
    """first(): print the state now; then each() after every settled change, until Ctrl-C (exit 130, quietly)."""
    from kubectl_dra import runtime

    try:
        first()
        sys.stdout.flush()
        runtime.long_running()
        session.start()
        while True:
            session.wait_for_change()
            runtime.next_evaluation()
            each()
            sys.stdout.flush()
    except KeyboardInterrupt:
        session.stopped = True
        sys.stdout.flush()
        raise SystemExit(int(ExitCode.INTERRUPTED)) from None


def watch_pod(o: Options, session, first: list, ns: str, name: str) -> None:
    """explain pod NAME -w: the report, then one line per change of the verdict (-o json|yaml: the whole report).
    first: [the gather's snapshot], emptied by the first answer (_first)."""
    import time

    from kubectl_dra.analyze.reports.explain import explain_pods
    from kubectl_dra.render.escape import esc

    last: dict = {}
    held = first

    def evaluate(snap):
        try:
            return explain_pods(snap, o.semantics(snap.server_version), [(ns, name)], o.alone)[0], None
        except DraError as e:
            return None, e.message

    def show(first: bool) -> None:
        report, err = evaluate(_first(held) if first else session.snapshot())
        key = err if report is None else (report.verdict.to_dict(), [str(p) for p in report.body.get("pieces", ())])
        if not first and key == last.get("key"):
            return
        last["key"] = key
        if report is None:
            sys.stderr.write(f"error: {one_line(err)}\n")
            return
        if first or o.output in ("json", "yaml"):
            from kubectl_dra.render import render

            render(report, render_options(o), sys.stdout)
            if first and o.output in ("text", "wide"):
                sys.stdout.write("\nWatching (Ctrl-C to stop):\n")
            return
        stamp = time.strftime("%H:%M:%S")
        from kubectl_dra.render.verdict import verdict_headline

        words = verdict_headline(report.to_dict())[0]
        sys.stdout.write(f"{stamp}  {words}  {esc(' '.join(report.verdict.summary.split()))}\n")

    _watch_loop(session, lambda: show(True), lambda: show(False))


def watch_status(o: Options, session, first: list, evaluate, no_headers: bool = False, exporter=None) -> None:
    """status -w: the table, then the rows that changed (a new pod, another state or reason), as kubectl get -w.
    first: [the gather's snapshot], emptied by the first answer (_first). exporter (cli/exporter.py): the metrics
    of each answer; then an answer that fails is one `error:` line and a count, and the loop goes on."""
    shown: dict = {}
    held = first

    def show(first: bool) -> None:
        snap = _first(held) if first else session.snapshot()
        if exporter is None:
            report = evaluate(snap)
        else:
            try:
                from kubectl_dra.analyze.pod.dryrun import Analysis

                sem = o.semantics(snap.server_version)
                base = Analysis(snap, sem)  # one for the scan and the device inventory: built once per answer
                report = evaluate(snap, base)
                exporter.observe(snap, report, sem, base.fork())
                del base
            except DraError as e:
                exporter.failed()
                sys.stderr.write(f"error: {one_line(e.message)}\n")
                return
        del snap  # not kept while the rows are written
        rows = [r for r in report.rows if shown.get((r.namespace, r.pod)) != _row_key(r)]
        for r in report.rows:
            shown[(r.namespace, r.pod)] = _row_key(r)
        if not rows and not first:
            return
        scan_rows(replace(report, rows=tuple(rows)), o, header=first and not no_headers)
        for line in report.unseen if first else ():
            note(f"warning: could not see {one_line(short_unseen(line))}")

    _watch_loop(session, lambda: show(True), lambda: show(False))


def watch_map(o: Options, session, first: list, evaluate, show) -> None:
    """devices -o map -w: the map, then the map again each time what it draws changes (a cell's state or holder,
    the counters, the pending pods estimated): at a terminal in place of the last one, else after a line with the
    time. evaluate(snapshot): the inventory, its filters applied; show(inventory, snapshot, o, map) draws it.
    first: [the gather's snapshot], emptied by the first answer (_first)."""
    import time

    from kubectl_dra.analyze.reports.devmap import device_map

    last: dict = {}
    held = first

    def draw(first: bool) -> None:
        snap = _first(held) if first else session.snapshot()
        report = evaluate(snap)
        dmap = device_map(report, snap, o.semantics(snap.server_version))
        key = (dmap.rows, dmap.estimated, dmap.open, report.unseen)
        if not first and key == last.get("key"):
            return
        last["key"] = key
        if not first:
            if sys.stdout.isatty():
                sys.stdout.write("\x1b[H\x1b[2J")  # the map in place of the last, as watch(1) draws
            sys.stdout.write(f"\n{time.strftime('%H:%M:%S')}  the map changed:\n")
        show(report, snap, o, dmap)
        if first:
            sys.stdout.write("\nWatching (Ctrl-C to stop):\n")

    _watch_loop(session, lambda: draw(True), lambda: draw(False))


def _first(held: list):
    """The gather's snapshot, taken out of its holder: -w runs for hours, and a snapshot kept for its first answer
    would keep every object of the cluster as it was then (each slice the watch has since replaced, twice over)."""
    return held.pop()


def _row_key(r) -> tuple:
    return (r.state, r.missing, r.reason, r.phase, r.node)
