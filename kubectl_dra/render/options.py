"""How an answer is written: one RenderOptions, built once from the command line (cli/common.py render_options) and
taken by every renderer, as kubectl's PrintFlags or rich's ConsoleOptions."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RenderOptions:
    format: str = "text"  # text, wide, json, yaml, map (render.FORMATS and the commands' own)
    color: bool = False  # SGR colour: a terminal, no NO_COLOR or --no-color (or FORCE_COLOR)
    width: int | None = None  # the terminal's columns text is fitted to; None: never wrapped or cut (a pipe)
    ascii: bool = False  # marks as plain ASCII (NO_COLOR, a dumb terminal, no UTF-8)
    all_devices: bool = False  # explain: every device's row, not only the first ones per outcome
    header: bool = True  # a table's header line (--no-headers: False)

    @property
    def wide(self) -> bool:
        return self.format == "wide"

    @property
    def fit_width(self) -> int | None:
        """The width text is fitted to: -o wide writes every line whole."""
        return None if self.wide else self.width
