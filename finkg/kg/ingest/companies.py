"""Companies from a CSV with `ticker, cik, name, sector, industry` (cik, sector and industry
may be empty). One `fkg:Company` per ticker in the market graph."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from finkg.errors import InputError
from finkg.kg.ingest import common
from finkg.kg.ingest.core import IngestOptions, Item, Reject
from finkg.kg.iri import mint
from finkg.ontology.terms import FKG, RDF, RDFS

COLUMNS = ("ticker", "name")


def load(paths: Sequence[Path], options: IngestOptions) -> Iterator[Item | Reject]:
    for path in paths:
        table = common.read_table(path, required=COLUMNS)
        if isinstance(table, Reject):
            yield table
            continue
        yield from table.rejects
        for line, row in table.rows:
            try:
                yield company(row, options, source=str(path), line=line)
            except InputError as e:
                yield Reject.of(e, source=str(path), line=line)


def company(row: dict[str, str], options: IngestOptions, *, source: str, line: int) -> Item:
    ticker = row.get("ticker", "").upper()
    if not ticker:
        raise InputError("missing field", field="ticker")
    if not row.get("name"):
        raise InputError("missing field", field="name")
    cik = row.get("cik", "")
    if cik and not cik.isdigit():
        raise InputError("a CIK is digits", field="cik", value=cik)
    node = mint("company", ticker, base=options.base)
    q = common.Quads(options.graphs.market)
    q.node(
        node,
        (RDF.type, FKG.Company),
        (RDFS.label, common.string(row["name"])),
        (FKG.ticker, common.string(ticker)),
        (FKG.cik, common.string(cik.zfill(10)) if cik else None),
        (FKG.sector, common.string(row["sector"]) if row.get("sector") else None),
        (FKG.industry, common.string(row["industry"]) if row.get("industry") else None),
    )
    return Item(node, q.items, source, line)
