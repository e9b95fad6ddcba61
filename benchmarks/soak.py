"""Soak: `-w` as a long-running process under ResourceSlice churn (issue 31). The realistic 5,000-node dump of
live.py (40,000 devices with unique uuid/pciBusID, 2,000 allocated claims) in the real control plane on loopback,
plus a probe: a pending pod whose claim asks for a device with the attribute soak == "on", which no device has.
`kubectl-dra status -A -w` and `kubectl-dra explain pod soak-probe -w` watch it while the slices churn at a steady
rate, as restarting kubelet plugins and drivers do, in pairs on one node: a device gets soak "on" (the probe can
run there), then loses it (blocked again), alternately by updating the slice in place and by deleting and
recreating it. So every change flips the probe's verdict and both watchers must print one line for it.

    python benchmarks/soak.py [--minutes 30] [--interval 3] [--nodes 5000] [--keep-cluster | --cluster DIR]
                              [--exporter [--scrape 15] [--no-explain]]

With --exporter the status watcher is the exporter (`--metrics-bind-address 127.0.0.1:0`), scraped over HTTP every
--scrape seconds as Prometheus would: each scrape's duration, size and series count, and whether the probe's
`kubectl_dra_pod_status` series follows the churn; --no-explain leaves the explain watcher out (the exporter alone).

Prints, per watcher: CPU seconds per change (median, p95: the process's user + system time from just before one
change to just before the next), the output latency per change (median, p95, max), RSS after the first answer,
peak and at the end, its slope over the run after the first fifth (MB per hour), and how many changes were
reflected (one line each, with the right verdict). The scheduler and the controller-manager are paused, as in
live.py. Not a test: CI does not run it."""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "cluster"))
sys.path.insert(0, str(HERE))

import bench  # noqa: E402
import cluster as clusterlib  # noqa: E402
import live  # noqa: E402

PROBE = "soak-probe"
SLICES = f"{live.RES}/resourceslices"
FIRST_ANSWER_SECONDS = 600


def probe_objects() -> list[dict]:
    """The probe's claim and pod (default namespace): a device with soak == "on", which only the churn adds."""
    sel = f'has(device.attributes["{bench.D}"].soak) && device.attributes["{bench.D}"].soak == "on"'
    req = {"name": "gpu", "exactly": {"deviceClassName": "gpu", "selectors": [{"cel": {"expression": sel}}]}}
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": PROBE, "namespace": live.NS},
        "spec": {"devices": {"requests": [req]}},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": PROBE, "namespace": live.NS},
        "spec": {
            "resourceClaims": [{"name": "gpu", "resourceClaimName": PROBE}],
            "containers": [{"name": "c", "image": "x"}],
        },
    }
    return [claim, pod]


class Watcher:
    """One `kubectl-dra ... -w` process: its stdout lines with the time each arrived, its CPU time and RSS."""

    def __init__(self, name: str, argv: list[str]):
        self.name = name
        env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
        self.lines: list[tuple[float, str]] = []
        self.errors: list[str] = []
        self.rss: list[tuple[float, float]] = []  # (seconds since the churn began, MB)
        self.metrics_url = ""
        threading.Thread(target=self._read, args=(self.proc.stdout, self.lines), daemon=True).start()
        threading.Thread(target=self._read, args=(self.proc.stderr, None), daemon=True).start()

    def _read(self, stream, into: list | None) -> None:
        for raw in stream:
            line = raw.decode(errors="replace").rstrip("\n")
            if into is None:
                if line.startswith("serving metrics on "):
                    self.metrics_url = line.split()[-1]
                self.errors.append(line)
            else:
                into.append((time.monotonic(), line))

    def cpu(self) -> float:
        return live.cpu_seconds(self.proc.pid)

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class Scraper:
    """Prometheus' side of the exporter: GET /metrics every `every` seconds (in a thread, as a scrape comes
    whenever it comes), keeping each scrape's time, duration, size, series count and the probe's verdict series."""

    def __init__(self, url: str, every: float):
        self.url, self.every = url, every
        self.scrapes: list[dict] = []
        self.failures: list[str] = []
        self.done = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while not self.done.wait(self.every):
            t = time.monotonic()
            try:
                with urllib.request.urlopen(self.url, timeout=10) as r:
                    body = r.read().decode()
            except OSError as e:
                self.failures.append(f"{time.monotonic():.0f}: {e}")
                continue
            lines = [x for x in body.splitlines() if x and not x.startswith("#")]
            probe = [x for x in lines if x.startswith("kubectl_dra_pod_status{") and f'pod="{PROBE}"' in x]
            self.scrapes.append(
                {"t": t, "seconds": time.monotonic() - t, "bytes": len(body), "series": len(lines), "probe": probe}
            )

    def stop(self) -> None:
        self.done.set()


