"""The fast path for large YAML texts: yaml-rs (Rust, pinned), about eight times faster than PyYAML, whose constructor is
Python code. It is taken only when nothing in the text could read differently from the reference (kube.py, YAML
as Kubernetes reads it):

- yaml-rs reads YAML 1.2. The two differ on some plain scalars (go-yaml's booleans y/n/yes/no/on/off, octal with a
  leading 0, underscores before digits, numbers beyond 64 bits or float64, non-string map keys), on tags, merge keys,
  complex keys, directives, tabs, carriage returns, the YAML 1.1 line breaks (NEL, LS, PS) and the characters
  libyaml refuses. fast_path_refusal finds any of these among the text's words, anywhere (a quoted or commented
  occurrence counts too: a false alarm only costs speed).
- Its parser recurses on the native stack: nesting of a few thousand levels crashes the process. `_DEEP` refuses
  any text whose lines nest deeper than 256 levels (indentation and compact `- ` / `? ` indicators; flow nesting is
  bounded by yaml-rs itself and fails with an error).
- A block scalar at the end of a text without a final line break (yaml-rs keeps a line break libyaml drops).
- Several documents, an empty text, or any error of yaml-rs: the reference decides and words the error.

tests/unit/test_yamlio.py checks both against go-yaml itself (tests/oracle/yaml) and against each other on every
YAML file of the repository."""

from __future__ import annotations

import re

from kubectl_dra.yamlio import kube

FAST_MIN_CHARS = 256 * 1024

# Characters PyYAML refuses, the BOM, tabs, carriage returns and YAML 1.1's other line breaks (NEL, LS, PS).
_ASCII_OK = bytes([0x0A, *range(0x20, 0x7F)])
_CHARS = re.compile("[^\x0a\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
# The words that go-yaml reads as something other than a string and that start with a letter (its booleans, nulls,
# infinities, `<<`): suspect unless yaml-rs reads them alike (YAML 1.2 core: true/false/null), and suspect as keys
# (the reference makes a key its text, yaml-rs keeps the boolean), as is `?` (a complex key).
_AGREE = frozenset("true True TRUE false False FALSE null Null NULL ~".split())
_NONSTR = (kube.TRUE | kube.FALSE | kube.NULL | frozenset(kube.SPECIAL) | {"<<"}) - {""}
# `<<` is a merge only as a key: as a value go-yaml reads the string, as yaml-rs does (kubectl writes it plain).
_SUSPECT_WORDS = (_NONSTR - _AGREE - {"<<"}) | {w + ":" for w in _NONSTR} | {"?"}
# Every word that starts like a number, one per line: suspect when it has the shape of a number in either reader
# (decimal digits, dots, underscores and an exponent; 0x, 0o, 0b prefixes; infinities and NaN), unless it is `-` (a
# list item), a plain decimal both read as the same number, or a dotted version or address; and any such word as a
# key (the reference makes a number key its text). Hashes, UUIDs, PCI addresses, dates and quantities such as 80Gi
# have no number's shape and are strings to both.
_SAFE = r"-|-?(?:0|[1-9][0-9]{0,17})(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+){2,}"
_NUMBER_SHAPE = (
    r"[-+]?(?:0[xX][0-9a-fA-F_]*|0[oO][0-7_]*|0[bB][01_]*|[0-9_.]+(?:[eE][-+]?[0-9_]*)?)"
    r"|[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)"
)
_NUMBER_LINES = re.compile(rf"^(?!(?:{_SAFE})$)(?:{_NUMBER_SHAPE})$|^[^\n]*:$", re.MULTILINE)
_NUMBER_START = frozenset("+-._0123456789")
_FLOW_TO_SPACE = str.maketrans("[]{},", "     ")
_DOCUMENTS = re.compile(r"^(?:---|\.\.\.)(?:[ \t]|$)", re.MULTILINE)
_DEEP = re.compile(r"^(?:[ ]|[-?:][ ]){256}", re.MULTILINE)


def fast_path_refusal(text: str) -> str | None:
    """Why `text` goes to the reference (None: yaml-rs reads it as the reference does). Every plain scalar that may read
    differently is found among the text's whitespace-separated words (a word inside a quoted or commented text counts
    too: a false alarm only costs speed)."""
    if fast_parser() is None:
        return "yaml-rs is not installed"
    if not text.endswith("\n") and ("|" in text or ">" in text):
        return "a block scalar may end the text without a line break"
    if ("---" in text or "..." in text) and _DOCUMENTS.search(text):
        return "document markers"
    if "]:" in text or "}:" in text:
        return "a flow collection may be a key"
    if (" " * 256 in text or "- - " in text or "? " in text or ": - " in text) and _DEEP.search(text):
        return "deep nesting"
    if text.isascii():  # the usual dump: what is left once line feeds and printable characters are deleted
        bad = text.encode("ascii").translate(None, _ASCII_OK)
        if bad:
            return f"character {chr(bad[0])!r}"
    else:
        m = _CHARS.search(text)
        if m is not None:
            return f"character {m.group(0)!r}"
    words = set(text.translate(_FLOW_TO_SPACE).split())
    for w in sorted(words & _SUSPECT_WORDS):
        # a boolean word inside a longer text ("kubelet has no disk pressure") is harmless: only a whole scalar counts
        if w.endswith(":") or w == "?" or _stands_alone(text, w):
            return f"plain scalar {w!r}"
    if "!" in text or "%" in text:
        tagged = [w for w in words if w[0] in "!%"]  # tags, directives
        if tagged:
            return f"tag or directive {min(tagged)!r}"
    numbers = "\n".join([w for w in words if w[0] in _NUMBER_START])
    m = _NUMBER_LINES.search(numbers)
    if m is not None:
        return f"plain scalar {m.group(0)!r}"
    return None


def _stands_alone(text: str, word: str) -> bool:
    """Whether word occurs somewhere as a whole plain scalar: after nothing but indentation or an indicator (`:`,
    `-`, `?`, a flow bracket or comma; an anchor may stand between) on its line, and before the line's end, a
    comment, `:` or a flow indicator.
    Over-approximates (`a:no` counts, though it is one scalar): a false alarm only costs speed."""
    n = len(word)
    i = text.find(word)
    while i >= 0:
        line_start = text.rfind("\n", 0, i) + 1
        before = text[line_start:i].rstrip(" ")
        if "&" in before:  # an anchor before the scalar: `a: &x yes`
            head, _, last = before.rpartition(" ")
            before = head.rstrip(" ") if last.startswith("&") else before
        line_end = text.find("\n", i)
        after = text[i + n : len(text) if line_end < 0 else line_end].lstrip(" ")
        if (not before or before[-1] in ":-?[{,") and (not after or after[0] in ":,]}#"):
            return True
        i = text.find(word, i + 1)
    return False


def fast_parser():
    """yaml-rs, imported on first use (12 ms: a JSON or small YAML input never pays it); None where it is missing."""
    global _RS
    if _RS is False:
        try:
            import yaml_rs
        except ImportError:  # pragma: no cover - the wheel is pinned for every platform kubectl-dra ships on
            yaml_rs = None
        _RS = yaml_rs
    return _RS


_RS = False
