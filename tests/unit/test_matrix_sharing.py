"""Device matrices are shared between pods whose constraints differ but leave the same nodes usable for the same
reasons (one matrix per request shape and reachable node set, dryrun.py analyse_claims), and only between those."""

from __future__ import annotations

import builders
from builders import dclass, device, request, rslice

from kubectl_dra.analyze.pod.dryrun import Analysis
from kubectl_dra.analyze.reports.explain import explain_pod
from kubectl_dra.analyze.reports.replicas import DEFAULT_TOLERATIONS
from kubectl_dra.features import Semantics
from kubectl_dra.model import objects

S37 = Semantics.for_version((1, 37))
NS = "team-a"
TAINT = {"key": "example.com/reserved", "value": "infra", "effect": "NoSchedule"}


def _objs():
    objs = [
        dclass(),
        builders.node("node-01", allocatable={}),
        builders.node("node-02", allocatable={}, taints=[TAINT]),
        rslice("node-01-gpus", [device("gpu-0", memory="24Gi")], "node-01"),
        rslice("node-02-gpus", [device("gpu-0", memory="24Gi")], "node-02"),
    ]
    tolerations = {
        "plain": None,
        "admitted": [dict(t) for t in DEFAULT_TOLERATIONS],  # as DefaultTolerationSeconds leaves a pod
        "tolerant": [{"key": TAINT["key"], "operator": "Exists", "effect": "NoSchedule"}],
    }
    for name, tol in tolerations.items():
        p = builders.pod(name, [("gpu", "claim", f"{name}-gpu")], ns=NS, uid=f"uid-{name}")
        if tol is not None:
            p["spec"]["tolerations"] = tol
        objs += [p, builders.claim(f"{name}-gpu", [request()], ns=NS, uid=f"uid-{name}-gpu")]
    return objs


def _matrix(base: Analysis, snap, name: str):
    fork = base.fork()
    report = explain_pod(snap, S37, NS, name, fork, True)
    return fork.plan.analyses[0].matrices["gpu"], report


def test_pods_that_reach_the_same_nodes_share_a_matrix_and_others_do_not():
    snap = objects.snapshot_from_objects(_objs(), NS)
    base = Analysis(snap, S37)
    plain, r_plain = _matrix(base, snap, "plain")
    admitted, r_admitted = _matrix(base, snap, "admitted")
    tolerant, r_tolerant = _matrix(base, snap, "tolerant")
    assert admitted is plain  # the default tolerations change no node's verdict here
    assert tolerant is not plain  # node-02's device is reachable for it only
    by_node = {v.entry.did[2] + "@" + v.entry.did[1]: v.outcome for v in tolerant}
    assert len(by_node) == 2
    # the shared matrix gives each pod the answer its own analysis gives
    for name, got in (("plain", r_plain), ("admitted", r_admitted), ("tolerant", r_tolerant)):
        alone = explain_pod(snap, S37, NS, name, None, True)
        assert got.verdict == alone.verdict
        assert [f.message for f in got.findings] == [f.message for f in alone.findings]
