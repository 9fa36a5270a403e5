"""Publisher families of news (finkg's extension of paper 000's two families): the site ->
family mapping is data in finkg.ttl, read from there; sites are normalised; the news loader
writes the narrower family; the shapes accept every family and nothing else; the family mix
of pools counts both views."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib
from pyoxigraph import NamedNode

from finkg.errors import FinkgError, InputError
from finkg.evaluation.families import family_mix, family_mix_lines
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.iri import mint
from finkg.kg.store import BaseStore
from finkg.ontology import families, ontology_path
from finkg.ontology.families import (
    family_label,
    family_of_site,
    normalise_site,
    publisher_sites,
    source_families,
    top_family,
    with_narrower,
)
from finkg.ontology.terms import FKG, FKG_NS
from finkg.retrieval.pools import PoolSpec
from finkg.shapes.validate import FSH, shapes_graph, validate_store

PUBLISHER_FAMILIES = (FKG.PressRelease, FKG.Analysis, FKG.NewsReport)
SKOS = rdflib.Namespace("http://www.w3.org/2004/02/skos/core#")


# -- the mapping is the ontology's ----------------------------------------------------


def test_the_mapping_is_every_publisher_site_of_finkg_ttl() -> None:
    onto = rdflib.Graph().parse(ontology_path(), format="turtle")
    declared = {
        str(site): NamedNode(str(concept))
        for concept, site in onto.subject_objects(rdflib.URIRef(FKG.publisherSite.value))
    }
    assert dict(publisher_sites()) == declared
    assert len(declared) >= 60
    for family in PUBLISHER_FAMILIES:
        node = rdflib.URIRef(family.value)
        assert onto.value(node, SKOS.broader) == rdflib.URIRef(FKG.News.value)
        assert (node, SKOS.inScheme, rdflib.URIRef(FKG.SourceFamilies.value)) in onto
        assert "extension of paper 000" in str(onto.value(node, rdflib.RDFS.comment))
        assert family in declared.values()


def test_the_mapping_follows_the_ontology_it_is_given(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Nothing is kept in Python: another finkg.ttl gives another mapping."""
    ttl = tmp_path / "finkg.ttl"
    ttl.write_text(
        "@prefix fkg: <https://w3id.org/finkg/ns#> .\n"
        "@prefix skos: <http://www.w3.org/2004/02/skos/core#> .\n"
        "fkg:News skos:inScheme fkg:SourceFamilies .\n"
        "fkg:Analysis skos:inScheme fkg:SourceFamilies ; skos:broader fkg:News ;\n"
        '    skos:prefLabel "A"@en ;\n'
        '    fkg:publisherSite "example.org" .\n'
    )
    monkeypatch.setattr(families, "ontology_path", lambda: ttl)
    families._scheme.cache_clear()
    try:
        assert family_of_site("news.example.org") == FKG.Analysis
        assert family_of_site("fool.com") == FKG.News
        assert family_label(FKG.Analysis) == "A"
    finally:
        monkeypatch.undo()
        families._scheme.cache_clear()
    assert family_of_site("fool.com") == FKG.Analysis


def test_a_site_listed_twice_is_an_error_in_the_ontology(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ttl = tmp_path / "finkg.ttl"
    ttl.write_text(
        "@prefix fkg: <https://w3id.org/finkg/ns#> .\n"
        "@prefix skos: <http://www.w3.org/2004/02/skos/core#> .\n"
        'fkg:Analysis skos:inScheme fkg:SourceFamilies ; fkg:publisherSite "x.com" .\n'
        'fkg:NewsReport skos:inScheme fkg:SourceFamilies ; fkg:publisherSite "x.com" .\n'
    )
    monkeypatch.setattr(families, "ontology_path", lambda: ttl)
    families._scheme.cache_clear()
    try:
        with pytest.raises(FinkgError, match=r"x\.com"):
            publisher_sites()
    finally:
        monkeypatch.undo()
        families._scheme.cache_clear()


# -- sites and their families -----------------------------------------------------------


@pytest.mark.parametrize(
    ("site", "family"),
    [
        *((s, FKG.PressRelease) for s in ("businesswire.com", "globenewswire.com",
                                          "prnewswire.com", "newsfilecorp.com",
                                          "accesswire.com")),
        *((s, FKG.Analysis) for s in ("fool.com", "zacks.com", "seekingalpha.com",
                                      "investorplace.com", "247wallst.com", "gurufocus.com",
                                      "investors.com", "benzinga.com", "feeds.benzinga.com",
                                      "thelincolnianonline.com", "forbes.com")),
        *((s, FKG.NewsReport) for s in ("reuters.com", "cnbc.com", "marketwatch.com",
                                        "wsj.com", "nytimes.com", "cnn.com", "bloomberg.com",
                                        "apnews.com", "abcnews.go.com", "news.sky.com")),
        # aggregators and feed proxies republish other voices; unknown sites; no site
        *((s, FKG.News) for s in ("marketscreener.com", "finance.yahoo.com",
                                  "feedproxy.google.com", "go.com", "sky.com",
                                  "example.org", "Benzinga Insights", "", "   ", None)),
    ],
)  # fmt: skip
def test_a_site_gives_its_family(site: str | None, family: NamedNode) -> None:
    assert family_of_site(site) == family


def test_every_listed_site_and_its_subdomains_give_its_family() -> None:
    for site, family in publisher_sites().items():
        for name in (site, "www." + site, "feeds." + site, site.upper(), f"https://{site}/x"):
            assert family_of_site(name) == family, name


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("fool.com", "fool.com"),
        ("  Fool.COM ", "fool.com"),
        ("www.reuters.com", "reuters.com"),
        ("feeds.benzinga.com", "feeds.benzinga.com"),  # kept: the match walks up the domains
        ("https://www.businesswire.com/news/home/1/en/", "businesswire.com"),
        ("http://cnbc.com:80", "cnbc.com"),
        ("reuters.com.", "reuters.com"),
        ("reuters.com/article/x", "reuters.com"),
        ("www.", None),
        ("", None),
        (None, None),
        ("[::1", None),  # not a host at all
    ],
)
def test_sites_are_normalised(raw: str | None, normal: str | None) -> None:
    assert normalise_site(raw) == normal


