"""The lint checks one by one, on literal manifests, through the library (the CLI paths are in test_lint.py)."""

from __future__ import annotations

import textwrap

import pytest

from kubectl_dra.analyze.lint import apiversions, lint
from kubectl_dra.features import Semantics
from kubectl_dra.gather.files import load_files
from kubectl_dra.gather.manifests import load_manifests

NODE = """apiVersion: v1
kind: Node
metadata: {name: node-01}
status:
  allocatable: {cpu: "8", nvidia.com/gpu: "4"}
"""
SLICE = """apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-01-gpu}
spec:
  driver: gpu.nvidia.com
  nodeName: node-01
  pool: {name: node-01, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
"""
CLASS = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.nvidia.com"'}
"""


def run(tmp_path, manifests: str, reference: str | None = None, version=(1, 37)):
    f = tmp_path / "m.yaml"
    f.write_text(textwrap.dedent(manifests))
    ref = None
    if reference is not None:
        r = tmp_path / "ref.yaml"
        r.write_text(reference)
        ref = load_files([str(r)], None)
    report = lint(load_manifests([str(f)]), ref, Semantics.for_version(version), "dump" if ref else "none")
    return [(x.finding.code, x.line, x.finding.message) for x in report.findings]


@pytest.mark.parametrize(
    "version,kind,target,code",
    [
        ("v1", "ResourceClaim", (1, 34), None),
        ("v1", "DeviceTaintRule", (1, 36), "DRA704"),  # in v1 from 1.37
        ("v1", "DeviceTaintRule", (1, 37), None),
        ("v1beta1", "ResourceClaim", (1, 37), "DRA712"),  # off by default, deprecated
        ("v1beta1", "ResourceClaim", (1, 38), "DRA704"),  # removed
        ("v1beta2", "DeviceTaintRule", (1, 35), "DRA704"),  # v1beta2 has it from 1.36
        ("v1beta2", "ResourceSlice", (1, 38), "DRA712"),
        ("v1beta2", "ResourceSlice", (1, 39), "DRA704"),
        ("v1alpha3", "ResourceClaim", (1, 37), "DRA704"),  # no such kind there
        ("v2", "ResourceClaim", (1, 37), "DRA704"),
    ],
)
def test_served_versions(version, kind, target, code):
    got = apiversions.served(version, kind, target)
    assert (got[0] if got else None) == code, got


def test_api_version_follows_the_target(tmp_path):
    rule = """\
    apiVersion: resource.k8s.io/v1
    kind: DeviceTaintRule
    metadata: {name: r}
    spec:
      deviceSelector: {driver: gpu.nvidia.com}
      taint: {key: k, effect: NoSchedule}
    """
    assert run(tmp_path, rule, version=(1, 37)) == []
    ((code, line, msg),) = run(tmp_path, rule, version=(1, 36))
    assert code == "DRA704" and line == 1 and "from Kubernetes 1.37, not 1.36" in msg, msg


def test_v1_request_in_the_v1beta1_shape(tmp_path):
    claim = """\
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: c}
    spec:
      devices:
        requests:
        - name: gpu
          deviceClassName: gpu
          firstAvailable:
          - name: big
            exactly: {deviceClassName: gpu}
    """
    got = run(tmp_path, claim)
    assert [(c, line) for c, line, _ in got] == [("DRA705", 8), ("DRA705", 11)], got
    assert "deviceClassName belongs under exactly" in got[0][2] and "firstAvailable entry" in got[1][2]
    beta = claim.replace("resource.k8s.io/v1", "resource.k8s.io/v1beta1").replace(
        "          firstAvailable:\n          - name: big\n            exactly: {deviceClassName: gpu}\n",
        "          exactly: {deviceClassName: gpu}\n",
    )
    codes = [(c, m.split(":")[1].strip()) for c, _, m in run(tmp_path, beta)]
    assert ("DRA705", "request gpu") in codes and "DRA712" in {c for c, _ in codes}, codes


POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: t}
  containers:
  - name: app
    resources:
      limits: {nvidia.com/gpu: "1"}
      claims: [{name: gpu}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu}
---
"""