def settle(watchers: list[Watcher], quiet: float = 3.0, timeout: float = FIRST_ANSWER_SECONDS) -> None:
    """Until every watcher has printed something and used no CPU for `quiet` seconds (its first answer is out)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for w in watchers:
            if w.proc.poll() is not None:
                raise SystemExit(f"{w.name} -w exited with {w.proc.returncode}: {' | '.join(w.errors[-5:])}")
        if all(w.lines for w in watchers):
            before = [w.cpu() for w in watchers]
            time.sleep(quiet)
            if all(w.cpu() - b < 0.05 for w, b in zip(watchers, before)):
                return
        else:
            time.sleep(1)
    raise SystemExit("the watchers did not settle on their first answer")


class Churn:
    """The changes: in pairs on one node (soak "on", then off again), by update in place or delete + recreate."""

    def __init__(self, api: clusterlib.Api, nodes: int, seed: int = 7):
        self.api, self.rnd = api, random.Random(seed)
        self.nodes = nodes
        self.node = ""
        self.log: list[dict] = []

    def change(self, i: int) -> dict:
        on = i % 2 == 0
        if on:  # a node away from the first few, where the bench pod's report names its candidates
            self.node = f"node-{self.rnd.randrange(min(100, self.nodes // 2), self.nodes):05d}"
        how = "update" if (i // 2) % 2 == 0 else "recreate"
        path = f"{SLICES}/{self.node}-gpus"
        obj = self.api.get(path)
        attrs = obj["spec"]["devices"][0].setdefault("attributes", {})
        if on:
            attrs["soak"] = {"string": "on"}
        else:
            attrs.pop("soak", None)
        t = time.monotonic()
        if how == "update":
            self.api.put(path, obj)
        else:  # a restarting kubelet plugin: its slice goes, then comes back
            self.api.delete(path)
            obj["metadata"] = {"name": obj["metadata"]["name"]}
            self.api.post(SLICES, obj)
        rec = {"i": i, "on": on, "how": how, "node": self.node, "t": t, "done": time.monotonic()}
        self.log.append(rec)
        return rec


def no_device(name: str, line: str) -> bool:
    """Whether a watcher's line for the probe gives its verdict when no device has soak "on": blocked for want of
    a device that passes its selector (status: the row's STATE, MISSING and reason; explain: the headline after the
    time). With the device, the verdict is another: OK, unknown, or blocked by where the device is (the node may be
    tainted or full) or by what holds it (the churn may pick a device a claim has: "already allocated", which
    status also shows as Blocked/device; before 4 Dec, stop 41, those lines were counted as not reflected)."""
    if name == "explain":
        return "Blocked: no device matches the request" in line
    return line.split()[4:6] == ["Blocked", "device"] and "already allocated" not in line


def reflected(name: str, lines: list, changes: list[dict]) -> tuple[int, list[float]]:
    """How many changes were reflected, and the latency of each (from the end of the change's requests to its
    line). Each line of the probe is the verdict of the latest change before it that makes that verdict, if that
    change has no line yet: a line is never counted twice, a pair of changes answered together (no line: the
    verdict came back) counts as two missed, and a line later than the change after next as a missed change."""
    ok, lat, last = 0, [], -1
    for t, line in lines:
        if PROBE not in line and name != "explain":
            continue
        on = not no_device(name, line)
        j = max((k for k, c in enumerate(changes) if c["done"] <= t and c["on"] == on), default=-1)
        if j > last:
            ok, last = ok + 1, j
            lat.append(t - changes[j]["done"])
    return ok, lat


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, MB), in MB per hour."""
    if len(points) < 2:
        return float("nan")
    mx = statistics.fmean(p[0] for p in points)
    my = statistics.fmean(p[1] for p in points)
    den = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / den * 3600 if den else float("nan")


