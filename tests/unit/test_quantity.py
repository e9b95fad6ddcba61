"""One Go-faithful quantity parser (kubectl_dra/quantity.py) for object fields and CEL (issue 11): the cases where the
allocator's former parser and CEL's disagreed, and what Go's ParseQuantity / Quantity.UnmarshalJSON do with them."""

from fractions import Fraction

import pytest

from kubectl_dra.cel import CelEnvironment
from kubectl_dra.quantity import QuantityError, format_quantity, parse, parse_quantity, value


@pytest.mark.parametrize(
    "text, exact",
    [
        ("1e200", Fraction(10) ** 200),  # inf.Dec: no exponent limit (the former field parser refused > e100)
        ("1234567890123456789012", Fraction(1234567890123456789012)),  # 22 digits: past int64, inf.Dec path
        ("0.0000000001", Fraction(1, 10**9)),  # rounded up to 1n (ParseQuantity rounds to nano units)
        ("16Ei", Fraction(2**63 - 1)),  # BinarySI is capped at MaxInt64
        ("-16Ei", -Fraction(2**63 - 1)),
        ("1.5Gi", Fraction(3 * 2**29)),
        ("100m", Fraction(1, 10)),
    ],
)
def test_fields_and_cel_read_a_quantity_the_same_way(text, exact):
    assert parse_quantity(text) == exact
    assert value(parse(text)) == exact
    env = CelEnvironment(version=(1, 37))
    res = env.compile(f'quantity("{text}").compareTo(quantity("{text}")) == 0').evaluate(
        {"driver": "d", "name": "n", "attributes": {}, "capacity": {}, "allowMultipleAllocations": False}
    )
    assert res.error is None and res.value is True


def test_whitespace_is_trimmed_for_fields_as_unmarshaljson_does_but_not_in_cel():
    assert parse_quantity(" 1 ") == 1  # Quantity.UnmarshalJSON: strings.TrimSpace, then ParseQuantity
    with pytest.raises(QuantityError):
        parse(" 1")  # quantity(" 1") in CEL: ParseQuantity alone
    res = (
        CelEnvironment(version=(1, 37))
        .compile('quantity(" 1").isInteger()')
        .evaluate({"driver": "d", "name": "n", "attributes": {}, "capacity": {}, "allowMultipleAllocations": False})
    )
    assert res.error is not None


@pytest.mark.parametrize("bad", ["", "1.2.3", "1Qi", "--1", "1e", True, None])
def test_malformed_quantities_are_refused(bad):
    with pytest.raises(QuantityError):
        parse_quantity(bad)


def test_format_quantity_round_trips():
    for text in ("40Gi", "1500m", "3", "7k"):
        assert parse_quantity(format_quantity(parse_quantity(text))) == parse_quantity(text)
