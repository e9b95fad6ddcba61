"""Fleet: what `status -A` over N contexts costs beside one. The claim (cli/fleet.py): the contexts are scanned in
parallel, at most MAX_PARALLEL at once, so N clusters cost about the slowest one, not their sum.

One control plane on loopback with the realistic dump of --nodes nodes (live.py's: unique devices, allocated claims
and their pods, the bench pod, events), reached through N contexts, each through a latency proxy
(tests/e2e/fault_proxy.py, "slow": every answer held --latency seconds half-way through its body, as a remote
cluster's round trips and transfer are). Round-robin per round: `status -A` with one context, then with 2, 4, 8
(and 12: past the bound of 8) contexts, each a fresh process; the figure is each N's wall time over the one
context's in the same round, and the CPU seconds of every process the run waited for (its scans' processes too).
Peak RSS is the largest single process's: with a scan per process, one cluster's, not the sum.

    python benchmarks/fleet.py [--nodes 500] [--latency 0.3] [--runs 3] [--counts 1,2,4,8,12] [--cluster DIR]
                               [--baseline CHECKOUT]

--baseline times another checkout (`git worktree add DIR COMMIT`) in the same rounds, each N right after this one.

    python benchmarks/fleet.py --offline DUMP [--counts 1,2] [--runs 3]

--offline: no cluster and no server, only the client's own work, which threads cannot share (the analysis holds the
interpreter lock): cli/fleet.py scan_contexts over N contexts whose scan reads DUMP (a file, as --from-file) and
judges it, in this process (wall and CPU seconds), round-robin.

One API server answers all N scans here (a fleet has N of them), on the same 2 cores as the N scans' analyses. By
default the proxy replays: it keeps each of the server's answers by path (a first one-context scan, not timed, fills
it) and serves it again with the same hold, so that each context is answered as its own cluster would be and the
server's own work is not counted N times; --uncached sends every request to the one server (a fleet's servers
sharing this machine's 2 cores). The proxy runs in this process (TLS and the holds, in threads). Not a
test: CI does not run it."""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "cluster"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(HERE))

import bench  # noqa: E402
import cluster as clusterlib  # noqa: E402
import live  # noqa: E402
from fault_proxy import FaultProxy  # noqa: E402


def kubeconfig(proxy: FaultProxy, n: int, path: Path) -> Path:
    """A kubeconfig with contexts c01..cNN, each a cluster entry of its own that points at the proxy."""
    one = path.with_suffix(".one")
    proxy.kubeconfig(one)
    k = json.loads(one.read_text())
    cluster, user = k["clusters"][0], k["users"][0]
    k["clusters"] = [{**cluster, "name": f"c{i:02d}"} for i in range(1, n + 1)]
    k["users"] = [user]
    k["contexts"] = [
        {"name": f"c{i:02d}", "context": {"cluster": f"c{i:02d}", "user": user["name"]}} for i in range(1, n + 1)
    ]
    k["current-context"] = "c01"
    path.write_text(json.dumps(k))
    return path


def _offline_scan(dump: str, context: str):
    """One context's scan of the offline mode: the dump read and judged as `status -A --from-file DUMP` does."""
    from kubectl_dra.cli.options import Options
    from kubectl_dra.cli.status import _scan_once

    return _scan_once(Options.from_click({"all_namespaces": True, "from_files": (dump,)}), None, None, progress=False)


