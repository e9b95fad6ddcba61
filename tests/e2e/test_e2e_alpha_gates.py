"""The 1.37 allocator's alpha gates against the real kube-scheduler (a v1.37.2 control plane started with
DRADeviceCompatibilityGroups and DRADerivedAttributes on, which puts the scheduler on its experimental allocator
channel). kubectl-dra does not read the server's gates: told them (`--feature-gates`), it must say what the
scheduler then does with counter compatibility groups (allocator/compat.py) and derived attributes
(allocator/derived.py), each pod asked about while gated and then let go."""

from __future__ import annotations

import pytest
from builders import device, request
from dra_objects import claim, pod

pytestmark = pytest.mark.e2e

COMPAT = ("--feature-gates", "DRADeviceCompatibilityGroups=true")
DERIVED = ("--feature-gates", "DRADerivedAttributes=true")


def _codes(r) -> set:
    return {f["code"] for f in r.json["findings"]}


def test_a_partition_whose_compatibility_groups_clash_with_the_allocated_one_is_refused(alpha_scenario):
    """Two partitions of one GPU draw from its counter set, in groups mig-a and mig-b; serving holds the mig-a one.
    A pod that may only take the mig-b one is blocked (DRA418: its groups share none with the set's allocated
    devices), though the counters have room for it; the scheduler agrees."""
    sc = alpha_scenario("compat")
    sc.device_class()
    counters = [{"name": "gpu-0-mem", "counters": {"memory": {"value": "40Gi"}}}]
    sc.slice([], suffix="-counters", pool="node-01", slice_count=2, shared_counters=counters)

    def part(name, group):
        uses = [{"counterSet": "gpu-0-mem", "counters": {"memory": {"value": "20Gi"}}, "compatibilityGroups": [group]}]
        return device(name, memory="20Gi", attrs={"profile": group}, consumesCounters=uses)

    sc.slice([part("mig-a-0", "mig-a"), part("mig-b-0", "mig-b")], suffix="-devices", pool="node-01", slice_count=2)
    got = sc.api.get(f"/apis/resource.k8s.io/v1/resourceslices/{sc.name}-node-01-devices")
    if not got["spec"]["devices"][0]["consumesCounters"][0].get("compatibilityGroups"):
        pytest.skip("the API server dropped consumesCounters[].compatibilityGroups with the gate on")
    sel = lambda g: f'device.attributes["{sc.driver}"].profile == "{g}"'  # noqa: E731
    sc.create(claim("serving-gpu", [request("gpu", sc.cls, selectors=[sel("mig-a")])]))
    sc.create(pod("serving", {"gpu": "serving-gpu"}))
    sc.cluster.wait_bound(sc.ns, "serving")
    assert sc.cluster.allocated_devices(sc.ns, "serving-gpu") == [(sc.driver, "node-01", "mig-a-0")]

    sc.create(claim("trainer-gpu", [request("gpu", sc.cls, selectors=[sel("mig-b")])]))
    sc.create(pod("trainer", {"gpu": "trainer-gpu"}, gated=True))
    r = sc.cluster.kubectl_dra("explain", "pod", "trainer", "-n", sc.ns, "-o", "json", *COMPAT)
    assert "DRA418" in _codes(r) and "DRA002" not in _codes(r), str(r)  # (the gate is the verdict while it holds)
    sc.ungate("trainer")
    ev = sc.cluster.wait_unschedulable(sc.ns, "trainer", "cannot allocate all claims")
    assert "cannot allocate all claims" in ev["message"], ev
    after = sc.cluster.kubectl_dra("explain", "pod", "trainer", "-n", sc.ns, "-o", "json", *COMPAT)
    assert after.code == 1 and after.json["verdict"]["determined"] and "DRA418" in _codes(after), str(after)


def test_a_constraint_on_a_derived_attribute_picks_the_device_it_matches(alpha_scenario):
    """A claim asks for a GPU and a NIC on the same socket, the NIC's socket derived from its NUMA node (numaNode / 2):
    of nic-0 (NUMA 0: socket 0) and nic-1 (NUMA 2: socket 1), only nic-1 goes with gpu-0 (socket 1). kubectl-dra
    allocates gpu-0 and nic-1, and so does the scheduler; with the NIC on NUMA 0 alone, blocked on the constraint."""
    sc = alpha_scenario("derived")
    sc.device_class()
    gpu = device("gpu-0", attrs={"kind": "gpu", "socket": 1})
    nics = [
        device("nic-0", attrs={"kind": "nic", "numaNode": 0}),
        device("nic-1", attrs={"kind": "nic", "numaNode": 2}),
    ]
    sc.slice([gpu, *nics])
    attr = lambda n: f'device.attributes["{sc.driver}"].{n}'  # noqa: E731

    def both(name):
        reqs = [
            request("gpu", sc.cls, selectors=[f'{attr("kind")} == "gpu"'],
                    derivedAttributes=[{"name": "derived/socket", "expression": attr("socket")}]),
            request("nic", sc.cls, selectors=[f'{attr("kind")} == "nic"'],
                    derivedAttributes=[{"name": "derived/socket", "expression": f"{attr('numaNode')} / 2"}]),
        ]  # fmt: skip
        c = claim(name, reqs)
        c["spec"]["devices"]["constraints"] = [{"requests": ["gpu", "nic"], "matchAttribute": "derived/socket"}]
        return c

    sc.create(both("pair"))
    got = sc.api.get(f"/apis/resource.k8s.io/v1/namespaces/{sc.ns}/resourceclaims/pair")
    if not got["spec"]["devices"]["requests"][0]["exactly"].get("derivedAttributes"):
        pytest.skip("the API server dropped requests[].exactly.derivedAttributes with the gate on")
    sc.create(pod("trainer", {"gpu": "pair"}, gated=True))
    r = sc.cluster.kubectl_dra("explain", "pod", "trainer", "-n", sc.ns, "-o", "json", *DERIVED)
    assert "DRA002" in _codes(r), str(r)  # allocatable once the gate goes (the gate is the verdict while it holds)
    dry = next(c for c in r.json["claims"] if c["name"] == "pair")["dryRun"]["results"]
    assert sorted(x["device"] for x in dry) == ["gpu-0", "nic-1"], dry
    sc.ungate("trainer")
    sc.cluster.wait_bound(sc.ns, "trainer")
    assert sorted(d for _, _, d in sc.cluster.allocated_devices(sc.ns, "pair")) == ["gpu-0", "nic-1"]

    # nic-1 is taken now: a second pair can only have nic-0, on the wrong socket (and no GPU is left either)
    sc.create(both("pair-2"))
    sc.create(pod("trainer-2", {"gpu": "pair-2"}))
    sc.cluster.wait_unschedulable(sc.ns, "trainer-2", "cannot allocate all claims")
    two = sc.cluster.kubectl_dra("explain", "pod", "trainer-2", "-n", sc.ns, "-o", "json", *DERIVED)
    assert two.code == 1 and two.json["verdict"]["missing"] == "device", str(two)