def soak(state: dict, a: argparse.Namespace) -> dict:  # long: set-up, the churn loop and the summary in one place
    api = clusterlib.Api.from_state(state)
    kc = state["kubeconfig"]
    py = [sys.executable, "-m", "kubectl_dra"]
    metrics = ["--metrics-bind-address", "127.0.0.1:0"] if a.exporter else []
    watchers = [Watcher("status", [*py, "status", "-A", "-w", "--kubeconfig", kc, *metrics])]
    if not a.no_explain:
        watchers.append(Watcher("explain", [*py, "explain", "pod", PROBE, "-n", live.NS, "-w", "--kubeconfig", kc]))
    scraper = None
    try:
        settle(watchers)
        if a.exporter:
            if not watchers[0].metrics_url:
                raise SystemExit(f"the exporter printed no address: {' | '.join(watchers[0].errors[-5:])}")
            scraper = Scraper(watchers[0].metrics_url, a.scrape)
        start_rss = {w.name: w.rss_mb() for w in watchers}
        print("first answers out; RSS " + ", ".join(f"{k} {v:.0f} MB" for k, v in start_rss.items()), file=sys.stderr)
        churn = Churn(api, a.nodes)
        t0 = time.monotonic()
        end = t0 + a.minutes * 60
        cpu: dict[str, list[float]] = {w.name: [] for w in watchers}
        last_cpu = {w.name: w.cpu() for w in watchers}
        next_sample = t0
        i = 0
        while time.monotonic() < end or i % 2:  # whole pairs: the probe ends blocked, as it began
            due = t0 + i * a.interval
            while (now := time.monotonic()) < due:
                if now >= next_sample:
                    for w in watchers:
                        w.rss.append((now - t0, w.rss_mb()))
                    next_sample += a.sample
                time.sleep(min(0.05, due - now))
            for w in watchers:
                if w.proc.poll() is not None:
                    raise SystemExit(f"{w.name} -w exited with {w.proc.returncode}: {' | '.join(w.errors[-5:])}")
                c = w.cpu()
                if i:
                    cpu[w.name].append(c - last_cpu[w.name])
                last_cpu[w.name] = c
            churn.change(i)
            i += 1
            if i % 30 == 0:  # so far: the changes answered (all but the last), CPU, RSS
                rel = [dict(c, done=c["done"] - t0) for c in churn.log[:-1]]
                seen = [f"{w.name} {reflected(w.name, _since(w.lines, t0), rel)[0]}" for w in watchers]
                rss = [f"{w.name} {w.rss[-1][1]:.0f} MB" for w in watchers if w.rss]
                cpus = [f"{w.name} {statistics.median(cpu[w.name]):.2f} s" for w in watchers]
                print(
                    f"  {(time.monotonic() - t0) / 60:5.1f} min: {i - 1} changes answered: {', '.join(seen)};"
                    f" CPU/change {', '.join(cpus)}; RSS {', '.join(rss)}",
                    file=sys.stderr,
                )
        time.sleep(a.interval)  # the last change's answer
        for w in watchers:
            cpu[w.name].append(w.cpu() - last_cpu[w.name])
            w.rss.append((time.monotonic() - t0, w.rss_mb()))
        stop = time.monotonic()
    finally:
        if scraper:
            scraper.stop()
        for w in watchers:
            w.stop()
    scrapes = [dict(x, t=x["t"] - t0) for x in scraper.scrapes] if scraper else []
    return {
        "scrapes": scrapes,
        "scrape_failures": scraper.failures if scraper else [],
        "interval": a.interval,
        "seconds": stop - t0,
        "log": [dict(c, t=c["t"] - t0, done=c["done"] - t0) for c in churn.log],
        "watchers": {
            w.name: {
                "rss_start": start_rss[w.name],
                "rss_samples": w.rss,
                "cpu_per_change": cpu[w.name],
                "lines": _since(w.lines, t0),
                "stderr": w.errors[-5:],
            }
            for w in watchers
        },
    }


def _since(lines: list, t0: float) -> list:
    return [(t - t0, line) for t, line in list(lines) if t >= t0]


