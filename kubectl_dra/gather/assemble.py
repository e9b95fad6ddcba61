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
    seen: set = set()
    once = []
    for o in objs:  # a pod in two lists (the named one, the bound ones): once, or a node counts it twice
        if o.get("kind") == "Pod":
            m = o.get("metadata") or {}
            key = (m.get("namespace"), m.get("name"))
            if key in seen:
                continue
            seen.add(key)
        once.append(o)
    snap = snapshot_from_objects(once, meta["namespace"], source="live", checked=checked)
    observed = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return replace(snap, observed_at=observed, **meta)
