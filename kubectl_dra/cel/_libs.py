"""Kubernetes CEL libraries (quantity, semver, lists, regex, URLs, IP/CIDR, DRA ``includes``)
implemented as Python functions for cel-cpp.

cel-cpp keys runtime overloads by argument *kind* and all messages share one kind, so every
function name gets exactly one implementation per kind signature: the typed overloads the checker
needs are declared without an implementation, plus one hidden overload on the never-constructed
``kubernetes.ImplDispatch`` message (or DYN) that carries the implementation, which dispatches on
the Python class.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from kubectl_dra import quantity as qlib

from . import _goturl, _netip
from . import _semver as slib


class CelFunctionError(Exception):
    """Raised by a library implementation; becomes a CEL error value with this text."""


NO_SUCH_OVERLOAD = "no such overload"


def _goq(s: str) -> str:
    return _netip._goq(s)


def _err(msg: str) -> CelFunctionError:
    return CelFunctionError(msg)


class Types:
    """Late-bound protobuf message classes (built in environment.py)."""

    Q: Any = None
    S: Any = None
    URL: Any = None
    IP: Any = None
    CIDR: Any = None
    INVALID: Any = None  # 1.38's stand-in for an attribute value that did not convert (_lazy.py)


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


# ---------------------------------------------------------------- quantity
_QMSG_CACHE: dict[str, Any] = {}


def f_quantity(s: str) -> Any:
    m = _QMSG_CACHE.get(s)
    if m is not None:
        return m
    try:
        m = qmsg(qlib.parse(s))
    except qlib.QuantityError as e:
        raise _err(str(e)) from None
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
        raise _err("cannot convert value to integer")
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


def _cmp_any(a: Any, b: Any) -> int:
    ta, tb = type(a), type(b)
    if ta is not tb:
        raise _err(NO_SUCH_OVERLOAD)
    if ta is Types.Q:
        return qlib.cmp(qval(a), qval(b))
    if ta is Types.S:
        return slib.compare(sval(a), sval(b))
    raise _err(NO_SUCH_OVERLOAD)


def f_compare_to(a: Any, b: Any) -> int:
    return _cmp_any(a, b)


def f_is_greater(a: Any, b: Any) -> bool:
    return _cmp_any(a, b) > 0


def f_is_less(a: Any, b: Any) -> bool:
    return _cmp_any(a, b) < 0


# ---------------------------------------------------------------- semver
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
        raise _err(str(e)) from None
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


# ---------------------------------------------------------------- equality helper (CEL semantics)
def cel_equal(a: Any, b: Any) -> bool:
    """CEL heterogeneous equality for Python-converted values; Semver/Quantity vs other: error."""
    ta, tb = type(a), type(b)
    msg = (Types.Q, Types.S)
    if ta in msg or tb in msg:
        if ta is not tb:
            raise _err(NO_SUCH_OVERLOAD)
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


def _less(a: Any, b: Any) -> bool:
    ta, tb = type(a), type(b)
    num = (int, float)
    if ta in num and tb in num and ta is not bool and tb is not bool:
        return a < b
    if ta is not tb or ta in (list, dict):
        raise _err(NO_SUCH_OVERLOAD)
    if ta in (Types.Q, Types.S):
        return _cmp_any(a, b) < 0
    return a < b


# ---------------------------------------------------------------- k8s lists library
def f_is_sorted(lst: list) -> bool:
    for x, y in zip(lst, lst[1:]):
        if _less(y, x):
            return False
    return True


def f_sum(lst: list) -> Any:
    if not lst:
        return 0
    total = lst[0]
    for x in lst[1:]:
        total = total + x
    if isinstance(total, int) and not -(2**63) <= total < 2**63:
        raise _err("integer overflow")
    return total


def f_min(lst: list) -> Any:
    if not lst:
        raise _err("min called on empty list")
    best = lst[0]
    for x in lst[1:]:
        if _less(x, best):
            best = x
    return best


def f_max(lst: list) -> Any:
    if not lst:
        raise _err("max called on empty list")
    best = lst[0]
    for x in lst[1:]:
        if _less(best, x):
            best = x
    return best


# cel-go ext strings (v2 as used by Kubernetes), ported rune for rune (Python str = code points).
def make_index_of_str(new_celgo: bool):
    def f(s: str, sub: str, offset: int = 0) -> int:
        if sub == "" and new_celgo:
            if offset < 0:
                raise _err(f"index out of range: {offset}")
            return min(offset, len(s))
        return f_index_of_str(s, sub, offset)

    return f


def make_last_index_of_str(new_celgo: bool):
    def f(s: str, sub: str, offset: int | None = None) -> int:
        if sub == "" and new_celgo and offset is not None:
            if offset < 0:
                raise _err(f"index out of range: {offset}")
            return min(offset, len(s))
        return f_last_index_of_str(s, sub, offset)

    return f


MAX_RANGE = 1_000_000  # lists.range(1000000) already exceeds Kubernetes' cost limit


def make_lists_range(new_celgo: bool):
    def f(n: int) -> list:
        if n < 0 and new_celgo:
            raise _err(f"lists.range: size must be non-negative, got {n}")
        if n > MAX_RANGE:
            raise _err("operation cancelled: actual cost limit exceeded")
        return list(range(n)) if n > 0 else []

    return f


def f_index_of_str(s: str, sub: str, offset: int = 0) -> int:
    if sub == "":
        return offset
    if offset < 0:
        raise _err(f"index out of range: {offset}")
    if offset >= len(s):
        return -1
    return s.find(sub, offset)


def f_last_index_of_str(s: str, sub: str, offset: int | None = None) -> int:
    if offset is None:
        if sub == "":
            return len(s)
        if len(sub) > len(s):
            return -1
        offset = len(s) - 1
    if sub == "":
        return offset
    if offset < 0:
        raise _err(f"index out of range: {offset}")
    if offset >= len(s):
        return -1
    if offset > len(s) - len(sub):
        offset = len(s) - len(sub)
    for i in range(offset, -1, -1):
        if s.startswith(sub, i):
            return i
    return -1


def f_char_at(s: str, i: int) -> str:
    if i < 0 or i > len(s):
        raise _err(f"index out of range: {i}")
    return "" if i == len(s) else s[i]


def f_substring(s: str, start: int, end: int | None = None) -> str:
    if end is None:
        if start < 0 or start > len(s):
            raise _err(f"index out of range: {start}")
        return s[start:]
    if start > end:
        raise _err(f"invalid substring range. start: {start}, end: {end}")
    if start < 0 or start > len(s):
        raise _err(f"index out of range: {start}")
    if end < 0 or end > len(s):
        raise _err(f"index out of range: {end}")
    return s[start:end]


def f_lists_range(n: int) -> list:
    """ext lists lists.range (a negative count gives an empty list)."""
    return list(range(n)) if n > 0 else []


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


# ---------------------------------------------------------------- DRA includes (1.36+)
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
                raise _err(f"'includes' function cannot be applied to lists longer than {MAX_INCLUDES} values")
            if _equal_true(item, x):
                return True
        return False
    return _equal_true(target, x)


# ---------------------------------------------------------------- regex (k8s find/findAll on RE2)
# Patterns run on cel-cpp's own RE2 (regex extension), so syntax and linear-time matching are RE2's,
# like Go's regexp.  A small separate cel-cpp environment is evaluated from inside the callback.
_RE2_CODES = {
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": "invalid named capture",
}


class _Regex:
    progs: dict | None = None
    errors: dict[str, str | None] = {}

    @classmethod
    def _programs(cls) -> dict:
        if cls.progs is None:
            from cel_expr_python import cel

            env = cel.NewEnv(
                config=cel.NewEnvConfigFromYaml("name: re2\nextensions:\n  - name: optional\n  - name: regex\n"),
                variables={"s": cel.Type.STRING, "p": cel.Type.STRING},
            )
            cls.progs = {
                "matches": env.compile("s.matches(p)"),
                "extract": env.compile('regex.extract(s, p).orValue("\\u0000none")'),
                "extractAll": env.compile("regex.extractAll(s, p)"),
            }
        return cls.progs

    @classmethod
    def run(cls, name: str, s: str, p: str):
        v = cls._programs()[name].eval(data={"s": s, "p": p})
        if v.type().name() == "ERROR":
            raise _err(_go_regex_error(str(v.value()), p))
        return v.plain_value()


def _go_regex_error(raw: str, pattern: str) -> str:
    msg = re.sub(r"^[A-Z_]+: ", "", raw)
    msg = msg.removeprefix("invalid regular expression: ")
    for code, go in _RE2_CODES.items():
        if msg.startswith(code + ": ") or msg == code:
            arg = msg[len(code) + 2 :] if msg.startswith(code + ": ") else ""
            return f"error parsing regexp: {go}: `{arg}`"
    return f"error parsing regexp: {msg}"


def validate_re2(pattern: str) -> str | None:
    """None if RE2 accepts the pattern, else Go's regexp error text."""
    if pattern in _Regex.errors:
        return _Regex.errors[pattern]
    try:
        _Regex.run("matches", "", pattern)
        err = None
    except CelFunctionError as e:
        err = str(e)
    if len(_Regex.errors) < 1000:
        _Regex.errors[pattern] = err
    return err


