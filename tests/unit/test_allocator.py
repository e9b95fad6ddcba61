"""The allocator port, on plain Python literals (no cluster, no files)."""

from __future__ import annotations

from fractions import Fraction

import builders
import pytest
from builders import device, request, rslice

from kubectl_dra.analyze.allocator import (
    AllocatedState,
    AllocationError,
    Allocator,
    CapacityNotRepresentable,
    consumed_capacity,
    gather_pools,
)
from kubectl_dra.features import Semantics

D = "gpu.example.com"
NODE = {"metadata": {"name": "n1", "labels": {"zone": "a"}}}


def sem(v=(1, 37), **gates):
    return Semantics.for_version(v, gates)


def dev(name, **kw):
    return device(name, **kw)


def sl(name, devices, node="n1", pool="p", count=1, gen=1, **spec):
    return rslice(name, devices, node, pool, D, count, gen, **spec)


CLASSES = {
    "gpu": {"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{D}"'}}]}}
}


def claim(*requests, constraints=None, name="c"):
    return builders.claim(name, list(requests), constraints, ns="ns", uid=False)


def req(name="r", count=1, mode="ExactCount", **kw):
    return request(name, "gpu", count, mode=mode, **kw)


def picks(res):
    return [[(r["request"], r["device"]) for r in c.results] for c in res]


def run(slices, claims, s=None, allocated=()):
    s = s or sem()
    return Allocator(s, CLASSES, slices, AllocatedState.from_claims(allocated, s)).allocate(NODE, claims)


def test_first_fit_in_pool_then_slice_order():
    slices = [sl("b", [dev("d1")], pool="p2"), sl("a", [dev("d0")], pool="p1")]
    assert picks(run(slices, [claim(req())])) == [[("r", "d0")]]


def test_in_use_devices_are_skipped_and_admin_access_ignores_them():
    used = {
        "metadata": {"name": "u", "namespace": "ns"},
        "status": {
            "allocation": {"devices": {"results": [{"request": "r", "driver": D, "pool": "p", "device": "d0"}]}}
        },
    }
    slices = [sl("s", [dev("d0"), dev("d1")])]
    assert picks(run(slices, [claim(req())], allocated=[used])) == [[("r", "d1")]]
    res = run(slices, [claim(req(adminAccess=True))], allocated=[used])
    assert picks(res) == [[("r", "d0")]] and res[0].results[0]["adminAccess"] is True


def test_not_enough_devices_is_no_result_not_an_error():
    assert run([sl("s", [dev("d0")])], [claim(req(count=2))]) is None


def test_match_attribute_backtracks_to_a_consistent_pair():
    n = lambda v: {"numa": {"int": v}}  # noqa: E731
    slices = [sl("s", [dev("a", attributes=n(0)), dev("b", attributes=n(1)), dev("c", attributes=n(1))])]
    res = run(slices, [claim(req(count=2), constraints=[{"matchAttribute": f"{D}/numa"}])])
    assert picks(res) == [[("r", "b"), ("r", "c")]]


def test_distinct_attribute():
    n = lambda v: {"numa": {"int": v}}  # noqa: E731
    slices = [sl("s", [dev("a", attributes=n(0)), dev("b", attributes=n(0)), dev("c", attributes=n(1))])]
    res = run(slices, [claim(req(count=2), constraints=[{"distinctAttribute": f"{D}/numa"}])])
    assert picks(res) == [[("r", "a"), ("r", "c")]]


def test_all_mode_takes_every_matching_device_and_fails_when_one_is_in_use():
    slices = [sl("s", [dev("d0"), dev("d1")])]
    assert picks(run(slices, [claim(req(mode="All"))])) == [[("r", "d0"), ("r", "d1")]]
    used = {
        "metadata": {"name": "u", "namespace": "ns"},
        "status": {
            "allocation": {"devices": {"results": [{"request": "r", "driver": D, "pool": "p", "device": "d1"}]}}
        },
    }
    assert run(slices, [claim(req(mode="All"))], allocated=[used]) is None


def test_all_mode_on_incomplete_pool_is_an_error():
    with pytest.raises(
        AllocationError, match="asks for all devices, but resource pool gpu.example.com/p is currently being updated"
    ):
        run([sl("s", [dev("d0")], count=2)], [claim(req(mode="All"))])


def test_incomplete_pool_used_in_1_34_skipped_from_1_35():
    slices = [sl("s", [dev("d0")], count=2)]
    assert picks(run(slices, [claim(req())], sem((1, 34)))) == [[("r", "d0")]]
    assert run(slices, [claim(req())], sem((1, 35))) is None


def test_invalid_pool_error_differs_by_version():
    slices = [sl("s", [dev("d0"), dev("d0")])]
    with pytest.raises(AllocationError, match="pool p is invalid: duplicate device name d0"):
        run(slices, [claim(req())], sem((1, 34)))
    with pytest.raises(AllocationError, match="^invalid resource pools were encountered$"):
        run(slices, [claim(req())], sem((1, 35)))


def test_first_available_uses_the_first_subrequest_that_fits():
    r = {
        "name": "r",
        "firstAvailable": [
            {"name": "two", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2},
            {"name": "one", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1},
        ],
    }
    assert picks(run([sl("s", [dev("d0")])], [claim(r)])) == [[("r/one", "d0")]]
    with pytest.raises(AllocationError, match="has subrequests, but the DRAPrioritizedList feature is disabled"):
        run([sl("s", [dev("d0")])], [claim(r)], sem(DRAPrioritizedList=False))


def test_taints_by_version():
    t = [{"key": "k", "value": "v", "effect": "None"}]
    slices = [sl("s", [dev("d0", taints=t)])]
    # 1.34: every taint (any effect) must be tolerated; 1.35+: only NoSchedule/NoExecute matter.
    assert run(slices, [claim(req())], sem((1, 34), DRADeviceTaints=True)) is None
    assert picks(run(slices, [claim(req())], sem((1, 35), DRADeviceTaints=True))) == [[("r", "d0")]]
    ns = [sl("s", [dev("d0", taints=[{"key": "k", "effect": "NoSchedule"}])])]
    assert run(ns, [claim(req())], sem((1, 36))) is None
    tol = req(tolerations=[{"key": "k", "operator": "Exists"}])
    assert picks(run(ns, [claim(tol)], sem((1, 36)))) == [[("r", "d0")]]
    # Gate off (1.35 default): taints are ignored entirely.
    assert picks(run(ns, [claim(req())], sem((1, 35)))) == [[("r", "d0")]]


def test_counters_are_shared_per_pool():
    counters = [{"name": "cs", "counters": {"mem": {"value": "40Gi"}}}]
    part = lambda n, v: dev(n, consumesCounters=[{"counterSet": "cs", "counters": {"mem": {"value": v}}}])  # noqa: E731
    slices = [
        sl("c", [], count=2, sharedCounters=counters),
        sl("d", [part("a", "30Gi"), part("b", "20Gi"), part("c", "10Gi")], count=2),
    ]
    res = run(slices, [claim(req(count=2))], sem((1, 36)))
    assert picks(res) == [[("r", "a"), ("r", "c")]]
    # Gate off: devices that consume counters are never allocated.
    assert run(slices, [claim(req())], sem((1, 35))) is None


def test_claim_device_limit():
    with pytest.raises(
        AllocationError,
        match="request r: adding 33 devices exceeds the claim limit of 32, with 0 already accounted for",
    ):
        run([sl("s", [dev("d0")])], [claim(req(count=33))])


def test_node_selector_result():
    ns_slice = sl(
        "s",
        [dev("d0")],
        node=None,
        nodeSelector={
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
        },
    )
    res = run([ns_slice], [claim(req())])
    assert res[0].node_selector == {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
    }
    res = run([sl("s", [dev("d0")])], [claim(req())])
    assert res[0].node_selector == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]
    }
    res = run([sl("s", [dev("d0")], node=None, allNodes=True)], [claim(req())])
    assert res[0].node_selector is None


