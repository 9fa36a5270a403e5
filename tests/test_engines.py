"""Every packaged query gives the same answer on every engine.

`tests/data/engines/world.trig` is loaded into the embedded store (the reference), the
Oxigraph server and Virtuoso 7; each `.rq` runs through `queries.run` with the values and
dataset its callers use (`CASES`), and the answers are compared without regard to order.
Literals are compared by value where an engine writes the same value another way
(`queries.results.comparable`: a number by value, a dateTime as its instant, `true` and
`1` alike). Where a query's answer is not fixed by SPARQL
itself, the difference is documented next to the query and normalised here (`SPLIT`).

A new `.rq` file needs a case here: `test_every_query_has_a_case` fails until it has one.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyoxigraph as ox
import pytest
from pyoxigraph import Literal, NamedNode, Quad

from finkg import queries
from finkg.config import Settings
from finkg.kg.graphs import Graphs
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG
from finkg.queries.results import comparable
from tests.backends import ENGINES, open_backend

WORLD = Path(__file__).parent / "data" / "engines" / "world.trig"
ID = "https://w3id.org/finkg/id/"
G = Graphs()
WORLD_COMMIT = NamedNode(ID + "commit/engines-world")
XSD = "http://www.w3.org/2001/XMLSchema#"
OTHERS = [p for p in ENGINES if getattr(p, "values", (p,))[0] != "embedded"]


def iri(path: str) -> NamedNode:
    return NamedNode(ID + path)


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


def day(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


@dataclass(frozen=True)
class Case:
    values: dict[str, object] = field(default_factory=dict)
    dataset: list[NamedNode] | str | None = None
    empty: bool = False  # an empty answer is the right one


AAA, BBB = iri("company/AAA"), iri("company/BBB")
WINDOW = {"firstDay": day("2020-01-01"), "lastDay": day("2020-01-31")}
EVIDENCE = [G.news, G.filings, G.documents, G.market]

CASES: dict[str, tuple[Case, ...]] = {
    "adj_closes": (
        Case(
            {
                "entity": [AAA, iri("asset/X1")],
                "first": day("2020-01-02"),
                "last": day("2020-01-03"),
            }
        ),
    ),
    "asset_closes": (
        Case({"after": at("2020-01-01T00:00:00+00:00"), "until": at("2020-01-03T16:00:00-05:00")}),
    ),
    "bank_entries": (
        Case({"company": AAA, "before": at("2020-01-01T00:00:00+00:00")}),
        Case(),
    ),
    "bars_on": (Case({"bar": [iri("bar/AAA/2020-01-02"), iri("bar/AAA/2020-01-03")]}),),
    "bars_until": (Case({"entity": AAA, "last": day("2020-01-03")}),),
    "char_spans": (Case({"node": [iri("passage/1"), iri("passage/2"), iri("chunk/1")]}),),
    "chunk_neighbours": (
        Case({"chunk": [iri("passage/2"), iri("chunk/1")], "k": 1}),
        Case({"chunk": [iri("passage/2")], "k": 2, "before": at("2019-11-01T16:05:01-04:00")}),
    ),
    "class_counts": (Case(),),
    "class_members": (
        Case({"class": FKG.NewsArticle, "before": at("2020-01-03T00:00:00Z")}, [G.news]),
    ),
    "classes_present": (Case(dataset="union"),),
    "clear_graphs": (Case({"graph": [G.user("U1")]}),),
    "close_before": (
        Case({"entity": AAA, "day": day("2020-01-05"), "before": at("2020-01-06T00:00:00-05:00")}),
    ),
    "companies_by_cik": (Case(),),
    "company_names": (Case(),),
    "context_families": (Case({"run": [iri("run/1"), iri("run/2")]}),),
    "decision_head": (
        Case({"task": "impact-1", "kind": "prior", "before": at("2020-01-03T00:00:00Z")}),
        Case({"task": "impact-1", "kind": "prior", "before": at("2019-12-31T21:00:00Z")}),
    ),
    "demo_marker": (Case(),),
    "document_state": (Case({"document": iri("document/1")}),),
    "document_text": (Case({"document": iri("document/1")}),),
    "evidence_before": (Case({"company": AAA, "before": at("2020-01-03T08:30:00-05:00")}),),
    "available_from": (Case({"at": at("2020-01-03T08:30:00-05:00")}, dataset=EVIDENCE),),
    "evidence_context": (Case({"node": [iri("news/2"), iri("passage/1")]}),),
    "existing_nodes": (Case({"node": [iri("news/1"), iri("news/404")]}),),
    "feedback_signals": (Case({"memory": iri("memory/1"), **WINDOW}),),
    "future_evidence": (Case(),),
    "graph_counts": (Case(),),
    "graph_triples": (Case({"graph": G.market}),),
    "held_quads": (Case(),),
    "impact_context": (Case({"memory": iri("memory/1"), **WINDOW}), Case(WINDOW)),
    "impact_predictions": (Case({"memory": iri("memory/1"), **WINDOW}), Case(WINDOW)),
    "impact_scored_signals": (Case({"memory": iri("memory/1"), **WINDOW}), Case(WINDOW)),
    "memory_counts": (
        Case({"memory": iri("memory/1"), "before": at("2020-01-01T00:00:00+00:00")}),
    ),
    "memory_updates": (Case({"memory": iri("memory/1")}),),
    "movement_windows": (
        Case(
            {
                "before": at("2020-01-03T16:00:00-05:00"),
                "since": day("2020-01-01"),
                "company": [AAA],
            }
        ),
    ),
    "named_graphs": (Case(),),
    "news_anchors": (
        Case({"from": at("2020-01-01T00:00:00+00:00"), "to": at("2020-02-01T00:00:00+00:00")}),
    ),
    "node_literals": (Case({"node": [iri("customer/U1")]}, [G.user("U1")]),),
    "node_texts": (Case({"class": [FKG.NewsArticle, FKG.FilingPassage]}),),
    "one_hop": (Case({"node": [iri("news/1"), BBB]}),),
    "one_hop_before": (Case({"node": [AAA], "before": at("2020-01-03T00:00:00Z")}),),
    "passage_candidates": (
        Case(
            {
                "before": at("2020-01-01T00:00:00Z"),
                "company": AAA,
                "evidenceGraph": [G.filings, G.documents],
            }
        ),
        Case(
            {
                "before": at("2020-01-01T00:00:00Z"),
                "document": [iri("filing/1")],
                "evidenceGraph": [G.filings],
            }
        ),
    ),
    "pool_candidates": (
        Case(
            {
                "anchor": iri("news/1"),
                "company": AAA,
                "before": at("2020-01-03T08:30:00-05:00"),
                "since": at("2019-01-03T08:30:00-05:00"),
                "evidenceGraph": [G.news, G.filings, G.documents],
            },
            EVIDENCE,
        ),
        Case(  # no peer slot: the company's evidence alone
            {
                "anchor": iri("news/1"),
                "company": AAA,
                "subject": AAA,
                "before": at("2020-01-03T08:30:00-05:00"),
                "since": at("2019-01-03T08:30:00-05:00"),
                "evidenceGraph": [G.news, G.filings, G.documents],
            },
            EVIDENCE,
        ),
    ),
    "priced_companies": (Case(),),
    "provenance": (Case({"node": iri("prediction/1")}),),
    "recommend_purchases": (
        Case(
            {"after": at("2020-01-01T00:00:00+00:00"), "until": at("2020-06-01T00:00:00+00:00")},
            [G.user("U1")],
        ),
    ),
    "recommend_subgraph": (
        Case(
            {"node": [iri("customer/U1"), iri("asset/X1")], "before": at("2020-01-03T00:00:00Z")},
            G.user_dataset("U1"),
        ),
    ),
    "revisions_of": (Case({"version": [iri("news/2"), iri("news/1")]}),),
    "same_source": (Case({"node": iri("news/1")}),),
    "same_title": (Case({"node": iri("news/1")}),),
    "signal_citations": (Case({"signal": [iri("signal/1"), iri("signal/3")]}),),
    "sources_from": (
        Case({"at": at("2020-01-03T00:00:00Z")}, dataset=EVIDENCE),
        Case({"at": at("2021-01-01T00:00:00Z")}, dataset=EVIDENCE, empty=True),
    ),
    "statement_facts": (
        Case({"company": AAA, "before": at("2020-01-01T00:00:00Z")}),
        Case(
            {
                "concept": [NamedNode("https://w3id.org/finkg/items#Revenues")],
                "year": 2019,
                "before": at("2020-01-01T00:00:00Z"),
            }
        ),
        Case({"company": AAA, "before": at("2019-11-01T00:00:00Z")}, empty=True),
    ),
    "store_generation": (Case(),),
    "store_head": (Case(),),
    "subclass_pairs": (Case(dataset=[G.ontology]),),
    "subject_quads": (Case({"node": [AAA, FKG.NewsArticle]}),),
    "summary_before": (
        Case({"entity": AAA, "day": day("2020-01-06"), "before": at("2020-01-06T00:00:00Z")}),
    ),
    "texts_of": (Case({"node": [iri("news/1"), iri("passage/1")]}),),
}

# Output columns whose value SPARQL leaves to the engine: GROUP_CONCAT joins in no set order,
# and joins nothing to "" on Virtuoso but to unbound on Oxigraph, so the topics are compared
# as a set, unbound as empty (passage_candidates.rq says so next to its select).
SPLIT = {("passage_candidates", "topics"): "|"}

# Queries that list every graph of the endpoint: an engine may hold graphs of its own
# (Virtuoso's system graphs: its RDF storage metadata, the LDP vocabulary), and finkg keeps
# only its own from their answers (`store.own_graphs`, `kg.stats`); so is the comparison.
ENDPOINT_WIDE = {"named_graphs", "graph_counts", "class_counts"}

WRITES = {"clear_graphs", "held_quads"}


def _world() -> list[Quad]:
    return list(ox.parse(WORLD.read_bytes(), format=ox.RdfFormat.TRIG))


def _load(store: BaseStore) -> BaseStore:
    store.write(add=_world(), note="engines world", commit=WORLD_COMMIT)
    return store


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BaseStore]:
    settings = Settings(home=tmp_path_factory.mktemp("home"))
    store = _load(open_backend("embedded", settings))
    yield store
    store.close()


@pytest.fixture(scope="module", params=OTHERS)
def engine(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, BaseStore]]:
    """The world on the Oxigraph server and on Virtuoso, loaded once for the read queries
    (the update tests put it back as it was when they are done)."""
    settings = Settings(home=tmp_path_factory.mktemp("home"))
    store = _load(open_backend(request.param, settings))
    yield request.param, store
    store.close()


def answer(name: str, result: object) -> object:
    """A query's result in a form that ignores order and how literals were written."""
    if isinstance(result, bool):
        return result
    if isinstance(result, list):  # CONSTRUCT
        return Counter(comparable(t) for t in result)
    rows = Counter()
    for row in result:  # type: ignore[attr-defined]
        graph = row.get("graph")
        if name in ENDPOINT_WIDE and not (graph and graph.value.startswith(G.prefix)):
            continue
        cells = []
        for var, term in sorted(row.items()):
            value = comparable(term)
            sep = SPLIT.get((name, var))
            if sep and (term is None or isinstance(term, Literal)):  # unbound or "": none
                value = tuple(sorted(t for t in (term.value if term else "").split(sep) if t))
            cells.append((var, value))
        rows[tuple(cells)] += 1
    return rows


