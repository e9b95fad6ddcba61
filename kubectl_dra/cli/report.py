"""report: one self-contained HTML file, to attach to a ticket, that --from-file replays."""

from __future__ import annotations

from datetime import datetime, timezone

import click

from kubectl_dra.cli.common import (
    ALONE,
    CONNECTION,
    CONTEXT_SETTINGS,
    EXIT_ZERO,
    INPUT,
    SEMANTICS,
    VERBOSE,
    finish,
    flags,
    gather_for,
    one_line,
    output_file_flag,
    output_flag,
    scope_flags,
    write_out,
)
from kubectl_dra.cli.options import Options
from kubectl_dra.errors import DraError


@click.command("report", context_settings=CONTEXT_SETTINGS, short_help="One HTML file to attach to a ticket")
@click.option("-l", "--selector", default=None, help="Only pods this label selector picks (as kubectl -l)")
@output_file_flag("report")
@flags(
    *scope_flags(
        "Namespace of the pods to judge (default: the kubeconfig context's)", "Judge the pods of every namespace"
    ),
    *INPUT,
    *SEMANTICS,
    *output_flag(("html",), default="html", help="Output format (html: one self-contained page)"),
    *ALONE,
    *EXIT_ZERO,
    *CONNECTION,
    *VERBOSE,
)
def report_cmd(selector, filename, **params):
    """Write one self-contained HTML page: what status, explain pod --map and devices -o map say, and the input.

    What was read and when; the pods that use DRA with their verdicts, blocked first; for each blocked or
    undetermined pod (the first 20) its explanation, its path pod -> claim -> request -> device -> node as a picture
    and its device map (each device marked by the first check it fails); every node's device map, each cell titled
    with the device, its state and its holder; the findings with their docs. The input is embedded, redacted as
    dump redacts: `--from-file report.html` replays it with any command. The page has no script, loads nothing
    and its Content-Security-Policy lets it load nothing: it opens offline, with JavaScript off. Exit codes as status.

    \b
    Examples:
      # For the ticket: every namespace, one file
      kubectl dra report -A --output-file report.html
      # The next morning, offline: the same answers from the file
      kubectl dra status -A --from-file report.html
    """
    from kubectl_dra.gather.files import STDIN
    from kubectl_dra.model.labels import matches, parse_selector

    o = Options.from_click(params)
    reqs = parse_selector(selector) if selector else None
    if STDIN in o.from_files:
        raise DraError("kubectl dra report embeds its input: give --from-file a file, not - (stdin)")
    # live: every object a dump holds, to embed; files: every object as read (read once: the same objects)
    got = gather_for(
        o,
        selector=selector or "",
        partial=True,
        everything=True,
        pending_pods=not o.alone,
        bound_pods=True,
        drivers=True,
    )
    snap, ns = got.snapshot, got.namespace
    namespace = None if o.all_namespaces else ns
    scope = {"namespace": namespace, "selector": selector}
    from kubectl_dra.gather.bundle import html_comment

    # written before the analysis runs: the page embeds the input as it was read, whatever reads it after
    embedded = html_comment(_bundle(o, got, snap, scope))
    del got
    from kubectl_dra.analyze.reports.overview import overview

    sem = o.semantics(snap.server_version)
    ov = overview(snap, sem, namespace, (lambda lb: matches(reqs, lb)) if reqs is not None else None, o.alone)
    text = _html(ov, snap, sem, scope, embedded)

    def show() -> None:
        write_out(filename, text, f"{len(text.encode()) // 1024} KiB, {len(ov.scan.rows)} pod(s)")

    undetermined = None
    if not ov.determined:
        undetermined = f"the report is incomplete: {one_line('; '.join(ov.scan.unseen + ov.inventory.unseen))}"
        if not ov.scan.unseen and not ov.inventory.unseen:
            undetermined = "some pods are undetermined: the report says why"
    return finish(ov, o, show=show, undetermined=undetermined, blocked=ov.blocked)


def _bundle(o: Options, got, snap, scope: dict) -> dict:
    """What the report embeds: a live gather as dump makes it; files as read (a dump's header kept), redacted."""
    from kubectl_dra.gather.bundle import bundle

    if not o.from_files:
        return bundle(list(got.raw), snap, scope)
    objs = list(got.raw)
    header = next((x for x in objs if x.get("kind") == "Bundle"), None)
    doc = bundle([x for x in objs if x.get("kind") != "Bundle"], snap, scope)
    doc["items"][0]["observedAt"] = snap.observed_at  # files tell no time: the answers' reference time stays theirs
    if header is not None:  # what the dump recorded it read (and could not) stays as it said
        doc["items"][0] = {**doc["items"][0], **{k: header[k] for k in ("gaps", "listed", "boundPods") if k in header}}
    return doc


def _html(ov, snap, sem, scope: dict, embedded: str) -> str:
    from kubectl_dra import __version__
    from kubectl_dra.render import render
    from kubectl_dra.render.html import render_html

    where = "every namespace" if scope["namespace"] is None else f"namespace {scope['namespace']}"
    read = {
        "source": {"live": "the cluster", "bundle": "a kubectl dra dump", "files": "files"}.get(snap.source),
        "observedAt": snap.observed_at,
        "serverVersion": snap.server_version,
        "semantics": f"Kubernetes {sem.version_str}",
        "scope": where + (f", pods matching {scope['selector']}" if scope.get("selector") else ""),
        "version": __version__,
        "generatedAt": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    from kubectl_dra.render.options import RenderOptions

    plain = RenderOptions("text")  # the explanations as text in the page: no colour, no width
    return render_html(ov, read, embedded, lambda r, stream: render(r, plain, stream))