def report(run: dict) -> dict:
    """Print the figures of a run (soak()'s record, or the JSON file of one) and return them."""
    log, seconds = (
        run["log"],
        run.get("seconds") or max(t for w in run["watchers"].values() for t, _ in w["rss_samples"]),
    )
    print(f"{len(log)} changes in {seconds / 60:.1f} min, one every {run['interval']:g} s")
    head = f"{'':10} {'CPU s/change':>14} {'p95':>6} {'latency s':>10} {'p95':>6} {'max':>6}"
    print(f"{head} {'RSS start':>10} {'peak':>6} {'end':>6} {'MB/h':>7} {'reflected':>12}")
    figures = {}
    for name, w in run["watchers"].items():
        ok, lat = reflected(name, w["lines"], log)
        rss = [m for _, m in w["rss_samples"]]
        cpu = w["cpu_per_change"]
        row = figures[name] = {
            "cpu_median": statistics.median(cpu),
            "cpu_p95": pct(cpu, 0.95),
            "latency_median": statistics.median(lat) if lat else float("nan"),
            "latency_p95": pct(lat, 0.95),
            "latency_max": max(lat, default=float("nan")),
            "rss_start": w["rss_start"],
            "rss_peak": max([w["rss_start"], *rss]),
            "rss_end": rss[-1],
            "rss_slope_mb_per_hour": slope([p for p in w["rss_samples"] if p[0] >= seconds / 5]),
            "reflected": ok,
        }
        print(
            f"{name:10} {row['cpu_median']:>14.2f} {row['cpu_p95']:>6.2f} {row['latency_median']:>10.2f}"
            f" {row['latency_p95']:>6.2f} {row['latency_max']:>6.2f} {row['rss_start']:>10.0f}"
            f" {row['rss_peak']:>6.0f} {row['rss_end']:>6.0f} {row['rss_slope_mb_per_hour']:>7.1f}"
            f" {f'{ok}/{len(log)}':>12}"
        )
        for line in w["stderr"][-3:]:
            print(f"  {name} stderr: {line}")
    if run.get("scrapes"):
        figures["scrapes"] = scrape_figures(run)
    return figures


def scrape_figures(run: dict) -> dict:
    """The exporter's scrapes: how many, how long (median, p95, max), their size and series, failures, and how
    many held the probe's verdict series (every scrape should: one series per pod, its verdict a label)."""
    sc = run["scrapes"]
    secs = [x["seconds"] for x in sc]
    out = {
        "scrapes": len(sc),
        "failures": len(run.get("scrape_failures") or []),
        "seconds_median": statistics.median(secs),
        "seconds_p95": pct(secs, 0.95),
        "seconds_max": max(secs),
        "bytes_median": statistics.median(x["bytes"] for x in sc),
        "series_min": min(x["series"] for x in sc),
        "series_max": max(x["series"] for x in sc),
        "with_probe": sum(1 for x in sc if x["probe"]),
        "probe_values": sorted({line for x in sc for line in x["probe"]}),
    }
    print(
        f"scrapes: {out['scrapes']} ({out['failures']} failed), {out['seconds_median']:.2f} s median,"
        f" {out['seconds_p95']:.2f} p95, {out['seconds_max']:.2f} max; {out['bytes_median'] / 1e6:.1f} MB,"
        f" {out['series_min']}-{out['series_max']} series; the probe's series in {out['with_probe']}"
    )
    for line in out["probe_values"][:6]:
        print(f"  {line}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--interval", type=float, default=3.0, help="seconds between changes")
    ap.add_argument("--sample", type=float, default=5.0, help="seconds between RSS samples")
    ap.add_argument("--nodes", type=int, default=bench.NODES)
    ap.add_argument("--keep-cluster", action="store_true")
    ap.add_argument("--cluster", help="the state directory of a cluster kept (and loaded) by an earlier run")
    ap.add_argument("--json", help="write the run (every change, line and sample) and its figures to this file")
    ap.add_argument("--exporter", action="store_true", help="the status watcher serves metrics, scraped over HTTP")
    ap.add_argument("--scrape", type=float, default=15.0, help="seconds between scrapes (with --exporter)")
    ap.add_argument("--no-explain", action="store_true", help="no explain watcher (the exporter alone)")
    ap.add_argument("--report", metavar="JSON", help="print the figures of a run written by --json, and stop")
    a = ap.parse_args()
    if a.report:
        report(json.loads(Path(a.report).read_text()))
        return 0
    bench.compile_modules()
    state_dir, state = live.cluster(a.cluster, a.nodes, "soak", tuple(probe_objects()))
    try:
        live._signal(state, signal.SIGSTOP)
        try:
            run = soak(state, a)
        finally:
            live._signal(state, signal.SIGCONT)
        figures = report(run)
        if a.json:
            Path(a.json).write_text(json.dumps(dict(run, figures=figures), indent=1) + "\n")
    finally:
        if not (a.keep_cluster or a.cluster):
            clusterlib.down(state_dir)
    return 0


if __name__ == "__main__":
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
    sys.exit(main())
