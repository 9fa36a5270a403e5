"""Loaders for companies, news, prices and FAR-Trans, through the shared batch writer."""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from pyoxigraph import NamedNode

from finkg.errors import InputError
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.ingest.fartrans import isin_ok
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG, PROV
from finkg.shapes.validate import validate_store

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is absent")


def run(store: BaseStore, kind: str, *paths: Path, tz: str | None = None, **kw):
    options = IngestOptions(graphs=store.graphs, tz=ZoneInfo(tz) if tz else None)
    return ingest(store, kind, loader(kind), list(paths), options, **kw)


def values(store: BaseStore, prop: NamedNode) -> list[str]:
    rows = store.select(f"SELECT ?v WHERE {{ GRAPH ?g {{ ?s <{prop.value}> ?v }} }} ORDER BY ?v")
    return [r["v"].value for r in rows]  # type: ignore[union-attr]


def news_line(**fields: str) -> str:
    record = {
        "symbol": "ZQAW",
        "publishedDate": "2019-03-01 16:30:00",
        "title": "Acme beats",
        "site": "wire",
        "text": "Acme beat estimates.",
        "url": "https://example.org/a",
    }
    record.update(fields)
    return json.dumps(record) + "\n"


def test_news_is_read_in_new_york_time_by_default(store: BaseStore, tmp_path: Path) -> None:
    path = tmp_path / "n.jsonl"
    path.write_text(
        news_line() + news_line(url="https://example.org/b", publishedDate="2019-07-01 07:15:00")
    )
    report = run(store, "news", path)
    assert (report.records, report.written, report.rejects) == (2, 2, [])
    assert values(store, FKG.availableAt) == [
        "2019-03-01T16:30:00-05:00",
        "2019-07-01T07:15:00-04:00",
    ]
    assert validate_store(store).conforms


def test_a_declared_zone_overrides_the_default(store: BaseStore, tmp_path: Path) -> None:
    path = tmp_path / "n.jsonl"
    path.write_text(news_line())
    run(store, "news", path, tz="UTC")
    assert values(store, FKG.availableAt) == ["2019-03-01T16:30:00Z"]  # Oxigraph writes +00:00 as Z
    assert values(store, FKG.timeRule) == ["publishedDate read as UTC"]


def test_ingesting_twice_adds_nothing(store: BaseStore, tmp_path: Path) -> None:
    path = tmp_path / "n.jsonl"
    path.write_text(news_line() + news_line())  # an exact duplicate line too
    first = run(store, "news", path)
    generation = store.generation()
    second = run(store, "news", path)
    assert (first.written, first.skipped_existing) == (1, 1)
    assert (second.written, second.skipped_existing) == (0, 2)
    assert store.generation() == generation


@pytest.mark.parametrize(
    ("line", "field"),
    [
        (news_line(publishedDate="2019-02-30 10:00:00"), "publishedDate"),
        (news_line(publishedDate=""), "publishedDate"),
        (news_line(symbol=""), "symbol"),
        (news_line(title="x" * 1_000_001), "title"),
        ('{"symbol": "ZQAW", "title": 5, "publishedDate": "2019-03-01 16:30:00"}\n', "title"),
    ],
)
def test_bad_news_records_are_named_and_nothing_is_written(
    store: BaseStore, tmp_path: Path, line: str, field: str
) -> None:
    path = tmp_path / "n.jsonl"
    path.write_text(news_line() + line)
    with pytest.raises(InputError) as error:
        run(store, "news", path)
    assert error.value.line == 2 and error.value.field == field
    assert error.value.source == str(path)
    assert store.generation() == 0


def test_skip_bad_writes_the_rest_and_the_rejects(store: BaseStore, tmp_path: Path) -> None:
    path = tmp_path / "n.jsonl"
    path.write_text(news_line() + "{not json\n" + news_line(url="https://example.org/c"))
    rejects = tmp_path / "rejects.jsonl"
    report = run(store, "news", path, skip_bad=True, rejects_file=rejects)
    assert report.written == 2
    [reject] = [json.loads(x) for x in rejects.read_text().splitlines()]
    assert reject["line"] == 2 and "not valid JSON" in reject["reason"]