def _run(store: BaseStore, name: str, case: Case) -> object:
    return queries.run(store, name, case.values, default_graphs=case.dataset)


def _read_cases() -> Iterator[tuple[str, int]]:
    for name, cases in sorted(CASES.items()):
        if name not in WRITES:
            yield from ((name, i) for i in range(len(cases)))


def test_every_query_has_a_case() -> None:
    assert set(CASES) == {q.name for q in queries.catalog()}


@pytest.mark.parametrize(("name", "i"), list(_read_cases()), ids=lambda x: str(x))
def test_a_query_answers_the_same_on_every_engine(
    reference: BaseStore, engine: tuple[str, BaseStore], name: str, i: int
) -> None:
    case = CASES[name][i]
    expected = answer(name, _run(reference, name, case))
    assert expected or case.empty, f"{name}: the world gives this case no rows to compare"
    assert answer(name, _run(engine[1], name, case)) == expected


# Updates: each engine gets a fresh copy of the world, runs the update the way finkg does,
# and must then hold what the embedded store holds.

Update = Callable[[BaseStore], object]
UPDATES: dict[str, Update] = {
    "clear_graphs": lambda s: queries.run(
        s, "clear_graphs", CASES["clear_graphs"][0].values, allow_update=True
    ),
    # every write is DELETE DATA and INSERT DATA (kg/updates.py)
    "write_remove": lambda s: s.write(
        remove=[
            Quad(iri("tx/2"), FKG.transactionType, Literal("Sell"), G.user("U1")),
            Quad(
                iri("bar/AAA/2020-01-02"),
                FKG.close,
                Literal("10.50", datatype=NamedNode(XSD + "decimal")),
                G.market,
            ),
            Quad(
                iri("news/4"),
                FKG.availableAt,
                Literal("2019-12-27T18:00:00+01:00", datatype=NamedNode(XSD + "dateTime")),
                G.news,
            ),
        ],
        note="delete",
    ),
    "write_add": lambda s: s.write(
        add=[
            Quad(iri("tx/3"), FKG.transactionType, Literal('Buy ✓ "x"\n'), G.user("U1")),
            Quad(
                iri("tx/3"),
                FKG.totalValue,
                Literal("7.50", datatype=NamedNode(XSD + "decimal")),
                G.user("U1"),
            ),
        ],
        note="insert",
    ),
}
HELD = [  # held_quads: what the store holds of these (two are not there)
    Quad(
        iri("bar/AAA/2020-01-02"),
        FKG.close,
        Literal("10.50", datatype=NamedNode(XSD + "decimal")),
        G.market,
    ),
    Quad(
        iri("news/4"),
        FKG.availableAt,
        Literal("2019-12-27T18:00:00+01:00", datatype=NamedNode(XSD + "dateTime")),
        G.news,
    ),
    Quad(
        iri("news/1"),
        FKG.text,
        Literal('Acme Widgets beat estimates: revenue +12 %, "strong" demand.\nCafé ünïcode ✓'),
        G.news,
    ),
    Quad(
        iri("company/CCC"),
        NamedNode("http://www.w3.org/2000/01/rdf-schema#label"),
        Literal("Ça Énergie SA", language="fr"),
        G.market,
    ),
    Quad(iri("news/1"), FKG.text, Literal("not the text"), G.news),
    Quad(iri("news/1"), FKG.about, AAA, G.filings),
]


def _contents(store: BaseStore) -> Counter:
    return Counter(
        (q.graph_name.value, comparable(q.subject), q.predicate.value, comparable(q.object))
        for g in store.named_graphs()
        if g != store.graphs.audit
        for q in store.quads(g)
    )


@pytest.mark.parametrize("name", sorted(UPDATES))
def test_an_update_leaves_the_same_store_on_every_engine(
    engine: tuple[str, BaseStore], name: str, settings: Settings
) -> None:
    kind = engine[0]
    ref = _load(open_backend("embedded", settings))
    other = _load(open_backend(kind, settings))
    try:
        for s in (ref, other):
            UPDATES[name](s)
        assert _contents(other) == _contents(ref)
    finally:
        _load(open_backend(kind, settings))  # the world as the read tests expect it


def test_held_quads_finds_the_same_quads_on_every_engine(
    reference: BaseStore, engine: tuple[str, BaseStore]
) -> None:
    queried = {comparable(q.object) for q in engine[1].held(HELD)}  # held_quads.rq: VALUES
    direct = {comparable(q.object) for q in reference.held(HELD)}  # point lookups
    assert queried == direct
    assert len(direct) == 4
