"""Describe-like text for people. Every cluster string goes through esc() before it is written."""

from __future__ import annotations

from kubectl_dra.findings.stages import Stage
from kubectl_dra.render.escape import esc
from kubectl_dra.render.terminal import Out, _kv, _table
from kubectl_dra.render.verdict import blocked_why, verdict_headline
from kubectl_dra.render.verdict import decisive as decisive_of

MAX_DEVICES = 10
EXAMPLES_PER_REASON = 3
EVENT_LINES = 8  # at a terminal, an event's message wraps onto at most this many lines

# Why a verdict stays open, by the finding that opened it (first match wins).
_SEV_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_OUTCOME_STYLE = {"selected": "bold green", "candidate": "green", "rejected": "red"}


def render_text(report, stream, opts) -> None:
    """A Diagnosis or MatchResult as describe-like text (opts: render/options.py RenderOptions)."""
    all_devices = opts.all_devices
    d = report.to_dict()
    out = Out.of(stream, opts)
    if d["kind"] == "MatchResult":
        _match(out, d, all_devices)
    else:
        _diagnosis(out, d, all_devices)


_VERSION_SOURCE = {
    "flag": "from --kubernetes-version",
    "server": "the API server's version",
    "default": "assumed: no server; pass --kubernetes-version",
}


def _kubernetes_line(sem: dict, wide: bool) -> str:
    """The version the analysis assumed, in plain words; feature gates when some were set (-o wide: always, with
    the allocator channel)."""
    src = _VERSION_SOURCE.get(sem["versionSource"], sem["versionSource"])
    if sem.get("serverVersion"):
        src = f"assumed for a {sem['serverVersion']} server, newer than kubectl-dra knows"
    over = sem.get("overriddenGates") or []
    gates = ", ".join(f"{g}={'true' if sem['featureGates'][g] else 'false'}" for g in over)
    line = f"{sem['kubernetesVersion']} ({src})"
    if gates or wide:
        line += f"; feature gates: {gates or 'defaults'}"
    if wide:
        line += f"; allocator: {sem.get('allocator', '?')}"
    return line


def _queue_line(q: dict) -> str:
    """Where the pod is in the scheduler's queue (estimated) and the pods ahead of it that can use its devices."""
    ahead = q["ahead"]
    shown = []
    for a in ahead[:2]:
        takes = f" takes {esc(a['devices'][0])}" + (" ..." if len(a["devices"]) > 1 else "") if a["devices"] else ""
        shown.append(f"{esc(a['pod'])} ({esc(a['why'])}){takes}")
    more = f"; and {len(ahead) - 2} more" if len(ahead) > 2 else ""
    gated = ", once ungated" if q.get("gated") else ""
    return f"#{q['position']} of the pending pods{gated}; ahead: " + "; ".join(shown) + more


# The pieces' marks, and the ASCII ones for terminals that cannot show them (and under NO_COLOR).
_MARKS = {"ok": ("✓", "green"), "missing": ("✗", "bold red"), "waiting": ("–", None), "unknown": ("–", "yellow")}
_ASCII_MARKS = {"ok": "ok", "missing": "NO", "waiting": "--", "unknown": "--"}


def _pieces(out: Out, rows: list[dict], verdict: dict | None = None, decisive: dict | None = None) -> None:
    """The tutorial's four pieces, one line each: mark, piece, evidence (the Summary's sentence is not said again)."""
    for i, r in enumerate(rows):
        evidence = r["evidence"]
        if decisive is not None and evidence == " ".join(decisive["message"].split()):
            what = blocked_why(decisive, verdict or {})[0] if r["state"] == "missing" else "undetermined"
            evidence = f"{what} (see Summary)"
        if r.get("plugin"):
            evidence += f"; {r['plugin']} (DRA607)"
        mark, style = _MARKS[r["state"]]
        if out.ascii:
            mark = _ASCII_MARKS[r["state"]]
        key = "Pieces:" if i == 0 else ""
        out.line(f"{key:<14}", (mark, style) if style else mark, f" {r['piece']:<7} ", esc(evidence), wrap=14 + 11)