def _many_news(path: Path, n: int, *, bad_at: int) -> None:
    lines = [news_line(url=f"https://example.org/{i}", title=f"Item {i}") for i in range(n)]
    lines.insert(bad_at, "{not json\n")
    lines.append(lines[3])  # a duplicate, chunks after its first copy
    path.write_text("".join(lines))


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    import finkg.kg.ingest.core as core

    monkeypatch.setattr(core, "CHECK_CHUNK", 25)
    monkeypatch.setattr(core, "WRITE_BATCH", 20)


def test_a_late_bad_record_stops_a_many_batch_ingest_before_any_write(
    store: BaseStore, tmp_path: Path, small_batches: None
) -> None:
    path = tmp_path / "n.jsonl"
    _many_news(path, 200, bad_at=180)  # chunk 8 of 9: batches 1-7 are checked by then
    with pytest.raises(InputError) as error:
        run(store, "news", path)
    assert error.value.line == 181
    assert store.generation() == 0


def test_skip_bad_writes_checked_batches_in_order_while_checking_on(
    store: BaseStore, tmp_path: Path, small_batches: None
) -> None:
    path = tmp_path / "n.jsonl"
    _many_news(path, 200, bad_at=180)
    report = run(store, "news", path, skip_bad=True)
    assert (report.written, report.skipped_existing, len(report.rejects)) == (200, 1, 1)
    assert len(report.commits) == 10  # 200 items in batches of 20
    rows = store.select(
        "SELECT ?n (COUNT(?doc) AS ?docs) WHERE { "
        "GRAPH ?a { ?c <https://w3id.org/finkg/ns#sequence> ?n } "
        "GRAPH ?g { ?doc <http://www.w3.org/ns/prov#wasGeneratedBy> ?c } } "
        "GROUP BY ?n ORDER BY ?n"
    )
    assert [int(r["docs"].value) for r in rows] == [20] * 10  # type: ignore[union-attr]
    titles = values(store, FKG.text)
    assert len(titles) == len(set(titles)) == 200
    assert validate_store(store).conforms


def test_a_text_item_that_breaks_a_shape_is_named_or_set_aside(
    store: BaseStore, tmp_path: Path
) -> None:
    """Items written as N-Quads text (`common.Lines`, the news loader's) are shape-checked
    like items of quads: one without its availability instant is refused by file and line,
    or set aside with --skip-bad while the good one is written."""
    from pyoxigraph import Literal

    from finkg.kg.ingest.common import Lines
    from finkg.kg.iri import mint
    from finkg.ontology.terms import RDF

    def texts(paths, options):
        for line, when in ((1, None), (2, "2019-03-01T16:30:00-05:00")):
            node = mint("news", "ZQAW", str(line), base=options.base)
            doc = mint("source/news", "ZQAW", str(line), base=options.base)
            q = Lines(options.graphs.news)
            q.source_document(doc, data=b"{}", source="https://e.org/n", media_type="text/csv")
            q.node(
                node,
                (RDF.type, FKG.NewsArticle),
                (FKG.text, Literal(f"item {line}")),
                (FKG.availableAt, common_datetime(when)),
                (FKG.timeQuality, Literal("exact")),
                (FKG.timeRule, Literal("test")),
                (FKG.sourceFamily, FKG.News),
                (FKG.about, mint("company", "ZQAW", base=options.base)),
                (PROV.wasDerivedFrom, doc),
            )
            yield q.item(node, str(paths[0]), line)

    path = tmp_path / "n.txt"
    options = IngestOptions(graphs=store.graphs)
    with pytest.raises(InputError) as error:
        ingest(store, "news", texts, [path], options)
    assert (error.value.line, error.value.field) == (1, FKG.availableAt.value)
    assert store.generation() == 0
    report = ingest(store, "news", texts, [path], options, skip_bad=True)
    assert (report.written, [r.line for r in report.rejects]) == (1, [1]), report.rejects
    assert validate_store(store).conforms
    rows = store.select(  # the written item's source document points at its commit
        "SELECT ?doc WHERE { GRAPH ?g { ?doc <http://www.w3.org/ns/prov#wasGeneratedBy> ?c } }"
    )
    assert [r["doc"].value for r in rows] == [mint("source/news", "ZQAW", "2").value]  # type: ignore[union-attr]


def common_datetime(text: str | None):
    import datetime as dt

    from finkg.kg.ingest.common import datetime

    return None if text is None else datetime(dt.datetime.fromisoformat(text))


