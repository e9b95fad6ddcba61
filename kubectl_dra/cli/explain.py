"""explain pod (NAME, -l, TYPE/NAME, --replicas, -w) and explain claim."""

from __future__ import annotations

import sys

import click

from kubectl_dra.cli import complete
from kubectl_dra.cli.common import (
    ALL_DEVICES,
    ALONE,
    COLOR,
    CONNECTION,
    CONTEXT_SETTINGS,
    EXIT_ZERO,
    INPUT,
    SEMANTICS,
    VERBOSE,
    WATCH,
    HelpGroup,
    finish,
    flags,
    gather_for,
    output_flag,
    scope_flags,
)
from kubectl_dra.cli.options import Options
from kubectl_dra.cli.watch import watch_pod
from kubectl_dra.errors import ExitCode


class _ExplainGroup(HelpGroup):
    """`explain TYPE/NAME` as kubectl writes it (deploy/web, pod/web-0) is `explain pod TYPE/NAME`."""

    def resolve_command(self, ctx, args):
        if args and "/" in args[0] and not args[0].startswith("-"):
            return "pod", self.commands["pod"], args
        return super().resolve_command(ctx, args)

    def shell_complete(self, ctx, incomplete):
        """`explain deploy/<TAB>`: the names of that kind, as explain pod completes them."""
        if "/" in incomplete and not incomplete.startswith("-"):
            return complete.workloads(ctx, incomplete)
        return super().shell_complete(ctx, incomplete)


@click.group(
    cls=_ExplainGroup, context_settings=CONTEXT_SETTINGS, short_help="Which piece a pod or claim lacks, and why"
)
def explain():
    """Explain a pod's or a claim's DRA state: which piece is missing and why."""


@explain.command(
    "pod",
    context_settings=CONTEXT_SETTINGS,
    short_help="Why a pod (NAME, -l, or TYPE/NAME) does or does not get its devices",
)
@click.argument("name", required=False, shell_complete=complete.pods)
@click.option("-l", "--selector", default=None, help="Explain every pod this label selector picks (as kubectl -l)")
@WATCH
@flags(
    *scope_flags(
        "Namespace of the pod (default: the kubeconfig context's)",
        "Find the named pod in any namespace; with -l, pick pods in every namespace",
    ),
    *INPUT,
    *SEMANTICS,
    *output_flag(),
    *ALL_DEVICES,
    *ALONE,
    click.option(
        "--replicas",
        type=click.IntRange(1, 10_000),
        default=None,
        help="With TYPE/NAME (deploy, sts, rs, job): would N more pods of it get their devices? How many fit, "
        "where, and why the first that does not",
    ),
    click.option(
        "--plugin-logs",
        "plugin_logs",
        is_flag=False,
        flag_value="20",
        default=None,
        metavar="[=N]",
        help="When the driver's kubelet plugin pod on the pod's node is not ready, crash-loops or is not registered: "
        "show the last N (20) lines of its container's log (kubectl logs --tail N, -p when it crash-loops). Off by "
        "default: it needs get pods/log (N: 1 to 10000; give it as --plugin-logs=N)",
    ),
    click.option(
        "--map",
        "draw_map",
        is_flag=True,
        help="After the report, draw the device map for the pod: each device marked by the first check it fails for "
        "the pod's requests, the dry-run's pick standing out (one pod NAME; -o json|yaml have the same data in "
        "claims[].requests[].devices)",
    ),
    *EXIT_ZERO,
    *CONNECTION,
    *COLOR,
    *VERBOSE,
)
def explain_pod_cmd(name, selector, watch, replicas, plugin_logs, draw_map, **params):
    """Explain why pod NAME (or each pod -l picks) does (not) get its devices.

    \b
    Examples:
      # Why is this pod Pending?
      kubectl dra explain pod recomendador-7d9c8b6f5-x2x4k -n default
      # A Deployment's pods, whose names you do not know (add -A for every namespace)
      kubectl dra explain pod -l app=recomendador
      # The same, offline, on a dump of every kind it reads (better: kubectl dra dump > dump.yaml)
      kubectl get pods,nodes,events,daemonsets,resourceclaims,resourceclaimtemplates,deviceclasses,resourceslices \
        -A -o yaml > dump.yaml
      kubectl dra explain pod recomendador-7d9c8b6f5-x2x4k --from-file dump.yaml
      # For CI: JSON, exit 1 when blocked
      kubectl dra explain pod my-pod -o json
      # Can this Deployment scale by 8? How many more pods get GPUs, where, and why not the rest
      kubectl dra explain deploy/inference --replicas 8
      # With the last 50 log lines of the driver's kubelet plugin on the pod's node (needs get pods/log)
      kubectl dra explain pod my-pod --plugin-logs=50
      # Why not here, at a glance: every device marked by the first check it fails for the pod
      kubectl dra explain pod my-pod --map
    """
    o = Options.from_click(params)
    name, plugin_logs = _plugin_logs_flag(name, plugin_logs)
    name, workload = _pod_target(o, name, selector, watch, replicas)
    if plugin_logs is not None and (workload is not None or watch or not name):
        raise click.UsageError("--plugin-logs takes one pod NAME (not -l, TYPE/NAME or --watch)")
    if draw_map and (workload is not None or watch or not name):
        raise click.UsageError("--map takes one pod NAME (not -l, TYPE/NAME or --watch)")
    if workload is not None:
        return _explain_workload(o, workload, replicas)
    if watch:
        got = gather_for(o, pod_name=name, watch=True, pending_pods=not o.alone, drivers=True, bound_pods=True)
        session, first, ns = got.session, [got.snapshot], got.namespace
        del got  # the first answer takes the snapshot (cli/watch.py _first): not kept here for hours
        watch_pod(o, session, first, ns, name)
        return None
    if name:
        got = gather_for(o, pod_name=name, pending_pods=not o.alone, drivers=True, bound_pods=True)
        snap, ns = got.snapshot, got.namespace
        from kubectl_dra.analyze.reports.explain import explain_pods  # after the gather, which overlaps its loading

        report = explain_pods(snap, o.semantics(snap.server_version), [(ns, name)], o.alone)[0]
        report = _with_plugin_logs(o, report, plugin_logs)
        if draw_map and o.output in ("text", "wide"):  # -o json|yaml: the claims' device matrices are the map's data
            return _finish_with_map(o, report)
        return finish(report, o)
    return _explain_selected(o, selector)


