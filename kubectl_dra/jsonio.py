"""JSON in and out. orjson (a pinned C extension) parses and writes several times faster than the standard
library, whose indenting encoder is pure Python; where its wheel is missing, or it refuses a document the standard
library accepts (lone surrogates, NaN), the standard library gives the same data, with an escaped lone surrogate
read as U+FFFD as Go's encoding/json reads it. One difference stays: orjson reads an integer beyond 64 bits as a
float; no Kubernetes object can hold one (the API server's fields are int64).

Both write UTF-8 text without escaping non-ASCII (ensure_ascii=False), tuples as lists, and hand anything else to
`default`; the two encoders' documents parse to the same value (goldens compare parsed JSON)."""

from __future__ import annotations

import json
import re

try:
    import orjson
except ImportError:  # pragma: no cover - the wheel is pinned for every platform kubectl-dra ships on
    orjson = None

_OPTIONS = 0
if orjson is not None:
    # dataclasses, datetimes and non-str keys go through `default`/str() as the standard library sends them
    _OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_NON_STR_KEYS


def loads(data: str | bytes):
    """Parse one JSON document; ValueError (json.JSONDecodeError) when it is not JSON."""
    if orjson is not None:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # the standard library decides (and words the error)
    doc = json.loads(data)
    if _LONE_SURROGATE_ESCAPE.search(data if isinstance(data, str) else data.decode("utf-8", "replace")):
        doc = _without_lone_surrogates(doc)
    return doc


# Go's encoding/json (the API server, kubectl) reads an escaped surrogate that is not half of a pair as U+FFFD;
# the standard library keeps it, and such a string can then not be written as UTF-8 at all.
_LONE_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _without_lone_surrogates(v):
    if isinstance(v, str):
        return v.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if isinstance(v, list):
        return [_without_lone_surrogates(x) for x in v]
    if isinstance(v, dict):
        return {_without_lone_surrogates(k): _without_lone_surrogates(x) for k, x in v.items()}
    return v


def loads_utf8(data: bytes):
    """UTF-8 JSON bytes parsed by orjson, or None when orjson is missing or refuses them (invalid UTF-8, not JSON,
    or what only the standard library accepts): the caller then decodes the text and decides as with any text
    (the JSON document `null` gives None too, and takes that path)."""
    if orjson is None:
        return None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def dumps(obj, default=None, indent: bool = True) -> str:
    """obj as JSON text: indented by two spaces (kubectl's -o json) or compact."""
    data = _orjson_dumps(obj, default, indent)
    if data is not None:
        return data.decode("utf-8")
    return json.dumps(obj, default=default, indent=2 if indent else None, ensure_ascii=False)


def dumps_utf8(obj, default=None, indent: bool = True) -> bytes:
    """dumps(), as the UTF-8 bytes written to a stream."""
    data = _orjson_dumps(obj, default, indent)
    return data if data is not None else dumps(obj, default, indent).encode("utf-8")


def _orjson_dumps(obj, default, indent: bool) -> bytes | None:
    """orjson's document, or None where orjson is missing or refuses obj (the standard library writes it)."""
    if orjson is None:
        return None
    try:
        return orjson.dumps(obj, default=default, option=_OPTIONS | (orjson.OPT_INDENT_2 if indent else 0))
    except (orjson.JSONEncodeError, TypeError):
        return None


def value_key(x) -> str | bytes:
    """A key equal for equal JSON values (several per pod: orjson, about ten times json.dumps; the json module for
    what orjson refuses, such as YAML's non-string keys)."""
    if x is None or x == {}:  # the common case, once per pod: no encoder for it
        return "null" if x is None else "{}"
    if orjson is not None:
        try:
            return orjson.dumps(x, option=orjson.OPT_SORT_KEYS, default=str)
        except TypeError:
            pass
    return json.dumps(x, sort_keys=True, default=str)
