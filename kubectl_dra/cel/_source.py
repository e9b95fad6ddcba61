"""A small CEL tokenizer used for source-level rewrites (bracket matching, member renames, operand bounds).

Only what the rewrites need: identifiers, string/bytes literals (skipped as one token), numbers,
punctuation and ``//`` comments.  Offsets are Python string indices, i.e. code points, which is
what cel-cpp's source positions use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(
    r"(?:0[xX][0-9a-fA-F]+[uU]?|[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?[uU]?|\.[0-9]+(?:[eE][+-]?[0-9]+)?)"
)
_PUNCT2 = ("==", "!=", "<=", ">=", "&&", "||", ".?", "[?", "{?")


@dataclass(slots=True)
class Token:
    kind: str  # "ident" | "string" | "number" | "punct"
    text: str
    start: int
    end: int


def _string_end(src: str, i: int) -> int:
    """i points at the first char of a (possibly prefixed) string literal; return its end offset."""
    j = i
    raw = False
    while j < len(src) and src[j] in "rRbB":
        if src[j] in "rR":
            raw = True
        j += 1
    q = src[j]
    triple = src.startswith(q * 3, j)
    delim = q * 3 if triple else q
    j += len(delim)
    while j < len(src):
        if not raw and src[j] == "\\":
            j += 2
            continue
        if src.startswith(delim, j):
            return j + len(delim)
        if not triple and src[j] == "\n":
            break
        j += 1
    return len(src)


def tokenize(src: str) -> list[Token]:
    toks: list[Token] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c.isspace():
            i += 1
            continue
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j == -1 else j + 1
            continue
        if c in "'\"":
            j = _string_end(src, i)
            toks.append(Token("string", src[i:j], i, j))
            i = j
            continue
        m = _IDENT.match(src, i)
        if m:
            word = m.group()
            if len(word) <= 2 and m.end() < n and src[m.end()] in "'\"" and set(word.lower()) <= {"r", "b"}:
                j = _string_end(src, i)
                toks.append(Token("string", src[i:j], i, j))
                i = j
                continue
            toks.append(Token("ident", word, i, m.end()))
            i = m.end()
            continue
        m = _NUMBER.match(src, i)
        if m and m.end() > i:
            toks.append(Token("number", m.group(), i, m.end()))
            i = m.end()
            continue
        two = src[i : i + 2]
        if two in _PUNCT2:
            toks.append(Token("punct", two, i, i + 2))
            i += 2
            continue
        toks.append(Token("punct", c, i, i + 1))
        i += 1
    return toks


_OPEN = {"(": ")", "[": "]", "{": "}", "[?": "]", "{?": "}"}


def matching(toks: list[Token]) -> dict[int, int]:
    """token index of an opening bracket -> token index of its closing bracket."""
    out: dict[int, int] = {}
    stack: list[int] = []
    for k, t in enumerate(toks):
        if t.kind != "punct":
            continue
        if t.text in _OPEN:
            stack.append(k)
        elif t.text in (")", "]", "}"):
            if stack:
                out[stack.pop()] = k
    return out


def apply_edits(src: str, edits: list[tuple[int, int, str]]) -> str:
    """Apply (start, end, replacement) edits; later offsets first so earlier ones stay valid."""
    for start, end, text in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        src = src[:start] + text + src[end:]
    return src


def right_operand_end(toks, match, op_idx: int) -> int | None:
    stop = {"&&", "||", "?", ":", ",", ")", "]", "}", "==", "!=", "<", "<=", ">", ">="}
    k = op_idx + 1
    last = None
    while k < len(toks):
        t = toks[k]
        if t.text in stop or (t.kind == "ident" and t.text == "in"):
            break
        if k in match:
            last = toks[match[k]].end
            k = match[k] + 1
            continue
        last = t.end
        k += 1
    return last


def left_operand_start(toks, match, op: int) -> int | None:
    """Start offset of the left operand of the relational operator at offset ``op``."""
    idx = next((k for k, t in enumerate(toks) if t.start == op), None)
    if idx is None:
        return None
    rev = {v: k for k, v in match.items()}
    k = idx - 1
    stop = {"&&", "||", "?", ":", ",", "==", "!=", "<", "<=", ">", ">=", "in", "(", "[", "{", "[?", "{?"}
    while k >= 0:
        t = toks[k]
        if t.text in (")", "]", "}"):
            k = rev.get(k, k) - 1
            continue
        if t.text in stop or (t.kind == "ident" and t.text == "in"):
            break
        k -= 1
    return toks[k + 1].start if k + 1 < idx else None
