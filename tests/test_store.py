"""The store protocol, run on every backend: embedded, the Oxigraph server and Virtuoso."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox
import pytest
from pyoxigraph import Literal, NamedNode, Quad

from finkg import queries
from finkg.config import Settings
from finkg.errors import InputError, MissingStoreError, QueryError, StoreError
from finkg.kg.setup import init_store
from finkg.kg.store import BaseStore, Store, open_store
from finkg.ontology.terms import FKG, RDF
from tests.backends import ENGINES, open_backend

EX = "https://example.org/"


@pytest.fixture(params=ENGINES)
def store(request: pytest.FixtureRequest, settings: Settings) -> Iterator[BaseStore]:
    """A fresh, empty store on each engine (Virtuoso too: this is the store suite)."""
    s = open_backend(request.param, settings)
    yield s
    s.close()


def q(s: str, o: str, graph: NamedNode, p: str = "p") -> Quad:
    return Quad(NamedNode(EX + s), NamedNode(EX + p), Literal(o), graph)


def test_both_backends_satisfy_the_protocol(store: BaseStore) -> None:
    assert isinstance(store, Store)


def test_comment_lines_are_not_read_as_the_query_form(store: BaseStore) -> None:
    """SPARQLWrapper's comment filter skipped every other comment line, so a header line
    starting "Loaders" made a SELECT go out as a LOAD update."""
    news = store.graphs.news
    store.write(add=[q("a", "1", news)], note="one")
    header = "# one\n# Loaders look here\n# Ask me\n# Describe it\n"
    where = f"WHERE {{ GRAPH <{news.value}> {{ ?s ?p ?o }} }}"
    assert [r["s"] for r in store.select(f"{header}SELECT ?s {where}")] == [NamedNode(EX + "a")]
    assert store.ask(f"{header}ASK {where}")
    assert len(store.construct(f"{header}CONSTRUCT {{ ?s ?p ?o }} {where}")) == 1


def test_a_new_store_is_empty_at_generation_zero(store: BaseStore) -> None:
    assert store.generation() == 0
    assert store.named_graphs() == []


def test_every_write_changes_the_generation(store: BaseStore) -> None:
    news = store.graphs.news
    seen = [store.generation()]
    store.write(add=[q("a", "1", news)], note="one")
    seen.append(store.generation())
    store.write(add=[q("b", "2", news)], remove=[q("a", "1", news)], note="two")
    seen.append(store.generation())
    store.update(f"DELETE WHERE {{ GRAPH <{news.value}> {{ ?s ?p ?o }} }}", note="three")
    seen.append(store.generation())
    assert seen == [0, 1, 2, 3]
    assert list(store.quads(news)) == []


def test_generation_grows_even_when_a_write_wipes_the_audit_graph(store: BaseStore) -> None:
    """Regression: counting commits let `DELETE WHERE { GRAPH ?g { ?s ?p ?o } }` take the
    generation back to 1, so an index built at generation 1 looked current."""
    store.write(add=[q("a", "1", store.graphs.news)], note="one")
    assert store.generation() == 1
    # every graph of finkg's (an engine may keep graphs of its own: Virtuoso's system graphs)
    store.update(
        "DELETE { GRAPH ?g { ?s ?p ?o } } WHERE { GRAPH ?g { ?s ?p ?o } "
        f'FILTER (STRSTARTS(STR(?g), "{store.graphs.prefix}")) }}',
        note="wipe everything",
        maintenance=True,  # it wipes the audit graph too
    )
    assert store.generation() == 2


def test_the_generation_is_the_audit_graphs_after_writes_updates_and_failures(
    store: BaseStore,
) -> None:
    """The embedded writer keeps the generation it committed instead of scanning every
    commit for it (a prediction run writes thousands); it must still be the audit graph's."""
    news = store.graphs.news
    store.write(add=[q("a", "1", news)], note="one")
    with pytest.raises(QueryError):
        store.update("THIS IS NOT SPARQL", note="bad")
    store.update(f"INSERT DATA {{ GRAPH <{news.value}> {{ <{EX}b> <{EX}p> 2 }} }}", note="two")
    data = ox.serialize([q("c", "3", news)], format=ox.RdfFormat.N_QUADS)
    store.write_nquads(data, count=1, note="three")
    in_audit = queries.run(store, "store_generation").scalar()
    assert store.generation() == int(in_audit.value) == 3  # type: ignore[union-attr]


def test_an_empty_write_writes_nothing(store: BaseStore) -> None:
    assert store.write(add=[], note="nothing") is None
    assert store.generation() == 0


