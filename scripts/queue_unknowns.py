"""Count the Unknown rows of `status -A -o json` by reason code over the golden scenarios whose command is a queue
or status one (tests/scenarios/*/cmd starts with `status`, or the scenario's name with `queue-`): a measure of how
often the queue leaves a pod open (issue 45), before and after a change. Not a test.

With --random N: N seeded random queues instead (tests/queue_brute.py: 2-4 nodes, identical GPUs, 3-10 pending pods
of four priorities, ties, pins, cpu, pods without DRA), each also judged by that module's brute force; a certain
answer that the brute force contradicts is printed as a disagreement, and the open answers that every order and node
choice would decide are counted.

Run: PYTHONPATH=. python scripts/queue_unknowns.py [-v] [--random N]"""

from __future__ import annotations

import collections
import json
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from clirun import run
from queue_brute import brute, random_queue

HERE = Path(__file__).resolve().parents[1] / "tests" / "scenarios"
_SHARED = ("--kubernetes-version", "--feature-gates")


def _scenarios() -> list[Path]:
    out = []
    for d in sorted(HERE.iterdir()):
        if not (d / "cmd").exists() or not (d / "input.yaml").exists():
            continue
        cmd = shlex.split((d / "cmd").read_text())
        if cmd[0] == "status" or d.name.startswith("queue-"):
            out.append(d)
    return out


def main() -> None:
    verbose = "-v" in sys.argv
    if "--random" in sys.argv:
        return _main_random(int(sys.argv[sys.argv.index("--random") + 1]), verbose)
    states: collections.Counter = collections.Counter()
    codes: collections.Counter = collections.Counter()
    reasons: collections.Counter = collections.Counter()
    t0 = time.time()
    for d in _scenarios():
        cmd = shlex.split((d / "cmd").read_text())
        extra = [a for i, a in enumerate(cmd) if a in _SHARED or (i and cmd[i - 1] in _SHARED)]
        r = run(["status", "-A", "-o", "json", *extra, "--from-file", str(d / "input.yaml")])
        for row in json.loads(r.stdout).get("items") or []:
            states[row["state"]] += 1
            if row["state"] != "Unknown":
                continue
            for c in row.get("codes") or ["-"]:
                codes[c] += 1
            reasons[(row.get("reason") or "")[:90]] += 1
            if verbose:
                print(f"{d.name}: {row['namespace']}/{row['pod']}: {row.get('codes')} {row.get('reason')}")
    print(f"{len(_scenarios())} scenarios in {time.time() - t0:.1f}s; rows: {dict(states)}")
    print(f"Unknown by code: {dict(codes)}")
    for k, n in reasons.most_common():
        print(f"  {n:3d}  {k}")


def _main_random(n: int, verbose: bool) -> None:
    import tempfile

    states: collections.Counter = collections.Counter()
    reasons: collections.Counter = collections.Counter()
    bad, skipped, decided, t0 = [], 0, 0, time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(n):
            objs, model = random_queue(seed)
            truth = brute(model)
            path = Path(tmp) / f"{seed}.json"
            path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
            r = run(["status", "-A", "-o", "json", "--from-file", str(path)])
            for row in json.loads(r.stdout).get("items") or []:
                if row["pod"].startswith("hold-"):
                    continue
                states[row["state"]] += 1
                if row["state"] == "Unknown":
                    reasons[(row.get("reason") or "")[:90]] += 1
                    if truth is not None and len(truth[row["pod"]]) == 1:
                        decided += 1
                    if verbose:
                        print(f"{seed}: {row['pod']}: {row.get('reason')}")
                    continue
                if truth is None:
                    skipped += 1
                    continue
                real = truth[row["pod"]]
                if real != {row["state"] == "OK"}:
                    bad.append((seed, row["pod"], row["state"], sorted(real), row.get("reason")))
    total = sum(states.values())
    print(
        f"{n} random queues in {time.time() - t0:.1f}s; rows: {dict(states)}; undetermined "
        f"{100 * states['Unknown'] / max(total, 1):.0f}%; certain but not brute-forced: {skipped}; "
        f"undetermined where every order and node choice gives one outcome: {decided}"
    )
    for k, c in reasons.most_common():
        print(f"  {c:3d}  {k}")
    print(f"disagreements with the brute force: {len(bad)}")
    for x in bad[:20]:
        print("  ", x)


if __name__ == "__main__":
    main()
