"""Exports round-trip: what goes out as JSON-LD, Turtle or N-Quads comes back the same."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox
import pytest

from finkg.kg.export import FORMATS, serialize, to_jsonld, to_networkx
from finkg.kg.store import BaseStore

VALID = Path(__file__).parent / "data" / "valid" / "all_shapes.ttl"


@pytest.fixture
def quads(store: BaseStore) -> list[ox.Quad]:
    triples = ox.parse(path=str(VALID), format=ox.RdfFormat.TURTLE)
    store.write(
        add=[ox.Quad(t.subject, t.predicate, t.object, store.graphs.news) for t in triples],
        note="fixture",
    )
    return list(store.quads(store.graphs.news))


def test_json_ld_round_trips_every_quad(quads: list[ox.Quad]) -> None:
    doc = to_jsonld(quads)
    again = ox.Store()  # Oxigraph keeps values in canonical form (a +00:00 offset is Z)
    again.extend(ox.parse(json.dumps(doc), format=ox.RdfFormat.JSON_LD))
    assert set(again) == set(quads)


def test_json_ld_is_compact_in_finkgs_terms(quads: list[ox.Quad]) -> None:
    doc = to_jsonld([ox.Triple(q.subject, q.predicate, q.object) for q in quads])
    nodes = {n["id"].rsplit("/", 1)[1]: n for n in doc["@graph"]}
    passage = nodes["passage-1"]
    assert passage["type"] == "FilingPassage"
    assert passage["sourceFamily"] == "SecFiling"
    assert passage["charStart"] == 0 and passage["availableAt"] == "2020-04-30T16:31:02-04:00"
    assert nodes["bar-ACME-2020-04-30"]["close"] == "10.2"  # decimals keep their lexical form


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "jsonld"])
def test_rdf_formats_round_trip(quads: list[ox.Quad], fmt: str) -> None:
    data = serialize(quads, fmt)
    parsed = ox.parse(
        data,
        format={
            "turtle": ox.RdfFormat.TURTLE,
            "ntriples": ox.RdfFormat.N_TRIPLES,
            "nquads": ox.RdfFormat.N_QUADS,
            "trig": ox.RdfFormat.TRIG,
        }[fmt],
    )
    as_triples = {(q.subject, q.predicate, q.object) for q in parsed}
    assert as_triples == {(q.subject, q.predicate, q.object) for q in quads}


def test_to_networkx_keeps_links_as_edges_and_literals_as_attributes(
    quads: list[ox.Quad],
) -> None:
    g = to_networkx(quads)
    passage = "https://w3id.org/finkg/id/passage-1"
    assert g.has_edge(passage, "https://w3id.org/finkg/id/doc-1")
    assert g.nodes[passage]["https://w3id.org/finkg/ns#form"] == ["8-K"]