def _no_claim(pc: dict) -> str:
    """A pod claim without a ResourceClaim: skipped (the status says none is needed), not in the input (it may exist),
    or not created yet."""
    if pc["skipped"]:
        return "<skipped>"
    return "<not in the input>" if pc.get("unseen") else "<not created>"


def _pod_header(out: Out, pod: dict) -> None:
    _kv(out, "Pod", f"{esc(pod['namespace'])}/{esc(pod['name'])}")
    _kv(out, "Node", esc(pod.get("node")) or "<none>")
    phase = esc(pod.get("phase")) or "<unknown>"
    if pod.get("deletionTimestamp"):  # as kubectl shows it: Terminating, whatever the phase
        phase = f"Terminating (phase {phase}; deleted {esc(pod['deletionTimestamp'])})"
    _kv(out, "Phase", phase)


def _diagnosis(out: Out, d: dict, all_devices: bool) -> None:
    v = d["verdict"]
    decisive = decisive_of(d)
    if d.get("workload"):
        w = d["workload"]
        wanted = "" if w.get("wantedPods") is None else f"wants {w['wantedPods']}, "
        _kv(out, "Workload", f"{esc(w['kind'])}/{esc(w['name'])} ({wanted}no pods: its pod template, as a new pod)")
    if "pod" in d:
        _pod_header(out, d["pod"])
    else:
        c = d["claim"]
        _kv(out, "Claim", f"{esc(c['namespace'])}/{esc(c['name'])}")
        _kv(out, "Owners", ", ".join(esc(o) for o in c.get("owners") or []) or "<none>")
    _kv(out, "Kubernetes", _kubernetes_line(d["semantics"], out.wide))
    _kv(out, "Verdict", *verdict_headline(d))
    _kv(out, "Summary", esc(v["summary"]))
    q = d.get("queue") or {}
    if q.get("ahead") and (q["outcome"] == "fits" or q.get("gated")):  # else the Summary says it
        _kv(out, "Queue", _queue_line(q))
    _pieces(out, d.get("pieces") or [], v, decisive)
    if "podClaims" in d:
        out.blank()
        out.line("Pod claims:")
        if not d["podClaims"]:
            out.line("  <none>")
        for pc in d["podClaims"]:
            src = {
                "template": f"template {esc(pc['sourceName'])}",
                "claim": f"claim {esc(pc['sourceName'])}",
                "extended": f"extended resources {esc(pc['sourceName'])}",
            }.get(pc["source"], "<invalid>")
            claim = esc(pc["claim"]) if pc["claim"] else _no_claim(pc)
            out.line(f"  {esc(pc['name'])}:  ", f"{claim} (from {src})", wrap=6)
        ext = d.get("extendedResources") or {}
        for m in ext.get("requestMappings") or []:
            out.line(
                f"    container {esc(m['containerName'])}: ",
                f"{esc(m['resourceName'])} -> request {esc(m['requestName'])}",
                wrap=8,
            )
    for c in d.get("claims") or []:
        out.blank()
        _claim(out, c, all_devices)
    out.blank()
    _findings(out, d["findings"], v["summary"] if decisive is not None else None, hints=True)
    if "events" in d:
        out.blank()
        out.line("Events:")
        evs = d["events"]
        if not evs:
            out.line("  <none>")
        else:
            rows, styles = [], []
            for e in evs:
                src = e["source"]["component"] + (f", {e['source']['host']}" if e["source"].get("host") else "")
                count = f" (x{e['count']})" if e.get("count", 1) > 1 else ""
                rows.append(
                    [
                        esc(e.get("age") or e["time"]) or "<unknown>",
                        esc(e["type"]),
                        esc(e["reason"]),
                        esc(src),
                        esc(e["message"]) + count,
                    ]
                )
                styles.append([None, "yellow" if e["type"] == "Warning" else None, None, None, None])
            # FROM makes room first at a narrow terminal: the message is the evidence
            # (an event message can be megabytes: at a terminal it stops after EVENT_LINES lines; -o wide: whole)
            _table(
                out,
                ["LAST SEEN", "TYPE", "REASON", "FROM", "MESSAGE"],
                rows,
                2,
                styles,
                droppable=("FROM",),
                max_lines=EVENT_LINES,
            )


