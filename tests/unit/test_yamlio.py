"""kubectl_dra.yamlio against Kubernetes and against itself. The reference loader (yamlio/kube.py) must read the YAML
corpus (tests/oracle/yaml/corpus.py) as sigs.k8s.io/yaml does, recorded from the Go oracle in
tests/unit/data/yaml-kubernetes.jsonl (the oracle test checks the record is current); the fast path (yaml-rs) must read
whatever its guard lets through as the reference does: on the corpus, on every YAML document of the repository and
on a dump large enough that --from-file takes it."""

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
RECORD = ROOT / "tests/unit/data/yaml-kubernetes.jsonl"
REFERENCE_ONLY = 10**12  # a fast_min no text reaches


def _json(v):
    """What JSON keeps of a value: numbers are numbers (1 and 1.0 alike, True not), NaN and infinities none."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        return ("number", float(v)) if math.isfinite(v) else ("not JSON", str(v))
    if isinstance(v, dict):
        return {k: _json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_json(x) for x in v]
    return ("not JSON", type(v).__name__)


def _not_json(v) -> bool:
    if isinstance(v, tuple):
        return v[0] == "not JSON"
    if isinstance(v, dict):
        return any(map(_not_json, v.values()))
    return isinstance(v, list) and any(map(_not_json, v))


def _load(text: str, fast_min: int):
    """As go-yaml reads text: a repeated key keeps the last, at the root too (kubectl-dra refuses that by default:
    test_joined_outputs_are_refused)."""
    try:
        docs = yamlio.load_all(text, fast_min=fast_min, refuse_joined=False)
    except (yaml.YAMLError, RecursionError) as e:
        return ("error", type(e).__name__)
    return _json(docs[0] if docs else None)


def _exact(v):
    """Python's value with its types (1, 1.0 and True apart, as the analysis tells them apart); NaN equal to NaN."""
    if isinstance(v, float):
        return ("float", "nan" if math.isnan(v) else v)
    if isinstance(v, dict):
        return ("dict", [(_exact(k), _exact(x)) for k, x in v.items()])
    if isinstance(v, list):
        return ("list", [_exact(x) for x in v])
    return (type(v).__name__, v)


def _same_both_ways(text: str) -> bool:
    """yaml-rs (fast_min 0) and the reference read text to the same Python values, or both refuse it."""
    out = []
    for fast_min in (0, REFERENCE_ONLY):
        try:
            out.append(_exact(yamlio.load_all(text, fast_min=fast_min)))
        except (yaml.YAMLError, RecursionError) as e:
            out.append(("error", type(e).__name__))
    return out[0] == out[1]


def _records() -> list[dict]:
    return [json.loads(line) for line in RECORD.read_text().split("\n") if line]


def test_the_reference_reads_yaml_as_kubernetes_does():
    wrong = []
    for r in _records():
        ours = _load(r["yaml"], REFERENCE_ONLY)
        if "error" in r:
            # JSON refuses NaN and infinities (kubectl fails there): kubectl-dra reads them as floats
            ok = isinstance(ours, tuple) and ours[0] == "error" or "unsupported value" in r["error"] and _not_json(ours)
        else:
            ok = ours == _json(r["json"])
        if not ok:
            wrong.append((r["yaml"], r.get("json", r.get("error")), ours))
    assert not wrong, f"{len(wrong)} of {len(_records())} differ, e.g. {wrong[:5]}"


@pytest.mark.oracle
def test_the_record_is_current():
    """tests/oracle/yaml/record.py would write what the file holds (the corpus or the pinned modules changed)."""
    sys.path.insert(0, str(ROOT / "tests/oracle/yaml"))
    import corpus
    import record

    assert record.run(corpus.texts()) == _records(), "run tests/oracle/yaml/record.py"


def test_the_fast_path_reads_the_corpus_as_the_reference():
    fast = 0
    for r in _records():
        text = r["yaml"]
        if yamlio.fast_path_refusal(text) is None:
            fast += 1
            assert _same_both_ways(text), text
    assert fast >= 1000, f"only {fast} corpus texts took the fast path: the comparison says little"


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
            assert _same_both_ways(text), name
    assert fast >= 50, f"only {fast} documents took the fast path: the comparison says little"


def test_the_guard_refuses_what_reads_differently():
    """Where yaml-rs and the reference disagree, the guard sends the text to the reference: proved by reading the
    corpus's `a: SCALAR` texts with yaml-rs directly."""
    sys.path.insert(0, str(ROOT / "tests/oracle/yaml"))
    import corpus

    differ = []
    for s in corpus.SCALARS:
        text = f"a: {s}\n"
        try:
            direct = _exact([yamlio.fast_parser().loads(text, parse_datetime=False)])
        except Exception:
            direct = ("error",)
        try:
            reference = _exact(yamlio.load_all(text, fast_min=REFERENCE_ONLY))
        except (yaml.YAMLError, RecursionError):
            reference = ("error",)
        if direct != reference:
            differ.append(s)
            assert yamlio.fast_path_refusal(text) is not None, s
    # the corpus holds the known differences (go-yaml's y/yes/on booleans, leading-0 octal, "_1")
    assert {"yes", "y", "017", "_1"} <= set(differ), differ


def test_deep_nesting_never_reaches_the_native_parser():
    """yaml-rs recurses on the native stack: twenty thousand compact levels crash the process. The guard sends such
    texts to the reference (libyaml), which ends in RecursionError (files.py: one error line)."""
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


