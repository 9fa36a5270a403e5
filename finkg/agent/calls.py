"""The store reads behind finkg's agent tools, each `f(reading, **arguments) -> model`.

They run in the worker process (`worker.py`), over the store scoped to the graphs the
server may show (`kg.scoped.ScopedStore`: every graph but the users' personal ones, or one
user's too), or over an as-of view of them (`view.py`) when the call gives `as_of`. Inputs
are checked as the CLI checks them and refused with its messages: SPARQL that does not
parse, an update, SERVICE or LOAD, an unknown ticker or query, an instant without a zone.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from pyoxigraph import NamedNode, Quad, Triple

from finkg import queries
from finkg.agent.models import (
    CONTEXT,
    AuditResult,
    DescribeResult,
    Evidence,
    EvidenceResult,
    FactsResult,
    Hop,
    InputInfo,
    QueryInfo,
    QueryResult,
    cut_note,
    shown_value,
)
from finkg.agent.view import MAX_QUADS, Views, evidence_graphs
from finkg.config import Settings
from finkg.errors import QueryError
from finkg.kg.ingest.common import parse_instant
from finkg.kg.scoped import ScopedStore, without_users
from finkg.kg.sparql_guard import iris, outbound_reason
from finkg.kg.store import BaseStore, open_store
from finkg.queries.binding import to_term
from finkg.queries.bound import Triples

ZONE = "America/New_York"  # the zone of a date given alone (the exchanges' zone)
USERS_HIDDEN = (
    "the users/* graphs hold personal data and this server does not show them; start it "
    "for one user with `finkg mcp --user ID`"
)


def instant(text: str, field: str) -> dt.datetime:
    """A zoned instant, or a date alone (its first instant in New York)."""
    return parse_instant(text, ZONE, field=field)


@dataclass(frozen=True)
class Scope:
    """What a server's reads may see: every graph but the users' personal ones, or one
    user's too (`user`); `view_limit` bounds an as-of view's copy ."""

    location: str
    settings: Settings
    user: str | None = None
    view_limit: int = MAX_QUADS


@dataclass
class Reading:
    """The worker's open store and its as-of views."""

    whole: BaseStore
    user: str | None
    views: Views

    @classmethod
    def open(cls, scope: Scope) -> Reading:
        store = open_store(scope.location, settings=scope.settings, read_only=True)
        return cls(store, scope.user, Views(max_quads=scope.view_limit))

    def store(self, as_of: dt.datetime | None = None) -> ScopedStore:
        """The graphs this server shows, now or as of an instant (`view.py`)."""
        scoped = without_users(self.whole, self.user)
        if as_of is None:
            return scoped
        shown = evidence_graphs(self.whole, scoped.allowed)
        return ScopedStore(self.views.of(self.whole, as_of, shown), shown)

    def check_graphs_named(self, text: str) -> None:
        """Refuse a query that names a users' graph this server hides (it would read
        nothing there: the dataset leaves it out; the refusal says why)."""
        prefix = self.whole.graphs.prefix + "users/"
        own = self.whole.graphs.user(self.user).value if self.user else None
        if any(i.startswith(prefix) and i != own for i in iris(text)):
            raise QueryError(USERS_HIDDEN, field="query")


def _short(store: ScopedStore, graphs: list[NamedNode]) -> list[str]:
    return [store.graphs.name_of(g) or g.value for g in graphs]


