"""analyze/reports/targets.py: what a command is asked about, found in the snapshot (the pods -l picks, the claim match
answers for, the devices filters), each a name that finds nothing an error that says what exists."""

from __future__ import annotations

import pytest
from builders import claim, pod, rslice

from kubectl_dra.analyze.reports.targets import check_device_filters, claim_to_match, selected_pods
from kubectl_dra.errors import DraError
from kubectl_dra.features import DEFAULT_VERSION, Semantics
from kubectl_dra.model.labels import parse_selector
from kubectl_dra.model.snapshot import Gap, Snapshot


def _pod(name, ns=None, **labels):
    return pod(name, (), ns=ns, labels=labels)


def _claim(name, ns):
    return claim(name, [], ns=ns)


def _slice(driver, pool, node):
    return rslice(f"{node}-{pool}", [], node, pool, driver)


def test_selected_pods_in_the_namespace_or_every_one_sorted():
    snap = Snapshot(pods=(_pod("b", "team-a", app="web"), _pod("a", None, app="web"), _pod("c", "team-b", app="web")))
    reqs = parse_selector("app=web")
    assert selected_pods(snap, reqs, "team-a", False) == [("team-a", "a"), ("team-a", "b")]
    assert selected_pods(snap, reqs, "team-a", True) == [("team-a", "a"), ("team-a", "b"), ("team-b", "c")]
    assert selected_pods(snap, parse_selector("app=db"), "team-a", True) == []


def test_claim_to_match_named_or_manifest():
    sem = Semantics.for_version(DEFAULT_VERSION, {}, "default")
    snap = Snapshot(claims=(_claim("c1", "team-a"),))
    assert claim_to_match(snap, sem, "team-a", "c1", None, None) is snap.claims[0]
    manifest = _claim("other", "team-a")
    assert claim_to_match(snap, sem, "team-a", None, manifest, "claim.yaml") is manifest
    with pytest.raises(DraError, match='"c1" not found in namespace "team-b" .*pass -n team-a'):
        claim_to_match(snap, sem, "team-b", "c1", None, None)
    with pytest.raises(DraError, match="pod.yaml: the pod requests no extended resource"):
        claim_to_match(snap, sem, "team-a", None, _pod("p", "team-a"), "pod.yaml")


def test_device_filters_name_something_that_exists():
    snap = Snapshot(
        nodes=({"metadata": {"name": "node-01"}},),
        classes=({"metadata": {"name": "gpu"}},),
        slices=(_slice("gpu.example.com", "pool-a", "node-01"),),
    )
    assert check_device_filters(snap, "node-01", None, "gpu", None) == (None, None)
    assert check_device_filters(snap, None, None, None, "gpu.example.com/pool-a") == ("gpu.example.com", "pool-a")
    with pytest.raises(DraError, match='node "node-1" not found \\(did you mean "node-01"\\?\\)'):
        check_device_filters(snap, "node-1", None, None, None)
    with pytest.raises(DraError, match='driver "gpu.example" not found'):
        check_device_filters(snap, None, "gpu.example", None, None)
    with pytest.raises(DraError, match='pool "pool-b" not found'):
        check_device_filters(snap, None, None, None, "pool-b")
    unread = Snapshot(gaps=(Gap("list", "resourceslices.resource.k8s.io", None, "forbidden", "forbidden"),))
    assert check_device_filters(unread, None, "any", None, "any") == ("any", "any")  # unchecked where unread
