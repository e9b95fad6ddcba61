"""Render the JSON tallies of `compare.py --json` runs as the Markdown tables of docs/fidelity.md.

python tests/fidelity/report.py /tmp/fid-long/1.3*.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(paths: list[str]) -> None:
    runs = [json.loads(Path(p).read_text()) for p in paths]
    versions, feats, kinds = {}, {}, {}
    for r in runs:
        versions.update(r["versions"])
        for f, per in r["features"].items():
            feats.setdefault(f, {}).update(per)
        kinds.update(r.get("kinds", {}))
    vs = sorted(versions)
    print("| version | scenarios | agreed | disagreed | inconclusive | agreement |")
    print("|---|---:|---:|---:|---:|---:|")
    ta = tt = 0
    for v in vs:
        c = versions[v]
        a, d, i = c.get("agreed", 0), c.get("disagreed", 0), c.get("inconclusive", 0)
        ta, tt = ta + a, tt + a + d
        print(
            f"| {v} | {a + d + i} | {a} | {d} | {i} | {100 * a / (a + d):.2f}% |"
            if a + d
            else f"| {v} | {i} | 0 | 0 | {i} | - |"
        )
    print()
    print(f"`agreed {ta} of {tt}`")
    print()
    print("| feature | " + " | ".join(vs) + " |")
    print("|---|" + "---:|" * len(vs))
    for f in sorted(feats):
        cells = []
        for v in vs:
            c = feats[f].get(v, {})
            t = c.get("agreed", 0) + c.get("disagreed", 0)
            cells.append(f"{c.get('agreed', 0)}/{t}" if t else "-")
        print(f"| {f} | " + " | ".join(cells) + " |")
    if kinds:
        print()
        print("| version | disagreement kind | scenarios |")
        print("|---|---|---:|")
        for k in sorted(kinds):
            v, kind = k.split(" ", 1)
            print(f"| {v} | {kind} | {kinds[k]} |")


if __name__ == "__main__":
    main(sys.argv[1:])
