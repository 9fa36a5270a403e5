"""The statement facts a question may be answered from, and the one fact each operand reads.

`FactBook.of(store, ...)` holds a company's (or some documents') facts available strictly
before the answer's instant (`statement_facts.rq`: the time rule). `find(item, year, kind)`
picks the fact of a core line item for a fiscal year:

1. facts of that concept and fiscal year, for a full year (P1Y) where the line item is a
   flow, at the period's end where it is a balance;
2. from the statement the question names (`kind`: "D&A from the cash flow statement"),
   else from the statements the line item is reported in, in their order;
3. from the documents asked first (the question's own filing), then the latest available
   (a later filing's restated figure is the one known at the answer's instant);
4. within one statement, a "Total ..." row before another (a total is the line item, a
   breakdown row shares its label), else the first row.

A line item no statement shows may stand in for another (`metrics.toml` fallbacks: "net
income attributable to shareholders" read as "net income" where a company reports no
noncontrolling interests), and the answer says so.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pyoxigraph import NamedNode

from finkg.kg.facts.concepts import KINDS, LineItem, line_items
from finkg.kg.facts.stored import FactRef, stored_facts
from finkg.kg.store import BaseStore

_KIND_OF = {v.value: k for k, v in KINDS.items()}


@dataclass
class Found:
    """The fact read for an operand, and the line item it stands in for (a fallback)."""

    fact: FactRef
    asked: LineItem
    instead: LineItem | None = None


class FactBook:
    """Facts by concept and year (module docstring)."""

    def __init__(self, facts: Iterable[FactRef], *, documents: Sequence[NamedNode] = ()) -> None:
        self.facts = list(facts)
        self.documents = list(documents)
        self._by: dict[tuple[str, int], list[FactRef]] = {}
        for f in self.facts:
            if f.concept is not None:
                self._by.setdefault((f.concept.value, f.year), []).append(f)

    @classmethod
    def of(
        cls,
        store: BaseStore,
        *,
        before: dt.datetime,
        company: NamedNode | None = None,
        documents: Sequence[NamedNode] = (),
    ) -> FactBook:
        """The facts of `documents` (else of `company`) available strictly before `before`."""
        facts = stored_facts(
            store, before=before, company=None if documents else company, documents=documents
        )
        return cls(facts, documents=documents)

    def __len__(self) -> int:
        return len(self.facts)

    def find(self, item: LineItem, year: int, kind: str | None = None) -> FactRef | None:
        """The fact of `item` for fiscal `year` (module docstring, steps 1-4)."""
        found = [f for f in self._by.get((item.concept.value, year), []) if _full_year(f)]
        if not found:
            return None
        order = [kind] if kind else []
        order += [_KIND_OF[k.value] for k in sorted(item.kinds, key=_rank) if k.value in _KIND_OF]
        for k in dict.fromkeys(order):
            of_kind = [f for f in found if f.kind == k]
            if of_kind:
                return min(of_kind, key=self._preference)
        return None if kind else min(found, key=self._preference)

    def _preference(self, f: FactRef) -> tuple:
        asked = f.document in self.documents
        return (
            not asked,
            -f.available_at.timestamp(),  # the latest filing first
            f.document.value,
            not f.label.lower().startswith("total"),
            f.start,
        )

    def lookup(self, item: LineItem, year: int, kind: str | None = None) -> Found | None:
        """`find`, else the fallback line item's fact (`metrics.toml`)."""
        from finkg.tasks.qa.definitions import library  # the library reads this module's users

        fact = self.find(item, year, kind)
        if fact is not None:
            return Found(fact, item)
        other = library().fallbacks.get(item.name)
        if other is None:
            return None
        instead = next((i for i in line_items().values() if i.name == other), None)
        if instead is None:
            return None
        fact = self.find(instead, year, kind)
        return Found(fact, item, instead) if fact is not None else None


def _rank(kind: NamedNode) -> int:
    order = ("income", "balance", "cash flow", "comprehensive", "equity")
    name = _KIND_OF.get(kind.value, "equity")
    return order.index(name)


def _full_year(f: FactRef) -> bool:
    """A balance (an instant) or a full year's flow: what an annual question reads."""
    return f.duration in (None, "P1Y")


__all__ = ["FactBook", "FactRef", "Found"]
