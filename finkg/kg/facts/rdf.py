"""Statement facts as RDF: one `fkg:StatementFact` node per figure, in the graph of the
document (or filing) it was read from, `prov:wasDerivedFrom` the chunk that holds its row
and available when its document was (DESIGN §3: a fact is evidence)."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode, Quad

from finkg.kg.facts.concepts import KINDS
from finkg.kg.facts.read import Fact
from finkg.kg.iri import mint
from finkg.ontology.terms import FKG, PROV, RDF, XSD


@dataclass(frozen=True)
class Span:
    """A chunk (or passage) of the document: its node and character span."""

    node: NamedNode
    start: int
    end: int


def holder(spans: Sequence[Span], start: int, end: int) -> Span | None:
    """The chunk that holds [start, end): the first that holds it whole, else the one that
    holds most of it (chunks overlap; a row can straddle two)."""
    best, most = None, 0
    for s in spans:
        if s.start <= start and end <= s.end:
            return s
        overlap = min(end, s.end) - max(start, s.start)
        if overlap > most:
            best, most = s, overlap
    return best


def page_of(page_starts: Sequence[int], offset: int) -> int | None:
    """The page (from 1) an offset of the text lies on; None without page starts."""
    if not page_starts:
        return None
    return bisect.bisect_right(page_starts, offset)


def fact_quads(
    facts: Sequence[Fact],
    *,
    key: str,
    spans: Sequence[Span],
    page_starts: Sequence[int],
    available_at: Literal,
    about: Sequence[NamedNode],
    graph: NamedNode,
    base: str,
) -> list[Quad]:
    """The facts' statements; `key` names the document in their IRIs (its digest)."""
    out: list[Quad] = []
    for f in facts:
        chunk = holder(spans, f.start, f.end)
        if chunk is None:
            continue  # no chunk holds it: nothing to cite it by
        node = mint("fact", key, f"{f.start}-{f.column}", base=base)
        page = page_of(page_starts, f.start)
        pairs: tuple[tuple[NamedNode, NamedNode | Literal | None], ...] = (
            (RDF.type, FKG.StatementFact),
            (FKG.lineItem, Literal(f.label)),
            (FKG.concept, f.concept),
            (FKG.statement, KINDS[f.kind]),
            (FKG.fiscalYear, _integer(f.period.fiscal_year)),
            (
                FKG.periodEnd,
                Literal(f.period.end.isoformat(), datatype=XSD.date) if f.period.end else None,
            ),
            (
                FKG.duration,
                Literal(f.period.duration, datatype=XSD.duration) if f.period.duration else None,
            ),
            (FKG.value, Literal(format(f.value, "f"), datatype=XSD.decimal)),
            (FKG.unit, Literal(f.unit)),
            (FKG.printedValue, Literal(f.printed)),
            (FKG.availableAt, available_at),
            (FKG.page, _integer(page) if page is not None else None),
            (FKG.charStart, _integer(f.start)),
            (FKG.charEnd, _integer(f.end)),
            (PROV.wasDerivedFrom, chunk.node),
            *((FKG.about, company) for company in about),
        )
        out += [Quad(node, p, o, graph) for p, o in pairs if o is not None]
    return out


def _integer(value: int) -> Literal:
    return Literal(str(int(value)), datatype=XSD.integer)


__all__ = ["Span", "fact_quads", "holder", "page_of"]
