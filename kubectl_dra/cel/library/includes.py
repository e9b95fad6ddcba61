"""DRA's ``includes`` (k8s.io/dynamic-resource-allocation/cel, 1.36+)."""

from __future__ import annotations

from typing import Any

from .values import CelFunctionError, cel_equal, cel_error

MAX_INCLUDES = 48


def _equal_true(a: Any, b: Any) -> bool:
    """`a.Equal(b) == types.True`: an error (Semver vs other type) just counts as "not equal"."""
    try:
        return cel_equal(a, b)
    except CelFunctionError:
        return False


def f_includes_limited(target: Any, x: Any) -> bool:
    return _includes(target, x, True)


def f_includes(target: Any, x: Any) -> bool:
    return _includes(target, x, False)


def _includes(target: Any, x: Any, limited: bool) -> bool:
    """dynamic-resource-allocation cel includesFunc.  v0.36.x stops after 48 items with
    "'includes' function cannot be applied to lists longer than 48 values" (only when the first 48
    did not match); v0.37.2 checks the whole list (both verified against the upstream oracle)."""
    if isinstance(target, list):
        for i, item in enumerate(target):
            if limited and i >= MAX_INCLUDES:
                raise cel_error(f"'includes' function cannot be applied to lists longer than {MAX_INCLUDES} values")
            if _equal_true(item, x):
                return True
        return False
    return _equal_true(target, x)