def test_a_commit_is_recorded_in_the_audit_graph(store: BaseStore) -> None:
    commit = store.write(add=[q("a", "1", store.graphs.news)], note="ingest news: x.jsonl")
    assert commit is not None and commit.quad_count == 1
    audit = set(store.quads(store.graphs.audit))
    assert Quad(commit.iri, RDF.type, FKG.Commit, store.graphs.audit) in audit
    assert any(x.object == Literal("ingest news: x.jsonl") for x in audit)


def test_remove_and_add_happen_together(store: BaseStore) -> None:
    news = store.graphs.news
    store.write(add=[q("a", "old", news)], note="one")
    store.write(add=[q("a", "new", news)], remove=[q("a", "old", news)], note="swap")
    assert [x.object.value for x in store.quads(news)] == ["new"]


def test_a_write_outside_a_named_graph_is_refused(store: BaseStore) -> None:
    with pytest.raises(InputError, match="named graph"):
        store.write(add=[Quad(NamedNode(EX + "a"), NamedNode(EX + "p"), Literal("x"))], note="x")
    assert store.generation() == 0


def test_select_construct_ask(store: BaseStore) -> None:
    news = store.graphs.news
    store.write(add=[q("a", "1", news), q("b", "2", news)], note="x")
    rows = store.select(f"SELECT ?s ?o WHERE {{ GRAPH <{news.value}> {{ ?s ?p ?o }} }} ORDER BY ?s")
    assert rows.variables == ("s", "o")
    assert [r["o"] for r in rows] == [Literal("1"), Literal("2")]
    triples = store.construct(
        f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH <{news.value}> {{ ?s ?p ?o }} }}"
    )
    assert {t.object.value for t in triples} == {"1", "2"}
    assert store.ask(f'ASK WHERE {{ GRAPH <{news.value}> {{ ?s ?p "2" }} }}') is True
    assert store.ask(f'ASK WHERE {{ GRAPH <{news.value}> {{ ?s ?p "3" }} }}') is False


def test_a_dataset_restricts_what_a_query_reads(store: BaseStore) -> None:
    """A query given [market, users/a] cannot read users/b, through GRAPH ?g either."""
    a, b, market = store.graphs.user("a"), store.graphs.user("b"), store.graphs.market
    store.write(add=[q("t1", "a's", a), q("t2", "b's", b), q("m", "market", market)], note="x")
    seen = store.select("SELECT ?o WHERE { ?s ?p ?o }", default_graphs=[a, market])
    assert {r["o"].value for r in seen} == {"a's", "market"}
    via_graph = store.select(
        "SELECT ?o WHERE { GRAPH ?g { ?s ?p ?o } }", default_graphs=[a, market]
    )
    assert "b's" not in {r["o"].value for r in via_graph}
    union = store.select("SELECT ?o WHERE { ?s ?p ?o }", default_graphs="union")
    assert {"a's", "b's", "market"} <= {r["o"].value for r in union}


def test_a_union_over_many_graphs_is_answered_whole(store: BaseStore) -> None:
    """Virtuoso answers with a header per dataset graph, and Python's http.client refused a
    response of more than 100: on 60 graphs every union query failed half way."""
    users = [store.graphs.user(f"u{i}") for i in range(60)]
    store.write(add=[q(f"t{i}", f"u{i}'s", g) for i, g in enumerate(users)], note="x")
    union = store.select("SELECT ?o WHERE { ?s ?p ?o }", default_graphs="union")
    assert {f"u{i}'s" for i in range(60)} <= {r["o"].value for r in union}
    hop = queries.run(store, "one_hop", {"node": [NamedNode(EX + "t7")]}, bound=0)
    assert [t.object.value for t in hop] == ["u7's"]  # type: ignore[union-attr]


def test_load_puts_triples_into_one_graph(store: BaseStore) -> None:
    data = b'<https://example.org/a> <https://example.org/p> "loaded" .\n'
    commit = store.load(data, format=ox.RdfFormat.N_TRIPLES, graph=store.graphs.market, note="load")
    assert commit is not None and commit.quad_count == 1
    assert [x.object.value for x in store.quads(store.graphs.market)] == ["loaded"]
    assert store.generation() == 1


def test_load_refuses_bad_data_and_writes_nothing(store: BaseStore) -> None:
    with pytest.raises(InputError, match="line 1"):
        store.load(
            b"<https://example.org/a> <p> .",
            format=ox.RdfFormat.N_TRIPLES,
            graph=store.graphs.market,
            note="bad",
        )
    assert store.generation() == 0


