from fractions import Fraction

import pytest

from shared.model.quantity import QuantityError, format_milli_cpu, milli_value, parse_quantity, value


@pytest.mark.parametrize(
    ("text", "exact", "units", "millis"),
    [
        ("100m", Fraction(1, 10), 1, 100),
        ("1.5", Fraction(3, 2), 2, 1500),
        ("1Gi", Fraction(2**30), 2**30, 2**30 * 1000),
        ("500M", Fraction(500 * 10**6), 500 * 10**6, 500 * 10**9),
        ("1e3", Fraction(1000), 1000, 10**6),
        ("0.1", Fraction(1, 10), 1, 100),
        ("5Ki", Fraction(5120), 5120, 5120000),
        ("1E-3", Fraction(1, 1000), 1, 1),
        (".5", Fraction(1, 2), 1, 500),
        ("+2", Fraction(2), 2, 2000),
        ("-1", Fraction(-1), -1, -1000),
        ("1n", Fraction(1, 10**9), 1, 1),
        ("2u", Fraction(2, 10**6), 1, 1),
        ("3k", Fraction(3000), 3000, 3 * 10**6),
        ("1Ei", Fraction(2**60), 2**60, 2**60 * 1000),
        (3, Fraction(3), 3, 3000),
        (0.25, Fraction(1, 4), 1, 250),
    ],
    ids=lambda v: str(v),
)
def test_parses_like_kubernetes(text: str, exact: Fraction, units: int, millis: int) -> None:
    assert parse_quantity(text) == exact
    assert value(text) == units
    assert milli_value(text) == millis


@pytest.mark.parametrize("text", ["", "abc", "1.2.3", "1Qi", "1 Gi", "--1", "1e", "Gi"])
def test_rejects_malformed(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_format_milli_cpu() -> None:
    assert format_milli_cpu(2000) == "2"
    assert format_milli_cpu(1500) == "1500m"
