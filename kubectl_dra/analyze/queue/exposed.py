"""Whether a pod's search may meet an error once the pods ahead take devices (the queue agreement suite's seed 378).

The allocator stops at the first device that fits, so alone it may never look at a device on which the pod's claims
err: a selector that errs there (a CEL runtime error), a constraint attribute the 1.38 conversion cannot use, a
device that allocationMode All must take but a constraint refuses. Once a pod ahead takes the devices before it,
the search reaches that device and the whole attempt ends in an error (an Error status from any node's Filter ends
kube-scheduler's attempt), whatever other node had room. So the arguments that hold whatever the pods ahead take
(the count proof: more nodes than pods ahead; identical pods: the same count on each node in any order) do not hold
for such a pod; only a dry-run in the scheduler's own order does."""

from __future__ import annotations

from kubectl_dra.analyze.allocator.checks import UnsupportedAttribute, converted_value, lookup_attribute
from kubectl_dra.findings.stages import Stage


def may_err(plan, sem, cache) -> bool:
    """Whether the pod's pending claims have a device in their matrices on which their search errs (remembered per
    pod shape in cache, an Analysis's: pod/cache.py)."""
    hit = cache.may_err.get(plan.shape)
    if hit is None:
        hit = cache.may_err[plan.shape] = _may_err(plan, sem, cache)
    return hit


def _may_err(plan, sem, cache) -> bool:
    pending = {id(c) for c in plan.pending}
    for a in plan.analyses:
        if id(a.claim) not in pending:
            continue
        for m in a.matrices.values():
            if _errs_in(m, plan.reach, cache):
                return True
        constraints = ((a.claim.get("spec") or {}).get("devices") or {}).get("constraints") or []
        if not constraints:
            continue
        if any(r.mode == "All" for alts in a.requests for r in alts):
            return True  # a device it must take that a constraint refuses: an error, not a rejection
        if sem.behaviour.attributes_converted_once and _unusable_attribute(a, constraints):
            return True
    return False


def _errs_in(m: list, reach, cache) -> bool:
    """Whether a selector errs on a device of the matrix that a usable node reaches (once per matrix: pods of one
    shape share it, and its node set)."""
    hit = cache.errs_in.get(m)
    if hit is None:
        hit = cache.errs_in.put(m, any(v.stage is Stage.CEL_ERROR and reach.nodes_for(v.entry) for v in m))
    return hit


def _unusable_attribute(a, constraints: list) -> bool:
    """1.38: a device of the claim's matrices whose value of a constrained attribute the conversion cannot use
    (constraints.py _Converted raises UnsupportedAttribute, which aborts the allocation)."""
    wanted = []
    for c in constraints:
        if c.get("matchAttribute"):
            wanted.append((c["matchAttribute"], False))
        if c.get("distinctAttribute"):
            wanted.append((c["distinctAttribute"], True))
    for m in a.matrices.values():
        for v in m:
            if v.outcome == "rejected":  # (the constraint is checked on a device that passed every other check)
                continue
            d, driver = v.entry.device, v.entry.did[0]
            for name, as_sets in wanted:
                attr = lookup_attribute(d, driver, name)
                if attr is None:
                    continue
                try:
                    converted_value(attr, as_sets)
                except UnsupportedAttribute:
                    return True
    return False
