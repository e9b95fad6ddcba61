"""Command line: flags -> Options (options.py) -> gather -> analyse -> render. The only layer that knows about click."""

from __future__ import annotations

import gc
import os
import shutil
import sys
from dataclasses import replace

import click

from kubectl_dra import __version__
from kubectl_dra.cli.options import VERSIONS_METAVAR, Options
from kubectl_dra.errors import DraError, ExitCode
from kubectl_dra.features import SUPPORTED_VERSIONS
from kubectl_dra.model.scope import base_namespace
from kubectl_dra.render import FORMATS

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def prog_name(argv0: str | None = None) -> str:
    """`kubectl dra` when run as a kubectl plugin (kubectl-dra, or krew's kubectl-dra / kubectl_dra link)."""
    base = os.path.basename(argv0 if argv0 is not None else (sys.argv[0] if sys.argv else "kubectl-dra"))
    if base.endswith(".exe"):
        base = base[:-4]
    for prefix in ("kubectl-", "kubectl_"):
        if base.startswith(prefix):
            return "kubectl " + base[len(prefix) :].replace("_", "-")
    return "kubectl dra"


def _flags(*opts):
    """Apply click options in the order given (the order --help lists them)."""

    def deco(f):
        for o in reversed(opts):
            f = o(f)
        return f

    return deco


# Flag groups, each flag once with the help that is true for every command that takes it. A command composes the
# groups it honours (kubectl's per-command flag sets); Options.from_click gives the others their defaults.
_CONNECTION = (
    click.option(
        "--kubeconfig", default=None, help="Path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config)"
    ),
    click.option("--context", default=None, help="The kubeconfig context to use"),
    click.option(
        "--request-timeout",
        default="30s",
        show_default=True,
        help="Time to wait for each API call (e.g. 10s, 1m; 0 waits forever)",
    ),
    click.option(
        "--chunk-size",
        type=click.IntRange(min=0),
        default=500,
        show_default=True,
        help="Return large lists in chunks of this many objects, as kubectl does (0: in one answer)",
    ),
)


def _scope(namespace_help: str, all_help: str) -> tuple:
    return (
        click.option("-n", "--namespace", default=None, help=namespace_help),
        click.option("-A", "--all-namespaces", is_flag=True, help=all_help),
    )


_INPUT = (
    click.option(
        "--from-file",
        "from_files",
        multiple=True,
        type=click.Path(allow_dash=True),
        help="Read objects from a YAML/JSON file, a directory or - (stdin) instead of a cluster (repeatable)",
    ),
)
_SEMANTICS = (
    click.option(
        "--kubernetes-version",
        default=None,
        metavar=VERSIONS_METAVAR,
        help="Semantics to assume (default: the server's version, else the newest released)",
    ),
    click.option(
        "--feature-gates",
        default=None,
        metavar="Name=true,...",
        help="Override the version's default DRA feature gates",
    ),
)


def _output(choices=FORMATS, default: str = "text", help: str = "Output format") -> tuple:
    return (click.option("-o", "--output", type=click.Choice(choices), default=default, show_default=True, help=help),)


_NO_HEADERS = (click.option("--no-headers", is_flag=True, help="Print the table without its header line"),)
_ALL_DEVICES = (
    click.option("--all-devices", is_flag=True, help="List every device each request considered, with its reason"),
)
_EXIT_ZERO = (click.option("--exit-zero", is_flag=True, help="Exit 0 even when blocked (errors still exit 2)"),)
_ALONE = (
    click.option(
        "--alone",
        is_flag=True,
        help="Judge each pod as if it were the only one waiting (default: pending pods compete in the "
        "scheduler's queue order)",
    ),
)
_COLOR = (click.option("--no-color", is_flag=True, help="Disable colour (also when NO_COLOR is set)"),)
_VERBOSE = (click.option("-v", "--verbose", is_flag=True, help="Show tracebacks for internal errors"),)


# devices is cluster-scoped: -n and -A, passed from a kubectl habit or a script that passes -n to every command, are
# accepted and ignored as kubectl does for cluster-scoped resources (`kubectl get nodes -n x`); hidden from --help,
# since they change nothing (the inventory covers every namespace's holders)
_CLUSTER_SCOPED = (
    click.option("-n", "--namespace", hidden=True, expose_value=False),
    click.option("-A", "--all-namespaces", is_flag=True, hidden=True, expose_value=False),
)


def _gather(
    o: Options,
    *,
    pod_name=None,
    claim_name=None,
    selector=None,
    workload=None,
    partial=False,
    watch=False,
    everything=False,
    raw_out=None,
    events=True,
    analyse=True,
    pending_pods=False,
    drivers=False,
    bound_pods=False,
):
    """The snapshot and the namespace the named object is in (with watch: and the LiveSession that follows it).
    events=False: without Events, for a command that never reads them (neither listed live nor kept from files).
    analyse: the snapshot goes to an analysis, whose loading a live gather overlaps with its lists."""
    if watch and o.from_files:
        raise DraError("--watch follows the cluster's watch API: it cannot watch --from-file input")
    if o.from_files:
        from kubectl_dra.gather.files import load_files

        snap = load_files(list(o.from_files), o.namespace, skip=frozenset() if events else frozenset({"Event"}))
        return snap, _named_namespace(snap, o, pod_name, claim_name, workload)
    from kubectl_dra.gather.live import gather_live

    got = gather_live(
        kubeconfig=o.kubeconfig,
        context=o.context,
        namespace=o.namespace,
        timeout=o.timeout,
        chunk_size=o.chunk_size,
        pod_name=pod_name,
        claim_name=claim_name,
        selector=selector,
        workload=workload,
        partial=partial,
        everything=everything,
        raw_out=raw_out,
        pending_pods=pending_pods and not watch,
        drivers=drivers,
        bound_pods=bound_pods,
        all_namespaces=o.all_namespaces,
        progress=sys.stderr.isatty() and o.output in ("text", "wide"),
        watch=watch,
        events=events,
        while_waiting=(lambda server_version: _preload(o, server_version)) if analyse else None,
    )
    snap, session = got if watch else (got, None)
    ns = _named_namespace(snap, o, pod_name, claim_name, workload)
    return (snap, ns, session) if watch else (snap, ns)


