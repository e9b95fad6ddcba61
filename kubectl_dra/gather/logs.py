"""The kubelet plugin's container log (`kubectl logs --tail N [-p]`), read only behind --plugin-logs: the one
pods/log request kubectl-dra makes. A refusal (403) makes it undetermined naming the permission; any other failure
(no kubelet behind the node, the apiserver's 4xx/5xx, a timeout) is said in one line. Never an error."""

from __future__ import annotations

from urllib.parse import quote

from kubectl_dra.errors import DraError
from kubectl_dra.gather.client import Client, _Forbidden


def read_log(c: Client, namespace: str, pod: str, container: str | None, tail: int, previous: bool) -> dict:
    """{"lines": [...]} (the last `tail` lines), or {"undetermined": why} when pods/log is forbidden, or
    {"error": why} when the log cannot be read; with what was asked ("container", "previous", "tailLines")."""
    asked: dict = {"container": container, "previous": previous, "tailLines": tail}
    query = {"tailLines": str(tail)}
    if container:
        query["container"] = container
    if previous:
        query["previous"] = "true"
    path = f"/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(pod, safe='')}/log"
    try:
        body = c.get(path, query, text=True)
    except _Forbidden as e:
        if e.status == 403:
            return {**asked, "undetermined": f"cannot get pods/log in namespace {namespace} (forbidden)"}
        return {**asked, "error": f"the server answered {e.status}: {e.message}"}
    except DraError as e:
        return {**asked, "error": str(e).splitlines()[0] if str(e) else "the log could not be read"}
    lines = body.splitlines()
    return {**asked, "lines": lines[-tail:] if tail > 0 else lines}


def read_logs(targets, *, kubeconfig, context, timeout) -> dict[int, dict]:
    """Each target (key, namespace, pod, container, previous) read with `tail` lines: {key: read_log's answer}.
    targets: [(key, namespace, pod, container, previous, tail)]; none asked, no client and no request."""
    if not targets:
        return {}
    c = Client(kubeconfig, context, timeout)
    return {key: read_log(c, ns, pod, container, tail, previous) for key, ns, pod, container, previous, tail in targets}
