"""Offline input: YAML/JSON files or directories (multi-document YAML, `kind: List`, `kubectl get -o yaml`)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from kubectl_dra import jsonio
from kubectl_dra.errors import DraError
from kubectl_dra.model.objects import snapshot_from_objects
from kubectl_dra.model.scope import base_namespace
from kubectl_dra.model.snapshot import Gap, Snapshot

_EXTENSIONS = (".yaml", ".yml", ".json")
MAX_FILE_BYTES = 256 * 1024 * 1024


STDIN = "-"
STDIN_NAME = "<stdin>"


def _reason(e: OSError) -> str:
    """An OSError as kubectl words it: the system's message in lower case ("permission denied")."""
    text = e.strerror or str(e)
    return text[:1].lower() + text[1:]


def expand_paths(paths) -> list:
    """The files to read, in order: each file as given, each directory's .yaml/.yml/.json files (recursively, in
    name order), "-" for stdin (once). Every failure is one DraError naming the path: it does not exist, it or a
    directory below it cannot be read, it holds no such file."""
    out: list = []
    for p in paths:
        p = str(p)
        if p == STDIN:
            if STDIN in out:
                raise DraError("- (stdin) can be read only once: give it once")
            out.append(STDIN)
            continue
        path = Path(p)
        try:
            is_dir = path.is_dir()
            exists = is_dir or path.exists()
        except OSError as e:
            raise DraError(f"{p}: cannot read: {_reason(e)}") from None
        if not exists:
            raise DraError(f"{p}: cannot read: no such file or directory")
        if not is_dir:
            out.append(path)
            continue
        found = []

        def refuse(e: OSError, top=p):
            raise DraError(f"{e.filename or top}: cannot read: {_reason(e)}")

        for root, dirs, files in os.walk(path, onerror=refuse):
            dirs.sort()
            for f in files:
                full = Path(root) / f
                if full.suffix.lower() not in _EXTENSIONS:
                    continue
                try:
                    if full.is_file():
                        found.append(full)
                except OSError as e:
                    raise DraError(f"{full}: cannot read: {_reason(e)}") from None
        if not found:
            raise DraError(f"{p}: directory has no .yaml, .yml or .json files")
        out.extend(sorted(found))
    return out


def input_name(path) -> str:
    """How messages name an input: the path as given, <stdin> for "-"."""
    return STDIN_NAME if str(path) == STDIN else str(path)


def read_bytes(path) -> bytes:
    """The bytes of a file, or of standard input for "-"; a failure is one DraError "PATH: cannot read: REASON"."""
    name = input_name(path)
    limit = MAX_FILE_BYTES
    try:
        if str(path) == STDIN:
            stream = getattr(sys.stdin, "buffer", None)
            if stream is None:  # a text stdin without bytes underneath (an embedding): its text, as UTF-8
                data = sys.stdin.read(limit + 1).encode("utf-8", "surrogateescape")
            else:
                data = stream.read(limit + 1)
        else:
            with open(path, "rb") as fh:
                if os.fstat(fh.fileno()).st_size > limit:
                    raise DraError(f"{name}: file is larger than {limit // (1024 * 1024)} MiB")
                data = fh.read(limit + 1)
    except OSError as e:
        raise DraError(f"{name}: cannot read: {_reason(e)}") from None
    except UnicodeError:
        raise DraError(f"{name}: not UTF-8 text") from None
    if len(data) > limit:
        raise DraError(f"{name}: file is larger than {limit // (1024 * 1024)} MiB")
    return data


