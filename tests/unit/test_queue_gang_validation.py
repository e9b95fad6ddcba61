"""A pod group the scheduler rejects before its cycle (1.37+, validatePodGroup): every member must have the
PodGroup's priority and the members one preemption policy. Seen on v1.37.2 (tests/e2e/test_e2e_gangs.py): members
of priority 1000 in a PodGroup of priority 0 stay Pending at every attempt ("all pods in a single pod group should
have the same priority as the pod group's priority, got 1000 and 0"). kubectl-dra said undetermined; the cluster has
decided: none is placed, and the pods behind get the devices."""

from __future__ import annotations

from test_queue import BASE, NS, S37, gang, gpus, places, podgroup, with_claim

from kubectl_dra.features import Semantics


def _members(n, **spec):
    objs = gang("train", n)
    for o in objs:
        if o["kind"] == "Pod":
            o["spec"].update(spec)
    return objs


def _objs(group, members):
    """3 GPUs on node-01, the group and its members, and `after`, created later."""
    return [
        *BASE,
        gpus("node-01", "gpu-0", "gpu-1", "gpu-2"),
        group,
        *members,
        *with_claim("after", "2026-12-01T10:05:00Z"),
    ]


def test_members_of_another_priority_than_their_podgroup_get_nothing_for_certain():
    q = places(_objs(podgroup("train", 2), _members(2, priority=1000)))
    for i in range(2):
        p = q.places[f"{NS}/train-{i}"]
        assert (p.outcome, p.certain, p.devices) == ("gang", True, ()), p
        assert "the PodGroup's priority is 0 and train-0, train-1 have priority 1000;" in p.reason, p.reason
    after = q.places[f"{NS}/after"]
    assert (after.outcome, after.certain) == ("fits", True), after
    assert after.devices == ("gpu.example.com/node-01/gpu-0",), after  # the group takes nothing


def test_members_of_the_podgroups_priority_are_placed():
    q = places(_objs(podgroup("train", 2, priority=1000), _members(2, priority=1000)))
    assert [q.places[f"{NS}/train-{i}"].outcome for i in range(2)] == ["fits", "fits"]


def test_members_of_different_preemption_policies_get_nothing_for_certain():
    members = _members(2)
    members[2]["spec"]["preemptionPolicy"] = "Never"  # train-1
    q = places(_objs(podgroup("train", 2), members))
    p = q.places[f"{NS}/train-0"]
    assert (p.outcome, p.certain) == ("gang", True), p
    assert "different preemption policies (Never, PreemptLowerPriority)" in p.reason, p.reason
    # with PodGroupPreemptionPolicy on, the PodGroup's own policy is the one they must share
    gated = Semantics.for_version((1, 37), {"PodGroupPreemptionPolicy": True})
    never = _members(2, preemptionPolicy="Never")
    q = places(_objs(podgroup("train", 2), never), gated)
    assert q.places[f"{NS}/train-0"].outcome == "gang", q.places[f"{NS}/train-0"]
    q = places(_objs(podgroup("train", 2, preemptionPolicy="Never"), never), gated)
    assert q.places[f"{NS}/train-0"].outcome == "fits", q.places[f"{NS}/train-0"]
    assert places(_objs(podgroup("train", 2), never), S37).places[f"{NS}/train-0"].outcome == "fits"