def test_every_listed_site_is_written_normalised() -> None:
    assert all(normalise_site(s) == s for s in publisher_sites())


def test_the_url_speaks_when_the_site_does_not() -> None:
    assert family_of_site(None, url="https://www.reuters.com/article/x") == FKG.NewsReport
    assert family_of_site("Benzinga Insights", url="https://benzinga.com/a") == FKG.Analysis
    assert family_of_site("fool.com", url="https://reuters.com/a") == FKG.Analysis  # site first
    assert family_of_site(None, url="https://bit.ly/3pqNdYe") == FKG.News


def test_top_families_labels_and_narrower_concepts() -> None:
    assert {top_family(f) for f in PUBLISHER_FAMILIES} == {FKG.News}
    assert top_family(FKG.SecFiling) == FKG.SecFiling
    assert top_family(NamedNode("https://e.org/x")) == NamedNode("https://e.org/x")
    assert [family_label(f) for f in (FKG.PressRelease, FKG.News, FKG.SecFiling)] == [
        "Press release",
        "News",
        "SEC Filing",
    ]
    assert with_narrower([FKG.News, FKG.SecFiling]) == {
        FKG.News,
        *PUBLISHER_FAMILIES,
        FKG.SecFiling,
    }
    assert with_narrower([FKG.Analysis]) == {FKG.Analysis}
    assert set(PUBLISHER_FAMILIES) < set(source_families())


def test_a_pool_spec_refuses_a_family_of_no_scheme() -> None:
    assert PoolSpec(families=(FKG.PressRelease,)).families == (FKG.PressRelease,)
    with pytest.raises(InputError, match="SourceFamilies") as error:
        PoolSpec(families=(FKG.News, FKG.Company))  # a class, not a family
    assert FKG.Company.value in str(error.value)


# -- the loader ---------------------------------------------------------------------------


def test_the_news_loader_writes_the_publisher_family(store: BaseStore, tmp_path: Path) -> None:
    sites = {
        "a": ("www.BusinessWire.com", FKG.PressRelease),
        "b": ("feeds.benzinga.com", FKG.Analysis),
        "c": ("reuters.com", FKG.NewsReport),
        "d": ("marketscreener.com", FKG.News),
        "e": (None, FKG.News),
    }
    path = tmp_path / "news.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "symbol": "ZQAW",
                    "publishedDate": "2019-03-01 16:30:00",
                    "title": f"Acme item {key}",
                    "site": site,
                    "text": "Acme beat estimates.",
                    "url": f"https://example.org/{key}",
                }
            )
            + "\n"
            for key, (site, _) in sites.items()
        )
    )
    report = ingest(store, "news", loader("news"), [path], IngestOptions(graphs=store.graphs))
    assert (report.written, report.rejects) == (5, [])
    written = {
        r["n"]: r["f"]  # type: ignore[index]
        for r in store.select(
            f"SELECT ?n ?f WHERE {{ GRAPH ?g {{ ?n <{FKG.sourceFamily.value}> ?f }} }}"
        )
    }
    for key, (_, family) in sites.items():
        assert written[mint("news", "ZQAW", f"https://example.org/{key}")] == family, key
    assert validate_store(store).conforms


