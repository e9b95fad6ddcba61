"""Kubernetes resource.Quantity parsing and arithmetic (exact), as used by the CEL quantity library.

Values are kept as exact ``fractions.Fraction`` numbers. ``canonical()`` gives one string per value,
which is what the ``kubernetes.Quantity`` protobuf message stores, so CEL's field-wise message
equality is numeric equality (``quantity("1Gi") == quantity("1024Mi")``).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_REGEX_TEXT = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT = f"quantities must match the regular expression '{_REGEX_TEXT}'"
ERR_SUFFIX = "unable to parse quantity's suffix"
ERR_NUMERIC = "unable to parse numeric part of quantity"

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
            "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
            "P": Fraction(10**15), "E": Fraction(10**18)}
_NUMBER = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$")
_EXP = re.compile(r"^[eE][+-]?[0-9]+$")
_NANO = Fraction(1, 10**9)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class QuantityError(ValueError):
    pass


def parse(text: str) -> Fraction:
    """Parse like k8s.io/apimachinery resource.ParseQuantity (value only)."""
    if not text:
        raise QuantityError(ERR_FORMAT)
    # split the numeric part from the suffix the way ParseQuantity's parseQuantityString does
    i = 0
    n = len(text)
    if i < n and text[i] in "+-":
        i += 1
    while i < n and (text[i].isdigit() and text[i].isascii() or text[i] == "."):
        i += 1
    number, suffix = text[:i], text[i:]
    if not number or number in "+-" or not _NUMBER.match(number):
        if not re.match(r"^[+-]?[0-9.]+$", number or "x"):
            raise QuantityError(ERR_FORMAT)
        raise QuantityError(ERR_NUMERIC)
    if suffix in _BINARY:
        mult = Fraction(_BINARY[suffix])
    elif suffix in _DECIMAL:
        mult = _DECIMAL[suffix]
    elif _EXP.match(suffix):
        e = int(suffix[1:])
        if abs(e) > 10**6:
            raise QuantityError(ERR_SUFFIX)
        mult = Fraction(10) ** e
    else:
        if not re.match(r"^[eEinumkKMGTP]*[-+]?[0-9]*$", suffix):
            raise QuantityError(ERR_FORMAT)
        raise QuantityError(ERR_SUFFIX)
    value = Fraction(number.lstrip("+") if number not in (".",) else "0") * mult
    # ParseQuantity rounds values with sub-nano precision up (away from zero) to nano units.
    if (value / _NANO).denominator != 1:
        scaled = value / _NANO
        value = Fraction(math.ceil(scaled) if scaled > 0 else math.floor(scaled)) * _NANO
    return value


def canonical(value: Fraction) -> str:
    """A unique string per numeric value ("num/den" in lowest terms)."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator}/{value.denominator}"


def from_canonical(text: str) -> Fraction:
    return Fraction(text)


def is_quantity(text: str) -> bool:
    try:
        parse(text)
    except QuantityError:
        return False
    return True


def as_int64(value: Fraction) -> int | None:
    if value.denominator != 1 or not INT64_MIN <= value.numerator <= INT64_MAX:
        return None
    return value.numerator


def sign(value: Fraction) -> int:
    return (value > 0) - (value < 0)
