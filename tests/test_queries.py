"""Every .rq file parses and documents itself; values go in as terms, never as text."""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo

import pyoxigraph as ox
import pytest
from pyoxigraph import Literal, NamedNode, Quad

from finkg import queries
from finkg.errors import QueryError, TimestampError
from finkg.kg.graphs import Graphs
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG, PROV, RDF, XSD
from finkg.queries.binding import bind, inline_iri, to_term

NY = ZoneInfo("America/New_York")
ID = "https://w3id.org/finkg/id/"
HOSTILE = 'x" } ; DROP ALL ; INSERT DATA { <urn:a> <urn:b> "c" } #{'


def test_a_summary_is_the_first_sentence_over_its_lines() -> None:
    """`finkg query --list` cut `bars_on` mid-sentence: the summary was the first line."""
    q = queries.parse(
        "# bars_on: the closes of the given bars, those that are\n# stored, newest first. Bars are"
        " keyed by day.\n#\n# input  ?bar  iri*  bar IRIs\nSELECT ?x WHERE { ?x ?p ?o }"
    )
    assert q.summary == "the closes of the given bars, those that are stored, newest first."
    assert queries.parse("# q: all of it\n# input ?x iri\nASK {}").summary == "all of it"


@pytest.mark.parametrize("q", queries.catalog(), ids=lambda q: q.name)
def test_every_query_parses_and_has_a_header(q: queries.NamedQuery) -> None:
    assert q.path is not None and q.name == q.path.stem
    assert q.summary, f"{q.name}: first line must be '# {q.name}: what it returns'"
    # `finkg query --list` shows the summary: a whole sentence, never one cut at a line end
    assert q.summary.endswith((".", ")")), (q.name, q.summary)
    assert q.text.splitlines()[0].startswith(f"# {q.name}:")
    scratch = ox.Store()
    graphs = Graphs()
    if q.form == "update":
        scratch.update(bind(q.text, {("g", "s", "p", "o"): []}))
        return
    text = bind(q.text, {i.name: _example(i) for i in q.inputs}) if q.inputs else q.text
    scratch.query(text)  # raises SyntaxError if it does not parse
    if q.form == "select":
        projected = re.search(r"SELECT\s+(DISTINCT\s+)?(.*?)\s*WHERE", q.text, re.S | re.I)
        assert projected is not None
        names = re.findall(r"\?(\w+)\s*\)|\?(\w+)", projected.group(2))
        assert [a or b for a, b in names if (a or b)] and q.outputs, q.name
        assert set(q.outputs) <= {a or b for a, b in names}, q.name
    assert graphs  # the graph helper stays importable with the catalog


@pytest.mark.parametrize("q", queries.catalog(), ids=lambda q: q.name)
def test_every_query_still_parses_as_prepared_with_its_iris_written_in(
    q: queries.NamedQuery,
) -> None:
    if not q.inputs:
        return
    text = queries.prepare(q, {i.name: _example(i) for i in q.inputs}, graphs=Graphs())
    scratch = ox.Store()
    (scratch.update if q.form == "update" else scratch.query)(text)


def _example(i: queries.Input) -> object:
    if i.type in ("iri", "graph"):
        value: object = NamedNode(ID + "x")
    elif i.type == "dateTime":
        value = to_term("2020-01-01T00:00:00Z", "dateTime")
    elif i.type == "date":
        value = to_term("2020-01-01", "date")
    else:
        value = to_term("1", i.type)
    return [value] if i.many else value


def test_a_hostile_value_stays_one_literal(store: BaseStore) -> None:
    company = NamedNode(ID + "company/ACME")
    news = store.graphs.news
    store.write(add=[Quad(NamedNode(ID + "n1"), FKG.about, company, news)], note="x")
    before = store.generation()
    text = queries.prepare(
        queries.parse(
            "SELECT ?name ?s WHERE { GRAPH ?g { ?s <https://w3id.org/finkg/ns#about> ?o } }\n"
        ),
        {"name": HOSTILE},
        graphs=store.graphs,
    )
    rows = store.select(text)
    assert rows.column("name") == [Literal(HOSTILE)]
    assert store.generation() == before
    assert not store.ask("ASK WHERE { GRAPH ?g { <urn:a> <urn:b> ?c } }")
    assert len(list(store.quads(news))) == 1  # DROP ALL did not run


