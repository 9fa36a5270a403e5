"""Property tests (hypothesis) for the query binder and the loaders: whatever the input, a
bound value stays one term, and a loader turns a record into an item or a reject that names
its field, never an exception."""

from __future__ import annotations

import datetime as dt
import json
import math
from decimal import Decimal
from pathlib import Path
from urllib.parse import quote
from zoneinfo import ZoneInfo

import pyoxigraph as ox
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from finkg.config import Settings
from finkg.errors import InputError, TimestampError
from finkg.kg.graphs import Graphs
from finkg.kg.ingest import IngestOptions, Item, Reject, loader
from finkg.kg.ingest.common import Lines, Quads, decimal, zoned
from finkg.ontology.terms import FKG, RDF
from finkg.queries.binding import bind

OPTIONS = IngestOptions(graphs=Graphs(Settings().base_iri))
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)
# naive on purpose: news times are written without a zone and read in the source's zone
FIRST, LAST = dt.datetime(1995, 1, 1), dt.datetime(2030, 1, 1)  # noqa: DTZ001
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(TEXT)
def test_a_bound_string_comes_back_as_itself(value: str) -> None:
    store = ox.Store()
    query = bind("SELECT ?x WHERE { }", {"x": ox.Literal(value)})
    [row] = list(store.query(query))
    assert row["x"] == ox.Literal(value)


@PROPERTY
@given(TEXT)
def test_a_bound_string_cannot_change_what_a_query_reads(value: str) -> None:
    store = ox.Store()
    g = ox.NamedNode("https://e.org/g")
    store.add(
        ox.Quad(
            ox.NamedNode("https://e.org/a"), ox.NamedNode("https://e.org/p"), ox.Literal("x"), g
        )
    )
    query = bind(
        "SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o } FILTER (?o != ?v) }", {"v": ox.Literal(value)}
    )
    rows = list(store.query(query))
    assert len(rows) == (0 if value == "x" else 1)


@PROPERTY
@given(st.text(max_size=40), st.sampled_from([None, "UTC", "America/New_York"]))
def test_a_timestamp_is_zoned_or_a_timestamp_error(text: str, tz: str | None) -> None:
    try:
        value = zoned(text, tz=ZoneInfo(tz) if tz else None, field="t")
    except TimestampError as e:
        assert e.field == "t"
        return
    assert value.tzinfo is not None


def _one(kind: str, path: Path) -> list[Item | Reject]:
    try:
        return list(loader(kind)([path], OPTIONS))
    except InputError as e:  # a whole-input error is fine, if it says where
        assert e.source is not None or e.field is not None, e
        return []


@PROPERTY
@given(
    title=TEXT,
    body=TEXT,
    symbol=st.text(st.characters(blacklist_categories=("Cs",)), max_size=8),
    published=st.one_of(
        st.datetimes(min_value=FIRST, max_value=LAST).map(
            lambda d: d.strftime("%Y-%m-%d %H:%M:%S")
        ),
        st.text(max_size=25),
    ),
)
def test_a_news_record_is_an_item_or_a_named_reject(
    tmp_path_factory, title: str, body: str, symbol: str, published: str
) -> None:
    path = tmp_path_factory.mktemp("news") / "n.jsonl"
    record = {"symbol": symbol, "publishedDate": published, "title": title, "text": body}
    path.write_text(json.dumps(record) + "\n")
    [entry] = _one("news", path) or [None]
    if entry is None:
        return
    if isinstance(entry, Reject):
        assert entry.field in {"symbol", "publishedDate", "title", "text"}, entry
        assert entry.line == 1
        return
    texts = [q.object.value for q in entry.quads if q.predicate == FKG.text]
    assert texts == [title.strip() + ("\n\n" + body.strip() if body.strip() else "")]


@PROPERTY
@given(TEXT, TEXT)
def test_lines_write_the_quads_the_quad_builder_makes(title: str, source: str) -> None:
    """The news loader writes N-Quads text itself (`common.Lines`); whatever the strings,
    the text holds exactly the quads `common.Quads` builds from the same statements."""
    graph, node, doc = (ox.NamedNode(f"https://e.org/{n}") for n in ("g", "n", "d"))
    statements = [
        (RDF.type, FKG.NewsArticle),
        (FKG.text, ox.Literal(title)),
        (FKG.site, ox.Literal(title, language="en")),
        (FKG.availableAt, ox.Literal(title, datatype=ox.NamedNode("https://e.org/t"))),
        (FKG.about, None),
    ]
    built, text = Quads(graph), Lines(graph)
    url = "https://e.org/" + quote(source)  # any text, as a URL (a source must be one)
    for builder in (built, text):
        builder.node(node, *statements)
        builder.source_document(doc, data=title.encode(), source=url, media_type="text/csv")
    item = text.item(node, "news.jsonl", 1)
    assert item.quads == built.items
    terms = iter(item.statements)  # what the shape screen reads
    assert [
        ox.Quad(s, p, o, graph) for s, p, o in zip(terms, terms, terms, strict=True)
    ] == built.items
    assert item.count == len(built.items)
    assert item.key_type == ox.Quad(node, RDF.type, FKG.NewsArticle, graph)
    assert item.sources == ((doc, graph),)


PRICE = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=32).map(repr),
    st.sampled_from(["", "abc", "-0", "1e400", "NaN"]),
)


@PROPERTY
@given(st.lists(st.tuples(PRICE, PRICE, PRICE, PRICE, PRICE), min_size=1, max_size=6))
def test_a_price_row_is_a_bar_or_a_reject_naming_its_column(tmp_path_factory, rows) -> None:
    path = tmp_path_factory.mktemp("prices") / "ZQPP.csv"
    day = dt.date(2019, 3, 1)
    lines = ["Date,Open,High,Low,Close,Volume"]
    for i, (o, h, low, c, v) in enumerate(rows):
        lines.append(f"{day + dt.timedelta(days=i)},{o},{h},{low},{c},{v}")
    path.write_text("\n".join(lines) + "\n")
    for entry in _one("prices", path):
        if isinstance(entry, Reject):
            assert entry.field in {
                "Open",
                "High",
                "Low",
                "Close",
                "Volume",
                "Date",
                "row",
                "Low/High",
            }, entry
            assert entry.line is not None and 2 <= entry.line <= len(rows) + 1
            continue
        for q in entry.quads:
            if q.predicate == FKG.close:
                assert math.isfinite(float(q.object.value)) and float(q.object.value) > 0


NUMBER = st.one_of(
    st.decimals(allow_nan=True, allow_infinity=True).map(str),
    st.floats().map(repr),
    st.from_regex(r"[+-]?[0-9]{0,25}(\.[0-9]{0,25})?([eE][+-]?[0-9]{1,3})?", fullmatch=True),
    st.text(max_size=30),
)


@PROPERTY
@given(NUMBER)
def test_a_decimal_a_loader_writes_is_one_oxigraph_can_cast(text: str) -> None:
    """ingest prices took a volume of 1e25 and a price with 19 decimals, which Oxigraph's
    xsd:decimal cannot hold: validate then failed what ingest had passed."""
    try:
        literal = decimal(text, field="Volume")
    except InputError as e:
        assert e.field == "Volume"
        return
    query = f"SELECT ?v WHERE {{ BIND (xsd:decimal({ox.Literal(literal.value)}) AS ?v) }}"
    prefix = "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> "
    cast = next(iter(ox.Store().query(prefix + query)))["v"]
    assert cast is not None and Decimal(cast.value) == Decimal(literal.value)
