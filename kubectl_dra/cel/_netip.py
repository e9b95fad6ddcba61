"""Go net/netip ParseAddr / ParsePrefix acceptance and error texts (as wrapped by the Kubernetes
ip/cidr CEL libraries), returning Python ipaddress objects."""

from __future__ import annotations

import ipaddress


class NetipError(ValueError):
    pass


def goq(s: str) -> str:
    out = ['"']
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _addr_error(inp: str, msg: str, at: str | None = None) -> NetipError:
    text = f"ParseAddr({goq(inp)}): {msg}"
    if at:
        text += f" (at {goq(at)})"
    return NetipError(text)


def _ipv4_fields(inp: str, s: str) -> list[int]:
    val = pos = dig = 0
    fields = [0, 0, 0, 0]
    for i, c in enumerate(s):
        if "0" <= c <= "9":
            if dig == 1 and val == 0:
                raise _addr_error(inp, "IPv4 field has octet with leading zero")
            val = val * 10 + ord(c) - 48
            dig += 1
            if val > 255:
                raise _addr_error(inp, "IPv4 field has value >255")
        elif c == ".":
            if i == 0 or i == len(s) - 1 or s[i - 1] == ".":
                raise _addr_error(inp, "IPv4 field must have at least one digit", s[i:])
            if pos == 3:
                raise _addr_error(inp, "IPv4 address too long")
            fields[pos] = val
            pos += 1
            val = dig = 0
        else:
            raise _addr_error(inp, "unexpected character", s[i:])
    if pos < 3:
        raise _addr_error(inp, "IPv4 address too short")
    fields[3] = val
    return fields


def _parse_ipv6(inp: str) -> tuple[ipaddress.IPv6Address, str]:
    s, zone = inp, ""
    i = s.find("%")
    if i != -1:
        s, zone = s[:i], s[i + 1 :]
        if zone == "":
            raise _addr_error(inp, "zone must be a non-empty string")
    ip = [0] * 16
    ellipsis = -1
    if len(s) >= 2 and s[0] == ":" and s[1] == ":":
        ellipsis = 0
        s = s[2:]
        if not s:
            return ipaddress.IPv6Address(0), zone
    i = 0
    while i < 16:
        off = acc = 0
        while off < len(s):
            c = s[off]
            if "0" <= c <= "9":
                acc = (acc << 4) + ord(c) - 48
            elif "a" <= c <= "f":
                acc = (acc << 4) + ord(c) - 87
            elif "A" <= c <= "F":
                acc = (acc << 4) + ord(c) - 55
            else:
                break
            if off > 3:
                raise _addr_error(inp, "each group must have 4 or less digits", s)
            if acc > 0xFFFF:
                raise _addr_error(inp, "IPv6 field has value >=2^16", s)
            off += 1
        if off == 0:
            raise _addr_error(inp, "each colon-separated field must have at least one digit", s)
        if off < len(s) and s[off] == ".":
            if ellipsis < 0 and i != 12:
                raise _addr_error(inp, "embedded IPv4 address must replace the final 2 fields of the address", s)
            if i + 4 > 16:
                raise _addr_error(inp, "too many hex fields to fit an embedded IPv4 at the end of the address", s)
            ip[i : i + 4] = _ipv4_fields(inp, s)
            s = ""
            i += 4
            break
        ip[i] = acc >> 8
        ip[i + 1] = acc & 0xFF
        i += 2
        s = s[off:]
        if not s:
            break
        if s[0] != ":":
            raise _addr_error(inp, "unexpected character, want colon", s)
        if len(s) == 1:
            raise _addr_error(inp, "colon must be followed by more characters", s)
        s = s[1:]
        if s[0] == ":":
            if ellipsis >= 0:
                raise _addr_error(inp, "multiple :: in address", s)
            ellipsis = i
            s = s[1:]
            if not s:
                break
    if s:
        raise _addr_error(inp, "trailing garbage after address", s)
    if i < 16:
        if ellipsis < 0:
            raise _addr_error(inp, "address string too short")
        n = 16 - i
        ip = ip[:ellipsis] + [0] * n + ip[ellipsis:i]
    elif ellipsis >= 0:
        raise _addr_error(inp, "the :: must expand to at least one field of zeros")
    return ipaddress.IPv6Address(bytes(ip)), zone


def parse_addr(s: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, str]:
    """netip.ParseAddr: (address, zone)."""
    for c in s:
        if c == ".":
            return ipaddress.IPv4Address(bytes(_ipv4_fields(s, s))), ""
        if c == ":":
            return _parse_ipv6(s)
        if c == "%":
            raise _addr_error(s, "missing IPv6 address")
    raise _addr_error(s, "unable to parse IP")


def parse_prefix(s: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    """netip.ParsePrefix: (address, bits)."""

    def err(msg: str) -> NetipError:
        return NetipError(f"netip.ParsePrefix({goq(s)}): {msg}")

    i = s.rfind("/")
    if i < 0:
        raise err("no '/'")
    try:
        ip, zone = parse_addr(s[:i])
    except NetipError as e:
        raise err(str(e)) from None
    if ip.version == 6 and zone:
        raise err("IPv6 zones cannot be present in a prefix")
    bits_str = s[i + 1 :]
    if len(bits_str) > 1 and not ("1" <= bits_str[0] <= "9"):
        raise err(f"bad bits after slash: {goq(bits_str)}")
    body = bits_str[1:] if bits_str[:1] in "+-" else bits_str
    if not body or not body.isascii() or not body.isdigit():
        raise err(f"bad bits after slash: {goq(bits_str)}")
    bits = int(bits_str)
    if bits < 0 or bits > (128 if ip.version == 6 else 32):
        raise err("prefix length out of range")
    return ip, bits


def is_4in6(ip) -> bool:
    return ip.version == 6 and ip.ipv4_mapped is not None
