"""Checks shared by the search and the per-device explanation: taints, attribute lookup."""

from __future__ import annotations

from typing import Any

from kubectl_dra.analyze.nodes import tolerates
from kubectl_dra.features import Semantics


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
