"""What the 1.38 allocator does differently (behaviour.py: qualified_capacity_names, attributes_converted_once,
active_share_blocks_exclusive, all_mode_unusable_pool_fails_node), on literals, beside what 1.37 does with the same
input. The long fidelity runs against upstream's v0.38 allocator measure the same rules at scale."""

from __future__ import annotations

import pytest
from test_allocator import CLASSES, NODE, D, claim, dev, picks, req, sl

from kubectl_dra.analyze.allocator import AllocatedState, AllocationError, Allocator, NodeFailure
from kubectl_dra.features import Semantics

V37, V38 = (1, 37), (1, 38)


def run(slices, claims, v, allocated=()):
    s = Semantics.for_version(v)
    return Allocator(s, CLASSES, slices, AllocatedState.from_claims(allocated, s)).allocate(NODE, claims)


def test_capacity_names_meet_across_spellings_from_1_38():
    # the request says "mem", the device publishes "<driver>/mem"
    d = dev("d0", allowMultipleAllocations=True, capacity={f"{D}/mem": {"value": "8Gi"}})
    c = claim(req(capacity={"requests": {"mem": "2Gi"}}))
    assert run([sl("s", [d])], [c], V37) is None  # 1.37: no capacity "mem" on the device
    res = run([sl("s", [d])], [c], V38)
    assert picks(res) == [[("r", "d0")]]
    assert {k: str(v) for k, v in res[0].results[0]["consumedCapacity"].items()} == {f"{D}/mem": "2147483648"}


def test_a_capacity_requested_both_ways_is_an_error_from_1_38():
    d = dev("d0", allowMultipleAllocations=True, capacity={"mem": {"value": "8Gi"}})
    c = claim(req(capacity={"requests": {"mem": "1Gi", f"{D}/mem": "1Gi"}}))
    with pytest.raises(AllocationError) as e:
        run([sl("s", [d])], [c], V38)
    assert f'capacity "mem" requested both as "{D}/mem" and as "mem"' in e.value.message, e.value.message
    assert "checking capacity for device" in e.value.message


def test_a_negative_request_names_the_qualified_capacity_from_1_38():
    d = dev("d0", allowMultipleAllocations=True, capacity={"mem": {"value": "8Gi"}})
    c = claim(req(capacity={"requests": {"mem": "-1Gi"}}))
    with pytest.raises(AllocationError) as e:
        run([sl("s", [d])], [c], V38)
    assert f'capacity "{D}/mem": capacity value is negative: request -1Gi' in e.value.message, e.value.message
    with pytest.raises(AllocationError) as e:
        run([sl("s", [d])], [c], V37)
    assert 'capacity "mem": capacity value is negative' in e.value.message, e.value.message


def _constrained(values, constraint="matchAttribute"):
    devices = [dev(f"d{i}", attributes={"v": v}) for i, v in enumerate(values)]
    c = claim(req(count=2), constraints=[{constraint: f"{D}/v"}])
    return [sl("s", devices)], [c]


def test_versions_compare_without_build_metadata_from_1_38():
    slices, claims = _constrained([{"version": "1.0.0+a"}, {"version": "1.0.0+b"}])
    assert run(slices, claims, V37) is None  # the strings differ
    assert picks(run(slices, claims, V38)) == [[("r", "d0"), ("r", "d1")]]
    slices, claims = _constrained([{"version": "1.0.0+a"}, {"version": "1.0.0+b"}], "distinctAttribute")
    assert picks(run(slices, claims, V37)) == [[("r", "d0"), ("r", "d1")]]
    assert run(slices, claims, V38) is None  # semver-equal: not distinct


@pytest.mark.parametrize("bad", [{"version": "01.2.3"}, {"ints": []}, {"strings": ["a"]}, {}])
def test_an_unusable_attribute_in_a_constraint_aborts_from_1_38(bad):
    slices, claims = _constrained([bad, {"version": "1.2.3"}])
    with pytest.raises(AllocationError) as e:
        run(slices, claims, V38)
    assert e.value.message == f"claim ns/c, request r: device {D}/p/d0: unsupported attribute value for {D}/v"
    assert e.value.kind.value == "attribute"
    if bad == {"strings": ["a"]}:
        return  # a usable value once list-typed attributes are on
    with pytest.raises(AllocationError) as e:  # incubating (an alpha gate on) returns the error bare
        s = Semantics.for_version(V38, {"DRAListTypeAttributes": True})
        Allocator(s, CLASSES, slices, AllocatedState.from_claims((), s)).allocate(NODE, claims)
    assert e.value.message == f"device {D}/p/d0: unsupported attribute value for {D}/v", e.value.message


def test_a_scalar_wins_over_a_list_from_1_38():
    slices, claims = _constrained([{"int": 1, "ints": [2]}, {"int": 1}])
    assert picks(run(slices, claims, V38)) == [[("r", "d0"), ("r", "d1")]]


def test_an_active_share_blocks_an_exclusive_allocation_from_1_38():
    # the device held a share; since then its driver turned allowMultipleAllocations off
    share = {
        "metadata": {"name": "holder", "namespace": "ns"},
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "r", "driver": D, "pool": "p", "device": "d0", "shareID": "0" * 8 + "-aaaa"}
                    ]
                }
            }
        },
    }
    slices = [sl("s", [dev("d0")])]
    assert picks(run(slices, [claim(req())], V37, [share])) == [[("r", "d0")]]
    assert run(slices, [claim(req())], V38, [share]) is None


def test_all_mode_over_an_incomplete_pool_fails_the_node_from_1_38():
    slices = [sl("s", [dev("d0")], count=2)]  # one of two slices published: the pool is incomplete
    c = claim(req(mode="All"))
    with pytest.raises(AllocationError) as e:
        run(slices, [c], V37)
    assert not isinstance(e.value, NodeFailure)
    with pytest.raises(NodeFailure) as e:
        run(slices, [c], V38)
    assert "asks for all devices, but resource pool" in e.value.message and "being updated" in e.value.message


def test_a_negative_consumed_capacity_fails_the_allocated_state_from_1_38():
    bad = {
        "metadata": {"name": "bad", "namespace": "ns"},
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {
                            "request": "r",
                            "driver": D,
                            "pool": "p",
                            "device": "d0",
                            "shareID": "x",
                            "consumedCapacity": {"mem": "-1Gi"},
                        }
                    ]
                }
            }
        },
    }
    for v, want in (
        (V37, None),
        (
            V38,
            f'gather allocation state: claim ns/bad, device {D}/p/d0: consumed capacity "mem" must not be negative, got -1Gi',
        ),
    ):
        assert AllocatedState.from_claims([bad], Semantics.for_version(v)).capacity_error() == want
