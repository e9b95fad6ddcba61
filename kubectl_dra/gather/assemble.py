"""A live gather's objects and what it learnt about them, as the Snapshot the analysis reads: once after the lists
(gather/live.py) and again after each change a watch brings (gather/watch.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

from kubectl_dra.model.objects import snapshot_from_objects
from kubectl_dra.model.snapshot import Snapshot


def live_snapshot(objs: list[dict], meta: dict, checked: dict | None = None) -> Snapshot:
    """The snapshot of a live gather (and of each watch update): the objects, what could not be read, and when.
    checked: see snapshot_from_objects."""
    # A pod in two lists (the named one, the pending ones, the bound ones) is taken once, or a node counts it twice.
    # Bound in one of them, it is bound (a pod is never unbound): the other list read it before the binding, or its
    # watch has not delivered the change yet.
    seen: dict = {}  # (namespace, name) -> index in once
    once = []
    for o in objs:
        if o.get("kind") == "Pod":
            m = o.get("metadata") or {}
            key = (m.get("namespace"), m.get("name"))
            at = seen.get(key)
            if at is not None:
                kept = once[at]
                same = (kept.get("metadata") or {}).get("uid") == m.get("uid")  # (not a pod of the name made anew)
                if same and (o.get("spec") or {}).get("nodeName") and not (kept.get("spec") or {}).get("nodeName"):
                    once[at] = o
                continue
            seen[key] = len(once)
        once.append(o)
    snap = snapshot_from_objects(once, meta["namespace"], source="live", checked=checked)
    observed = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return replace(snap, observed_at=observed, **meta)
