"""Manifests for `kubectl dra lint`: files, directories or `-` (stdin), multi-document YAML, `kind: List`, JSON,
Helm-rendered output; every object with a function that maps a path inside it to the file's line and column."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable


@dataclass(frozen=True)
class Manifest:
    file: str
    obj: dict
    position: Callable[[tuple], tuple[int, int]]  # path (keys and indices) -> (line, column) of its text, 1-based
    lines: tuple[str, ...] = ()  # the file's lines (to place a position inside a multi-line value)


def _shown(path: Path) -> str:
    """The path as findings name it: relative to the working directory when inside it (stable in CI and in SARIF,
    whose locations are relative to the checkout), else as given."""
    import os

    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


def _paths(args) -> list[tuple[str, str]]:
    """(name in findings, text) of every file, read as --from-file reads it (gather/files.py): the same messages
    for the same bad input, in every command."""
    from kubectl_dra.gather.files import STDIN, STDIN_NAME, expand_paths, read_text

    return [(STDIN_NAME if f == STDIN else _shown(f), read_text(f)) for f in expand_paths(args)]


def _positioner(node) -> Callable[[tuple], tuple[int, int]]:
    """Walk a composed YAML node by keys and indices; the deepest node found gives the position."""

    def position(path: tuple) -> tuple[int, int]:
        cur = node
        for step in path:
            nxt = None
            if cur.tag.endswith(":map") and isinstance(step, str):
                for k, v in cur.value:
                    if getattr(k, "value", None) == step:
                        nxt = v
                        break
            elif cur.tag.endswith(":seq") and isinstance(step, int) and 0 <= step < len(cur.value):
                nxt = cur.value[step]
            if nxt is None:
                break
            cur = nxt
        line, col = cur.start_mark.line + 1, cur.start_mark.column + 1
        style = getattr(cur, "style", None)
        if style in ('"', "'"):
            col += 1  # a quoted scalar's text starts after the quote
        elif style in ("|", ">"):
            line, col = line + 1, cur.start_mark.column + 3  # a block scalar's text starts on the next line
        return line, col

    return position


def load_manifests(args) -> list[Manifest]:
    import yaml

    from kubectl_dra.yamlio.joined import joined_problem, repeated_root_key
    from kubectl_dra.yamlio.kube import loader as kube_loader

    loader = kube_loader()  # as kubectl would read the file (yamlio/kube.py)
    out: list[Manifest] = []
    for name, text in _paths(args):
        try:
            nodes = list(yaml.compose_all(text, Loader=loader))
        except yaml.YAMLError as e:
            from kubectl_dra.gather.files import yaml_error

            raise yaml_error(name, e) from None
        for node in nodes:
            if node is None:
                continue
            key = repeated_root_key(node)  # outputs joined without `---`: refused as --from-file refuses them
            if key is not None:
                from kubectl_dra.errors import DraError

                line, col = key.start_mark.line + 1, key.start_mark.column + 1
                raise DraError(f"{name}:{line}:{col}: {joined_problem(key.value)}")
            doc = yaml.load(yaml.serialize(node), Loader=loader)
            _flatten(name, node, doc, (), out, tuple(text.splitlines()))
    return out


def _flatten(name: str, node, doc, prefix: tuple, out: list, lines: tuple = ()) -> None:
    if not isinstance(doc, dict):
        return
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
        items_node = None
        for k, v in node.value:
            if getattr(k, "value", None) == "items":
                items_node = v
        for i, item in enumerate(doc["items"]):
            sub = items_node.value[i] if items_node is not None and i < len(items_node.value) else node
            if isinstance(item, dict) and "kind" not in item and kind != "List":
                # the API's typed lists (PodList, ResourceClaimTemplateList...) leave kind out of their items; the
                # list names it, as --from-file reads it (gather/files.py)
                item = dict(item, kind=kind[: -len("List")], apiVersion=doc.get("apiVersion", ""))
            _flatten(name, sub, item, (), out, lines)
        return
    if isinstance(kind, str) and kind:
        out.append(Manifest(name, doc, _positioner(node), lines))