def test_slices_for_other_nodes_and_older_generations_are_ignored():
    pools = gather_pools(
        [sl("x", [dev("d0")], node="n2"), sl("old", [dev("d1")], gen=1), sl("new", [dev("d2")], gen=2)], NODE, sem()
    )
    assert [(p.name, [s["metadata"]["name"] for s in p.slices]) for p in pools] == [("p", ["new"])]


def test_cel_runtime_error_aborts_with_upstream_wording():
    c = claim(req(selectors=[{"cel": {"expression": f'device.attributes["{D}"].model == "x"'}}]))
    with pytest.raises(AllocationError) as e:
        run([sl("s", [dev("d0")])], [c], sem((1, 36)))
    assert e.value.message == "claim ns/c: selector #0: CEL runtime error: no such key: model"
    with pytest.raises(AllocationError) as e:
        run([sl("s", [dev("d0")])], [c], sem((1, 37)))
    assert e.value.message.startswith(
        "claim ns/c: selector #0 on device gpu.example.com/p/d0: CEL runtime error: no such key: model"
    )


def test_consumable_capacity_rounding():
    cap = {"mem": {"value": "40Gi", "requestPolicy": {"default": "1Gi", "validRange": {"min": "1Gi", "step": "4Gi"}}}}
    assert consumed_capacity({"mem": "6Gi"}, {"capacity": cap})["mem"] == Fraction(9 * 2**30)
    assert consumed_capacity(None, {"capacity": cap})["mem"] == Fraction(2**30)
    assert consumed_capacity({"other": "1"}, {"capacity": cap}) is None


