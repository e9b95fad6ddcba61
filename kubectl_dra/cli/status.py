"""status: every pod that uses DRA, one line each, blocked first."""

from __future__ import annotations

import sys
from dataclasses import replace
from functools import partial

import click

from kubectl_dra.cli.common import (
    ALONE,
    COLOR,
    CONTEXT_SETTINGS,
    EXIT_ZERO,
    INPUT,
    NO_HEADERS,
    SEMANTICS,
    VERBOSE,
    WATCH,
    connection_flags,
    finish,
    flags,
    gather_for,
    note,
    one_line,
    output_flag,
    render_options,
    scan_rows,
    scope_flags,
    short_unseen,
)
from kubectl_dra.cli.options import Options
from kubectl_dra.cli.watch import watch_status
from kubectl_dra.errors import DraError
from kubectl_dra.render import FORMATS


@click.command("status", context_settings=CONTEXT_SETTINGS, short_help="Every pod that uses DRA, blocked first")
@click.option("-l", "--selector", default=None, help="Only pods this label selector picks (as kubectl -l)")
@WATCH
@click.option(
    "--metrics-bind-address",
    default=None,
    metavar="HOST:PORT",
    help="With -w: serve Prometheus metrics of the answer on http://HOST:PORT/metrics, with /healthz and /readyz "
    "(off by default; [::]:8080 for IPv6; docs/exporter.md)",
)
@click.option(
    "--metrics-cluster-name",
    default=None,
    metavar="NAME",
    help="With --metrics-bind-address: a constant cluster=NAME label on the answer's metrics",
)
@flags(
    *scope_flags("Namespace to scan (default: the kubeconfig context's)", "Scan every namespace"),
    *INPUT,
    *SEMANTICS,
    *output_flag(FORMATS + ("name",), help="Output format (name: pod/NAME, one a line, as kubectl get -o name)"),
    *NO_HEADERS,
    *ALONE,
    *EXIT_ZERO,
    *connection_flags(fleet=True),
    *COLOR,
    *VERBOSE,
)
def status_cmd(selector, watch, metrics_bind_address, metrics_cluster_name, no_headers, **params):
    """List the pods that use DRA and what holds each: one line per pod, blocked first.

    Covers the namespace (-n, default the context's), every namespace (-A), or the pods -l picks. A pod uses DRA when
    it has ResourceClaims (named or from templates) or asks for a DRA-backed extended resource. Each line is the
    verdict `explain pod` gives for that pod; explain it for the details. In text, a count of the pods by state
    follows on stderr ("5 pods use DRA: 1 blocked, 1 undetermined, 3 ok"), where kubectl writes its notes: stdout
    stays the rows a script reads (with --no-headers, or -o name).

    \b
    Exit codes:
      0  no pod blocked
      1  some pod blocked
      2  some pod (or a namespace the scan could not list) undetermined

    A namespace with no pod that uses DRA is exit 0, as kubectl get's "No resources found", and the note names the
    namespaces that have some (live: among the pods not finished). From --from-file it is exit 2 when -n was not
    given (default is only assumed) or the input holds no pod in that namespace (a dump made for another namespace,
    a mistyped -n): a CI gate must not pass on input that says nothing about what it gates. An input with no Pod at
    all is exit 2 too.

    \b
    Examples:
      # What is stuck on devices in this namespace?
      kubectl dra status
      # Every namespace, as a CI gate (exit 1 when any DRA pod is blocked)
      kubectl dra status -A
      # One app's pods, for machines
      kubectl dra status -l app=recomendador -o json
      # Offline, on a dump that records what it read (a plain kubectl get dump without a kind leaves the
      # answers that need it open: DRA104)
      kubectl dra dump -A > dump.yaml && kubectl dra status -A --from-file dump.yaml
      # Several clusters at once (a CLUSTER column; exit code the worst of them)
      kubectl dra status -A --context prod-us --context prod-eu
      kubectl dra status -A --all-contexts -o json
      # In a pod (in-cluster configuration): an exporter for Prometheus
      kubectl dra status -A -w --metrics-bind-address :8080 --metrics-cluster-name prod-eu
    """
    from kubectl_dra.cli.fleet import with_contexts
    from kubectl_dra.model.labels import parse_selector

    contexts, params = with_contexts(params)
    o = Options.from_click(params)
    reqs = parse_selector(selector) if selector else None
    exporter = _exporter(metrics_bind_address, metrics_cluster_name, watch)
    if contexts is not None:
        if watch:
            raise DraError("-w follows one cluster: give one --context")
        return _fleet(o, contexts, selector, reqs, no_headers)
    if exporter is not None:
        exporter.start()  # before the first gather: /healthz answers while a large cluster is listed
    # (no local keeps the gather: with -w, the first answer takes its snapshot, not held here for hours)
    return _answer(
        o,
        gather_for(
            o,
            selector=selector or "",
            partial=True,
            watch=watch,
            pending_pods=not o.alone,
            bound_pods=True,
            drivers=True,
        ),
        selector,
        reqs,
        watch,
        no_headers,
        exporter,
    )