def test_dra_and_device_plugin_for_one_vendor(tmp_path):
    # No reference: the vendor match alone (nvidia.com/gpu and the class's driver literal gpu.nvidia.com).
    got = run(tmp_path, POD + CLASS)
    assert [c for c, _, _ in got] == ["DRA711"] and "driver gpu.nvidia.com through claim gpu" in got[0][2], got
    # The reference has a node with both: it is named.
    got = run(tmp_path, POD + CLASS, NODE + "---\n" + SLICE)
    assert [c for c, _, _ in got] == ["DRA711"] and "twice on node-01;" in got[0][2], got
    # The reference's nodes never have both: not the same devices.
    other = NODE.replace("nvidia.com/gpu", "example.com/fpga")
    assert run(tmp_path, POD + CLASS, other + "---\n" + SLICE) == []
    # Another vendor's device plugin resource: nothing.
    assert run(tmp_path, POD.replace("nvidia.com/gpu", "xilinx.com/fpga") + CLASS) == []


def test_dra_backed_extended_resource_counts_as_dra(tmp_path):
    ext_class = CLASS.replace("spec:\n", "spec:\n  extendedResourceName: nvidia.com/gpu\n")
    pod = POD.replace("  resourceClaims:\n  - {name: gpu, resourceClaimTemplateName: t}\n", "").replace(
        "      claims: [{name: gpu}]\n", ""
    )
    pod = pod.replace('limits: {nvidia.com/gpu: "1"}', 'limits: {nvidia.com/gpu: "1", nvidia.com/mig-1g.5gb: "1"}')
    got = run(tmp_path, pod + ext_class)
    assert [(c, "nvidia.com/mig-1g.5gb" in m) for c, _, m in got] == [("DRA711", True)], got


def test_container_claims_resolve(tmp_path):
    pod = POD.replace("claims: [{name: gpu}]", "claims: [{name: gpu, request: gpus}, {name: other}]").replace(
        'limits: {nvidia.com/gpu: "1"}', "limits: {}"
    )
    got = run(tmp_path, pod + CLASS)
    assert [(c, line) for c, line, _ in got] == [("DRA708", 11), ("DRA708", 11)], got
    msgs = sorted(m for _, _, m in got)
    assert "uses claim other, which the pod's resourceClaims do not list" in msgs[0], msgs
    assert "uses request gpus of claim gpu, which has no such request (gpu)" in msgs[1], msgs


def test_a_typed_list_of_the_api_is_linted_item_by_item(tmp_path):
    """`kubectl get --raw .../resourceclaimtemplates` prints a ResourceClaimTemplateList whose items have no kind: lint
    read none of them (0 objects, exit 0) while --from-file read them all."""
    f = tmp_path / "raw.yaml"
    f.write_text(
        "apiVersion: resource.k8s.io/v1\n"
        "kind: ResourceClaimTemplateList\n"
        "metadata: {resourceVersion: '7'}\n"
        "items:\n"
        "- metadata: {name: spare, namespace: team-b}\n"
        "  spec:\n"
        "    spec:\n"
        "      devices:\n"
        "        requests:\n"
        "        - name: gpu\n"
        "          exactly: {deviceClassName: gpu-typo}\n"
    )
    (m,) = load_manifests([str(f)])
    assert (m.obj["kind"], m.obj["apiVersion"], m.obj["metadata"]["name"]) == (
        "ResourceClaimTemplate",
        "resource.k8s.io/v1",
        "spare",
    )
    assert m.position(("spec", "spec", "devices", "requests", 0, "exactly", "deviceClassName"))[0] == 11


def test_a_reference_without_any_deviceclass_does_not_say_a_class_is_missing(tmp_path):
    """A reference dump that holds no DeviceClass (a kubectl get that left them out) cannot say a class does not
    exist: no DRA708 for the claim's class, and a note says what was not checked; a reference that holds some
    classes, but not this one, says so."""
    claim = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: ml-team}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu-big}
"""
    f = tmp_path / "m.yaml"
    f.write_text(claim)
    r = tmp_path / "ref.yaml"
    r.write_text(NODE + "---\n" + SLICE)
    report = lint(load_manifests([str(f)]), load_files([str(r)], None), Semantics.for_version((1, 37)), "dump")
    assert [x.finding.code for x in report.findings] == [], report.findings
    assert any("holds no DeviceClass objects" in n for n in report.notes), report.notes
    got = run(tmp_path, claim, NODE + "---\n" + SLICE + "---\n" + CLASS)
    assert [c for c, _, _ in got] == ["DRA708"], got