# -- the shapes ------------------------------------------------------------------------------

ITEM = """
@prefix fkg: <https://w3id.org/finkg/ns#> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
<https://e.org/doc> a fkg:SourceDocument ; dcterms:source <https://e.org/n> ;
    fkg:contentHash "sha256:abababababababababababababababababababababababababababababababab" .
<https://e.org/news> a fkg:NewsArticle ; fkg:text "Acme raises guidance" ;
    fkg:availableAt "2020-04-30T16:30:00-04:00"^^xsd:dateTime ; fkg:timeQuality "exact" ;
    fkg:timeRule "test" ; fkg:sourceFamily FAMILY ; prov:wasDerivedFrom <https://e.org/doc> .
<https://e.org/memory> a fkg:SourceMemory ; fkg:variant "cited" .
<https://e.org/cell> a fkg:MemoryCell ; fkg:memory <https://e.org/memory> ;
    fkg:sourceFamily FAMILY ; fkg:eventType fkg:EarningsGuidance ; fkg:horizon 3 ;
    fkg:positiveCount "1.5"^^xsd:double ; fkg:negativeCount "0.5"^^xsd:double .
"""


def _load(store: BaseStore, family: str) -> None:
    triples = ox.parse(ITEM.replace("FAMILY", family).encode(), format=ox.RdfFormat.TURTLE)
    quads = [ox.Quad(t.subject, t.predicate, t.object, store.graphs.news) for t in triples]
    store.write(add=quads, note=f"an item and a memory cell of {family}")


@pytest.mark.parametrize("engine", ["sparql", "pyshacl"])
@pytest.mark.parametrize("family", ["PressRelease", "Analysis", "NewsReport", "News"])
def test_the_shapes_accept_every_news_family(store: BaseStore, family: str, engine: str) -> None:
    _load(store, "fkg:" + family)
    report = validate_store(store, engine=engine)
    assert report.conforms, report.text()


@pytest.mark.parametrize("engine", ["sparql", "pyshacl"])
def test_the_shapes_still_refuse_a_value_of_no_family(store: BaseStore, engine: str) -> None:
    _load(store, "<https://e.org/Rumour>")
    report = validate_store(store, engine=engine)
    broken = {v.shape.replace(FSH, "fsh:") for v in report.violations}
    assert broken == {"fsh:Evidence-sourceFamily", "fsh:MemoryCell-sourceFamily"}


def test_the_shapes_list_exactly_the_ontology_families() -> None:
    sh = rdflib.Namespace("http://www.w3.org/ns/shacl#")
    shapes = shapes_graph()
    for shape in ("Evidence-sourceFamily", "MemoryCell-sourceFamily"):
        node = rdflib.URIRef(FSH + shape)
        listed = rdflib.collection.Collection(shapes, shapes.value(node, sh["in"]))
        assert sorted(str(x) for x in listed) == sorted(f.value for f in source_families())
        assert all(str(x).startswith(FKG_NS) for x in listed)


# -- the family mix of pools ------------------------------------------------------------------


def test_the_family_mix_counts_pools_of_one_family_and_shares() -> None:
    pools = [
        [FKG.PressRelease, FKG.Analysis, FKG.Analysis, FKG.NewsReport],
        [FKG.Analysis, FKG.Analysis],
        [FKG.News, FKG.SecFiling],
        [FKG.PressRelease],
        [],
    ]
    fine = family_mix(pools)
    assert (fine.pools, fine.empty, fine.candidates) == (5, 1, 9)
    assert fine.alone == {FKG.Analysis: 1, FKG.PressRelease: 1} and fine.one_family == 2
    assert fine.holding[FKG.Analysis] == 2 and fine.holding[FKG.SecFiling] == 1
    assert fine.shares[FKG.Analysis] == pytest.approx(4 / 9)
    assert sum(fine.shares.values()) == pytest.approx(1.0)
    paper = family_mix(pools, top=True)
    assert paper.alone == {FKG.News: 3} and paper.one_family == 3  # all news in the paper's view
    assert paper.shares == pytest.approx({FKG.News: 8 / 9, FKG.SecFiling: 1 / 9})
    assert family_mix([]).shares == {} and family_mix([]).one_family == 0


def test_the_family_mix_report_shows_both_views() -> None:
    lines = family_mix_lines([[FKG.PressRelease, FKG.Analysis], [FKG.Analysis]])
    text = "\n".join(lines)
    assert "Paper 000's families" in text and "finkg's extension" in text
    assert "| News | 100.0% | 2 | 2 |" in lines
    assert "| Analysis and commentary | 66.7% | 2 | 1 |" in lines
    assert "| Press release | 33.3% | 1 | 0 |" in lines
