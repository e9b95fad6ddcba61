"""Record what Kubernetes makes of the YAML corpus: python tests/oracle/yaml/record.py (builds the oracle with Go)."""

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parents[1] / "unit" / "data" / "yaml-kubernetes.jsonl"
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402


def run(texts: list[str]) -> list[dict]:
    binary = subprocess.run(
        ["bash", str(HERE.parent / "build.sh"), "yaml"], capture_output=True, text=True, check=True
    ).stdout.strip()
    out = subprocess.run([binary], input=json.dumps(texts), capture_output=True, text=True, check=True).stdout
    return [
        {"yaml": t, **({"error": r["error"]} if "error" in r else {"json": r["json"]})}
        for t, r in zip(texts, json.loads(out))
    ]


if __name__ == "__main__":
    records = run(corpus.texts())
    OUT.write_text("".join(json.dumps(r) + "\n" for r in records))  # ASCII: one record per line, whatever it holds
    print(f"wrote {len(records)} records to {OUT}")