def _named_namespace(snap, o: Options, pod_name, claim_name, workload) -> str:
    """The namespace the command looks in (model/scope.py): the snapshot's (-n, else the context's or the bundle's,
    else default), or with -A the one that holds the named object."""
    from kubectl_dra.model.scope import locate

    ns = snap.namespace or "default"
    if pod_name:
        return locate(snap, "Pod", pod_name, ns, o.all_namespaces)
    if claim_name:
        return locate(snap, "ResourceClaim", claim_name, ns, o.all_namespaces)
    if workload is not None:
        return locate(snap, workload[0], workload[3], ns, o.all_namespaces)
    return ns


def _preload(o: Options, server_version: str | None):
    import kubectl_dra.render.text  # noqa: F401
    from kubectl_dra.analyze import preload

    return preload(o.semantics(server_version))


def _terminal(o: Options) -> tuple[bool, int | None]:
    """Colour (a terminal, no NO_COLOR/--no-color, or FORCE_COLOR) and the width text is fitted to (a terminal only)."""
    text = o.output in ("text", "wide")
    color = (
        sys.stdout.isatty() and not o.no_color and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
    ) or bool(os.environ.get("FORCE_COLOR"))
    return color and text, shutil.get_terminal_size().columns if text and sys.stdout.isatty() else None


