"""lint: DRA mistakes in manifests, before kubectl apply."""

from __future__ import annotations

import sys

import click

from kubectl_dra import __version__
from kubectl_dra.cli.common import (
    CONTEXT_SETTINGS,
    VERBOSE,
    connection_flags,
    finish,
    flags,
    gather_for,
    input_flags,
    kubernetes_version_flag,
    note,
    output_flag,
    stdin_once,
)
from kubectl_dra.cli.options import Options


@click.command("lint", context_settings=CONTEXT_SETTINGS, short_help="DRA mistakes in manifests, before apply")
@click.option(
    "-f",
    "--filename",
    "filenames",
    multiple=True,
    type=click.Path(allow_dash=True),
    help="Files, directories or - (stdin) to lint (repeatable)",
)
@click.argument("paths", nargs=-1, type=click.Path(allow_dash=True), metavar="[FILE]...")
@flags(
    *input_flags(
        "A dump (or - for stdin) to use as the reference inventory (repeatable); alone, it is also what is linted"
    ),
    *connection_flags(
        kubeconfig="Use this cluster as the reference inventory",
        context="Use this kubeconfig context's cluster as the reference",
        request_timeout="Time to wait for each API call",
        chunks=False,
    ),
    *kubernetes_version_flag(
        "The CEL environment to compile for (default: the reference server's, else the newest released)"
    ),
    *output_flag(("text", "json", "sarif"), help=None),
    click.option(
        "--fail-on",
        type=click.Choice(("error", "warning", "info")),
        default="error",
        show_default=True,
        help="Exit 1 when a finding is at least this severe",
    ),
    *VERBOSE,
)
def lint_cmd(filenames, paths, output, fail_on, **params):
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
      kubectl dra lint deploy/*.yaml        (files as arguments: how pre-commit calls it)
    """
    from kubectl_dra.analyze.lint import SEVERITY_RANK, lint
    from kubectl_dra.gather.manifests import load_manifests

    filenames = tuple(filenames) + tuple(paths)
    if not filenames and not params["from_files"]:
        raise click.UsageError("give the manifests as FILE arguments or with -f PATH (or - for stdin)")
    stdin_once(filenames, params["from_files"])
    # the reference's semantics from the shared flags; every namespace of a reference cluster; lint's own -o
    # (text, json, sarif) is not the report's, so Options keeps text (a terminal's progress line as before)
    o = Options.from_click({**params, "all_namespaces": True, "no_color": True})
    reference, kind = None, "none"
    if o.from_files:
        from kubectl_dra.gather.files import load_files

        reference, kind = load_files(list(o.from_files), None), "dump"
    elif o.kubeconfig or o.context:
        reference = gather_for(o, selector="", partial=True, analyse=False).snapshot
        kind = "cluster"
    manifests = load_manifests(list(filenames) or list(o.from_files))
    sem = o.semantics(reference.server_version if reference is not None else None)
    report = lint(manifests, reference, sem, kind)
    return finish(report, o, show=lambda: _show_lint(report, output), blocked=report.worst() >= SEVERITY_RANK[fail_on])


def _show_lint(report, output: str) -> None:
    """The findings as -o asks (text, json, sarif), then the notes (what could not be checked) on stderr."""
    from kubectl_dra.findings.registry import REGISTRY
    from kubectl_dra.render.lint import render_lint

    render_lint(report, output, sys.stdout, REGISTRY, __version__)
    sys.stdout.flush()
    for line in report.notes:
        note(f"note: {line}")
