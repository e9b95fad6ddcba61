"""YAML as kubectl writes it. `kubectl get -o yaml` of the real control plane (go-yaml's encoder, which quotes what
it would not read back as a string) read by kubectl-dra is the same data as `kubectl get -o json` of the same
objects, through both of its paths (the reference loader and yaml-rs for a large dump), and `devices` answers the
same from either file."""

from __future__ import annotations

import json

import pytest
from builders import device, request
from dra_objects import claim

from kubectl_dra import yamlio

pytestmark = pytest.mark.e2e

# strings YAML 1.1 or 1.2 readers take for something else; the API server stores them as strings
TRICKY = {
    "pci": "0000:00:04.0",
    "flag": "y",
    "answer": "no",
    "exp": "1e3",
    "octal": "017",
    "oct": "0o17",
    "date": "2026-11-30",
    "clock": "12:30",
    "big": "123456789012345678901234567890",
    "dots": "1.2.3",
    "tilde": "~",
    "empty": "",
    "merge": "<<",
}


def test_kubectl_yaml_reads_as_kubectl_json(scenario, tmp_path):
    sc = scenario("yamlio")
    sc.device_class()
    sc.slice([device("tricky", memory="16Gi", attrs=TRICKY)], suffix="-tricky", pool="tricky")
    # enough devices that the YAML passes yamlio's fast-path threshold; unique uuids and PCI addresses, as drivers
    for s in range(12):
        devs = [
            device(
                f"gpu-{s}-{i}",
                memory="80Gi",
                attrs={
                    "uuid": f"GPU-{s:04d}{i:04d}-9a1d-06cb-8fad-b74d32e70629",
                    "pciBusID": f"0000:{s:02x}:{i:02x}.0",
                },
            )
            for i in range(128)
        ]
        sc.slice(devs, suffix=f"-{s}", pool=f"p{s}")
    # a claim, so that the dump holds the kind: a plain dump without any ResourceClaim leaves devices' answer open
    sc.create(claim("waiting", [request("gpu", sc.cls)]))
    # (no nodes: the fake nodes' heartbeat may change them between the two reads below)
    kinds = "resourceslices,deviceclasses,resourceclaims"
    # The other tests' objects (cluster-scoped slices and classes, claims of namespaces being deleted) may change
    # between the two reads: the pair counts where a YAML read after the JSON one is the same text as before it
    # (every change moves a resourceVersion, so nothing changed in between).
    for _ in range(5):
        as_yaml = sc.cluster.kubectl("get", kinds, "-A", "-o", "yaml").stdout
        as_json = json.loads(sc.cluster.kubectl("get", kinds, "-A", "-o", "json").stdout)
        if sc.cluster.kubectl("get", kinds, "-A", "-o", "yaml").stdout == as_yaml:
            break
    assert len(as_yaml) >= yamlio.FAST_MIN_CHARS, len(as_yaml)
    assert yamlio.fast_path_refusal(as_yaml) is None, yamlio.fast_path_refusal(as_yaml)
    for fast_min in (0, 10**12):  # yaml-rs, then the reference
        (doc,) = yamlio.load_all(as_yaml, fast_min=fast_min)
        assert doc == as_json, fast_min
    tricky = next(
        d
        for s in as_json["items"]
        if s["kind"] == "ResourceSlice"
        for d in s["spec"].get("devices", [])
        if d["name"] == "tricky"
    )
    assert {k: v["string"] for k, v in tricky["attributes"].items()} == TRICKY
    (tmp_path / "get.yaml").write_text(as_yaml)
    (tmp_path / "get.json").write_text(json.dumps(as_json))
    outs = [
        sc.cluster.kubectl_dra("devices", "--driver", sc.driver, "--from-file", str(tmp_path / f), "-o", "json")
        for f in ("get.yaml", "get.json")
    ]
    assert outs[0].code == outs[1].code == 0, (str(outs[0]), str(outs[1]))
    assert outs[0].json == outs[1].json
    attrs = next(i["attributes"] for i in outs[0].json["items"] if i["device"] == "tricky")
    assert attrs == TRICKY
