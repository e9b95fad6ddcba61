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


_SI = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))


def api_quantity(v) -> str:
    """A number of a quantity field as the API writes it: `16Gi`, `10G`, `500m`, never `17179869184`."""
    if isinstance(v, int) and not isinstance(v, bool) and v:
        # binary or decimal suffix, whichever is exact and shorter (the allocator no longer knows which was written)
        spellings = [format_quantity(Fraction(v))]
        spellings += [f"{v // mult}{suffix}" for suffix, mult in _SI if v % mult == 0][:1]
        return min(spellings, key=len)
    if isinstance(v, Fraction):
        return format_quantity(v)
    return v if isinstance(v, str) else str(v)


def _quantities(data):
    """The allocator keeps consumed capacity as exact numbers; every `consumedCapacity` map is written as the API
    writes one (quantities as strings)."""
    if isinstance(data, dict):
        return {
            k: (
                {n: api_quantity(q) for n, q in v.items()}
                if k == "consumedCapacity" and isinstance(v, dict)
                else _quantities(v)
            )
            for k, v in data.items()
        }
    if isinstance(data, (list, tuple)):
        return [_quantities(x) for x in data]
    return data


_CONSUMED = b'"consumedCapacity"'


def _dumped(data, indent: bool) -> bytes:
    """data as JSON with every consumedCapacity written as quantities. Most reports have none (an explain's body
    holds a row per device: 40,000 of them on a large cluster), so the document is written first and walked for
    them only when the key occurs."""
    out = jsonio.dumps_utf8(data, default=_default, indent=indent)
    return jsonio.dumps_utf8(_quantities(data), default=_default, indent=indent) if _CONSUMED in out else out


def plain(report) -> dict:
    """The report as plain JSON-compatible data."""
    return jsonio.loads(_dumped(report.to_dict(), False))


def to_json_utf8(report) -> bytes:
    return _dumped(report.to_dict(), True) + b"\n"


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
    return data_to(_list(reports), "json")


def list_to_yaml(reports) -> str:
    return data_to(_list(reports), "yaml")


def data_to(data: dict, fmt: str) -> str:
    """Any plain document (a scan, an inventory) as JSON or YAML, the same way a Report is written."""
    if fmt == "json":
        return _dumped(data, True).decode("utf-8") + "\n"
    return _yaml(jsonio.loads(_dumped(data, False)))
