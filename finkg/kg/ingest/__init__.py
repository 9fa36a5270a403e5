"""Loaders, one module per source kind, sharing one batch writer (`core.ingest`)."""

from __future__ import annotations

from finkg.errors import InputError
from finkg.kg.ingest import companies, fartrans, filings, news, prices
from finkg.kg.ingest.core import IngestOptions, IngestReport, Item, Loader, Reject, ingest

LOADERS: dict[str, Loader] = {
    "companies": companies.load,
    "fartrans": fartrans.load,
    "filings": filings.load,
    "news": news.load,
    "prices": prices.load,
}


def loader(kind: str) -> Loader:
    try:
        return LOADERS[kind]
    except KeyError:
        raise InputError(
            "unknown ingest kind",
            field="KIND",
            value=kind,
            hint="use one of " + ", ".join(sorted(LOADERS)) + " (or rdf)",
        ) from None


__all__ = ["LOADERS", "IngestOptions", "IngestReport", "Item", "Reject", "ingest", "loader"]
