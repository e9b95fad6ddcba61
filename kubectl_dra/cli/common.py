"""What every command shares: the flag groups, the gather wiring, the terminal, and finish(): the answer and the
exit code."""

from __future__ import annotations

import os
import shutil
import sys
from typing import TYPE_CHECKING

import click

from kubectl_dra.cli import complete
from kubectl_dra.cli.options import VERSIONS_METAVAR, Options
from kubectl_dra.errors import DraError, ExitCode
from kubectl_dra.render import FORMATS

if TYPE_CHECKING:
    from kubectl_dra.gather.result import Gathered

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def flags(*opts):
    """Apply click options in the order given (the order --help lists them)."""

    def deco(f):
        for o in reversed(opts):
            f = o(f)
        return f

    return deco


# Flag groups, each flag once: its name, default and type here, with the help that is true for every command that
# takes it. A command composes the groups it honours (kubectl's per-command flag sets); Options.from_click gives the
# others their defaults. Where a command gives a flag another meaning (lint's --kubeconfig names the reference
# inventory), it passes that help: the flag itself, and how Options reads it, stay the same.
def connection_flags(
    kubeconfig: str = "Path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config)",
    context: str = "The kubeconfig context to use",
    request_timeout: str = "Time to wait for each API call (e.g. 10s, 1m; 0 waits forever)",
    chunks: bool = True,
    fleet: bool = False,
) -> tuple:
    """--kubeconfig, --context, --request-timeout and (chunks) --chunk-size; fleet: --context repeatable and
    --all-contexts (status over several clusters, cli/fleet.py)."""
    contexts = (
        (
            click.option(
                "--context", "contexts", multiple=True, help=context + " (repeat it to scan several clusters)"
            ),
            click.option("--all-contexts", is_flag=True, help="Scan the cluster of every kubeconfig context"),
        )
        if fleet
        else (click.option("--context", default=None, help=context),)
    )
    return (
        click.option("--kubeconfig", default=None, help=kubeconfig),
        *contexts,
        click.option("--request-timeout", default="30s", show_default=True, help=request_timeout),
    ) + (
        (
            click.option(
                "--chunk-size",
                type=click.IntRange(min=0),
                default=500,
                show_default=True,
                help="Return large lists in chunks of this many objects, as kubectl does (0: in one answer)",
            ),
        )
        if chunks
        else ()
    )


CONNECTION = connection_flags()


def scope_flags(namespace_help: str, all_help: str) -> tuple:
    return (
        click.option("-n", "--namespace", default=None, help=namespace_help, shell_complete=complete.namespaces),
        click.option("-A", "--all-namespaces", is_flag=True, help=all_help),
    )


def input_flags(
    help: str = "Read objects from a YAML/JSON file, a directory or - (stdin) instead of a cluster (repeatable)",
) -> tuple:
    return (click.option("--from-file", "from_files", multiple=True, type=click.Path(allow_dash=True), help=help),)


def kubernetes_version_flag(
    help: str = "Semantics to assume (default: the server's version, else the newest released)",
) -> tuple:
    return (click.option("--kubernetes-version", default=None, metavar=VERSIONS_METAVAR, help=help),)


INPUT = input_flags()
SEMANTICS = (
    *kubernetes_version_flag(),
    click.option(
        "--feature-gates",
        default=None,
        metavar="Name=true,...",
        help="Override the version's default DRA feature gates",
    ),
)


def output_flag(choices=FORMATS, default: str = "text", help: str | None = "Output format") -> tuple:
    return (click.option("-o", "--output", type=click.Choice(choices), default=default, show_default=True, help=help),)


def output_file_flag(what: str) -> click.Option:
    """--output-file FILE: dump's bundle, report's page (a file the command writes, not an input)."""
    return click.option(
        "--output-file",
        "filename",
        default=None,
        type=click.Path(dir_okay=False),
        help=f"Write the {what} to this file (default: standard output)",
    )


