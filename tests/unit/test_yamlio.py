"""yamlio's fast path (yaml-rs) against the reference (PyYAML over libyaml): wherever the guard lets a text through,
both must read the same data. Checked on every YAML document of the repository, on a corpus of plain scalars in
every position a scalar takes, and on a dump large enough that --from-file takes the fast path."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubectl_dra import yamlio

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(yamlio.fast_parser() is None, reason="yaml-rs is not installed")


def _norm(v):
    """NaN compares unequal to itself; the types matter (1 and 1.0 and True are different answers)."""
    if isinstance(v, float):
        return ("float", "nan" if math.isnan(v) else v)
    if isinstance(v, dict):
        return ("dict", [(_norm(k), _norm(x)) for k, x in v.items()])
    if isinstance(v, list):
        return ("list", [_norm(x) for x in v])
    return (type(v).__name__, v)


def _reference(text: str):
    try:
        return _norm([d for d in yaml.load_all(text, Loader=yaml.CSafeLoader) if d is not None])
    except (yaml.YAMLError, RecursionError) as e:
        return ("error", type(e).__name__)


def _fast(text: str):
    try:
        return _norm(yamlio.load_all(text, fast_min=0))
    except (yaml.YAMLError, RecursionError) as e:
        return ("error", type(e).__name__)


def _documents():
    for path in sorted(ROOT.glob("**/*.y*ml")):
        if ".venv" in path.parts or ".cache" in path.parts or "node_modules" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        for i, part in enumerate(re.split(r"^---[ \t]*$", text, flags=re.M)):
            yield f"{path.relative_to(ROOT)}#{i}", part


def test_every_yaml_document_of_the_repository_reads_alike():
    fast = 0
    for name, text in _documents():
        if yamlio.fast_path_refusal(text) is None:
            fast += 1
            assert _fast(text) == _reference(text), name
    assert fast >= 50, f"only {fast} documents took the fast path: the comparison says little"


_NUMBERS = (
    "0 00 017 09 0o17 0o8 0x1F 0x_1F 0b11 1_000 1__0 1_ _1 1. 1.0 1.50 .5 0. 1e3 1E3 1.0e+3 1.0e3 1e e3 1:20 1:70"
    " 190:20:30 1:20.5 0000:00:02.0 0000:87:02.0 0000:3b:00.0 12:30:00 .inf .Inf .NaN .nan 1_0.5 10.0.0.1 550.54.15"
    " 80Gi 100G 1.5Gi 0x 123456789012345678901234567890 9223372036854775808 1e400"
).split()
_SCALARS = [
    # numbers in every spelling either YAML version knows
    *[s + b for s in ("", "+", "-") for b in _NUMBERS],
    # words
    *"yes Yes YES no No NO on On ON off Off OFF y Y n N oN true True TRUE tRUE false False FALSE null Null NULL ~ ="
    " << nvidia.com/gpu gpu.example.com a:b a#b a,b NoSchedule Bound true-ish".split(),
    # dates and times
    *"2026-11-30 2026-11-30T00:00:00Z 2026-11-30t00:00:00.5+01:00 2026-1-3".split(),
    "2001-12-14 21:59:43.10 -5",
    # unicode, control characters, line breaks YAML 1.1 knows
    *("é", "漢字", "a\u2028b", "a\x85b", "\ufeffa", "a\tb", "\x07"),
]
_CONTEXTS = [
    "a: {}",
    "- {}",
    "{}: v",
    "[{}, x]",
    "{{k: {}}}",
    'a: "{}"',
    "a: '{}'",
    "a: |\n  {}\n  x",
    "a: >-\n  {}\n  x\n",
    "a: |+\n  {}\n\n",
    "a: |2\n   {}\n  x\n",
    "a: >\n  {}\n\n  x\n",
    "a: |\n  {}\n  x\n",
    "a:\n  - {0}\n  - b: {0}",
    "a: {} # comment",
    "a: x {} y",
    "? {}\n: v",
    "a: !!str {}",
    "a: &x {}\nb: *x",
    "a: {{<<: {{b: {}}}}}",
]


@pytest.mark.parametrize("ctx", _CONTEXTS)
def test_plain_scalars_read_alike_in_every_position(ctx):
    checked = 0
    for s in _SCALARS:
        text = ctx.format(s)
        if yamlio.fast_path_refusal(text) is None:
            checked += 1
        assert _fast(text) == _reference(text), text
    assert checked or "!!" in ctx or "<<" in ctx or "? " in ctx or not ctx.endswith("\n") and "|" in ctx


def test_the_guard_refuses_what_reads_differently():
    """The texts where yaml-rs and PyYAML disagree are the ones the guard sends to PyYAML: proved by reading them
    with yaml-rs directly."""
    differ = []
    for s in _SCALARS:
        text = f"a: {s}"
        try:
            direct = _norm([yamlio.fast_parser().loads(text, parse_datetime=False)])
        except Exception:  # noqa: BLE001
            direct = ("error",)
        if direct != _reference(text):
            differ.append(s)
            assert yamlio.fast_path_refusal(text) is not None, s
    # the corpus holds the known differences (YAML 1.1 booleans, octal, base 60, exponents, timestamps)
    assert {"yes", "017", "1:20", "0000:00:02.0", "1e3", "2026-11-30"} <= set(differ)


def test_deep_nesting_never_reaches_the_native_parser():
    """yaml-rs recurses on the native stack: twenty thousand compact levels crash the process. The guard sends such
    texts to PyYAML, which ends in RecursionError (files.py: one error line)."""
    code = (
        "import sys; from kubectl_dra import yamlio\n"
        "for text in ('- ' * 20000 + 'a', 'a:\\n' + ''.join(' ' * i + 'b:\\n' for i in range(1, 300)),"
        " '? ' * 20000 + 'a', 'a: ' + '[' * 20000):\n"
        "    assert yamlio.fast_path_refusal(text) is not None or text.startswith('a: [')\n"
        "    try:\n        yamlio.load_all(text, fast_min=0)\n"
        "    except (RecursionError, Exception):\n        pass\n"
        "print('survived')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0 and "survived" in out.stdout, out.stderr[-2000:]


def test_a_large_yaml_dump_gives_the_answer_the_json_dump_gives(tmp_path):
    """A dump past the fast path's threshold (the tutorial's objects and 2,000 nodes) read as YAML and as JSON: the
    same report, and the text did take the fast path."""
    objs = [d for d in yaml.safe_load_all((ROOT / "tests/scenarios/scheduler-disagrees/input.yaml").read_text()) if d]
    items = []
    for o in objs:
        items.extend(o.get("items", [o]) if o.get("kind") == "List" else [o])
    for i in range(2000):
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"filler-{i:04d}", "labels": {"kubernetes.io/hostname": f"filler-{i:04d}"}},
                "status": {"addresses": [{"type": "InternalIP", "address": f"10.1.{i // 250}.{i % 250}"}]},
            }
        )
    doc = {"apiVersion": "v1", "kind": "List", "items": items}
    text = yaml.safe_dump(doc, sort_keys=False)
    assert len(text) >= yamlio.FAST_MIN_CHARS and yamlio.fast_path_refusal(text) is None
    (tmp_path / "dump.yaml").write_text(text)
    (tmp_path / "dump.json").write_text(json.dumps(doc))
    cmd = (ROOT / "tests/scenarios/scheduler-disagrees/cmd").read_text().split()
    outs = []
    for name in ("dump.yaml", "dump.json"):
        args = [*cmd, "--from-file", str(tmp_path / name), "-o", "json"]
        r = subprocess.run([sys.executable, "-m", "kubectl_dra", *args], capture_output=True, text=True, cwd=ROOT)
        assert r.stdout, r.stderr
        outs.append((r.returncode, json.loads(r.stdout), r.stderr))
    assert outs[0] == outs[1]
