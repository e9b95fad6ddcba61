"""A device's attributes and capacities converted into the engine's activation, as the Kubernetes CEL
environment converts them (versions, quantities, qualified names)."""

from __future__ import annotations

from typing import Any

from kubectl_dra import quantity as qlib

from . import _semver as slib


# ------------------------------------------------------------------------------ device conversion
class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()
SCALARS = ("int", "bool", "string", "version")
LISTS = ("ints", "bools", "strings", "versions")
_VERSION_OK: dict[str, str | None] = {}


def version_error(text: Any) -> str | None:
    if not isinstance(text, str):
        return "parse semantic version: Version string empty"
    err = _VERSION_OK.get(text, "")
    if err == "":
        try:
            slib.parse(text)
            err = None
        except slib.SemverError as e:
            err = f"parse semantic version: {e}"
        if len(_VERSION_OK) < 100_000:
            _VERSION_OK[text] = err
    return err


_SEMVER_CANON: dict[str, str] = {}
_QUANTITY_ENC: dict[str, str] = {}


def semver_canonical(text: str) -> str:
    out = _SEMVER_CANON.get(text)
    if out is None:
        out = slib.canonical(slib.parse(text))
        if len(_SEMVER_CANON) < 100_000:
            _SEMVER_CANON[text] = out
    return out


def quantity_encoded(text: str) -> str:
    out = _QUANTITY_ENC.get(text)
    if out is None:
        out = qlib.encode(qlib.parse(text))
        if len(_QUANTITY_ENC) < 100_000:
            _QUANTITY_ENC[text] = out
    return out


def split_name(name: str, driver: str) -> tuple[str, str]:
    i = name.find("/")
    if i < 0:
        return driver, name
    return name[:i], name[i + 1 :]
