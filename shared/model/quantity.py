"""Kubernetes resource quantities, parsed exactly as apimachinery's `resource.Quantity`.

A quantity is `<sign><number><suffix>` where the suffix is a binary SI unit (Ki…Ei), a decimal
SI unit (n, u, m, "", k, M, G, T, P, E) or a decimal exponent (e3, E-2).  Values are kept as
exact fractions; `value()` and `milli_value()` round up as Kubernetes does (`Value()` and
`MilliValue()` both take the ceiling).
"""

from __future__ import annotations

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
_PATTERN = re.compile(
    r"^(?P<sign>[+-]?)(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<exp>[eE][+-]?[0-9]+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]?))$"
)


class QuantityError(ValueError):
    """The text is not a Kubernetes quantity."""


@lru_cache(maxsize=4096, typed=True)  # typed: True must not hit the cache entry of 1
def parse_quantity(text: str | int | float) -> Fraction:
    """The exact value of a quantity such as "500m", "1Gi", "1e3" or "0.1"."""
    if isinstance(text, bool):
        raise QuantityError(f"quantities must match the regular expression, got {text!r}")
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        return Fraction(repr(text))
    match = _PATTERN.match(text.strip())
    if match is None:
        raise QuantityError(
            f"quantities must match the regular expression "
            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got {text!r}"
        )
    number = Fraction(match["num"])
    if match["exp"] is not None:
        number *= Fraction(10) ** int(match["exp"][1:])
    else:
        suffix = match["suffix"] or ""
        number *= _BINARY.get(suffix) or _DECIMAL[suffix]
    return -number if match["sign"] == "-" else number


def _ceil(value: Fraction) -> int:
    return -((-value.numerator) // value.denominator)


@lru_cache(maxsize=4096, typed=True)
def value(text: str | int | float) -> int:
    """Whole units, rounded up (Quantity.Value)."""
    return _ceil(parse_quantity(text))


@lru_cache(maxsize=4096, typed=True)
def milli_value(text: str | int | float) -> int:
    """Thousandths of a unit, rounded up (Quantity.MilliValue): how cpu is counted."""
    return _ceil(parse_quantity(text) * 1000)


def format_milli_cpu(milli: int) -> str:
    """Render millicores the way kubectl shows cpu ("1", "500m")."""
    return f"{milli // 1000}" if milli % 1000 == 0 else f"{milli}m"
