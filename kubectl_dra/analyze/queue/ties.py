"""Pods compete, a preemption's tied nomination: each tied node dry-run.

The rule: where a pending pod preempts and DefaultPreemption's criteria tie several nodes (pickOneNodeForPreemption
compares the fewest PodDisruptionBudget violations, the lowest highest-priority victim, the lowest sum of
priorities, the fewest victims and the latest start; past those it takes the first candidate, in an order the API
does not show: pkg/scheduler/framework/preemption/preemption.go), the scheduler nominates one of them, any of them.
The queue's dry-run leaves that pod open (preempted.py). Here the whole queue is dry-run again once per tied node,
as if the scheduler had nominated it; a pod left open by the first dry-run is certain where every nomination gives
it a certain answer and the same outcome (it gets devices in each, or in none). The node and devices it gets are
named only where they are the same in every one. A pod certain in the first dry-run keeps its answer: the tie made
the preemptor an unknown for it already, which the rules answer only where it cannot matter.

Soundness rests on the tied nodes being every node the scheduler may nominate (preempted.py search_preemption
computes them as the criteria do) and on each dry-run being the one of that nomination. A dry-run that meets a tie
of its own (another preemptor's, or the same pod's at a retry) adds no answer: the pods stay as the first dry-run
left them. Cost: at most MAX_BRANCHES more dry-runs, and only for queues of at most MAX_ENTRIES pods, none of them
in a pod group (a group's state is shared between dry-runs)."""

from __future__ import annotations

import copy
from dataclasses import replace
from itertools import product

from kubectl_dra.analyze.queue.outcomes import Outcome

MAX_BRANCHES = 8  # dry-runs of the tied nominations, all tied pods' combinations together
MAX_ENTRIES = 256  # pending pods with DRA in the queue, past which no tie is tried


def with_ties(entries: list, run) -> object:
    """run(entries, forced) -> (Queue, ties) is one dry-run (simulate.py _simulate) with the nominations in forced
    (ref -> node); it changes the entries it is given. Returns the first dry-run's Queue, with the places that every
    tied nomination decides alike made certain."""
    pristine = [copy.copy(e) for e in entries] if len(entries) <= MAX_ENTRIES else None
    queue, ties = run(entries, {})
    if not ties or pristine is None or any(e.gang is not None for e in pristine):
        return queue
    refs = sorted(ties)
    combos = list(product(*(ties[r] for r in refs)))
    if len(combos) > MAX_BRANCHES:
        return queue
    branches = []
    for combo in combos:
        forced = dict(zip(refs, combo))
        q, more = run([copy.copy(e) for e in pristine], forced)
        if more:  # a tie the nominations above do not settle: this dry-run is not the scheduler's either
            return queue
        branches.append(q)
    return replace(queue, places=_merged(queue.places, branches, ties))


def _merged(places: dict, branches: list, ties: dict) -> dict:
    out = dict(places)
    tied = "; ".join(f"{r} on {' or '.join(ns)}" for r, ns in sorted(ties.items()))
    for ref, p in places.items():
        if p.certain:
            continue
        got = [q.places.get(ref) for q in branches]
        if any(x is None or not x.certain for x in got) or len({x.outcome for x in got}) != 1:
            continue
        first = got[0]
        if first.outcome not in (Outcome.FITS, Outcome.TAKEN):
            continue
        same = all((x.node, x.devices, x.exact) == (first.node, first.devices, first.exact) for x in got)
        if same:
            reason = f"{first.reason} (whichever node the tied preemption nominates: {tied})"
            out[ref] = replace(first, position=p.position, ahead=p.ahead, reason=reason)
        elif first.outcome == Outcome.FITS:
            if ref in ties:
                reason = (
                    f"it preempts pods of lower priority on {' or '.join(ties[ref])}, which DefaultPreemption's criteria "
                    "tie, and gets devices whichever one the scheduler nominates (each dry-run); which node and devices "
                    "depends on that choice"
                )
            else:
                reason = (
                    "gets devices whichever node a tied preemption nominates (DefaultPreemption's criteria tie "
                    f"{tied}: each dry-run); which node and devices depends on that choice"
                )
            out[ref] = replace(
                first,
                position=p.position,
                ahead=p.ahead,
                node=p.node,
                devices=(),
                claims=(),
                exact=False,
                reason=reason,
            )
        else:
            out[ref] = replace(
                first,
                position=p.position,
                ahead=p.ahead,
                node=None,
                devices=(),
                claims=(),
                exact=p.node is None,
                reason="whichever node a tied preemption nominates (DefaultPreemption's criteria tie "
                f"{tied}: each dry-run), the devices it could use, or the room on their nodes, are taken first",
            )
    return out
