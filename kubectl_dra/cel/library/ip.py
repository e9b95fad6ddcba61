"""Kubernetes' IP library (k8s.io/apiserver/pkg/cel/library/ip.go) on a port of Go's net/netip."""

from __future__ import annotations

import ipaddress
from typing import Any

from .. import _netip
from .._netip import goq
from .values import CelFunctionError, Types, cel_error


def parse_ip(s: str):
    """k8s parseIPAddr on Go netip."""
    try:
        ip, zone = _netip.parse_addr(s)
    except _netip.NetipError as e:
        raise cel_error(f"IP Address {goq(s)} parse error during conversion from string: {e}") from None
    if zone:
        raise cel_error(f"IP address {goq(s)} with zone value is not allowed")
    if _netip.is_4in6(ip):
        raise cel_error(f"IPv4-mapped IPv6 address {goq(s)} is not allowed")
    return ip


def f_ip(s: str) -> Any:
    return Types.IP(v=str(parse_ip(s)))


def f_is_ip(s: str) -> bool:
    try:
        parse_ip(s)
    except CelFunctionError:
        return False
    return True


def f_ip_is_canonical(s: str) -> bool:
    return str(parse_ip(s)) == s


def ip_of(m: Any):
    return ipaddress.ip_address(m.v)


def f_family(x: Any) -> int:
    return ip_of(x).version


def f_ip_is_unspecified(x: Any) -> bool:
    return ip_of(x).is_unspecified


def f_ip_is_loopback(x: Any) -> bool:
    ip = ip_of(x)
    return ip.packed[0] == 127 if ip.version == 4 else int(ip) == 1


def _is_multicast(ip) -> bool:
    return (ip.packed[0] & 0xF0) == 0xE0 if ip.version == 4 else ip.packed[0] == 0xFF


def f_ip_is_link_local_multicast(x: Any) -> bool:
    ip = ip_of(x)
    if ip.version == 4:
        return ip.packed[0] == 224 and ip.packed[1] == 0 and ip.packed[2] == 0
    return (int.from_bytes(ip.packed[:2], "big") & 0xFF0F) == 0xFF02


def f_ip_is_link_local_unicast(x: Any) -> bool:
    ip = ip_of(x)
    if ip.version == 4:
        return ip.packed[0] == 169 and ip.packed[1] == 254
    return (int.from_bytes(ip.packed[:2], "big") & 0xFFC0) == 0xFE80


def f_ip_is_global_unicast(x: Any) -> bool:
    ip = ip_of(x)
    if ip.version == 4 and (int(ip) == 0 or int(ip) == 0xFFFFFFFF):
        return False
    return (
        not (ip.version == 6 and int(ip) == 0)
        and not f_ip_is_loopback(x)
        and not _is_multicast(ip)
        and not f_ip_is_link_local_unicast(x)
    )


def f_string_of(x: Any) -> str:
    return x.v
