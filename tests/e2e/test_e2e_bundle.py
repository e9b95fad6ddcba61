"""kubectl dra dump on the real control plane: the bundle holds what kubectl-dra reads, nothing it must not
(environment values, managedFields), and --from-file on it gives the same answers as live for explain, match, the
scan and the inventory (their JSON compared; only what moves while the test runs may differ: the scan's AGE, and the
count and time of the event the scheduler repeats for the pod it cannot place)."""

from __future__ import annotations

import json

import pytest
from dra_objects import claim, device, pod, request

pytestmark = pytest.mark.e2e


_MOMENTS = {
    "age",
    "time",
    "firstTime",
    "count",
}  # the scheduler keeps retrying pod-big: its event's count and time move


def _without_age(doc):
    if isinstance(doc, dict):
        out = {k: _without_age(v) for k, v in doc.items() if k not in _MOMENTS}
        if isinstance(doc.get("events"), list):  # a repeated event may be a new object: compare what was said
            out["events"] = sorted({(e.get("reason"), e.get("message")) for e in doc["events"] if isinstance(e, dict)})
        return out
    if isinstance(doc, list):
        return [_without_age(x) for x in doc]
    return doc


def _diff(a, b, path="") -> list[str]:
    """Where two JSON documents differ (for the failure message)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in _diff(a.get(k), b.get(k), f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _diff(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: live {json.dumps(a)[:300]} / bundle {json.dumps(b)[:300]}"]


def test_a_bundle_gives_the_same_answers_as_the_cluster(scenario, tmp_path):
    sc = scenario("bundle")
    sc.device_class()
    sc.slice([device("dev-0", sc.driver, memory="16Gi"), device("dev-1", sc.driver, memory="4Gi")])
    sel = f'device.capacity["{sc.driver}"].memory.compareTo(quantity("8Gi")) >= 0'
    sc.create(claim("c-ok", [request("gpu", sc.cls, selectors=[sel])]))
    p = pod("pod-ok", {"gpu": "c-ok"})
    p["spec"]["containers"][0]["env"] = [{"name": "API_TOKEN", "value": "s3cr3t-value"}]
    sc.create(p)
    sc.cluster.wait_bound(sc.ns, "pod-ok")
    sc.create(claim("c-big", [request("gpu", sc.cls, selectors=[sel])]))
    sc.create(pod("pod-big", {"gpu": "c-big"}))
    sc.cluster.wait_unschedulable(sc.ns, "pod-big", "cannot allocate all claims")

    path = tmp_path / "bundle.yaml"
    d = sc.cluster.kubectl_dra("dump", "-n", sc.ns, "--output-file", str(path))
    assert d.code == 0 and d.stderr.startswith(f"wrote {path}"), str(d)
    text = path.read_text()
    assert "s3cr3t-value" not in text and "API_TOKEN" in text and "managedFields" not in text, text[:2000]
    assert "kind: Bundle" in text and "serverVersion: v1.37" in text, text[:600]

    commands = [
        ["explain", "pod", "pod-ok"],
        ["explain", "pod", "pod-big"],
        ["explain", "pod", "-l", "app!=none"],
        ["match", "claim", "c-big"],
        ["explain", "claim", "c-ok"],
        ["status"],
        ["devices", "--driver", sc.driver],
    ]
    for cmd in commands:
        live = sc.cluster.kubectl_dra(*cmd, "-n", sc.ns, "-o", "json")
        offline = sc.cluster.kubectl_dra(*cmd, "--from-file", str(path), "-o", "json")
        assert live.code == offline.code, (cmd, str(live), str(offline))
        a, b = _without_age(live.json), _without_age(offline.json)
        assert a == b, (cmd, _diff(a, b))
    # The namespace comes from the bundle when -n is not given, as live it comes from the context.
    r = sc.cluster.kubectl_dra("explain", "pod", "pod-big", "--from-file", str(path), "-o", "json")
    assert r.code == 1 and r.json["pod"]["namespace"] == sc.ns, str(r)
