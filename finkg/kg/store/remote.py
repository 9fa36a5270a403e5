"""The remote backend: any SPARQL 1.1 Protocol endpoint, through SPARQLWrapper.

Queries and updates go to the query and update endpoints; `load` uses the Graph Store
Protocol. For the Oxigraph server (`finkg serve`, or `oxigraph serve`) give its root URL
(`http://127.0.0.1:7878`) or its `/query` URL: `/update` and `/store` are derived. For other
engines give the query URL and set `FINKG_UPDATE_URL` / `FINKG_GSP_URL` where they differ.

Results come back as SPARQL JSON or N-Triples (Turtle where an engine has no N-Triples) and
are parsed by pyoxigraph, so both backends return the same term objects.

Tested engines: the Oxigraph server and Virtuoso 7 (`tests/test_engines.py`). For Virtuoso
give its `/sparql` URL (queries and updates) and set `FINKG_GSP_URL` to its
`/sparql-graph-crud`; its settings must not cut answers off (`scripts/with-virtuoso-server`).

A `token` (`FINKG_TOKEN`) goes with every request as `Authorization: Bearer <token>`, as
`finkg serve --token-file` asks.
"""

from __future__ import annotations

import ast
import http.client
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator

import pyoxigraph as ox
from pyoxigraph import NamedNode, Quad, Triple
from SPARQLWrapper import ASK, CONSTRUCT, JSON, POST, POSTDIRECTLY, SELECT, TURTLE, SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import QueryBadFormed, SPARQLWrapperException, Unauthorized

from finkg import queries
from finkg.errors import QueryError, StoreError
from finkg.kg.graphs import Graphs
from finkg.kg.store.base import BaseStore, commit_quads, parse_into
from finkg.kg.store.protocol import Commit, DefaultGraphs
from finkg.kg.updates import quads_update
from finkg.queries.results import Solutions

TIMEOUT_S = 300


def endpoints(url: str, update_url: str | None, gsp_url: str | None) -> tuple[str, str, str | None]:
    """(query, update, graph store) URLs for a root or query URL.

    >>> endpoints("http://127.0.0.1:7878", None, None)
    ('http://127.0.0.1:7878/query', 'http://127.0.0.1:7878/update', 'http://127.0.0.1:7878/store')
    >>> endpoints("https://db.example.org/sparql", None, None)
    ('https://db.example.org/sparql', 'https://db.example.org/sparql', None)
    """
    parts = urllib.parse.urlsplit(url)
    path = parts.path.rstrip("/")
    if path == "" or path.endswith("/query"):
        root = urllib.parse.urlunsplit(parts._replace(path=path.removesuffix("/query")))
        return root + "/query", update_url or root + "/update", gsp_url or root + "/store"
    return url, update_url or url, gsp_url


