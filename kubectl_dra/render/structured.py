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


def to_json(report) -> str:
    return jsonio.dumps(report.to_dict(), default=_default) + "\n"


def to_yaml(report) -> str:
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(plain(report), Dumper=dumper, sort_keys=False, allow_unicode=True, width=120)


def _list(reports) -> dict:
    from kubectl_dra.findings.model import SCHEMA_VERSION

    return {"apiVersion": SCHEMA_VERSION, "kind": "List", "items": [r.to_dict() for r in reports]}


def list_to_json(reports) -> str:
    return jsonio.dumps(_list(reports), default=_default) + "\n"


def list_to_yaml(reports) -> str:
    import yaml

    data = jsonio.loads(jsonio.dumps(_list(reports), default=_default, indent=False))
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True, width=120)


def data_to(data: dict, fmt: str) -> str:
    """Any plain document (a scan, an inventory) as JSON or YAML, the same way a Report is written."""
    if fmt == "json":
        return jsonio.dumps(data, default=_default) + "\n"
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(
        jsonio.loads(jsonio.dumps(data, default=_default, indent=False)),
        Dumper=dumper,
        sort_keys=False,
        allow_unicode=True,
        width=120,
    )
