"""LLM-guided subgraph retrieval (paper 004 §3.2): listing, selection, CONSTRUCT, JSON-LD.

A small world: customers A and B each hold transactions in their own graph, about assets
in the market graph that also holds ten-week summaries. The reader is a ScriptedLLM.
"""

from __future__ import annotations

import datetime as dt
import json
from zoneinfo import ZoneInfo

import pyoxigraph as ox
import pytest
from pyoxigraph import NamedNode

from finkg.errors import InputError, TimestampError
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG
from finkg.reader.llm import ScriptedLLM
from finkg.retrieval import subgraph as sg

ID = "https://w3id.org/finkg/id/"
NY = ZoneInfo("America/New_York")
CUTOFF = dt.datetime(2020, 3, 1, tzinfo=NY)
PREFIXES = f"""
@prefix fkg: <https://w3id.org/finkg/ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix id: <{ID}> .
"""


def _tx(n: int, customer: str, asset: str, when: str, kind: str = "Buy") -> str:
    return f"""
id:tx{customer}{n} a fkg:Transaction ; fkg:customer id:customer{customer} ;
    fkg:about id:{asset} ; fkg:transactionType "{kind}" ;
    fkg:availableAt "{when}"^^xsd:dateTime ;
    fkg:timeRule "test" ;
    fkg:text "{kind} of {asset} on {when[:10]} by customer {customer}" .
"""


A_TXS = [
    (1, "assetX", "2020-01-06T00:00:00+02:00"),
    (2, "assetY", "2020-01-20T00:00:00+02:00"),
    (3, "assetX", "2020-02-03T00:00:00+02:00"),
    (4, "assetY", "2020-02-17T00:00:00+02:00"),
    (5, "assetX", "2020-04-01T00:00:00+02:00"),  # after CUTOFF
]


def _world(store: BaseStore, *, order: list[int] | None = None) -> None:
    a_txs = [A_TXS[i] for i in (order or range(len(A_TXS)))]
    graphs = {
        "users/A": 'id:customerA a fkg:Customer ; rdfs:label "customer A" .\n'
        + "".join(_tx(n, "A", asset, when) for n, asset, when in a_txs),
        "users/B": 'id:customerB a fkg:Customer ; rdfs:label "customer B" .\n'
        + _tx(1, "B", "assetX", "2020-01-10T00:00:00+02:00", "Sell")
        + _tx(2, "B", "assetSecret", "2020-01-11T00:00:00+02:00"),
        "market": """
id:assetX a fkg:Asset ; rdfs:label "Xeno Fund" ; fkg:sector "Technology" ; fkg:isin "ZZX" .
id:assetY a fkg:Asset ; rdfs:label "Yield Bond" ; fkg:sector "Sovereign" .
id:assetSecret a fkg:Asset ; rdfs:label "Secret Holding" .
id:sumX1 a fkg:PriceSummary ; fkg:about id:assetX ; fkg:text "X summary to 2020-02-09" ;
    fkg:availableAt "2020-02-07T16:00:00-05:00"^^xsd:dateTime .
id:sumX2 a fkg:PriceSummary ; fkg:about id:assetX ; fkg:text "X summary to 2020-04-19" ;
    fkg:availableAt "2020-04-17T16:00:00-04:00"^^xsd:dateTime .
""",
    }
    for name, body in graphs.items():
        triples = ox.parse(PREFIXES + body, format=ox.RdfFormat.TURTLE)
        graph = store.graphs.parse(name)
        store.write(
            add=[ox.Quad(t.subject, t.predicate, t.object, graph) for t in triples], note=name
        )


def _picks(*iris: str) -> ScriptedLLM:
    return ScriptedLLM(respond=lambda _m: json.dumps({"selected": list(iris)}))


def _nodes(triples: list[ox.Triple]) -> set[str]:
    return {t.subject.value for t in triples} | {
        t.object.value for t in triples if isinstance(t.object, NamedNode)
    }


def test_candidates_are_the_class_in_the_allowed_graphs_only(store: BaseStore) -> None:
    _world(store)
    found = sg.candidates(store, FKG.Transaction, graphs=["users/A"])
    assert [c.iri for c in found] == [ID + f"txA{n}" for n in range(1, 6)]  # oldest first
    assert found.total == 5 and not found.sampled and found.kind == "Transaction"
    assert found[0].description == "Buy of assetX on 2020-01-06 by customer A"
    assets = sg.candidates(store, FKG.Asset, graphs=["market"])
    assert assets[0].description == "Secret Holding"
    assert "Xeno Fund (isin=ZZX, sector=Technology)" in [c.description for c in assets]


def test_the_time_cutoff_keeps_only_what_was_available_before(store: BaseStore) -> None:
    _world(store)
    found = sg.candidates(store, FKG.Transaction, graphs=["users/A"], before=CUTOFF)
    assert [c.iri for c in found] == [ID + f"txA{n}" for n in range(1, 5)]
    summaries = sg.candidates(store, FKG.PriceSummary, graphs=["market"], before=CUTOFF)
    assert [c.iri for c in summaries] == [ID + "sumX1"]
    # reference data without fkg:availableAt stays listed under a cut-off
    assert sg.candidates(store, FKG.Asset, graphs=["market"], before=CUTOFF).total == 3
    with pytest.raises(TimestampError):
        sg.candidates(store, FKG.Transaction, graphs=["users/A"], before=dt.datetime(2020, 3, 1))  # noqa: DTZ001


