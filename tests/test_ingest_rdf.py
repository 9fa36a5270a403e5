"""`finkg ingest rdf` goes through the checks every loader does (issue 24): shapes, the
graphs finkg alone writes, the moment of ingestion, and limits on what a file can expand
to. Each test is named after a file that was once written with exit 0."""

from __future__ import annotations

import gzip
from pathlib import Path

import pyoxigraph as ox
import pytest

from finkg.errors import InputError
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.rdf_files import ingest_rdf, read_rdf
from finkg.kg.setup import init_store
from finkg.kg.store import BaseStore, open_store

DATA = Path(__file__).parent / "data"
PREFIXES = (
    "@prefix fkg: <https://w3id.org/finkg/ns#> .\n"
    "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
    "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
    "@prefix id: <https://w3id.org/finkg/id/> .\n"
)
G = "https://w3id.org/finkg/id/graph/"


def dump(store: BaseStore) -> list[str]:
    text = ox.serialize(store.quads(), format=ox.RdfFormat.N_QUADS) or b""
    return sorted(text.decode().splitlines())


@pytest.fixture
def store() -> BaseStore:
    s = open_store(None)
    init_store(s)
    return s


def refused(store: BaseStore, path: Path, **kw: object) -> InputError:
    before = dump(store)
    with pytest.raises(InputError) as error:
        ingest_rdf(store, [path], **kw)  # type: ignore[arg-type]
    assert dump(store) == before
    return error.value


def test_a_commit_in_the_audit_graph_is_refused(store: BaseStore, tmp_path: Path) -> None:
    """A TriG file put a fkg:Commit numbered 999999 in the audit graph; the store's
    generation jumped to 999999."""
    path = tmp_path / "commit.trig"
    path.write_text(
        PREFIXES + f"<{G}audit> {{\n"
        '  id:commit-x a fkg:Commit ; fkg:sequence 999999 ; rdfs:label "forged" .\n}\n'
    )
    generation = store.generation()
    e = refused(store, path)
    assert (e.line, e.field) == (5, "graph") and "finkg alone" in str(e)
    assert store.generation() == generation


def test_turtle_redefining_finkg_terms_in_the_ontology_graph_is_refused(
    store: BaseStore, tmp_path: Path
) -> None:
    path = tmp_path / "ontology.ttl"
    path.write_text(PREFIXES + "fkg:NewsArticle rdfs:subClassOf fkg:Nothing .\n")
    e = refused(store, path, graph=store.graphs.ontology)
    assert e.field == "--graph" and "finkg alone" in str(e)
    with pytest.raises(InputError, match="finkg alone"):  # every loader's --graph too
        options = IngestOptions(graphs=store.graphs, graph=store.graphs.audit)
        ingest(store, "news", loader("news"), [path], options)


def test_rdf_xml_entity_expansion_is_refused(store: BaseStore, tmp_path: Path) -> None:
    """A 659-byte RDF/XML file's entities expanded to one 100 MB literal; export then ran
    for 9 minutes and validate timed out."""
    levels = ['<!ENTITY a0 "aaaaaaaaaa">'] + [
        f'<!ENTITY a{i} "{f"&a{i - 1};" * 10}">' for i in range(1, 8)
    ]
    path = tmp_path / "laughs.rdf"
    path.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n' + "\n".join(levels) + "\n]>\n"
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
        'xmlns:fkg="https://w3id.org/finkg/ns#">\n'
        '<rdf:Description rdf:about="https://e.org/a"><fkg:text>&a7;</fkg:text>'
        "</rdf:Description>\n</rdf:RDF>\n"
    )
    assert path.stat().st_size < 1000
    e = refused(store, path, graph=store.graphs.news)
    assert (e.line, e.field) == (3, "DOCTYPE") and "entity" in str(e)


def test_a_literal_beyond_the_limit_is_refused(store: BaseStore, tmp_path: Path) -> None:
    path = tmp_path / "long.ttl"
    path.write_text(PREFIXES + f'id:a fkg:text "{"x" * 5000}" .\n')
    with pytest.raises(InputError, match="longer than 4,000 characters") as error:
        read_rdf(path, graphs=store.graphs, graph=store.graphs.news, max_literal=4000)
    assert (error.value.line, error.value.field) == (5, "https://w3id.org/finkg/ns#text")


