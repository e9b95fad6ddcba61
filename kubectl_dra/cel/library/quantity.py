"""Kubernetes' quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go)."""

from __future__ import annotations

from typing import Any

from kubectl_dra import quantity as qlib

from .values import cel_error, compare, qmsg, qval

_QMSG_CACHE: dict[str, Any] = {}


def f_quantity(s: str) -> Any:
    m = _QMSG_CACHE.get(s)
    if m is not None:
        return m
    try:
        m = qmsg(qlib.parse(s))
    except qlib.QuantityError as e:
        raise cel_error(str(e)) from None
    if len(_QMSG_CACHE) < 10_000:
        _QMSG_CACHE[s] = m
    return m


def f_is_quantity(s: str) -> bool:
    return qlib.is_quantity(s)


def f_sign(q: Any) -> int:
    return qlib.sign(qval(q))


def f_is_integer(q: Any) -> bool:
    return qlib.as_int64(qval(q)) is not None


def f_as_integer(q: Any) -> int:
    v = qlib.as_int64(qval(q))
    if v is None:
        raise cel_error("cannot convert value to integer")
    return v


def f_as_float(q: Any) -> float:
    return qlib.as_approximate_float(qval(q))


def f_add_q(a: Any, b: Any) -> Any:
    return qmsg(qlib.add(qval(a), qval(b)))


def f_add_i(a: Any, b: int) -> Any:
    return qmsg(qlib.add(qval(a), qlib.from_int(b)))


def f_sub_q(a: Any, b: Any) -> Any:
    return qmsg(qlib.sub(qval(a), qval(b)))


def f_sub_i(a: Any, b: int) -> Any:
    return qmsg(qlib.sub(qval(a), qlib.from_int(b)))


def f_quantity_equal(a: Any, b: Any) -> bool:
    """Quantity == Quantity is numeric (Cmp), independent of the representation."""
    return qlib.cmp(qval(a), qval(b)) == 0


def f_compare_to(a: Any, b: Any) -> int:
    return compare(a, b)


def f_is_greater(a: Any, b: Any) -> bool:
    return compare(a, b) > 0


def f_is_less(a: Any, b: Any) -> bool:
    return compare(a, b) < 0
