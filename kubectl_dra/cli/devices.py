"""devices: what is free and who holds it."""

from __future__ import annotations

import sys
from dataclasses import replace
from functools import partial

import click

from kubectl_dra.cli.common import (
    CLUSTER_SCOPED,
    COLOR,
    CONTEXT_SETTINGS,
    EXIT_ZERO,
    INPUT,
    NO_HEADERS,
    SEMANTICS,
    VERBOSE,
    connection_flags,
    finish,
    flags,
    gather_for,
    note,
    one_line,
    output_flag,
    render_options,
)
from kubectl_dra.cli.options import Options
from kubectl_dra.errors import DraError
from kubectl_dra.render import FORMATS

_MAP_WATCH = "With -o map: draw the map again whenever it changes, as the cluster changes (Ctrl-C ends)"


@click.command("devices", context_settings=CONTEXT_SETTINGS, short_help="What is free and who holds it")
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
@click.option(
    "--request",
    "request_file",
    type=click.Path(allow_dash=True),
    default=None,
    metavar="FILE",
    help="How many more of this request fit, per node and in total (with --class): FILE holds one ResourceClaim or "
    "ResourceClaimTemplate (or a Pod: the claim of its DRA-backed extended resources), as match claim -f takes",
)
@click.option("-w", "--watch", is_flag=True, help=_MAP_WATCH)
@flags(
    *INPUT,
    *SEMANTICS,
    *output_flag(
        FORMATS + ("name", "map"),
        help="Output format (name: device/DRIVER/POOL/DEVICE, one a line; name and --no-headers list the devices; "
        "map: a cell per device, a row per node or group of nodes in the same states)",
    ),
    *NO_HEADERS,
    *EXIT_ZERO,
    *connection_flags(fleet=True),
    *COLOR,
    *VERBOSE,
    *CLUSTER_SCOPED,
)
def devices_cmd(
    listing, node, driver, device_class, pool, free, selector, where, request_file, watch, no_headers, **params
):
    """What is free and who holds it: every published device with its classes and state.

    By default a summary per node and per class (devices free, allocated, shared, tainted, unhealthy, unusable) and,
    for partitionable devices, how many more of each partition still fit. --list or any filter lists the devices;
    --node also lists the pods that hold the node's devices and through which claims. Where ResourcePoolStatusRequests
    (alpha) exist and are readable, their counts are shown with kubectl-dra's where they differ (DRA023; DRA106 where
    claims could not all be read: upstream's count bounds what is in use); none is ever created.
    Per node with devices, whether a kubelet plugin serves each of their drivers (its DaemonSet's pod on the node is
    Ready): a note for each node where it is not ready, runs no pod (the nodeSelector, taint or affinity that
    excludes the node) or is unknown (the DaemonSets cannot be read, or none runs it); -o wide: a PLUGINS column.
    --class C --request FILE: how many more copies of FILE's claim fit, per node and in total, one after another
    on top of what is allocated and what the pending pods would take (exit 1 when none fits).
    -o map: the device map, a row per node (nodes whose devices are in the same states share one row, with their
    count), a cell per device, a glyph and a colour per state (NO_COLOR: ASCII glyphs alone), the devices a pending
    pod would take in the queue's dry-run marked as estimated; the filters apply. -o map -w keeps it current: the
    map again each time it changes (at a terminal in place of the last, else after a line with the time).
    Several --context (or --all-contexts): each cluster read on its own connection, at once; the summary per class
    (or, with --list or a filter, the device list) with a CLUSTER column, a cluster that cannot be read one line
    naming why; JSON/YAML one DeviceInventoryList; the exit code the worst of them.

    \b
    Examples:
      # What is free, per node and class?
      kubectl dra devices
      # Free GPUs with at least 40Gi
      kubectl dra devices --free --where 'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'
      # Before draining node-07: whose devices are these?
      kubectl dra devices --node node-07
      # How many more 1g.10gb partitions fit, per node and in total?
      kubectl dra devices --class mig-1g --request mig-1g-claim.yaml
      # The device map: what is free, held, tainted or waiting, node by node
      kubectl dra devices -o map
      # ... kept current as pods come and go (Ctrl-C ends)
      kubectl dra devices -o map -w
      # What is free in every cluster of the kubeconfig?
      kubectl dra devices --all-contexts
    """
    from kubectl_dra.cli.fleet import with_contexts

    contexts, params = with_contexts(params)
    o = Options.from_click(params)
    if watch and o.output != "map":
        raise DraError("-w draws the device map again as it changes: use it with -o map")
    if request_file is not None:
        others = {"--list": listing, "--node": node, "--driver": driver, "--pool": pool, "--free": free,
                  "-l": selector, "--where": where, "--no-headers": no_headers}  # fmt: skip
        if contexts is not None:
            raise DraError("--request answers for one cluster: give one --context")
        return _request_fit(o, request_file, device_class, [k for k, v in others.items() if v])
    labels = None
    if selector:
        from kubectl_dra.model.labels import matches, parse_selector

        reqs = parse_selector(selector)
        labels = lambda lbl: matches(reqs, lbl)  # noqa: E731
    filters = {"node": node, "driver": driver, "class": device_class, "pool": pool, "free": free, "where": where,
               "selector": selector, "labels": labels}  # fmt: skip
    listed = listing or no_headers or o.output == "name" or any(v for k, v in filters.items() if k != "labels")
    if contexts is not None:
        if watch or o.output in ("map", "name"):
            raise DraError(f"{'-w' if watch else '-o ' + o.output} shows one cluster: give one --context")
        return _fleet(o, contexts, filters, listed, no_headers)
    got = _gather(o, o.output == "map", watch)
    filters = _checked(got.snapshot, filters)
    if watch:
        held = [got]
        del got  # the first map takes the snapshot (cli/watch.py _first): not kept here for hours
        return _map_watch(o, held, filters)
    snap = got.snapshot
    report = _inventory(o, snap, filters)
    incomplete = f"the inventory is incomplete: {one_line('; '.join(report.unseen))}"
    if o.output == "map":
        show = lambda: _show_map(report, snap, o)  # noqa: E731
    else:
        show = lambda: _show_inventory(report, o, listed, no_headers)  # noqa: E731
    return finish(report, o, show=show, undetermined=incomplete if report.unseen else None)


