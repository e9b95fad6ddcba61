"""kubectl_dra.jsonio: orjson where it can, the standard library where orjson refuses, the same data either way."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from kubectl_dra import jsonio


def test_orjson_is_the_pinned_engine():
    assert jsonio.orjson is not None and jsonio.orjson.__version__ == "3.13.0"


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "b": [true, null, "x\\u001b"], "c": {"d": 1.5}}',
        '{"n": NaN}',
    ],
)
def test_loads_agrees_with_the_standard_library(text):
    got, want = jsonio.loads(text), json.loads(text)
    assert json.dumps(got) == json.dumps(want)


def test_lone_surrogates_read_as_go_reads_them():
    # orjson refuses an escaped surrogate that is not half of a pair; the standard library keeps it, and such a
    # string could not be written out as UTF-8 (an internal error on -o json). Go's encoding/json (the API server,
    # kubectl) reads it as U+FFFD, and so does kubectl-dra; pairs, and escaped backslashes before a "u", stay.
    got = jsonio.loads(r'{"s": "a\ud800b", "p": "\ud83d\ude00", "\udc00": ["\udfff", 1], "b": "\\ud800"}')
    assert got == {"s": "a\ufffdb", "p": "\U0001f600", "\ufffd": ["\ufffd", 1], "b": "\\ud800"}
    assert jsonio.dumps(got).encode("utf-8")


def test_integers_beyond_64_bits_become_floats():
    # orjson's one silent difference: no Kubernetes object holds such an integer (the API server's int64 fields
    # refuse it), so only a hand-made file can carry one, and it is read as the float json would give for 1e30.
    assert jsonio.loads('{"big": 1000000000000000000000000000000}') == {"big": 1e30}


def test_loads_errors_are_value_errors():
    with pytest.raises(ValueError):
        jsonio.loads("{not json")


def _default(o):
    return str(o) if isinstance(o, Fraction) else list(o) if isinstance(o, (set, tuple)) else str(o)


@pytest.mark.parametrize(
    "obj",
    [
        {"a": (1, 2), "b": Fraction(1, 2), "é": "ü", "ctl": "\x1b[31m", "e": [], "m": {}},
        {"big": 2**70},  # orjson refuses: the standard library writes it
        {1: "non-str key"},
    ],
)
def test_dumps_parses_back_to_what_the_standard_library_writes(obj):
    for indent in (True, False):
        got = jsonio.dumps(obj, default=_default, indent=indent)
        want = json.dumps(obj, default=_default, indent=2 if indent else None, ensure_ascii=False)
        assert json.loads(got) == json.loads(want)
    assert jsonio.dumps({"a": [1]}, indent=True) == '{\n  "a": [\n    1\n  ]\n}'


# A dump is parsed from its bytes (gather/files.py): whatever orjson refuses there takes the text path, so a file
# reads as it did when it was decoded first.
_CLASS = '{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "%s"}}'


@pytest.mark.parametrize(
    "data, name",
    [
        ((_CLASS % "gpu").encode(), "gpu"),
        ((_CLASS % "g\\ud800").encode(), "g\ufffd"),  # orjson refuses the lone surrogate: read as Go reads it
        (("  \n" + _CLASS % "é").encode(), "é"),
        (("[" + _CLASS % "x" + "]").encode(), "x"),
    ],
)
def test_files_read_json_from_bytes_as_from_text(tmp_path, data, name):
    from kubectl_dra.gather.files import _read_documents

    p = tmp_path / "dump.json"
    p.write_bytes(data)
    (doc,) = _read_documents(p)
    assert doc["metadata"]["name"] == name


def test_files_refuse_json_that_is_not_utf8(tmp_path):
    from kubectl_dra.errors import DraError
    from kubectl_dra.gather.files import _read_documents

    p = tmp_path / "dump.json"
    p.write_bytes((_CLASS % "g\xe9").encode("latin-1"))
    with pytest.raises(DraError, match="not UTF-8 text"):
        _read_documents(p)
    # UTF-16 starts with "{" and a NUL: json.loads(bytes) would detect and read it, kubectl-dra does not
    p.write_bytes((_CLASS % "gpu").encode("utf-16-le"))
    with pytest.raises(DraError):
        _read_documents(p)


def test_loads_utf8_is_none_where_orjson_refuses():
    assert jsonio.loads_utf8(b'{"a": 1}') == {"a": 1}
    assert jsonio.loads_utf8(b'{"a": "\xff"}') is None
    assert jsonio.loads_utf8(b'{"a": NaN}') is None