def test_a_hostile_iri_is_refused_not_pasted() -> None:
    with pytest.raises(QueryError, match="not a valid iri"):
        to_term("https://e.org/a> } ; DROP ALL ; <x", "iri")
    with pytest.raises(QueryError):
        to_term("no-scheme", "iri")


def test_naive_timestamps_cannot_be_bound() -> None:
    with pytest.raises(TimestampError, match="no zone"):
        to_term("2020-05-01T09:30:00", "dateTime")
    with pytest.raises(TimestampError):
        to_term(dt.datetime(2020, 5, 1, 9, 30))  # noqa: DTZ001 (the point of the test)


def test_binder_skips_strings_comments_and_subqueries() -> None:
    text = (
        "# WHERE { in a comment\n"
        'SELECT ?x WHERE { ?x <urn:p> "WHERE {" . '
        "{ SELECT ?x WHERE { ?x ?q ?r } } }"
    )
    bound = bind(text, {"y": Literal("v")})
    assert bound.count('VALUES (?y) { ("v") }') == 1
    assert (
        bound.index("VALUES") == bound.index("WHERE {", text.index("SELECT")) + len("WHERE {") + 1
    )


def test_a_single_iri_is_written_in_as_a_constant_only_where_it_means_the_same() -> None:
    g = NamedNode("urn:g")
    text = (
        "# ?g in a comment\n"
        'SELECT ?s WHERE { GRAPH ?g { ?s <urn:p> "?g" ; <urn:q> ?graph } FILTER (?g != <urn:x?g>) }'
    )
    assert inline_iri(text, "g", g) == text.replace("GRAPH ?g", "GRAPH <urn:g>").replace(
        "(?g !=", "(<urn:g> !="
    )
    for meaning in (
        "SELECT ?s ?g WHERE { GRAPH ?g { ?s ?p ?o } }",  # an output
        "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }",
        "SELECT ?s WHERE { { SELECT ?s ?g WHERE { GRAPH ?g { ?s ?p ?o } } } }",
        "SELECT ?s WHERE { GRAPH ?h { ?s ?p ?o } BIND (?h AS ?g) }",
        "SELECT ?s WHERE { ?s ?p ?o FILTER (!BOUND(?g)) }",
        "SELECT ?s WHERE { ?s ?p ?o MINUS { GRAPH ?g { ?s ?p ?o } } }",
        "SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?s ?g",
        "SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o } } ORDER BY ?g",
    ):
        assert inline_iri(meaning, "g", g) is None, meaning


def test_a_prepared_query_answers_the_same_with_its_graph_written_in(store: BaseStore) -> None:
    news, outputs = store.graphs.news, store.graphs.outputs
    a, b = NamedNode(ID + "a"), NamedNode(ID + "b")
    store.write(
        add=[Quad(a, FKG.cites, b, outputs), Quad(b, FKG.sourceFamily, FKG.News, news)],
        note="x",
    )
    q = queries.load("signal_citations")
    text = queries.prepare(q, {"signal": [a]}, graphs=store.graphs)
    assert f"GRAPH <{outputs.value}>" in text and "?outputsGraph" not in text.split("SELECT")[1]
    assert "VALUES ?signal" in text  # a list stays a VALUES block
    bound = bind(q.text, {"signal": [a], "outputsGraph": outputs})
    for query in (text, bound):
        assert store.select(query, default_graphs="union").rows == [(a, FKG.News)]


def test_binder_binds_every_operation_of_an_update() -> None:
    text = "DELETE { ?s ?p ?o } WHERE { ?s ?p ?o } ; INSERT { ?s ?p 1 } WHERE { ?s ?p ?o }"
    assert bind(text, {"s": NamedNode("urn:a")}).count("VALUES") == 2