def test_price_bars_are_available_at_the_session_close(store: BaseStore, tmp_path: Path) -> None:
    path = tmp_path / "ZQAW.csv"
    path.write_text(
        "Date,Open,High,Low,Close,Adj Close,Volume\r\n"
        "2020-11-25,10,11,9.5,10.5,10.4,1000\r\n"
        "2020-11-27,10.5,10.8,10.1,10.6,10.5,500\r\n"
    )  # an early close
    assert run(store, "prices", path).written == 2
    assert values(store, FKG.availableAt) == [
        "2020-11-25T16:00:00-05:00",
        "2020-11-27T13:00:00-05:00",
    ]
    assert values(store, FKG.adjClose) == ["10.4", "10.5"]
    assert validate_store(store).conforms


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ("2020-07-03,10,11,9,10,10,1", "Date"),  # a holiday
        ("2020-07-02,10,11,9,nan,10,1", "Close"),
        ("2020-07-02,10,11,9,-10,10,1", "Close"),
        ("2020-07-02,10,11,10.5,10,10,1", "Low/High"),
        ("2020-07-02,10,11,9,10,10,-5", "Volume"),
        ("2020-07-02T15:00:00,10,11,9,10,10,5", "Date"),
    ],
)
def test_bad_bars_are_refused(store: BaseStore, tmp_path: Path, row: str, field: str) -> None:
    path = tmp_path / "ZQAW.csv"
    path.write_text("Date,Open,High,Low,Close,Adj Close,Volume\n" + row + "\n")
    with pytest.raises(InputError) as error:
        run(store, "prices", path)
    assert (error.value.line, error.value.field) == (2, field)


def test_a_row_with_more_values_than_columns_is_rejected(store: BaseStore, tmp_path: Path) -> None:
    path = tmp_path / "companies.csv"
    path.write_text("ticker,name\nZQAW,Acme,extra\nZQIB,Ivorel\n")
    with pytest.raises(InputError) as error:
        run(store, "companies", path)
    assert (error.value.line, error.value.field) == (2, "row")
    assert run(store, "companies", path, skip_bad=True).written == 1


def test_an_empty_price_file_is_rejected_whole(store: BaseStore, tmp_path: Path) -> None:
    path = tmp_path / "AFRM.csv"
    path.write_text("")
    with pytest.raises(InputError, match="empty file"):
        run(store, "prices", path)


def test_isin_check_digits() -> None:
    assert isin_ok("US0378331005") and isin_ok("GB0002634946")
    assert not isin_ok("US0378331004") and not isin_ok("us0378331005") and not isin_ok("US03783")


def test_fartrans_puts_each_customer_in_their_own_graph(store: BaseStore, tmp_path: Path) -> None:
    from finkg.demo.world import WorldSpec, build_world

    build_world(tmp_path / "w", WorldSpec(tickers=4, sessions=60, users=4))
    files = sorted((tmp_path / "w" / "fartrans").glob("*.csv"))
    report = run(store, "fartrans", *files)
    assert report.rejects == [] and report.written > 100
    users = [
        g for g in store.named_graphs() if (store.graphs.name_of(g) or "").startswith("users/")
    ]
    assert len(users) == 4
    for graph in users:  # every transaction in a user's graph is that user's
        rows = store.select(
            f"SELECT DISTINCT ?c WHERE {{ GRAPH <{graph.value}> "
            f"{{ ?t <{FKG.customer.value}> ?c }} }}"
        )
        assert len(rows) == 1
        assert rows.rows[0][0].value.rsplit("/", 1)[1] == graph.value.rsplit("/", 1)[1]  # type: ignore[union-attr]
    quality = set(values(store, FKG.timeQuality))
    assert quality == {"approximate"}  # the stand-in's timestamps are dates
    assert validate_store(store).conforms


def test_a_date_only_transaction_is_available_at_the_end_of_its_day(
    store: BaseStore, tmp_path: Path
) -> None:
    path = tmp_path / "transactions.csv"
    path.write_text(
        "customerID,ISIN,transactionID,transactionType,timestamp,totalValue,units\n"
        "C1,US0378331005,7,Buy,2020-03-27,100.5,2\n"
    )
    run(store, "fartrans", path)
    assert values(store, FKG.availableAt) == ["2020-03-28T00:00:00+02:00"]