def test_a_gzip_bomb_is_refused_before_it_is_inflated(store: BaseStore, tmp_path: Path) -> None:
    path = tmp_path / "bomb.nt.gz"
    path.write_bytes(gzip.compress(b"#" * 3_000_000 + b"\n"))
    assert path.stat().st_size < 10_000
    e = refused(store, path, graph=store.graphs.news, max_bytes=1_000_000)
    assert "larger than 1,000,000 bytes once decompressed" in str(e)


@pytest.mark.parametrize(
    "statement",
    [
        "id:a fkg:about <<( id:b fkg:about id:c )>> .",
        "id:a fkg:about id:b ~ id:r {| fkg:about id:c |} .",
        'id:a fkg:text "x"@en--ltr .',
    ],
    ids=["triple-term", "annotation", "directional-string"],
)
def test_rdf_1_2_is_refused_with_a_message(
    store: BaseStore, tmp_path: Path, statement: str
) -> None:
    """After RDF 1.2 triple terms were stored, `export --format jsonld` and `validate
    --engine pyshacl` crashed."""
    path = tmp_path / "rdf12.ttl"
    path.write_text(PREFIXES + statement + "\n")
    e = refused(store, path, graph=store.graphs.news)
    assert "RDF 1.2" in str(e) and e.line == 5


def test_a_file_that_breaks_a_shape_is_refused_naming_the_node(
    store: BaseStore, tmp_path: Path
) -> None:
    """The README and `ingest --help` promise the shape check; only syntax was checked."""
    e = refused(store, DATA / "invalid" / "evidence-no-text.ttl", graph=store.graphs.news)
    assert e.field == "https://w3id.org/finkg/ns#text" and e.line == 14
    assert "news-1" in str(e)


def test_with_skip_bad_a_file_that_breaks_a_shape_is_set_aside_whole(
    store: BaseStore, tmp_path: Path
) -> None:
    good = tmp_path / "good.ttl"
    good.write_text(PREFIXES + 'id:x rdfs:label "x" .\n')
    bad = DATA / "invalid" / "evidence-no-text.ttl"
    done = ingest_rdf(store, [bad, good], graph=store.graphs.news, skip_bad=True)
    assert [Path(r.source).name for r in done.rejects] == [bad.name]
    lines = dump(store)
    assert any("https://w3id.org/finkg/id/x>" in x for x in lines)
    assert not any("doc-1>" in x for x in lines)  # nothing of the bad file


def test_a_statement_added_to_a_stored_node_is_checked_with_it(
    store: BaseStore, tmp_path: Path
) -> None:
    """A file that gives a stored article a second fkg:availableAt has no rdf:type of its
    own; it is checked with what the store holds about the article."""
    valid = DATA / "invalid" / "evidence-no-text.ttl"
    text = valid.read_text().replace(
        "fkg:timeQuality", 'fkg:text "Acme raises guidance" ;\n    fkg:timeQuality'
    )
    first = tmp_path / "article.ttl"
    first.write_text(text)
    ingest_rdf(store, [first], graph=store.graphs.news)
    second = tmp_path / "second-time.ttl"
    second.write_text(
        PREFIXES + 'id:news-1 fkg:availableAt "2020-05-01T09:00:00Z"^^xsd:dateTime .\n'
    )
    e = refused(store, second, graph=store.graphs.news)
    assert (e.line, e.field) == (5, "https://w3id.org/finkg/ns#availableAt")


def test_an_item_from_the_future_is_refused(store: BaseStore, tmp_path: Path) -> None:
    path = tmp_path / "future.ttl"
    text = (DATA / "invalid" / "evidence-no-text.ttl").read_text()
    text = text.replace("2020-04-30T16:30:00-04:00", "2100-04-30T16:30:00-04:00")
    path.write_text(text.replace("fkg:timeQuality", 'fkg:text "x" ;\n    fkg:timeQuality'))
    e = refused(store, path, graph=store.graphs.news)
    assert "after the moment of ingestion" in str(e)
    assert (e.line, e.field) == (16, "https://w3id.org/finkg/ns#availableAt")