def _ascii(o: Options) -> bool:
    """Plain ASCII marks: under NO_COLOR/--no-color, on a dumb terminal, or when stdout cannot encode UTF-8."""
    enc = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
    return bool(o.no_color or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb" or enc != "utf8")


def _emit(report, o: Options) -> None:
    from kubectl_dra.render import render

    color, width = _terminal(o)
    render(report, o.output, sys.stdout, color=color, width=width, all_devices=o.all_devices, ascii_marks=_ascii(o))
    sys.stdout.flush()
    if not report.determined:
        sys.stderr.write(f"error: {report.summary} (the report above says what could be concluded)\n")
        raise SystemExit(int(ExitCode.ERROR))
    if report.blocked and not o.exit_zero:
        raise SystemExit(int(ExitCode.BLOCKED))


def _emit_many(reports: list, o: Options) -> None:
    """Several pods: text one after another (as kubectl describe), JSON/YAML one List; the worst exit code wins
    (2 undetermined over 1 blocked over 0)."""
    from kubectl_dra.render import render_many

    color, width = _terminal(o)
    render_many(
        reports, o.output, sys.stdout, color=color, width=width, all_devices=o.all_devices, ascii_marks=_ascii(o)
    )
    sys.stdout.flush()
    open_ = [r for r in reports if not r.determined]
    if open_:
        sys.stderr.write(f"error: {len(open_)} of {len(reports)} pod(s) undetermined; first: {open_[0].summary}\n")
        raise SystemExit(int(ExitCode.ERROR))
    if any(r.blocked for r in reports) and not o.exit_zero:
        raise SystemExit(int(ExitCode.BLOCKED))


def _watch_loop(session, first, each) -> None:
    """first(): print the state now; then each() after every settled change, until Ctrl-C (exit 130, quietly)."""
    try:
        first()
        sys.stdout.flush()
        session.start()
        while True:
            session.wait_for_change()
            each()
            sys.stdout.flush()
    except KeyboardInterrupt:
        session.stopped = True
        sys.stdout.flush()
        raise SystemExit(int(ExitCode.INTERRUPTED)) from None


def _watch_pod(o: Options, session, snap, ns: str, name: str) -> None:
    """explain pod NAME -w: the report, then one line per change of the verdict (-o json|yaml: the whole report)."""
    import time

    from kubectl_dra.analyze.explain import explain_pods
    from kubectl_dra.render.escape import esc

    last: dict = {}

    def evaluate(snap):
        try:
            return explain_pods(snap, o.semantics(snap.server_version), [(ns, name)], o.alone)[0], None
        except DraError as e:
            return None, e.message

    def show(first: bool) -> None:
        report, err = evaluate(snap if first else session.snapshot())
        key = err if report is None else (report.verdict.to_dict(), [str(p) for p in report.body.get("pieces", ())])
        if not first and key == last.get("key"):
            return
        last["key"] = key
        if report is None:
            sys.stderr.write(f"error: {_one_line(err)}\n")
            return
        if first or o.output in ("json", "yaml"):
            from kubectl_dra.render import render

            color, width = _terminal(o)
            render(
                report, o.output, sys.stdout, color=color, width=width, all_devices=o.all_devices, ascii_marks=_ascii(o)
            )
            if first and o.output in ("text", "wide"):
                sys.stdout.write("\nWatching (Ctrl-C to stop):\n")
            return
        stamp = time.strftime("%H:%M:%S")
        from kubectl_dra.render.text import verdict_headline

        words = verdict_headline(report.to_dict())[0]
        sys.stdout.write(f"{stamp}  {words}  {esc(' '.join(report.verdict.summary.split()))}\n")

    _watch_loop(session, lambda: show(True), lambda: show(False))


def _watch_status(o: Options, session, snap, evaluate, no_headers: bool = False) -> None:
    """status -w: the table, then the rows that changed (a new pod, another state or reason), as kubectl get -w."""
    shown: dict = {}

    def show(first: bool) -> None:
        report = evaluate(snap if first else session.snapshot())
        rows = [r for r in report.rows if shown.get((r.namespace, r.pod)) != _row_key(r)]
        for r in report.rows:
            shown[(r.namespace, r.pod)] = _row_key(r)
        if not rows and not first:
            return
        _scan_rows(replace(report, rows=tuple(rows)), o, header=first and not no_headers)
        for line in report.unseen if first else ():
            sys.stderr.write(f"warning: could not see {_one_line(_short_unseen(line))}\n")

    _watch_loop(session, lambda: show(True), lambda: show(False))


def _row_key(r) -> tuple:
    return (r.state, r.missing, r.reason, r.phase, r.node)


class _HelpGroup(click.Group):
    """A command group that, given no subcommand, prints its help and exits 0, as kubectl does."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("invoke_without_command", True)
        kwargs.setdefault("no_args_is_help", False)
        kwargs.setdefault("subcommand_metavar", "COMMAND [ARGS]...")
        super().__init__(*args, **kwargs)

    def parse_args(self, ctx, args):
        if not args and not ctx.resilient_parsing:  # (completion parses without arguments too)
            click.echo(ctx.get_help(), color=ctx.color)
            ctx.exit(0)
        return super().parse_args(ctx, args)


class _ExplainGroup(_HelpGroup):
    """`explain TYPE/NAME` as kubectl writes it (deploy/web, pod/web-0) is `explain pod TYPE/NAME`."""

    def resolve_command(self, ctx, args):
        if args and "/" in args[0] and not args[0].startswith("-"):
            return "pod", self.commands["pod"], args
        return super().resolve_command(ctx, args)


@click.group(cls=_HelpGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "--version", prog_name="kubectl-dra", message="%(prog)s %(version)s")
def cli():
    """Dynamic Resource Allocation (DRA), explained: why a pod's claims can or cannot get their devices (explain,
    status, match), what is free and who holds it (devices), what is wrong in manifests (lint), and a bundle that
    replays the answers offline (dump).

    \b
    Exit codes: 0 nothing blocks, 1 blocked / not satisfiable,
    2 the tool could not do its job.
    """


@cli.group(cls=_ExplainGroup, context_settings=CONTEXT_SETTINGS, short_help="Which piece a pod or claim lacks, and why")
def explain():
    """Explain a pod's or a claim's DRA state: which piece is missing and why."""


_WATCH = click.option(
    "-w", "--watch", is_flag=True, help="After the report, print what changes, as the cluster changes (Ctrl-C ends)"
)


@explain.command(
    "pod",
    context_settings=CONTEXT_SETTINGS,
    short_help="Why a pod (NAME, -l, or TYPE/NAME) does or does not get its devices",
)
@click.argument("name", required=False)
@click.option("-l", "--selector", default=None, help="Explain every pod this label selector picks (as kubectl -l)")
@_WATCH
@_flags(
    *_scope(
        "Namespace of the pod (default: the kubeconfig context's)",
        "Find the named pod in any namespace; with -l, pick pods in every namespace",
    ),
    *_INPUT,
    *_SEMANTICS,
    *_output(),
    *_ALL_DEVICES,
    *_ALONE,
    click.option(
        "--replicas",
        type=click.IntRange(1, 10_000),
        default=None,
        help="With TYPE/NAME (deploy, sts, rs, job): would N more pods of it get their devices? How many fit, "
        "where, and why the first that does not",
    ),
    *_EXIT_ZERO,
    *_CONNECTION,
    *_COLOR,
    *_VERBOSE,
)
def explain_pod_cmd(name, selector, watch, replicas, **params):
    """Explain why pod NAME (or each pod -l picks) does (not) get its devices.

    \b
    Examples:
      # Why is this pod Pending?
      kubectl dra explain pod recomendador-7d9c8b6f5-x2x4k -n default
      # A Deployment's pods, whose names you do not know (add -A for every namespace)
      kubectl dra explain pod -l app=recomendador
      # The same, offline, on a dump made with `kubectl get ... -o yaml`
      kubectl dra explain pod recomendador-7d9c8b6f5-x2x4k --from-file dump.yaml
      # For CI: JSON, exit 1 when blocked
      kubectl dra explain pod my-pod -o json
      # Can this Deployment scale by 8? How many more pods get GPUs, where, and why not the rest
      kubectl dra explain deploy/inference --replicas 8
    """
    o = Options.from_click(params)
    workload = None
    if name and "/" in name:
        from kubectl_dra.analyze.workloads import KINDS, parse_type_name

        kind, name = parse_type_name(name)
        if kind != "Pod":
            workload = KINDS[kind.lower()] + (name,)
    if replicas is not None and (workload is None or workload[0] == "DaemonSet"):
        raise click.UsageError("--replicas takes a workload: deploy/NAME, sts/NAME, rs/NAME or job/NAME")
    if replicas is not None and (watch or o.alone):
        raise click.UsageError("--replicas cannot be combined with --watch or --alone")
    if workload is not None:
        if selector:
            raise click.UsageError("give a TYPE/NAME or -l SELECTOR, not both")
        _explain_workload(o, workload, replicas)
        return
    if not name and not selector:
        raise click.UsageError("Missing argument 'NAME': give a pod NAME or -l SELECTOR")
    if name and selector:
        raise click.UsageError("give a pod NAME or -l SELECTOR, not both")
    if watch and not name:
        raise click.UsageError("--watch follows one pod: give its NAME (or watch many with 'status -w')")
    if name and watch:
        snap, ns, session = _gather(o, pod_name=name, watch=True, drivers=True, bound_pods=True)
        _watch_pod(o, session, snap, ns, name)
        return
    if name:
        snap, ns = _gather(o, pod_name=name, pending_pods=not o.alone, drivers=True, bound_pods=True)
        from kubectl_dra.analyze.explain import explain_pods  # after the gather, which overlaps its loading

        _emit(explain_pods(snap, o.semantics(snap.server_version), [(ns, name)], o.alone)[0], o)
        return
    from kubectl_dra.model.labels import matches, parse_selector

    reqs = parse_selector(selector)
    snap, ns = _gather(o, selector=selector, pending_pods=not o.alone, drivers=True, bound_pods=True)
    from kubectl_dra.analyze.explain import explain_pods

    pods = sorted(
        (p["metadata"].get("namespace") or ns, p["metadata"]["name"])
        for p in snap.pods
        if (o.all_namespaces or (p["metadata"].get("namespace") or ns) == ns)
        and matches(reqs, p["metadata"].get("labels"))
    )
    if not pods:
        where = "any namespace" if o.all_namespaces else f"namespace {ns}"
        sys.stderr.write(f"No pods match {selector!r} in {where}.\n")
        return
    _emit_many(explain_pods(snap, o.semantics(snap.server_version), pods, o.alone), o)


def _explain_workload(o: Options, workload: tuple, replicas: int | None = None) -> None:
    """explain deploy/NAME (sts, rs, ds, job): each pod the workload controls; with replicas, N more of them."""
    kind, _, resource, wname = workload
    snap, ns = _gather(o, workload=workload, pending_pods=not o.alone, drivers=True, bound_pods=True)
    from kubectl_dra.analyze.explain import explain_pods
    from kubectl_dra.analyze.workloads import find_workload, pods_of

    w = find_workload(snap, kind, ns, wname)
    if replicas is not None:
        from kubectl_dra.analyze.replicas import explain_replicas

        _emit(explain_replicas(snap, o.semantics(snap.server_version), w, replicas), o)
        return
    pods = pods_of(snap, w)
    if not pods:
        # Pods that were never created (FailedCreate, a quota, a missing template): the pod template as a new pod,
        # and never "nothing blocks" without a visible reason (DRA019).
        from kubectl_dra.analyze.workload_report import explain_workload_without_pods

        _emit(explain_workload_without_pods(snap, o.semantics(snap.server_version), w), o)
        return
    _emit_many(explain_pods(snap, o.semantics(snap.server_version), pods, o.alone), o)


@explain.command("claim", context_settings=CONTEXT_SETTINGS)
@click.argument("name")
@_flags(
    *_scope("Namespace of the claim (default: the kubeconfig context's)", "Find the named claim in any namespace"),
    *_INPUT,
    *_SEMANTICS,
    *_output(),
    *_ALL_DEVICES,
    *_EXIT_ZERO,
    *_CONNECTION,
    *_COLOR,
    *_VERBOSE,
)
def explain_claim_cmd(name, **params):
    """Explain the allocation state of ResourceClaim NAME.

    \b
    Examples:
      kubectl dra explain claim my-claim -n team-a
    """
    o = Options.from_click(params)
    snap, ns = _gather(o, claim_name=name)
    from kubectl_dra.analyze.explain import explain_claim

    _emit(explain_claim(snap, o.semantics(snap.server_version), ns, name), o)


@cli.command("status", context_settings=CONTEXT_SETTINGS, short_help="Every pod that uses DRA, blocked first")
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
    from kubectl_dra.analyze.scan import scan

    snap, ns = got[0], got[1]
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
        _watch_status(o, got[2], snap, evaluate, no_headers)
        return
    from kubectl_dra.model.snapshot import PENDING_PODS

    report = evaluate(snap)
    for g in snap.gaps:
        if g.resource == PENDING_PODS and any(r.queue for r in report.rows):  # a pending pod's answer depends on it
            sys.stderr.write(
                f"warning: cannot list the pending pods of every namespace ({_one_line(g.message)}): the queue holds "
                "only the pods listed here, and pods elsewhere may be ahead of them\n"
            )
    _emit_scan(report, o, no_headers)


def _scan_rows(report, o: Options, header: bool = True) -> None:
    """The scan's rows as -o asks: `pod/NAME` a line for -o name (kubectl get -o name, also with -A), else the table
    or the document of render/scan.py."""
    if o.output == "name":
        from kubectl_dra.render.escape import esc

        for r in report.rows:
            sys.stdout.write(f"pod/{esc(r.pod)}\n")
        return
    from kubectl_dra.render.scan import render_scan

    color, width = _terminal(o)
    render_scan(report, o.output, sys.stdout, color=color, width=width, header=header)


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


def _short_unseen(line: str) -> str:
    """A line of _unseen_pods for a terminal: the first five namespaces and how many more."""
    head, sep, rest = line.partition(" namespaces (")
    if not sep or "): " not in rest:
        return line
    names, _, why = rest.partition("): ")
    names_l = names.split(", ")
    shown = ", ".join(names_l[:5]) + (f" and {len(names_l) - 5} more" if len(names_l) > 5 else "")
    return f"{head}{sep}{shown}): {why}"


def _emit_scan(report, o: Options, no_headers: bool = False) -> None:
    """The table (or names, or the document) on stdout; in text, the count of pods by state after it on stderr,
    where kubectl prints "No resources found": stdout stays the rows a script reads (--no-headers, -o name, awk).
    An exit code 2 ends with exactly one `error:` line."""
    from kubectl_dra.render.escape import esc

    _scan_rows(report, o, header=not no_headers)
    sys.stdout.flush()
    text = o.output in ("text", "wide")
    if not report.rows and text:
        where = "any namespace" if report.scope["namespace"] is None else f"namespace {report.scope['namespace']}"
        sel = f" matching {report.scope['selector']!r}" if report.scope.get("selector") else ""
        sys.stderr.write(f"No pods{sel} use DRA in {esc(where)}.\n")
    elif text:
        sys.stderr.write(report.summary + "\n")
        width = shutil.get_terminal_size().columns if sys.stderr.isatty() else None
        for line in report.queue.shortfalls if report.queue is not None else ():
            note = f"queue: {esc(line.text)}"
            if width:  # a note on a terminal wraps at a word, its continuation indented, as the table's reasons
                import textwrap

                note = textwrap.fill(note, width - 1, subsequent_indent="  ")
            sys.stderr.write(note + "\n")
    for line in report.unseen:
        sys.stderr.write(f"warning: could not see {_one_line(_short_unseen(line))}\n")
    if not report.determined:
        sys.stderr.write(f"error: {_one_line(_undetermined(report))}\n")
        raise SystemExit(int(ExitCode.ERROR))
    if report.blocked and not o.exit_zero:
        raise SystemExit(int(ExitCode.BLOCKED))


@cli.command("devices", context_settings=CONTEXT_SETTINGS, short_help="What is free and who holds it")
@click.option("--list", "listing", is_flag=True, help="List every device (any filter lists too)")
@click.option("--node", default=None, help="Devices a node can use, and the pods holding them (drain, upgrade)")
@click.option("--driver", default=None, help="Only this driver's devices")
@click.option("--class", "device_class", default=None, help="Only devices that pass this DeviceClass's selectors")
@click.option("--pool", default=None, help="Only this pool's devices")
@click.option("--free", is_flag=True, help="Only devices nothing holds, taints or reports unhealthy")
@click.option("-l", "--selector", default=None, help="Only devices reachable from nodes with these labels")
@click.option(
    "--where",
    default=None,
    metavar="CEL",
    help='A device selector, e.g. \'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0\'',
)
@_flags(
    *_INPUT,
    *_SEMANTICS,
    *_output(
        FORMATS + ("name",),
        help="Output format (name: device/DRIVER/POOL/DEVICE, one a line; name and --no-headers list the devices)",
    ),
    *_NO_HEADERS,
    *_CONNECTION,
    *_COLOR,
    *_VERBOSE,
    *_CLUSTER_SCOPED,
)
def devices_cmd(listing, node, driver, device_class, pool, free, selector, where, no_headers, **params):
    """What is free and who holds it: every published device with its classes and state.

    By default a summary per node and per class (devices free, allocated, shared, tainted, unhealthy, unusable) and,
    for partitionable devices, how many more of each partition still fit. --list or any filter lists the devices;
    --node also lists the pods that hold the node's devices and through which claims. Where ResourcePoolStatusRequests
    (alpha) exist and are readable, their counts are shown beside kubectl-dra's; none is ever created.

    \b
    Examples:
      # What is free, per node and class?
      kubectl dra devices
      # Free GPUs with at least 40Gi
      kubectl dra devices --free --where 'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'
      # Before draining node-07: whose devices are these?
      kubectl dra devices --node node-07
    """
    from kubectl_dra.analyze.inventory import inventory
    from kubectl_dra.render.inventory import render_inventory

    o = Options.from_click(params)
    labels = None
    if selector:
        from kubectl_dra.model.labels import matches, parse_selector

        reqs = parse_selector(selector)
        labels = lambda lbl: matches(reqs, lbl)  # noqa: E731
    # Every namespace's pods: who holds a device (reservedFor) and what the kubelet reports of its health.
    snap, _ = _gather(replace(o, all_namespaces=True), selector="", partial=True, events=False, analyse=False)
    driver, pool = _check_device_filters(snap, node, driver, device_class, pool)
    filters = {
        "node": node,
        "driver": driver,
        "class": device_class,
        "pool": pool,
        "free": free,
        "where": where,
        "selector": selector,
        "labels": labels,
    }
    report = inventory(snap, o.semantics(snap.server_version), filters)
    color, width = _terminal(o)
    listed = listing or no_headers or o.output == "name" or any(v for k, v in filters.items() if k != "labels")
    if o.output == "name":
        from kubectl_dra.render.escape import esc

        for r in report.rows:
            sys.stdout.write(f"device/{esc(r.id)}\n")
    elif no_headers and o.output in ("text", "wide"):
        import io

        buf = io.StringIO()
        render_inventory(report, o.output, buf, color, width, listed)
        table = buf.getvalue().split("\n\n", 1)[0]  # the device list: what follows (holders, counters) is not
        sys.stdout.write("".join(table.splitlines(keepends=True)[1:]).rstrip("\n") + "\n" if report.rows else "")
    else:
        render_inventory(report, o.output, sys.stdout, color, width, listed)
    sys.stdout.flush()
    if not report.rows and o.output in ("text", "wide"):
        sys.stderr.write(f"No devices{' match' if listed else ' are published'} ({report.total} published).\n")
    for line in report.where_errors:
        sys.stderr.write(f"warning: --where failed on {_one_line(line)} (counted as not matching)\n")
    if report.unseen:
        sys.stderr.write(f"error: the inventory is incomplete: could not {_one_line('; '.join(report.unseen))}\n")
        raise SystemExit(int(ExitCode.ERROR))


def _check_device_filters(snap, node, driver, device_class, pool) -> tuple:
    """A --node, --class, --driver or --pool that names nothing in the cluster is a typo, not an empty answer: one
    error (exit 2) saying so, with the nearest name. A name that exists and matches no device is the normal empty
    answer. Unchecked where the kind could not be read. --pool also takes DRIVER/POOL, as the output prints a pool:
    returns the (driver, pool) filters to apply."""
    import difflib

    unread = {g.resource.split(".")[0] for g in snap.gaps}

    def missing(what: str, name: str, known: set) -> DraError:
        near = difflib.get_close_matches(name, sorted(known), n=1)
        hint = f' (did you mean "{near[0]}"?)' if near else ""
        return DraError(f'{what} "{name}" not found{hint}')

    specs = [sl.get("spec") or {} for sl in snap.slices]
    if node and not {"nodes", "resourceslices"} & unread:
        known = {(n.get("metadata") or {}).get("name") for n in snap.nodes} | {s.get("nodeName") for s in specs}
        if node not in known:
            raise missing("node", node, {k for k in known if isinstance(k, str)})
    if device_class and "deviceclasses" not in unread:
        known = {(c.get("metadata") or {}).get("name") for c in snap.classes}
        if device_class not in known:
            raise missing("DeviceClass", device_class, {k for k in known if isinstance(k, str)})
    if "resourceslices" in unread:
        return driver, pool
    drivers = {s.get("driver") for s in specs if isinstance(s.get("driver"), str)}
    if driver and driver not in drivers:
        raise missing("driver", driver, drivers)
    pools = {(s.get("driver"), (s.get("pool") or {}).get("name")) for s in specs}
    if pool and not any(p == pool and (not driver or d == driver) for d, p in pools):
        d, _, p = pool.partition("/")  # DRIVER/POOL; a pool name may hold slashes, a driver name never does
        if p and (d, p) in pools and (not driver or driver == d):
            return d, p
        known = {p for d, p in pools if isinstance(p, str) and (not driver or d == driver)}
        known |= {f"{d}/{p}" for d, p in pools if isinstance(p, str) and (not driver or d == driver)}
        raise missing("pool", pool, known)
    return driver, pool


@cli.command("dump", context_settings=CONTEXT_SETTINGS, short_help="A bundle that replays the answers offline")
@click.option("-l", "--selector", default=None, help="Only pods this label selector picks (as kubectl -l)")
@click.option(
    "--output-file",
    "filename",
    default=None,
    type=click.Path(dir_okay=False),
    help="Write the bundle to this file (default: standard output)",
)
@click.option("-f", "--filename", "old_filename", default=None, hidden=True, expose_value=True)
@_flags(
    *_scope("Namespace to dump (default: the kubeconfig context's)", "Dump every namespace"),
    *_output(("yaml", "json"), default="yaml"),
    *_CONNECTION,
    *_VERBOSE,
)
def dump_cmd(selector, filename, old_filename, **params):
    """Write every object kubectl-dra reads, as one bundle that --from-file reads back with the same answers.

    The namespace's (-n, default the context's; -A every namespace; -l some) pods, claims, templates, workloads,
    quotas and events, the cluster's DeviceClasses, ResourceSlices, DeviceTaintRules and Nodes, and a header with
    the server version, the resource.k8s.io versions served, the time and what could not be read. Nothing else: no
    Secrets or ConfigMaps, no managedFields (but a slice's managers' names), no environment values (but a
    driver's name). -o json or yaml (the default).

    \b
    Examples:
      # For a bug report: everything the answer depends on
      kubectl dra dump -n team-a --output-file bundle.yaml
      # ... and the same answer offline
      kubectl dra explain pod trainer-0 --from-file bundle.yaml
    """
    from kubectl_dra.gather.bundle import bundle
    from kubectl_dra.render.structured import data_to

    if old_filename is not None:
        raise click.UsageError(
            "dump writes to --output-file FILE (or standard output); -f names input in kubectl, not output"
        )
    o = Options.from_click(params)
    raw: list = []
    snap, ns = _gather(
        o,
        selector=selector or "",
        partial=True,
        everything=True,
        raw_out=raw,
        analyse=False,
        pending_pods=True,
        bound_pods=True,
    )
    scope = {"namespace": None if o.all_namespaces else ns, "selector": selector}
    text = data_to(bundle(raw, snap, scope), o.output)
    if filename:
        try:
            with open(filename, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as e:
            raise DraError(f"{filename}: {e.strerror or e}") from None
        sys.stderr.write(f"wrote {filename}: {len(raw) - 1} objects\n")
    else:
        sys.stdout.write(text)
    for g in snap.gaps:
        sys.stderr.write(f"warning: could not {_one_line(g.verb + ' ' + g.resource)}: {_one_line(g.message)}\n")


@cli.command("lint", context_settings=CONTEXT_SETTINGS, short_help="DRA mistakes in manifests, before apply")
@click.option(
    "-f",
    "--filename",
    "filenames",
    multiple=True,
    type=click.Path(allow_dash=True),
    help="Files, directories or - (stdin) to lint (repeatable)",
)
@click.option(
    "--from-file",
    "from_files",
    multiple=True,
    type=click.Path(allow_dash=True),
    help="A dump (or - for stdin) to use as the reference inventory (repeatable); alone, it is also what is linted",
)
@click.option("--kubeconfig", default=None, help="Use this cluster as the reference inventory")
@click.option("--context", default=None, help="Use this kubeconfig context's cluster as the reference")
@click.option("--request-timeout", default="30s", show_default=True, help="Time to wait for each API call")
@click.option(
    "--kubernetes-version",
    default=None,
    metavar=VERSIONS_METAVAR,
    help="The CEL environment to compile for (default: the reference server's, else the newest released)",
)
@click.option("-o", "--output", type=click.Choice(("text", "json", "sarif")), default="text", show_default=True)
@click.option(
    "--fail-on",
    type=click.Choice(("error", "warning", "info")),
    default="error",
    show_default=True,
    help="Exit 1 when a finding is at least this severe",
)
@click.option("-v", "--verbose", is_flag=True, help="Show tracebacks for internal errors")
def lint_cmd(filenames, from_files, kubeconfig, context, request_timeout, kubernetes_version, output, fail_on, verbose):
    """Catch DRA mistakes before kubectl apply: CEL that does not compile, attributes no device has, API versions
    the target does not serve, misplaced fields, broad DeviceTaintRules, duplicate extended resource names, names
    that resolve to nothing, devices asked for through DRA and a device plugin at once.

    The reference inventory (the attribute names devices publish, the classes and templates that exist) is the
    cluster when --kubeconfig or --context is given, a dump with --from-file, or none (those checks are skipped and
    the output says so). Exit codes: 0 clean, 1 a finding at or above --fail-on, 2 the linter could not run.

    \b
    Examples:
      kubectl dra lint -f manifests/
      helm template . | kubectl dra lint -f - --from-file cluster-dump.yaml
      kubectl dra lint -f claim.yaml --context prod -o sarif > dra.sarif
    """
    from kubectl_dra.analyze.lint import SEVERITY_RANK, lint
    from kubectl_dra.findings.registry import REGISTRY
    from kubectl_dra.gather.manifests import load_manifests
    from kubectl_dra.render.lint import render_lint

    if not filenames and not from_files:
        raise click.UsageError("give the manifests with -f PATH (or - for stdin)")
    _stdin_once(filenames, from_files)
    o = Options.from_click(
        {
            "namespace": None,
            "all_namespaces": True,
            "kubeconfig": kubeconfig,
            "context": context,
            "request_timeout": request_timeout,
            "output": "text",
            "from_files": from_files,
            "kubernetes_version": kubernetes_version,
            "feature_gates": None,
            "all_devices": False,
            "exit_zero": False,
            "no_color": True,
            "verbose": verbose,
        }
    )
    reference, kind = None, "none"
    if from_files:
        from kubectl_dra.gather.files import load_files

        reference, kind = load_files(list(from_files), None), "dump"
    elif kubeconfig or context:
        reference, _ = _gather(o, selector="", partial=True, analyse=False)
        kind = "cluster"
    manifests = load_manifests(list(filenames) or list(from_files))
    sem = o.semantics(reference.server_version if reference is not None else None)
    report = lint(manifests, reference, sem, kind)
    render_lint(report, output, sys.stdout, REGISTRY, __version__)
    sys.stdout.flush()
    for note in report.notes:
        sys.stderr.write(f"note: {note}\n")
    if report.worst() >= SEVERITY_RANK[fail_on]:
        raise SystemExit(int(ExitCode.BLOCKED))


@cli.group(cls=_HelpGroup, context_settings=CONTEXT_SETTINGS, short_help="Which devices a claim would get, and why not")
def match():
    """Show which devices would satisfy a claim, and why every other device is rejected."""


@match.command("claim", context_settings=CONTEXT_SETTINGS)
@click.argument("name", required=False)
@click.option(
    "-f",
    "--filename",
    type=click.Path(allow_dash=True),
    default=None,
    help="A ResourceClaim or ResourceClaimTemplate manifest to match instead of a named claim, or a Pod "
    "manifest: the claim kube-scheduler would build from its DRA-backed extended resources (- for stdin)",
)
@_flags(
    *_scope(
        "Namespace of the claim, and of a -f manifest that names none (default: the kubeconfig context's)",
        "Find the named claim in any namespace",
    ),
    *_INPUT,
    *_SEMANTICS,
    *_output(),
    *_ALL_DEVICES,
    click.option(
        "--count",
        type=click.IntRange(1, 10_000),
        default=None,
        help="Would N copies of the claim get devices, one after another (after the pods waiting)? How many fit, "
        "where, and why the first that does not",
    ),
    *_EXIT_ZERO,
    *_CONNECTION,
    *_COLOR,
    *_VERBOSE,
)
def match_claim_cmd(name, filename, count, **params):
    """Show which devices would satisfy claim NAME (or the claim in -f FILE) now.

    \b
    Examples:
      # Before applying a claim: which devices would it get?
      kubectl dra match claim -f claim.yaml
      # Every device with its reason
      kubectl dra match claim my-claim --all-devices
      # Where would a pod's nvidia.com/gpu: 1 (a DRA-backed extended resource) go?
      kubectl dra match claim -f pod.yaml
      # How many more 1g.10gb partitions fit? Ask for 20 and read how many do
      kubectl dra match claim -f mig-1g.yaml --count 20
    """
    o = Options.from_click(params)
    if bool(name) == bool(filename):
        raise DraError("give either a claim NAME or -f FILE")
    _stdin_once([filename] if filename else [], o.from_files)
    claim = _manifest_claim(filename, o.namespace) if filename else None  # a bad file fails before any API call
    snap, ns = _gather(o, claim_name=name)
    if filename and ns != base_namespace(o.namespace, None):
        claim = _manifest_claim(filename, ns)  # a manifest without a namespace is in the command's (model/scope.py)
    from kubectl_dra.analyze.explain import match_claim

    sem = o.semantics(snap.server_version)
    if claim is not None and claim.get("kind") == "Pod":
        from kubectl_dra.analyze.extended import extended_claim_for

        claim = extended_claim_for(claim, snap, sem)
        if claim is None:
            raise DraError(
                f"{filename}: the pod requests no extended resource that a DeviceClass maps "
                "(with DRAExtendedResource on)"
            )
    if claim is None:
        claim = next(
            (c for c in snap.claims if c["metadata"].get("namespace") == ns and c["metadata"]["name"] == name), None
        )
        if claim is None:
            from kubectl_dra.model.scope import not_found

            raise not_found(snap, "ResourceClaim", name, ns)
    if count is not None:
        from kubectl_dra.analyze.replicas import match_count

        _emit(match_count(snap, sem, claim, count), o)
        return
    _emit(match_claim(snap, sem, claim), o)


def _stdin_once(*path_lists) -> None:
    """Standard input can be read once: `-` for -f and --from-file together would leave one of them empty."""
    if sum(1 for paths in path_lists for p in paths if p == "-") > 1:
        raise DraError("- (stdin) can be read only once: give it once")


def _manifest_claim(filename: str, namespace: str | None) -> dict:
    """The one ResourceClaim, ResourceClaimTemplate or Pod of match's -f file."""
    from kubectl_dra.gather.files import load_files

    own = load_files([filename], namespace)
    found = list(own.claims) + list(own.templates)
    if not found and len(own.pods) == 1:
        found = list(own.pods)  # its DRA-backed extended resources, as the claim the scheduler would build
    if len(found) != 1:
        raise DraError(
            f"{filename}: expected exactly one ResourceClaim or ResourceClaimTemplate (or a Pod with "
            f"DRA-backed extended resources), found {len(found)}"
        )
    return found[0]


@cli.command(context_settings=CONTEXT_SETTINGS)
@_flags(*_output(("text", "json", "yaml")))
def version(output):
    """Print the kubectl-dra version."""
    info = {
        "kubectlDra": __version__,
        "python": sys.version.split()[0],
        "supportedKubernetes": [f"{a}.{b}" for a, b in SUPPORTED_VERSIONS],
    }
    if output == "json":
        import json

        click.echo(json.dumps(info, indent=2))
    elif output == "yaml":
        from kubectl_dra.render.structured import data_to

        click.echo(data_to(info, "yaml"), nl=False)
    else:
        click.echo(f"kubectl-dra {__version__}")


@cli.command(context_settings=CONTEXT_SETTINGS)
@click.argument("shell", type=click.Choice(("bash", "zsh", "fish")))
def completion(shell):
    """Print a shell completion script.

    \b
    Examples:
      # bash, for the current shell
      source <(kubectl dra completion bash)
      # zsh, permanently
      kubectl dra completion zsh > "${fpath[1]}/_kubectl-dra"
    """
    from click.shell_completion import get_completion_class

    comp_cls = get_completion_class(shell)
    comp = comp_cls(cli, {}, "kubectl-dra", "_KUBECTL_DRA_COMPLETE")
    click.echo(comp.source())


def _one_line(text: str) -> str:
    from kubectl_dra.render.escape import esc

    return esc(" ".join(str(text).split()))


def main(argv=None) -> None:
    """Console-script entry point: every failure becomes one `error: ...` line and an exit code. Run as a process
    (argv None), it ends without freeing its objects one by one (a third of a second on 40,000 devices): output
    flushed and exit handlers run, then os._exit."""
    try:
        _main(argv)
    except SystemExit as e:
        if argv is None and isinstance(e.code, int):
            _fast_exit(e.code)
        raise


def _fast_exit(code: int) -> None:
    import atexit

    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):  # the reader went away, or the stream is closed
        pass
    except OSError as e:  # what is left of the output cannot be written (a full disk): not a success
        sys.stderr.write(f"error: could not write the output: {_one_line(e.strerror or e)}\n")
        code = code or int(ExitCode.ERROR)
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    atexit._run_exitfuncs()
    os._exit(code)


