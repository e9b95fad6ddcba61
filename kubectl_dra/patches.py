"""Allocator and scheduler bugs fixed in patch releases that change a verdict: the data, in one place.

kubectl-dra ports the newest patch of each minor. A cluster on an older patch runs the bug; when the API server
reports such a patch (the scheduler is assumed to run the same one) and the claim being explained is in the
situation the bug needs, analyze/pod/patches.py says what the older scheduler may do instead and which patch
fixes it (DRA020). Each entry names the upstream pull requests; the first fixed patch is the first
k8s.io/dynamic-resource-allocation (or k8s.io/kubernetes) tag of that minor whose code has the fix, read from the
tags themselves (docs/fidelity.md, "Patch releases")."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PatchFix:
    id: str
    minor: tuple[int, int]
    fixed_in: int  # the first patch of the minor with the fix
    prs: tuple[str, ...]  # kubernetes/kubernetes pull requests: the fix, and its cherry-pick to the minor
    older: str  # what the older scheduler may do instead (completes "the scheduler may ...")
    when: str  # the situation it needs: a key of analyze/pod/patches.CONDITIONS

    @property
    def fixed_version(self) -> str:
        return f"v{self.minor[0]}.{self.minor[1]}.{self.fixed_in}"


_ALL_POOL = "crash in Filter (an allocationMode All request whose devices consume shared counters: nil pool)"
FIXES: tuple[PatchFix, ...] = (
    PatchFix("alloc-mode-all-missing-pool", (1, 35), 6, ("#138885", "#138989"), _ALL_POOL, "all-mode-counters"),
    PatchFix("alloc-mode-all-missing-pool", (1, 36), 2, ("#138885", "#138988"), _ALL_POOL, "all-mode-counters"),
    PatchFix(
        "shared-device-counters-ignored",
        (1, 36),
        2,
        ("#139040", "#139211"),
        "treat the counters of a device allocated only as shares as free, and allocate another device of that "
        "counter set (over-committing it) where this analysis says the counters are used up",
        "shared-counters",
    ),
    PatchFix(
        "counter-reservation-leak-on-reject",
        (1, 36),
        3,
        ("#140431", "#140663"),
        "keep the counters of candidates it rejected (a taint, a constraint, capacity) or backtracked from, and "
        "report the claim not allocatable, or pick another device or subrequest, although it fits",
        "candidates-consume-counters",
    ),
    PatchFix(
        "counter-cache-keyed-by-pool-name",
        (1, 36),
        4,
        ("#140435", "#140504"),
        "check the devices of one driver's pool against the counters of another driver's pool of the same name, "
        "wrongly rejecting or accepting them",
        "pool-name-shared-by-drivers",
    ),
    *(
        PatchFix(
            "device-limit-int-overflow",
            minor,
            fixed,
            ("#141307", pick),
            "crash, or report the claim not allocatable, instead of the claim-limit error (request counts whose "
            "sum overflows int64)",
            "count-overflow",
        )
        for minor, fixed, pick in (
            ((1, 34), 12, "#141925"),
            ((1, 35), 9, "#141924"),
            ((1, 36), 5, "#141923"),
            ((1, 37), 1, "#141922"),
        )
    ),
    PatchFix(
        "taint-rule-nil-selector-matches-all",
        (1, 37),
        1,
        ("#141648", "#141998"),
        "taint every device with a DeviceTaintRule that has no deviceSelector, so that no request that does not "
        "tolerate it gets a device anywhere",
        "taint-rule-without-selector",
    ),
)


def server_patch(git_version: str | None) -> tuple[int, int, int] | None:
    """'v1.36.2', 'v1.36.2-gke.1', '1.36.2+k3s1' -> (1, 36, 2); None when there is no patch number."""
    if not git_version:
        return None
    core = str(git_version).strip().lstrip("v")
    for sep in ("-", "+"):
        core = core.split(sep, 1)[0]
    parts = core.split(".")
    if len(parts) < 3:
        return None
    try:
        return int(parts[0]), int(parts[1]), int(parts[2])
    except ValueError:
        return None


def missing_fixes(git_version: str | None) -> list[PatchFix]:
    """The fixes of the server's minor that its patch predates."""
    v = server_patch(git_version)
    if v is None:
        return []
    return [f for f in FIXES if f.minor == v[:2] and v[2] < f.fixed_in]
