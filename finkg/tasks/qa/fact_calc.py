"""A planned metric (`metric_question.Plan`) computed from statement facts, exactly, in
Decimal arithmetic: every operand a stored fact, cited by its IRI and page.

The tree is walked at the year asked: a line item reads its fact for its year
(`fact_book.FactBook.lookup`), an outflow (capex, dividends paid) by its magnitude;
`average` is the mean over the years of its span, `change` the later less the earlier,
`growth` the later over the earlier less one, `cagr` the compound annual growth; a name
reads its definition (the question's own before finkg's library). The result reads as the
plan says: a percentage x 100 (unless the definition multiplies by 100 itself), money in
the millions (or what the question asks), rounded half up to the decimals asked.

How sure finkg is (`status`):
- High: the question defines the metric or names a line item or a metric of the library
  whose definition is the textbook one, and every operand is a fact of the line item asked;
- Medium: a line item stood in for another (a fallback), or the library's definition is one
  of several in use (its `note`: the quick ratio's numerator, EBITDA's D&A);
both say what finkg read, so a reader of the answer can check it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, DivisionByZero, InvalidOperation, localcontext

from finkg.tasks.qa.definitions import Definition, library
from finkg.tasks.qa.fact_book import FactBook, Found
from finkg.tasks.qa.formula import Item, Node, Num, Op, Ref, Span
from finkg.tasks.qa.metric_question import Plan

MODEL_ID = "finkg-facts"  # the model id of a run whose answer finkg computed from facts
_SCALE_WORDS = {0: "", 3: " thousand", 6: " million", 9: " billion"}


class Missing(Exception):
    """An operand no stored fact gives: which line item, for which year (and statement)."""

    def __init__(self, what: str, year: int, kind: str | None = None) -> None:
        self.what, self.year, self.kind = what, year, kind
        where = f" in the {kind} statement" if kind else ""
        super().__init__(f"no statement fact for {what} in FY{year}{where}")


@dataclass(frozen=True)
class Operand:
    """One fact read into the computation, and the value it contributed."""

    found: Found
    year: int
    value: Decimal

    @property
    def text(self) -> str:
        f = self.found.fact
        instead = (
            f", standing in for {self.found.asked.label} (the statements show no such line)"
            if self.found.instead is not None
            else ""
        )
        return f"{f.label} FY{self.year} = {f.printed} ({f.where}){instead}"


@dataclass
class FactCalculation:
    """The computed answer: its plan, result as shown, operands and how sure finkg is."""

    plan: Plan
    result: Decimal
    operands: list[Operand]
    status: str
    notes: list[str] = field(default_factory=list)

    @property
    def shown(self) -> str:
        """The result as the question asks it: rounded, with its unit."""
        q = Decimal(1).scaleb(-self.plan.decimals)
        value = self.result.quantize(q, rounding=ROUND_HALF_UP)
        unit = self.unit
        if unit == "percent":
            return f"{value}%"
        if unit == "money":
            return f"${value}{_SCALE_WORDS.get(self.plan.money_scale, '')}"
        if unit == "days":
            return f"{value} days"
        if unit == "USD/share":
            return f"${value} per share"
        return f"{value}"

    @property
    def unit(self) -> str:
        """How the result reads; a single per-share or share-count line item keeps its own."""
        if isinstance(self.plan.node, Item) and self.operands:
            own = self.operands[0].found.fact.unit
            if own == "USD/share":
                return own
        return self.plan.unit

    def __str__(self) -> str:
        what = self.plan.asked or str(self.plan.node)
        years = (
            f"FY{self.plan.first}-FY{self.plan.last}"
            if self.plan.first is not None
            else f"FY{self.plan.year}"
        )
        defined = f"; {self.plan.definition_text}" if self.plan.definitions else ""
        operands = "; ".join(o.text for o in self.operands)
        return f"{what} ({years}) = {self.shown}{defined}; from {operands}"


def compute(plan: Plan, book: FactBook) -> FactCalculation:
    """The plan's result from the book's facts; `Missing` names an operand no fact gives."""
    walk = _Walk(plan, book)
    with localcontext() as ctx:
        ctx.prec = 28
        try:
            value = walk.value(plan.node, plan.year)
        except (DivisionByZero, InvalidOperation, ZeroDivisionError):
            raise Missing("a non-zero divisor", plan.year) from None
        value = _shown(value, plan, walk)
    status, notes = _status(plan, walk)
    return FactCalculation(plan, value, walk.operands, status, notes)


class _Walk:
    def __init__(self, plan: Plan, book: FactBook) -> None:
        self.plan, self.book = plan, book
        self.operands: list[Operand] = []
        self.seen: set[tuple[str, int]] = set()
        self.times_hundred = False
        self.library_notes: list[str] = []

    def definition(self, name: str) -> Definition | None:
        return (
            self.plan.definitions.get(name)
            or next((d for d in self.plan.definitions.values() if d.name == name), None)
            or library().find(name)
        )

    def value(self, node: Node, year: int) -> Decimal:
        if isinstance(node, Num):
            if node.value == "100":
                self.times_hundred = True
            return Decimal(node.value)
        if isinstance(node, Item):
            return self.item(node, node.year if node.year is not None else year)
        if isinstance(node, Ref):
            d = self.definition(node.name)
            if d is None:
                raise Missing(f"a definition of {node.name!r}", year)
            if d.source == "library" and d.note:
                self.library_notes.append(f"{d.name}: {d.note}")
            return self.value(d.node, year)
        if isinstance(node, Span):
            first = node.first if node.first is not None else year - 1
            last = node.last if node.last is not None else year
            if node.how == "average":
                values = [self.value(node.node, y) for y in range(first, last + 1)]
                return sum(values, Decimal(0)) / len(values)
            a, b = self.value(node.node, first), self.value(node.node, last)
            if node.how == "change":
                return b - a
            if node.how == "growth":
                return b / a - 1
            if node.how == "cagr":
                ratio = float(b / a)
                if ratio <= 0 or last == first:
                    raise Missing("a positive start and end to compound", year)
                return Decimal(repr(math.pow(ratio, 1 / (last - first)) - 1))
            raise Missing(f"a rule for {node.how!r}", year)
        if isinstance(node, Op):
            left, right = self.value(node.left, year), self.value(node.right, year)
            if node.op == "+":
                return left + right
            if node.op == "-":
                return left - right
            if node.op == "*":
                return left * right
            return left / right
        raise Missing(f"a value for {node!r}", year)

    def item(self, node: Item, year: int) -> Decimal:
        found = self.book.lookup(node.item, year, node.kind)
        if found is None:
            raise Missing(node.item.label, year, node.kind)
        value = found.fact.value
        if node.item.name in library().outflows or (
            found.instead is not None and found.instead.name in library().outflows
        ):
            value = abs(value)
        if (found.fact.iri.value, year) not in self.seen:
            self.seen.add((found.fact.iri.value, year))
            self.operands.append(Operand(found, year, value))
        return value


def _shown(value: Decimal, plan: Plan, walk: _Walk) -> Decimal:
    if plan.unit == "percent" and not walk.times_hundred:
        return value * 100
    single = walk.operands[0].found.fact.unit if len(walk.operands) == 1 else "USD"
    if plan.unit == "money" and single == "USD":
        return value.scaleb(-plan.money_scale)
    return value


def _status(plan: Plan, walk: _Walk) -> tuple[str, list[str]]:
    notes = [
        f"{o.found.asked.label} read as {instead.label}"
        for o in walk.operands
        if (instead := o.found.instead) is not None
    ]
    notes += walk.library_notes
    return ("Medium" if notes else "High"), notes


__all__ = ["MODEL_ID", "FactCalculation", "Missing", "Operand", "compute"]
