"""Benchmark: the exporter (`status -A -w --metrics-bind-address`) at bench.py's 5,000 nodes x 8 devices with 500 DRA
pods (200 blocked), in one process as -w runs it: the objects held by a real LiveSession (gather/watch.py; no
server: each round replaces a share of the ResourceSlices and pods with new copies carrying a new resourceVersion,
as a watch's MODIFIED events do), then each answer as cli/watch.py makes it: runtime.next_evaluation(), the
session's snapshot, the status scan, the exporter's metrics (the device inventory included), and a scrape of
/metrics over HTTP. Prints per round the answer's seconds, the scrape's seconds and bytes, and the RSS, so that
memory can be seen to stay flat under churn.

    python benchmarks/exporter.py [--rounds 30 | --minutes 60] [--churn 0.05] [--nodes 5000] [--keep DIR]"""

from __future__ import annotations

import argparse
import copy
import random
import resource
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import SCAN_PODS, generate

from kubectl_dra import runtime
from kubectl_dra.analyze.pod.dryrun import Analysis
from kubectl_dra.analyze.reports.status import scan
from kubectl_dra.cli.exporter import Exporter
from kubectl_dra.features import Semantics
from kubectl_dra.gather.client import ListRecord
from kubectl_dra.gather.files import load_files
from kubectl_dra.gather.watch import LiveSession


def rss_mb() -> float:
    """The resident set now (not the peak): /proc/self/statm's second field, in pages."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def session_of(objs: list[dict]) -> LiveSession:
    """A LiveSession holding the objects as the lists of a live gather would (one record per kind)."""
    by_kind: dict[str, list] = {}
    for o in objs:
        by_kind.setdefault(o.get("kind") or "", []).append(o)
    records = [ListRecord(f"/{kind}", kind, items[0].get("apiVersion") or "v1", {}, "1", items)
               for kind, items in by_kind.items()]  # fmt: skip
    meta = {"gaps": (), "server_version": "v1.37.2", "resource_api_version": "v1", "namespace": "default",
            "listed": frozenset({"daemonsets", "daemonset_events", "node_events"}), "bound_pods": True}  # fmt: skip
    return LiveSession(None, records, [], meta)


def churn(session: LiveSession, share: float, rnd: random.Random, rv: int) -> int:
    """Replace `share` of the slices and pods with new copies (a new resourceVersion): what a watch applies."""
    changed = 0
    for s in session.sources:
        if s.kind not in ("ResourceSlice", "Pod"):
            continue
        keys = list(s.objects)
        for k in rnd.sample(keys, int(len(keys) * share)):
            o = copy.deepcopy(s.objects[k])
            o.setdefault("metadata", {})["resourceVersion"] = str(rv)
            s.objects[k] = o
            changed += 1
    return changed


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--minutes", type=float, default=None, help="a soak: rounds until this long has passed")
    ap.add_argument("--churn", type=float, default=0.05)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--keep", type=Path, default=None, help="where the dump is kept (made once)")
    a = ap.parse_args(argv)
    where = a.keep or Path(tempfile.mkdtemp(prefix="kubectl-dra-exporter-bench-"))
    where.mkdir(parents=True, exist_ok=True)
    dump = where / f"exporter-{a.nodes}.yaml"
    if not dump.exists():
        generate(dump, scan_pods=SCAN_PODS, nodes=a.nodes)
    objs: list = []
    load_files([str(dump)], None, kept=objs)  # every object as read
    session = session_of(objs)
    sem = Semantics.for_version((1, 37))
    ex = Exporter("127.0.0.1:0", "bench", session)
    ex.start()
    url = f"http://127.0.0.1:{ex.port}/metrics"
    rnd = random.Random(7)
    print(
        "round  changed  answer_s  (scan_s  metrics_s)  scrape_s  again_s  scrape_kB  series  rss_MB  cpu_s", flush=True
    )
    until = time.monotonic() + a.minutes * 60 if a.minutes else None
    for i in range(10**9 if until else a.rounds):
        if until is not None and time.monotonic() > until:
            break
        changed = churn(session, a.churn, rnd, 1000 + i) if i else 0
        if i == 1:
            runtime.long_running()  # as cli/watch.py: after the first answer
        runtime.next_evaluation()
        t, cpu = time.perf_counter(), time.process_time()
        snap = session.snapshot()
        base = Analysis(snap, sem)  # as cli/watch.py: one Analysis for the scan and the inventory
        report = scan(snap, sem, None, analysis=base)
        scanned = time.perf_counter() - t
        ex.observe(snap, report, sem, base.fork())
        del snap, report, base
        answer, cpu = time.perf_counter() - t, time.process_time() - cpu
        t = time.perf_counter()
        with urllib.request.urlopen(url, timeout=60) as r:
            body = r.read()
        scrape = time.perf_counter() - t
        t = time.perf_counter()  # a second scrape of the same answer: its text is written once (cli/exporter.py)
        with urllib.request.urlopen(url, timeout=60) as r:
            again = len(r.read())
        scrape2 = time.perf_counter() - t
        assert abs(again - len(body)) < 4096, (again, len(body))  # the same answer (the process's values aside)
        series = sum(1 for line in body.splitlines() if line and not line.startswith(b"#"))
        print(f"{i:5d}  {changed:7d}  {answer:8.2f}  ({scanned:6.2f}  {ex.took:9.2f})  {scrape:8.3f}  {scrape2:7.3f}  "
              f"{len(body) / 1024:9.0f}  {series:6d}  {rss_mb():6.0f}  {cpu:5.2f}", flush=True)  # fmt: skip
    ex.server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
