"""Pure analysis: Snapshot in, Report out. No I/O, no click, no rich, no kubernetes client."""

from __future__ import annotations


def preload(sem):
    """Load what an analysis under sem needs first: its modules and this version's CEL engine (cel-cpp and its
    environment). A live gather runs this while its lists are in flight, so the loading overlaps the network
    instead of following it; nothing else changes (the engine is shared per version, see cel/_engine.py).

    Returns the function (kind, items) that the gather hands each page of a list to as it arrives: it computes
    what the analysis would compute first for each object by itself, into the caches the analysis reads (the
    attribute conversion verdict of each device, what pool gathering asks of each slice, pools.slice_digest). The
    analysis's results are the same with or without it; only their cost moves into the wait for the lists."""
    import kubectl_dra.analyze.reports.explain  # noqa: F401  (imports the analysis it runs)
    from kubectl_dra.analyze.allocator.pools import slice_digest, slice_spec
    from kubectl_dra.analyze.allocator.selection import SelectorEvaluator

    env = SelectorEvaluator(sem).env
    env.engine
    room = True  # until the conversion cache is full

    def warm(kind: str, items: list) -> None:
        nonlocal room
        if kind != "ResourceSlice":
            return
        for s in items:
            slice_digest(s)
            if room:
                room = env.prepare_conversions(slice_spec(s).get("devices") or ())

    return warm
