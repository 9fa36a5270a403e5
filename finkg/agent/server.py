"""`finkg mcp`: finkg as a tool for LLM agents, over the Model Context Protocol.

`build_server(service)` makes an `MCPServer` (the official Python SDK, `mcp`) whose tools
read a store point-in-time and cite what they read:

| tool | what it returns |
|---|---|
| `query` | read-only SPARQL (SELECT, ASK, CONSTRUCT, DESCRIBE), optionally as of an instant |
| `list_queries`, `run_query` | finkg's packaged queries, and one run with typed bindings |
| `evidence_before` | a company's evidence strictly before an instant, with times and sources |
| `facts` | a company's statement facts (line items, values, pages) before an instant |
| `ask` | the QA job's answer, computed from facts or read, with citations and scores |
| `audit` | a node's provenance chain down to source documents and ingest commits |
| `describe` | one node's one-hop neighbourhood as compact JSON-LD |

and resources: the ontology and line items (Turtle), the JSON-LD context, the shapes, the
query catalogue and each query's text. Reads run in a worker process that is stopped at
the time limit (`worker.py`); `ask` runs in the server (`answering.py`). Nothing is
written. Personal `users/*` graphs are shown to no tool unless the server is started for
one user, and then that user's alone. A failure comes back as a tool error with the
message the CLI would print, never a traceback.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from finkg.agent import calls
from finkg.agent.answering import Answerer
from finkg.agent.calls import Scope
from finkg.agent.models import (
    AskResult,
    AuditResult,
    DescribeResult,
    EvidenceResult,
    FactsResult,
    QueryInfo,
    QueryResult,
)
from finkg.agent.worker import Worker
from finkg.errors import FinkgError

INSTRUCTIONS = """\
finkg is a point-in-time knowledge graph of financial evidence (news, filings, documents,
prices) in RDF. Every evidence node carries fkg:availableAt, the instant it became
knowable; pass `as_of` (or `before`) to see only what was available before an instant, so
an answer never uses the future. Instants need a zone (2019-06-01T09:30:00-04:00); a date
alone means its first instant in New York. Start with `list_queries` or `evidence_before`
for a company (by ticker), `facts` for statement figures, `ask` for a question; `audit`
traces any node to its sources and the commits that wrote them; the finkg://ontology and
finkg://context resources say what the terms mean. Results are bounded: `left_out` says
what was not shown. Everything is read-only."""

READ = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
AsOf = Annotated[
    str | None,
    Field(
        description="Only what was available strictly before this instant: a zoned ISO "
        "instant (2019-06-01T09:30:00-04:00) or a date (its first instant in New York)"
    ),
]
Limit = Annotated[int, Field(ge=1, le=1000, description="At most this many rows or items")]
Company = Annotated[str, Field(description="A ticker the store holds (ZQAW) or the company's IRI")]


@dataclass
class Service:
    """What the tools run on: the worker (store reads) and the answerer (`ask`)."""

    worker: Worker
    answerer: Answerer

    @classmethod
    def open(cls, scope: Scope, *, timeout_s: float, reader: str | None) -> Service:
        worker = Worker(scope, timeout_s=timeout_s)
        worker.start()  # the store opens now: a wrong --store is an error before serving
        return cls(worker, Answerer(scope, reader))

    async def read(self, fn: Any, **kwargs: Any) -> Any:
        call = functools.partial(self.worker.call, fn, **kwargs)
        try:
            return await anyio.to_thread.run_sync(call)
        except FinkgError as e:
            raise ToolError(str(e)) from None

    def close(self) -> None:
        self.worker.close()
        self.answerer.close()


def build_server(service: Service, *, name: str = "finkg") -> MCPServer:
    """The MCP server over `service` (module docstring)."""
    from importlib.metadata import version

    server: MCPServer = MCPServer(
        name, instructions=INSTRUCTIONS, version=version("finkg"), log_level="WARNING"
    )

    @server.tool(annotations=READ)
    async def query(
        sparql: Annotated[str, Field(description="A SPARQL 1.1 query (no updates)")],
        as_of: AsOf = None,
        limit: Limit = 100,
    ) -> QueryResult:
        """Run a read-only SPARQL query over finkg's graphs (the default graph is their
        union; GRAPH ?g names them). With as_of, the query sees the evidence as it was then:
        every triple touching a node available at or after as_of is left out, and so are
        finkg's own records (the audit, outputs and memory graphs: query those without
        as_of). Updates, SERVICE and LOAD are refused; a query past the server's time limit
        is stopped. Prefixes: fkg: <https://w3id.org/finkg/ns#>, prov:
        <http://www.w3.org/ns/prov#>."""
        return await service.read(calls.sparql, text=sparql, as_of=as_of, limit=limit)

    @server.tool(annotations=READ)
    async def list_queries() -> list[QueryInfo]:
        """List finkg's packaged read queries: name, what each returns, its typed inputs
        (iri, dateTime with a zone, string, integer ...; many = a list) and outputs. Run one
        with run_query."""
        return calls.catalogue()

    @server.tool(annotations=READ)
    async def run_query(
        name: Annotated[str, Field(description="A packaged query's name (list_queries)")],
        bindings: Annotated[
            dict[str, str | list[str]] | None,
            Field(description="Input values by name, as text; a list for a many-valued input"),
        ] = None,
        as_of: AsOf = None,
        limit: Limit = 100,
        bound: Annotated[
            int | None,
            Field(ge=0, description="For a bounded CONSTRUCT: triples per node (0: all)"),
        ] = None,
    ) -> QueryResult:
        """Run one of finkg's packaged queries with typed bindings (values are bound as RDF
        terms, never pasted into the text). Point-in-time queries take their instant as an
        input (evidence_before's `before`); as_of cuts the whole dataset as `query` does."""
        return await service.read(
            calls.packaged,
            name=name,
            bindings=bindings or {},
            as_of=as_of,
            limit=limit,
            bound=bound,
        )

    @server.tool(annotations=READ)
    async def evidence_before(
        company: Company,
        before: Annotated[
            str, Field(description="Exclusive upper bound: a zoned instant or a date")
        ],
        limit: Limit = 20,
    ) -> EvidenceResult:
        """A company's evidence (news, filing chunks, documents, market summaries) available
        strictly before an instant, newest first, each with its availability time, source
        family and text; a correction replaces what it revised once it was available."""
        return await service.read(calls.evidence, company=company, before=before, limit=limit)

    @server.tool(annotations=READ)
    async def facts(
        company: Company,
        as_of: Annotated[str, Field(description="Facts available strictly before this instant")],
        period: Annotated[
            str | None, Field(description="A fiscal year: FY2019, FY19, 2019")
        ] = None,
        concepts: Annotated[
            list[str] | None,
            Field(description="Line-item concepts (Inventories, Revenues, ...) to keep"),
        ] = None,
        limit: Limit = 200,
    ) -> FactsResult:
        """A company's statement facts: each figure of the primary statements (income,
        balance sheet, cash flow) of its filings, with its line item, concept, fiscal year,
        value, unit, the figure as printed, its page, and the chunk and document it came
        from. Use them to compute; cite the fact or chunk IRIs."""
        return await service.read(
            calls.facts,
            company=company,
            as_of=as_of,
            period=period,
            concepts=concepts or [],
            limit=limit,
        )

    @server.tool(annotations=READ)
    async def ask(
        question: Annotated[str, Field(description="A question about a company's filings")],
        as_of: Annotated[str, Field(description="Answer from what was available before this")],
        company: Annotated[
            str | None, Field(description="The ticker the question is about")
        ] = None,
    ) -> AskResult:
        """Answer a question from the store, as of an instant: a line item or financial
        metric (current ratio, DPO, ROA, ...) is computed from statement facts, with the
        formula and each cited fact; another question is read from retrieved evidence by
        the server's reader, when it has one. Returns the answer, its validation status
        and groundedness scores, and the cited evidence IRIs. Nothing is written."""
        call = functools.partial(service.answerer.ask, question, as_of=as_of, company=company)
        try:
            return await anyio.to_thread.run_sync(call)
        except FinkgError as e:
            raise ToolError(str(e)) from None

    @server.tool(annotations=READ)
    async def audit(
        node: Annotated[str, Field(description="Any node's IRI: an answer, a fact, a chunk")],
        limit: Limit = 50,
    ) -> AuditResult:
        """The provenance chain of a node: what generated it, what it used and cited, down to
        the source documents, their lifecycle and the ingest commits that wrote them, hop by
        hop with each hop's statements."""
        return await service.read(calls.provenance, node=node, limit=limit)

    @server.tool(annotations=READ)
    async def describe(
        node: Annotated[str, Field(description="The node's IRI")],
        as_of: AsOf = None,
        bound: Annotated[
            int, Field(ge=0, le=1000, description="Triples per predicate and direction")
        ] = 25,
        limit: Limit = 300,
    ) -> DescribeResult:
        """One node's one-hop neighbourhood (its statements and those pointing at it) as
        compact JSON-LD; as of an instant, triples touching a node not yet available are
        left out. What the bounds cut is listed in left_out."""
        return await service.read(
            calls.neighbourhood, node=node, as_of=as_of, bound=bound, limit=limit
        )

    _resources(server)
    return server


