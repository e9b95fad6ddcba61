"""The terminal under the text renderers: styled lines that wrap at the terminal's width, key-value rows and
tables. No report knowledge here (text.py, status.py, devices.py and request_fit.py write reports with it)."""

from __future__ import annotations

import re

MAX_WRAPPED = 24  # at a terminal, a wrapped sentence stops after this many lines (-o wide: whole)

# SGR codes of the styles the renderers use (ECMA-48 standard colours; bold is 1).
_SGR = {
    "bold": "1",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
    "reverse": "7",
}


def _sgr(style: str) -> str:
    return ";".join(_SGR[w] for w in style.split() if w in _SGR)


class Out:
    """Collects styled lines and writes them straight to the stream: plain text, or with SGR colour codes when
    colour is on. Every cluster string has been through esc() first, so no text can carry a control character."""

    def __init__(self, stream, color: bool, width: int | None, ascii_marks: bool = False):
        self.width = width  # None: never wrap or truncate (pipes, files, -o wide)
        self.ascii = ascii_marks  # marks as plain ASCII (a terminal without UTF-8, NO_COLOR)
        self.stream = stream
        self.color = color
        self.wide = False  # -o wide: the details text leaves out (the allocator channel, DRA003)

    @classmethod
    def of(cls, stream, opts) -> "Out":
        """The writer a RenderOptions (render/options.py) asks for."""
        out = cls(stream, opts.color, opts.fit_width, opts.ascii)
        out.wide = opts.wide
        return out

    def line(self, *parts, wrap: int | None = None, limit: int = MAX_WRAPPED, cut: bool = True) -> None:
        """parts: str (plain) or (str, style). With a width, a line that does not fit has its last part wrapped
        onto lines indented by `wrap` columns (at most `limit` lines, the last ending with an ellipsis: a message
        of megabytes does not fill the scrollback; -o wide writes it whole), or, without `wrap`, cut with one.
        cut=False: a line that does not fit is written whole (a table's row: the terminal wraps it, as kubectl's)."""
        parts = [p if isinstance(p, tuple) else (p, None) for p in parts]
        lines = [parts]
        if self.width and parts and cut:
            head = sum(len(p[0]) for p in parts[:-1])
            last, style = parts[-1]
            room = self.width - head
            if head + len(last) > self.width and wrap is not None and self.width - wrap > 10:
                if room > 10:
                    chunks = _wrap(last, room, self.width - wrap)
                    lines = [parts[:-1] + [(chunks[0], style)]] + [[(" " * wrap + c, style)] for c in chunks[1:]]
                else:  # no room on this line: the text starts on the next one
                    chunks = _wrap(last, self.width - wrap, self.width - wrap)
                    lines = [parts[:-1]] + [[(" " * wrap + c, style)] for c in chunks]
                if len(lines) > limit:
                    lines = lines[:limit]
                    *rest, (end, st) = lines[-1]
                    room = self.width - sum(len(p[0]) for p in rest) - 1  # the ellipsis fits on the line
                    lines[-1] = rest + [(end[:room].rstrip() + "…", st)]
            elif head + len(last) > self.width and room > 10:
                lines = [parts[:-1] + [(last[: room - 1] + "…", style)]]
        write = self.stream.write
        for ps in lines:
            if self.width:
                ps = _cut(ps, self.width if cut else None)
            if self.color:
                write("".join(f"\x1b[{_sgr(st)}m{text}\x1b[0m" if st and _sgr(st) else text for text, st in ps) + "\n")
            else:
                write("".join(text for text, _ in ps) + "\n")

    def blank(self) -> None:
        self.stream.write("\n")


def _cut(parts: list, width: int | None) -> list:
    """Trailing blanks go; a line still wider than the terminal is cut with an ellipsis (-o wide shows it whole;
    width None: never cut)."""
    while parts and not parts[-1][0].strip():
        parts = parts[:-1]
    if parts:
        parts = parts[:-1] + [(parts[-1][0].rstrip(), parts[-1][1])]
    if width is None or sum(len(p[0]) for p in parts) <= width:
        return parts
    out, used = [], 0
    for text, st in parts:
        if used + len(text) >= width:
            out.append((text[: max(0, width - used - 1)] + "…", st))
            break
        out.append((text, st))
        used += len(text)
    return out


def _pieces(word: str) -> list[str]:
    """A word's unbreakable pieces: it may break after a `;` or `,` inside it (`a,b`), never elsewhere (a
    namespace/name, a device id driver/pool/device, a quantity stays whole)."""
    return _BREAK.split(word) if ";" in word or "," in word else [word]


def longest_piece(text: str) -> int:
    """The widest piece text can never be broken inside (0 for empty text): what a column needs to wrap it at word
    boundaries only."""
    return max((len(p) for w in text.split(" ") for p in _pieces(w)), default=0)


def _wrap(text: str, first: int, rest: int) -> list[str]:
    """Split text at word boundaries (a space, or after a `;` or `,`) into a first line of at most `first` columns
    and further lines of `rest`. An identifier is never broken, but a single piece longer than a whole line, which
    is broken there with every character kept."""
    out: list[str] = []
    cur, limit = "", first
    for w in text.split(" "):
        for k, p in enumerate(_pieces(w)):
            sep = "" if k or not cur else " "  # a piece after `,` or `;` joins without a space
            if cur and len(cur) + len(sep) + len(p) <= limit:
                cur += sep + p
                continue
            # the line is full, or the first line is too short for a piece the next ones hold: it starts the next
            if cur or (not out and len(p) > limit and len(p) <= rest):
                out.append(cur)
                cur, limit = "", rest
            while len(p) > limit:  # a piece longer than a line is broken, nothing lost
                out.append(p[:limit])
                p, limit = p[limit:], rest
            cur = p
    out.append(cur)
    return out


_BREAK = re.compile(r"(?<=[;,])(?=[^;,])")


def _kv(out: Out, key: str, value, style: str | None = None, indent: int = 0, keyw: int = 14) -> None:
    pad = " " * indent
    out.line(pad + f"{key + ':':<{keyw}}", (value, style) if style else value, wrap=indent + keyw)


def _table(
    out: Out,
    headers: list[str],
    rows: list[list],
    indent: int,
    styles: list | None = None,
    droppable: tuple = (),
    max_lines: int | None = None,
) -> None:
    """The last column (a reason, a message) wraps under itself, or below the row when the others leave it too
    little room; never cut (but after max_lines lines, when given: -o wide shows it whole)."""
    from kubectl_dra.render.table import fit_table

    fit_table(out, headers, rows, indent=indent, styles=styles, droppable=droppable, max_lines=max_lines)
