"""How messages name many things: a few of them and the count of the rest (the evidence keeps them all)."""

from __future__ import annotations

SHOWN = 3  # names a message shows


def few(names, shown: int = SHOWN) -> str:
    """ "a, b, c and 197 more": a summary of 200 nodes fits a line."""
    names = list(names)
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more