def write_out(filename: str | None, text: str, said: str) -> None:
    """text to the file (then `wrote FILE: SAID` on stderr), or to standard output."""
    if not filename:
        sys.stdout.write(text)
        return
    try:
        with open(filename, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as e:
        raise DraError(f"{filename}: {e.strerror or e}") from None
    sys.stderr.write(f"wrote {filename}: {said}\n")


NO_HEADERS = (click.option("--no-headers", is_flag=True, help="Print the table without its header line"),)
ALL_DEVICES = (
    click.option("--all-devices", is_flag=True, help="List every device each request considered, with its reason"),
)
EXIT_ZERO = (click.option("--exit-zero", is_flag=True, help="Exit 0 even when blocked (errors still exit 2)"),)
ALONE = (
    click.option(
        "--alone",
        is_flag=True,
        help="Judge each pod as if it were the only one waiting (default: pending pods compete in the "
        "scheduler's queue order)",
    ),
)
COLOR = (click.option("--no-color", is_flag=True, help="Disable colour (also when NO_COLOR is set)"),)
VERBOSE = (click.option("-v", "--verbose", is_flag=True, help="Show tracebacks for internal errors"),)


# devices is cluster-scoped: -n and -A, passed from a kubectl habit or a script that passes -n to every command, are
# accepted and ignored as kubectl does for cluster-scoped resources (`kubectl get nodes -n x`); hidden from --help,
# since they change nothing (the inventory covers every namespace's holders)
CLUSTER_SCOPED = (
    click.option("-n", "--namespace", hidden=True, expose_value=False),
    click.option("-A", "--all-namespaces", is_flag=True, hidden=True, expose_value=False),
)


def gather_for(o: Options, *, analyse: bool = True, progress: bool = True, **ask) -> Gathered:
    """What the command asks (ask: LiveRequest's fields but the scope, which -n and -A give), from the files or the
    cluster, as one Gathered (with watch: and the LiveSession that follows it). events=False: without the pods'
    Events, for a command that never reads them (not listed live; from files, dropped unless drivers asks for the
    driver piece's own). analyse: the snapshot goes to an analysis, whose loading a live gather overlaps with its
    lists."""
    from dataclasses import replace

    from kubectl_dra.gather.result import Gathered, LiveRequest

    r = LiveRequest(namespace=o.namespace, all_namespaces=o.all_namespaces, **ask)
    if r.watch and o.from_files:
        raise DraError("--watch follows the cluster's watch API: it cannot watch --from-file input")
    if o.from_files:
        from kubectl_dra.gather.files import load_files

        # the driver piece reads the DaemonSets' FailedCreate and the kubelets' Starting events (listed live apart)
        keep = r.events or r.drivers
        kept: list | None = [] if r.everything else None  # (the report embeds the objects as read)
        snap = load_files(
            list(o.from_files), o.namespace, skip=frozenset() if keep else frozenset({"Event"}), kept=kept
        )
        return Gathered(snap, _named_namespace(snap, r), raw=tuple(kept or ()))
    from kubectl_dra.gather.live import gather_live

    if r.watch:
        from kubectl_dra import runtime

        runtime.one_malloc_arena()
    got = gather_live(
        r,
        kubeconfig=o.kubeconfig,
        context=o.context,
        timeout=o.timeout,
        chunk_size=o.chunk_size,
        progress=progress and sys.stderr.isatty() and o.output in ("text", "wide"),
        while_waiting=(lambda server_version: _preload(o, server_version)) if analyse else None,
    )
    return replace(got, namespace=_named_namespace(got.snapshot, r))


def _named_namespace(snap, r) -> str:
    """The namespace the command looks in (model/scope.py): the snapshot's (-n, else the context's or the bundle's,
    else default), or with -A the one that holds the named object."""
    from kubectl_dra.model.scope import locate

    ns = snap.namespace or "default"
    if r.pod_name:
        return locate(snap, "Pod", r.pod_name, ns, r.all_namespaces)
    if r.claim_name:
        return locate(snap, "ResourceClaim", r.claim_name, ns, r.all_namespaces)
    if r.workload is not None:
        return locate(snap, r.workload[0], r.workload[3], ns, r.all_namespaces)
    return ns


def _preload(o: Options, server_version: str | None):
    import kubectl_dra.render.text  # noqa: F401
    from kubectl_dra.analyze import preload

    return preload(o.semantics(server_version))


def _terminal_of(o: Options) -> tuple[bool, int | None]:
    """Colour (a terminal, no NO_COLOR/--no-color, or FORCE_COLOR) and the width text is fitted to (a terminal only)."""
    text = o.output in ("text", "wide", "map")
    color = (
        sys.stdout.isatty() and not o.no_color and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
    ) or bool(os.environ.get("FORCE_COLOR"))
    return color and text, shutil.get_terminal_size().columns if text and sys.stdout.isatty() else None


def render_options(o: Options, header: bool = True):
    """The RenderOptions (render/options.py) every renderer of the command takes, built once from the flags and the
    terminal."""
    from kubectl_dra.render.options import RenderOptions

    color, width = _terminal_of(o)
    return RenderOptions(o.output, color, width, _ascii_only(o), o.all_devices, header)


def _ascii_only(o: Options) -> bool:
    """Plain ASCII marks: under NO_COLOR/--no-color, on a dumb terminal, or when stdout cannot encode UTF-8."""
    enc = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
    return bool(o.no_color or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb" or enc != "utf8")


def finish(answer, o: Options, *, show=None, undetermined: str | None = None, blocked: bool = False) -> ExitCode:
    """Every command's last step: the answer on stdout, then the one exit policy: undetermined -> 2 with one `error:`
    line on stderr saying why, blocked -> 1 unless --exit-zero, else 0. The command returns the code and the group
    turns it into the process's (cli/__init__.py), as ruff's commands return an ExitStatus.

    answer: a report (explain, match), written as -o asks, its own determined/blocked and summary deciding; or a
    list of them (several pods, as kubectl describe: text one after another, JSON/YAML one List; the worst wins).
    show: a command's own writer instead (status, devices, lint), which then says what is undetermined and blocked."""
    if show is not None:
        show()
    elif isinstance(answer, (list, tuple)):
        from kubectl_dra.render import render_many

        render_many(answer, render_options(o), sys.stdout)
        open_ = [r for r in answer if not r.determined]
        if open_ and o.output in ("text", "wide"):  # each Summary is on the screen: one short line points at them
            undetermined = f"{len(open_)} of {len(answer)} pod(s) undetermined: their Verdict and Summary above say why"
        elif open_:
            undetermined = f"{len(open_)} of {len(answer)} pod(s) undetermined; first: {open_[0].summary}"
        blocked = any(r.blocked for r in answer)
    else:
        from kubectl_dra.render import render

        render(answer, render_options(o), sys.stdout)
        if not answer.determined and o.output in ("text", "wide"):
            undetermined = "the answer is undetermined: the Verdict and Summary above say why"
        elif not answer.determined:
            undetermined = f"{answer.summary} (the report above says what could be concluded)"
        blocked = answer.blocked
    sys.stdout.flush()
    if undetermined is not None:
        sys.stderr.write(f"error: {undetermined}\n")
        return ExitCode.ERROR
    return ExitCode.BLOCKED if blocked and not o.exit_zero else ExitCode.OK


def scan_rows(report, o: Options, header: bool = True) -> None:
    """The scan's rows as -o asks: `pod/NAME` a line for -o name (kubectl get -o name, also with -A), else the table
    or the document of render/status.py."""
    if o.output == "name":
        from kubectl_dra.render.escape import esc

        for r in report.rows:
            sys.stdout.write(f"pod/{esc(r.pod)}\n")
        return
    from kubectl_dra.render.status import render_scan

    render_scan(report, render_options(o, header), sys.stdout)


def short_unseen(line: str) -> str:
    """A line of unseen_pods for a terminal: the first five namespaces and how many more."""
    head, sep, rest = line.partition(" namespaces (")
    if not sep or "): " not in rest:
        return line
    names, _, why = rest.partition("): ")
    names_l = names.split(", ")
    shown = ", ".join(names_l[:5]) + (f" and {len(names_l) - 5} more" if len(names_l) > 5 else "")
    return f"{head}{sep}{shown}): {why}"


class ReaderGone(Exception):
    """stdout's reader went away (EPIPE: `| head` has read what it wanted). Not an OSError, so that click does not
    turn it into its own exit 1, which is this tool's "blocked"."""


class HelpGroup(click.Group):
    """A command group that, given no subcommand, prints its help and exits 0, as kubectl does."""

    def make_context(self, *args, **kwargs):  # (the group's own --help is written while its arguments are parsed)
        try:
            return super().make_context(*args, **kwargs)
        except BrokenPipeError:
            raise ReaderGone() from None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BrokenPipeError:  # the API client retries and wraps its own sockets' errors: this is stdout's
            raise ReaderGone() from None

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


WATCH = click.option(
    "-w", "--watch", is_flag=True, help="After the report, print what changes, as the cluster changes (Ctrl-C ends)"
)


def stdin_once(*path_lists) -> None:
    """Standard input can be read once: `-` for -f and --from-file together would leave one of them empty."""
    if sum(1 for paths in path_lists for p in paths if p == "-") > 1:
        raise DraError("- (stdin) can be read only once: give it once")


def note(text: str) -> None:
    """A note or warning on stderr, on one line; on a terminal it wraps at a word to the terminal's width, its
    continuation indented (as the text report's reasons). Names are never broken (at a hyphen or inside a long
    word): they stay whole to copy. `error:` lines are not notes: an error stays one line for scripts."""
    width = shutil.get_terminal_size().columns if sys.stderr.isatty() else None
    if width and len(text) >= width:
        import textwrap

        text = textwrap.fill(text, width - 1, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)
    sys.stderr.write(text + "\n")


def one_line(text: str) -> str:
    from kubectl_dra.render.escape import esc

    return esc(" ".join(str(text).split()))
