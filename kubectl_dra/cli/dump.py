"""dump: a bundle that --from-file reads back with the same answers."""

from __future__ import annotations

import sys

import click

from kubectl_dra.cli.common import (
    CONNECTION,
    CONTEXT_SETTINGS,
    VERBOSE,
    flags,
    gather_for,
    one_line,
    output_file_flag,
    output_flag,
    scope_flags,
    write_out,
)
from kubectl_dra.cli.options import Options


@click.command("dump", context_settings=CONTEXT_SETTINGS, short_help="A bundle that replays the answers offline")
@click.option("-l", "--selector", default=None, help="Only pods this label selector picks (as kubectl -l)")
@output_file_flag("bundle")
@click.option("-f", "--filename", "old_filename", default=None, hidden=True, expose_value=True)
@flags(
    *scope_flags("Namespace to dump (default: the kubeconfig context's)", "Dump every namespace"),
    *output_flag(("yaml", "json"), default="yaml"),
    *CONNECTION,
    *VERBOSE,
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
    got = gather_for(
        o, selector=selector or "", partial=True, everything=True, analyse=False, pending_pods=True, bound_pods=True
    )
    snap, ns, raw = got.snapshot, got.namespace, list(got.raw)
    scope = {"namespace": None if o.all_namespaces else ns, "selector": selector}
    text = data_to(bundle(raw, snap, scope), o.output)
    write_out(filename, text, f"{len(raw) - 1} objects")
    for g in snap.gaps:
        sys.stderr.write(f"warning: could not {one_line(g.verb + ' ' + g.resource)}: {one_line(g.message)}\n")
