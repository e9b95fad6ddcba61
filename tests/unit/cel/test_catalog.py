"""cel-go v0.33's "did you mean" suggestions (kubectl_dra/cel/_catalog.py), as 1.38 words undeclared references.
The Find results were checked against cel-go's own Catalog.Find on the same symbols (906 names: typos of every
symbol, prefixes, random strings); the 1.38 oracle checks whole messages (test_oracle_agreement, the table)."""

from __future__ import annotations

import pytest

from kubectl_dra.cel._catalog import edit_distance, find, suggestion, undeclared_references_v033


@pytest.mark.parametrize(
    "name,expected",
    [
        ("devices", ["device"]),
        ("math", ["path"]),
        ("lowerAsci", ["lowerAscii"]),
        ("asList", []),
        ("kubernetes", []),
        ("ha", ["has"]),
        ("x", []),
        ("sets.contain", ["sets.contains"]),
        ("lists.rang", ["lists.range"]),
        ("optional.o", ["optional.of"]),
        ("optional.none", ["optional.none"]),
        ("strings", ["string"]),
        ("existsOne", ["existsOne"]),
        ("google.protobuf.Duratio", ["google.protobuf.Duration"]),
        ("sets.contains.x", ["sets.contains"]),
        ("isM", ["isMask"]),
    ],
)
def test_find_like_cel_go(name, expected):
    assert find(name) == expected


def test_edit_distance_is_damerau_levenshtein_with_cel_go_cutoffs():
    assert edit_distance("abcd", "bacd") == 1  # a transposition
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("ab", "ba") > 2  # cel-go stops once a row exceeds a third of the length
    assert edit_distance("a" * 16, "a") == 15  # the length shortcut
    assert edit_distance("abcdefghi", "zzzzzzzzz") > 3  # early exit past a third of the length


def test_suggestion_suffixes():
    assert suggestion("devices") == " (did you mean 'device'?)"
    assert suggestion("existsOne") == ""  # an exact symbol gets none
    assert suggestion("isLinkLocal") == " (did you mean 'isLinkLocalUnicast' or 'isLinkLocalMulticast'?)"


def test_qualified_names_are_looked_up_whole():
    src = "sets.contain([1], [1]) || lists.rang == 1"
    v029 = (
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'sets' (in container '')\n | "
        + src
        + "\n | ^\n"
        "ERROR: <input>:1:13: undeclared reference to 'contain' (in container '')\n | "
        + src
        + "\n | "
        + "." * 12
        + "^\n"
        "ERROR: <input>:1:27: undeclared reference to 'lists' (in container '')\n | " + src + "\n | " + "." * 26 + "^"
    )
    out = undeclared_references_v033(v029, src)
    assert out == (
        "compilation failed: ERROR: <input>:1:13: undeclared reference to 'sets.contain' (did you mean "
        "'sets.contains'?)\n | " + src + "\n | " + "." * 12 + "^\n"
        "ERROR: <input>:1:32: undeclared reference to 'lists.rang' (did you mean 'lists.range'?)\n | "
        + src
        + "\n | "
        + "." * 31
        + "^"
    )
