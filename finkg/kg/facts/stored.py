"""Stored statement facts, read back: `statement_facts.rq`'s solutions as `FactRef`s.

`stored_facts(store, before=...)` gives the facts of a company or of some documents
available strictly before an instant (the time rule), with the page and chunk each was
read from and the document it came from, newest fiscal year first.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from pyoxigraph import NamedNode

from finkg import queries
from finkg.kg.facts.concepts import KINDS
from finkg.queries import QueryRunner
from finkg.queries.rows import Row

_KIND_OF = {v.value: k for k, v in KINDS.items()}
_NAMES = {
    "income": "income statement",
    "balance": "balance sheet",
    "cash flow": "cash flow statement",
    "comprehensive": "statement of comprehensive income",
    "equity": "statement of equity",
}


@dataclass(frozen=True)
class FactRef:
    """One stored statement fact, as an operand cites it."""

    iri: NamedNode
    document: NamedNode
    chunk: NamedNode
    label: str
    concept: NamedNode | None
    kind: str
    year: int
    duration: str | None
    period_end: dt.date | None
    value: Decimal
    unit: str
    printed: str
    page: int | None
    start: int
    available_at: dt.datetime

    def row(self) -> dict[str, object]:
        """The fact as a flat record (CSV, JSON)."""
        return {
            "fact": self.iri.value,
            "fiscal_year": self.year,
            "statement": self.kind,
            "line_item": self.label,
            "concept": self.concept.value if self.concept else None,
            "period_end": self.period_end.isoformat() if self.period_end else None,
            "duration": self.duration,
            "value": format(self.value, "f"),
            "unit": self.unit,
            "printed": self.printed,
            "page": self.page,
            "chunk": self.chunk.value,
            "document": self.document.value,
            "available_at": self.available_at.isoformat(),
        }

    @property
    def where(self) -> str:
        page = f"p. {self.page}" if self.page is not None else f"char {self.start}"
        return f"{_NAMES.get(self.kind, self.kind)}, {page}"


def _row_fact(row: Row) -> FactRef:
    """A `statement_facts.rq` solution."""
    return FactRef(
        iri=row.iri("fact"),
        document=row.iri("document"),
        chunk=row.iri("chunk"),
        label=row.string("lineItem"),
        concept=row.maybe_iri("concept"),
        kind=_KIND_OF.get(row.iri("statement").value, "income"),
        year=row.integer("year"),
        duration=row.maybe_string("duration"),
        period_end=row.maybe_date("periodEnd"),
        value=row.decimal("value"),
        unit=row.string("unit"),
        printed=row.string("printed"),
        page=row.maybe_integer("page"),
        start=row.integer("start"),
        available_at=row.datetime("availableAt"),
    )


def stored_facts(
    store: QueryRunner,
    *,
    before: dt.datetime,
    company: NamedNode | None = None,
    documents: Sequence[NamedNode] = (),
    concepts: Sequence[NamedNode] = (),
    year: int | None = None,
) -> list[FactRef]:
    """The facts available strictly before `before`: of `company`, of `documents`, of
    some line items (`concepts`) or one fiscal year, where given."""
    values: dict[str, object] = {"before": before}
    if company is not None:
        values["company"] = company
    if documents:
        values["document"] = list(documents)
    if concepts:
        values["concept"] = list(concepts)
    if year is not None:
        values["year"] = year
    return [_row_fact(r) for r in queries.select(store, "statement_facts", values)]


__all__ = ["FactRef", "stored_facts"]
