"""What the Kubernetes libraries share: the error a library function raises (a CEL error value with its text), the
message classes of the value types (kubernetes.Quantity, kubernetes.Semver, URL, net.IP, net.CIDR), and CEL's
equality and ordering over the values the engine hands to Python."""

from __future__ import annotations

from typing import Any

from kubectl_dra import quantity as qlib

from .. import _semver as slib


class CelFunctionError(Exception):
    """Raised by a library implementation; becomes a CEL error value with this text."""


NO_SUCH_OVERLOAD = "no such overload"


def cel_error(msg: str) -> CelFunctionError:
    return CelFunctionError(msg)


class Types:
    """The message classes, set by message_types() when the first engine is built (library code compares
    classes, so there is one set per process)."""

    Q: Any = None
    S: Any = None
    URL: Any = None
    IP: Any = None
    CIDR: Any = None
    INVALID: Any = None  # 1.38's stand-in for an attribute value that did not convert (_lazy.py)


# full names as in Kubernetes (net.IP / net.CIDR show up in cel-go error messages)
MESSAGE_NAMES = (
    "kubernetes.Quantity",
    "kubernetes.Semver",
    "kubernetes.URL",
    "net.IP",
    "net.CIDR",
    "kubernetes.ImplDispatch",
    "kubernetes.InvalidAttributeValue",  # 1.38: stand-in for an attribute value that did not convert
)
_POOL: tuple | None = None


def message_types():
    """One descriptor pool + message classes for the process (library code compares classes with Types)."""
    global _POOL
    if _POOL is None:
        from google.protobuf import (
            descriptor_pb2,
            descriptor_pool,
            message_factory,
        )

        pool = descriptor_pool.DescriptorPool()
        for package in ("kubernetes", "net"):
            fdp = descriptor_pb2.FileDescriptorProto(
                name=f"kubectl_dra_cel_{package}.proto", package=package, syntax="proto3"
            )
            for full in MESSAGE_NAMES:
                if full.split(".")[0] != package:
                    continue
                m = fdp.message_type.add(name=full.split(".")[1])
                m.field.add(
                    name="v",
                    number=1,
                    type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                    label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
                )
            pool.Add(fdp)
        classes = {
            n.split(".")[1]: message_factory.GetMessageClass(pool.FindMessageTypeByName(n)) for n in MESSAGE_NAMES
        }
        Types.Q, Types.S = classes["Quantity"], classes["Semver"]
        Types.URL, Types.IP, Types.CIDR = classes["URL"], classes["IP"], classes["CIDR"]
        Types.INVALID = classes["InvalidAttributeValue"]
        _POOL = (pool, classes)
    return _POOL


_QCACHE: dict[str, tuple] = {}
_SCACHE: dict[str, tuple] = {}


def qval(m: Any) -> tuple:
    """The quantity representation carried by a kubernetes.Quantity message."""
    s = m.v
    q = _QCACHE.get(s)
    if q is None:
        q = qlib.decode(s)
        if len(_QCACHE) < 100_000:
            _QCACHE[s] = q
    return q


def qmsg(q: tuple) -> Any:
    return Types.Q(v=qlib.encode(q))


def sval(m: Any) -> tuple:
    s = m.v
    v = _SCACHE.get(s)
    if v is None:
        v = slib.parse_canonical(s)
        if len(_SCACHE) < 100_000:
            _SCACHE[s] = v
    return v


def smsg(parsed: tuple) -> Any:
    return Types.S(v=slib.canonical(parsed))


def compare(a: Any, b: Any) -> int:
    ta, tb = type(a), type(b)
    if ta is not tb:
        raise cel_error(NO_SUCH_OVERLOAD)
    if ta is Types.Q:
        return qlib.cmp(qval(a), qval(b))
    if ta is Types.S:
        return slib.compare(sval(a), sval(b))
    raise cel_error(NO_SUCH_OVERLOAD)


def cel_equal(a: Any, b: Any) -> bool:
    """CEL heterogeneous equality for Python-converted values; Semver/Quantity vs other: error."""
    ta, tb = type(a), type(b)
    msg = (Types.Q, Types.S)
    if ta in msg or tb in msg:
        if ta is not tb:
            raise cel_error(NO_SUCH_OVERLOAD)
        if ta is Types.Q:
            return qlib.cmp(qval(a), qval(b)) == 0
        return a.v == b.v
    if ta is bool or tb is bool:
        return ta is tb and a == b
    num = (int, float)
    if ta in num and tb in num:
        return a == b
    if ta is not tb:
        return False
    if ta is list:
        return len(a) == len(b) and all(cel_equal(x, y) for x, y in zip(a, b))
    if ta is dict:
        if len(a) != len(b):
            return False
        for k, v in a.items():
            if k not in b or not cel_equal(v, b[k]):
                return False
        return True
    return a == b


def less(a: Any, b: Any) -> bool:
    ta, tb = type(a), type(b)
    num = (int, float)
    if ta in num and tb in num and ta is not bool and tb is not bool:
        return a < b
    if ta is not tb or ta in (list, dict):
        raise cel_error(NO_SUCH_OVERLOAD)
    if ta in (Types.Q, Types.S):
        return compare(a, b) < 0
    return a < b
