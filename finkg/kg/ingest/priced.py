"""The tickers of the companies with price bars in a store, read when first asked: what a
filing named by its ticker may mean (`IngestOptions.priced_tickers`)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from collections.abc import Set as AbstractSet

from finkg import queries
from finkg.kg.iri import readable_keys
from finkg.kg.store import BaseStore


class PricedTickers(AbstractSet[str]):
    """The tickers of the companies with price bars in `store`, read when first asked.

    The query reads every bar (15 s in a 55M-triple store), and only a filing that names no
    CIK (a PDF or HTML file named by its ticker) looks a ticker up: an EDGAR ingest never
    runs it."""

    def __init__(self, store: BaseStore) -> None:
        self._store = store

    @functools.cached_property
    def _tickers(self) -> frozenset[str]:
        companies = queries.select(self._store, "priced_companies").iris("company")
        keys = [readable_keys("company", c, base=self._store.graphs.base) for c in companies]
        return frozenset(k[0] for k in keys if k)

    def __contains__(self, ticker: object) -> bool:
        return ticker in self._tickers

    def __iter__(self) -> Iterator[str]:
        return iter(self._tickers)

    def __len__(self) -> int:
        return len(self._tickers)
