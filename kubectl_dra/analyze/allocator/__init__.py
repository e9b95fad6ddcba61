"""A port of k8s.io/dynamic-resource-allocation/structured (the allocator kube-scheduler runs for one node), per
Kubernetes minor 1.34-1.38 and per allocator channel (stable, incubating, experimental); dra-facts.md §2 describes it.

The files follow upstream's (structured/internal/<channel>/):
  search.py       Allocator, the run of Allocate() for a node: validateDeviceRequest, allocateOne
  device.py       allocateDevice (1.34/1.35 and 1.36+ rule sets), counters and capacity bookkeeping
  device_checks.py  the checks allocateDevice runs per device: in use, isSelectable, selectorsMatch, capacity
  pools.py        GatherPools, pool validity, slice node reachability, DeviceTaintRules, optional node operations
  selection.py    isSelectable / selectorsMatch: CEL selectors through the Kubernetes CEL environment
  capacity.py     consumable_capacity.go: consumed amounts, request policies
  constraints.py  constraint.go: matchAttribute, distinctAttribute
  result.py       the allocation result and its node selector
  why.py          why a search found nothing: the deepest position it reached and the class of its rejections
  requests.py, state.py, checks.py, common.py: requests, AllocatedState, taints and attributes, shared types
Version and channel behaviour is read from Semantics (features.py) by named facts.

Everything works on raw API dicts (resource.k8s.io/v1 shape). Version differences that matter:
  * 1.34: pools are gathered per node only; an incomplete pool's devices are still used for ExactCount;
    an invalid pool is an error when the search reaches it; shared counters live in the device's own
    slice; every device taint (any effect) must be tolerated.
  * 1.35+: incomplete pools are skipped (after a scan for a newer generation), invalid pools are skipped
    and reported as "invalid resource pools were encountered" when nothing fits; counter sets are per
    pool; only NoSchedule/NoExecute taints matter.
  * 1.36+: pools sorted by driver/pool and slices by name (deterministic first fit); the next device
    slot of a request resumes after the previous pick (combinations instead of permutations).
Before 1.36 the pool order is Go map order (random): the map-ordered channels keep insertion order, one
order upstream can take, so the pick is one upstream could also have made.
"""

from kubectl_dra.analyze.allocator.capacity import CapacityNotRepresentable, capacity_fits, consumed_capacity
from kubectl_dra.analyze.allocator.checks import attribute_value, lookup_attribute, untolerated_taint
from kubectl_dra.analyze.allocator.common import AllocationError, ErrorKind, NodeFailure, device_id_str, obj_ref
from kubectl_dra.analyze.allocator.pools import (
    NODE_OPERATIONS_FEATURE,
    SliceIndex,
    apply_taint_rules,
    gather_pools,
    optional_node_operations_rejection,
    skips_node_operations,
    slice_spec,
)
from kubectl_dra.analyze.allocator.requests import Request, claim_requests
from kubectl_dra.analyze.allocator.result import AllocationResult
from kubectl_dra.analyze.allocator.search import Allocator
from kubectl_dra.analyze.allocator.selection import SelectorEvaluator, selector_expression, taint_rule_select
from kubectl_dra.analyze.allocator.state import AllocatedState

__all__ = [
    "NODE_OPERATIONS_FEATURE",
    "AllocatedState",
    "AllocationError",
    "NodeFailure",
    "AllocationResult",
    "Allocator",
    "CapacityNotRepresentable",
    "ErrorKind",
    "Request",
    "SelectorEvaluator",
    "apply_taint_rules",
    "attribute_value",
    "capacity_fits",
    "claim_requests",
    "consumed_capacity",
    "device_id_str",
    "SliceIndex",
    "gather_pools",
    "lookup_attribute",
    "obj_ref",
    "optional_node_operations_rejection",
    "selector_expression",
    "skips_node_operations",
    "slice_spec",
    "taint_rule_select",
    "untolerated_taint",
]
