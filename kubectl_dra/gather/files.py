"""Offline input: YAML/JSON files or directories (multi-document YAML, `kind: List`, `kubectl get -o yaml`)."""

from __future__ import annotations

import json
from pathlib import Path

from kubectl_dra import jsonio
from kubectl_dra.errors import DraError
from kubectl_dra.model.objects import snapshot_from_objects
from kubectl_dra.model.scope import base_namespace
from kubectl_dra.model.snapshot import Snapshot

_EXTENSIONS = (".yaml", ".yml", ".json")
MAX_FILE_BYTES = 256 * 1024 * 1024


def _iter_paths(paths):
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = sorted(f for f in path.rglob("*") if f.is_file() and f.suffix.lower() in _EXTENSIONS)
            if not found:
                raise DraError(f"{p}: directory has no .yaml, .yml or .json files")
            yield from found
        elif path.exists():
            yield path
        else:
            raise DraError(f"{p}: no such file or directory")


def _read_documents(path: Path):
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise DraError(f"{path}: file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
        data = path.read_bytes()
    except OSError as e:
        raise DraError(f"{path}: {e.strerror or e}") from None
    if data[:64].lstrip()[:1] in (b"{", b"["):
        # JSON parsed from the bytes (orjson checks the UTF-8 itself): no decoded copy of a large dump; anything it
        # refuses takes the text path below, as before
        doc = jsonio.loads_utf8(data)
        if doc is not None:
            return [doc] if not isinstance(doc, list) else doc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise DraError(f"{path}: not UTF-8 text") from None
    del data
    stripped = text.lstrip()
    if stripped.startswith("{") or stripped.startswith("["):
        try:
            doc = jsonio.loads(text)
            return [doc] if not isinstance(doc, list) else doc
        except json.JSONDecodeError:
            pass  # maybe YAML flow style; fall through
    import yaml

    from kubectl_dra import yamlio

    try:
        return yamlio.load_all(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or "invalid YAML"
        raise DraError(f"{path}:{where}: {problem}") from None
    except RecursionError:
        raise DraError(f"{path}: YAML nested too deeply") from None


def _flatten(doc, origin: str, out: list):
    if not isinstance(doc, dict):
        raise DraError(f"{origin}: expected a Kubernetes object (a mapping), got {type(doc).__name__}")
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
        for item in doc["items"]:
            if isinstance(item, dict) and "kind" not in item and kind != "List":
                item = dict(item, kind=kind[: -len("List")], apiVersion=doc.get("apiVersion", ""))
            if _plain_object(item):
                out.append(item)  # what the call below would decide, without the call (dumps hold 20,000 items)
            else:
                _flatten(item, origin, out)
        return
    if not isinstance(kind, str) or not kind:
        raise DraError(f"{origin}: object has no kind")
    meta = doc.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta.get("name"):
        raise DraError(f"{origin}: {kind} has no metadata.name")
    out.append(doc)


def _plain_object(item) -> bool:
    """An object _flatten keeps as it is: a mapping with a kind that is no list and a name."""
    if type(item) is not dict:
        return False
    kind, meta = item.get("kind"), item.get("metadata")
    return (
        type(kind) is str
        and kind != ""
        and not kind.endswith("List")
        and type(meta) is dict
        and type(meta.get("name")) is str
        and meta["name"] != ""
    )


def load_files(paths, namespace: str | None, skip: frozenset = frozenset()) -> Snapshot:
    """Read every object; keep the kinds kubectl-dra understands, ignore the rest. A kubectl-dra bundle (`kubectl
    dra dump`) also restores what the cluster told at the time: its version, namespace, time and gaps.
    namespace: the -n given (None: the bundle's, else default; model/scope.py), the snapshot's namespace in every
    case. skip: kinds the command never reads."""
    from dataclasses import replace

    from kubectl_dra.gather.bundle import BUNDLE_API, read_header

    objs: list[dict] = []
    for path in _iter_paths(paths):
        for doc in _read_documents(path):
            _flatten(doc, str(path), objs)
    headers = [o for o in objs if o.get("kind") == "Bundle" and o.get("apiVersion") == BUNDLE_API]
    if len(headers) > 1:
        raise DraError("the input holds more than one kubectl-dra bundle: give one")
    meta = read_header(headers[0]) if headers else {}
    ns = base_namespace(namespace, meta.get("namespace"))
    snap = snapshot_from_objects(objs, ns, source="bundle" if meta else "files", skip=skip)
    return replace(snap, **dict(meta, namespace=ns))
