"""--plugin-logs: which kubelet plugin container's log to read (the pod DRA607 judged on the pod's node: not ready,
crash-looping, or Ready while the kubelet says the driver is not registered), and the report with what was read
put under that finding (evidence plugin.log). Pure: gather/logs.py reads the log, cli/explain.py joins the two."""

from __future__ import annotations

from dataclasses import replace

from kubectl_dra.findings.model import Report

# The plugin states whose pod sits on the node and may say why it did not register (analyze/pod/driver.py Plugin)
_ON_NODE = ("pod-not-ready", "pod-ready")
FROM_FILE = (
    "container logs are not in a dump (--from-file): run kubectl logs on the plugin pod, or run against the cluster"
)


def _plugin(f) -> dict:
    p = f.evidence.get("plugin") if f.code == "DRA607" else None
    return p if isinstance(p, dict) else {}


def log_targets(report: Report) -> list[tuple[int, str, str, str | None, bool]]:
    """(finding index, namespace, pod, container, previous) for each DRA607 whose plugin pod is on the node.
    previous: the container waits after a termination (CrashLoopBackOff): its last instance's log, as `kubectl
    logs -p`. container: the one that serves the driver, else the only not-ready one, else None (the pod's only)."""
    out = []
    for i, f in enumerate(report.findings):
        p = _plugin(f)
        pod = p.get("pod") if isinstance(p.get("pod"), dict) else {}
        ref = pod.get("pod")
        if p.get("state") not in _ON_NODE or not isinstance(ref, str) or "/" not in ref:
            continue
        ns, name = ref.split("/", 1)
        container = pod.get("container")
        not_ready = pod.get("notReady") if isinstance(pod.get("notReady"), list) else []
        if not isinstance(container, str):
            container = not_ready[0] if len(not_ready) == 1 and isinstance(not_ready[0], str) else None
        previous = bool(pod.get("waiting")) and pod.get("lastTerminated") is not None
        out.append((i, ns, name, container, previous))
    return out


def with_logs(report: Report, logs: dict[int, dict]) -> Report:
    """The report with each read (gather/logs.py read_log's answer, by finding index) under its DRA607's plugin."""
    if not logs:
        return report
    findings = list(report.findings)
    for i, log in logs.items():
        f = findings[i]
        findings[i] = replace(f, evidence={**f.evidence, "plugin": {**_plugin(f), "log": log}})
    return replace(report, findings=tuple(findings))


def from_file(report: Report) -> Report:
    """--plugin-logs with --from-file: each DRA607 that would have its log read says why it is not."""
    return with_logs(report, {t[0]: {"error": FROM_FILE} for t in log_targets(report)})
