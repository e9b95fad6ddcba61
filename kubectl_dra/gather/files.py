"""Offline input: YAML/JSON files or directories (multi-document YAML, `kind: List`, `kubectl get -o yaml`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from kubectl_dra.errors import DraError
from kubectl_dra.gather.normalize import normalize_event, to_v1
from kubectl_dra.gather.snapshot import Snapshot

_EXTENSIONS = (".yaml", ".yml", ".json")
MAX_FILE_BYTES = 256 * 1024 * 1024

_BUCKETS = {
    "Pod": "pods",
    "ResourceClaim": "claims",
    "ResourceClaimTemplate": "templates",
    "DeviceClass": "classes",
    "ResourceSlice": "slices",
    "Node": "nodes",
    "Event": "events",
    "DeviceTaintRule": "taint_rules",
}


def _loader():
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader), yaml


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
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DraError(f"{path}: not UTF-8 text") from None
    except OSError as e:
        raise DraError(f"{path}: {e.strerror or e}") from None
    stripped = text.lstrip()
    if stripped.startswith("{") or stripped.startswith("["):
        try:
            doc = json.loads(text)
            return [doc] if not isinstance(doc, list) else doc
        except json.JSONDecodeError:
            pass  # maybe YAML flow style; fall through
    loader, yaml = _loader()
    try:
        return [d for d in yaml.load_all(text, Loader=loader) if d is not None]
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
            _flatten(item, origin, out)
        return
    if not isinstance(kind, str) or not kind:
        raise DraError(f"{origin}: object has no kind")
    meta = doc.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta.get("name"):
        raise DraError(f"{origin}: {kind} has no metadata.name")
    out.append(doc)


def load_files(paths, namespace: str) -> Snapshot:
    """Read every object; keep the kinds kubectl-dra understands, ignore the rest (Deployments...)."""
    objs: list[dict] = []
    for path in _iter_paths(paths):
        for doc in _read_documents(path):
            _flatten(doc, str(path), objs)
    return snapshot_from_objects(objs, namespace, source="files")


def snapshot_from_objects(objs, namespace: str, source: str = "files") -> Snapshot:
    buckets: dict[str, list] = {v: [] for v in _BUCKETS.values()}
    seen: set = set()
    for obj in objs:
        kind = obj.get("kind")
        bucket = _BUCKETS.get(kind)
        if bucket is None:
            continue
        _check_shape(obj)
        obj = to_v1(obj)
        meta = obj.setdefault("metadata", {})
        if kind in ("Pod", "ResourceClaim", "ResourceClaimTemplate", "Event") and not meta.get("namespace"):
            meta = obj["metadata"] = dict(meta, namespace=namespace)
        key = (kind, meta.get("namespace") or "", meta.get("name"))
        if key in seen and kind != "Event":
            raise DraError(f"{kind} {'/'.join(k for k in key[1:] if k)} appears twice in the input")
        seen.add(key)
        if kind == "Event":
            buckets[bucket].append(normalize_event(obj))
        else:
            buckets[bucket].append(obj)
    return Snapshot(**{k: tuple(v) for k, v in buckets.items()}, source=source)


_DICT_FIELDS = {"spec", "status", "metadata"}


def _check_shape(obj: dict) -> None:
    """Reject objects whose structure is wrong where analysis walks it, with a one-line error."""
    name = f"{obj.get('kind')} {obj['metadata'].get('name')}"
    for f in _DICT_FIELDS:
        if f in obj and obj[f] is not None and not isinstance(obj[f], dict):
            raise DraError(f"{name}: .{f} must be a mapping")
    kind = obj.get("kind")
    spec = obj.get("spec") or {}
    if kind == "ResourceSlice":
        _expect_list(spec, "devices", name)
        for i, d in enumerate(spec.get("devices") or []):
            if not isinstance(d, dict) or not isinstance(d.get("name", ""), str):
                raise DraError(f"{name}: .spec.devices[{i}] must be a mapping with a name")
            for m in ("attributes", "capacity", "basic"):
                if m in d and d[m] is not None and not isinstance(d[m], dict):
                    raise DraError(f"{name}: .spec.devices[{i}].{m} must be a mapping")
            for aname, a in (d.get("attributes") or {}).items():
                if not isinstance(a, dict):
                    raise DraError(f"{name}: device {d.get('name')} attribute {aname} must be a mapping")
            for cname, c in (d.get("capacity") or {}).items():
                if not isinstance(c, dict):
                    raise DraError(f"{name}: device {d.get('name')} capacity {cname} must be a mapping")
        if not isinstance(spec.get("driver", ""), str):
            raise DraError(f"{name}: .spec.driver must be a string")
        if "pool" in spec and not isinstance(spec["pool"], dict):
            raise DraError(f"{name}: .spec.pool must be a mapping")
    elif kind in ("ResourceClaim", "ResourceClaimTemplate"):
        inner = spec.get("spec") if kind == "ResourceClaimTemplate" else spec
        if inner is not None and not isinstance(inner, dict):
            raise DraError(f"{name}: .spec.spec must be a mapping")
        devices = (inner or {}).get("devices") or {}
        if not isinstance(devices, dict):
            raise DraError(f"{name}: .spec.devices must be a mapping")
        _expect_list(devices, "requests", name)
        for i, r in enumerate(devices.get("requests") or []):
            if not isinstance(r, dict):
                raise DraError(f"{name}: request #{i} must be a mapping")
            for sel_holder in [r.get("exactly") or r] + list(r.get("firstAvailable") or []):
                if not isinstance(sel_holder, dict):
                    raise DraError(f"{name}: request {r.get('name')} has a malformed subrequest")
                for s in sel_holder.get("selectors") or []:
                    expr = ((s or {}).get("cel") or {}).get("expression") if isinstance(s, dict) else None
                    if expr is not None and not isinstance(expr, str):
                        raise DraError(f"{name}: request {r.get('name')}: CEL expression must be a string")
    elif kind == "DeviceClass":
        _expect_list(spec, "selectors", name)
    elif kind == "Pod":
        _expect_list(spec, "resourceClaims", name)


def _expect_list(d: dict, key: str, name: str) -> None:
    if key in d and d[key] is not None and not isinstance(d[key], list):
        raise DraError(f"{name}: .{key} must be a list")


def default_namespace() -> str:
    return os.environ.get("KUBECTL_DRA_NAMESPACE") or "default"