def offline(dump: str, counts: list[int], runs: int) -> int:
    import resource
    import time
    from functools import partial

    from kubectl_dra.cli.fleet import scan_contexts

    def cpu() -> float:
        a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime

    got: dict[tuple, list] = {}
    for r in range(runs):
        for n in counts:
            for how in ("threads", "processes"):
                t0, c0 = time.perf_counter(), cpu()
                ctxs = [f"c{i}" for i in range(n)]
                answers = scan_contexts(ctxs, partial(_offline_scan, dump), processes=how == "processes")
                wall, used = time.perf_counter() - t0, cpu() - c0
                assert all(a.report is not None for a in answers), [a.error for a in answers]
                got.setdefault((n, how), []).append((wall, used))
                print(f"round {r + 1}: {n:2d} in {how}: {wall:6.2f} s, CPU {used:6.2f} s", file=sys.stderr)
    print(f"scan_contexts over N copies of {dump}, no server (x one: over one context in threads, the same round)")
    one = got[counts[0], "threads"]
    for n in counts:
        for how in ("threads", "processes"):
            runs_ = got[n, how]
            per = ", ".join(f"{w / o[0]:.2f}x" for (w, _), o in zip(runs_, one))
            print(f"{n:>3} {how:<9} {statistics.median(w for w, _ in runs_):>8.2f} s  x one: {per:<24}"
                  f" CPU {statistics.median(c for _, c in runs_):.1f} s")  # fmt: skip
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--latency", type=float, default=0.3, help="seconds each answer is held half-way")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--counts", default="1,2,4,8,12")
    ap.add_argument("--cluster", help="the state directory of a cluster kept (and loaded) by an earlier run")
    ap.add_argument("--keep-cluster", action="store_true")
    ap.add_argument("--baseline", help="a checkout of another commit, timed in the same rounds")
    ap.add_argument("--uncached", action="store_true", help="every request to the one API server (no replay)")
    ap.add_argument("--offline", metavar="DUMP", help="no cluster: N scans of DUMP in threads and in processes")
    a = ap.parse_args()
    counts = [int(x) for x in a.counts.split(",")]
    if a.offline:
        return offline(a.offline, counts, a.runs)
    bench.compile_modules()
    state_dir, state = live.cluster(a.cluster, a.nodes, "fleet")
    live._signal(state, signal.SIGSTOP)
    proxy = FaultProxy(SimpleNamespace(dir=state["dir"], server=state["server"]))
    try:
        proxy.add("", "slow", times=10**9, stall_seconds=a.latency)
        kc = kubeconfig(proxy, max(counts), Path(tempfile.mkdtemp(prefix="kubectl-dra-fleet-")) / "config")
        if not a.uncached:
            proxy.cache = {}
            bench.measure(["status", "-A", "--kubeconfig", str(kc), "--context", "c01", "-o", "json"])
            print(f"replaying {len(proxy.cache)} answers of the API server", file=sys.stderr)
        trees = {"this": ROOT, **({"baseline": Path(a.baseline).resolve()} if a.baseline else {})}
        got: dict[tuple, list] = {(t, n): [] for t in trees for n in counts}
        used: dict[tuple, list] = {(t, n): [] for t in trees for n in counts}  # CPU seconds, every process
        for r in range(a.runs):
            for n in counts:
                ctx = [x for i in range(1, n + 1) for x in ("--context", f"c{i:02d}")]
                for t, tree in trees.items():
                    os.chdir(tree)  # `python -m kubectl_dra` runs the checkout it starts in
                    cpu: list = []
                    wall, rss, rc = bench.measure(["status", "-A", "--kubeconfig", str(kc), *ctx, "-o", "json"], cpu)
                    got[t, n].append((wall, rss, rc))
                    used[t, n].append(cpu[0])
                    print(f"round {r + 1}: {t} {n:2d} context(s): {wall:6.2f} s, CPU {cpu[0]:6.2f} s, {rss:5.0f} MB, "
                          f"exit {rc}", file=sys.stderr)  # fmt: skip
        how = "every request to the one API server" if a.uncached else "the server's answers replayed"
        print(f"status -A over N contexts (each through a proxy holding every answer {a.latency:g} s; {how}), "
              f"{a.nodes} nodes")  # fmt: skip
        print(f"{'tree':>8} {'N':>3} {'wall (median)':>14} {'x one, per round':>30} {'CPU s':>7} {'peak RSS':>9} "
              f"{'exit':>5}")  # fmt: skip
        for t in trees:
            one = got[t, counts[0]]
            for n in counts:
                rs = got[t, n]
                per = ", ".join(f"{w / o[0]:.2f}x" for (w, _, _), o in zip(rs, one))
                print(
                    f"{t:>8} {n:>3} {statistics.median(w for w, _, _ in rs):>12.2f} s {per:>30}"
                    f" {statistics.median(used[t, n]):>7.1f} {max(r for _, r, _ in rs):>6.0f} MB {','.join(sorted({str(c) for _, _, c in rs})):>5}"
                )
        print(f"requests through the proxy: {len(proxy.log)}")
    finally:
        proxy.close()
        live._signal(state, signal.SIGCONT)
        if not (a.keep_cluster or a.cluster):
            clusterlib.down(state_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