def _gather(o: Options, events: bool, watch: bool = False, progress: bool = True):
    """Every namespace's pods: who holds a device (reservedFor), what the kubelet reports of its health, and the
    kubelet plugins' pods; with every namespace's DaemonSets: whether a plugin serves each driver on each node.
    events (-o map): the pods' events too (the queue's order reads the scheduler's attempts)."""
    return gather_for(
        replace(o, all_namespaces=True),
        selector="",
        partial=True,
        events=events,
        analyse=False,
        drivers=True,
        watch=watch,
        progress=progress,
    )


def _checked(snap, filters: dict) -> dict:
    """The filters once check_device_filters has found what they name in the cluster (a typo: an error)."""
    from kubectl_dra.analyze.reports.targets import check_device_filters

    driver, pool = check_device_filters(snap, filters["node"], filters["driver"], filters["class"], filters["pool"])
    return {**filters, "driver": driver, "pool": pool}


def _inventory(o: Options, snap, filters: dict):
    """The inventory of the snapshot (filters: as _checked returns them)."""
    from kubectl_dra.analyze.reports.inventory import inventory

    return inventory(snap, o.semantics(snap.server_version), filters)


def _context_inventory(o: Options, filters: dict, context: str):
    """One context of a fleet's devices (cli/fleet.py): module-level, so that a process of its own can run it."""
    from kubectl_dra.cli.fleet import fleet_options

    c = fleet_options(o, context)
    snap = _gather(c, False, progress=False).snapshot
    return _inventory(c, snap, _checked(snap, filters))


def _fleet(o: Options, contexts: list[str], filters: dict, listed: bool, no_headers: bool):
    """devices over several contexts (cli/fleet.py): each cluster's inventory on its own connection, at once; one
    table with a CLUSTER column or one DeviceInventoryList; exit 2 when a cluster was not read or is incomplete."""
    from kubectl_dra.cli.fleet import scan_contexts
    from kubectl_dra.render.devices import render_inventory_fleet

    if sys.stderr.isatty() and o.output in ("text", "wide"):
        note(f"reading the devices of {len(contexts)} clusters ...")

    answers = scan_contexts(contexts, partial(_context_inventory, o, filters), o.verbose, processes=True)

    def show():
        render_inventory_fleet(answers, render_options(o, not no_headers), sys.stdout, listed)
        sys.stdout.flush()

    # context names come from the user's kubeconfig, not the cluster, but reach the terminal all the same: escaped
    down = [one_line(a.context) for a in answers if a.report is None]
    incomplete = [one_line(a.context) for a in answers if a.report is not None and not a.report.determined]
    undetermined = None
    if down:
        undetermined = f"{len(down)} of {len(answers)} clusters not read ({', '.join(down[:3])})"
    elif incomplete:
        undetermined = f"the inventory is incomplete in {', '.join(incomplete[:3])} (-o json: each cluster's unseen)"
    return finish(answers, o, show=show, undetermined=undetermined)


def _map_watch(o: Options, held: list, filters: dict) -> None:
    """-o map -w: cli/watch.py's loop; held: [the gather], emptied here (its snapshot answers first, then goes)."""
    from kubectl_dra.analyze.reports.inventory import inventory
    from kubectl_dra.cli.watch import watch_map

    got = held.pop()
    session, first = got.session, [got.snapshot]
    del got
    watch_map(o, session, first, lambda s: inventory(s, o.semantics(s.server_version), filters), _show_map)


