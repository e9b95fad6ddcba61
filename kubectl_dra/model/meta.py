"""Object metadata accessors shared by the analysis modules."""

from __future__ import annotations


def meta_of(o: dict) -> dict:
    return o.get("metadata") or {}


def name_of(o: dict) -> str:
    return meta_of(o).get("name", "")


def ns_of(o: dict) -> str:
    return meta_of(o).get("namespace", "") or ""
