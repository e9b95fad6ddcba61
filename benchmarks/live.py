"""Live benchmark: the realistic 5,000-node dump of bench.py (40,000 devices with unique uuid/pciBusID, 2,000
allocated claims, 10,000 events) loaded into a real control plane (tests/cluster: etcd, kube-apiserver, ... on
loopback), then `explain pod` timed against it beside its floor: the same paginated list requests kubectl-dra makes,
fetched raw (no JSON decoding) in the same run.

    python benchmarks/live.py [--nodes 5000] [--runs 3] [--keep-cluster | --cluster DIR] [--baseline CHECKOUT]

Prints the load time, then the medians over the rounds: explain pod (text and -o json) wall time, peak RSS and CPU
time, the raw-list floor, the ratio (target: explain <= 1.5x the floor, issue 14), and the API server's CPU time
during each. Each round runs the floor and every
command once, in rotating order; --baseline times another checkout (git worktree add DIR COMMIT) in the same rounds.
The scheduler and controller-manager are paused while timing (_signal). Not a test: CI does not run it."""

from __future__ import annotations

import argparse
import compileall
import concurrent.futures
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "cluster"))
sys.path.insert(0, str(HERE))

import bench  # noqa: E402
import cluster as clusterlib  # noqa: E402

RES = "/apis/resource.k8s.io/v1"
NS = "default"
COLLECTION = {
    "DeviceClass": f"{RES}/deviceclasses",
    "Node": "/api/v1/nodes",
    "ResourceSlice": f"{RES}/resourceslices",
    "ResourceClaim": f"{RES}/namespaces/{NS}/resourceclaims",
    "Pod": f"/api/v1/namespaces/{NS}/pods",
    "Event": f"/api/v1/namespaces/{NS}/events",
}
ORDER = ("DeviceClass", "Node", "ResourceSlice", "ResourceClaim", "Pod", "Event")


def load(api: clusterlib.Api, items: list[dict], workers: int = 16) -> float:
    """POST every object (claims' allocations through their status), kind by kind; returns seconds."""
    t0 = time.perf_counter()
    by_kind: dict[str, list] = {}
    for o in items:
        by_kind.setdefault(o["kind"], []).append(o)

    def create(o: dict) -> None:
        body = {k: v for k, v in o.items() if k != "status" or o["kind"] in ("Node",)}
        body["metadata"] = {k: v for k, v in o["metadata"].items() if k not in ("uid", "resourceVersion")}
        created = api.post(_collection(o), body)
        if o["kind"] == "ResourceClaim" and o.get("status"):
            created["status"] = o["status"]
            api.put(f"{_collection(o)}/{o['metadata']['name']}/status", created)

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for kind in ORDER:
            list(pool.map(create, by_kind.get(kind, [])))
            print(f"  loaded {len(by_kind.get(kind, []))} {kind}", file=sys.stderr)
    return time.perf_counter() - t0


def _collection(o: dict) -> str:
    """Where an object of the dump is created: its kind's collection, in its own namespace (the node agents are
    kube-system pods)."""
    ns = o["metadata"].get("namespace")
    path = COLLECTION[o["kind"]]
    return path.replace(f"/namespaces/{NS}/", f"/namespaces/{ns}/") if ns else path


def raw_lists(api: clusterlib.Api) -> tuple[float, int, int]:
    """The lists explain pod makes (live.py: claims of every namespace, the namespace's templates, classes, slices,
    nodes, device taint rules, the pod's events), 500 per page as kubectl-dra asks, read as bytes: seconds,
    requests, bytes."""
    paths = [
        (f"{RES}/resourceclaims", {}),
        (f"{RES}/namespaces/{NS}/resourceclaimtemplates", {}),
        (f"{RES}/deviceclasses", {}),
        (f"{RES}/resourceslices", {}),
        ("/api/v1/nodes", {}),
        (f"{RES}/devicetaintrules", {}),
        (f"/api/v1/namespaces/{NS}/events", {"fieldSelector": "involvedObject.kind=Pod,involvedObject.name=bench"}),
    ]
    t0, n, size = time.perf_counter(), 0, 0
    for path, q in paths:
        cont = None
        while True:
            query = dict(q, limit="500", **({"continue": cont} if cont else {}))
            url = api.server + path + "?" + urllib.parse.urlencode(query)
            req = urllib.request.Request(url, headers={"Accept": "application/json"})
            with urllib.request.urlopen(req, context=api.ctx, timeout=60) as resp:
                raw = resp.read()
            n, size = n + 1, size + len(raw)
            # the continue token sits in the list's metadata, at the start of the answer
            head = raw[:4096].decode(errors="replace")
            cont = None
            marker = '"continue":"'
            if marker in head:
                cont = head.split(marker, 1)[1].split('"', 1)[0] or None
            if not cont:
                break
    return time.perf_counter() - t0, n, size


def timed(argv: list[str]) -> tuple[float, float, int, float]:
    """Wall seconds, peak RSS (MB), exit code and CPU seconds (user + system) of one run of argv."""
    code = (
        "import resource, subprocess, sys, time; t = time.perf_counter(); "
        "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE); "
        "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
        "print(time.perf_counter() - t, u.ru_maxrss / 1024, r.returncode, u.ru_utime + u.ru_stime)"
    )
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    wall, rss, rc, cpu = out.stdout.split()
    return float(wall), float(rss), int(rc), float(cpu)


