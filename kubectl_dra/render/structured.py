"""JSON and YAML from one serialisation (Report.to_dict), so they cannot disagree."""

from __future__ import annotations

from fractions import Fraction

from kubectl_dra import jsonio
from kubectl_dra.quantity import format_quantity


def _default(o):
    if isinstance(o, Fraction):
        return format_quantity(o)
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    return str(o)


def plain(report) -> dict:
    """The report as plain JSON-compatible data."""
    return jsonio.loads(jsonio.dumps(report.to_dict(), default=_default, indent=False))


def to_json_utf8(report) -> bytes:
    return jsonio.dumps_utf8(report.to_dict(), default=_default) + b"\n"


def _yaml(data) -> str:
    """YAML with the dumper that quotes every string Kubernetes would read as something else (yamlio/kube.py)."""
    import yaml

    from kubectl_dra.yamlio.kube import dumper

    return yaml.dump(data, Dumper=dumper(), sort_keys=False, allow_unicode=True, width=120)


def to_yaml(report) -> str:
    return _yaml(plain(report))


def _list(reports) -> dict:
    from kubectl_dra.findings.model import SCHEMA_VERSION

    return {"apiVersion": SCHEMA_VERSION, "kind": "List", "items": [r.to_dict() for r in reports]}


def list_to_json(reports) -> str:
    return jsonio.dumps(_list(reports), default=_default) + "\n"


def list_to_yaml(reports) -> str:
    return _yaml(jsonio.loads(jsonio.dumps(_list(reports), default=_default, indent=False)))


def data_to(data: dict, fmt: str) -> str:
    """Any plain document (a scan, an inventory) as JSON or YAML, the same way a Report is written."""
    if fmt == "json":
        return jsonio.dumps(data, default=_default) + "\n"
    return _yaml(jsonio.loads(jsonio.dumps(data, default=_default, indent=False)))