def _non_capturing(p: str) -> str:
    """Turn every capturing group into a non-capturing one (k8s find returns the whole match)."""
    out = []
    i, n = 0, len(p)
    in_class = False
    while i < n:
        c = p[i]
        if c == "\\":
            out.append(p[i : i + 2])
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            i += 1
            if i < n and p[i] == "^":
                out.append("^")
                i += 1
            if i < n and p[i] == "]":
                out.append("]")
                i += 1
            continue
        if c == "(":
            if p.startswith("(?P<", i) or (
                p.startswith("(?<", i) and not p.startswith("(?<=", i) and not p.startswith("(?<!", i)
            ):
                j = p.find(">", i)
                if j != -1:
                    out.append("(?:")
                    i = j + 1
                    continue
            if p.startswith("(?", i):
                out.append(c)
                i += 1
                continue
            out.append("(?:")
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def f_find(s: str, pattern: str) -> str:
    err = validate_re2(pattern)
    if err:
        raise _err(err)
    v = _Regex.run("extract", s, _non_capturing(pattern))
    return "" if v == "\u0000none" else v


_PY_RE_CACHE: dict[str, Any] = {}
_POSIX = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7F",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1F\\x7F",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}


def _python_re(pattern: str):
    """Python re equivalent of an (already RE2-validated) pattern, or None when a construct has no
    faithful translation (Unicode classes, \\Q..\\E, ungreedy flag, negated POSIX classes)."""
    hit = _PY_RE_CACHE.get(pattern, False)
    if hit is not False:
        return hit
    rx = None
    if not any(t in pattern for t in ("\\p", "\\P", "\\Q", "\\C", "(?U", "[:^")) and not re.search(
        r"\(\?[a-zA-Z]*U", pattern
    ):
        out, i, n, in_class = [], 0, len(pattern), False
        multiline = bool(re.search(r"\(\?[a-zA-Z]*m", pattern))
        while i < n:
            c = pattern[i]
            if c == "\\" and i + 1 < n:
                nxt = pattern[i + 1]
                out.append("\\Z" if nxt == "z" else pattern[i : i + 2])
                i += 2
                continue
            if in_class:
                m = re.match(r"\[:([a-z]+):\]", pattern[i:])
                if m and m.group(1) in _POSIX:
                    out.append(_POSIX[m.group(1)])
                    i += m.end()
                    continue
                if c == "]":
                    in_class = False
                out.append(c)
                i += 1
                continue
            if c == "[":
                in_class = True
                out.append(c)
                i += 1
                if i < n and pattern[i] == "^":
                    out.append("^")
                    i += 1
                if i < n and pattern[i] == "]":
                    out.append("\\]")
                    i += 1
                continue
            if c == "$" and not multiline:
                out.append("\\Z")
                i += 1
                continue
            if pattern.startswith("(?<", i) and not pattern.startswith("(?<=", i) and not pattern.startswith("(?<!", i):
                out.append("(?P<")
                i += 3
                continue
            out.append(c)
            i += 1
        try:
            rx = re.compile("".join(out), re.ASCII)
        except re.error:
            rx = None
    if len(_PY_RE_CACHE) < 1000:
        _PY_RE_CACHE[pattern] = rx
    return rx