def test_binding_needs_an_explicit_where() -> None:
    with pytest.raises(QueryError, match="WHERE"):
        bind("ASK { ?s ?p ?o }", {"s": NamedNode("urn:a")})


def test_unknown_and_missing_inputs_are_named() -> None:
    q = queries.load("evidence_before")
    with pytest.raises(QueryError, match=r"no input \?compny"):
        queries.prepare(q, {"compny": ID + "c", "before": "2020-01-01T00:00:00Z"}, graphs=Graphs())
    with pytest.raises(QueryError, match=r"needs a value for \?before"):
        queries.prepare(q, {"company": ID + "c"}, graphs=Graphs())


def test_updates_need_permission(store: BaseStore) -> None:
    with pytest.raises(QueryError, match="read-only"):
        queries.run(store, "DELETE WHERE { GRAPH ?g { ?s ?p ?o } }")
    # it may write any graph, the audit graph among them: maintenance (issue 38 item 2)
    with pytest.raises(QueryError, match="maintenance"):
        queries.run(store, "DELETE WHERE { GRAPH ?g { ?s ?p ?o } }", allow_update=True)
    assert store.generation() == 0
    queries.run(
        store, "DELETE WHERE { GRAPH ?g { ?s ?p ?o } }", allow_update=True, maintenance=True
    )
    assert store.generation() == 1


def _evidence(i: int, company: NamedNode, at: dt.datetime, graph: NamedNode) -> list[Quad]:
    node, doc = NamedNode(f"{ID}news/n{i}"), NamedNode(f"{ID}doc/d{i}")
    return [
        Quad(node, RDF.type, FKG.NewsArticle, graph),
        Quad(node, FKG.about, company, graph),
        Quad(node, FKG.availableAt, Literal(at.isoformat(), datatype=XSD.dateTime), graph),
        Quad(node, FKG.sourceFamily, FKG.News, graph),
        Quad(node, FKG.text, Literal(f"item {i}"), graph),
        Quad(node, PROV.wasDerivedFrom, doc, graph),
    ]


def test_point_in_time_evidence_is_strictly_before_the_bound(store: BaseStore) -> None:
    acme, other = NamedNode(ID + "company/ACME"), NamedNode(ID + "company/OTHER")
    bound = dt.datetime(2020, 4, 30, 16, 0, tzinfo=NY)
    times = {
        1: bound - dt.timedelta(days=1),
        2: bound - dt.timedelta(seconds=1),
        3: bound,  # equal: not eligible
        4: bound + dt.timedelta(seconds=1),
        5: (bound - dt.timedelta(minutes=1)).astimezone(dt.UTC),  # same instant rule in UTC
        6: (bound + dt.timedelta(minutes=1)).astimezone(ZoneInfo("Asia/Tokyo")),
    }
    quads = [x for i, t in times.items() for x in _evidence(i, acme, t, store.graphs.news)]
    quads += _evidence(9, other, bound - dt.timedelta(days=2), store.graphs.news)
    store.write(add=quads, note="x")
    rows = queries.run(store, "evidence_before", {"company": acme.value, "before": bound})
    got = [r["evidence"].value.rsplit("/", 1)[1] for r in rows]
    assert got == ["n2", "n5", "n1"]  # newest first; n3 (equal), n4, n6 (after), n9 (other)
    for r in rows:
        assert dt.datetime.fromisoformat(r["availableAt"].value) < bound