def _resources(server: MCPServer) -> None:
    from finkg.ontology import context_path, line_items_path, ontology_path
    from finkg.shapes.validate import shape_files

    def text(path: Path) -> str:
        return path.read_text(encoding="utf-8")

    @server.resource(
        "finkg://ontology",
        name="ontology",
        description="finkg's vocabulary (classes, properties, the time rule's terms)",
        mime_type="text/turtle",
    )
    def ontology() -> str:
        return text(ontology_path())

    @server.resource(
        "finkg://ontology/line-items",
        name="line-items",
        description="The statement line items as SKOS concepts, matched to US-GAAP",
        mime_type="text/turtle",
    )
    def line_items() -> str:
        return text(line_items_path())

    @server.resource(
        "finkg://context",
        name="context",
        description="The JSON-LD context of every JSON-LD result",
        mime_type="application/ld+json",
    )
    def context() -> str:
        return text(context_path())

    @server.resource(
        "finkg://shapes",
        name="shapes",
        description="The SHACL shapes every write is checked against",
        mime_type="text/turtle",
    )
    def shapes() -> str:
        return "\n".join(f"# {p.name}\n{text(p)}" for p in shape_files())

    @server.resource(
        "finkg://queries",
        name="queries",
        description="The packaged queries' catalogue (as list_queries)",
        mime_type="application/json",
    )
    def catalogue() -> str:
        return json.dumps([q.model_dump() for q in calls.catalogue()], indent=1)

    @server.resource(
        "finkg://queries/{name}",
        name="query-text",
        description="One packaged query's SPARQL, with its header",
        mime_type="application/sparql-query",
    )
    def query_text(name: str) -> str:
        from finkg import queries

        try:
            return queries.packaged(name).text
        except FinkgError as e:
            raise ResourceError(str(e)) from None


__all__ = ["INSTRUCTIONS", "Service", "build_server"]
