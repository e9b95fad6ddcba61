"""What a live gather does with each page while the rest of its lists arrive (model.check_shapes, the page handler of
analyze.preload) changes no result: every `explain pod` golden scenario explained with and without it gives the same
report, and a malformed object is reported as before. Each side loads its own copy of the input, so the caches the
handler fills (keyed by object) serve only the side that filled them."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from builders import rslice

from kubectl_dra.analyze import preload
from kubectl_dra.analyze.reports.explain import explain_pod
from kubectl_dra.errors import DraError
from kubectl_dra.features import DEFAULT_VERSION, Semantics, parse_gates, parse_version
from kubectl_dra.gather.files import load_files
from kubectl_dra.model.objects import check_shapes, snapshot_from_objects
from kubectl_dra.render.structured import plain

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
EXPLAIN_POD = sorted(
    d.name for d in SCENARIOS.iterdir() if (d / "cmd").exists() and (d / "cmd").read_text().startswith("explain pod ")
)


def _explain(d: Path, warm: bool) -> dict:
    args = shlex.split((d / "cmd").read_text())
    opts = dict(zip(args[3::2], args[4::2]))
    if args[2].startswith("-") or set(opts) - {"-n", "--namespace", "--kubernetes-version", "--feature-gates"}:
        pytest.skip(f"flags this test does not pass: {args}")
    version = parse_version(opts["--kubernetes-version"]) if "--kubernetes-version" in opts else DEFAULT_VERSION
    sem = Semantics.for_version(version, parse_gates(opts.get("--feature-gates")))
    snap = load_files([d / "input.yaml"], opts.get("-n") or opts.get("--namespace"))
    if warm:
        handler = preload(sem)
        for kind in ("ResourceSlice", "ResourceClaim", "DeviceClass", "Node"):
            handler(kind, [o for o in snap.slices + snap.claims + snap.classes + snap.nodes if o.get("kind") == kind])
    try:
        return plain(explain_pod(snap, sem, snap.namespace or "default", args[2]))
    except DraError as e:
        return {"error": str(e)}


@pytest.mark.parametrize("name", EXPLAIN_POD)
def test_the_page_handler_changes_no_report(name):
    d = SCENARIOS / name
    assert _explain(d, warm=True) == _explain(d, warm=False)


def _slice(name, devices):
    return rslice(name, devices, "n", pool=name, driver="d.example.com")


def test_objects_checked_ahead_make_the_same_snapshot_and_a_bad_one_the_same_error():
    good = [_slice(f"s{i}", [{"name": "g0", "attributes": {"a": {"string": "x"}}}]) for i in range(3)]
    checked: dict = {}
    check_shapes(good, checked)
    assert set(checked) == {id(o) for o in good}
    assert snapshot_from_objects(good, "default", checked=checked) == snapshot_from_objects(good, "default")
    bad = _slice("bad", [{"name": "g0", "attributes": {"a": "not a mapping"}}])
    checked = {}
    check_shapes([*good, bad], checked)
    assert id(bad) not in checked  # left for the snapshot, which reports it
    with pytest.raises(DraError, match="ResourceSlice bad: device g0 attribute a must be a mapping"):
        snapshot_from_objects([*good, bad], "default", checked=checked)