def _result(
    store: ScopedStore,
    named: queries.NamedQuery,
    values: dict[str, Any],
    *,
    limit: int,
    as_of: dt.datetime | None,
    bound: int | None = None,
) -> QueryResult:
    result = queries.run(store, named, values, bound=bound)
    common: dict[str, Any] = {
        "as_of": as_of.isoformat() if as_of else None,
        "graphs": _short(store, store.allowed),
    }
    if isinstance(result, bool):
        return QueryResult(form="ask", boolean=result, total=1, shown=1, **common)
    if isinstance(result, queries.Solutions):
        cuts: list[int] = []
        rows = [
            {k: shown_value(v, cuts) for k, v in zip(result.variables, row, strict=True) if v}
            for row in result.rows[:limit]
        ]
        left = [f"{len(result) - limit} row(s) past the limit of {limit}"] * (len(result) > limit)
        return QueryResult(
            form="select",
            variables=list(result.variables),
            rows=rows,
            total=len(result),
            shown=len(rows),
            left_out=left + cut_note(cuts),
            **common,
        )
    assert isinstance(result, list)  # a CONSTRUCT's or DESCRIBE's triples
    jsonld, shown, left = _graph(result, limit)
    return QueryResult(
        form="construct", jsonld=jsonld, total=len(result), shown=shown, left_out=left, **common
    )


def _graph(triples: list[Triple], limit: int) -> tuple[dict[str, Any], int, list[str]]:
    """Compact JSON-LD of the first `limit` triples (sorted), and what was left out."""
    from finkg.kg.jsonld import to_jsonld

    chosen = sorted(triples, key=str)[:limit]
    body = to_jsonld(Quad(t.subject, t.predicate, t.object) for t in chosen)
    body["@context"] = CONTEXT
    left = [f"{len(triples) - limit} triple(s) past the limit of {limit}"] * (len(triples) > limit)
    if isinstance(triples, Triples):
        left += [str(c) for c in triples.cuts]
    return body, len(chosen), left


def _read_only(named: queries.NamedQuery, text: str) -> None:
    if named.form == "update":
        raise QueryError(
            "this server is read-only: SELECT, ASK, CONSTRUCT and DESCRIBE only, no updates",
            field="query",
            value=named.name if named.path is not None else None,
        )
    reason = outbound_reason(text)
    if reason is not None:
        raise QueryError(
            f"{reason} is refused: it would make finkg send requests to other hosts",
            field="query",
        )


# -- the tools' reads ------------------------------------------------------------------------


def sparql(r: Reading, *, text: str, as_of: str | None, limit: int) -> QueryResult:
    """`query`: read-only SPARQL over the graphs this server shows, as of an instant."""
    named = queries.parse(text, name="query")
    _read_only(named, text)
    r.check_graphs_named(text)
    at = instant(as_of, "as_of") if as_of else None
    return _result(r.store(at), named, {}, limit=limit, as_of=at)


def catalogue(_r: Reading | None = None) -> list[QueryInfo]:
    """`list_queries`: the packaged read queries, with their typed inputs."""
    return [
        QueryInfo(
            name=q.name,
            form=q.form,
            summary=q.summary,
            inputs=[
                InputInfo(
                    name=i.name,
                    type=i.type,
                    many=i.many,
                    optional=i.optional,
                    description=i.description,
                )
                for i in q.inputs
            ],
            outputs=list(q.outputs),
        )
        for q in queries.catalog()
        if q.form != "update"
    ]


def packaged(
    r: Reading,
    *,
    name: str,
    bindings: dict[str, str | list[str]],
    as_of: str | None,
    limit: int,
    bound: int | None,
) -> QueryResult:
    """`run_query`: a packaged query with typed bindings."""
    named = queries.packaged(name)
    _read_only(named, named.text)
    at = instant(as_of, "as_of") if as_of else None
    return _result(r.store(at), named, dict(bindings), limit=limit, as_of=at, bound=bound)


def _company(store: ScopedStore, company: str) -> NamedNode:
    from finkg.tasks.qa.setup import resolve_company

    if company.startswith(("http://", "https://")):
        term = to_term(company, "iri", name="company")
        assert isinstance(term, NamedNode)  # an iri input's
        return term
    node = resolve_company(store, company)
    assert node is not None  # a ticker was given
    return node