def test_shared_device_capacity_is_used_up():
    d = dev("d0", allowMultipleAllocations=True, capacity={"mem": {"value": "40Gi"}})
    r = req(capacity={"requests": {"mem": "30Gi"}})
    res = run([sl("s", [d])], [claim(r, name="a"), claim(r, name="b")], sem((1, 36)))
    assert res is None
    small = req(capacity={"requests": {"mem": "20Gi"}})
    res = run([sl("s", [d])], [claim(small, name="a"), claim(small, name="b")], sem((1, 36)))
    assert picks(res) == [[("r", "d0")], [("r", "d0")]]


def test_device_taint_rules_are_applied_like_the_scheduler_does():
    from kubectl_dra.analyze.allocator import apply_taint_rules

    slices = [sl("s", [dev("d0"), dev("d1")])]
    rule = {
        "metadata": {"name": "maint"},
        "spec": {"deviceSelector": {"driver": D, "device": "d0"}, "taint": {"key": "m", "effect": "NoSchedule"}},
    }
    patched = apply_taint_rules(slices, [rule, {"metadata": {"name": "none"}, "spec": {"taint": {"key": "x"}}}])
    assert [d.get("taints") for d in patched[0]["spec"]["devices"]] == [
        [{"key": "m", "effect": "NoSchedule", "rule": "maint"}],
        None,
    ]
    assert slices[0]["spec"]["devices"][0].get("taints") is None  # the input is not modified
    assert picks(run(patched, [claim(req())], sem((1, 37)))) == [[("r", "d1")]]


def test_search_budget_is_an_honest_error():
    s = sem()
    a = Allocator(s, CLASSES, [sl("s", [dev(f"d{i}") for i in range(6)])], AllocatedState())
    a.max_steps = 5
    with pytest.raises(AllocationError) as e:
        a.allocate(NODE, [claim(req(count=7))])
    assert e.value.kind == "timeout"
    from kubectl_dra.findings.model import make, verdict_from

    v = verdict_from([make("DRA414", e.value.message)], "ok")
    assert v.determined is False and v.blocked is False


def test_a_later_claim_that_fails_is_not_searched_again_from_the_same_state():
    # Four claims spread over ten devices, then one no device satisfies: upstream tries the fifth claim
    # after each of the 5,040 ordered picks, but only 210 distinct device sets exist.
    never = req(selectors=[{"cel": {"expression": 'device.driver == "other.example.com"'}}])
    claims = [claim(req(), name=f"c{i}") for i in range(4)] + [claim(never, name="last")]
    for v in ((1, 34), (1, 35), (1, 36), (1, 37)):
        a = Allocator(sem(v), CLASSES, [sl("s", [dev(f"d{i}") for i in range(10)])], AllocatedState())
        a.max_steps = 5_000  # 2,986 steps; without the memo 17,581
        assert a.allocate(NODE, claims) is None, v
        # the same claims minus the impossible one still get the first devices, in order
        a = Allocator(sem(v), CLASSES, [sl("s", [dev(f"d{i}") for i in range(10)])], AllocatedState())
        assert picks(a.allocate(NODE, claims[:4])) == [[("r", f"d{i}")] for i in range(4)], v


def test_list_attributes_use_set_semantics_only_where_the_allocator_gets_the_feature():
    ids = lambda *v: {"ids": {"ints": list(v)}}  # noqa: E731
    slices = [sl("s", [dev("a", attributes=ids(0, 1)), dev("b", attributes=ids(2)), dev("c", attributes=ids(1, 2))])]
    match = claim(req(count=2), constraints=[{"matchAttribute": f"{D}/ids"}])
    distinct = claim(req(count=2), constraints=[{"distinctAttribute": f"{D}/ids"}])
    on = sem((1, 37), DRAListTypeAttributes=True)
    assert on.channel == "experimental"
    assert picks(run(slices, [match], on)) == [[("r", "a"), ("r", "c")]]  # {0,1} & {1,2} = {1}
    assert picks(run(slices, [distinct], on)) == [[("r", "a"), ("r", "b")]]  # {0,1} and {2} are disjoint
    # Without the feature a list attribute never matches another device's.
    assert run(slices, [match], sem((1, 37))) is None
    # 1.36's scheduler does not pass ListTypeAttributes to the allocator: the gate only changes CEL.
    assert sem((1, 36), DRAListTypeAttributes=True).channel == sem((1, 36)).channel == "incubating"
    assert run(slices, [match], sem((1, 36), DRAListTypeAttributes=True)) is None


