"""Kubernetes' semver library (k8s.io/apiserver/pkg/cel/library/semverlib.go)."""

from __future__ import annotations

from typing import Any

from .. import _semver as slib
from .values import cel_error, smsg, sval


def _parse_semver(s: str, normalize: bool) -> tuple:
    if normalize:
        s = slib.normalize(s)
    return slib.parse(s)


_SMSG_CACHE: dict[tuple, Any] = {}


def f_semver(s: str, normalize: bool = False) -> Any:
    m = _SMSG_CACHE.get((s, normalize))
    if m is not None:
        return m
    try:
        m = smsg(_parse_semver(s, normalize))
    except slib.SemverError as e:
        raise cel_error(str(e)) from None
    if len(_SMSG_CACHE) < 10_000:
        _SMSG_CACHE[(s, normalize)] = m
    return m


def f_is_semver(s: str, normalize: bool = False) -> bool:
    try:
        _parse_semver(s, normalize)
    except slib.SemverError:
        return False
    return True


def f_major(v: Any) -> int:
    return sval(v)[0]


def f_minor(v: Any) -> int:
    return sval(v)[1]


def f_patch(v: Any) -> int:
    return sval(v)[2]