class RemoteStore(BaseStore):
    """A store behind a SPARQL 1.1 endpoint."""

    def __init__(
        self,
        url: str,
        *,
        graphs: Graphs,
        read_only: bool = False,
        update_url: str | None = None,
        gsp_url: str | None = None,
        timeout_s: int = TIMEOUT_S,
        token: str | None = None,
    ) -> None:
        self.location = url
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.graphs = graphs
        self.read_only = read_only
        self.query_url, self.update_url, self.gsp_url = endpoints(url, update_url, gsp_url)
        self.timeout_s = timeout_s
        self._oxigraph: bool | None = None

    def _wrapper(
        self, text: str, default_graphs: DefaultGraphs, fmt: str, form: str
    ) -> SPARQLWrapper:
        sw = self._sparql_wrapper()
        sw.setOnlyConneg(True)
        sw.setReturnFormat(fmt)
        if default_graphs == "union" and self._is_oxigraph():
            # Oxigraph's own switch: listing every named graph as a default-graph-uri gave
            # the same answers but plans that took minutes on the real event store
            sw.addParameter("union-default-graph", "")
        elif default_graphs is not None:
            if isinstance(default_graphs, str) and default_graphs != "union":
                raise QueryError(
                    "a dataset is 'union' or a list of graphs",
                    field="default_graphs",
                    value=default_graphs,
                )
            graphs = (
                self.named_graphs() if isinstance(default_graphs, str) else list(default_graphs)
            )
            _room_for_headers(2 * len(graphs))
            for g in graphs:
                sw.addDefaultGraph(g.value)
                # the listed graphs are all a query can read; for the union, every graph is
                # named too: a protocol dataset given default graphs alone has no named
                # graphs, and GRAPH ?g would match nothing on an engine that keeps to that
                sw.addNamedGraph(g.value)
            if not graphs:  # an empty dataset: name one graph that holds nothing
                sw.addDefaultGraph(self.graphs.prefix + "empty")
                sw.addNamedGraph(self.graphs.prefix + "empty")
        sw.setQuery(text)
        # SPARQLWrapper sniffs the form from the text, and its comment filter skips every
        # other line of a comment block: a header line starting "Loaders" read as LOAD and
        # the query went out as an update. The caller knows the form.
        sw.queryType = form
        return sw

    def _is_oxigraph(self) -> bool:
        """Whether the endpoint is an Oxigraph server (its Server header), asked once."""
        if self._oxigraph is None:
            url = self.query_url + "?" + urllib.parse.urlencode({"query": "ASK {}"})
            probe = urllib.request.Request(url, headers=self._headers)
            try:
                with urllib.request.urlopen(probe, timeout=self.timeout_s) as reply:
                    self._oxigraph = reply.headers.get("server", "").startswith("Oxigraph/")
            except (urllib.error.URLError, OSError):
                self._oxigraph = False  # the query itself will report an unreachable endpoint
        return self._oxigraph

    def _send(self, sw: SPARQLWrapper, *, write: bool = False) -> tuple[bytes, str]:
        try:
            result = sw.query()
            return result.response.read(), result.info().get("content-type", "")
        except QueryBadFormed as e:
            raise QueryError(f"the endpoint rejected the request: {_server_message(e)}") from None
        except Unauthorized as e:
            given = "the token it was sent" if self._headers else "no token"
            raise StoreError(
                f"the SPARQL endpoint {self.location} refused {given} (HTTP 401: "
                f"{_server_message(e)}); set FINKG_TOKEN to the token the server was started "
                "with (finkg serve --token-file)"
            ) from None
        except SPARQLWrapperException as e:
            raise StoreError(f"{self.location}: {_server_message(e)}") from None
        except http.client.HTTPException as e:  # the answer stopped half way (IncompleteRead)
            raise StoreError(
                f"the SPARQL endpoint {self.query_url} stopped in the middle of its answer "
                f"({type(e).__name__}: {str(e)[:200]}); a query time limit on the server "
                "may have cut it off"
            ) from None
        except urllib.error.HTTPError as e:
            raise self._refusal(e, self.update_url if write else self.query_url, write) from None
        except urllib.error.URLError as e:
            raise StoreError(
                f"cannot reach the SPARQL endpoint {self.query_url}: {e.reason}. "
                "Is the server running (finkg serve)?"
            ) from None

    def _refusal(self, e: urllib.error.HTTPError, url: str, write: bool) -> StoreError:
        """An HTTP error status as a StoreError that says what it means."""
        body = e.read().decode("utf-8", "replace").strip()[:500]
        if e.code == 401:
            given = "the token it was sent" if self._headers else "no token"
            return StoreError(
                f"the SPARQL endpoint {url} refused {given} (HTTP 401: {body}); set "
                "FINKG_TOKEN to the token the server was started with (finkg serve --token-file)"
            )
        if write and e.code in (403, 405):
            return StoreError(
                f"the SPARQL endpoint {url} is read-only: it refused the write "
                f"(HTTP {e.code}: {body}). Start it read-write (finkg serve --read-write "
                "--store DIR, or oxigraph serve), or write to the store directory itself."
            )
        return StoreError(f"the SPARQL endpoint {url} answered HTTP {e.code} {e.reason}: {body}")

    def _parsed_results(self, data: bytes) -> Solutions | ox.QueryBoolean:
        """SELECT or ASK results, read whole; an answer cut off is a StoreError."""
        try:
            result = ox.parse_query_results(data, format=ox.QueryResultsFormat.JSON)
            if isinstance(result, ox.QuerySolutions):
                variables = tuple(v.value for v in result.variables)
                return Solutions(variables, [tuple(s[v] for v in variables) for s in result])
            return result
        except SyntaxError as e:
            raise StoreError(
                f"the SPARQL endpoint {self.query_url} sent results that cannot be read ({e}); "
                "a query time limit on the server may have cut them off"
            ) from None

    def select(self, query: str, *, default_graphs: DefaultGraphs = None) -> Solutions:
        data, _ = self._send(self._wrapper(query, default_graphs, JSON, SELECT))
        result = self._parsed_results(data)
        if not isinstance(result, Solutions):
            raise QueryError("expected a SELECT query", field="query", value=query[:80])
        return result

    def construct(self, query: str, *, default_graphs: DefaultGraphs = None) -> list[Triple]:
        sw = self._wrapper(query, default_graphs, TURTLE, CONSTRUCT)
        # N-Triples first: every literal keeps its datatype there, where a Turtle writer may
        # shorten a double to a bare number, which reads back as an xsd:decimal (Virtuoso
        # wrote 6.0E-1 as 0.5999999999999999778)
        sw.addCustomHttpHeader("Accept", "application/n-triples, text/turtle;q=0.9")
        data, ctype = self._send(sw)
        fmt = ox.RdfFormat.from_media_type(ctype.split(";")[0].strip()) or ox.RdfFormat.TURTLE
        try:
            return [Triple(q.subject, q.predicate, q.object) for q in ox.parse(data, format=fmt)]
        except SyntaxError as e:
            raise StoreError(
                f"the SPARQL endpoint {self.query_url} sent triples that cannot be read ({e}); "
                "a query time limit on the server may have cut them off"
            ) from None

    def ask(self, query: str, *, default_graphs: DefaultGraphs = None) -> bool:
        data, _ = self._send(self._wrapper(query, default_graphs, JSON, ASK))
        result = self._parsed_results(data)
        if not isinstance(result, ox.QueryBoolean):
            raise QueryError("expected an ASK query", field="query", value=query[:80])
        return bool(result)

    def _sparql_wrapper(self) -> SPARQLWrapper:
        sw = SPARQLWrapper(self.query_url, updateEndpoint=self.update_url)
        sw.setMethod(POST)
        sw.setTimeout(self.timeout_s)
        for name, value in self._headers.items():
            sw.addCustomHttpHeader(name, value)
        return sw

    def _post_update(self, text: str) -> None:
        sw = self._sparql_wrapper()
        sw.setRequestMethod(POSTDIRECTLY)
        sw.setQuery(text)
        self._send(sw, write=True)

    def _update(self, update: str, *, note: str) -> Commit:
        record = self._commit(None, note, None)
        marker = quads_update(add=commit_quads(record, self.graphs))
        self._post_update(update.rstrip().rstrip(";") + " ;\n" + marker)
        return record

    def _write(self, add: list[Quad], remove: list[Quad]) -> None:
        self._post_update(quads_update(add=add, remove=remove))

    def load(
        self, data: bytes, *, format: ox.RdfFormat, graph: NamedNode, note: str
    ) -> Commit | None:
        """Graph Store Protocol POST of `data` into `graph`, then its commit record.

        The data and its record are two requests (the protocol has no transaction across
        them); without a Graph Store endpoint the data goes as one SPARQL update instead.
        """
        self._check_writable(note)
        quads = parse_into(data, format, graph)  # checks the data before anything is sent
        if self.gsp_url is None or not quads:
            return self.write(add=quads, note=note)
        url = self.gsp_url + "?" + urllib.parse.urlencode({"graph": graph.value})
        request = urllib.request.Request(
            url,
            data=data,
            method="POST",
            headers={"Content-Type": format.media_type, **self._headers},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s):
                pass
        except urllib.error.HTTPError as e:
            if e.code in (401, 403, 405):
                raise self._refusal(e, self.gsp_url, True) from None
            body = e.read().decode("utf-8", "replace")[:500]
            error = QueryError if e.code == 400 else StoreError
            raise error(f"Graph Store load into {graph.value} failed ({e.code}): {body}") from None
        except urllib.error.URLError as e:
            raise StoreError(f"cannot reach {self.gsp_url}: {e.reason}") from None
        record = self._commit(None, note, len(quads))
        self._post_update(quads_update(add=commit_quads(record, self.graphs)))
        return record

    def quads(self, graph: NamedNode | None = None) -> Iterator[Quad]:
        graphs = [graph] if graph is not None else self.named_graphs()
        for g in graphs:
            for t in queries.construct(self, "graph_triples", {"graph": g}):
                yield Quad(t.subject, t.predicate, t.object, g)


def _room_for_headers(count: int) -> None:
    """Make room for `count` more response headers. Virtuoso answers with a header for each
    graph of the request's dataset (X-SPARQL-default-graph, X-SPARQL-named-graph), and
    Python's http.client refuses a response of more than 100 headers: every query over the
    union of a store of 47 graphs or more failed half way (seen on 5x the scale benchmark's
    store, 126 graphs). Its limit has no public setting; it is raised, never lowered."""
    limit: int = getattr(http.client, "_MAXHEADERS", 100)
    if count + 100 > limit:
        http.client._MAXHEADERS = count + 100  # type: ignore[attr-defined]  # no public setting


def _server_message(e: SPARQLWrapperException) -> str:
    text = str(e)
    if "Response:\n" in text:
        body = text.split("Response:\n", 1)[1]
        if body.startswith(("b'", 'b"')):
            try:
                body = ast.literal_eval(body).decode("utf-8", "replace")
            except (ValueError, SyntaxError):
                pass  # keep the raw text
        return body.strip()[:500]
    return text
