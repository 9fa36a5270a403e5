"""Arithmetic done by finkg, not by the reader: a fixed set of operations over cited operands.

A numeric answer is an `Operation` over `Operand`s, each taken from one evidence block (its
id, the figure as written there, its value, unit, scale and period); `compute` evaluates
it exactly in `Decimal` arithmetic. No expression is parsed or evaluated from text: the
operation is one of `OPERATIONS`, checked with its operand count, so nothing a reader or a
document writes can run as code.

- sum: a + b + ...; average: their mean;
- difference: a - b (the later period first when the operands are a period apart: the
  change from 2018 to 2019 is 2019 - 2018);
- ratio: a / b, shown as a percentage when asked for one ("as a percentage of");
- percent change: (b - a) / a x 100, from the earlier a to the later b;
- growth rate: compound growth per period from the first operand to the last,
  ((last / first) ^ (1 / periods) - 1) x 100, periods being the years between them (else
  the operands' count less one); with two operands a year apart it is the percent change.

>>> a = Operand("C1", "716", Decimal("716"), period="2018")
>>> b = Operand("C1", "668", Decimal("668"), period="2019")
>>> compute("percent change", [a, b]).quantize(Decimal("0.01"))
Decimal('-6.70')
>>> compute("difference", [b, a])
Decimal('-48')
>>> str(Calculation("difference", (b, a), compute("difference", [b, a])))
'difference: 668 [C1, 2019] - 716 [C1, 2018] = -48'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, DivisionByZero, InvalidOperation, localcontext

from finkg.errors import InputError

OPERATIONS = ("sum", "difference", "ratio", "percent change", "average", "growth rate")
MODEL_ID = "finkg-calculator"  # the model id of a run whose answer finkg computed
ARITY = {  # (fewest, most) operands
    "sum": (2, 12),
    "difference": (2, 2),
    "ratio": (2, 2),
    "percent change": (2, 2),
    "average": (2, 12),
    "growth rate": (2, 12),
}
PERCENT_RESULT = frozenset({"percent change", "growth rate"})


@dataclass(frozen=True)
class Operand:
    """One figure taken from one evidence block."""

    id: str  # the block (chunk) it is cited from
    written: str  # the figure as the block writes it
    value: Decimal  # its value as written (signed; the scale is not applied)
    unit: str = ""  # "%", "USD", ... as the block states it
    scale: str = ""  # thousand, million, billion, as the block states it
    period: str = ""  # the column or period it belongs to ("2019")
    label: str = ""  # the row or line item ("Net sales")

    def __str__(self) -> str:
        where = ", ".join(x for x in (self.id, self.period) if x)
        return f"{self.written} [{where}]"


@dataclass(frozen=True)
class Calculation:
    operation: str
    operands: tuple[Operand, ...]
    result: Decimal
    percent: bool = False  # the result is a percentage (a ratio asked "as a percentage")

    def formatted(self, places: int = 2) -> str:
        """The result rounded to `places` decimals, with % where it is a percentage."""
        value = self.result.quantize(Decimal(1).scaleb(-places))
        text = f"{value:f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        pct = self.percent or self.operation in PERCENT_RESULT
        return f"{text}%" if pct else text

    def __str__(self) -> str:
        sign = {"sum": " + ", "difference": " - ", "ratio": " / "}.get(self.operation)
        if sign:
            shown = sign.join(map(str, self.operands))
        else:
            shown = f"{self.operation}({', '.join(map(str, self.operands))})"
        if self.operation == "ratio" and self.percent:
            shown += " x 100"
        return f"{self.operation}: {shown} = {self.formatted()}"


def compute(operation: str, operands: Sequence[Operand], *, percent: bool = False) -> Decimal:
    """The operation's exact value (module docstring); a wrong operation, a wrong number of
    operands or a division by zero is an InputError naming it."""
    if operation not in OPERATIONS:
        raise InputError(
            "unknown operation", field="operation", value=operation, hint=", ".join(OPERATIONS)
        )
    low, high = ARITY[operation]
    if not low <= len(operands) <= high:
        raise InputError(
            f"{operation} takes {low} to {high} operands",
            field="operands",
            value=len(operands),
        )
    x = [o.value for o in operands]
    try:
        with localcontext() as ctx:
            ctx.prec = 28
            if operation == "sum":
                return sum(x, Decimal(0))
            if operation == "average":
                return sum(x, Decimal(0)) / len(x)
            if operation == "difference":
                return x[0] - x[1]
            if operation == "ratio":
                return x[0] / x[1] * (100 if percent else 1)
            if operation == "percent change":
                return (x[1] - x[0]) / x[0] * 100
            periods = _years_apart(operands) or len(x) - 1
            if x[0] <= 0 or x[-1] < 0:
                raise InputError("growth needs a positive first value", field="operands")
            rate = math.pow(float(x[-1] / x[0]), 1.0 / periods) - 1.0
            return Decimal(repr(rate)) * 100
    except (DivisionByZero, InvalidOperation, ZeroDivisionError):
        raise InputError(f"{operation} divides by zero", field="operands", value=x) from None


def _years_apart(operands: Sequence[Operand]) -> int | None:
    try:
        first, last = int(operands[0].period[:4]), int(operands[-1].period[:4])
    except ValueError:
        return None
    return abs(last - first) or None


def calculate(operation: str, operands: Sequence[Operand], *, percent: bool = False) -> Calculation:
    """A checked `Calculation` (see `compute`)."""
    result = compute(operation, operands, percent=percent)
    return Calculation(operation, tuple(operands), result, percent and operation == "ratio")


__all__ = ["ARITY", "OPERATIONS", "Calculation", "Operand", "calculate", "compute"]
