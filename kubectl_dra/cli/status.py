"""status: every pod that uses DRA, one line each, blocked first."""

from __future__ import annotations

import sys
from dataclasses import replace

import click

from kubectl_dra.cli.common import (
    _ALONE,
    _COLOR,
    _CONNECTION,
    _EXIT_ZERO,
    _INPUT,
    _NO_HEADERS,
    _SEMANTICS,
    _VERBOSE,
    _WATCH,
    CONTEXT_SETTINGS,
    _flags,
    _gather,
    _one_line,
    _output,
    _scan_rows,
    _scope,
    _short_unseen,
    finish,
    note,
)
from kubectl_dra.cli.options import Options
from kubectl_dra.cli.watch import _watch_status
from kubectl_dra.render import FORMATS


@click.command("status", context_settings=CONTEXT_SETTINGS, short_help="Every pod that uses DRA, blocked first")
@click.option("-l", "--selector", default=None, help="Only pods this label selector picks (as kubectl -l)")
@_WATCH
@_flags(
    *_scope("Namespace to scan (default: the kubeconfig context's)", "Scan every namespace"),
    *_INPUT,
    *_SEMANTICS,
    *_output(FORMATS + ("name",), help="Output format (name: pod/NAME, one a line, as kubectl get -o name)"),
    *_NO_HEADERS,
    *_ALONE,
    *_EXIT_ZERO,
    *_CONNECTION,
    *_COLOR,
    *_VERBOSE,
)
def status_cmd(selector, watch, no_headers, **params):
    """List the pods that use DRA and what holds each: one line per pod, blocked first.

    Covers the namespace (-n, default the context's), every namespace (-A), or the pods -l picks. A pod uses DRA when
    it has ResourceClaims (named or from templates) or asks for a DRA-backed extended resource. Each line is the
    verdict `explain pod` gives for that pod; explain it for the details. In text, a count of the pods by state
    follows on stderr ("5 pods use DRA: 1 blocked, 1 undetermined, 3 ok"), where kubectl writes its notes: stdout
    stays the rows a script reads (with --no-headers, or -o name).

    \b
    Exit codes: 0 no pod blocked, 1 some pod blocked, 2 some pod (or a namespace the scan could not list) undetermined.

    \b
    Examples:
      # What is stuck on devices in this namespace?
      kubectl dra status
      # Every namespace, as a CI gate (exit 1 when any DRA pod is blocked)
      kubectl dra status -A
      # One app's pods, for machines
      kubectl dra status -l app=recomendador -o json
    """
    from kubectl_dra.model.labels import matches, parse_selector

    o = Options.from_click(params)
    reqs = parse_selector(selector) if selector else None
    got = _gather(
        o, selector=selector or "", partial=True, watch=watch, pending_pods=not o.alone, bound_pods=True, drivers=True
    )
    from kubectl_dra.analyze.reports.status import scan

    snap, ns = got.snapshot, got.namespace
    namespace = None if o.all_namespaces else ns

    def evaluate(snap):
        report = scan(
            snap,
            o.semantics(snap.server_version),
            namespace,
            (lambda labels: matches(reqs, labels)) if reqs is not None else None,
            _unseen_pods([g for g in snap.gaps if g.resource == "pods"]),
            alone=o.alone,
        )
        return replace(report, scope={"namespace": namespace, "selector": selector})

    if watch:
        session, first = got.session, [snap]
        del got, snap  # the first answer takes the snapshot (cli/watch.py _first): not kept here for hours
        _watch_status(o, session, first, evaluate, no_headers)
        return
    from kubectl_dra.model.snapshot import PENDING_PODS

    report = evaluate(snap)
    for g in snap.gaps:
        if g.resource == PENDING_PODS and any(r.queue for r in report.rows):  # a pending pod's answer depends on it
            note(
                f"warning: cannot list the pending pods of every namespace ({_one_line(g.message)}): the queue holds "
                "only the pods listed here, and pods elsewhere may be ahead of them"
            )
    undetermined = None if report.determined else _one_line(_undetermined(report))
    return finish(
        report, o, show=lambda: _show_scan(report, o, no_headers), undetermined=undetermined, blocked=report.blocked
    )


def _undetermined(report) -> str:
    """Why the scan exits 2: the pods whose state is open (a few by name), or what it could not see."""
    if report.unseen:
        return f"the scan is incomplete: could not see {'; '.join(_short_unseen(u) for u in report.unseen)}"
    open_ = [r for r in report.rows if r.state == "Unknown"]
    names = ", ".join(f"{r.namespace}/{r.pod}" for r in open_[:3]) + (" ..." if len(open_) > 3 else "")
    return f"{len(open_)} pod{'' if len(open_) == 1 else 's'} undetermined ({names}): 'explain pod' says why"


def _unseen_pods(gaps: list) -> tuple[str, ...]:
    """One line per kind of refusal: the namespaces whose pods could not be listed, every one by name (the JSON
    and YAML documents carry them all; text shortens the list, _short_unseen), then why."""
    out = [f"pods: {g.message}" for g in gaps if not g.namespace]
    refused = [g for g in gaps if g.namespace]
    if len(refused) == 1:
        out.append(f"pods in namespace {refused[0].namespace}: {refused[0].message}")
    elif refused:
        names = sorted(g.namespace for g in refused)
        out.append(f"pods in {len(names)} namespaces ({', '.join(names)}): {refused[0].reason}")
    return tuple(out)


def _show_scan(report, o: Options, no_headers: bool = False) -> None:
    """The table (or names, or the document) on stdout; in text, the count of pods by state after it on stderr,
    where kubectl prints "No resources found": stdout stays the rows a script reads (--no-headers, -o name, awk).
    An exit code 2 then ends with exactly one `error:` line (finish)."""
    from kubectl_dra.render.escape import esc

    _scan_rows(report, o, header=not no_headers)
    sys.stdout.flush()
    text = o.output in ("text", "wide")
    if not report.rows and text:
        where = "any namespace" if report.scope["namespace"] is None else f"namespace {report.scope['namespace']}"
        sel = f" matching {report.scope['selector']!r}" if report.scope.get("selector") else ""
        note(f"No pods{sel} use DRA in {esc(where)}.")
    elif text:
        sys.stderr.write(report.summary + "\n")
        for line in report.queue.shortfalls if report.queue is not None else ():
            note(f"queue: {esc(line.text)}")
    for line in report.unseen:
        note(f"warning: could not see {_one_line(_short_unseen(line))}")
