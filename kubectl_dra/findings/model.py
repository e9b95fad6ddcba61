"""Finding, Verdict and Report: what analysis returns and every renderer reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubectl_dra.findings.registry import REGISTRY

SCHEMA_VERSION = "kubectl-dra/v1alpha1"
PIECES = ("claim", "class", "device", "node", "driver")


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    evidence: dict = field(default_factory=dict)
    subject: dict = field(default_factory=dict)
    hint_override: str | None = None

    @property
    def rule(self):
        return REGISTRY[self.code]

    @property
    def name(self) -> str:
        return self.rule.name

    @property
    def severity(self) -> str:
        return self.rule.severity

    @property
    def blocking(self) -> bool:
        return self.rule.blocking

    @property
    def missing(self) -> str | None:
        return self.rule.missing

    @property
    def hint(self) -> str:
        return self.hint_override or self.rule.hint

    def to_dict(self) -> dict:
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "blocking": self.blocking,
            "missing": self.missing,
            "message": self.message,
            "hint": self.hint,
            "subject": self.subject,
            "evidence": self.evidence,
            "docs": f"docs/codes/{self.code}.md",
        }


def make(code: str, message: str, *, hint: str | None = None, subject: dict | None = None, **evidence: Any) -> Finding:
    if code not in REGISTRY:
        raise KeyError(f"unregistered finding code {code}")
    return Finding(code, message, evidence, subject or {}, hint)


def dedupe(findings: list[Finding]) -> list[Finding]:
    """The findings in order, each (code, message) once."""
    seen, out = set(), []
    for f in findings:
        key = (f.code, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


@dataclass(frozen=True)
class Verdict:
    blocked: bool
    missing: str | None
    summary: str
    determined: bool = True  # False: a missing permission or API left the answer open (exit 2)
    # where the summary is the dry-run's "claims allocatable now on node X": X, and what the summary says after
    # those words (a caveat, the assumed version); the queue says where the pods ahead leave the pod from these,
    # never from the text. Not in to_dict.
    now_on: str | None = field(default=None, compare=False)
    now_rest: str = field(default="", compare=False)

    def to_dict(self) -> dict:
        return {
            "blocked": self.blocked,
            "missing": self.missing,
            "summary": self.summary,
            "determined": self.determined,
        }


# Findings that leave the verdict open: a disagreement with the scheduler, a missing permission, a selector the engine cannot evaluate
# exactly, a search that ran out of budget, an upstream allocator that would crash.
UNDETERMINED = frozenset(
    {
        "DRA005",
        "DRA016",
        "DRA017",
        "DRA018",
        "DRA019",
        "DRA020",
        "DRA022",
        "DRA103",
        "DRA104",
        "DRA229",
        "DRA303",
        "DRA304",
        "DRA506",
        "DRA508",
        "DRA414",
        "DRA415",
        "DRA431",
        "DRA436",
    }
)
# Of those, the ones that leave even a blocked verdict open: the block itself may be wrong (DRA016 only when the
# block is a device-level one, which is what it can change; DRA017, a gate skew, always; DRA431, the queue's
# undetermined place, only on a device-level block: of a pod whose attempt errs alone, which the pods placed before
# its attempt, or before a retry, may keep from meeting the error).
OPENS_BLOCKED = frozenset({"DRA005", "DRA016", "DRA017", "DRA431"})


def now_head(node: str) -> str:
    """The words an OK verdict begins with when the dry-run finds the claims allocatable now on node."""
    return f"claims allocatable now on node {node}"


def verdict_from(findings: list[Finding], ok_summary: str, now_on: str | None = None) -> Verdict:
    """now_on: the node ok_summary says the claims are allocatable on now (it begins with now_head(now_on))."""
    blocking = [f for f in findings if f.blocking]
    if not blocking:
        open_ = [f for f in findings if f.code in UNDETERMINED]
        if open_:
            return Verdict(False, None, open_[0].message, determined=False)
        if now_on is not None:
            return Verdict(False, None, ok_summary, now_on=now_on, now_rest=ok_summary[len(now_head(now_on)) :])
        return Verdict(False, None, ok_summary)
    # What holds the pod before any piece is looked at (scheduling gates) comes first, then the pieces in order.
    order = {p: i for i, p in enumerate(PIECES)}
    # a finding said behind another (evidence "behind": the devices taken where free ones are on unusable nodes)
    # is not the verdict's reason while that one stands
    ahead = [f for f in blocking if not f.evidence.get("behind")] or blocking
    first = min(ahead, key=lambda f: order.get(f.missing, -1) if f.missing else -1)
    # A disagreement with the scheduler leaves even a blocked verdict open: one of the two is wrong.
    disagree = next(
        (
            f
            for f in findings
            if f.code in OPENS_BLOCKED
            and (
                f.code in ("DRA005", "DRA017")
                or first.missing == "device"
                or f.evidence.get("preemption")
                or f.evidence.get("nodealloc")
            )
        ),
        None,
    )
    if disagree is not None:
        return Verdict(True, first.missing, disagree.message, determined=False)
    return Verdict(True, first.missing, first.message)


@dataclass(frozen=True)
class Report:
    """kind is "Diagnosis" (explain) or "MatchResult" (match); body holds the kind's own keys."""

    kind: str
    findings: tuple
    body: dict
    semantics: dict
    verdict: Verdict | None = None

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"apiVersion": SCHEMA_VERSION, "kind": self.kind}
        if self.verdict is not None:
            out["verdict"] = self.verdict.to_dict()
        out.update(self.body)
        out["findings"] = [f.to_dict() for f in self.findings]
        out["semantics"] = self.semantics
        return out

    @property
    def determined(self) -> bool:
        if self.kind == "MatchResult":
            return bool(self.body.get("determined", True))
        return self.verdict is None or self.verdict.determined

    @property
    def summary(self) -> str:
        """One line for stderr when the answer stays open."""
        if self.verdict is not None:
            return self.verdict.summary
        return next((f.message for f in self.findings if f.code in UNDETERMINED), "undetermined")

    @property
    def blocked(self) -> bool:
        if self.kind == "MatchResult":
            return not self.body.get("satisfiable", False)
        return bool(self.verdict and self.verdict.blocked)
