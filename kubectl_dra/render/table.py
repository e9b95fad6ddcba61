"""Tables as kubectl get prints them, fitted to the terminal without losing the columns that carry the answer.

Columns are padded and separated by three spaces. At a width, the last column (a reason, a detail, a message)
takes the width the others leave and wraps under itself at word boundaries (a space, or after `;` or `,`), never
inside an identifier (a namespace/name, a device id). When the others leave it too little room, or an identifier
it holds needs most of that room, it goes on the lines below the row, indented a little; only a single identifier
wider than even those lines is broken, every character kept. When even the other columns do not fit, the columns
the caller marked as droppable go first (in the order given), never the others; a row still wider than the
terminal is written whole, as kubectl get writes it (the terminal wraps it), never cut. Without a width (a pipe,
a file, -o wide) every column is written whole."""

from __future__ import annotations

import re

GAP = "   "
MIN_ROOM = 30  # the last column wraps under itself when it has at least this many columns, else below the row


def fit_table(
    out,
    headers: list[str],
    rows: list[list[str]],
    *,
    indent: int = 0,
    styles: list | None = None,
    droppable: tuple[str, ...] = (),
    max_lines: int | None = None,
    header: bool = True,
    min_room: int = MIN_ROOM,
) -> None:
    """Write the table. styles: per row, per column a style or None. droppable: header names that may be left out
    at a narrow width, first dropped first. max_lines: at a width, the last cell wraps onto at most this many
    lines, the last of them ending with an ellipsis (the whole cell is in -o wide). header: False writes the rows
    only (status -w after its first table). min_room: the fewest columns the last one wraps under itself in."""
    from kubectl_dra.render.terminal import _wrap, longest_piece

    cols = list(range(len(headers)))
    width = out.width
    longest = max((len(r[-1]) for r in rows), default=0)
    # a short last column (a count) is never put below its row: it needs its own room, and its name's
    short = longest <= max(len(headers[-1]), 12)
    if width:
        drop = [headers.index(n) for n in droppable if n in headers and headers.index(n) != len(headers) - 1]
        # only what the other columns need to fit at all: a long last column can always go below its row
        need = max(longest, len(headers[-1])) if short else -len(GAP)
        while drop and _fixed(cols, headers, rows, indent) + need > width:
            cols.remove(drop.pop(0))
    widths = {i: max([len(headers[i])] + [len(r[i]) for r in rows]) for i in cols}
    last = len(headers) - 1
    pad = " " * indent
    fixed = _fixed(cols, headers, rows, indent)
    head = pad + GAP.join(headers[i].ljust(widths[i]) for i in cols[:-1])
    room = (width - fixed) if width else None
    # below the row when the room left is short, or when an identifier the column holds takes most of it (under
    # itself it would be broken, or its lines would hold one word each); one layout for every row of the table
    below = (
        room is not None
        and not short
        and any(fixed + len(r[last]) > width for r in rows)
        and (room < min_room or max(longest_piece(r[last]) for r in rows) * 4 > room * 3)
    )
    if header:  # the last column's name heads it only where its cells are
        out.line(head.rstrip() if below else (head + GAP + headers[last]).rstrip(), cut=False)
    for ri, r in enumerate(rows):
        style = lambda i: styles[ri][i] if styles and styles[ri] and i < len(styles[ri]) else None  # noqa: E731
        parts: list = [pad]
        for i in cols[:-1]:
            cell = r[i].ljust(widths[i])
            parts.append((cell, style(i)) if style(i) else cell)
            parts.append(GAP)
        text = r[last]
        # a short last column, or a terminal too narrow for even the indented lines below: the row as it is, whole
        # (the terminal wraps it, as kubectl get's rows)
        if not width or (not below and (short or fixed + len(text) <= width)) or width - indent - 4 < 10:
            out.line(*parts, (text, style(last)) if style(last) else text, cut=False)
            continue
        start = indent + 4 if below else fixed
        chunks = _wrap(text, width - start, width - start) if text else []
        if max_lines and len(chunks) > max_lines:
            chunks = chunks[:max_lines]
            chunks[-1] = _ellipsis(chunks[-1], width - start)
        if below:
            out.line(*parts, cut=False)  # the other columns whole, even wider than the terminal
            if text in ("", "-"):  # nothing to say below the row
                continue
        else:  # the first piece goes on the row itself, the rest under it
            first, chunks = chunks[0], chunks[1:]
            out.line(*parts, (first, style(last)) if style(last) else first)
        for cell in chunks:
            out.line(" " * start, (cell, style(last)) if style(last) else cell)


def _fixed(cols: list[int], headers: list[str], rows: list[list[str]], indent: int) -> int:
    """Where the last column starts: the indent and every other shown column with its gap."""
    return indent + sum(max([len(headers[i])] + [len(r[i]) for r in rows]) + len(GAP) for i in cols[:-1])


def _ellipsis(line: str, room: int) -> str:
    """The last line a cell may have, ending with an ellipsis after its last whole word (an identifier cut short
    would read as another one); a single piece filling the line is cut, nothing else to do at that width."""
    if len(line) + 2 <= room:
        return line + " …"
    ends = [m.start() for m in re.finditer(r" |(?<=[;,])(?=[^;,])", line) if 0 < m.start() <= room - 2]
    return line[: ends[-1]].rstrip() + " …" if ends else line[: room - 1] + "…"
