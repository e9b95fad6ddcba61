"""Kubernetes' lists library (k8s.io/apiserver/pkg/cel/library/lists.go), and cel-go's ``lists.range``."""

from __future__ import annotations

from typing import Any

from .values import cel_equal, cel_error, less


def f_is_sorted(lst: list) -> bool:
    for x, y in zip(lst, lst[1:]):
        if less(y, x):
            return False
    return True


def f_sum(lst: list) -> Any:
    if not lst:
        return 0
    total = lst[0]
    for x in lst[1:]:
        total = total + x
    if isinstance(total, int) and not -(2**63) <= total < 2**63:
        raise cel_error("integer overflow")
    return total


def f_min(lst: list) -> Any:
    if not lst:
        raise cel_error("min called on empty list")
    best = lst[0]
    for x in lst[1:]:
        if less(x, best):
            best = x
    return best


def f_max(lst: list) -> Any:
    if not lst:
        raise cel_error("max called on empty list")
    best = lst[0]
    for x in lst[1:]:
        if less(best, x):
            best = x
    return best


MAX_RANGE = 1_000_000  # lists.range(1000000) already exceeds Kubernetes' cost limit


def make_lists_range(new_celgo: bool):
    def f(n: int) -> list:
        if n < 0 and new_celgo:
            raise cel_error(f"lists.range: size must be non-negative, got {n}")
        if n > MAX_RANGE:
            raise cel_error("operation cancelled: actual cost limit exceeded")
        return list(range(n)) if n > 0 else []

    return f


def f_index_of_list(lst: list, x: Any) -> int:
    for i, v in enumerate(lst):
        if cel_equal(v, x):
            return i
    return -1


def f_last_index_of_list(lst: list, x: Any) -> int:
    for i in range(len(lst) - 1, -1, -1):
        if cel_equal(lst[i], x):
            return i
    return -1
