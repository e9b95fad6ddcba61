"""Pure analysis: Snapshot in, Report out. No I/O, no click, no rich, no kubernetes client."""

from __future__ import annotations


def preload(sem) -> None:
    """Load what an analysis under sem needs first: its modules and this version's CEL engine (cel-cpp and its
    environment). A live gather runs this while its lists are in flight, so the loading overlaps the network
    instead of following it; nothing else changes (the engine is shared per version, see cel/_engine.py)."""
    import kubectl_dra.analyze.explain  # noqa: F401  (imports the analysis it runs)
    from kubectl_dra.analyze.allocator.selection import SelectorEvaluator

    SelectorEvaluator(sem).env.engine
