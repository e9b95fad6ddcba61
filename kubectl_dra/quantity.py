"""Kubernetes resource.Quantity (k8s.io/apimachinery/pkg/api/resource), one Go-faithful implementation shared by
the allocator and the CEL quantity library: ParseQuantity (the int64Amount/inf.Dec representation, which decides
isInteger/asInteger and the rounding to nano units), add/sub, comparison and asApproximateFloat, reproduced from
the Go source.

A quantity is ``("i", value, scale)`` (int64Amount: value * 10**scale) or ``("d", unscaled, scale)``
(inf.Dec: unscaled * 10**-scale).  ``encode``/``decode`` turn it into the string stored in the
``kubernetes.Quantity`` protobuf message. ``parse_quantity`` is the exact value of an object's quantity field as the
API decodes it (Quantity.UnmarshalJSON: surrounding whitespace trimmed, then ParseQuantity).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

_SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT = f"quantities must match the regular expression '{_SPLIT_RE}'"
ERR_SUFFIX = "unable to parse quantity's suffix"
ERR_NUMERIC = "unable to parse numeric part of quantity"

_DEC = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BIN = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_DIGITS = set("0123456789")
_SUFFIX_CHARS = set("eEinumkKMGTP")
MAX_INT64_FACTORS = 18
NANO = -9


class QuantityError(ValueError):
    pass


def _parse_string(s: str):
    """parseQuantityString: (positive, value, num, denom, suffix)."""
    positive = True
    pos, end = 0, len(s)
    if pos < end and s[0] in "+-":
        positive = s[0] == "+"
        pos += 1
    while True:  # strip leading zeros
        if pos >= end:
            return positive, "0", "0", "", ""
        if s[pos] == "0":
            pos += 1
        else:
            break
    i = pos
    while i < end and s[i] in _DIGITS:
        i += 1
    num = s[pos:i]
    if i >= end:
        return positive, s, num or "0", "", ""
    pos = i
    if not num:
        num = "0"
    denom = ""
    if pos < end and s[pos] == ".":
        pos += 1
        i = pos
        while i < end and s[i] in _DIGITS:
            i += 1
        denom = s[pos:i]
        if i >= end:
            return positive, s, num, denom, ""
        pos = i
    value = s[:pos]
    suffix_start = pos
    i = pos
    while True:
        if i >= end:
            return positive, value, num, denom, s[suffix_start:]
        if s[i] not in _SUFFIX_CHARS:
            pos = i
            break
        i += 1
    if pos < end and s[pos] in "+-":
        pos += 1
    i = pos
    while True:
        if i >= end:
            return positive, value, num, denom, s[suffix_start:]
        if s[i] not in _DIGITS:
            raise QuantityError(ERR_FORMAT)
        i += 1


def _interpret(suffix: str):
    """(base, exponent, format) or None."""
    if suffix in _DEC:
        return 10, _DEC[suffix], "DecimalSI"
    if suffix in _BIN:
        return 2, _BIN[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE":
        rest = suffix[1:]
        body = rest[1:] if rest[:1] in "+-" else rest
        if not body or not body.isdigit() or not body.isascii():
            return None
        e = int(rest)
        if not INT64_MIN <= e <= INT64_MAX:
            return None
        e = (e + 2**31) % 2**32 - 2**31  # int32(parsed)
        return 10, e, "DecimalExponent"
    return None


def _dec_from_string(value: str) -> tuple[int, int] | None:
    """inf.Dec.SetString for "[+-]digits[.digits]": (unscaled, scale)."""
    sign = 1
    v = value
    if v[:1] in "+-":
        sign = -1 if v[0] == "-" else 1
        v = v[1:]
    if not v or v.count(".") > 1:
        return None
    whole, _, frac = v.partition(".")
    digits = whole + frac
    if not digits or not all(c in _DIGITS for c in digits):
        return None
    return sign * int(digits), len(frac)


def parse(s: str) -> tuple:
    """resource.ParseQuantity."""
    if not s:
        raise QuantityError(ERR_FORMAT)
    if s == "0":
        return ("i", 0, 0)
    positive, value, num, denom, suf = _parse_string(s)
    interp = _interpret(suf)
    if interp is None:
        raise QuantityError(ERR_SUFFIX)
    base, exponent, fmt = interp
    precision = 0
    scale = 0
    mantissa = 1
    if fmt in ("DecimalExponent", "DecimalSI"):
        scale = exponent
        precision = MAX_INT64_FACTORS - (len(num) + len(denom))
    else:
        scale = 0
        if exponent >= 0 and len(denom) == 0:
            mantissa = 1 << exponent
            precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        else:
            precision = -1
    if precision >= 0:
        scale -= len(denom)
        if scale >= NANO:
            shifted = num + denom
            v = int(shifted)
            if v > INT64_MAX:
                raise QuantityError(ERR_NUMERIC)
            result = v * mantissa
            if INT64_MIN <= result <= INT64_MAX:
                return ("i", result if positive else -result, scale)
    dec = _dec_from_string(value)
    if dec is None:
        raise QuantityError(ERR_NUMERIC)
    unscaled, dscale = dec
    if base == 10:
        dscale = dscale - exponent
    else:
        unscaled = unscaled * (1 << exponent)
    sign = -1 if unscaled < 0 else 1
    unscaled = abs(unscaled)
    if unscaled != 0:
        unscaled, dscale = _round_up(unscaled, dscale, 9)
    if fmt == "BinarySI" and Fraction(unscaled, 10**dscale) > INT64_MAX:
        unscaled, dscale = INT64_MAX, 0
    return ("d", sign * unscaled, dscale)


def _round_up(unscaled: int, scale: int, to: int) -> tuple[int, int]:
    """inf.Dec.Round(x, to, RoundUp) for non-negative unscaled."""
    if scale <= to:
        return unscaled * 10 ** (to - scale), to
    div = 10 ** (scale - to)
    q, r = divmod(unscaled, div)
    return (q + 1 if r else q), to


def value(q: tuple) -> Fraction:
    kind, v, sc = q
    if kind == "i":
        return Fraction(v) * (Fraction(10) ** sc)
    return Fraction(v, 1) / (Fraction(10) ** sc)


def encode(q: tuple) -> str:
    return f"{q[0]}:{q[1]}:{q[2]}"


def decode(text: str) -> tuple:
    kind, v, sc = text.split(":")
    return (kind, int(v), int(sc))


def is_quantity(s: str) -> bool:
    try:
        parse(s)
    except QuantityError:
        return False
    return True


def _positive_scale(v: int, scale: int) -> int | None:
    r = v * 10**scale
    return r if INT64_MIN <= r <= INT64_MAX else None


def as_int64(q: tuple) -> int | None:
    """Quantity.AsInt64: only int64Amount with scale >= 0 that fits."""
    kind, v, sc = q
    if kind == "d":
        return None
    if sc == 0:
        return v
    if sc < 0:
        return None
    return _positive_scale(v, sc)


def sign(q: tuple) -> int:
    return (q[1] > 0) - (q[1] < 0)


def _to_dec(q: tuple) -> tuple:
    if q[0] == "d":
        return q
    return ("d", q[1], -q[2])


def _dec_add(a: tuple, b: tuple) -> tuple:
    sa, sb = a[2], b[2]
    s = max(sa, sb)
    return ("d", a[1] * 10 ** (s - sa) + b[1] * 10 ** (s - sb), s)


def _int_add(a: tuple, b: tuple) -> tuple | None:
    """int64Amount.Add; None when it would overflow (the caller falls back to inf.Dec)."""
    av, asc = a[1], a[2]
    bv, bsc = b[1], b[2]
    if bv == 0:
        return a
    if av == 0:
        return ("i", bv, bsc)
    if asc == bsc:
        c = av + bv
        return ("i", c, asc) if INT64_MIN <= c <= INT64_MAX else None
    if asc > bsc:
        c = _positive_scale(av, asc - bsc)
        if c is None:
            return None
        c += bv
        return ("i", c, bsc) if INT64_MIN <= c <= INT64_MAX else None
    c = _positive_scale(bv, bsc - asc)
    if c is None:
        return None
    c = av + c
    return ("i", c, asc) if INT64_MIN <= c <= INT64_MAX else None


def add(a: tuple, b: tuple) -> tuple:
    if a[0] == "i" and b[0] == "i":
        r = _int_add(a, b)
        if r is not None:
            return r
    return _dec_add(_to_dec(a), _to_dec(b))


def sub(a: tuple, b: tuple) -> tuple:
    if a[0] == "i" and b[0] == "i":
        r = _int_add(a, ("i", -b[1], b[2]))
        if r is not None:
            return r
    nb = _to_dec(b)
    return _dec_add(_to_dec(a), ("d", -nb[1], nb[2]))


def from_int(v: int) -> tuple:
    """resource.NewQuantity(v, DecimalExponent)."""
    return ("i", v, 0)


def cmp(a: tuple, b: tuple) -> int:
    x, y = value(a), value(b)
    return (x > y) - (x < y)


_POS32 = [float(f"1e{32 * k}") for k in range(10)]
_NEG32 = [float(f"1e-{32 * k}") for k in range(11)]
_TAB = [float(f"1e{k}") for k in range(32)]


def _pow10(n: int) -> float:
    """Go math.Pow10."""
    if 0 <= n <= 308:
        return _POS32[n // 32] * _TAB[n % 32]
    if -323 <= n <= 0:
        return _NEG32[(-n) // 32] / _TAB[(-n) % 32]
    return float("inf") if n > 0 else 0.0


def as_approximate_float(q: tuple) -> float:
    kind, v, sc = q
    exponent = sc if kind == "i" else -sc
    try:
        base = float(v)
    except OverflowError:
        base = float("inf") if v > 0 else float("-inf")
    if exponent == 0:
        return base
    return base * _pow10(exponent)


@lru_cache(maxsize=4096)
def parse_quantity(text) -> Fraction:
    """The exact value of a quantity field (Quantity.UnmarshalJSON: TrimSpace, then ParseQuantity); raises
    QuantityError if malformed. A JSON number is read as its decimal text."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise QuantityError(ERR_FORMAT)
    if isinstance(text, int):
        return Fraction(text)
    s = repr(text) if isinstance(text, float) else text
    return value(parse(s.strip()))


_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL_SCALE = {"m": Fraction(1, 10**3), "u": Fraction(1, 10**6), "n": Fraction(1, 10**9)}


def format_quantity(value: Fraction) -> str:
    """A canonical, human-readable spelling (binary suffix when exact, else decimal)."""
    if value.denominator == 1:
        n = value.numerator
        if n != 0:
            for suffix, mult in sorted(_BINARY.items(), key=lambda kv: -kv[1]):
                if n % mult == 0:
                    return f"{n // mult}{suffix}"
        return str(n)
    for suffix in ("m", "u", "n"):
        scaled = value / _DECIMAL_SCALE[suffix]
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    return str(float(value))
