"""Every field of the pinned k8s.io/api resource.k8s.io/v1 kinds, per minor, is modelled, ignored with a reason,
or makes verdicts undetermined (kubectl_dra/analyze/pod/coverage.py). The field list comes from the Go types
themselves (`oracle --fields`, reflection over the JSON tags), so a new field in a new minor fails here first."""

from __future__ import annotations

import subprocess

import pytest

from kubectl_dra.analyze.pod.coverage import IGNORED, MODELLED, UNMODELLED, normalize

from .oracle import oracle_path

pytestmark = pytest.mark.oracle

MINORS = ("1.34", "1.35", "1.36", "1.37", "1.38")


def api_fields(minor: str) -> set[str]:
    out = subprocess.run([str(oracle_path(minor)), "--fields"], capture_output=True, text=True, check=True).stdout
    return {normalize(line.strip()) for line in out.splitlines() if line.strip()}


@pytest.mark.parametrize("minor", MINORS)
def test_every_api_field_is_classified(minor):
    fields = api_fields(minor)
    unclassified = sorted(f for f in fields if f not in MODELLED and f not in IGNORED and f not in UNMODELLED)
    assert not unclassified, f"fields of k8s.io/api {minor} that coverage.py does not classify: {unclassified}"


def test_the_classes_are_disjoint_and_name_only_real_fields():
    assert not (MODELLED & set(IGNORED)) and not (MODELLED & set(UNMODELLED)) and not (set(IGNORED) & set(UNMODELLED))
    every = set().union(*(api_fields(m) for m in MINORS))
    stale = sorted(f for f in (MODELLED | set(IGNORED) | set(UNMODELLED)) if f not in every)
    assert not stale, f"coverage.py names fields that no supported minor has: {stale}"


# Modelled fields that Allocate() does not read, so the generated scenarios need not set them (each with why).
NOT_ALLOCATOR_INPUT = {
    "DeviceClass.spec.extendedResourceName": "the scheduler plugin's extended-resource mapping (analyze/pod/extended.py)",
    "ResourceClaim.spec.devices.config[]": "copied into the allocation result's config, which the comparison leaves out",
    "ResourceClaim.status.allocation.allocationTimestamp": "bookkeeping of an allocated claim",
    "ResourceClaim.status.allocation.nodeSelector": "an allocated claim counts by its devices only",
    "ResourceClaim.status.allocation.devices.results[].bindingConditions[]": "read by binding (analyze/pod/binding.py)",
    "ResourceClaim.status.allocation.devices.results[].bindingFailureConditions[]": "read by binding",
    "ResourceClaim.status.allocation.devices.results[].skipNodeOperations[]": "read by the driver piece "
    "(analyze/pod/kubelet.py: which plugins the kubelet calls)",
    "ResourceClaim.status.devices[]": "device status after allocation (analyze/pod/health.py, binding.py)",
    "ResourceClaim.status.reservedFor[]": "consumers of a claim (analyze/pod/claims.py, podgroup.py)",
    "ResourceSlice.spec.devices[].nodeAllocatableResources{}": "what a device adds to the pod's node fit "
    "(analyze/pod/nodealloc.py; upstream's cases in tests/unit/test_nodealloc.py, tests/e2e/test_e2e_nodealloc.py)",
}


def _concrete_paths(obj, prefix: str, out: set) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            _concrete_paths(v, f"{prefix}.{k}" if prefix else k, out)
    elif isinstance(obj, list):
        for x in obj:
            _concrete_paths(x, prefix + "[]", out)
    else:
        out.add(prefix)


@pytest.mark.parametrize("minor", MINORS)
def test_the_generator_sets_every_modelled_field_the_allocator_reads(minor):
    """Issue 11: a modelled field the generated scenarios never set is a field the fidelity suite cannot see.
    A new field of a new minor fails test_every_api_field_is_classified first, then this once it is modelled."""
    import re

    from . import generator

    kinds = {"deviceClasses": "DeviceClass", "claims": "ResourceClaim", "allocatedClaims": "ResourceClaim"}
    kinds["slices"] = "ResourceSlice"
    got: set[str] = set()
    for i in range(2000):
        s = generator.generate(minor, "coverage", i)
        for key, kind in kinds.items():
            for o in s.get(key) or []:
                p: set[str] = set()
                _concrete_paths({k: v for k, v in o.items() if k in ("spec", "status")}, "", p)
                got |= {f"{kind}.{x}" for x in p}
    never = []
    for f in sorted(x for x in api_fields(minor) if x in MODELLED):
        if any(f.startswith(prefix) for prefix in NOT_ALLOCATOR_INPUT):
            continue
        rx = re.compile("^" + re.escape(f).replace(r"\{\}", r"\.[^.\[]+") + "$")
        if not any(rx.match(g) for g in got):
            never.append(f)
    assert not never, f"modelled fields of {minor} that no generated scenario sets: {never}"
