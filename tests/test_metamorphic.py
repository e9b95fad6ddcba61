"""Metamorphic: an answer on less input is the full input's answer or undetermined, never another confident one.

Every golden scenario whose command judges pods (explain pod, status) is read as a plain `kubectl get` dump (a bundle's
header dropped: a bundle records what it read, so it may say "none" where a plain dump cannot), and judged again on
inputs a user really has:
- one kind left out, as a `kubectl get` that forgot it (for explain pod, the Pods other than the one asked about:
  the pods of the nodes). DeviceTaintRules are the exception: a cluster without any is the common case, and a plain
  dump that holds none is read as a cluster that has none (docs/codes/DRA104.md);
- a field the API server always sets dropped (a Pod's or a Node's status, an ownerReference's uid), as a dump cut or
  edited by hand;
- the text of `kubectl get -o yaml` cut at an item boundary (which the tool refuses: exit 2).
A pod's answer is (blocked, missing piece) when determined; an error or an undetermined answer is always allowed.

When this suite first ran (before the answers that depend on an absent kind were left open), 302 of 684 confident
answers changed to another confident one when a kind was left out, 12 when an ownerReference lost its uid and 4 when
a Node lost its status."""

from __future__ import annotations

import copy
import json
import shlex
from pathlib import Path

import pytest
import yaml
from clirun import run

HERE = Path(__file__).resolve().parent / "scenarios"
# A cluster commonly has none: a plain dump without any is read as a cluster without any (never a gap)
READ_AS_COMPLETE = {"DeviceTaintRule"}


def _judged(name: str) -> bool:
    cmd = shlex.split((HERE / name / "cmd").read_text())
    return cmd[0] == "status" or cmd[:2] == ["explain", "pod"]


SCENARIOS = sorted(p.name for p in HERE.iterdir() if (p / "cmd").exists() and _judged(p.name))


def _objects(path: Path) -> list[dict]:
    out = []
    for doc in yaml.safe_load_all(path.read_text()):
        if not doc:
            continue
        items = doc["items"] if str(doc.get("kind", "")).endswith("List") else [doc]
        out += [o for o in items if o.get("kind") != "Bundle"]
    return out


def _answers(args: list[str], path: Path) -> tuple[int, dict | None]:
    """exit code, {pod: (blocked, missing) or None when undetermined}; None when no report came out (an error)."""
    r = run([*args, "--from-file", str(path), "-o", "json"])
    try:
        doc = json.loads(r.stdout)
    except json.JSONDecodeError:
        return r.returncode, None
    if doc.get("kind") in ("Diagnosis", "List") and doc.get("kind") != "Status":
        reports = doc["items"] if doc["kind"] == "List" else [doc]
        return r.returncode, {
            f"{x['pod']['namespace']}/{x['pod']['name']}": (x["verdict"]["blocked"], x["verdict"]["missing"])
            if x["verdict"]["determined"]
            else None
            for x in reports
        }
    out = {
        f"{row['namespace']}/{row['pod']}": None
        if row["state"] == "Unknown"
        else (row["state"] == "Blocked", row["missing"])
        for row in doc.get("items") or []
    }
    # and, apart, each pending pod's certain place in the queue (a gated pod's: its gate decides its verdict, so the
    # verdict alone cannot show a place that less input makes confident and wrong)
    for row in doc.get("items") or []:
        q = row.get("queue")
        if q and q["outcome"] != "undetermined":
            out[f"queue {row['namespace']}/{row['pod']}"] = q["outcome"]
    return r.returncode, out


def _write(tmp_path: Path, name: str, objs: list[dict]) -> Path:
    p = tmp_path / f"{name}.yaml"
    p.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objs}, sort_keys=False))
    return p


def _without_field(objs: list[dict], label: str):
    """objs with the field of label dropped from every object that has it, or None when none has it."""
    out, hit = [], False
    for o in objs:
        meta = o.get("metadata") or {}
        if label == "pod-status" and o["kind"] == "Pod" and "status" in o:
            o = {k: v for k, v in o.items() if k != "status"}
        elif label == "node-status" and o["kind"] == "Node" and "status" in o:
            o = {k: v for k, v in o.items() if k != "status"}
        elif label == "owner-uid" and any("uid" in r for r in meta.get("ownerReferences") or []):
            o = copy.deepcopy(o)
            for r in o["metadata"]["ownerReferences"]:
                r.pop("uid", None)
        else:
            out.append(o)
            continue
        hit = True
        out.append(o)
    return out if hit else None


def _variants(args: list[str], objs: list[dict]):
    asked = args[2] if args[:2] == ["explain", "pod"] and not args[2].startswith("-") else None
    for kind in sorted({o["kind"] for o in objs} - READ_AS_COMPLETE):
        if kind == "Pod":
            if asked is None:
                continue  # status judges every pod: its pods are what it is asked about
            rest = [o for o in objs if o["kind"] != "Pod" or o["metadata"]["name"] == asked]
        else:
            rest = [o for o in objs if o["kind"] != kind]
        if len(rest) < len(objs):
            yield f"without {kind}", rest
    for label in ("pod-status", "node-status", "owner-uid"):
        rest = _without_field(objs, label)
        if rest is not None:
            yield f"without {label}", rest


@pytest.mark.parametrize("name", SCENARIOS)
def test_less_input_never_gives_another_confident_answer(name, tmp_path):
    d = HERE / name
    args = [str(d / a[2:]) if a.startswith("./") else a for a in shlex.split((d / "cmd").read_text())]
    objs = _objects(d / "input.yaml")
    _, full = _answers(args, _write(tmp_path, "full", objs))
    assert full is not None, "the full input gives a report"
    wrong = []
    for label, rest in _variants(args, objs):
        code, less = _answers(args, _write(tmp_path, "less", rest))
        for pod, answer in full.items():
            got = (less or {}).get(pod)
            if answer is not None and got is not None and code != 2 and got != answer:
                wrong.append(f"{label}: {pod} {answer} -> {got}")
    assert not wrong, wrong


@pytest.mark.parametrize("name", SCENARIOS[::10])
def test_a_kubectl_get_dump_cut_at_an_item_is_refused(name, tmp_path):
    """kubectl get -o yaml writes items before `kind: List`: a dump cut at an item boundary has no kind, and is
    refused with one line (not read as the items before the cut)."""
    d = HERE / name
    args = [str(d / a[2:]) if a.startswith("./") else a for a in shlex.split((d / "cmd").read_text())]
    doc = {"apiVersion": "v1", "items": _objects(d / "input.yaml"), "kind": "List", "metadata": {"resourceVersion": ""}}
    lines = yaml.safe_dump(doc, sort_keys=True).splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith("- ")]
    for cut in starts[1:]:
        p = tmp_path / "cut.yaml"
        p.write_text("".join(lines[:cut]))
        r = run([*args, "--from-file", str(p)])
        assert r.returncode == 2 and r.stdout == "", r
        assert r.stderr.startswith("error: ") and "cut short" in r.stderr and r.stderr.count("\n") == 1, r.stderr
