"""Go net/url ParseRequestURI (as used by the Kubernetes URL CEL library), ported for acceptance,
accessors and error texts."""

from __future__ import annotations

from dataclasses import dataclass

from ._netip import goq

PATH, HOST, ZONE, QUERY_COMPONENT = "path", "host", "zone", "query"
_HEX = "0123456789abcdefABCDEF"


class GoURLError(ValueError):
    pass


def _should_escape(c: str, mode: str) -> bool:
    if c.isascii() and c.isalnum():
        return False
    if mode in (HOST, ZONE) and c in "!$&'()*+,;=:[]<>\"":
        return False
    if c in "-_.~":
        return False
    if c in "$&+,/:;=?@":
        if mode == PATH:
            return c == "?"
        if mode == QUERY_COMPONENT:
            return True
        return False
    return True


def _unescape(s: str, mode: str) -> str:
    b = s.encode("utf-8", "surrogatepass")
    i, out = 0, bytearray()
    while i < len(b):
        c = b[i]
        if c == 0x25:  # %
            if i + 2 >= len(b) or chr(b[i + 1]) not in _HEX or chr(b[i + 2]) not in _HEX:
                frag = b[i : i + 3].decode("utf-8", "replace")
                raise GoURLError(f"invalid URL escape {goq(frag)}")
            if mode == HOST and int(chr(b[i + 1]), 16) < 8 and b[i : i + 3] != b"%25":
                raise GoURLError(f"invalid URL escape {goq(b[i : i + 3].decode())}")
            out.append(int(b[i + 1 : i + 3].decode(), 16))
            i += 3
            continue
        if c == 0x2B and mode == QUERY_COMPONENT:
            out.append(0x20)
            i += 1
            continue
        if mode in (HOST, ZONE) and c < 0x80 and _should_escape(chr(c), mode):
            raise GoURLError(f"invalid character {goq(chr(c))} in host name")
        out.append(c)
        i += 1
    return out.decode("utf-8", "surrogateescape")


def _escape(s: str, mode: str) -> str:
    out = []
    for byte in s.encode("utf-8", "surrogateescape"):
        ch = chr(byte)
        if byte < 0x80 and not _should_escape(ch, mode):
            out.append(ch)
        elif ch == " " and mode == QUERY_COMPONENT:
            out.append("+")
        else:
            out.append(f"%{byte:02X}")
    return "".join(out)


def _valid_optional_port(port: str) -> bool:
    if port == "":
        return True
    if port[0] != ":":
        return False
    return all("0" <= c <= "9" for c in port[1:])


def _parse_host(host: str) -> str:
    if host.startswith("["):
        i = host.rfind("]")
        if i < 0:
            raise GoURLError("missing ']' in host")
        colon_port = host[i + 1 :]
        if not _valid_optional_port(colon_port):
            raise GoURLError(f"invalid port {goq(colon_port)} after host")
    else:
        i = host.rfind(":")
        if i != -1:
            colon_port = host[i:]
            if not _valid_optional_port(colon_port):
                raise GoURLError(f"invalid port {goq(colon_port)} after host")
    return _unescape(host, HOST)


@dataclass
class GoURL:
    scheme: str = ""
    opaque: str = ""
    host: str = ""
    path: str = ""
    raw_path: str = ""
    raw_query: str = ""

    def escaped_path(self) -> str:
        if self.raw_path and _valid_encoded(self.raw_path):
            try:
                if _unescape(self.raw_path, PATH) == self.path:
                    return self.raw_path
            except GoURLError:
                pass
        if self.path == "*":
            return "*"
        return _escape(self.path, PATH)

    def split_host_port(self) -> tuple[str, str]:
        host, port = self.host, ""
        colon = host.rfind(":")
        if colon != -1 and _valid_optional_port(host[colon:]):
            host, port = host[:colon], host[colon + 1 :]
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        return host, port

    def query(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        q = self.raw_query
        while q:
            key, _, q = q.partition("&")
            if ";" in key or key == "":
                continue
            k, _, v = key.partition("=")
            try:
                k = _unescape(k, QUERY_COMPONENT)
                v = _unescape(v, QUERY_COMPONENT)
            except GoURLError:
                continue
            out.setdefault(k, []).append(v)
        return out


def _valid_encoded(s: str) -> bool:
    for c in s:
        if c in "!$&'()*+,;=:@[]%":
            continue
        if _should_escape(c, PATH):
            return False
    return True


def _get_scheme(raw: str) -> tuple[str, str]:
    for i, c in enumerate(raw):
        if c.isascii() and c.isalpha():
            continue
        if c.isascii() and (c.isdigit() or c in "+-."):
            if i == 0:
                return "", raw
            continue
        if c == ":":
            if i == 0:
                raise GoURLError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return "", raw
    return "", raw


def parse_request_uri(raw: str) -> GoURL:
    try:
        return _parse(raw)
    except GoURLError as e:
        raise GoURLError(f"parse {goq(raw)}: {e}") from None


def _parse(raw: str) -> GoURL:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        raise GoURLError("net/url: invalid control character in URL")
    if raw == "":
        raise GoURLError("empty url")
    u = GoURL()
    if raw == "*":
        u.path = "*"
        return u
    scheme, rest = _get_scheme(raw)
    u.scheme = scheme.lower()
    if rest.endswith("?") and rest.count("?") == 1:
        rest = rest[:-1]
    else:
        rest, _, u.raw_query = rest.partition("?")
    if not rest.startswith("/"):
        if u.scheme:
            u.opaque = rest
            return u
        raise GoURLError("invalid URI for request")
    if u.scheme and rest.startswith("//"):
        authority, rest = rest[2:], ""
        i = authority.find("/")
        if i >= 0:
            authority, rest = authority[:i], authority[i:]
        at = authority.rfind("@")
        u.host = _parse_host(authority[at + 1 :] if at >= 0 else authority)
        if at >= 0:
            userinfo = authority[:at]
            for c in userinfo:
                if not (c.isascii() and (c.isalnum() or c in "-._:~!$&'()*+,;=%@")):
                    raise GoURLError("net/url: invalid userinfo")
    path = _unescape(rest, PATH)
    u.path = path
    u.raw_path = "" if _escape(path, PATH) == rest else rest
    return u
