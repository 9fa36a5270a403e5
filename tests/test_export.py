"""Exports round-trip: what goes out as JSON-LD, Turtle or N-Quads comes back the same."""

from __future__ import annotations

import json
import re
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


# --- JSON-LD expands back to the exported quads, lexical forms included (issue 24) ---

XSD = "http://www.w3.org/2001/XMLSchema#"
FKG = "https://w3id.org/finkg/ns#"


def _lit(value: str, datatype: str = "string", language: str | None = None) -> ox.Literal:
    if language:
        return ox.Literal(value, language=language)
    iri = datatype if ":" in datatype else XSD + datatype
    return ox.Literal(value, datatype=ox.NamedNode(iri))


EDGE = [  # (property, object): finkg's coerced terms, plain terms and unknown properties
    (FKG + "availableAt", _lit("2020-01-02T10:00:00Z", "dateTime")),
    (FKG + "availableAt", _lit("2020-01-02T10:00:00.67581Z", "dateTime")),
    (FKG + "availableAt", _lit("2020-01-02T10:00:00.5-05:00", "dateTime")),
    (FKG + "availableAt", _lit("not a time")),  # a string under a dateTime term
    (FKG + "complianceScore", _lit("INF", "double")),
    (FKG + "complianceScore", _lit("-INF", "double")),
    (FKG + "complianceScore", _lit("NaN", "double")),
    (FKG + "complianceScore", _lit("1.5E-7", "double")),
    (FKG + "close", _lit("123456789012345678901234567890.123456789012345678901", "decimal")),
    (FKG + "close", _lit("0.1", "decimal")),
    (FKG + "close", _lit("7", "integer")),  # another datatype under a decimal term
    (FKG + "charStart", _lit("12", "integer")),
    (FKG + "charStart", _lit("123456789012345678901234567890", "integer")),
    (FKG + "charStart", _lit("9007199254740993", "integer")),  # 2^53 + 1
    (FKG + "charStart", _lit("2.5", "double")),
    (FKG + "form", _lit('10-K "quoted"\nline two \\ é 中 😀')),
    (FKG + "form", _lit("Hello", language="en-us")),
    (FKG + "form", _lit("true", "boolean")),
    (FKG + "form", _lit("P1D", "duration")),
    (FKG + "form", _lit("x", "https://example.org/dt/custom")),
    (
        FKG + "answerJson",
        _lit('{"a":[1,2],"b":"é"}', "http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON"),
    ),
    (
        FKG + "answerJson",
        _lit('{"b": 1, "a": 0.5}', "http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON"),
    ),
    (FKG + "about", ox.NamedNode("https://example.org/company/1")),
    (FKG + "about", _lit("a literal where an IRI is expected")),
    (FKG + "sourceFamily", ox.NamedNode(FKG + "News")),  # a @vocab term: its name
    (FKG + "sourceFamily", ox.NamedNode("https://example.org/NotATerm")),
    (FKG + "about", ox.BlankNode("b1")),
    ("https://example.org/p", _lit("plain")),
    ("https://example.org/p", _lit("2020-01-02", "date")),
    ("http://www.w3.org/1999/02/22-rdf-syntax-ns#type", ox.NamedNode(FKG + "NewsArticle")),
    ("http://www.w3.org/1999/02/22-rdf-syntax-ns#type", ox.NamedNode("https://example.org/T")),
    ("http://www.w3.org/1999/02/22-rdf-syntax-ns#type", ox.BlankNode("t1")),
]


def _edge_quads(graph: ox.NamedNode | ox.DefaultGraph, *, blanks: bool = True) -> list[ox.Quad]:
    """EDGE about one subject; without `blanks`, blank nodes become IRIs (the remote
    backend writes no blank nodes)."""

    def node(term: ox.NamedNode | ox.BlankNode | ox.Literal) -> object:
        if isinstance(term, ox.BlankNode) and not blanks:
            return ox.NamedNode(f"https://w3id.org/finkg/id/{term.value}")
        return term

    subject = ox.NamedNode("https://w3id.org/finkg/id/edge")
    quads = [ox.Quad(subject, ox.NamedNode(p), node(o), graph) for p, o in EDGE]
    inner = ox.Quad(node(ox.BlankNode("b1")), ox.NamedNode(FKG + "form"), _lit("inner"), graph)
    return [*quads, inner]


