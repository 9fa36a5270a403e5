"""A company's statement facts for people and tools: `finkg facts`.

`facts_of` reads them (available strictly before an instant, of one fiscal year or some
line items where asked), `to_jsonld` gives their statements as compact JSON-LD (finkg's
context), `fiscal_year` reads "FY2019", "FY19" or "2019".

>>> fiscal_year("FY19"), fiscal_year("2019")
(2019, 2019)
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

from pyoxigraph import NamedNode, Quad

from finkg import queries
from finkg.errors import InputError
from finkg.kg import export
from finkg.kg.facts.concepts import line_items
from finkg.kg.facts.stored import FactRef, stored_facts
from finkg.kg.store import BaseStore
from finkg.queries import QueryRunner

_YEAR = re.compile(r"^(?:FY\s?|fiscal\s+)?'?((?:19|20)?\d\d)$", re.I)


def fiscal_year(text: str) -> int:
    """A fiscal year as written on the command line; an InputError names a bad one."""
    m = _YEAR.match(text.strip())
    if m is None:
        raise InputError(
            "not a fiscal year", field="--period", value=text, hint="FY2019, FY19 or 2019"
        )
    year = int(m.group(1))
    return year + 2000 if year < 100 else year


def concept_named(name: str) -> NamedNode:
    """A core line item by its local name (`Inventories`) or a label (`inventories`)."""
    wanted = name.strip().lower()
    for item in line_items().values():
        if wanted in (item.name.lower(), item.label.lower()) or wanted in item.labels:
            return item.concept
    names = ", ".join(sorted(i.name for i in line_items().values()))
    raise InputError("no such core line item", field="--concept", value=name, hint=names)


def facts_of(
    store: QueryRunner,
    company: NamedNode,
    *,
    before: dt.datetime,
    year: int | None = None,
    concepts: Sequence[str] = (),
) -> list[FactRef]:
    """The company's facts available strictly before `before` (module docstring)."""
    if before.tzinfo is None:
        raise InputError("--as-of needs a zone", field="--as-of", value=before.isoformat())
    chosen = [concept_named(c) for c in concepts]
    return stored_facts(store, before=before, company=company, concepts=chosen, year=year)


def to_jsonld(store: BaseStore, facts: Sequence[FactRef]) -> str:
    """The facts' own statements, compact JSON-LD."""
    quads: list[Quad] = []
    nodes = [f.iri for f in facts]
    for start in range(0, len(nodes), 500):
        rows = queries.select(store, "subject_quads", {"node": nodes[start : start + 500]})
        quads += [Quad(r.iri("node"), r.iri("p"), r.term("o"), r.iri("g")) for r in rows]
    return export.serialize(quads, "jsonld").decode("utf-8")


__all__ = ["concept_named", "facts_of", "fiscal_year", "to_jsonld"]
