"""Why a search found no allocation on a node, as the search itself saw it.

Upstream's allocateOne walks the positions (claim, request, device slot) depth first and backtracks; when Allocate
returns nil, the deepest position the walk ever reached is where it ran out of candidates first: every device it
looked at there, in every visit, was rejected. The search records that position and, per rejection class, how
many device visits it rejected there; the class of the failure is read from those counts (REASONS, in order of
precedence). The recording costs one comparison per allocateOne call and one counter increment per rejected device
visit (at the deepest position only), so the search keeps its speed.

The classes, for a device visit at the deepest position:
  distinct      the device is already taken by an earlier request (or an earlier slot of the same request) of the
                claims being allocated; from 1.36 also the devices a later slot does not look at again (it resumes
                after the previous slot's pick)
  constraint    a matchAttribute / distinctAttribute constraint of the claim rejects it
  counters      the shared counters it consumes are used up (partitionable devices)
  compatibility its counter consumption's compatibility groups do not go with those of the devices already on
                that counter set (DRADeviceCompatibilityGroups, 1.37+)
  capacity      its consumable capacity left is not enough for the request
  no-candidate  anything else: selectors, class, node, taints, allocated to a claim outside this search, features
"""

from __future__ import annotations

from dataclasses import dataclass, field

DISTINCT, CONSTRAINT, COUNTERS, CAPACITY, NO_CANDIDATE, COMPATIBILITY = range(6)
NAMES = ("distinct", "constraint", "counters", "capacity", "no-candidate", "compatibility")
# Precedence when several classes rejected devices at the deepest position: a constraint, counters or capacity
# that turned away a device the request could otherwise use explains more than the devices the earlier requests
# hold (which every later request sees), and both more than devices that never were candidates.
PRECEDENCE = (CONSTRAINT, COMPATIBILITY, COUNTERS, CAPACITY, DISTINCT, NO_CANDIDATE)
MAX_EXAMPLES = 3


@dataclass(slots=True)
class SearchFailure:
    """The deepest position a failed search reached and why its device visits there were rejected."""

    claim: int  # index into the claims given to Allocate
    request: int  # index of the request within the claim
    slot: int  # which device of the request (0: its first)
    sub: int = -1  # the (last) subrequest tried there, -1 without subrequests
    counts: list = field(default_factory=lambda: [0] * len(NAMES))
    skipped: bool = False  # 1.36+: a later slot resumes after the previous pick (those devices count as distinct)
    # up to MAX_EXAMPLES (device ID, "claim-index/request name" of the holder) of devices taken by earlier requests
    taken: list = field(default_factory=list)
    constraint: int | None = None  # index of the first constraint that rejected a device there
    # filled in by the search at the end: names for the findings
    claim_ref: str = ""
    request_name: str = ""

    @property
    def reason(self) -> str:
        counts = list(self.counts)
        if self.skipped:
            counts[DISTINCT] += 1
        for k in PRECEDENCE:
            if counts[k]:
                return NAMES[k]
        return NAMES[NO_CANDIDATE]

    @property
    def classes(self) -> dict:
        """The classes seen there (skipped devices counted as one distinct visit)."""
        out = {NAMES[k]: n for k, n in enumerate(self.counts) if n}
        if self.skipped:
            out["distinct"] = out.get("distinct", 0) + 1
        return out

    def depth(self) -> tuple:
        return self.claim, self.request, self.slot

    def to_dict(self) -> dict:
        return {
            "claim": self.claim,
            "request": self.request,
            "subRequest": self.sub,
            "slot": self.slot,
            "reason": self.reason,
            "classes": self.classes,
        }
