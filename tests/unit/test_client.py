"""gather/client.py's reading of a list answer's head: the continue token that lets the next page be asked for while
the current one is still arriving. Heads as the API server writes them (encoding/json: kind, apiVersion, metadata,
items) and as other encoders might (spaces, another field order), where only a complete metadata object before the
items counts."""

from __future__ import annotations

import json

import pytest

from kubectl_dra.gather.client import list_continue

HEAD = (
    b'{"kind":"ResourceSliceList","apiVersion":"resource.k8s.io/v1","metadata":{"resourceVersion":"4711",'
    b'"continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDcxMSwic3RhcnQiOiJub2RlLTAwNDk5XHUwMDAwIn0",'
    b'"remainingItemCount":4500},"items":[{"metadata":{"name":"node-00000-gpu"'
)


def test_the_api_servers_head():
    assert list_continue(HEAD) == (
        True,
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDcxMSwic3RhcnQiOiJub2RlLTAwNDk5XHUwMDAwIn0",
    )


def test_the_last_page_has_no_token():
    assert list_continue(b'{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[]}') == (
        True,
        None,
    )
    assert list_continue(b'{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"9"}}') == (True, None)


def test_a_head_cut_before_the_items_is_not_enough_yet():
    complete = HEAD.index(b',"items":') + len(b',"items":')
    for cut in range(complete):
        assert list_continue(HEAD[:cut]) == (False, None), HEAD[:cut]
    assert list_continue(HEAD[:complete])[0]


def test_escapes_and_spaces_as_json_allows():
    doc = {"kind": "X", "apiVersion": "v1", "metadata": {"continue": "a<b&c\u2028"}, "items": [{"a": 1}]}
    text = json.dumps(doc).encode()  # ", " and ": " separators, \\u escapes
    assert list_continue(text[: text.index(b'[{"a"')]) == (True, "a<b&c\u2028")
    go = text.replace(b"<", b"\\u003c").replace(b"&", b"\\u0026")  # how Go escapes them
    assert list_continue(go) == (True, "a<b&c\u2028")


@pytest.mark.parametrize(
    "head",
    [
        b'{"items":[],"metadata":{"continue":"x"}}',  # items first: the token may not belong to this list's head
        b'{"kind":"X","metadata":{"continue":"x"},"other":1,"items":[]}',  # a field between metadata and items
        b'{"kind":"X","spec":{"metadata":{"continue":"x"}},"items":[]}',  # a nested metadata
        b'[{"metadata":{"continue":"x"}}]',  # not an object
        b'{"kind":"X","metadata":["continue"],"items":[]}',  # metadata that is no object
        b"",
        b"\xff\xfe not json",
    ],
)
def test_anything_else_waits_for_the_whole_answer(head):
    assert list_continue(head) == (False, None)


def test_an_empty_token_is_no_token():
    assert list_continue(b'{"kind":"X","metadata":{"continue":""},"items":[]}') == (True, None)


def test_the_progress_line_fits_the_terminal(monkeypatch, capsys):
    """A progress line longer than the terminal wraps, and a carriage return then clears only its last row: the
    line is cut to the width (seen at 80 columns once the pending pods joined the fetched lists)."""
    import os
    import shutil

    from kubectl_dra.gather.live import _progress

    monkeypatch.setattr(shutil, "get_terminal_size", lambda fallback=(80, 24): os.terminal_size((40, 24)))
    _progress(True, "Fetching claims, templates, classes, slices, nodes, taint_rules, events, pending_pods ...")
    err = capsys.readouterr().err
    shown = err.split("\x1b[2K", 1)[1]
    assert len(shown) < 40 and shown.endswith("...")
