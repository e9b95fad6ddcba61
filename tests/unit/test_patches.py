"""The patch-level table: which fixes a server's patch predates, parsed from its gitVersion."""

from __future__ import annotations

import pytest

from kubectl_dra.analyze.pod.patches import CONDITIONS
from kubectl_dra.patches import FIXES, missing_fixes, server_patch


@pytest.mark.parametrize(
    "text,want",
    [
        ("v1.36.2", (1, 36, 2)),
        ("v1.36.2-gke.1200", (1, 36, 2)),
        ("1.37.0+k3s1", (1, 37, 0)),
        ("v1.36", None),
        ("", None),
        (None, None),
        ("v1.x.2", None),
    ],
)
def test_server_patch(text, want):
    assert server_patch(text) == want


def test_missing_fixes_by_patch():
    ids = lambda v: sorted({f.id for f in missing_fixes(v)})  # noqa: E731
    assert ids("v1.36.1") == [
        "alloc-mode-all-missing-pool",
        "counter-cache-keyed-by-pool-name",
        "counter-reservation-leak-on-reject",
        "device-limit-int-overflow",
        "shared-device-counters-ignored",
    ]
    assert ids("v1.36.3") == ["counter-cache-keyed-by-pool-name", "device-limit-int-overflow"]
    assert ids("v1.36.6") == [] and ids("v1.37.2") == []
    assert ids("v1.37.0") == ["device-limit-int-overflow", "taint-rule-nil-selector-matches-all"]
    assert ids("v1.35.8") == ["device-limit-int-overflow"] and ids("v1.34.11") == ["device-limit-int-overflow"]
    assert ids("v1.38.0") == []


def test_every_entry_has_a_condition_and_pull_requests():
    for f in FIXES:
        assert f.when in CONDITIONS and f.prs and all(p.startswith("#") for p in f.prs), f
        assert f.fixed_version == f"v{f.minor[0]}.{f.minor[1]}.{f.fixed_in}"
