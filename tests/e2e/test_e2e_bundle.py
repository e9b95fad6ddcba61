"""kubectl dra dump on the real control plane: the bundle holds what kubectl-dra reads, nothing it must not
(environment values, managedFields), and --from-file on it gives the same answers as live for explain, match, the
scan and the inventory (their JSON compared; only what moves while the test runs may differ: the scan's AGE, and the
count and time of the event the scheduler repeats for the pod it cannot place)."""

from __future__ import annotations

import json

import pytest
import yaml
from builders import device, request
from dra_objects import Scenario, claim, pod

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
    sc.slice([device("dev-0", memory="16Gi"), device("dev-1", memory="4Gi")])
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
    assert "s3cr3t-value" not in text and "API_TOKEN" in text, text[:2000]
    # managedFields only where the driver piece reads them: a slice's field managers, by name
    for o in yaml.safe_load(text)["items"]:
        mf = (o.get("metadata") or {}).get("managedFields")
        assert mf is None or (o["kind"] == "ResourceSlice" and all(set(m) == {"manager"} for m in mf)), o
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


def _verdicts(doc):
    """What an answer concludes, for comparing live with plain `kubectl get` files (which carry no server version,
    no time and no discovery, so their semantics note and ages differ from live; their verdicts must not)."""
    kind = doc.get("kind")
    if kind == "List":
        return [_verdicts(x) for x in doc["items"]]
    if kind == "Diagnosis":
        who, v = doc.get("pod") or doc["claim"], doc["verdict"]
        blocking = sorted(f["code"] for f in doc["findings"] if f["blocking"])
        return (who["namespace"], who["name"], v["blocked"], v["missing"], v["determined"], blocking)
    if kind == "MatchResult":
        outcomes = sorted((d["device"], d["outcome"]) for r in doc["requests"] for d in r["devices"])
        return (doc["claim"]["namespace"], doc["claim"]["name"], doc["satisfiable"], doc["determined"], outcomes)
    if kind == "Status":
        return sorted((i["namespace"], i["pod"], i["state"], i["missing"]) for i in doc["items"])
    raise AssertionError(f"unexpected answer kind {kind}")


def test_outside_default_with_the_same_names_in_a_second_namespace(scenario, tmp_path):
    """Live, a `dump -n`, a `dump -A` and `kubectl get -o yaml` files give the same answers in a namespace that is not
    the context's, while a second namespace holds a pod and a claim of the same names with the opposite verdict
    (issue 27: -n was once ignored for plain --from-file input, and no test used any namespace but default)."""
    sc = scenario("twins")
    sc.device_class()
    sc.slice([device("dev-0", memory="16Gi"), device("dev-1", memory="4Gi")])
    mine, twin_ns = sc.ns, sc.cluster.create_namespace("twins-b")
    try:
        twin = Scenario(sc.cluster, twin_ns, sc.name)  # the same driver and class, in the second namespace
        fits = f'device.capacity["{sc.driver}"].memory.compareTo(quantity("8Gi")) >= 0'
        too_big = f'device.capacity["{sc.driver}"].memory.compareTo(quantity("64Gi")) >= 0'
        sc.create(claim("c1", [request("gpu", sc.cls, selectors=[fits])]))
        sc.create(pod("web-0", {"gpu": "c1"}))
        twin.create(claim("c1", [request("gpu", sc.cls, selectors=[too_big])]))
        twin.create(pod("web-0", {"gpu": "c1"}))
        sc.cluster.wait_bound(mine, "web-0")
        sc.cluster.wait_unschedulable(twin_ns, "web-0", "cannot allocate all claims")

        one, every = tmp_path / "one.yaml", tmp_path / "every.yaml"
        for args, path in ((["-n", mine], one), (["-A"], every)):
            d = sc.cluster.kubectl_dra("dump", *args, "--output-file", str(path))
            assert d.code == 0, str(d)
        get = tmp_path / "get"
        get.mkdir()
        kinds = "pods,resourceclaims,resourceclaimtemplates,events"
        (get / "namespaced.yaml").write_text(sc.cluster.kubectl("get", kinds, "-A", "-o", "yaml").stdout)
        (get / "cluster.yaml").write_text(
            sc.cluster.kubectl("get", "deviceclasses,resourceslices,nodes", "-o", "yaml").stdout
        )

        commands = [
            ["explain", "pod", "web-0"],
            ["explain", "pod", "-l", "app!=none"],
            ["explain", "claim", "c1"],
            ["match", "claim", "c1"],
            ["status"],
        ]
        codes = {}
        for ns, other in ((mine, twin_ns), (twin_ns, mine)):
            for cmd in commands:
                live = sc.cluster.kubectl_dra(*cmd, "-n", ns, "-o", "json")
                assert live.code in (0, 1), str(live)
                version = live.json.get("semantics", (live.json.get("items") or [{}])[0].get("semantics", {}))
                files = sc.cluster.kubectl_dra(
                    *cmd,
                    "-n",
                    ns,
                    "--from-file",
                    str(get),
                    "--kubernetes-version",
                    version.get("kubernetesVersion", "1.37"),
                    "-o",
                    "json",
                )
                bundled = sc.cluster.kubectl_dra(*cmd, "-n", ns, "--from-file", str(every), "-o", "json")
                for r in (live, files, bundled):
                    assert other not in r.stdout, (cmd, ns, f"{other} leaked into the answer", str(r))
                    assert ns in r.stdout, (cmd, ns, str(r))
                assert live.code == files.code == bundled.code, (cmd, ns, str(live), str(files), str(bundled))
                a, b = _without_age(live.json), _without_age(bundled.json)
                assert a == b, (cmd, ns, _diff(a, b))
                assert _verdicts(live.json) == _verdicts(files.json), (cmd, ns, str(live), str(files))
                codes[ns, " ".join(cmd)] = live.code
                if ns == mine:  # the dump of this namespace alone, without -n: its namespace is the bundle's
                    alone = sc.cluster.kubectl_dra(*cmd, "--from-file", str(one), "-o", "json")
                    assert alone.code == live.code and _without_age(alone.json) == a, (cmd, str(alone))
        # the same names, opposite verdicts: an answer for the wrong namespace cannot pass for the right one
        assert codes[mine, "explain pod web-0"] == 0 and codes[twin_ns, "explain pod web-0"] == 1, codes
        assert codes[twin_ns, "status"] == 1, codes
        # without -n, plain files are read in the context's namespace (default), which has neither
        r = sc.cluster.kubectl_dra("explain", "pod", "web-0", "--from-file", str(get))
        assert r.code == 2 and "not found" in r.stderr and mine in r.stderr and twin_ns in r.stderr, str(r)
    finally:
        sc.cluster.delete_namespace(twin_ns)
