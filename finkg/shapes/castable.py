"""The numbers Oxigraph can hold, so nothing finkg writes is a value its SPARQL cannot read.

A literal Oxigraph cannot cast to its datatype fails every shape check on it (the
datatype's well-formedness, each range comparison) and every query that reads it as a
number. The limits, probed on pyoxigraph 0.5 (`tests/test_screen.py` checks each bound,
the values beside it and generated lexical forms against Oxigraph's casts):

- xsd:integer is a signed 64-bit integer: -9223372036854775808 to 9223372036854775807;
- xsd:decimal is a signed 128-bit count of 10^-18: at most 18 digits after the point
  (trailing zeros aside) and a magnitude up to 170141183460469231731.687303715884105727
  (-...728 below zero).

>>> decimal_value("0.123456789012345678"), decimal_value("0.1234567890123456789")
(Decimal('0.123456789012345678'), None)
>>> integer_value("9223372036854775807"), integer_value("9223372036854775808")
(9223372036854775807, None)
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

INTEGER_MIN, INTEGER_MAX = -(2**63), 2**63 - 1
DECIMAL_PLACES = 18
DECIMAL_MAX = Decimal("170141183460469231731.687303715884105727")  # (2**127 - 1) / 10**18
DECIMAL_MIN = Decimal("-170141183460469231731.687303715884105728")  # -2**127 / 10**18

INTEGER = re.compile(r"[+-]?[0-9]+")
DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)")


def integer_value(text: str) -> int | None:
    """The xsd:integer `text` is, if Oxigraph can hold it; else None."""
    if INTEGER.fullmatch(text) is None:
        return None
    value = int(text)
    return value if INTEGER_MIN <= value <= INTEGER_MAX else None


def decimal_value(text: str) -> Decimal | None:
    """The xsd:decimal `text` is, if Oxigraph can hold it; else None."""
    if DECIMAL.fullmatch(text) is None:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:  # pragma: no cover (the pattern admits only plain numbers)
        return None
    return value if fits_decimal(value) else None


def fits_decimal(value: Decimal) -> bool:
    """Whether Oxigraph's xsd:decimal holds `value` exactly (finite, in range, 18 places)."""
    if not value.is_finite() or not DECIMAL_MIN <= value <= DECIMAL_MAX:
        return False
    return decimal_places(value) <= DECIMAL_PLACES


def decimal_places(value: Decimal) -> int:
    """Digits after the point, trailing zeros aside (`1.50` has 1)."""
    _sign, digits, exponent = value.as_tuple()  # exact: normalize() would round to 28 digits
    if not isinstance(exponent, int) or exponent >= 0 or not any(digits):
        return 0
    text = "".join(map(str, digits))
    return max(0, -exponent - (len(text) - len(text.rstrip("0"))))
