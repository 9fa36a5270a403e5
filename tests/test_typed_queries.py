"""Typed query results (issue 39): a `.rq` header types its outputs, checked when the file
is loaded, and `queries.select` returns rows whose accessors read those types or name the
query and the variable that did not hold one."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from finkg import queries
from finkg.errors import QueryError
from finkg.kg.store import open_store
from finkg.ontology.terms import XSD

E = "https://e.org/"
TYPED = """# typed: a node's value and when.
#
# input  ?node  iri  the node
# output ?node  iri
# output ?value decimal
# output ?at    dateTime
# output ?note  string?
SELECT ?node ?value ?at ?note
WHERE {
  GRAPH ?g { ?node <https://e.org/value> ?value ; <https://e.org/at> ?at . }
  OPTIONAL { GRAPH ?g { ?node <https://e.org/note> ?note } }
}
"""


@pytest.fixture()
def store():
    s = open_store(None)
    node = NamedNode(E + "a")
    g = s.graphs.news
    s.write(
        add=[
            Quad(node, NamedNode(E + "value"), Literal("12.50", datatype=XSD.decimal), g),
            Quad(
                node,
                NamedNode(E + "at"),
                Literal("2020-01-02T09:30:00-05:00", datatype=XSD.dateTime),
                g,
            ),
        ],
        note="test",
    )
    return s


def test_select_returns_rows_read_as_their_declared_types(store) -> None:
    rows = queries.select(store, queries.parse(TYPED, name="typed"), {"node": E + "a"})
    row = rows.one()
    assert row.iri("node") == NamedNode(E + "a")
    assert row.decimal("value") == Decimal("12.50")
    at = row.datetime("at")
    assert at == dt.datetime(2020, 1, 2, 14, 30, tzinfo=dt.UTC)
    assert at.utcoffset() == dt.timedelta(hours=-5)
    assert row.maybe_string("note") is None


def test_an_accessor_other_than_the_declared_type_names_the_query_and_variable(store) -> None:
    row = queries.select(store, queries.parse(TYPED, name="typed"), {"node": E + "a"}).one()
    with pytest.raises(QueryError, match=r"typed: \?at.*declared dateTime.*read as integer"):
        row.integer("at")
    with pytest.raises(QueryError, match=r"typed: \?note.*unbound"):
        row.string("note")
    with pytest.raises(QueryError, match=r"typed: \?nope.*not a variable"):
        row.string("nope")


def test_a_header_with_an_unknown_output_type_is_refused_at_load() -> None:
    text = TYPED.replace("?value decimal", "?value money")
    with pytest.raises(QueryError, match="unknown output type") as caught:
        queries.parse(text, name="typed")
    assert caught.value.line == 5 and caught.value.value == "money"


def test_a_header_declaring_an_output_the_query_never_binds_is_refused() -> None:
    text = TYPED.replace("# output ?note  string?", "# output ?note  string?\n# output ?gone  iri")
    with pytest.raises(QueryError, match=r"never binds.*\?gone"):
        queries.parse(text, name="typed")


def test_a_comment_starting_with_output_is_not_a_header_line() -> None:
    q = queries.load("future_evidence")
    assert q.outputs == ("violations",)


def test_each_form_has_its_own_call(store) -> None:
    assert queries.ask(store, "ASK { ?s ?p ?o }") is False  # the default graph is empty
    with pytest.raises(QueryError, match="expected a SELECT query, got ASK"):
        queries.select(store, "ASK { ?s ?p ?o }")
    triples = queries.construct(store, "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }")
    assert len(triples) >= 2


def test_every_packaged_typed_header_names_known_types() -> None:
    typed = [q for q in queries.catalog() if q.output_types]
    assert {q.name for q in typed} >= {"statement_facts", "revisions_of"}
    for q in typed:
        for name, kind in q.output_types:
            assert name in q.outputs and kind.rstrip("?") in queries.OUTPUT_TYPES, q.name