def test_fartrans_refuses_unknown_assets_and_bad_types(store: BaseStore, tmp_path: Path) -> None:
    assets = tmp_path / "asset_information.csv"
    assets.write_text(
        "ISIN,assetName,assetCategory,assetSubCategory,sector,industry\n"
        "US0378331005,Apple,Stock,,Technology,Hardware\n"
    )
    tx = tmp_path / "transactions.csv"
    tx.write_text(
        "customerID,ISIN,transactionID,transactionType,timestamp,totalValue,units\n"
        "C1,GB0002634946,1,Buy,2020-03-27,100,1\n"
    )
    with pytest.raises(InputError, match="unknown asset"):
        run(store, "fartrans", assets, tx)
    tx.write_text(
        "customerID,ISIN,transactionID,transactionType,timestamp,totalValue,units\n"
        "C1,US0378331005,1,Hold,2020-03-27,100,1\n"
    )
    with pytest.raises(InputError, match="Buy or Sell"):
        run(store, "fartrans", assets, tx)
    assert store.generation() == 0


def test_companies_csv(store: BaseStore, tmp_path: Path) -> None:
    path = tmp_path / "companies.csv"
    path.write_text("ticker,cik,name,sector,industry\nzqaw,99000001,Acme (synthetic),Tech,Chips\n")
    run(store, "companies", path)
    assert values(store, FKG.cik) == ["0099000001"]
    assert values(store, FKG.ticker) == ["ZQAW"]
    assert validate_store(store).conforms


def _slice(path: Path, folder: Path, start: str, end: str) -> Path:
    """The header and the rows of a price file whose date is in [start, end)."""
    lines = path.read_text().splitlines()
    kept = [lines[0]] + [x for x in lines[1:] if start <= x[:10] < end]
    out = folder / path.name
    out.write_text("\n".join(kept) + "\n")
    return out


@pytest.mark.realdata
@needs_shared
def test_real_news_and_prices_load_cleanly(store: BaseStore, tmp_path: Path) -> None:
    with gzip.open(SHARED / "event/news/nasdaq_news_2015_2020.jsonl.gz", "rt") as f:
        sample = list(itertools.islice(f, 300))
    news = tmp_path / "news.jsonl"
    news.write_text("".join(sample))
    report = run(store, "news", news)
    assert report.rejects == [] and report.written + report.skipped_existing == 300
    # Half a year around QQQ's one inconsistent bar (2019-07-19: open above high), so that the
    # derived windows stay few enough for the default suite.
    files = [
        _slice(SHARED / "event/prices/AAPL.csv", tmp_path, "2019-04-01", "2019-10-01"),
        _slice(SHARED / "event/market/QQQ_2013_2020.csv", tmp_path, "2019-04-01", "2019-10-01"),
    ]
    prices = run(store, "prices", *files, skip_bad=True)
    bad = (
        files[1]
        .read_text()
        .splitlines()
        .index(next(x for x in files[1].read_text().splitlines() if x.startswith("2019-07-19")))
    )
    assert [(Path(r.source).name, r.line, r.field) for r in prices.rejects] == [
        ("QQQ_2013_2020.csv", bad + 1, "Low/High")
    ]
    assert prices.written > 200
    rows = store.select(
        "SELECT ?c WHERE { GRAPH ?g { ?b <https://w3id.org/finkg/ns#sessionDate> "
        '"2019-04-30"^^<http://www.w3.org/2001/XMLSchema#date> ; '
        "<https://w3id.org/finkg/ns#about> <https://w3id.org/finkg/id/company/AAPL> ; "
        "<https://w3id.org/finkg/ns#adjClose> ?c } }"
    )
    assert len(rows) == 1


@pytest.mark.realdata
@needs_shared
def test_the_real_empty_afrm_file_is_rejected_with_a_reason(store: BaseStore) -> None:
    with pytest.raises(InputError) as error:
        run(store, "prices", SHARED / "event/prices/AFRM.csv")
    assert "AFRM.csv" in str(error.value)


FNSPID_HEADER = (
    "Date,Article_title,Stock_symbol,Url,Publisher,Author,Article,Lsa_summary,"
    "Luhn_summary,Textrank_summary,Lexrank_summary\n"
)


