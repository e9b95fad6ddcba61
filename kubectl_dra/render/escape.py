"""Escaping of cluster-supplied strings before they reach a terminal (cli-runtime's WriteEscaped, stricter):
every C0/C1 control character and DEL becomes a visible escape, so no string can move the cursor,
change colours or retitle the terminal."""

from __future__ import annotations

import re

_CTRL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _sub(m: re.Match) -> str:
    ch = m.group(0)
    if ch == "\t":
        return "\\t"
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def esc(value) -> str:
    """A single-line, control-free rendering of any cluster value."""
    s = "" if value is None else str(value)
    return _CTRL.sub(_sub, s)