def _go_find_all(rx, s: str, n: int) -> list[str]:
    """regexp.FindAllString: no empty match right after a previous match."""
    out: list[str] = []
    pos, prev_end, end = 0, -1, len(s)
    limit = n if n >= 0 else end + 1
    while len(out) < limit and pos <= end:
        m = rx.search(s, pos)
        if m is None:
            break
        accept = True
        if m.end() == pos:
            if m.start() == prev_end:
                accept = False
            pos += 1
        else:
            pos = m.end()
        prev_end = m.end()
        if accept:
            out.append(m.group(0))
    return out


def f_find_all(s: str, pattern: str, limit: int = -1) -> list:
    err = validate_re2(pattern)
    if err:
        raise _err(err)
    if limit == 0:
        return []
    # RE2 (linear time) unless the pattern can produce empty matches, whose handling in Go's
    # FindAllString the regex extension does not reproduce.
    empty_possible = any(t in pattern for t in ("\\b", "\\B", "^", "$")) or _Regex.run("matches", "", pattern)
    if empty_possible:
        rx = _python_re(pattern)
        if rx is not None:
            return _go_find_all(rx, s, limit)
    out = list(_Regex.run("extractAll", s, _non_capturing(pattern)))
    return out if limit < 0 else out[:limit]


# ---------------------------------------------------------------- URLs (k8s urls library)
def _parse_url(s: str):
    try:
        return _goturl.parse_request_uri(s)
    except _goturl.GoURLError as e:
        raise _err(f"URL parse error during conversion from string: {e}") from None


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


