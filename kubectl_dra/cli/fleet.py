"""status and devices over several clusters: --context repeated, or --all-contexts (every context of the kubeconfig).

Each context gets its own connection (its kubeconfig entry resolved on its own: server, CA, credentials, exec plugin
run for it), never one switched client (kubescape #3217: switching contexts in one process reported the wrong
cluster). The contexts are scanned in parallel, at most MAX_PARALLEL at once: each in a forked process of its own
where the platform forks safely (Linux), since a scan's analysis holds the interpreter lock and in threads N
clusters' analyses would take turns at it (the analysis modules are imported once, before the fork, and each
process sends back its report as plain data, report.plain()); in threads elsewhere (macOS, whose system libraries
do not survive a fork: there the reads overlap and the analyses take turns). So N clusters cost about the slowest
one where there are cores for them (docs/performance.md, "Several clusters in one scan"). A context that cannot
be reached, refuses a read or times out is one undetermined line naming why; the others are still reported. The
exit code is the worst of all: 2 (a cluster or a pod undetermined) over 1 (a pod blocked) over 0."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial

from kubectl_dra.errors import DraError

MAX_PARALLEL = 8
# the packages a scan (status's or devices') imports on its way, lazily: imported whole before the fork
SCAN_PACKAGES = (
    "kubectl_dra.gather",
    "kubectl_dra.model",
    "kubectl_dra.findings",
    "kubectl_dra.cel",
    "kubectl_dra.analyze",
)


@dataclass(frozen=True)
class ClusterAnswer:
    context: str
    report: object | None  # the context's ScanReport (status) or InventoryReport (devices), plain; None: not scanned
    error: str = ""  # why not (one line)

    @property
    def determined(self) -> bool:
        return self.report is not None and self.report.determined

    def to_dict(self, key: str = "status") -> dict:
        """key: what the context's document is called in its item (status: "status", devices: "inventory")."""
        if self.report is None:
            return {"context": self.context, "error": self.error, "determined": False}
        return {"context": self.context, key: self.report.to_dict(), "determined": self.report.determined}


def _answer(scan_one, verbose: bool, ctx: str) -> ClusterAnswer:
    try:
        return ClusterAnswer(ctx, scan_one(ctx).plain())
    except DraError as e:
        return ClusterAnswer(ctx, None, " ".join(str(e).split()))
    except Exception as e:  # one cluster's failure is its line, never the others' end (-v: the traceback)
        if verbose:
            import traceback

            traceback.print_exc(file=sys.stderr)
        return ClusterAnswer(ctx, None, f"internal error: {type(e).__name__}: {' '.join(str(e).split())[:200]}")


def _answer_pickled(scan_one, verbose: bool, ctx: str) -> bytes:
    """_answer in a scan's process, pickled here: an answer that does not pickle is its cluster's one line (an
    internal error), not the end of every cluster's scan, as the pool's own pickling would make it."""
    import pickle

    a = _answer(scan_one, verbose, ctx)
    try:
        return pickle.dumps(a, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:
        if verbose:
            import traceback

            traceback.print_exc(file=sys.stderr)
        failed = ClusterAnswer(ctx, None, f"internal error: the scan's answer does not pickle: {type(e).__name__}")
        return pickle.dumps(failed)


def _quiet_on_interrupt() -> None:
    """In a scan's process: Ctrl-C is the parent's to handle (it ends the pool), not a traceback per child."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _import_all(packages: tuple) -> None:
    import importlib
    import pkgutil

    for name in packages:
        pkg = importlib.import_module(name)
        for m in pkgutil.walk_packages(pkg.__path__, name + "."):
            importlib.import_module(m.name)


def forks_safely() -> bool:
    return sys.platform.startswith("linux")


def scan_contexts(
    contexts: list[str], scan_one, verbose: bool = False, processes: bool = False, warm: tuple = SCAN_PACKAGES
) -> list[ClusterAnswer]:
    """scan_one(context) -> a report (ScanReport, InventoryReport: what has .plain()) for each context, in parallel
    (bounded); the answers, each with its report as plain data, in the contexts' order. processes: scan_one pickles
    (a module-level function, or a partial of one): where the platform forks safely each context is scanned in a
    forked process (a pool of at most MAX_PARALLEL; the parent starts no thread before it), else in threads. warm:
    the packages a scan imports on its way (lazily): every module of them is imported once before the fork, so
    that no process imports one again."""
    n = max(1, min(MAX_PARALLEL, len(contexts)))
    if processes and len(contexts) > 1 and forks_safely():
        import multiprocessing
        import pickle

        _import_all(warm)
        sys.stdout.flush()
        sys.stderr.flush()
        one = partial(_answer_pickled, scan_one, verbose)
        # Pool's exit terminates the workers: Ctrl-C (or an error) never leaves a scan running behind the prompt
        with multiprocessing.get_context("fork").Pool(n, initializer=_quiet_on_interrupt) as pool:
            return [pickle.loads(b) for b in pool.map(one, contexts, chunksize=1)]
    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(partial(_answer, scan_one, verbose), contexts))


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