def _claim(out: Out, c: dict, all_devices: bool) -> None:
    out.line(f"Claim {esc(c['namespace'])}/{esc(c['name'])}:")
    _kv(out, "State", esc(c["state"]), indent=2, keyw=12)
    if c.get("allocation"):
        res = c["allocation"]["results"]
        _kv(
            out,
            "Allocated",
            ", ".join(f"{esc(r['request'])} -> {esc(r['driver'])}/{esc(r['pool'])}/{esc(r['device'])}" for r in res)
            or "<no devices>",
            "green",
            indent=2,
            keyw=12,
        )
        if c.get("reservedFor"):
            _kv(out, "Reserved", ", ".join(esc(r) for r in c["reservedFor"]), indent=2, keyw=12)
    elif c.get("dryRun"):
        res = c["dryRun"]["results"]
        _kv(
            out,
            "Dry-run",
            ", ".join(f"{esc(r['request'])} -> {esc(r['driver'])}/{esc(r['pool'])}/{esc(r['device'])}" for r in res),
            "green",
            indent=2,
            keyw=12,
        )
    for r in c.get("requests") or []:
        mode = f"{r['allocationMode']} {r['count']}" if r["allocationMode"] == "ExactCount" else r["allocationMode"]
        cls = esc(r["deviceClassName"]) + ("" if r["classFound"] else " (does not exist)")
        out.line(f"  Request {esc(r['name'])}:  {mode} of class {cls}")
        if r["classSelectors"]:
            out.line("    Class selectors:")
            for i, s in enumerate(r["classSelectors"]):
                _expr(out, i, s)
        if r["selectors"]:
            out.line("    Selectors:")
            for i, s in enumerate(r["selectors"]):
                _expr(out, i, s)
        if r["classFound"]:
            _devices(out, r["devices"], all_devices, 4)


def _expr(out: Out, i: int, expr) -> None:
    lines = str(expr or "").splitlines() or [""]
    out.line(f"      #{i}  ", esc(lines[0]), wrap=10)  # an expression wraps at its spaces, never cut
    for ln in lines[1:]:
        out.line("          ", esc(ln), wrap=10)


def _devices(out: Out, devices: list, all_devices: bool, indent: int) -> None:
    pad = " " * indent
    summary, shown, other = _digest(devices, all_devices)
    out.line(f"{pad}Devices:  {len(devices)}" + (f" ({summary})" if summary else ""))
    if not devices:
        out.line(f"{pad}  <none published>")
        return
    rows = [
        [
            esc(f"{dv['driver']}/{dv['pool']}/{dv['device']}"),
            esc(dv.get("node")) or "-",
            dv["outcome"],
            esc(dv["reason"]),
        ]
        for dv in shown
    ]
    styles = [[None, None, _OUTCOME_STYLE.get(dv["outcome"]), None] for dv in shown]
    _table(out, ["DEVICE", "NODE", "OUTCOME", "REASON"], rows, indent + 2, styles)
    hidden = len(devices) - len(shown)
    if hidden > 0:
        of_class = f"{other} outside the request's class; " if other else ""
        out.line(f"{pad}  ... and {hidden} more ({of_class}--all-devices shows every device)")


# the last list of device rows digested: reports of one analysis share a matrix's list (the HTML report explains
# many pods of one shape), so it is read once, not once per pod
_LAST: list = [None, None]