def _exporter(address: str | None, cluster: str | None, watch: bool):
    """The metrics server --metrics-bind-address asks for (not started), checked before any request."""
    if cluster is not None and address is None:
        raise DraError("--metrics-cluster-name labels the metrics: add --metrics-bind-address")
    if address is None:
        return None
    if not watch:
        raise DraError("--metrics-bind-address serves the metrics of a long-running status: add -w")
    from kubectl_dra.cli.exporter import Exporter

    return Exporter(address, cluster, None)


def _scan_once(o: Options, selector, reqs, progress: bool = True):
    """One cluster's gather and scan (a fleet's per context)."""
    got = gather_for(
        o,
        selector=selector or "",
        partial=True,
        pending_pods=not o.alone,
        bound_pods=True,
        drivers=True,
        progress=progress,
    )
    return _evaluator(o, got, selector, reqs, False)(got.snapshot)


def _scan_context(o: Options, selector, reqs, context: str):
    """One context of a fleet scan (cli/fleet.py): module-level, so that a process of its own can run it."""
    from kubectl_dra.cli.fleet import fleet_options

    return _scan_once(fleet_options(o, context), selector, reqs, progress=False)


def _evaluator(o: Options, got, selector, reqs, watch: bool):
    from kubectl_dra.analyze.reports.status import scan
    from kubectl_dra.model.labels import matches

    snap, ns = got.snapshot, got.namespace
    namespace = None if o.all_namespaces else ns
    if snap.source == "files" and not snap.pods:  # /dev/null, a file of Secrets: no answer, not "nothing blocked"
        raise DraError("the input holds no Pod objects: status lists pods (add them: kubectl get pods -A -o yaml)")
    elsewhere = namespace is not None and not watch and _holds_every_namespace(snap, o)

    def evaluate(snap, analysis=None):
        report = scan(
            snap,
            o.semantics(snap.server_version),
            namespace,
            (lambda labels: matches(reqs, labels)) if reqs is not None else None,
            unseen_pods([g for g in snap.gaps if g.resource == "pods"]),
            alone=o.alone,
            elsewhere=elsewhere,
            analysis=analysis,
        )
        return replace(report, scope={"namespace": namespace, "selector": selector})

    return evaluate


def _fleet(o: Options, contexts: list[str], selector, reqs, no_headers: bool):
    """The scan of every context (cli/fleet.py): a CLUSTER column, one StatusList document, the worst exit code."""
    from kubectl_dra.cli.fleet import scan_contexts
    from kubectl_dra.render.status import render_fleet

    if sys.stderr.isatty() and o.output in ("text", "wide"):
        note(f"scanning {len(contexts)} clusters ...")
    answers = scan_contexts(contexts, partial(_scan_context, o, selector, reqs), o.verbose, processes=True)

    def show():
        render_fleet(answers, render_options(o, not no_headers), sys.stdout)
        sys.stdout.flush()
        if o.output in ("text", "wide"):
            for a in answers:
                if a.report is not None:
                    sys.stderr.write(f"{one_line(a.context)}: {a.report.summary}\n")

    down = [a for a in answers if a.report is None]
    open_ = [a for a in answers if a.report is not None and not a.report.determined]
    undetermined = None
    if down:
        named = ", ".join(one_line(a.context) for a in down[:3])
        undetermined = f"{len(down)} of {len(answers)} clusters not scanned ({named})"
    elif open_:
        named = ", ".join(one_line(a.context) for a in open_[:3])
        undetermined = f"some pods undetermined in {named}: 'explain pod' says why"
    blocked = any(a.report is not None and a.report.blocked for a in answers)
    return finish(answers, o, show=show, undetermined=undetermined, blocked=blocked)


def _answer(o: Options, got, selector, reqs, watch: bool, no_headers: bool, exporter=None):
    """One cluster's answer (or, with -w, the loop that keeps it; exporter: the metrics it serves, if any)."""
    evaluate = _evaluator(o, got, selector, reqs, watch)
    snap = got.snapshot
    if watch:
        session, first = got.session, [snap]
        del got, snap  # the first answer takes the snapshot (cli/watch.py _first): not kept here for hours
        if exporter is not None:
            exporter.session = session
        watch_status(o, session, first, evaluate, no_headers, exporter)
        return
    from kubectl_dra.model.snapshot import PENDING_PODS

    report = evaluate(snap)
    for g in snap.gaps:
        if g.resource == PENDING_PODS and any(r.queue for r in report.rows):  # a pending pod's answer depends on it
            note(
                f"warning: cannot list the pending pods of every namespace ({one_line(g.message)}): the queue holds "
                "only the pods listed here, and pods elsewhere may be ahead of them"
            )
    empty, wrong_scope = _empty_scope(report, snap.source, o.namespace is not None)
    undetermined = empty if wrong_scope else None if report.determined else one_line(_undetermined(report))

    def show():
        _show_scan(report, o, no_headers, None if wrong_scope else empty)

    return finish(report, o, show=show, undetermined=undetermined, blocked=report.blocked)