def _main(argv=None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    # A short-lived process that builds hundreds of thousands of small dicts from the API objects and
    # makes few reference cycles: the cyclic collector cost ~40% of an explain on 40,000 devices.
    gc.disable()
    verbose = "-v" in args or "--verbose" in args or bool(os.environ.get("KUBECTL_DRA_DEBUG"))
    try:
        cli.main(args=args, prog_name=prog_name(), complete_var="_KUBECTL_DRA_COMPLETE", standalone_mode=False)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        sys.exit(code)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.exceptions.Abort:
        sys.stderr.write("error: interrupted\n")
        sys.exit(int(ExitCode.INTERRUPTED))
    except click.UsageError as e:
        cmd = e.ctx.command_path if e.ctx else prog_name()
        sys.stderr.write(f"error: {_one_line(e.format_message())} (see '{cmd} --help')\n")
        sys.exit(int(ExitCode.ERROR))
    except click.ClickException as e:
        sys.stderr.write(f"error: {_one_line(e.format_message())}\n")
        sys.exit(int(ExitCode.ERROR))
    except DraError as e:
        if verbose:
            import traceback

            traceback.print_exc()
        sys.stderr.write(f"error: {_one_line(e.message)}\n")
        sys.exit(int(ExitCode.ERROR))
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        sys.exit(int(ExitCode.INTERRUPTED))
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        sys.exit(int(ExitCode.OK))
    except OSError as e:
        # Reading files, kubeconfigs and the API all end in DraError; an OSError that gets here is the output
        # itself failing (a full disk, an I/O error on the file stdout goes to).
        if verbose:
            import traceback

            traceback.print_exc()
        sys.stderr.write(f"error: could not write the output: {_one_line(e.strerror or e)}\n")
        sys.exit(int(ExitCode.ERROR))
    except Exception as e:  # a bug: one line, traceback with -v
        if verbose:
            import traceback

            traceback.print_exc()
        sys.stderr.write(f"error: internal error: {type(e).__name__}: {_one_line(e)} (run with -v for a traceback)\n")
        sys.exit(int(ExitCode.ERROR))
    sys.exit(int(ExitCode.OK))