def _digest(devices: list, all_devices: bool) -> tuple[str, list, int]:
    """The counts by outcome, the rows shown and how many of the rest are outside the request's class."""
    key = (id(devices), all_devices)
    if _LAST[0] == key and _LAST[1][0] is devices:
        return _LAST[1][1]
    counts: dict = {}
    for dv in devices:
        counts[dv["outcome"]] = counts.get(dv["outcome"], 0) + 1
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    shown = devices if all_devices else _pick(devices)
    kept = {id(dv) for dv in shown}
    # (rows equal to a shown one count as shown, as `in` compares them: identity first, the cheap test)
    out_of_class = (dv for dv in devices if dv.get("stage") == Stage.CLASS.value and id(dv) not in kept)
    other = 0 if all_devices else sum(1 for dv in out_of_class if dv not in shown)
    _LAST[:] = [key, (devices, (summary, shown, other))]
    return summary, shown, other


def _pick(devices: list) -> list:
    """Selected and candidate devices first, then a few examples per rejection stage. Devices the class selectors
    exclude (other drivers' or other models') are left out when any device passes the class."""
    if any(dv.get("stage") != Stage.CLASS.value for dv in devices):
        devices = [dv for dv in devices if dv.get("stage") != Stage.CLASS.value]
    keep = [dv for dv in devices if dv["outcome"] != "rejected"][:MAX_DEVICES]
    per_stage: dict = {}
    for dv in devices:
        if dv["outcome"] == "rejected":
            lst = per_stage.setdefault(dv.get("stage", ""), [])
            if len(lst) < EXAMPLES_PER_REASON:
                lst.append(dv)
    for lst in per_stage.values():
        keep.extend(lst)
    order = {id(dv): i for i, dv in enumerate(devices)}
    return sorted(keep, key=lambda dv: order[id(dv)])


def _match(out: Out, d: dict, all_devices: bool) -> None:
    c = d["claim"]
    _kv(out, "Claim", f"{esc(c['namespace'])}/{esc(c['name'])}")
    _kv(out, "Kubernetes", _kubernetes_line(d["semantics"], out.wide))
    if d["satisfiable"]:
        _kv(out, "Satisfiable", "yes, on node(s) " + ", ".join(esc(n) for n in d["nodes"]), "bold green")
    elif not d.get("determined", True):
        _kv(out, "Satisfiable", "undetermined (see the findings)", "bold yellow")
    else:
        _kv(out, "Satisfiable", "no", "bold red")
    if d.get("count"):
        n = d["count"]
        where = ", ".join(f"{esc(k)}: {v}" for k, v in sorted(n["nodes"].items(), key=lambda kv: (-kv[1], kv[0]))[:5])
        open_ = not d.get("determined", True)  # then the count is a floor: the first one not counted is open
        text = f"{n['fit']} of {n['asked']} fit" + (" for certain" if open_ else "") + (f" ({where})" if where else "")
        if open_ and n.get("firstNotFitting"):
            text += f"; {esc(n['firstNotFitting'])} undetermined"
        _kv(out, "Copies", text)
    if d.get("dryRun"):
        _kv(
            out,
            "Would get",
            ", ".join(
                f"{esc(r['request'])} -> {esc(r['driver'])}/{esc(r['pool'])}/{esc(r['device'])}"
                for r in d["dryRun"]["results"]
            ),
        )
    for r in d["requests"]:
        out.blank()
        out.line(f"Request {esc(r['name'])} (class {esc(r['deviceClassName'])}):")
        devs = r["devices"]
        good = [x for x in devs if x["outcome"] != "rejected"]
        bad = [x for x in devs if x["outcome"] == "rejected"]
        if all_devices:
            _devices(out, devs, True, 2)
            continue
        out.line(f"  Matching devices: {len(good)}")
        if good:
            rows = [
                [esc(f"{x['driver']}/{x['pool']}/{x['device']}"), esc(x.get("node")) or "-", x["outcome"]]
                for x in good[:MAX_DEVICES]
            ]
            _table(
                out,
                ["DEVICE", "NODE", "OUTCOME"],
                rows,
                4,
                [[None, None, _OUTCOME_STYLE.get(x["outcome"])] for x in good[:MAX_DEVICES]],
            )
            if len(good) > MAX_DEVICES:
                out.line(f"    ... and {len(good) - MAX_DEVICES} more")
        out.line(f"  Rejected devices: {len(bad)}")
        groups: dict = {}
        for x in bad:
            groups.setdefault(_reason_key(x), []).append(x)
        for key, xs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            out.line(f"    {len(xs)} x {esc(key)}")
            for x in xs[:EXAMPLES_PER_REASON]:
                # the group says which check failed; each device shows what it read (the value the selector saw)
                dev, read = f"        {esc(x['driver'])}/{esc(x['pool'])}/{esc(x['device'])}:", esc(_read(x, key))
                if out.width and len(dev) + 1 + len(read) > out.width:  # the value whole on the next line
                    out.line(dev)
                    out.line(" " * 10, read, wrap=10)
                else:
                    out.line(dev + " ", read)
            if len(xs) > EXAMPLES_PER_REASON:
                out.line(f"        ... and {len(xs) - EXAMPLES_PER_REASON} more")
    out.blank()
    _findings(out, d["findings"], None, hints=False)


