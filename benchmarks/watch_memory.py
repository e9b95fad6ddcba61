"""Memory of a long `-w` run, in-process and without a cluster (issue 31: "memory steady over hours").

Drives the code `kubectl-dra status -A -w` or `explain pod soak-probe -w` runs per answer (cli/watch.py's loop, the
LiveSession's snapshot of the objects it holds, the analysis, the rendering) over benchmarks/bench.py's realistic
dump plus soak.py's probe, replacing one ResourceSlice per answer the way a watch event does (a freshly decoded
object, given to LiveSession._apply): in pairs on a random node a device gains `soak: on`, then loses it, alternately
updated in place and deleted + recreated (a new uid), as benchmarks/soak.py's churn does. Only the watch threads and
the waiting are left out (the events are applied on the main thread, with no settle time).

Every `--every` answers it prints, after a full collection: RSS, sys.getallocatedblocks(), the number of objects
the collector tracks (the frozen ones included: -w freezes what the first answer left, runtime.long_running), and
the types that grew most since the previous line (of the objects made since the freeze: gc.get_objects() leaves the
frozen out, so the count of a type also rises while new versions of slices replace frozen ones, until each slice has
been replaced once). The growth per answer after the warm-up is the figure to compare (the first 250 answers or so
fill the memos). About 0.3 s an answer at 1,000 nodes on the development machine: 2,000 answers take 10 minutes.

    PYTHONPATH=. nice -n 10 python benchmarks/watch_memory.py [--nodes 1000] [--answers 2000] [--every 500]
        [--watch explain|status] [--trim] [--referrers [TYPES]] [--trace FRAMES] [--keep DIR]

--trim calls glibc's malloc_trim(0) after each answer (RSS then shows what Python and the extensions hold, not the
free memory malloc keeps); --referrers TYPES (comma-separated type names, default Quantity) walks, at the end, the
referrers of a few objects of those types made after the first line and alive at the last, up to a module's globals
(what holds them; a chain that ends with no referrer is held from C); --trace FRAMES starts tracemalloc at the first
line and prints where what is still held was allocated (slow: minutes for 100 answers). The dump is generated once
into --keep (default .cache/bench/realistic-N.json). Not a test: the unit tier does not run it
(tests/unit/test_watch_updates.py holds the bounded-memory test, test_answers_leave_no_cel_call_behind).
Findings and figures: docs/performance.md, "Watch: a soak under slice churn".
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import gc
import io
import json
import queue
import random
import sys
import time
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import bench  # noqa: E402
import soak  # noqa: E402

from kubectl_dra import jsonio, runtime  # noqa: E402
from kubectl_dra.cli import watch as cliwatch  # noqa: E402
from kubectl_dra.cli.options import Options  # noqa: E402
from kubectl_dra.gather.watch import LiveSession  # noqa: E402

KINDS = ("DeviceClass", "Node", "ResourceSlice", "ResourceClaim", "Pod", "Event")


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        return int(f.read().split("VmRSS:")[1].split()[0]) / 1024


class Session(LiveSession):
    """The LiveSession of a watch, fed by the churn below: wait_for_change() makes the next event and applies it
    (threads=False), or (threads=True) hands it as a JSON line to the session's real watch thread, which decodes
    and applies it as from the API server's stream (gather/watch.py _watch_once, in one malloc arena as -w runs),
    then waits as -w does (with a shorter settle time). After the last answer it stops the loop as Ctrl-C does."""

    def __init__(self, records, meta, churn, answers: int, report, threads: bool = False):
        super().__init__(_Client() if threads else None, records, [], meta)
        self.churn, self.answers, self.report, self.threads = churn, answers, report, threads
        self.n = 0

    def start(self) -> None:
        if self.threads:
            runtime.one_malloc_arena()
            super().start()

    def wait_for_change(self, settle: float = 0.0, poll: float = 0.0) -> None:
        if self.n:
            self.report(self.n)
        if self.n >= self.answers:
            raise KeyboardInterrupt
        self.n += 1
        src = next(s for s in self.sources if s.kind == "ResourceSlice")
        events = self.churn(self.n - 1, src)
        if not self.threads:
            for ev in events:
                self._apply(src, ev)
            return
        self.client.lines.put(b"".join(jsonio.dumps(ev, indent=False).encode() + b"\n" for ev in events))
        super().wait_for_change(settle=0.02, poll=0.05)


class _Client:
    """The API server as the watch threads see it: the slices' watch streams the lines put in `lines`; the other
    watches stream nothing until the process ends."""

    def __init__(self):
        self.lines: queue.Queue = queue.Queue()
        self.record = None

    def request(self, url: str, *timeouts):
        return _Stream(self.lines if url.startswith("ResourceSlice?") else queue.Queue())


class _Stream:
    status, reason = 200, "OK"

    def __init__(self, lines: queue.Queue):
        self.lines = lines

    def stream(self, size: int, decode_content: bool = True):
        while True:
            yield self.lines.get()

    def read(self, size: int) -> bytes:
        return b""

    def release_conn(self) -> None:
        pass


def churn_events(nodes: int, seed: int = 7):
    """soak.py's churn as watch events: in pairs on a node (soak "on", then off), by update or delete + recreate."""
    rnd = random.Random(seed)
    state = {"node": "", "rv": 10**6}

    def events(i: int, src) -> list[dict]:
        on = i % 2 == 0
        if on:
            state["node"] = f"node-{rnd.randrange(min(100, nodes // 2), nodes):05d}"
        name = f"{state['node']}-gpus"
        held = next(o for k, o in src.objects.items() if k[1] == name)
        obj = jsonio.loads(jsonio.dumps(held, indent=False))  # a new object, as each event's decode makes
        attrs = obj["spec"]["devices"][0].setdefault("attributes", {})
        if on:
            attrs["soak"] = {"string": "on"}
        else:
            attrs.pop("soak", None)
        state["rv"] += 1
        obj["metadata"]["resourceVersion"] = str(state["rv"])
        if (i // 2) % 2 == 0:
            return [{"type": "MODIFIED", "object": obj}]
        gone = jsonio.loads(jsonio.dumps(held, indent=False))
        obj["metadata"]["uid"] = f"uid-{state['rv']}"
        return [{"type": "DELETED", "object": gone}, {"type": "ADDED", "object": obj}]

    return events


def main() -> int:  # long: the set-up, the probe of each line and the referrers' walk in one place
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--answers", type=int, default=2000)
    p.add_argument("--every", type=int, default=500)
    p.add_argument("--watch", choices=("explain", "status"), default="explain")
    p.add_argument("--threads", action="store_true", help="events through the real watch thread, as JSON lines")
    p.add_argument("--trim", action="store_true", help="malloc_trim(0) after each answer")
    p.add_argument(
        "--referrers",
        nargs="?",
        const="Quantity",
        help="the owners of what the answers after the first line kept (of these types, comma-separated)",
    )
    p.add_argument("--trace", type=int, default=0, metavar="FRAMES", help="tracemalloc from the first line (slow)")
    p.add_argument("--keep", default=".cache/bench", help="where the dump is kept (reused when present)")
    a = p.parse_args()

    dump = Path(a.keep) / f"realistic-{a.nodes}.json"
    if not dump.exists():
        dump.parent.mkdir(parents=True, exist_ok=True)
        bench.generate(dump, 0, True, a.nodes)
    items = [o for o in json.loads(dump.read_text())["items"] if o["kind"] in KINDS] + soak.probe_objects()
    for n, o in enumerate(items):
        m = o["metadata"]
        m.setdefault("uid", f"uid-{n}")
        m.setdefault("resourceVersion", "1")
        m.setdefault("creationTimestamp", "2026-12-01T00:00:00Z")
    records = [
        SimpleNamespace(path=k, kind=k, api_version="", query={}, rv="1", items=[o for o in items if o["kind"] == k])
        for k in KINDS
    ]
    del items
    meta = {
        "gaps": (),
        "server_version": "v1.35.0",
        "resource_api_version": "v1",
        "namespace": soak.live.NS,
        "listed": frozenset(),
        "bound_pods": True,
    }
    trim = ctypes.CDLL(None).malloc_trim if a.trim else None
    lines: list = []
    marks: dict = {}

    def report(n: int) -> None:
        if trim is not None:
            trim(0)
        if n % a.every and n != 1:
            return
        gc.collect()
        objs = gc.get_objects()
        count = collections.Counter(type(o).__qualname__ for o in objs)
        prev = lines[-1] if lines else None
        # tracked: every object the collector tracks, the frozen ones too (runtime.long_running: gc.freeze); the
        # counts by type are of the objects made since the freeze only (gc.get_objects leaves the frozen out)
        lines.append((n, rss_mb(), sys.getallocatedblocks(), len(objs) + gc.get_freeze_count(), count))
        grew = ""
        if prev is not None:
            per = n - prev[0]
            top = (count - prev[4]).most_common(6)
            grew = ", ".join(f"{k} +{v / per:.1f}" for k, v in top)
            print(
                f"{n:6d} answers  RSS {lines[-1][1]:7.1f} MB  blocks {lines[-1][2]:9d} ({(lines[-1][2] - prev[2]) / per:+.1f}"
                f"/answer)  tracked {lines[-1][3]:8d} ({(lines[-1][3] - prev[3]) / per:+.1f}/answer)  {time.process_time():.0f} s  {grew}",
                file=sys.stderr,
                flush=True,
            )
        else:
            print(
                f"{n:6d} answer   RSS {lines[-1][1]:7.1f} MB  blocks {lines[-1][2]:9d}  tracked {lines[-1][3]:8d}",
                file=sys.stderr,
            )
        if a.referrers and n == a.every:
            marks["ids"] = {id(o) for o in objs}
        if a.trace and n == a.every:
            tracemalloc.start(a.trace)
            marks["trace"] = tracemalloc.take_snapshot()
        del objs

    session = Session(records, meta, churn_events(a.nodes), a.answers, report, a.threads)
    del records
    params = {"output": "text", "namespace": soak.live.NS, "no_color": True, "all_namespaces": a.watch == "status"}
    o = Options.from_click(params)
    out, sys.stdout = sys.stdout, io.StringIO()
    t0 = time.monotonic()
    try:
        first = [session.snapshot()]
        if a.watch == "explain":
            cliwatch.watch_pod(o, session, first, soak.live.NS, soak.PROBE)
        else:
            from dataclasses import replace

            from kubectl_dra.analyze.reports.status import scan

            def evaluate(snap):
                rep = scan(snap, o.semantics(snap.server_version), None, None, (), alone=False)
                return replace(rep, scope={"namespace": None, "selector": None})

            cliwatch.watch_status(o, session, first, evaluate)
    except SystemExit:
        pass
    finally:
        printed, sys.stdout = sys.stdout, out
    print(f"{a.answers} answers in {time.monotonic() - t0:.0f} s; {printed.getvalue().count(chr(10))} lines printed")
    if len(lines) >= 3:
        (n1, r1, b1, t1, _), (n2, r2, b2, t2, _) = lines[1], lines[-1]
        per = n2 - n1
        print(
            f"from answer {n1} to {n2}: RSS {(r2 - r1) / per * 1024:+.1f} kB/answer, blocks {(b2 - b1) / per:+.1f}/answer,"
            f" tracked objects {(t2 - t1) / per:+.1f}/answer"
        )
    if "trace" in marks:
        gc.collect()
        grown = tracemalloc.take_snapshot().compare_to(marks["trace"], "traceback")
        print("where the memory allocated after the first line and still held was allocated (tracemalloc):")
        for st in grown[:8]:
            print(f"  {st.size_diff / 1024:+.0f} kB, {st.count_diff:+d} blocks")
            for line in st.traceback.format(limit=a.trace)[-2 * a.trace :]:
                print("     ", line)
    if a.referrers and "ids" in marks:
        owners(marks["ids"], tuple(a.referrers.split(",")))
    return 0


def owners(before: set, follow: tuple = ("Quantity",)) -> None:
    """The objects alive now that were made after the first line, by type, and for a few of each type in follow
    the chain of referrers up to a module's globals or an object that is not itself new (the long-lived owner).
    The frozen objects (runtime.long_running: gc.freeze) are unfrozen first: gc.get_referrers does not see them."""
    gc.collect()
    new = [o for o in gc.get_objects() if id(o) not in before]
    gc.unfreeze()
    objs = gc.get_objects()
    print(f"{len(new)} tracked objects made after the first line are alive:")
    print(
        "  " + ", ".join(f"{k} {v}" for k, v in collections.Counter(type(o).__qualname__ for o in new).most_common(12))
    )
    newids = {id(o) for o in new}
    for name in follow:
        picked = [o for o in new if type(o).__qualname__ == name]
        few = picked[:: max(1, len(picked) // 3)][:3]
        for o in few:
            print(f"referrers of a {name}:")
            walk(o, newids, {id(objs), id(new), id(picked), id(few)})
        del picked, few
    del objs, new


def walk(o, newids: set, skip: set) -> None:
    cur, seen, mine = o, set(), []  # mine: this walk's own lists of referrers, which refer to what they list
    for depth in range(14):
        raw = gc.get_referrers(cur)
        mine.append(raw)
        ours = {id(x) for x in mine} | {id(mine)}
        refs = [r for r in raw if id(r) not in skip and id(r) not in seen and id(r) not in ours]
        refs = [r for r in refs if type(r).__name__ not in ("frame", "list_iterator")]
        if not refs:
            print("  " * depth + "(no more referrers)")
            return
        cur = refs[0]
        del refs
        seen.add(id(cur))
        old = "" if id(cur) in newids else "  [made before the first line]"
        print("  " * depth + f"<- {describe(cur)} ({len(raw) - 1} referrers){old}")
        if isinstance(cur, dict) and "__name__" in cur and "__builtins__" in cur:
            return


def describe(o) -> str:
    t = type(o).__qualname__
    if isinstance(o, dict) and "__name__" in o and "__builtins__" in o:
        return f"the globals of module {o['__name__']}"
    if isinstance(o, dict):
        return f"{t}[{len(o)}]{{{', '.join(repr(k)[:30] for k in list(o)[:3])}}}"
    if isinstance(o, (list, tuple, set)):
        return f"{t}[{len(o)}]({', '.join(type(x).__qualname__ for x in list(o)[:4])})"
    return f"{type(o).__module__}.{t}"


if __name__ == "__main__":
    raise SystemExit(main())