def test_one_hop_returns_the_paper_template_subgraph(store: BaseStore) -> None:
    acme = NamedNode(ID + "company/ACME")
    store.write(
        add=_evidence(1, acme, dt.datetime(2020, 1, 1, tzinfo=NY), store.graphs.news)
        + _evidence(
            2, NamedNode(ID + "company/B"), dt.datetime(2020, 1, 1, tzinfo=NY), store.graphs.news
        ),
        note="x",
    )
    n1 = NamedNode(ID + "news/n1")
    triples = queries.run(store, "one_hop", {"node": [n1, acme]})
    subjects_or_objects = {(t.subject, t.object) for t in triples}
    assert len(triples) == 6  # n1's six statements; acme only appears as n1's object
    assert all(n1 in pair or acme in pair for pair in subjects_or_objects)
    only_market = queries.run(
        store, "one_hop", {"node": [n1]}, default_graphs=[store.graphs.market]
    )
    assert only_market == []


def test_future_evidence_counts_each_kind_of_leak(store: BaseStore) -> None:
    g = store.graphs.outputs
    t = lambda s: Literal(s, datatype=XSD.dateTime)  # noqa: E731
    out, run, use = (NamedNode(ID + x) for x in ("answer/1", "run/1", "usage/1"))
    early, late = NamedNode(ID + "news/early"), NamedNode(ID + "news/late")
    quads = [
        Quad(out, FKG.asOf, t("2020-04-30T16:30:00-04:00"), g),
        Quad(out, PROV.wasGeneratedBy, run, g),
        Quad(run, PROV.qualifiedUsage, use, g),
        Quad(use, PROV.entity, late, g),
        Quad(out, FKG.cites, early, g),
        Quad(early, FKG.availableAt, t("2020-04-30T09:00:00-04:00"), store.graphs.news),
        Quad(late, FKG.availableAt, t("2020-04-30T16:30:00-04:00"), store.graphs.news),  # at: leak
    ]
    store.write(add=quads, note="x")
    assert int(queries.run(store, "future_evidence").scalar().value) == 1  # type: ignore[union-attr]
    m, acme = store.graphs.market, NamedNode(ID + "company/ACME")
    bar, window = NamedNode(ID + "bar/ACME/2020-04-30"), NamedNode(ID + "window/ACME/x")
    day = Literal("2020-04-30", datatype=XSD.date)
    store.write(
        add=[
            Quad(bar, RDF.type, FKG.PriceBar, m),
            Quad(bar, FKG.about, acme, m),
            Quad(bar, FKG.sessionDate, day, m),
            Quad(bar, FKG.availableAt, t("2020-04-30T16:00:00-04:00"), m),
            Quad(window, FKG.sourceFamily, FKG.Market, m),
            Quad(window, FKG.about, acme, m),
            Quad(window, FKG.sessionDate, day, m),
            Quad(window, FKG.availableAt, t("2020-04-30T15:59:59-04:00"), m),  # before its bar
        ],
        note="y",
    )
    assert int(queries.run(store, "future_evidence").scalar().value) == 2  # type: ignore[union-attr]


def test_one_hop_is_bounded_per_node_predicate_and_direction(store: BaseStore) -> None:
    """`finkg query one_hop` on a company returned 8,973 nodes: every window about it."""
    acme = NamedNode(ID + "company/ACME")
    about = [
        Quad(NamedNode(f"{ID}window/w{i}"), FKG.about, acme, store.graphs.market) for i in range(40)
    ]
    own = [Quad(acme, FKG.ticker, Literal("ACME"), store.graphs.market)]
    store.write(add=about + own, note="x")
    bounded = queries.run(store, "one_hop", {"node": [acme]})
    assert len(bounded) == 26  # 25 of the 40 windows, and the ticker
    assert [str(c) for c in bounded.cuts] == [  # type: ignore[union-attr]
        f"25 of 40 <{FKG.about.value}> triples pointing at <{acme.value}>"
    ]
    assert bounded == queries.run(store, "one_hop", {"node": [acme]})  # the same sample
    assert len(queries.run(store, "one_hop", {"node": [acme]}, bound=0)) == 41
    assert len(queries.run(store, "one_hop", {"node": [acme]}, bound=5)) == 6
    with pytest.raises(QueryError, match="declares no bound"):
        queries.run(store, "graph_counts", bound=5)