def _reason_key(x: dict) -> str:
    name = x.get("stage") or ""
    stage = Stage.named(name)
    if stage is None:
        return name or "rejected"
    ev = x.get("evidence") or {}
    if stage.per_selector and "selector" in ev:
        return f"{name} selector #{ev['selector']}" + (" (CEL error)" if stage is Stage.CEL_ERROR else " is false")
    if stage is Stage.IN_USE and ev.get("ahead"):  # the queue's estimate (holds.py in_use_reason): not allocated
        return "go to pods ahead in the queue"
    return stage.label


_SEV_ORDER = {"error": 0, "warning": 1, "info": 2}


def _findings(out: Out, findings: list[dict], summary: str | None, hints: bool) -> None:
    """Errors first, then warnings, then information, each as its code and readable name, then the message and the
    hint below it. The finding the Summary already says points there instead of repeating it. DRA003 (the assumed
    version) is the Kubernetes line's: listed with -o wide only."""
    shown = [f for f in findings if out.wide or f["code"] != "DRA003"]
    shown.sort(key=lambda f: _SEV_ORDER.get(f["severity"], 3))
    out.line("Findings:")
    if not shown:
        out.line("  <none>")
    for f in shown:
        said = summary is not None and summary.startswith(f["message"])
        out.line(
            "  ",
            (f"{f['severity']:<7}", _SEV_STYLE.get(f["severity"])),
            "  ",
            (f"{f['code']} {esc(f.get('name') or '')}".rstrip(), "bold"),
            " (see Summary)" if said else "",
        )
        if not said:
            out.line(" " * 11, esc(f["message"]), wrap=11)
        _plugin_log(out, f)
        if hints and (f["severity"] != "info" or f["code"] in ("DRA002",)):
            out.line(" " * 11 + "hint: ", esc(f["hint"]), wrap=17)


def _plugin_log(out: Out, f: dict) -> None:
    """--plugin-logs: the plugin container's last lines under DRA607 (or one line saying why there are none)."""
    plugin = (f.get("evidence") or {}).get("plugin")
    log = plugin.get("log") if isinstance(plugin, dict) else None
    if not isinstance(log, dict):
        return
    why = log.get("undetermined") or log.get("error")
    if why:
        word = "undetermined" if log.get("undetermined") else "not read"
        out.line(" " * 11 + f"log: {word}: ", esc(str(why)), wrap=13)
        return
    lines = log.get("lines") or []
    which = " (previous instance)" if log.get("previous") else ""
    name = f" {log['container']}" if log.get("container") else ""
    out.line(" " * 11 + f"log of container{esc(name)}{which}, last {len(lines)} line(s):")
    for text in lines:
        out.line(" " * 13, esc(str(text)) or " ", wrap=13)


def _read(x: dict, key: str) -> str:
    """A rejected device's reason without the words its group already says: `request gpu selector #0 is false
    (device.capacity["gpu.example.com"].memory = 8Gi)` under `request selector #0 is false` is the value read."""
    reason = x["reason"]
    if key.endswith(" is false") and reason.endswith(")") and " is false (" in reason:
        return reason.split(" is false (", 1)[1][:-1]
    return reason