def cpu_seconds(pid: int | None) -> float:
    """CPU seconds (user + system) a process has used so far, from /proc (0 where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError, TypeError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _argv(root: Path, kubeconfig: str, extra: list[str]) -> list[str]:
    """explain pod bench from the source tree root (a baseline checkout, or this one), as a fresh process."""
    return ["env", "-C", str(root), f"PYTHONPATH={root}", sys.executable, "-m", "kubectl_dra", "explain", "pod",
            "bench", "-n", NS, "--kubeconfig", kubeconfig, *extra]  # fmt: skip


def _signal(state: dict, sig: int) -> None:
    """Pause (SIGSTOP) or resume the scheduler and the controller-manager: while the bench pod stays Pending, the
    scheduler retries it over every node and the node lifecycle controller updates the 5,000 nodes, on the same two
    cores as the API server being measured. Reads need neither."""
    for name in ("kube-scheduler", "kube-controller-manager"):
        pid = (state.get("pids") or {}).get(name)
        if pid:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass


def cluster(kept: str | None, nodes: int, prefix: str, extra: tuple = ()) -> tuple[Path, dict]:
    """The state directory and state of the control plane with the realistic dump of `nodes` nodes (and the
    objects `extra`) loaded: the one kept in the directory `kept` by an earlier run, or a new one."""
    if kept:
        state = clusterlib.read_state(Path(kept))
        if state is None:
            raise SystemExit(f"no cluster in {kept}")
        return Path(kept), state
    dump = Path(tempfile.mkdtemp(prefix=f"kubectl-dra-{prefix}-")) / "dump.json"
    bench.generate(dump, 0, True, nodes)
    items = [o for o in json.loads(dump.read_text())["items"] if o["kind"] in COLLECTION] + list(extra)
    clusterlib.cache_dir().mkdir(parents=True, exist_ok=True)
    state_dir = Path(tempfile.mkdtemp(prefix=f"{prefix}-", dir=clusterlib.cache_dir()))
    state = clusterlib.up(state_dir)
    try:
        secs = load(clusterlib.Api.from_state(state), items)
    except BaseException:
        clusterlib.down(state_dir)
        raise
    print(f"loaded {len(items)} objects in {secs:.0f} s; cluster state in {state_dir}", file=sys.stderr)
    return state_dir, state


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=bench.NODES)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep-cluster", action="store_true")
    ap.add_argument("--cluster", help="the state directory of a cluster kept (and loaded) by an earlier run")
    ap.add_argument("--baseline", help="a checkout of another commit, timed in the same rounds (paired before/after)")
    a = ap.parse_args()
    bench.compile_modules()
    state_dir, state = cluster(a.cluster, a.nodes, "live")
    api = clusterlib.Api.from_state(state)
    try:
        kc = state["kubeconfig"]
        commands = {"explain pod": _argv(ROOT, kc, []), "explain pod -o json": _argv(ROOT, kc, ["-o", "json"])}
        if a.baseline:
            base = Path(a.baseline).resolve()
            compileall.compile_dir(str(base / "kubectl_dra"), quiet=1)
            commands["baseline explain pod"] = _argv(base, kc, [])
            commands["baseline -o json"] = _argv(base, kc, ["-o", "json"])
        _signal(state, signal.SIGSTOP)
        times: dict[str, list] = {"floor": [], **{k: [] for k in commands}}
        server = (state.get("pids") or {}).get("kube-apiserver")
        codes = set()
        try:
            for r in range(a.runs):  # round-robin: a machine that slows down slows every command alike
                n, size = 0, 0
                names = list(commands)
                for name in ["floor", *names[r % len(names) :], *names[: r % len(names)]]:
                    busy = cpu_seconds(server)
                    if name == "floor":
                        secs, n, size = raw_lists(api)
                        times["floor"].append((secs, 0.0, 0.0, cpu_seconds(server) - busy))
                    else:
                        wall, rss, rc, cpu = timed(commands[name])
                        times[name].append((wall, rss, cpu, cpu_seconds(server) - busy))
                        codes.add(rc)
        finally:
            _signal(state, signal.SIGCONT)
        f = statistics.median(t[0] for t in times["floor"])
        api_cpu = statistics.median(t[3] for t in times["floor"])
        # CPU s: the command's own (user + system); API CPU s: kube-apiserver's in the same interval. On one
        # machine the two share its cores, and a process that holds Python's GIL runs no faster than its CPU time.
        print(f"{'':28} {'median s':>9} {'peak RSS MB':>12} {'x floor':>8} {'CPU s':>6} {'API CPU s':>10}")
        print(f"{f'raw lists ({n} GETs, {size / 1e6:.0f} MB)':<28} {f:>9.2f} {'':>12} {'':>8} {'':>6} {api_cpu:>10.2f}")
        for name in commands:
            m = statistics.median(t[0] for t in times[name])
            cpu = statistics.median(t[2] for t in times[name])
            server_cpu = statistics.median(t[3] for t in times[name])
            rss = max(t[1] for t in times[name])
            print(f"{name:<28} {m:>9.2f} {rss:>12.0f} {m / f:>7.2f}x {cpu:>6.2f} {server_cpu:>10.2f}")
        print(f"exit codes: {sorted(codes)}")
    finally:
        if not (a.keep_cluster or a.cluster):
            clusterlib.down(state_dir)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
    sys.exit(main())
