"""Every field of the pinned k8s.io/api resource.k8s.io/v1 kinds, per minor, is modelled, ignored with a reason,
or makes verdicts undetermined (kubectl_dra/analyze/coverage.py). The field list comes from the Go types
themselves (`oracle --fields`, reflection over the JSON tags), so a new field in a new minor fails here first."""

from __future__ import annotations

import subprocess

import pytest

from kubectl_dra.analyze.coverage import IGNORED, MODELLED, UNMODELLED, normalize

from .oracle import oracle_path

pytestmark = pytest.mark.oracle

MINORS = ("1.34", "1.35", "1.36", "1.37")


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
