"""Which graphs a SPARQL update writes (`kg.update_targets`), and the updates finkg refuses:
the audit trail and the vocabulary are rewritten only as maintenance (issue 38 item 2)."""

from __future__ import annotations

import pytest

from finkg.errors import QueryError
from finkg.kg.graphs import Graphs
from finkg.kg.update_targets import check_update, update_targets

G = Graphs()
AUDIT, ONTOLOGY, NEWS = G.audit.value, G.ontology.value, G.news.value
P = (
    "PREFIX fkg: <https://w3id.org/finkg/ns#> PREFIX g: <https://w3id.org/finkg/id/graph/> "
    "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
)


@pytest.mark.parametrize(
    ("text", "graphs", "any_graph"),
    [
        (P + "INSERT DATA { GRAPH g:news { <urn:a> fkg:text 'x' } }", {NEWS}, False),
        (P + "DELETE WHERE { GRAPH g:audit { ?s ?p ?o } }", {AUDIT}, False),
        (P + "WITH g:audit DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }", {AUDIT}, False),
        ("DELETE { GRAPH ?g { ?s ?p ?o } } WHERE { GRAPH ?g { ?s ?p ?o } }", set(), True),
        (
            f"DELETE {{ GRAPH ?g {{ ?s ?p ?o }} }} WHERE {{ GRAPH ?g {{ ?s ?p ?o }} "
            f"VALUES ?g {{ <{NEWS}> }} }}",
            {NEWS},
            False,
        ),
        ("CLEAR ALL", set(), True),
        ("DROP NAMED", set(), True),
        (f"CLEAR GRAPH <{ONTOLOGY}>", {ONTOLOGY}, False),
        (f"MOVE <{AUDIT}> TO <{NEWS}>", {AUDIT, NEWS}, False),  # a move empties its source
        (f"COPY <{AUDIT}> TO <{NEWS}>", {NEWS}, False),  # a copy only reads it
        (f"LOAD <http://e.org/x.ttl> INTO GRAPH <{AUDIT}>", {AUDIT}, False),
        # reading the audit graph is no write
        (
            P
            + "INSERT { GRAPH g:news { ?c fkg:text 'x' } } "
            + "WHERE { GRAPH g:audit { ?c a fkg:Commit } }",
            {NEWS},
            False,
        ),
    ],
)
def test_an_update_names_the_graphs_it_writes(text: str, graphs: set[str], any_graph: bool) -> None:
    targets = update_targets(text)
    assert set(targets.graphs) == graphs
    assert (targets.any_graph is not None) == any_graph


@pytest.mark.parametrize(
    "text",
    [
        P + "DELETE WHERE { GRAPH g:audit { ?c fkg:sequence ?n } }",
        P + "INSERT DATA { GRAPH g:audit { <urn:c> a fkg:Commit ; fkg:sequence 999999 } }",
        P + "INSERT DATA { GRAPH g:ontology { fkg:NewsArticle fkg:label 'x' } }",
        "CLEAR ALL",
        "DELETE { GRAPH ?g { ?s ?p ?o } } WHERE { GRAPH ?g { ?s ?p ?o } }",
        f"DROP GRAPH <{AUDIT}>",
    ],
)
def test_a_rewrite_of_the_audit_or_ontology_graph_needs_maintenance(text: str) -> None:
    with pytest.raises(QueryError, match="maintenance") as refused:
        check_update(text, G)
    assert refused.value.exit_code == 2
    check_update(text, G, maintenance=True)  # allowed as maintenance


@pytest.mark.parametrize(
    "text",
    [
        P + "INSERT DATA { GRAPH g:news { fkg:NewsArticle rdfs:subClassOf fkg:Nothing } }",
        P + "INSERT { GRAPH g:news { fkg:availableAt rdfs:range ?r } } WHERE { BIND(1 AS ?r) }",
        "PREFIX prov: <http://www.w3.org/ns/prov#> INSERT DATA { GRAPH <"
        + NEWS
        + "> { prov:Entity <urn:p> 1 } }",
    ],
)
def test_a_statement_about_the_vocabulary_outside_the_ontology_graph_is_always_refused(
    text: str,
) -> None:
    for maintenance in (False, True):
        with pytest.raises(QueryError, match="vocabulary"):
            check_update(text, G, maintenance=maintenance)


def test_an_update_of_data_graphs_passes() -> None:
    check_update(P + "DELETE WHERE { GRAPH g:news { <urn:a> ?p ?o } }", G)


def test_an_update_that_does_not_parse_is_a_query_error() -> None:
    with pytest.raises(QueryError):
        check_update("DELETE NONSENSE", G)


def test_finkg_query_refuses_an_audit_rewrite_and_records_a_maintenance_commit(
    tmp_path,
) -> None:
    """`finkg query --update` on the audit graph: exit 2 naming the graph and the flag,
    nothing written; with --maintenance it runs and its commit says maintenance."""
    from click.testing import CliRunner

    from finkg.cli import cli
    from finkg.kg.store import open_store

    env = {"FINKG_HOME": str(tmp_path / "home"), "FINKG_STORE": str(tmp_path / "store")}
    runner = CliRunner()
    assert runner.invoke(cli, ["init"], env=env).exit_code == 0
    wipe = f"DELETE WHERE {{ GRAPH <{AUDIT}> {{ ?c <https://w3id.org/finkg/ns#sequence> ?n }} }}"
    refused = runner.invoke(cli, ["query", "--update", wipe], env=env)
    assert refused.exit_code == 2, refused.output
    assert "audit" in refused.output and "--maintenance" in refused.output
    with open_store(tmp_path / "store", read_only=True) as s:
        before = s.generation()
    assert before == 1
    done = runner.invoke(cli, ["query", "--update", "--maintenance", wipe], env=env)
    assert done.exit_code == 0, done.output
    with open_store(tmp_path / "store", read_only=True) as s:
        notes = s.select(
            "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
            f"SELECT ?note WHERE {{ GRAPH <{AUDIT}> {{ ?c rdfs:label ?note }} }}"
        )
        assert "maintenance: query query" in [r["note"].value for r in notes]  # type: ignore[union-attr]  # a literal
        assert s.generation() == 2  # the maintenance commit, numbered after the wiped ones
