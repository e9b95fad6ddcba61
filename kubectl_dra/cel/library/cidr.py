"""Kubernetes' CIDR library (k8s.io/apiserver/pkg/cel/library/cidr.go) on a port of Go's net/netip."""

from __future__ import annotations

import ipaddress
from typing import Any

from .. import _netip
from .._netip import goq
from .ip import ip_of, parse_ip
from .values import CelFunctionError, Types, cel_error


def _parse_cidr(s: str):
    """k8s parseCIDR on Go netip.ParsePrefix: (address, bits)."""
    try:
        ip, bits = _netip.parse_prefix(s)
    except _netip.NetipError as e:
        raise cel_error(
            "network address parse error during conversion from string: "
            f"network address parse error during conversion from string: {e}"
        ) from None
    if _netip.is_4in6(ip):
        raise cel_error(f"IPv4-mapped IPv6 address {goq(s)} is not allowed")
    return ip, bits


def _cidr_of(m: Any):
    ip_s, _, bits = m.v.rpartition("/")
    return ipaddress.ip_address(ip_s), int(bits)


def f_cidr(s: str) -> Any:
    ip, bits = _parse_cidr(s)
    return Types.CIDR(v=f"{ip}/{bits}")


def f_is_cidr(s: str) -> bool:
    try:
        _parse_cidr(s)
    except CelFunctionError:
        return False
    return True


def _network(ip, bits):
    return ipaddress.ip_network(f"{ip}/{bits}", strict=False)


def f_contains_ip(c: Any, x: Any) -> bool:
    ip, bits = _cidr_of(c)
    other = parse_ip(x) if isinstance(x, str) else ip_of(x)
    return other.version == ip.version and other in _network(ip, bits)


def f_contains_cidr(c: Any, x: Any) -> bool:
    ip, bits = _cidr_of(c)
    if isinstance(x, str):
        oip, obits = _parse_cidr(x)
    else:
        oip, obits = _cidr_of(x)
    if oip.version != ip.version:
        return False
    return bits <= obits and oip in _network(ip, bits)


def f_cidr_ip(c: Any) -> Any:
    return Types.IP(v=str(_cidr_of(c)[0]))


def f_cidr_masked(c: Any) -> Any:
    ip, bits = _cidr_of(c)
    return Types.CIDR(v=f"{_network(ip, bits).network_address}/{bits}")


def f_cidr_is_mask(c: Any) -> bool:
    """Go: cidr.Prefix == cidr.Prefix.Masked() (no bits set after the prefix length)."""
    ip, bits = _cidr_of(c)
    return ip == _network(ip, bits).network_address


def f_prefix_length(c: Any) -> int:
    return _cidr_of(c)[1]