def test_kubectl_dra_reads_a_pci_address_as_kubectl_does():
    """PyYAML's YAML 1.1 reads `0000:00:04.0` as a base-60 float and `y` as a string; kubectl (go-yaml) keeps the
    string and reads a boolean. A slice written by hand gets the attribute value it would have once applied."""
    doc = yamlio.load_all("a:\n  pciBusID: {string: 0000:00:04.0}\n  flag: y\n")[0]
    assert doc == {"a": {"pciBusID": {"string": "0000:00:04.0"}, "flag": True}}


def test_what_kubectl_dra_writes_reads_back_as_written():
    """Every corpus scalar written as a string value and as a key (render/structured.py's dumper) reads back as
    that string, by Kubernetes' rules: PyYAML's own dumper leaves `y`, `1e3` and `0o17` plain, which kubectl reads as
    a boolean and numbers. As go-yaml's encoder does, dates and base-60 look-alikes are quoted too."""
    sys.path.insert(0, str(ROOT / "tests/oracle/yaml"))
    import corpus

    from kubectl_dra.render.structured import data_to

    doc = {"values": list(corpus.SCALARS), "keys": {s: 1 for s in corpus.SCALARS}}
    text = data_to(doc, "yaml")
    assert yamlio.load_all(text, fast_min=REFERENCE_ONLY) == [doc]
    assert "- 'y'\n" in text and "- '2026-11-30'\n" in text and "- '0000:00:04.0'\n" in text
    if yamlio.fast_path_refusal(text) is None:
        assert yamlio.load_all(text, fast_min=0) == [doc]


def test_random_documents_read_alike_on_both_paths():
    """Seeded random documents (corpus scalars, odd strings, numbers, nesting) written in five styles (kubectl-dra's
    dumper, PyYAML's, both in flow style, JSON): wherever the guard lets one through, yaml-rs reads it as the
    reference does."""
    import random

    sys.path.insert(0, str(ROOT / "tests/oracle/yaml"))
    import corpus

    from kubectl_dra.yamlio.kube import dumper

    rnd = random.Random(2026)
    atoms = corpus.SCALARS + ["a: b", "#x", "- x", "x #y", "'q'", '"d"', "multi\nline", " lead", "trail ", "", "&a"]
    atoms += ["*a", "!t", "|", ">", "{x}", "[x]", "x,y", "é\u00a0"]

    def scalar():
        r = rnd.random()
        if r < 0.6:
            return rnd.choice(atoms)
        if r < 0.7:
            return rnd.randint(-(10**20), 10**20)
        if r < 0.8:
            return rnd.choice([True, False, None, 1.5, -0.0, 1e300])
        return "".join(rnd.choice("ab01:.-_ eE+xo#'\"\n") for _ in range(rnd.randint(0, 8)))

    def value(depth=0):
        r = rnd.random()
        if depth > 4 or r < 0.5:
            return scalar()
        if r < 0.75:
            return [value(depth + 1) for _ in range(rnd.randint(0, 4))]
        return {str(scalar()) if rnd.random() < 0.8 else scalar(): value(depth + 1) for _ in range(rnd.randint(0, 4))}

    writers = [
        lambda v: yaml.dump(v, Dumper=dumper(), sort_keys=False, allow_unicode=True),
        lambda v: yaml.safe_dump(v, allow_unicode=True),
        lambda v: yaml.dump(v, Dumper=dumper(), default_flow_style=True),
        lambda v: yaml.safe_dump(v, default_flow_style=True),
        lambda v: json.dumps(v, ensure_ascii=False) + "\n",
    ]
    took = 0
    for i in range(1500):
        text = writers[i % len(writers)](value())
        if yamlio.fast_path_refusal(text) is None:
            took += 1
            assert _same_both_ways(text), text
    assert took >= 500, took


def test_joined_outputs_are_refused():
    """Two `kubectl get -o yaml` outputs joined without `---`: one document whose root keys repeat. go-yaml keeps the
    last of each (the first output's objects vanish), so both readers refuse the root's repeated key, naming its
    line; a key repeated deeper keeps go-yaml's last-wins, and `---` between the outputs reads both."""
    one = "apiVersion: v1\nitems:\n- {kind: Pod, metadata: {name: p%d}}\nkind: List\nmetadata: {resourceVersion: ''}\n"
    big = "apiVersion: v1\nitems:\n" + "".join(f"- {{kind: Pod, metadata: {{name: p{i}}}}}\n" for i in range(9000))
    big += "kind: List\n"
    assert len(big) > 256 * 1024 and yamlio.fast_path_refusal(big) is None  # the yaml-rs path is taken
    for fast_min in (0, REFERENCE_ONLY):
        # (the large one on the yaml-rs path only: PyYAML's reference reader takes seconds on it and reads the small
        # one by the same code)
        large = ((big + big, 9004),) if fast_min == 0 else ()
        for joined, line in ((one % 1 + one % 2, 6), *large):
            with pytest.raises(yaml.YAMLError) as e:
                yamlio.load_all(joined, fast_min=fast_min)
            assert e.value.problem.startswith("top-level key 'apiVersion' appears twice"), e.value
            assert e.value.problem_mark.line + 1 == line
            last = yamlio.load_all(joined, fast_min=fast_min, refuse_joined=False)[0]["items"]
            assert last[0]["metadata"]["name"] in ("p2", "p0")  # as go-yaml: the second output's
        both = yamlio.load_all(one % 1 + "---\n" + one % 2, fast_min=fast_min)
        assert [d["items"][0]["metadata"]["name"] for d in both] == ["p1", "p2"]
        nested = yamlio.load_all("kind: Pod\nmetadata:\n  name: a\n  name: b\n", fast_min=fast_min)
        assert nested == [{"kind": "Pod", "metadata": {"name": "b"}}]
