"""What an allocator dry-run of one pod found (analysis by analyze/pod/dryrun.py Analysis): per claim what it
would allocate on a node (ClaimPlacement), the nodes where every pending claim fits (NodeAllocation), the whole
run over the nodes the pod may use (DryRun), what the queue runs again (PodPlan, Skip), and each claim's requests
and device matrices (ClaimAnalysis)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kubectl_dra.analyze.devices.universe import Reachability

if TYPE_CHECKING:
    from kubectl_dra.analyze.allocator import AllocationError
    from kubectl_dra.analyze.pod.errors_met import ErrorsMet


@dataclass(frozen=True)
class ClaimPlacement:
    """What the dry-run would allocate for one claim on one node."""

    claim: str  # namespace/name
    results: list  # the allocation results, as the API's status.allocation.devices.results
    node_selector: dict | None

    def to_dict(self) -> dict:
        return {"claim": self.claim, "results": self.results, "nodeSelector": self.node_selector}


@dataclass(frozen=True)
class NodeAllocation:
    """A node on which every pending claim of the pod is allocatable now."""

    node: str
    claims: tuple[ClaimPlacement, ...]


@dataclass
class DryRun:
    """The allocator dry-run over the nodes the pod may use (filled in by Analysis.analyse_claims)."""

    usable: list[str]  # nodes the pod may use
    rejected_nodes: dict  # node -> why the pod may not use it
    allocatable: list[NodeAllocation] = field(default_factory=list)  # first MAX_ALLOCATABLE_NODES found
    failures: dict = field(default_factory=dict)  # node -> the scheduler's per-node message
    node_errors: dict = field(default_factory=dict)  # node -> the NodeFailure behind its message (1.35+)
    # Why the search found nothing, as it saw it (allocator/why.py): (node, SearchFailure, how many more nodes
    # ended alike) for the node where it got deepest, the first such node tried; one record, not one per node.
    why: tuple = ()
    error: AllocationError | None = None  # an error that aborts the scheduling attempt ...
    error_node: str | None = None  # ... and the node whose search raised it
    error_maybe: str = ""  # why the scheduler may not meet that error ("": it does; analyze/pod/errors_met.py)
    meet: "ErrorsMet | None" = None  # what decides whether the scheduler meets an error on a node (the queue's too)
    also_met: dict = field(default_factory=dict)  # node -> another error the scheduler may meet first (its message)
    tried_nodes: int = 0
    considered_nodes: int = 0
    capped: bool = False  # stopped early: more nodes may be allocatable (or the node budget ran out)
    # node -> NodeFit (analyze/pod/fit.py) for the allocatable nodes: NodeResourcesFit, which the scheduler runs on
    # each node beside DynamicResources. allocatable lists the nodes that fit first, then unknown, then rejected.
    fit: dict = field(default_factory=dict)
    # where NodeResourcesFit rejects every node the claims fit on: what DefaultPreemption does (preempt.Preemption);
    # the node it nominates is then first in allocatable
    preemption: object = None

    @property
    def error_decides(self) -> bool:
        """An error ends the attempt for certain, or may and the claims fit nowhere else: blocked either way."""
        return self.error is not None and not (self.error_maybe and self.allocatable)

    @property
    def allocatable_nodes(self) -> list[str]:
        return [x.node for x in self.allocatable]

    def _fit_state(self, node: str):
        nf = self.fit.get(node)
        return True if nf is None else nf.fits

    @property
    def placeable_nodes(self) -> list[str]:
        """The allocatable nodes that NodeResourcesFit does not reject (or that it was not asked about)."""
        return [x.node for x in self.allocatable if self._fit_state(x.node) is True]

    @property
    def fit_rejected(self) -> dict:
        return {n: f for n, f in self.fit.items() if f.fits is False}

    @property
    def fit_unknown(self) -> dict:
        return {n: f for n, f in self.fit.items() if f.fits is None}


@dataclass(frozen=True)
class PodPlan:
    """What the dry-run of one pod worked on, for the queue (analyze/queue/) to run it again against the allocations of
    the pods ahead. shape: equal for pods whose pending claims have the same specs and may use the same nodes (a
    Deployment's replicas): the same search gives them the same answer."""

    pending: tuple  # the pending claims, in the order the scheduler allocates them
    analyses: tuple  # ClaimAnalysis of every claim of the pod
    reach: Reachability
    shape: tuple
    dry: DryRun
    fit: object = None  # the pod's NodeResourcesFit (analyze/pod/fit.py Fit), or None
    skip: "Skip | None" = None  # a claim the scheduler does not allocate on some nodes

    def claims_on(self, node: str) -> list:
        """The pending claims the scheduler allocates on the node (all but a skipped one there)."""
        return claims_on(self.pending, self.skip, node)


@dataclass(frozen=True)
class Skip:
    """The claim for a pod's DRA-backed extended resources is not allocated on a node whose device plugin serves
    them (filterExtendedResources: the DynamicResources Filter allocates only the pod's own claims there, and
    NodeResourcesFit counts the resources against the node's allocatable)."""

    claim: dict
    nodes: frozenset  # names of the nodes that serve the resources through a device plugin


def claims_on(pending, skip: Skip | None, node: str) -> list:
    if skip is None or node not in skip.nodes:
        return list(pending)
    return [c for c in pending if c is not skip.claim]


@dataclass
class ClaimAnalysis:
    claim: dict
    pod_claim_name: str | None
    requests: list  # list[list[Request]]
    matrices: dict = field(default_factory=dict)  # request name -> list[DeviceVerdict]
    allocated: bool = False
    dry_run: ClaimPlacement | None = None  # what the dry-run picked for this claim on the first allocatable node
