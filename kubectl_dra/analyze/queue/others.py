"""Pending pods that use no DRA, in the queue's node-resource check: kube-scheduler takes them from the same queue,
and one placed first on the node where a DRA pod's devices are takes cpu, memory and a pod slot there. Their own
placement is not dry-run (no devices decide it); what is used is a bound: every one that may be ahead of a DRA pod
(higher priority, or the same priority and created no later: the order the scheduler's PrioritySort gives,
backoff aside; a gated pod, answered as if its gates were gone, after every pod without gates, as the queue's own
order puts it) and may use its node (nodeSelector, affinity, taints) counts as if placed there. Where that leaves
no room, the DRA pod's answer is open (rules.py), never "fits"."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from kubectl_dra.analyze.queue.outcomes import queue_key
from kubectl_dra.model.meta import meta_of, name_of, ns_of, priority_of


@dataclass
class _Group:
    """The pending non-DRA pods that may use one set of nodes, in queue order, with prefix sums."""

    names: frozenset
    keys: list = field(default_factory=list)  # queue_key() per pod, sorted
    refs: list = field(default_factory=list)
    sums: list = field(default_factory=lambda: [({}, 0)])  # (requests, pods) of the first i
    pods: list = field(default_factory=list)  # (pod, its Fit) per pod, in the same order (alternatives.py)


class Others:
    """The pending pods of the snapshot that use no DRA."""

    def __init__(self, groups: list[_Group]):
        self.groups = groups

    def ahead(self, key: tuple, node: str) -> tuple[dict, int]:
        """(requests, pods) of those that may be ahead of a pod of this rank and may use node."""
        total: dict = {}
        count = 0
        for g in self.groups:
            if node not in g.names:
                continue
            req, c = g.sums[bisect_right(g.keys, key)]
            for k, v in req.items():
                total[k] = total.get(k, 0) + v
            count += c
        return total, count

    def count_ahead(self, key: tuple) -> int:
        """How many may be ahead, whatever node (each of them lands on one node at most)."""
        return sum(bisect_right(g.keys, key) for g in self.groups)

    def names_ahead(self, key: tuple, node: str, limit: int = 3) -> list[str]:
        out: list[str] = []
        for g in self.groups:
            if node in g.names:
                out.extend(reversed(g.refs[: bisect_right(g.keys, key)][-limit:]))
        return out[:limit]


def others_of(snap, base, pods: list[dict], fit_of) -> Others:
    """pods: the pending pods that use no DRA; base: the Analysis (its usable_nodes, one pass over the nodes per
    distinct set of node constraints); fit_of(pod): its Fit (None: no request known, left out)."""
    from kubectl_dra.analyze.pod.dryrun import constraints_key

    by_key: dict = {}
    groups: dict = {}
    rows = []
    for p in pods:
        fit = fit_of(p)
        if fit is None:
            continue
        ck = constraints_key(p)
        if ck not in by_key:
            usable = base.usable_nodes(p, [])[0]
            by_key[ck] = frozenset(name_of(n) for n in usable)
        names = by_key[ck]
        if not names:
            continue
        gated = bool((p.get("spec") or {}).get("schedulingGates"))
        rows.append((queue_key(gated, priority_of(p), str(meta_of(p).get("creationTimestamp") or "")), names, fit, p))
    rows.sort(key=lambda r: r[0])
    for key, names, fit, p in rows:
        request = fit.request
        g = groups.get(names)
        if g is None:
            g = groups[names] = _Group(names)
        last, count = g.sums[-1]
        req = dict(last)
        for k, v in request.items():
            req[k] = req.get(k, 0) + v
        g.keys.append(key)
        g.refs.append(f"{ns_of(p)}/{name_of(p)}")
        g.pods.append((p, fit))
        g.sums.append((req, count + 1))
    return Others(list(groups.values()))
