"""The ontology, the closed vocabulary and the JSON-LD context stay one fact."""

from __future__ import annotations

import json

import pytest
import rdflib
from rdflib.namespace import DCTERMS as RDFLIB_DCTERMS
from rdflib.namespace import OWL, RDF, RDFS
from rdflib.namespace import PROV as RDFLIB_PROV
from rdflib.namespace import SKOS as RDFLIB_SKOS

from finkg.ontology import context_path, jsonld_context, ontology_path
from finkg.ontology.terms import DCTERMS, FKG, FKG_NS, PROV, SKOS, terms_of
from finkg.shapes.validate import shapes_graph


@pytest.fixture(scope="module")
def onto() -> rdflib.Graph:
    return rdflib.Graph().parse(ontology_path(), format="turtle")


def declared(onto: rdflib.Graph) -> set[str]:
    return {str(s) for s in onto.subjects(RDF.type, None) if str(s).startswith(FKG_NS)}


def test_turtle_parses_and_declares_the_design_terms(onto: rdflib.Graph) -> None:
    names = {t[len(FKG_NS) :] for t in declared(onto)}
    for core in (
        "Evidence",
        "NewsArticle",
        "FilingPassage",
        "DocumentChunk",
        "PriceSummary",
        "IndicatorWindow",
        "Transaction",
        "SourceDocument",
        "Company",
        "Asset",
        "PriceBar",
        "EventAnchor",
        "ImpactPrediction",
        "HorizonSignal",
        "MovementPrediction",
        "Answer",
        "Citation",
        "Recommendation",
        "Run",
        "Outcome",
        "MemoryCell",
        "MemoryUpdate",
        "Document",
        "Transition",
        "text",
        "availableAt",
        "sourceFamily",
        "about",
        "contentHash",
        "charStart",
        "charEnd",
        "maturedAt",
    ):
        assert core in names, core


def test_every_constant_in_terms_is_declared(onto: rdflib.Graph) -> None:
    constants = {t.value for _, t in terms_of(FKG)}
    assert constants - declared(onto) == set()


def test_every_declared_term_has_a_constant(onto: rdflib.Graph) -> None:
    constants = {t.value for _, t in terms_of(FKG)}
    assert declared(onto) - constants == set()


def test_constant_names_match_their_iris() -> None:
    for name, term in terms_of(FKG):
        assert term.value == FKG_NS + name


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [(PROV, RDFLIB_PROV), (DCTERMS, RDFLIB_DCTERMS), (SKOS, RDFLIB_SKOS)],
)
def test_reused_terms_exist_in_their_vocabularies(ours: type, theirs: type) -> None:
    for name, term in terms_of(ours):
        assert str(getattr(theirs, name)) == term.value  # closed namespaces raise on typos


def test_every_term_is_labelled_and_classes_are_explained(onto: rdflib.Graph) -> None:
    for term in declared(onto):
        node = rdflib.URIRef(term)
        assert onto.value(node, RDFS.label) is not None, term
        if (node, RDF.type, OWL.Class) in onto:
            assert onto.value(node, RDFS.comment) is not None, term


def test_evidence_subclasses_align_with_prov(onto: rdflib.Graph) -> None:
    evidence = rdflib.URIRef(FKG.Evidence.value)
    assert (evidence, RDFS.subClassOf, RDFLIB_PROV.Entity) in onto
    assert (rdflib.URIRef(FKG.Run.value), RDFS.subClassOf, RDFLIB_PROV.Activity) in onto


def test_context_maps_every_property_with_its_coercion(onto: rdflib.Graph) -> None:
    ctx = jsonld_context()["@context"]
    for term in declared(onto):
        name, node = term[len(FKG_NS) :], rdflib.URIRef(term)
        assert name in ctx, name
        entry = ctx[name]
        iri = entry if isinstance(entry, str) else entry["@id"]
        assert iri == "fkg:" + name
        if (node, RDF.type, OWL.ObjectProperty) in onto:
            assert entry["@type"] in ("@id", "@vocab"), name
        rng = onto.value(node, RDFS.range)
        # Typed strings keep their exact lexical form; integers and booleans are JSON-native
        # (JSON numbers would turn a double like 0.0 into an integer on the way back).
        if rng is not None and str(rng).endswith(("#dateTime", "#date", "#decimal", "#double")):
            assert entry["@type"] == "xsd:" + str(rng).rsplit("#", 1)[1], name


def test_context_file_is_valid_json_with_a_context() -> None:
    doc = json.loads(context_path().read_text())
    assert set(doc) == {"@context"}


def test_the_issue_two_classes_have_shapes() -> None:
    sh = rdflib.Namespace("http://www.w3.org/ns/shacl#")
    targets = {str(o) for o in shapes_graph().objects(None, sh.targetClass)}
    for cls in (
        FKG.Evidence,
        FKG.SourceDocument,
        FKG.Company,
        FKG.Asset,
        FKG.PriceBar,
        FKG.MemoryCell,
        FKG.MemoryUpdate,
        FKG.Customer,
        FKG.Transaction,
        FKG.Commit,
    ):
        assert cls.value in targets, cls