def test_sampling_is_deterministic_and_says_how_many_there_were(
    store: BaseStore, settings: object
) -> None:
    _world(store, order=[4, 2, 0, 3, 1])
    first = sg.candidates(store, FKG.Transaction, graphs=["users/A"], cap=2, seed=3)
    again = sg.candidates(store, FKG.Transaction, graphs=["users/A"], cap=2, seed=3)
    assert first == again and len(first) == 2 and first.total == 5 and first.sampled
    expected = sorted((ID + f"txA{n}" for n in range(1, 6)), key=lambda i: sg.sample_key(3, i))
    assert {c.iri for c in first} == set(expected[:2])
    others = {
        tuple(
            c.iri for c in sg.candidates(store, FKG.Transaction, graphs=["users/A"], cap=2, seed=s)
        )
        for s in range(8)
    }
    assert len(others) > 1  # the seed matters
    # data after the cut-off changes neither the eligible set nor the sample
    cut = sg.candidates(store, FKG.Transaction, graphs=["users/A"], before=CUTOFF, cap=2)
    assert cut.total == 4
    assert all(c.available_at and c.available_at < "2020-03" for c in cut)


def test_invalid_iris_are_dropped_and_counted(store: BaseStore) -> None:
    _world(store)
    found = sg.candidates(store, FKG.Transaction, graphs=["users/A"], before=CUTOFF)
    llm = _picks(ID + "txA2", ID + "txB1", ID + "made-up", ID + "txA2")
    selection = sg.select(llm, "what does A like?", found)
    assert selection.selected == [ID + "txA2"]
    assert selection.invalid == [ID + "txB1", ID + "made-up"] and selection.invalid_count == 2
    assert selection.result is not None and selection.result.json_valid
    assert selection.result.invalid_citations == selection.invalid
    prompt = llm.calls[0][1]["content"]
    assert "(Transaction; 4 listed of 4)" in prompt and ID + "txA3 | Buy of assetX" in prompt


def test_another_users_triples_never_reach_the_subgraph(store: BaseStore) -> None:
    _world(store)
    # the reader names B's transaction and the asset B secretly holds
    llm = _picks(ID + "txA1", ID + "txB2", ID + "assetSecret", ID + "txB1")
    result = sg.retrieve(
        store, llm, "recommend", FKG.Transaction, graphs=["users/A", "market"], before=CUTOFF
    )
    assert result.selection.selected == [ID + "txA1"]
    assert result.selection.invalid_count == 3
    nodes = _nodes(result.triples)
    assert ID + "txA1" in nodes and not {ID + "txB1", ID + "txB2", ID + "customerB"} & nodes
    assert "customerB" not in json.dumps(result.jsonld)
    # and CONSTRUCT itself reads only the allowed graphs, whatever it is given
    direct = sg.construct(
        store, [ID + "txB2", ID + "assetX"], graphs=["users/A", "market"], before=None
    )
    assert direct and not any("B" in n.rsplit("/", 1)[-1] for n in _nodes(direct))
    assert sg.construct(store, [ID + "txB1"], graphs=["users/A", "market"]) == []


def test_construct_leaves_out_what_was_not_yet_available(store: BaseStore) -> None:
    _world(store)
    graphs = ["users/A", "market"]
    everything = _nodes(sg.construct(store, [ID + "assetX"], graphs=graphs))
    as_of = _nodes(sg.construct(store, [ID + "assetX"], graphs=graphs, before=CUTOFF))
    assert {ID + "txA5", ID + "sumX2"} <= everything
    assert as_of == everything - {ID + "txA5", ID + "sumX2"}
    assert sg.construct(store, [ID + "txA5"], graphs=graphs, before=CUTOFF) == []


def test_the_subgraph_is_compact_json_ld_in_finkgs_context(store: BaseStore) -> None:
    _world(store)
    result = sg.retrieve(
        store,
        _picks(ID + "sumX1"),
        "tech funds?",
        FKG.PriceSummary,
        graphs=["market"],
        before=CUTOFF,
        context='[{"id": "tx"}]',
    )
    nodes = {n["id"]: n for n in result.jsonld["@graph"]}
    assert nodes[ID + "sumX1"]["type"] == "PriceSummary"
    assert nodes[ID + "sumX1"]["about"] == ID + "assetX"
    assert result.jsonld["@context"]["fkg"] == "https://w3id.org/finkg/ns#"
    assert json.loads(result.text()) == result.jsonld["@graph"]


def test_nothing_to_choose_from_calls_no_reader(store: BaseStore) -> None:
    _world(store)
    llm = _picks()
    early = dt.datetime(2019, 1, 1, tzinfo=NY)
    result = sg.retrieve(store, llm, "x", FKG.Transaction, graphs=["users/A"], before=early)
    assert result.selection.result is None and result.triples == [] and llm.calls == []


def test_options_are_checked_and_quoted(store: BaseStore) -> None:
    with pytest.raises(InputError, match=r"cap.*\(got 0\)"):
        sg.candidates(store, FKG.Transaction, graphs=["users/A"], cap=0)
    with pytest.raises(InputError, match=r"graphs.*\(got \[\]\)"):
        sg.candidates(store, FKG.Transaction, graphs=[])
    with pytest.raises(InputError, match="unknown named graph"):
        sg.construct(store, [ID + "x"], graphs=["users/A", "elsewhere"])
