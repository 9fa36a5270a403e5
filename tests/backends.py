"""The store backends the tests run on, each fresh per test.

- `embedded`: pyoxigraph in memory;
- `remote`: the Oxigraph server in FINKG_TEST_ENDPOINT (`scripts/with-oxigraph-server`);
- `virtuoso`: the Virtuoso 7 server in FINKG_TEST_VIRTUOSO, its Graph Store endpoint in
  FINKG_TEST_VIRTUOSO_GSP (`scripts/with-virtuoso-server`).

A server that is not there skips its cases with the reason (the script's, where it gave one).
`BACKENDS` is what most store tests run on; `ENGINES` adds Virtuoso, for the store suite and
the query library (`test_store.py`, `test_engines.py`).
"""

from __future__ import annotations

import os

import pytest

from finkg.config import Settings
from finkg.kg.store import BaseStore, open_store


def endpoint() -> str | None:
    return os.environ.get("FINKG_TEST_ENDPOINT") or None


def _fresh_remote(settings: Settings) -> BaseStore:
    url = endpoint()
    if url is None:
        pytest.skip("no SPARQL endpoint: set FINKG_TEST_ENDPOINT (make test starts one)")
    store = open_store(url, settings=settings)
    store._post_update("DROP SILENT ALL")  # type: ignore[attr-defined]  # a fresh store per test
    return store


_engine_graphs: set[str] = set()  # the graphs Virtuoso held before any test wrote


def _fresh_virtuoso(settings: Settings) -> BaseStore:
    """The Virtuoso server emptied of everything but its own system graphs (which `DROP ALL`
    would take with it: Virtuoso keeps its RDF storage metadata in graphs of the store)."""
    url = os.environ.get("FINKG_TEST_VIRTUOSO")
    if not url:
        reason = os.environ.get("FINKG_TEST_VIRTUOSO_SKIP") or (
            "set FINKG_TEST_VIRTUOSO (make test starts one with scripts/with-virtuoso-server)"
        )
        pytest.skip(f"no Virtuoso server: {reason}")
    store = open_store(
        url, settings=settings.with_(gsp_url=os.environ.get("FINKG_TEST_VIRTUOSO_GSP") or None)
    )
    listed = store.select("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }")
    present = {g.value for g in listed.column("g")}  # type: ignore[union-attr]
    if not _engine_graphs:
        _engine_graphs.update(g for g in present if not g.startswith(store.graphs.prefix))
    drop = sorted(present - _engine_graphs)
    if drop:
        store._post_update(" ;\n".join(f"DROP SILENT GRAPH <{g}>" for g in drop))  # type: ignore[attr-defined]
    return store


def open_backend(kind: str, settings: Settings) -> BaseStore:
    """A fresh, empty store: `embedded` (in memory), `remote` (the Oxigraph server) or
    `virtuoso`."""
    if kind == "embedded":
        return open_store(None, settings=settings)
    if kind == "remote":
        return _fresh_remote(settings)
    return _fresh_virtuoso(settings)


BACKENDS = ["embedded", pytest.param("remote", marks=pytest.mark.remote)]
ENGINES = [*BACKENDS, pytest.param("virtuoso", marks=[pytest.mark.remote, pytest.mark.virtuoso])]
