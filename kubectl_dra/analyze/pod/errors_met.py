"""Whether the scheduler meets an error the dry-run meets on a node.

An Error status from any node's Filter ends kube-scheduler's attempt (findNodesThatPassFilters cancels the others,
pkg/scheduler/schedule_one.go). The dry-run tries the nodes where one may come first, so it meets every error the
scheduler can meet; the scheduler meets it for certain only where it filters that node for certain:

- Filter runs the plugins in order and stops at the first that rejects a node: NodeResourcesFit before
  DynamicResources. Where the fit on the node is unknown (the input lacks the pods bound there, or its allocatable),
  NodeResourcesFit may reject it first.
- It filters the nodes from a rotating start (nextStartNodeIndex) and stops once it has numFeasibleNodesToFind
  feasible ones: every node of a cluster of fewer than 100, else max(100, nodes x percentage / 100) with the
  percentage max(5, 50 - nodes / 125) at the default percentageOfNodesToScore (0; a profile may set another).
  When at least that many nodes may be feasible, whether the node that errs comes before them is undetermined.
- A pod nominated to a node (status.nominatedNodeName, after a preemption) is tried there first, and the others are
  filtered only when that node fails (an error there is only logged: the pass over every node meets it again).
Read in v1.34.3 and v1.37.2 (alike); the percentage is the scheduler's configuration, which no API object shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(num_all_nodes: int, percentage: int = 0) -> int:
    """numFeasibleNodesToFind: how many feasible nodes the scheduler looks for before it stops filtering."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


_UNKNOWN_FIT = {
    "pods": "the pods bound to it are not in the input",
    "allocatable": "the input has no status.allocatable for it",
    "node": "the input has no Node object for it",
}


@dataclass
class ErrorsMet:
    """What decides whether an error met on a node ends the real attempt, for one pod's dry-run.
    num_nodes: the nodes the scheduler filters (every node); feasible_bound: how many nodes may pass every filter
    (computed only when an error comes); nominated: the pod's status.nominatedNodeName."""

    num_nodes: int
    feasible_bound: Callable[[], int]
    nominated: str | None = None
    nominated_fits: bool | None = False  # the pod passes every filter there: True, False, None (may)

    def uncertainty(self, node: str, node_fit) -> str | None:
        """Why the scheduler may not meet an error of `node`: "" when it does, None when it does not (it never
        filters the node). node_fit: NodeResourcesFit on that node (analyze/pod/fit.py NodeFit), or None when not
        checked."""
        if node_fit is not None and node_fit.fits is False:
            return None  # NodeResourcesFit rejects the node first: DynamicResources never runs there
        if self.nominated and self.nominated != node and self.nominated_fits is not False:
            if self.nominated_fits:
                return None
            return (
                f"the pod is nominated to node {self.nominated}, which the scheduler tries first and may place it "
                "on without filtering the others"
            )
        if node_fit is not None and node_fit.fits is None:
            why = _UNKNOWN_FIT.get(node_fit.missing, "its free resources are unknown")
            return f"NodeResourcesFit runs first and may reject {node} ({why})"
        if self.num_nodes >= MIN_FEASIBLE_NODES_TO_FIND:
            want = num_feasible_nodes_to_find(self.num_nodes)
            bound = self.feasible_bound()
            if bound >= want:
                return (
                    f"it stops filtering at {want} feasible nodes of {self.num_nodes} (numFeasibleNodesToFind), up "
                    f"to {bound} may be feasible, and whether {node} comes before them depends on where it starts"
                )
        return ""
