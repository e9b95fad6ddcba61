"""Time as the API writes it (RFC 3339) and as kubectl prints an age (HumanDuration), and the time an answer is
as of: now for a live snapshot, a dump's newest timestamp for a file (reference_time)."""

from __future__ import annotations

from datetime import datetime, timezone

from kubectl_dra.model.meta import meta_of
from kubectl_dra.model.snapshot import Snapshot


def parse_time(text) -> datetime | None:
    """RFC 3339 as the API writes it (seconds or microseconds, Z)."""
    if not isinstance(text, str) or not text.endswith("Z"):
        return None
    try:
        return datetime.fromisoformat(text[:-1]).replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def human_age(seconds: float) -> str:
    """kubectl's HumanDuration (k8s.io/apimachinery/pkg/util/duration), as in its AGE column."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"  # up to 2 s of clock skew counts as now
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = s // 3600
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    if h < 24 * 8:
        return f"{h // 24}d{h % 24}h" if h % 24 else f"{h // 24}d"
    if h < 24 * 365 * 2:
        return f"{h // 24}d"
    if h < 24 * 365 * 8:
        d = h // 24
        return f"{d // 365}y{d % 365}d" if d % 365 else f"{d // 365}y"
    return f"{h // 24 // 365}y"


def reference_time(snap: Snapshot) -> datetime:
    """Now, for a live snapshot; for a dump, its newest timestamp (ages are as of the dump, not of today)."""
    if snap.observed_at:
        t = parse_time(snap.observed_at)
        if t is not None:
            return t
    stamps = [meta_of(o).get("creationTimestamp") for g in (snap.pods, snap.claims, snap.workloads) for o in g]
    stamps += [ev.get("time") for ev in snap.events]  # normalised events (model/normalize.py)
    times = [t for t in map(parse_time, stamps) if t is not None]
    return max(times) if times else datetime.now(timezone.utc)
