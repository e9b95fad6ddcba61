"""status and devices over several clusters: --context repeated, or --all-contexts (every context of the kubeconfig).

Each context gets its own connection (its kubeconfig entry resolved on its own: server, CA, credentials, exec plugin
run for it), never one switched client (kubescape #3217: switching contexts in one process reported the wrong
cluster). The contexts are scanned in parallel threads, at most MAX_PARALLEL at once: their reads overlap, so N
remote clusters cost about the slowest one's reads plus their analyses, which take turns at the interpreter lock
(docs/performance.md, "Several clusters in one scan"). A context that cannot be reached, refuses a read or times
out is one undetermined line naming why; the others are still reported. The exit code is the worst of all: 2 (a
cluster or a pod undetermined) over 1 (a pod blocked) over 0."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from kubectl_dra.errors import DraError

MAX_PARALLEL = 8


@dataclass(frozen=True)
class ClusterAnswer:
    context: str
    report: object | None  # the context's ScanReport (status) or InventoryReport (devices); None: not scanned
    error: str = ""  # why not (one line)

    @property
    def determined(self) -> bool:
        return self.report is not None and self.report.determined

    def to_dict(self, key: str = "status") -> dict:
        """key: what the context's document is called in its item (status: "status", devices: "inventory")."""
        if self.report is None:
            return {"context": self.context, "error": self.error, "determined": False}
        return {"context": self.context, key: self.report.to_dict(), "determined": self.report.determined}


def scan_contexts(contexts: list[str], scan_one, verbose: bool = False) -> list[ClusterAnswer]:
    """scan_one(context) -> ScanReport for each context, in parallel (bounded); the answers in the contexts' order."""

    def one(ctx: str) -> ClusterAnswer:
        try:
            return ClusterAnswer(ctx, scan_one(ctx))
        except DraError as e:
            return ClusterAnswer(ctx, None, " ".join(str(e).split()))
        except Exception as e:  # one cluster's failure is its line, never the others' end (-v: the traceback)
            if verbose:
                import traceback

                traceback.print_exc(file=sys.stderr)
            return ClusterAnswer(ctx, None, f"internal error: {type(e).__name__}: {' '.join(str(e).split())[:200]}")

    with ThreadPoolExecutor(max_workers=max(1, min(MAX_PARALLEL, len(contexts)))) as pool:
        return list(pool.map(one, contexts))


def with_contexts(params: dict) -> tuple[list[str] | None, dict]:
    """status's and devices' --context (repeatable) and --all-contexts: the contexts of a fleet scan (None: one cluster, as every
    other command), and the params with the one --context the rest of the command reads."""
    contexts = list(params.pop("contexts", ()) or ())
    every = params.pop("all_contexts", False)
    if every:
        if contexts:
            raise DraError("--all-contexts and --context: give one of them")
        from kubectl_dra.gather.kubeconfig import context_names

        contexts = context_names(params.get("kubeconfig"))
    if len(contexts) <= 1 and not every:
        return None, {**params, "context": contexts[0] if contexts else None}
    if params.get("from_files"):
        raise DraError("--from-file is one cluster's input: several contexts scan live clusters")
    return list(dict.fromkeys(contexts)), {**params, "context": None}


def fleet_options(o, context: str):
    """The Options of one context of the scan: its own context (and so its own connection)."""
    return replace(o, context=context)
