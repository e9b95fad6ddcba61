"""status over several clusters (cli/fleet.py) against the real control plane: one kubeconfig with four contexts, as
a fleet's kubeconfig has them. `direct` and `team` reach the API server (the admin's certificate; the second with
another default namespace), `stalled` goes through a fault proxy whose node list stalls past --request-timeout (a
cluster that stops answering mid-scan), `gone` names a port nothing listens on. The two that answer are reported
as each answers alone, the other two are one Unknown line each naming why, the exit code is 2, and the contexts are
scanned at once: the scan takes about the slowest one, not their sum. devices over the same four contexts: each
cluster read as `devices` alone reads it, the two others one line each."""

from __future__ import annotations

import time

import pytest
import yaml
from builders import device, request
from dra_objects import claim, pod
from fault_proxy import FaultProxy

pytestmark = pytest.mark.e2e


def _kubeconfig(direct: str, proxied: str, ns: str, path) -> str:
    k = yaml.safe_load(open(direct))
    p = yaml.safe_load(open(proxied))
    base = k["contexts"][0]["context"]
    k["clusters"].append({**p["clusters"][0], "name": "proxied"})
    k["users"].extend(u for u in p["users"] if u["name"] not in {x["name"] for x in k["users"]})
    gone = {**k["clusters"][0]["cluster"], "server": "https://127.0.0.1:1"}
    k["clusters"].append({"name": "gone", "cluster": gone})
    k["contexts"] = [
        {"name": "direct", "context": {**base}},
        {"name": "team", "context": {**base, "namespace": ns}},
        {"name": "stalled", "context": {**p["contexts"][0]["context"], "cluster": "proxied"}},
        {"name": "gone", "context": {**base, "cluster": "gone"}},
    ]
    k["current-context"] = "direct"
    path.write_text(yaml.safe_dump(k))
    return str(path)


def test_a_fleet_scan_reports_each_cluster_and_one_line_for_each_it_cannot_reach(scenario, tmp_path):
    sc = scenario("fleet")
    sc.device_class()
    sc.slice([device("dev-0")])
    sc.create(claim("c-a", [request("gpu", sc.cls)]))
    sc.create(pod("pod-a", {"gpu": "c-a"}))
    sc.cluster.wait_bound(sc.ns, "pod-a")
    sc.create(claim("c-b", [request("gpu", sc.cls)]))
    sc.create(pod("pod-b", {"gpu": "c-b"}))  # no device left: blocked
    proxy = FaultProxy(sc.cluster)
    try:
        proxy.add("/api/v1/nodes", "stall", stall_seconds=60, times=10)
        kc = _kubeconfig(
            sc.cluster.kubeconfig, proxy.kubeconfig(tmp_path / "proxy.kubeconfig"), sc.ns, tmp_path / "fleet"
        )
        alone = sc.cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json")
        t = time.monotonic()
        r = sc.cluster.kubectl_dra(
            "status", "-n", sc.ns, "--all-contexts", "--request-timeout", "4s", "-o", "json", kubeconfig=kc
        )
        took = time.monotonic() - t
        assert r.code == 2, str(r)
        assert r.json["kind"] == "StatusList" and r.json["summary"]["clusters"] == 4, r.json["summary"]
        items = {i["context"]: i for i in r.json["items"]}
        assert sorted(items) == ["direct", "gone", "stalled", "team"]
        rows = lambda doc: [(x["pod"], x["state"], x["missing"], x["codes"]) for x in doc["items"]]  # noqa: E731
        assert {x[:2] for x in rows(alone.json)} == {("pod-a", "OK"), ("pod-b", "Blocked")}, alone.json
        for ctx in ("direct", "team"):
            assert rows(items[ctx]["status"]) == rows(alone.json), ctx
        assert "127.0.0.1:1" in items["gone"]["error"] and not items["gone"]["determined"], items["gone"]
        assert "within 4s (--request-timeout)" in items["stalled"]["error"], items["stalled"]
        assert took < 30, took  # in parallel: about the stalled one's timeout and retries, not four scans in a row
        assert r.stderr.count("error:") == 1 and "2 of 4 clusters not scanned" in r.stderr, r.stderr

        text = sc.cluster.kubectl_dra(
            "status", "--context", "team", "--context", "gone", "--request-timeout", "4s", kubeconfig=kc
        )
        lines = text.stdout.splitlines()
        assert lines[0].split()[:2] == ["CLUSTER", "POD"], text.stdout
        rows = {tuple(x.split()[:2]) for x in lines[1:]}
        assert ("team", "pod-a") in rows and ("team", "pod-b") in rows and ("gone", "-") in rows, text.stdout
        assert text.code == 2, str(text)

        one = sc.cluster.kubectl_dra("status", "--context", "team", kubeconfig=kc)
        assert "CLUSTER" not in one.stdout and one.code == 1, str(one)  # one context: the one-cluster command

        # devices over the same fleet: each cluster read says what `devices` alone says of it
        alone = sc.cluster.kubectl_dra("devices", "--class", sc.cls, "-o", "json")
        r = sc.cluster.kubectl_dra(
            "devices", "--class", sc.cls, "--all-contexts", "--request-timeout", "4s", "-o", "json", kubeconfig=kc
        )
        assert r.code == 2 and r.json["kind"] == "DeviceInventoryList", str(r)
        items = {i["context"]: i for i in r.json["items"]}
        states = lambda doc: sorted((x["pool"], x["device"], x["state"]) for x in doc["items"])  # noqa: E731
        assert any(x[2] == "allocated" for x in states(alone.json)), alone.json
        for ctx in ("direct", "team"):
            assert states(items[ctx]["inventory"]) == states(alone.json), ctx
        assert "127.0.0.1:1" in items["gone"]["error"] and "--request-timeout" in items["stalled"]["error"], items
        text = sc.cluster.kubectl_dra("devices", "--context", "direct", "--context", "gone", kubeconfig=kc)
        lines = text.stdout.splitlines()
        assert lines[0].split()[:3] == ["CLUSTER", "CLASS", "DEVICES"] and text.code == 2, str(text)
        assert any(x.startswith("gone: not read:") for x in lines), text.stdout
    finally:
        proxy.close()
