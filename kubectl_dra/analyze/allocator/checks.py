"""Checks shared by the search and the per-device explanation: taints, attribute lookup."""

from __future__ import annotations

from typing import Any

from kubectl_dra.features import Semantics
from kubectl_dra.model.nodes import tolerates


def untolerated_taint(device: dict, tolerations: list, sem: Semantics) -> dict | None:
    for taint in device.get("taints") or []:
        if not sem.behaviour.old_rules_1_34 and taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def lookup_attribute(device: dict, driver: str, name: str) -> dict | None:
    attrs = device.get("attributes") or {}
    if name in attrs:
        return attrs[name]
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return attrs.get(ident)


def attribute_value(attr: dict) -> tuple[str, Any] | None:
    for t in ("string", "int", "bool", "version"):
        if t in attr and attr[t] is not None:
            return t, attr[t]
    return None


def _attr_set(attr: dict) -> tuple[str, frozenset] | None:
    """attributeAsSet (1.37 experimental): a non-empty list, else a scalar as a one-element set."""
    for t in ("ints", "bools", "strings", "versions"):
        if attr.get(t):
            return t[:-1], frozenset(attr[t])
    v = attribute_value(attr)
    return None if v is None else (v[0], frozenset((v[1],)))


class UnsupportedAttribute(Exception):
    """1.38: a constraint met an attribute whose value the slice's conversion could not keep (or a list while the
    allocator has no ListTypeAttributes): the allocation aborts. The caller words the error."""


_SCALARS = ("int", "bool", "string", "version")
_LISTS = ("ints", "bools", "strings", "versions")


def converted_value(attr: dict, as_sets: bool):
    """1.38 attrValue (api/conversion.go) for a constraint: scalars before lists, a list only when non-empty, a
    version parsed once (compared without build metadata: semver Equals); returns (type, value) for a scalar,
    (type, frozenset) for a list when as_sets (a scalar then is a one-element set), or raises UnsupportedAttribute
    (no usable value, or a list without set semantics)."""
    from kubectl_dra.cel._semver import SemverError, parse

    def version(v):
        try:
            return parse(str(v))
        except SemverError:
            raise UnsupportedAttribute from None

    for t in _SCALARS:
        v = attr.get(t)
        if v is not None:
            v = version(v) if t == "version" else v
            return (t, frozenset((v,))) if as_sets else (t, v)
    for t in _LISTS:
        v = attr.get(t)
        if v:
            if not as_sets:
                raise UnsupportedAttribute
            return t[:-1], frozenset(version(x) for x in v) if t == "versions" else frozenset(v)
    raise UnsupportedAttribute
