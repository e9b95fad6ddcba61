"""Live benchmark: the realistic 5,000-node dump of bench.py (40,000 devices with unique uuid/pciBusID, 2,000
allocated claims, 10,000 events) loaded into a real control plane (tests/cluster: etcd, kube-apiserver, ... on
loopback), then `explain pod` timed against it beside its floor: the same paginated list requests kubectl-dra makes,
fetched raw (no JSON decoding) in the same run.

    python benchmarks/live.py [--nodes 5000] [--runs 3] [--keep-cluster]

Prints the load time, then per run: explain pod (text and -o json) wall time and peak RSS, the raw-list floor, and
the ratio (target: explain <= 1.5x the floor, issue 14). Not a test: CI does not run it."""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import resource
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
        created = api.post(COLLECTION[o["kind"]], body)
        if o["kind"] == "ResourceClaim" and o.get("status"):
            created["status"] = o["status"]
            api.put(f"{COLLECTION['ResourceClaim']}/{o['metadata']['name']}/status", created)

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for kind in ORDER:
            list(pool.map(create, by_kind.get(kind, [])))
            print(f"  loaded {len(by_kind.get(kind, []))} {kind}", file=sys.stderr)
    return time.perf_counter() - t0


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


def timed(argv: list[str]) -> tuple[float, float, int]:
    code = (
        "import resource, subprocess, sys, time; t = time.perf_counter(); "
        "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE); "
        "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, r.returncode)"
    )
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    wall, rss, rc = out.stdout.split()
    return float(wall), float(rss), int(rc)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=bench.NODES)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep-cluster", action="store_true")
    a = ap.parse_args()
    bench.compile_modules()
    dump = Path(tempfile.mkdtemp(prefix="kubectl-dra-live-")) / "dump.json"
    bench.generate(dump, 0, True, a.nodes)
    items = [o for o in json.loads(dump.read_text())["items"] if o["kind"] in COLLECTION]
    clusterlib.cache_dir().mkdir(parents=True, exist_ok=True)
    state_dir = Path(tempfile.mkdtemp(prefix="live-", dir=clusterlib.cache_dir()))
    state = clusterlib.up(state_dir)
    try:
        api = clusterlib.Api.from_state(state)
        secs = load(api, items)
        print(f"loaded {len(items)} objects in {secs:.0f} s", file=sys.stderr)
        kc = state["kubeconfig"]
        argv = [sys.executable, "-m", "kubectl_dra", "explain", "pod", "bench", "-n", NS, "--kubeconfig", kc]
        rows = []
        for _ in range(a.runs):
            floor = raw_lists(api)
            text = timed(argv)
            js = timed(argv + ["-o", "json"])
            rows.append((floor, text, js))
        f = statistics.median(r[0][0] for r in rows)
        t = statistics.median(r[1][0] for r in rows)
        j = statistics.median(r[2][0] for r in rows)
        print(f"{'':28} {'median s':>9} {'peak RSS MB':>12} {'x floor':>8}")
        n, size = rows[0][0][1], rows[0][0][2]
        print(f"{f'raw lists ({n} GETs, {size / 1e6:.0f} MB)':<28} {f:>9.2f}")
        print(f"{'explain pod':<28} {t:>9.2f} {max(r[1][1] for r in rows):>12.0f} {t / f:>7.1f}x")
        print(f"{'explain pod -o json':<28} {j:>9.2f} {max(r[2][1] for r in rows):>12.0f} {j / f:>7.1f}x")
        print(f"exit codes: {sorted({r[1][2] for r in rows} | {r[2][2] for r in rows})}")
    finally:
        if not a.keep_cluster:
            clusterlib.down(state_dir)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
    sys.exit(main())
