"""Stored statement facts, read back: `statement_facts.rq`'s solutions as `FactRef`s.

`stored_facts(store, before=...)` gives the facts of a company or of some documents
available strictly before an instant (the time rule), with the page and chunk each was
read from and the document it came from, newest fiscal year first.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from pyoxigraph import NamedNode

from finkg import queries
from finkg.errors import QueryError
from finkg.kg.facts.concepts import KINDS
from finkg.kg.store import BaseStore
from finkg.queries.results import Solutions, Term

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


def _text(row: Mapping[str, Term | None], name: str) -> str | None:
    """A solution's value as text (an IRI's or a literal's), None when unbound."""
    term = row[name]
    return None if term is None else str(getattr(term, "value", term))


def _row_fact(row: Mapping[str, Term | None]) -> FactRef:
    """A `statement_facts.rq` solution; its declared outputs are bound but for the
    optional concept, period end, duration and page."""
    t = {name: _text(row, name) for name in row}

    def required(name: str) -> str:
        value = t[name]
        if value is None:
            raise QueryError(f"statement_facts returned no ?{name}", field=name)
        return value

    return FactRef(
        iri=NamedNode(required("fact")),
        document=NamedNode(required("document")),
        chunk=NamedNode(required("chunk")),
        label=required("lineItem"),
        concept=NamedNode(t["concept"]) if t["concept"] else None,
        kind=_KIND_OF.get(required("statement"), "income"),
        year=int(required("year")),
        duration=t["duration"],
        period_end=dt.date.fromisoformat(t["periodEnd"]) if t["periodEnd"] else None,
        value=Decimal(required("value")),
        unit=required("unit"),
        printed=required("printed"),
        page=int(t["page"]) if t["page"] else None,
        start=int(required("start")),
        available_at=dt.datetime.fromisoformat(required("availableAt")),
    )


def stored_facts(
    store: BaseStore,
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
    rows = queries.run(store, "statement_facts", values)
    assert isinstance(rows, Solutions)  # a SELECT
    return [_row_fact(r) for r in rows]


__all__ = ["FactRef", "stored_facts"]