def _first_available(*subs):
    return {
        "name": "r",
        "firstAvailable": [dict(name=f"s{i}", deviceClassName=c, **m) for i, (c, m) in enumerate(subs)],
    }


NIC_CLASSES = dict(
    CLASSES,
    nic={
        "metadata": {"name": "nic"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "nic.example.com"'}}]},
    },
)


def test_before_1_36_all_mode_subrequests_inherit_two_upstream_index_bugs():
    slices = [sl("s", [dev("d0")])]

    def outcome(v, *subs):
        s = sem(v)
        res = Allocator(s, NIC_CLASSES, slices, AllocatedState.from_claims((), s)).allocate(
            NODE, [claim(_first_available(*subs))]
        )
        return picks(res) if res else None

    # The next "all" device is looked up as a device of the first subrequest (count 3: no room).
    three_then_all = (("gpu", {"allocationMode": "ExactCount", "count": 3}), ("gpu", {"allocationMode": "All"}))
    assert outcome((1, 35), *three_then_all) is None
    assert outcome((1, 36), *three_then_all) == [[("r/s1", "d0")]]
    # While validated, subrequest 1 reads the selector results cached for subrequest 0 (nic only).
    all_then_all = (("nic", {"allocationMode": "All"}), ("gpu", {"allocationMode": "All"}))
    assert outcome((1, 35), *all_then_all) is None
    assert outcome((1, 36), *all_then_all) == [[("r/s1", "d0")]]


def test_1_34_distinct_attribute_compares_pointers_so_equal_values_of_two_devices_pass():
    n = lambda v: {"numa": {"int": v}}  # noqa: E731
    slices = [sl("s", [dev("a", attributes=n(0)), dev("b", attributes=n(0))])]
    c = claim(req(count=2), constraints=[{"distinctAttribute": f"{D}/numa"}])
    assert picks(run(slices, [c], sem((1, 34), DRAConsumableCapacity=True))) == [[("r", "a"), ("r", "b")]]
    assert run(slices, [c], sem((1, 35), DRAConsumableCapacity=True)) is None


def test_fractional_capacity_range_uses_milli_arithmetic_in_1_37():
    policy = {"validRange": {"min": "500m", "step": "500m"}}
    device = {"capacity": {"cores": {"value": "4", "requestPolicy": policy}}}
    # 1.37 (DRAFractionalCapacityRange, on by default): 0.7 rounds up to the next 0.5 step.
    assert consumed_capacity({"cores": "700m"}, device, fractional=True) == {"cores": Fraction(1)}
    assert consumed_capacity({"cores": "1200m"}, device, fractional=True) == {"cores": Fraction(3, 2)}
    # Without the feature the bounds are read as integers (Value() rounds 500m up to 1).
    assert consumed_capacity({"cores": "1200m"}, device) == {"cores": Fraction(2)}
    # A request finer than a milli cannot be represented: 1.37 aborts the allocation.
    with pytest.raises(CapacityNotRepresentable, match="request 1000001u is not a representable milli value"):
        consumed_capacity({"cores": "1000001u"}, device, fractional=True)


def test_1_37_experimental_skips_devices_of_slices_that_skip_node_operations_unless_the_node_declares_it():
    slices = [sl("s", [dev("a")], skipNodeOperations=["*"]), sl("t", [dev("b")], pool="q")]
    on = sem(DRAOptionalNodeOperations=True)
    assert on.channel == "experimental"
    declared = {**NODE, "status": {"declaredFeatures": ["DRAOptionalNodeOperations"]}}
    got = Allocator(on, CLASSES, slices, AllocatedState()).allocate(declared, [claim(req(count=2))])
    assert got is not None and sorted(r["device"] for r in got[0].results) == ["a", "b"]
    # The node does not declare the feature: device a is skipped, one device is not enough.
    assert Allocator(on, CLASSES, slices, AllocatedState()).allocate(NODE, [claim(req(count=2))]) is None
    # Channels without the code (the default incubating one) never read the field.
    assert Allocator(sem(), CLASSES, slices, AllocatedState()).allocate(NODE, [claim(req(count=2))]) is not None


def test_cel_input_is_per_device_object_not_per_id():
    """Two slices can publish one device ID with different attributes (pool generations in transition, an invalid
    pool): each object is evaluated as itself (the CEL input was once cached by the ID, so the second copy was judged
    by the first one's attributes)."""
    from kubectl_dra.analyze.allocator import SelectorEvaluator

    ev = SelectorEvaluator(sem())
    did = (D, "p", "d0")
    old = {"name": "d0", "attributes": {"v": {"version": "2.0.0"}}}
    new = {"name": "d0", "attributes": {"v": {"version": "1.2.4"}}}
    expr = f'device.attributes["{D}"].v.major() == 1'
    assert ev.evaluate(expr, did, old).value is False
    assert ev.evaluate(expr, did, new).value is True


def test_duplicate_device_fast_path_names_the_first_duplicate():
    """pools._duplicate_device counts names a slice at a time and, on a duplicate, asks the one-device-at-a-time
    walk which name came twice first: the same reason as that walk for any pool."""
    import random

    from kubectl_dra.analyze.allocator.pools import _duplicate_device, _first_duplicate

    rng = random.Random(7)
    for _ in range(3000):
        slices = [
            {"spec": {"devices": [{"name": rng.choice("abcdefgh")} for _ in range(rng.randint(0, 4))]}}
            for _ in range(rng.randint(0, 4))
        ]
        assert _duplicate_device(slices) == _first_duplicate(slices)
    assert (
        _duplicate_device(
            [{"spec": {"devices": [{"name": "a"}, {"name": "b"}]}}, {"spec": {"devices": [{"name": "b"}]}}]
        )
        == "duplicate device name b"
    )


def why(slices, claims, s=None, allocated=()):
    """The search's own record of why it found nothing (allocator/why.py), as (claim, request, slot, reason)."""
    s = s or sem()
    a = Allocator(s, CLASSES, slices, AllocatedState.from_claims(allocated, s))
    assert a.allocate(NODE, claims) is None
    w = a.last_failure
    return w.claim, w.request_name, w.slot, w.reason


def test_search_records_where_it_ran_out_and_why():
    n = lambda v: {"numa": {"int": v}}  # noqa: E731
    match = [{"matchAttribute": f"{D}/numa"}]
    one = [sl("s", [dev("d0", attributes=n(0))])]
    # Two requests, one device that satisfies the constraint: the second request finds it taken (issue 29).
    for v in ((1, 35), (1, 37)):
        assert why(one, [claim(req("a"), req("b"), constraints=match)], sem(v)) == (0, "b", 0, "distinct")
    # Two devices whose values differ: the constraint, not the count, is why (1.35 permutes, 1.37 resumes).
    two = [sl("s", [dev("d0", attributes=n(0)), dev("d1", attributes=n(1))])]
    for v in ((1, 35), (1, 37)):
        assert why(two, [claim(req(count=2), constraints=match)], sem(v)) == (0, "r", 1, "constraint")
    # A device that lacks the attribute is turned away by the constraint at the first request already.
    assert why([sl("s", [dev("d0")])], [claim(req("a"), req("b"), constraints=match)]) == (0, "a", 0, "constraint")
    # Across claims: the second claim finds the only device taken by the first.
    assert why(one, [claim(req(), name="c1"), claim(req(), name="c2")]) == (1, "r", 0, "distinct")
    # Shared counters: the first claim's partition uses them up for the second's.
    counters = [{"name": "cs", "counters": {"mem": {"value": "40Gi"}}}]
    part = lambda n, v: dev(n, consumesCounters=[{"counterSet": "cs", "counters": {"mem": {"value": v}}}])  # noqa: E731
    parts = [sl("c", [], count=2, sharedCounters=counters), sl("d", [part("a", "40Gi"), part("b", "40Gi")], count=2)]
    assert why(parts, [claim(req(), name="c1"), claim(req(), name="c2")], sem((1, 36))) == (1, "r", 0, "counters")
    # No device passes the selectors: nothing was a candidate.
    sel = req(selectors=[{"cel": {"expression": "false"}}])
    assert why(one, [claim(sel)]) == (0, "r", 0, "no-candidate")
    # A device allocated to a claim outside the search is no candidate either; count 2 of 1 device: distinct.
    used = {
        "metadata": {"name": "u", "namespace": "ns"},
        "status": {
            "allocation": {"devices": {"results": [{"request": "r", "driver": D, "pool": "p", "device": "d0"}]}}
        },
    }
    assert why(one, [claim(req())], allocated=[used]) == (0, "r", 0, "no-candidate")
    assert why(one, [claim(req(count=2))]) == (0, "r", 1, "distinct")
