"""Kubernetes' URL library (k8s.io/apiserver/pkg/cel/library/urls.go) on a port of Go's net/url."""

from __future__ import annotations

from typing import Any

from .. import _goturl
from .values import CelFunctionError, Types, cel_error


def _parse_url(s: str):
    try:
        return _goturl.parse_request_uri(s)
    except _goturl.GoURLError as e:
        raise cel_error(f"URL parse error during conversion from string: {e}") from None


def f_url(s: str) -> Any:
    _parse_url(s)
    return Types.URL(v=s)


def f_is_url(s: str) -> bool:
    try:
        _parse_url(s)
    except CelFunctionError:
        return False
    return True


def _url(u: Any):
    return _goturl.parse_request_uri(u.v)


def f_get_scheme(u: Any) -> str:
    return _url(u).scheme


def f_get_host(u: Any) -> str:
    return _url(u).host


def f_get_hostname(u: Any) -> str:
    return _url(u).split_host_port()[0]


def f_get_port(u: Any) -> str:
    return _url(u).split_host_port()[1]


def f_get_escaped_path(u: Any) -> str:
    return _url(u).escaped_path()


def f_get_query(u: Any) -> dict:
    return _url(u).query()
