"""Kubernetes resource.Quantity, exactly: parsed into a Fraction so comparisons and sums never round.

Used by the allocator (counters, consumable capacity) and by the CEL quantity library.
Grammar (k8s.io/apimachinery/pkg/api/resource): <sign><digits>[.<digits>]<suffix> where the suffix is a
binary SI suffix (Ki..Ei), a decimal SI suffix (n u m "" k M G T P E) or a decimal exponent (e3, E-2).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_RE = re.compile(r"^([+-]?)(\d*)(?:\.(\d*))?(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d+))?$")


class QuantityError(ValueError):
    """The string is not a Kubernetes quantity."""


@lru_cache(maxsize=4096)
def parse_quantity(text: str) -> Fraction:
    """Return the exact value of a Kubernetes quantity string; raise QuantityError if malformed."""
    if not isinstance(text, str):
        if isinstance(text, bool):
            raise QuantityError(f"quantities must match the regular expression: {text!r}")
        if isinstance(text, int):
            return Fraction(text)
        raise QuantityError(f"quantities must match the regular expression: {text!r}")
    s = text.strip()
    m = _RE.match(s)
    if not s or not m or (not m.group(2) and not m.group(3)):
        raise QuantityError(
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
    sign, whole, frac, suffix, exponent = m.groups()
    digits = (whole or "") + (frac or "")
    value = Fraction(int(digits or "0"), 10 ** len(frac or ""))
    if exponent is not None:
        e = int(exponent)
        if abs(e) > 100:
            raise QuantityError("quantity exponent out of range")
        value *= Fraction(10) ** e
    elif suffix:
        value *= _BINARY.get(suffix) or _DECIMAL[suffix]
    return -value if sign == "-" else value


def quantity_value(text: str) -> int:
    """resource.Quantity.Value(): the value rounded up (away from zero) to an integer."""
    v = parse_quantity(text)
    return math.ceil(v) if v >= 0 else -math.ceil(-v)


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
        scaled = value / _DECIMAL[suffix]
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    return str(float(value))