def _finish_with_map(o: Options, report):
    """explain pod NAME --map: the report as finish writes it, then the pod's device map (analyze/reports/devmap.py
    pod_map: the report's own device matrices), the same exit policy."""
    import sys

    from kubectl_dra.analyze.reports.devmap import pod_map
    from kubectl_dra.cli.common import render_options
    from kubectl_dra.render import render
    from kubectl_dra.render.devmap import POD_LEGEND, render_map
    from kubectl_dra.render.escape import esc
    from kubectl_dra.render.terminal import Out

    def show() -> None:
        opts = render_options(o)
        render(report, opts, sys.stdout)
        out = Out.of(sys.stdout, opts)
        out.blank()
        dmap = pod_map(report)
        if not dmap.rows:
            out.line("Device map: no device was checked for this pod (its claims are allocated, or it has none).")
            return
        n = sum(len(r.cells) for r in dmap.rows)
        title = f"Device map for the pod ({n} device(s); each marked by the first check it fails; FITS: candidates):"
        render_map(dmap, out, POD_LEGEND, title=title, usable=("selected", "candidate"), column="FITS")
        picks = [c for r in dmap.rows for c in r.cells if c.state == "selected"]
        for r in dmap.rows:
            for c in r.cells:
                if c.state == "selected":
                    out.line(f"The dry-run's pick: {esc(c.device)} on {esc(', '.join(r.nodes))}", wrap=2)
        place = (report.body or {}).get("queue") or {}
        if not picks and place.get("outcome") == "fits" and place.get("estimated"):
            out.line(f"No fixed pick: the pod gets devices, but which, and on which node, is open: "
                     f"{esc(place.get('reason') or '')}", wrap=2)  # fmt: skip
        elif not picks:
            out.line("No pick: the dry-run allocates no device for the pod.", wrap=2)

    undetermined = None if report.determined else "the answer is undetermined: the Verdict and Summary above say why"
    return finish(report, o, show=show, undetermined=undetermined, blocked=report.blocked)


def _plugin_logs_flag(name, value) -> tuple:
    """--plugin-logs[=N] as kubectl's optional values: `--plugin-logs web-0` is the flag (20 lines) and the pod's
    name, not N (click would take the next word as the value). (name, N or None)."""
    if value is None:
        return name, None
    if not value.isdigit():
        if name is not None:
            raise click.UsageError(f"--plugin-logs=N takes a number of lines, not {value!r}")
        return value, 20
    if not 1 <= int(value) <= 10_000:
        raise click.UsageError("--plugin-logs=N takes 1 to 10000 lines")
    return name, int(value)


