"""analyze/pod/score.py: kube-scheduler's node scores where only NodeResourcesFit and
NodeResourcesBalancedAllocation tell nodes apart. The expected numbers are upstream's own test tables, v1.37.2
pkg/scheduler/framework/plugins/noderesources least_allocated_test.go and balanced_allocation_test.go (their pods'
requests and nodes' capacities taken as they are); the queue's use of them is measured against the real scheduler
(docs/fidelity.md, "The scheduler's scores")."""

from __future__ import annotations

import pytest

from kubectl_dra.analyze.pod.score import (
    DEFAULT_MEMORY,
    balanced_allocation,
    least_allocated,
    score,
    unscored_why,
    usage,
)


def _pod(*reqs, node=None, **spec):
    """A pod with one container per request dict (st.MakePod().Req(...) adds one container per call)."""
    cs = [{"name": f"c{i}", "image": "app:1", "resources": {"requests": r}} for i, r in enumerate(reqs)]
    p = {"metadata": {"name": "p", "namespace": "ns"}, "spec": {"containers": cs, **spec}}
    if node:
        p["spec"]["nodeName"] = node
    return p


def _on(*pods):
    """usage() of a node's pods, added up."""
    out = (0, 0, 0, 0)
    for p in pods:
        out = tuple(a + b for a, b in zip(out, usage(p)))
    return out


def _cores(alloc_cpu, alloc_mem):
    """upstream's st.MakeNode().Capacity({"cpu": "10000"}): cores, here in milli-cpu."""
    return (alloc_cpu * 1000, alloc_mem)


# least_allocated_test.go: (name, requested pod, node capacities, existing pods per node, expected scores)
LEAST = [
    (
        "resources requested, pods scheduled with resources",
        _pod({"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"}),
        [(10000, 20000), (10000, 20000)],
        [[_pod({"cpu": "3000", "memory": "0"})], [_pod({"cpu": "3000", "memory": "5000"})]],
        [57, 45],
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        _pod({"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"}),
        [(10000, 20000), (10000, 50000)],
        [[_pod({"cpu": "3000", "memory": "0"})], [_pod({"cpu": "3000", "memory": "5000"})]],
        [57, 60],
    ),
    (
        "requested resources exceed node capacity",
        _pod({"cpu": "3000", "memory": "0"}),
        [(4000, 10000), (4000, 10000)],
        [[_pod({"cpu": "3000", "memory": "0"})], [_pod({"cpu": "3000", "memory": "5000"})]],
        [50, 25],
    ),
    (
        "no resources requested, pods scheduled with resources",
        {"spec": {"containers": []}},
        [(10000, 20000), (10000, 20000)],
        [
            [_pod({"cpu": "3000", "memory": "0"}), _pod({"cpu": "3000", "memory": "0"})],
            [_pod({"cpu": "3000", "memory": "0"}), _pod({"cpu": "3000", "memory": "5000"})],
        ],
        [70, 57],
    ),
]


@pytest.mark.parametrize("name, pod, nodes, existing, want", LEAST, ids=[c[0] for c in LEAST])
def test_least_allocated_scores_as_upstreams_table(name, pod, nodes, existing, want):
    got = [least_allocated(usage(pod)[:2], _cores(*n), _on(*ex)[:2]) for n, ex in zip(nodes, existing)]
    assert got == want


# balanced_allocation_test.go (cpu given in milli there)
BALANCED = [
    (
        "nothing scheduled, resources requested, differently sized nodes",
        _pod({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}),
        [(4000, 10000), (6000, 10000)],
        [[], []],
        [68, 75],
    ),
    (
        "resources requested, pods scheduled with resources",
        _pod({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}),
        [(10000, 20000), (10000, 20000)],
        [
            [_pod({"cpu": "1000m"}, {"cpu": "2000m"})],
            [_pod({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})],
        ],
        [73, 74],
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        _pod({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}),
        [(10000, 20000), (10000, 50000)],
        [
            [_pod({"cpu": "1000m"}, {"cpu": "2000m"})],
            [_pod({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})],
        ],
        [73, 70],
    ),
    (
        "resources requested, pods scheduled with resources, nodes to reach min/max score",
        _pod({"memory": "2000"}, {"memory": "3000"}),
        [(3000, 5000), (3000, 5000)],
        [[_pod({"cpu": "1000m"}, {"cpu": "2000m"})], []],
        [100, 50],
    ),
    (
        "requested resources at node capacity",
        _pod({"cpu": "1000m"}, {"cpu": "2000m"}),
        [(6000, 10000), (6000, 10000)],
        [
            [_pod({"cpu": "1000m"}, {"cpu": "2000m"})],
            [_pod({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})],
        ],
        [62, 62],
    ),
]


@pytest.mark.parametrize("name, pod, nodes, existing, want", BALANCED, ids=[c[0] for c in BALANCED])
def test_balanced_allocation_scores_as_upstreams_table(name, pod, nodes, existing, want):
    got = [balanced_allocation(usage(pod)[2:], n, _on(*ex)[2:]) for n, ex in zip(nodes, existing)]
    assert got == want


def test_a_pod_that_requests_nothing_is_skipped_by_balanced_allocation_and_counts_the_defaults_for_least():
    """balanced_allocation_test.go "nothing scheduled, nothing requested, skip in PreScore"; NodeInfo's
    NonZeroRequested counts 100m and 200Mi for a container without requests."""
    bare = _pod({})
    assert usage(bare) == (100, DEFAULT_MEMORY, 0, 0)
    assert balanced_allocation(usage(bare)[2:], (4000, 10000), (0, 0)) is None
    assert score(usage(bare), (8000, 32 * 1024**3), (0, 0, 0, 0)) == least_allocated(
        (100, DEFAULT_MEMORY), (8000, 32 * 1024**3), (0, 0)
    )


def test_what_the_scores_do_not_model_says_so():
    plain = _pod({"cpu": "1"})
    node = {"metadata": {"name": "n"}, "spec": {}, "status": {}}
    assert unscored_why(plain, [node], 3, False, ()) is None
    labelled = {**plain, "metadata": {"name": "p", "labels": {"app": "x"}}}
    assert "labels" in unscored_why(labelled, [node], 3, False, ())
    assert "more than 100 nodes" in unscored_why(plain, [node], 101, False, ())
    assert "pod affinity" in unscored_why(plain, [node], 3, True, ())
    tainted = {**node, "spec": {"taints": [{"key": "k", "effect": "PreferNoSchedule"}]}}
    assert "PreferNoSchedule" in unscored_why(plain, [tainted], 3, False, ())
    imaged = {**node, "status": {"images": [{"names": ["app:1"], "sizeBytes": 10**9}]}}
    assert "image" in unscored_why(plain, [imaged], 3, False, ())
    other_image = {**node, "status": {"images": [{"names": ["docker.io/library/app:1"], "sizeBytes": 10**9}]}}
    assert unscored_why(plain, [other_image], 3, False, ()) is None  # ImageLocality looks the name up as written
    listed = {"spec": {"devices": {"requests": [{"name": "g", "firstAvailable": [{"name": "a"}]}]}}}
    assert "firstAvailable" in unscored_why(plain, [node], 3, False, [listed])
    assert usage(_pod({"cpu": "1"}, resources={"requests": {"cpu": "2"}})) is None  # pod-level resources
    claimed = _pod({"cpu": "1"}, volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}])
    assert "VolumeBinding" in unscored_why(claimed, [node], 3, False, ())