def decode_text(data: bytes, name: str) -> str:
    """Input bytes as text: UTF-8 and no NUL (binary data, or UTF-16), else one DraError "NAME: not UTF-8 text"."""
    if b"\x00" in data:
        raise DraError(f"{name}: not UTF-8 text (binary data)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise DraError(f"{name}: not UTF-8 text") from None


def yaml_error(name: str, e) -> DraError:
    """A YAML parse error as every command words it: NAME:LINE:COLUMN: PROBLEM (as a compiler, and lint's findings)."""
    mark = getattr(e, "problem_mark", None)
    where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
    return DraError(f"{name}{where}: {getattr(e, 'problem', None) or 'invalid YAML'}")


def read_text(path) -> str:
    """A file (or "-", stdin) as text, with the messages of read_bytes and decode_text."""
    return decode_text(read_bytes(path), input_name(path))


def _read_documents(path):
    name = input_name(path)
    data = read_bytes(path)
    if data[:64].lstrip()[:15].lower() == b"<!doctype html>":  # kubectl dra report: the bundle it embeds
        from kubectl_dra.gather.bundle import from_html

        return [from_html(data, name)]
    if data[:64].lstrip()[:1] in (b"{", b"["):
        # JSON parsed from the bytes (orjson checks the UTF-8 itself): no decoded copy of a large dump; anything it
        # refuses takes the text path below, as before
        doc = jsonio.loads_utf8(data)
        if doc is not None:
            return [doc] if not isinstance(doc, list) else doc
    text = decode_text(data, name)
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
        raise yaml_error(name, e) from None
    except RecursionError:
        raise DraError(f"{name}: YAML nested too deeply") from None


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
        if isinstance(doc.get("items"), list):  # kubectl get -o yaml writes items before kind: List
            raise DraError(
                f"{origin}: a list without its kind: the input looks cut short (kubectl get -o yaml ends with kind: List)"
            )
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


# The kinds an answer reads that a plain `kubectl get` dump may leave out, with the resource its Gap names: a dump
# that holds no object of one of them is taken as one that did not ask for it (an empty list keeps no kind), so the
# answers that depend on it stay open (a Gap whose reason is "absent"). Nodes have their own rule (the nodes are
# inferred from the slices, DRA018); DaemonSets the driver piece's ("listed"). A bundle records what it read.
ABSENT_KINDS = (
    ("ResourceClaim", "claims", "resourceclaims.resource.k8s.io"),
    ("ResourceClaimTemplate", "templates", "resourceclaimtemplates.resource.k8s.io"),
    ("DeviceClass", "classes", "deviceclasses.resource.k8s.io"),
    ("ResourceSlice", "slices", "resourceslices.resource.k8s.io"),
    ("Event", "events", "events"),
)


def absent_gaps(snap: Snapshot, skip: frozenset = frozenset()) -> tuple:
    """A Gap (reason "absent") for each kind of ABSENT_KINDS the snapshot holds no object of (skip: kinds the command
    never reads). The message says what to add."""
    return tuple(
        Gap(
            "list",
            resource,
            None,
            "absent",
            f"the input holds no {kind} objects (add them: kubectl get {resource.split('.')[0]} -A -o yaml)",
        )
        for kind, field, resource in ABSENT_KINDS
        if kind not in skip and not getattr(snap, field)
    )


def load_files(
    paths, namespace: str | None, skip: frozenset = frozenset(), judged: bool = True, kept: list | None = None
) -> Snapshot:
    """Read every object; keep the kinds kubectl-dra understands, ignore the rest. A kubectl-dra bundle (`kubectl
    dra dump`) also restores what the cluster told at the time: its version, namespace, time and gaps.
    namespace: the -n given (None: the bundle's, else default; model/scope.py), the snapshot's namespace in every
    case. skip: kinds the command never reads. judged: the input is a cluster's objects that answers are judged
    on (not a manifest of one claim): the kinds it lacks are gaps (absent_gaps), unless it is a bundle. kept: a
    list to which every object is added as read (a bundle's header too; the report embeds them), each a copy of
    its top level, which the snapshot's making does not reach (it fills in a namespace by replacing metadata)."""
    from dataclasses import replace

    from kubectl_dra.gather.bundle import BUNDLE_API, read_header

    objs: list[dict] = []
    for path in expand_paths(paths):
        for doc in _read_documents(path):
            _flatten(doc, input_name(path), objs)
    if kept is not None:
        kept.extend(dict(o) for o in objs)
    headers = [o for o in objs if o.get("kind") == "Bundle" and o.get("apiVersion") == BUNDLE_API]
    if len(headers) > 1:
        raise DraError("the input holds more than one kubectl-dra bundle: give one")
    meta = read_header(headers[0]) if headers else {}
    ns = base_namespace(namespace, meta.get("namespace"))
    snap = snapshot_from_objects(objs, ns, source="bundle" if meta else "files", skip=skip)
    if not meta and judged:
        meta = {"gaps": absent_gaps(snap, skip)}
    return replace(snap, **dict(meta, namespace=ns))