# ---------------------------------------------------------------- IP / CIDR (k8s ip + cidr libraries)
def _parse_ip(s: str):
    """k8s parseIPAddr on Go netip."""
    try:
        ip, zone = _netip.parse_addr(s)
    except _netip.NetipError as e:
        raise _err(f"IP Address {_goq(s)} parse error during conversion from string: {e}") from None
    if zone:
        raise _err(f"IP address {_goq(s)} with zone value is not allowed")
    if _netip.is_4in6(ip):
        raise _err(f"IPv4-mapped IPv6 address {_goq(s)} is not allowed")
    return ip


def f_ip(s: str) -> Any:
    return Types.IP(v=str(_parse_ip(s)))


def f_is_ip(s: str) -> bool:
    try:
        _parse_ip(s)
    except CelFunctionError:
        return False
    return True


def f_ip_is_canonical(s: str) -> bool:
    return str(_parse_ip(s)) == s


def _ip(m: Any):
    return ipaddress.ip_address(m.v)


def f_family(x: Any) -> int:
    return _ip(x).version


def f_ip_is_unspecified(x: Any) -> bool:
    return _ip(x).is_unspecified


def f_ip_is_loopback(x: Any) -> bool:
    ip = _ip(x)
    return ip.packed[0] == 127 if ip.version == 4 else int(ip) == 1


def _is_multicast(ip) -> bool:
    return (ip.packed[0] & 0xF0) == 0xE0 if ip.version == 4 else ip.packed[0] == 0xFF


def f_ip_is_link_local_multicast(x: Any) -> bool:
    ip = _ip(x)
    if ip.version == 4:
        return ip.packed[0] == 224 and ip.packed[1] == 0 and ip.packed[2] == 0
    return (int.from_bytes(ip.packed[:2], "big") & 0xFF0F) == 0xFF02


def f_ip_is_link_local_unicast(x: Any) -> bool:
    ip = _ip(x)
    if ip.version == 4:
        return ip.packed[0] == 169 and ip.packed[1] == 254
    return (int.from_bytes(ip.packed[:2], "big") & 0xFFC0) == 0xFE80


def f_ip_is_global_unicast(x: Any) -> bool:
    ip = _ip(x)
    if ip.version == 4 and (int(ip) == 0 or int(ip) == 0xFFFFFFFF):
        return False
    return (
        not (ip.version == 6 and int(ip) == 0)
        and not f_ip_is_loopback(x)
        and not _is_multicast(ip)
        and not f_ip_is_link_local_unicast(x)
    )


def _parse_cidr(s: str):
    """k8s parseCIDR on Go netip.ParsePrefix: (address, bits)."""
    try:
        ip, bits = _netip.parse_prefix(s)
    except _netip.NetipError as e:
        raise _err(
            "network address parse error during conversion from string: "
            f"network address parse error during conversion from string: {e}"
        ) from None
    if _netip.is_4in6(ip):
        raise _err(f"IPv4-mapped IPv6 address {_goq(s)} is not allowed")
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
    other = _parse_ip(x) if isinstance(x, str) else _ip(x)
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


def f_string_of(x: Any) -> str:
    return x.v