def test_init_loads_the_ontology_once(store: BaseStore) -> None:
    assert init_store(store) is not None
    assert init_store(store) is None  # already current: no write, no new generation
    assert store.generation() == 1
    assert any(x.subject == FKG.Evidence for x in store.quads(store.graphs.ontology))


def test_a_read_only_store_refuses_writes(tmp_path: Path, settings: Settings) -> None:
    with open_store(tmp_path / "s", settings=settings) as s:
        s.write(add=[q("a", "1", s.graphs.news)], note="x")
    with open_store(tmp_path / "s", settings=settings, read_only=True) as ro:
        with pytest.raises(StoreError, match="read-only"):
            ro.write(add=[q("b", "2", ro.graphs.news)], note="y")
        assert ro.generation() == 1


def test_on_disk_data_persists(tmp_path: Path, settings: Settings) -> None:
    with open_store(tmp_path / "s", settings=settings) as s:
        s.write(add=[q("a", "kept", s.graphs.news)], note="x")
    with open_store(tmp_path / "s", settings=settings) as s:
        assert [x.object.value for x in s.quads(s.graphs.news)] == ["kept"]
        assert s.generation() == 1


def test_a_missing_read_only_store_says_how_to_create_one(
    tmp_path: Path, settings: Settings
) -> None:
    with pytest.raises(MissingStoreError, match="finkg init") as e:
        open_store(tmp_path / "absent", settings=settings, read_only=True)
    assert e.value.exit_code == 2  # the user's input, not an internal error


def test_an_unreachable_endpoint_is_a_clear_store_error(settings: Settings) -> None:
    s = open_store("http://127.0.0.1:9/query", settings=settings)
    with pytest.raises(StoreError, match="cannot reach"):
        s.generation()


def test_query_syntax_errors_name_the_position(store: BaseStore) -> None:
    from finkg.errors import QueryError

    # line 1, column 26: the closing brace (Virtuoso names the line and the token, not the column)
    with pytest.raises(QueryError, match=r"1:26|line 1: syntax error at '}'"):
        store.select("SELECT ?x WHERE { ?x ?y }")
    with pytest.raises(QueryError):
        queries.run(store, "SELECT ?x WHERE { ?x ?y }")


LITERALS = [  # (lexical form, datatype or language); the forms Virtuoso rewrites included
    ("0.6", "http://www.w3.org/2001/XMLSchema#double"),
    ("10.50", "http://www.w3.org/2001/XMLSchema#decimal"),
    ("-7", "http://www.w3.org/2001/XMLSchema#integer"),
    ("2020-01-03T08:30:00-05:00", "http://www.w3.org/2001/XMLSchema#dateTime"),
    ("2020-01-03T13:30:00.250Z", "http://www.w3.org/2001/XMLSchema#dateTime"),
    ("2020-01-03", "http://www.w3.org/2001/XMLSchema#date"),
    ("true", "http://www.w3.org/2001/XMLSchema#boolean"),
    ('{"k": [1, 2]}', "http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON"),
    ('a "quoted"\nline, Café ✓', None),
    ("Ça", "@fr"),
]


def test_literals_come_back_with_their_type_and_value(store: BaseStore) -> None:
    """An engine may write a value its own way (Virtuoso: 10.5 for 10.50, 1 for true), but
    never as another type or another value, from SELECT or CONSTRUCT: Virtuoso's Turtle
    wrote the double 0.6 as 0.5999999999999999778, a decimal; finkg asks for N-Triples."""
    from finkg.queries.results import comparable

    def literal(text: str, kind: str | None) -> Literal:
        if kind is None:
            return Literal(text)
        if kind.startswith("@"):
            return Literal(text, language=kind[1:])
        return Literal(text, datatype=NamedNode(kind))

    news = store.graphs.news
    written = [literal(t, k) for t, k in LITERALS]
    subjects = [NamedNode(f"{EX}s{i}") for i in range(len(written))]
    store.write(
        add=[Quad(s, NamedNode(EX + "p"), o, news) for s, o in zip(subjects, written, strict=True)],
        note="literals",
    )
    where = f"WHERE {{ GRAPH <{news.value}> {{ ?s <{EX}p> ?o }} }}"
    selected = {r["s"].value: r["o"] for r in store.select(f"SELECT ?s ?o {where}")}
    built = {
        t.subject.value: t.object for t in store.construct(f"CONSTRUCT {{ ?s <{EX}p> ?o }} {where}")
    }
    for i, o in enumerate(written):
        for got in (selected[f"{EX}s{i}"], built[f"{EX}s{i}"]):
            assert (got.datatype, got.language) == (o.datatype, o.language), (o, got)
            assert comparable(got) == comparable(o), (o, got)
