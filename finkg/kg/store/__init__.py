"""One store protocol over an embedded Oxigraph store and any SPARQL 1.1 endpoint.

`open_store(location)`:

- `None` or `":memory:"`: an in-memory Oxigraph store (`embedded.EmbeddedStore`);
- a directory: an on-disk Oxigraph store (pyoxigraph), created if absent;
- an `http(s)://` URL: a SPARQL 1.1 Protocol endpoint through SPARQLWrapper, with Graph
  Store Protocol loads (`remote.RemoteStore`: the Oxigraph server started by `finkg serve`,
  or any other engine).

Both implement the `protocol.Store` protocol on `base.BaseStore`.

Every write goes through `write()` (or `update()`, `load()`), which records one `fkg:Commit`
in the audit graph in the same transaction as the data, numbered one above the generation
before it; the store's `generation()` is the highest number, so it grows on every write and
indexes can tell when they are stale.

>>> store = open_store(None)
>>> store.generation()
0
>>> from pyoxigraph import Literal, NamedNode, Quad
>>> q = Quad(NamedNode("https://e.org/a"), NamedNode("https://e.org/p"), Literal("x"),
...          store.graphs.news)
>>> store.write(add=[q], note="example").quad_count
1
>>> store.generation()
1
"""

from __future__ import annotations

from pathlib import Path

from finkg.config import Settings
from finkg.errors import InputError
from finkg.kg.graphs import Graphs
from finkg.kg.store.base import BaseStore, commit_quads, own_graphs, parse_into
from finkg.kg.store.embedded import EmbeddedStore
from finkg.kg.store.protocol import Commit, DefaultGraphs, Store


def open_store(
    location: str | Path | None,
    *,
    settings: Settings | None = None,
    read_only: bool = False,
) -> BaseStore:
    """Open the store at `location` (module docstring)."""
    settings = settings or Settings()
    graphs = Graphs(settings.base_iri)
    text = str(location) if location is not None else ":memory:"
    if text.startswith(("http://", "https://")):
        from finkg.kg.store.remote import RemoteStore

        return RemoteStore(
            text,
            graphs=graphs,
            read_only=read_only,
            update_url=settings.update_url,
            gsp_url=settings.gsp_url,
            token=settings.token,
        )
    if text == ":memory:":
        if read_only:
            raise InputError("an in-memory store cannot be opened read-only", field="store")
        return EmbeddedStore(None, graphs=graphs)
    return EmbeddedStore(Path(text), graphs=graphs, read_only=read_only)


__all__ = [
    "BaseStore",
    "Commit",
    "DefaultGraphs",
    "EmbeddedStore",
    "Store",
    "commit_quads",
    "open_store",
    "own_graphs",
    "parse_into",
]