def test_fnspid_csv_reads_its_utc_suffix(store: BaseStore, tmp_path: Path) -> None:
    path = tmp_path / "nasdaq_external_data.csv"
    path.write_text(
        FNSPID_HEADER + '2020-04-30 20:30:00 UTC,"Apple beats, again",AAPL,https://e.org/1,'
        'Benzinga,A. Writer,"Record services revenue.",,,,\n'
        + "2020-05-01 11:00:00,No zone here,AAPL,https://e.org/2,Wire,,,"
        "Summary only.,,,\n"
    )
    report = run(store, "news", path)
    assert report.written == 2
    assert values(store, FKG.availableAt) == ["2020-04-30T20:30:00Z", "2020-05-01T11:00:00Z"]
    assert values(store, FKG.timeRule) == ["Date read as UTC", "Date with its UTC suffix"]
    texts = values(store, FKG.text)
    assert "Apple beats, again\n\nRecord services revenue." in texts
    assert "No zone here\n\nSummary only." in texts
    assert validate_store(store).conforms


def test_fnspid_csv_bad_row_names_its_line(store: BaseStore, tmp_path: Path) -> None:
    path = tmp_path / "news.csv"
    path.write_text(
        FNSPID_HEADER
        + '2020-04-30 20:30:00 UTC,"multi\nline title",AAPL,https://e.org/1,,,,,,,\n'
        + "2020-13-01 11:00:00 UTC,Bad month,AAPL,https://e.org/2,,,,,,,\n"
    )
    with pytest.raises(InputError) as error:
        run(store, "news", path)
    assert (error.value.line, error.value.field) == (4, "Date")


def test_prices_skip_bad_keeps_the_good_bars(store: BaseStore, tmp_path: Path) -> None:
    path = tmp_path / "ZQAW.csv"
    path.write_text(
        "Date,Open,High,Low,Close,Adj Close,Volume\n"
        "2020-07-02,10,11,9,10,10,1\n"
        "2020-07-03,10,11,9,10,10,1\n"  # the holiday
        "2020-07-06,10,11,9,10.5,10.5,1\n"
    )
    rejects = tmp_path / "rejects.jsonl"
    report = run(store, "prices", path, skip_bad=True, rejects_file=rejects)
    assert report.written >= 2
    assert values(store, FKG.sessionDate)[:2] == ["2020-07-02", "2020-07-06"]
    [reject] = [json.loads(x) for x in rejects.read_text().splitlines()]
    assert (reject["line"], reject["field"]) == (3, "Date")


def test_fartrans_skip_bad_keeps_the_good_rows(store: BaseStore, tmp_path: Path) -> None:
    tx = tmp_path / "transactions.csv"
    tx.write_text(
        "customerID,ISIN,transactionID,transactionType,timestamp,totalValue,units\n"
        "C1,US0378331005,1,Buy,2020-03-27,100,1\n"
        "C1,US0378331006,2,Buy,2020-03-27,100,1\n"  # bad check digit
        "C2,US0378331005,3,Sell,2020-03-30,50,0.5\n"
    )
    report = run(store, "fartrans", tx, skip_bad=True)
    assert report.written == 2
    assert [(r.line, r.field) for r in report.rejects] == [(3, "ISIN")]
    assert {store.graphs.name_of(g) for g in store.named_graphs()} >= {"users/C1", "users/C2"}


def test_a_text_item_states_exactly_what_its_text_says(store: BaseStore, tmp_path: Path) -> None:
    """The shape screen reads a text item's statements and the store its N-Quads: they
    must say the same thing, escapes and all."""
    path = tmp_path / "n.jsonl"
    path.write_text(news_line(title='Acme "beats"\tagain', text="Line one\nline two \\ é"))
    options = IngestOptions(graphs=store.graphs)
    (item,) = loader("news")([path], options)
    terms = iter(item.statements)
    stated = set(zip(terms, terms, terms, strict=True))
    written = {(q.subject, q.predicate, q.object) for q in item.quads}
    assert stated == written
    assert len(stated) == item.count == 14


def test_an_ingest_puts_the_collector_schedule_back(store: BaseStore, tmp_path: Path) -> None:
    import gc

    before = gc.get_threshold()
    path = tmp_path / "n.jsonl"
    path.write_text(news_line() + "{not json\n")
    with pytest.raises(InputError):
        run(store, "news", path)
    assert gc.get_threshold() == before
    run(store, "news", path, skip_bad=True)
    assert gc.get_threshold() == before
