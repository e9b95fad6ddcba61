"""YAML in. PyYAML over libyaml (YAML 1.1: `yes` is true, `017` is 15, `1e3` a string) is how kubectl-dra reads YAML,
and it stays the reference. Its constructor is Python code, which makes a large dump load about five times slower
than the same objects as JSON, so a large single-document text goes through yaml-rs (Rust, pinned; about eight times
faster) when nothing in it could read differently between the two:

- yaml-rs reads YAML 1.2. The two differ only on some plain scalars (the YAML 1.1 booleans yes/no/on/off, octal and
  base-60 numbers, floats without a dot, timestamps), on tags, merge keys, complex keys, directives, tabs, the YAML
  1.1 line breaks (NEL, LS, PS) and the characters PyYAML refuses. `_SUSPECT` finds any of these anywhere in the text
  (a quoted or commented occurrence counts too: a false alarm only costs speed) and sends the text to PyYAML.
- Its parser recurses on the native stack: nesting of a few thousand levels crashes the process. `_DEEP` sends any
  text whose lines nest deeper than 256 levels (indentation and compact `- ` / `? ` indicators; flow nesting is
  bounded by yaml-rs itself and fails with an error) to PyYAML.
- A block scalar at the end of a text without a final line break (yaml-rs keeps a line break PyYAML drops).
- Several documents, an empty text, or any error of yaml-rs: PyYAML decides and words the error.

Small texts (hand-written manifests) always go to PyYAML. tests/unit/test_yamlio.py checks both paths against each
other on every YAML file of the test suite and on a corpus of scalars."""

from __future__ import annotations

import re

FAST_MIN_CHARS = 256 * 1024

# Characters PyYAML refuses, the BOM, tabs, carriage returns and YAML 1.1's other line breaks (NEL, LS, PS).
_CHARS = re.compile("[^\x0a\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
# A word that PyYAML's implicit resolvers read as something other than a string (YAML 1.1 booleans, octal, base 60,
# timestamps, merge keys, the value key) is suspect, unless both read it alike (true/false/null, plain decimals).
_AGREE = frozenset("true True TRUE false False FALSE null Null NULL ~".split())
_SIMPLE = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")
# The other way round: yaml-rs reads YAML 1.2 numbers (0o17, 1e3, +.5, _1) where PyYAML sees strings. Any word made
# of number characters is suspect unless it is a string both read alike: dotted versions and addresses, PCI addresses.
_NUMERIC = re.compile(r"[-+]?[0-9._][0-9a-fA-F_.:xXoO+\-]*|[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)")
_STRINGS = re.compile(r"[0-9]+(?:\.[0-9]+){2,}|[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9a-fA-F]")
_FLOW = re.compile(r"[\[\]{},]+")
_DOCUMENTS = re.compile(r"^(?:---|\.\.\.)(?:[ \t]|$)", re.MULTILINE)
_DEEP = re.compile(r"^(?:[ ]|[-?:][ ]){256}", re.MULTILINE)


def fast_path_refusal(text: str) -> str | None:
    """Why `text` goes to PyYAML (None: yaml-rs reads it as PyYAML would). Every plain scalar that may read
    differently is found among the text's whitespace-separated words (a word inside a quoted or commented text counts
    too: a false alarm only costs speed)."""
    if fast_parser() is None:
        return "yaml-rs is not installed"
    if not text.endswith("\n") and ("|" in text or ">" in text):
        return "a block scalar may end the text without a line break"
    if ("---" in text or "..." in text) and _DOCUMENTS.search(text):
        return "document markers"
    if (" " * 256 in text or "- - " in text or "? " in text or ": - " in text) and _DEEP.search(text):
        return "deep nesting"
    m = _CHARS.search(text)
    if m is not None:
        return f"character {m.group(0)!r}"
    for word in set(text.split()):
        for w in _FLOW.split(word) if _FLOW.search(word) else (word,):
            w = w.rstrip(":")
            if w and _suspect(w):
                return f"plain scalar {w!r}"
    return None


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


def _suspect(w: str) -> bool:
    if w in _AGREE or _SIMPLE.fullmatch(w):
        return False
    c = w[0]
    if c in "!%" or w == "?":  # tags, directives, complex keys
        return True
    if any(regexp.match(w) for _, regexp in _implicit().get(c, ())):
        return True
    return c in "+-._0123456789" and _NUMERIC.fullmatch(w) is not None and _STRINGS.fullmatch(w) is None


def _implicit() -> dict:
    import yaml

    return yaml.resolver.Resolver.yaml_implicit_resolvers


def load_all(text: str, fast_min: int = FAST_MIN_CHARS) -> list:
    """The documents of `text`, as PyYAML's safe_load_all reads them (None documents left out); yaml.YAMLError and
    RecursionError as PyYAML raises them."""
    if len(text) >= fast_min and fast_path_refusal(text) is None:
        try:
            rs = fast_parser()
            doc = rs.loads(text, parse_datetime=False, duplicate_key_policy=rs.DuplicateKeyPolicy.LastWins)
        except Exception:  # noqa: BLE001 - any refusal of yaml-rs: PyYAML decides and words the error
            doc = None
        if doc is not None:
            return [doc]
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [d for d in yaml.load_all(text, Loader=loader) if d is not None]
