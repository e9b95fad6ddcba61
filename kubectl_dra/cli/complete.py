"""Names completed from the cluster, as kubectl completes them: `explain pod <TAB>` the pods, `explain claim <TAB>`
and `match claim <TAB>` the ResourceClaims, `explain deploy/<TAB>` (any TYPE/ explain takes) that kind's objects as
TYPE/NAME, `-n <TAB>` the namespaces. Each reads -n/--namespace, -A, --context, --kubeconfig and --request-timeout
given earlier on the line (click has parsed them into ctx.params), asks one list of the server (gather/client.py
list_names: GET only, at most TIMEOUT seconds) and offers the names that start with the word typed. On any error
nothing is offered, nothing is written to stderr. With --from-file nothing is asked of a cluster: no names.

Nothing here is imported until a completion runs (--help and the commands never call these)."""

from __future__ import annotations

TIMEOUT = 5.0  # seconds a TAB may wait for the server (--request-timeout given earlier, when shorter)

_CLAIMS = tuple(f"/apis/resource.k8s.io/{v}/namespaces/{{ns}}/resourceclaims" for v in ("v1", "v1beta2", "v1beta1"))


def namespaces(ctx, param, incomplete: str) -> list:
    """-n <TAB>: the cluster's namespaces."""
    return _names(ctx, ("/api/v1/namespaces",), incomplete, namespaced=False)


def pods(ctx, param, incomplete: str) -> list:
    """explain pod <TAB>: the pods of the namespace; a word with a / (deploy/we) is TYPE/NAME: that kind's objects."""
    if "/" in incomplete:
        return workloads(ctx, incomplete)
    return _names(ctx, ("/api/v1/namespaces/{ns}/pods",), incomplete)


def claims(ctx, param, incomplete: str) -> list:
    """explain claim <TAB>, match claim <TAB>: the namespace's ResourceClaims (at the first version served)."""
    return _names(ctx, _CLAIMS, incomplete)


def workloads(ctx, incomplete: str) -> list:
    """TYPE/<TAB> for the TYPEs explain takes (kubectl's names: deploy, deployment, deployments.apps, sts, ...):
    TYPE/NAME for each object of that kind, TYPE as typed."""
    from click.shell_completion import CompletionItem

    from kubectl_dra.analyze.reports.workload import KINDS

    typed, _, prefix = incomplete.partition("/")
    entry = KINDS.get(typed.lower())
    if entry is None or "/" in prefix:
        return []
    _, api_base, resource = entry
    got = _names(ctx, (f"{api_base}/namespaces/{{ns}}/{resource}",), prefix)
    return [CompletionItem(f"{typed}/{item.value}") for item in got]


def _names(ctx, paths: tuple[str, ...], incomplete: str, namespaced: bool = True) -> list:
    from click.shell_completion import CompletionItem

    try:
        params = _params(ctx)
        if params.get("from_files"):
            return []
        from kubectl_dra.cli.options import parse_timeout
        from kubectl_dra.gather.client import list_names

        given = parse_timeout(params.get("request_timeout")) if params.get("request_timeout") else None
        every = namespaced and params.get("all_namespaces")
        if every:  # -A: every namespace's, as explain pod -A NAME finds the one that has it
            paths = tuple(p.replace("/namespaces/{ns}", "") for p in paths)
        names = list_names(
            paths,
            kubeconfig=params.get("kubeconfig"),
            context=params.get("context"),
            namespace=params.get("namespace") if namespaced and not every else None,
            timeout=min(given or TIMEOUT, TIMEOUT),
        )
    except Exception:  # a bad --request-timeout, anything: a completion offers nothing, never a traceback
        return []
    return [CompletionItem(n) for n in names if n.startswith(incomplete)]


def _params(ctx) -> dict:
    """The flags given so far, the command's over its parents' (none of the groups takes any today)."""
    chain = []
    while ctx is not None:
        chain.append(ctx.params or {})
        ctx = ctx.parent
    out: dict = {}
    for params in reversed(chain):
        out.update({k: v for k, v in params.items() if v not in (None, (), False)})
    return out