def _show_inventory(report, o: Options, listed: bool, no_headers: bool) -> None:
    """The summary or the device list (-o name: `device/DRIVER/POOL/DEVICE` a line; --no-headers: the list's rows
    alone), then on stderr the notes: nothing published or matched, and the devices --where failed on."""
    from kubectl_dra.render.devices import render_inventory

    if o.output == "name":
        from kubectl_dra.render.escape import esc

        for r in report.rows:
            sys.stdout.write(f"device/{esc(r.id)}\n")
    else:
        # --no-headers: the device list's rows alone (what follows it, holders and counters, is not)
        rows_only = no_headers and o.output in ("text", "wide")
        render_inventory(report, render_options(o), sys.stdout, listed, rows_only=rows_only)
    sys.stdout.flush()
    if not report.rows and o.output in ("text", "wide"):
        note(f"No devices{' match' if listed else ' are published'} ({report.total} published).")
    if o.output in ("text", "wide"):
        from kubectl_dra.render.escape import esc

        for p in report.publishing:
            note(f"{esc(p.driver)} publishes no ResourceSlice: {one_line(p.message)}")
    for line in report.where_errors:
        note(f"warning: --where failed on {one_line(line)} (counted as not matching)")


def _show_map(report, snap, o: Options, dmap=None) -> None:
    """-o map: the device map of the listed devices (analyze/reports/devmap.py; dmap: already made), drawn by
    render/devmap.py."""
    from kubectl_dra.analyze.reports.devmap import device_map
    from kubectl_dra.render.devmap import render_map
    from kubectl_dra.render.terminal import Out

    dmap = dmap if dmap is not None else device_map(report, snap, o.semantics(snap.server_version))
    out = Out.of(sys.stdout, render_options(o))
    nodes = sum(len(r.nodes) for r in dmap.rows)
    title = f"{len(report.rows)} device(s) on {nodes} node(s)"
    if dmap.grouped and len(dmap.rows) < nodes:
        title += f" in {len(dmap.rows)} rows (nodes in the same states share one)"
    render_map(dmap, out, title=title + ":")
    if dmap.estimated:
        out.line(f"Estimated: the queue's dry-run of pending pod(s) {esc_list(dmap.estimated)}.", wrap=2)
    if dmap.open:
        out.line(f"Not drawn: what pending pod(s) {esc_list(dmap.open)} would take (their answer is open).", wrap=2)
    sys.stdout.flush()
    for p in report.publishing:
        note(f"{p.driver} publishes no ResourceSlice: {one_line(p.message)}")


def esc_list(names, shown: int = 3) -> str:
    from kubectl_dra.render.escape import esc

    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return esc(", ".join(names[:shown])) + more


def _request_fit(o: Options, filename: str, device_class: str | None, others: list[str]):
    """devices --class C --request FILE: how many more copies of the file's claim fit (analyze/reports/request_fit.py)."""
    from kubectl_dra.cli.common import stdin_once
    from kubectl_dra.cli.match import manifest_claim

    if not device_class:
        raise DraError("--request needs --class: the DeviceClass whose devices the request asks for")
    if others:
        raise DraError(f"--request cannot be combined with {', '.join(others)}")
    if o.output == "name":
        raise DraError("--request has no -o name: use text, wide, json or yaml")
    stdin_once([filename], o.from_files)
    claim = manifest_claim(filename, None)  # a bad file fails before any API call
    # every namespace's pods and events: the pending pods' in-flight allocations, in the queue's order
    snap = gather_for(replace(o, all_namespaces=True), selector="", partial=True, analyse=False).snapshot
    from kubectl_dra.analyze.reports.request_fit import request_claim, request_fit
    from kubectl_dra.analyze.reports.targets import check_device_filters, claim_to_match

    check_device_filters(snap, None, None, device_class, None)
    sem = o.semantics(snap.server_version)
    if claim.get("kind") == "Pod":
        claim = claim_to_match(snap, sem, None, None, claim, filename)
    request_claim(claim, device_class)  # a class mismatch is an error before the analysis runs
    report = request_fit(snap, sem, claim, device_class)
    from kubectl_dra.render.request_fit import render_request_fit

    def show() -> None:
        render_request_fit(report, render_options(o), sys.stdout)

    undetermined = report.undetermined
    if undetermined is None and report.unseen:
        undetermined = f"the answer is incomplete: {one_line('; '.join(report.unseen))}"
    elif undetermined is not None:
        undetermined = one_line(undetermined)
    return finish(report, o, show=show, undetermined=undetermined, blocked=report.total == 0)