def _holds_every_namespace(snap, o: Options) -> bool:
    """Whether the snapshot holds the pods of every namespace that status names where its own has no DRA pod: a
    file's every pod, else (live, a bundle) every pod not finished: the pending and the bound ones, which the queue
    and NodeResourcesFit list anyway (no read of its own)."""
    from kubectl_dra.model.snapshot import PENDING_PODS

    if snap.source == "files":
        return True
    return not o.alone and snap.bound_pods and not any(g.resource == PENDING_PODS for g in snap.gaps)


def _empty_scope(report, source: str, asked: bool) -> tuple[str | None, bool]:
    """What status says when no pod in its scope uses DRA (None when some does), and whether that is exit 2.

    The other namespaces' pods that use DRA are named, with how to look there. From a plain file that is exit 2 when
    the namespace was only assumed (no -n: default) or the input holds no pod in it at all (a dump made for another
    namespace, a mistyped -n): the scan looked where the input says nothing, and a CI gate must not pass on it. Live,
    and for a namespace asked for that the input does cover, it is kubectl get's "No resources found": exit 0."""
    if report.rows:
        return None, False
    from kubectl_dra.model.scope import found_elsewhere
    from kubectl_dra.render.escape import esc

    ns, sel = report.scope["namespace"], report.scope.get("selector")
    where = "any namespace" if ns is None else f"namespace {ns}"
    head = f"No pods{f' matching {sel!r}' if sel else ''} use DRA in {where}"
    if not report.elsewhere:
        return esc(f"{head}."), False
    holder = "the input" if source != "live" else "the cluster"
    counted = "" if source == "files" else "not counting finished pods"  # (what the cluster was asked for)
    hint = f"{holder} has {found_elsewhere(dict(report.elsewhere), counted)}"
    if source != "files" or (asked and report.namespace_has_pods):
        return esc(f"{head}; {hint}"), False
    why = "the input holds no pod there" if not report.namespace_has_pods else "assumed: no -n given"
    return esc(f"{head[0].lower()}{head[1:]} ({why}); {hint}"), True


def _undetermined(report) -> str:
    """Why the scan exits 2: the pods whose state is open (a few by name), or what it could not see."""
    if report.unseen:
        return f"the scan is incomplete: could not see {'; '.join(short_unseen(u) for u in report.unseen)}"
    open_ = [r for r in report.rows if r.state == "Unknown"]
    names = ", ".join(f"{r.namespace}/{r.pod}" for r in open_[:3]) + (" ..." if len(open_) > 3 else "")
    return f"{len(open_)} pod{'' if len(open_) == 1 else 's'} undetermined ({names}): 'explain pod' says why"


def unseen_pods(gaps: list) -> tuple[str, ...]:
    """One line per kind of refusal: the namespaces whose pods could not be listed, every one by name (the JSON
    and YAML documents carry them all; text shortens the list, short_unseen), then why."""
    out = [f"pods: {g.message}" for g in gaps if not g.namespace]
    refused = [g for g in gaps if g.namespace]
    if len(refused) == 1:
        out.append(f"pods in namespace {refused[0].namespace}: {refused[0].message}")
    elif refused:
        names = sorted(g.namespace for g in refused)
        out.append(f"pods in {len(names)} namespaces ({', '.join(names)}): {refused[0].reason}")
    return tuple(out)


def _show_scan(report, o: Options, no_headers: bool = False, empty: str | None = None) -> None:
    """The table (or names, or the document) on stdout; in text, the count of pods by state after it on stderr,
    where kubectl prints "No resources found" (empty: what to say instead when there are no rows; None when that
    is the `error:` line of exit 2): stdout stays the rows a script reads (--no-headers, -o name, awk). An exit
    code 2 then ends with exactly one `error:` line (finish)."""
    from kubectl_dra.render.escape import esc

    scan_rows(report, o, header=not no_headers)
    sys.stdout.flush()
    text = o.output in ("text", "wide")
    if not report.rows and text:
        if empty is not None:
            note(empty)
    elif text:
        sys.stderr.write(report.summary + "\n")
        for line in report.queue.shortfalls if report.queue is not None else ():
            note(f"queue: {esc(line.text)}")
    for line in report.unseen:
        note(f"warning: could not see {one_line(short_unseen(line))}")