def _expanded_by_pyld(quads: list[ox.Quad]) -> set[str]:
    """The quads of finkg's JSON-LD as pyld (an independent JSON-LD 1.1 processor) reads
    them, blank nodes canonicalized, as N-Quads lines.

    pyld writes every xsd:double it reads in its own canonical form, string values
    included ("INF" stays, "NaN" becomes "NAN", "1.5E-7" "1.500000000000000E-7"), where
    JSON-LD 1.1 (toRdf, Object to RDF Conversion, step 10) converts only JSON numbers; a
    double is therefore compared by its value (`_doubles_as_values`), everything else by
    its lexical form. Oxigraph's JSON-LD parser (`_expanded_by_oxigraph`) keeps doubles."""
    from pyld import jsonld

    text = json.dumps(to_jsonld(quads))  # through JSON text, as a consumer gets it
    nquads = jsonld.to_rdf(json.loads(text), {"format": "application/n-quads"})
    return _doubles_as_values(_canonical(nquads.encode()))


def _expanded_by_oxigraph(quads: list[ox.Quad]) -> set[str]:
    text = json.dumps(to_jsonld(quads)).encode()
    return _canonical(
        ox.serialize(ox.parse(text, format=ox.RdfFormat.JSON_LD), format=ox.RdfFormat.N_QUADS)
    )


def _canonical(nquads: bytes) -> set[str]:
    dataset = ox.Dataset(ox.parse(nquads, format=ox.RdfFormat.N_QUADS))
    dataset.canonicalize(ox.CanonicalizationAlgorithm.UNSTABLE)
    return {str(q) for q in dataset}


def _doubles_as_values(lines: set[str]) -> set[str]:
    """N-Quads lines with each xsd:double literal as repr(float(lexical form))."""

    def value(m: re.Match[str]) -> str:
        number = float(m[1].replace("INF", "inf").replace("NAN", "nan").replace("NaN", "nan"))
        return f'"{number!r}"^^<{XSD}double>'

    pattern = re.compile(rf'"([^"]*)"\^\^<{re.escape(XSD)}double>')
    return {pattern.sub(value, line) for line in lines}


def _exported(quads: list[ox.Quad]) -> set[str]:
    return _canonical(serialize(quads, "nquads"))


@pytest.mark.parametrize("graph", ["named", "default"])
def test_json_ld_expands_to_the_same_quads_with_every_lexical_form(graph: str) -> None:
    name = (
        ox.NamedNode("https://w3id.org/finkg/id/graph/news")
        if graph == "named"
        else ox.DefaultGraph()
    )
    quads = _edge_quads(name)
    assert _expanded_by_oxigraph(quads) == _exported(quads)
    assert _expanded_by_pyld(quads) == _doubles_as_values(_exported(quads))


def test_json_ld_of_a_stored_graph_expands_to_its_n_quads_export(store: BaseStore) -> None:
    store.write(add=_edge_quads(store.graphs.news, blanks=False), note="edge literals")
    quads = list(store.quads(store.graphs.news))
    assert _expanded_by_oxigraph(quads) == _exported(quads)
    assert _expanded_by_pyld(quads) == _doubles_as_values(_exported(quads))


def test_json_ld_keeps_z_times_fractions_and_infinities_as_written() -> None:
    doc = to_jsonld(_edge_quads(ox.DefaultGraph()))
    (node,) = [n for n in doc["@graph"] if n["id"].endswith("/edge")]
    assert "2020-01-02T10:00:00Z" in node["availableAt"]
    assert "2020-01-02T10:00:00.67581Z" in node["availableAt"]
    assert {"INF", "-INF", "NaN"} <= set(node["complianceScore"])
    assert 12 in node["charStart"] and "9007199254740993" not in json.dumps(node["charStart"][:1])


def test_json_ld_of_a_demo_world_expands_to_its_n_quads_export(tmp_path: Path) -> None:
    from finkg.demo.world import WorldSpec
    from tests.worlds import build, load

    store = load(build(tmp_path / "world", WorldSpec(tickers=3, sessions=30, users=2)))
    quads = [q for g in store.named_graphs() for q in store.quads(g)]
    assert len(quads) > 5000
    assert _expanded_by_pyld(quads) == _doubles_as_values(_exported(quads))
    assert _expanded_by_oxigraph(quads) == _exported(quads)