def evidence(r: Reading, *, company: str, before: str, limit: int) -> EvidenceResult:
    """`evidence_before`: a company's evidence strictly before an instant, newest first."""
    at = instant(before, "before")
    store = r.store()
    node = _company(store, company)
    rows = queries.select(store, "evidence_before", {"company": node, "before": at})
    cuts: list[int] = []
    items = [
        Evidence(
            iri=row.iri("evidence").value,
            kind=row.string("class"),
            family=row.string("family"),
            available_at=row.string("availableAt"),
            text=str(shown_value(row.term("text"), cuts)),
        )
        for row in rows[:limit]
    ]
    left = [f"{len(rows) - limit} older item(s) past the limit of {limit}"] * (len(rows) > limit)
    return EvidenceResult(
        company=node.value,
        before=at.isoformat(),
        evidence=items,
        total=len(rows),
        shown=len(items),
        left_out=left + cut_note(cuts),
    )


def facts(
    r: Reading,
    *,
    company: str,
    as_of: str,
    period: str | None,
    concepts: list[str],
    limit: int,
) -> FactsResult:
    """`facts`: a company's statement facts available before an instant."""
    from finkg.kg.facts.listing import facts_of, fiscal_year

    at = instant(as_of, "as_of")
    store = r.store()
    node = _company(store, company)
    year = fiscal_year(period) if period else None
    found = facts_of(store, node, before=at, year=year, concepts=concepts)
    left = [f"{len(found) - limit} fact(s) past the limit of {limit}"] * (len(found) > limit)
    return FactsResult(
        company=node.value,
        as_of=at.isoformat(),
        facts=[f.row() for f in found[:limit]],
        total=len(found),
        shown=min(len(found), limit),
        left_out=left,
    )


def provenance(r: Reading, *, node: str, limit: int) -> AuditResult:
    """`audit`: a node's provenance chain, hop by hop."""
    from finkg.kg.audit import trace

    hops = trace(r.store(), node)
    cuts: list[int] = []
    shown = [
        Hop(
            iri=h.iri,
            depth=h.depth,
            statements=[(p, _cut_text(o, cuts)) for p, o in h.statements[:limit]],
        )
        for h in hops[:limit]
    ]
    long = sum(len(h.statements) > limit for h in hops[:limit])
    left = [f"{len(hops) - limit} hop(s) past the limit of {limit}"] * (len(hops) > limit)
    left += [f"{long} hop(s) cut to {limit} statements"] * bool(long)
    return AuditResult(
        node=node, hops=shown, total=len(hops), shown=len(shown), left_out=left + cut_note(cuts)
    )


def _cut_text(value: str, cuts: list[int]) -> str:
    from finkg.agent.models import MAX_CHARS

    if len(value) <= MAX_CHARS:
        return value
    cuts.append(len(value))
    return value[:MAX_CHARS] + f"… [{len(value) - MAX_CHARS} more characters]"


def neighbourhood(
    r: Reading, *, node: str, as_of: str | None, bound: int, limit: int
) -> DescribeResult:
    """`describe`: one node's one-hop neighbourhood (`one_hop.rq`, or `one_hop_before.rq`
    as of an instant), each predicate and direction cut to `bound` triples."""
    term = to_term(node, "iri", name="node")
    store = r.store()
    if as_of:
        at = instant(as_of, "as_of")
        values: dict[str, Any] = {"node": [term], "before": at}
        triples = queries.construct(store, "one_hop_before", values, bound=bound)
    else:
        at = None
        triples = queries.construct(store, "one_hop", {"node": [term]}, bound=bound)
    jsonld, shown, left = _graph(triples, limit)
    return DescribeResult(
        node=node,
        as_of=at.isoformat() if at else None,
        jsonld=jsonld,
        total=len(triples),
        shown=shown,
        left_out=left,
    )


__all__ = [
    "Reading",
    "Scope",
    "catalogue",
    "evidence",
    "facts",
    "instant",
    "neighbourhood",
    "packaged",
    "provenance",
    "sparql",
]
