"""Pods compete, step 2b: the scheduler retries a pod whose attempt errs. An Error status (a CEL runtime error, a
constraint the allocator cannot check) sends the pod to the backoff queue, and it is tried again after 1 to 10
seconds, again and again, each time against the devices taken by then. An error is not monotonic: the allocator
skips a device in use before it evaluates selectors on it, so once the pods behind take the device the search errs
on, a retry may no longer err and get devices.

After the dry-run in queue order (simulate.py), each pod whose attempt errs at its turn is tried again on the state
after each later placement that takes a device it could use or errs on, until a retry does not err. Where one gets
devices, the pod's own answer cannot be blocked (it runs after a retry, when the retry comes is not certain) and the
pods behind that placement that could use the same devices are no longer certain: the retry may come before them."""

from __future__ import annotations

from dataclasses import dataclass, replace

from kubectl_dra.analyze.allocator.common import device_id_str


@dataclass(frozen=True)
class Retry:
    """A retry of an erring pod that gets devices: after `after` (the Entry whose placement lets it) is placed."""

    after: object
    node: str
    devices: tuple


def retries(fresh, ordered: list, shapes) -> dict:
    """Entry ref -> Retry, for the pods whose attempt errs (or may) at their turn (Entry.erred) and a later retry of which
    gets devices. fresh(): a new simulation (simulate.py _Sim) over the same base, which the placements of the
    dry-run are added to again in order. Costs one search per erring pod per later placement in its reach."""
    waiting = [e for e in ordered if e.erred]
    out: dict = {}
    if not waiting:
        return out
    replay = fresh()
    for q in ordered:
        if q.node is None or q.follows is not None:
            continue  # not placed, or placed with the pod whose claims it shares: nothing more taken
        replay.take(q)
        for e in list(waiting):
            if q.index <= e.index:
                continue  # placed before its turn: its attempt at its turn saw it
            keys = shapes.keys[e.plan.shape]
            touches = any(d in keys or ("counters", *d[:2]) in keys for d in q.takes)
            # (a node whose cpu the placement fills is not filtered for the pod: its error there is not met)
            if not touches and not (q.plan.fit is not None and e.plan.fit is not None and q.node in e.plan.reach.names):
                continue
            probe = replace(e, node=None, error=None, erred=None, choices=0, takes=(), allocs=(), crowded=None)
            found = replay.search(probe, want_choices=False)
            if probe.erred:
                continue  # it errs again (or may): the next placement may change that
            waiting.remove(e)
            if found is not None:
                n, res = found
                devices = tuple(
                    (x.get("driver", ""), x.get("pool", ""), x.get("device", "")) for r in res for x in r.results
                )
                out[e.ref] = Retry(q, n["metadata"]["name"], devices)
        if not waiting:
            break
    return out


def retry_reason(e, r: Retry) -> str:
    """The place of a pod whose attempt errs at its turn and a retry of which gets devices."""
    got = ", ".join(device_id_str(d) for d in r.devices[:3]) + (
        f" and {len(r.devices) - 3} more" if len(r.devices) > 3 else ""
    )
    why, certain = e.erred
    return (
        f"its attempt {'errs' if certain else 'may err'} at its turn in the estimated order ({why}), and the "
        f"scheduler retries it: once {r.after.ref}, behind it, is placed, a retry no longer errs and gets "
        f"{got or 'its claims'} on node {r.node}; when the retry comes is not certain"
    )


def behind_retry_reason(e, r: Retry) -> str:
    """The place of a pod behind the placement after which an erring pod's retry gets devices it could use."""
    return (
        f"the scheduler retries {e.ref}, whose attempt {'errs' if e.erred[1] else 'may err'} at its turn: once "
        f"{r.after.ref} is placed a retry no longer errs and takes devices this pod could use, and it may come "
        "before this pod"
    )