def _with_plugin_logs(o: Options, report, tail: int | None):
    """--plugin-logs N: the log of the plugin container DRA607 judged on the node, read after the analysis found it
    (gather/logs.py: the one pods/log request); without the flag none is made."""
    if tail is None:
        return report
    from kubectl_dra.analyze.pod.plugin_logs import from_file, log_targets, with_logs

    if o.from_files:
        return from_file(report)
    from kubectl_dra.gather.logs import read_logs

    targets = [(*t, tail) for t in log_targets(report)]
    return with_logs(report, read_logs(targets, kubeconfig=o.kubeconfig, context=o.context, timeout=o.timeout))


def _pod_target(o: Options, name, selector, watch: bool, replicas) -> tuple:
    """explain pod's arguments checked, in the order they fail: (the pod's name, None) or (the workload's name, the
    workload: KINDS' row plus its name) for TYPE/NAME; None and None with -l."""
    workload = None
    if name and "/" in name:
        from kubectl_dra.analyze.reports.workload import KINDS, parse_type_name

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
        return name, workload
    if not name and not selector:
        raise click.UsageError("Missing argument 'NAME': give a pod NAME or -l SELECTOR")
    if name and selector:
        raise click.UsageError("give a pod NAME or -l SELECTOR, not both")
    if watch and not name:
        raise click.UsageError("--watch follows one pod: give its NAME (or watch many with 'status -w')")
    return name, None


def _explain_selected(o: Options, selector: str) -> ExitCode | None:
    """explain pod -l SELECTOR: each pod it picks, as kubectl describe does; none is a note, not an error."""
    from kubectl_dra.model.labels import parse_selector

    reqs = parse_selector(selector)
    got = gather_for(o, selector=selector, pending_pods=not o.alone, drivers=True, bound_pods=True)
    snap, ns = got.snapshot, got.namespace
    from kubectl_dra.analyze.reports.explain import explain_pods
    from kubectl_dra.analyze.reports.targets import selected_pods

    pods = selected_pods(snap, reqs, ns, o.all_namespaces)
    if not pods:
        where = "any namespace" if o.all_namespaces else f"namespace {ns}"
        sys.stderr.write(f"No pods match {selector!r} in {where}.\n")
        return None
    return finish(explain_pods(snap, o.semantics(snap.server_version), pods, o.alone), o)


def _explain_workload(o: Options, workload: tuple, replicas: int | None = None) -> ExitCode:
    """explain deploy/NAME (sts, rs, ds, job): each pod the workload controls; with replicas, N more of them."""
    kind, _, resource, wname = workload
    got = gather_for(o, workload=workload, pending_pods=not o.alone, drivers=True, bound_pods=True)
    snap, ns = got.snapshot, got.namespace
    from kubectl_dra.analyze.reports.explain import explain_pods
    from kubectl_dra.analyze.reports.workload import find_workload, pods_of

    w = find_workload(snap, kind, ns, wname)
    if replicas is not None:
        from kubectl_dra.analyze.reports.replicas import explain_replicas

        return finish(explain_replicas(snap, o.semantics(snap.server_version), w, replicas), o)
    pods = pods_of(snap, w)
    if not pods:
        # Pods that were never created (FailedCreate, a quota, a missing template): the pod template as a new pod,
        # and never "nothing blocks" without a visible reason (DRA019).
        from kubectl_dra.analyze.reports.workload import explain_workload_without_pods

        return finish(explain_workload_without_pods(snap, o.semantics(snap.server_version), w), o)
    return finish(explain_pods(snap, o.semantics(snap.server_version), pods, o.alone), o)


@explain.command("claim", context_settings=CONTEXT_SETTINGS)
@click.argument("name", shell_complete=complete.claims)
@flags(
    *scope_flags("Namespace of the claim (default: the kubeconfig context's)", "Find the named claim in any namespace"),
    *INPUT,
    *SEMANTICS,
    *output_flag(),
    *ALL_DEVICES,
    *EXIT_ZERO,
    *CONNECTION,
    *COLOR,
    *VERBOSE,
)
def explain_claim_cmd(name, **params):
    """Explain the allocation state of ResourceClaim NAME.

    \b
    Examples:
      kubectl dra explain claim my-claim -n team-a
    """
    o = Options.from_click(params)
    got = gather_for(o, claim_name=name)
    snap, ns = got.snapshot, got.namespace
    from kubectl_dra.analyze.reports.claim import explain_claim

    return finish(explain_claim(snap, o.semantics(snap.server_version), ns, name), o)
