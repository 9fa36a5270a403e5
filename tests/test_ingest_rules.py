"""The loaders' time, key and URL rules (issue 24). Each test is named after the input
that got through."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from finkg.errors import InputError
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.setup import init_store
from finkg.kg.store import BaseStore, open_store

NOW = dt.datetime(2020, 6, 1, 12, tzinfo=dt.UTC)


def news(**fields: object) -> str:
    record = {
        "symbol": "ZQAW",
        "publishedDate": "2019-03-01 16:30:00",
        "title": "Acme beats estimates",
        "text": "Acme beat estimates.",
        "url": "https://example.org/acme-1",
    }
    record.update(fields)
    return json.dumps(record) + "\n"


@pytest.fixture
def store() -> BaseStore:
    s = open_store(None)
    init_store(s)
    return s


def refused(store: BaseStore, kind: str, path: Path, *, now: dt.datetime = NOW) -> InputError:
    generation = store.generation()
    options = IngestOptions(graphs=store.graphs, now=now)
    with pytest.raises(InputError) as error:
        ingest(store, kind, loader(kind), [path], options)
    assert store.generation() == generation
    return error.value


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_news_dated_after_the_moment_of_ingestion_is_refused(store, tmp_path) -> None:
    path = write(
        tmp_path,
        "n.jsonl",
        news() + news(publishedDate="2100-01-04 09:00:00", url="https://e.org/2"),
    )
    e = refused(store, "news", path)
    assert (e.line, e.field) == (2, "publishedDate") and "moment of ingestion" in str(e)
    # set aside with --skip-bad, the other item written
    report = ingest(
        store,
        "news",
        loader("news"),
        [path],
        IngestOptions(graphs=store.graphs, now=NOW),
        skip_bad=True,
    )
    assert report.written == 1 and [r.line for r in report.rejects] == [2]


def test_news_published_a_second_after_the_ingest_began_is_refused(store, tmp_path) -> None:
    path = write(tmp_path, "n.jsonl", news(publishedDate="2020-06-01 08:00:01"))  # 12:00:01Z
    assert refused(store, "news", path).field == "publishedDate"
    ingest(
        store,
        "news",
        loader("news"),
        [path],
        IngestOptions(graphs=store.graphs, now=NOW + dt.timedelta(seconds=1)),
    )


def test_a_transaction_dated_2100_is_refused(store, tmp_path) -> None:
    assets = write(tmp_path, "assets.csv", "ISIN,assetName,assetCategory\nGRS000000018,Acme,Bond\n")
    customers = write(
        tmp_path,
        "customers.csv",
        "customerID,customerType,riskLevel,investmentCapacity\nC1,Mass,Income,CAP_LT30K\n",
    )
    transactions = write(
        tmp_path,
        "transactions.csv",
        "customerID,ISIN,transactionID,transactionType,timestamp,totalValue,units\n"
        "C1,GRS000000018,T1,Buy,2100-01-04 10:00:00,100.0,2\n",
    )
    options = IngestOptions(graphs=store.graphs, now=NOW)
    with pytest.raises(InputError) as error:
        ingest(store, "fartrans", loader("fartrans"), [assets, customers, transactions], options)
    assert (error.value.line, error.value.field) == (2, "timestamp")


def test_a_bar_whose_session_has_not_closed_is_refused(store, tmp_path) -> None:
    path = write(tmp_path, "ZQAW.csv", "Date,Open,High,Low,Close,Volume\n2020-06-01,1,2,1,2,5\n")
    e = refused(store, "prices", path)  # 12:00 UTC, before the 16:00 New York close
    assert (e.line, e.field) == (2, "Date") and "closes after the moment of ingestion" in str(e)


@pytest.mark.parametrize(
    ("when", "reason"),
    [
        ("2019-03-10 02:30:00", "no such local time"),
        ("2019-11-03 01:30:00", "ambiguous local time"),
    ],
    ids=["gap", "overlap"],
)
def test_a_new_york_time_in_a_daylight_saving_gap_or_overlap_is_refused(
    store, tmp_path, when: str, reason: str
) -> None:
    """2019-03-10 02:30 New York was stored with a guessed offset and marked exact."""
    e = refused(store, "news", write(tmp_path, "n.jsonl", news(publishedDate=when)))
    assert (e.line, e.field) == (1, "publishedDate") and reason in str(e)


def test_an_overlap_time_that_names_its_offset_is_taken_as_exact(store, tmp_path) -> None:
    path = write(tmp_path, "n.jsonl", news(publishedDate="2019-11-03 01:30:00-05:00"))
    ingest(store, "news", loader("news"), [path], IngestOptions(graphs=store.graphs, now=NOW))
    rows = store.select(
        "SELECT ?at ?rule WHERE { GRAPH ?g { ?n <https://w3id.org/finkg/ns#availableAt> ?at ;"
        " <https://w3id.org/finkg/ns#timeRule> ?rule } }"
    )
    [(at, rule)] = [(r["at"].value, r["rule"].value) for r in rows]
    assert at == "2019-11-03T01:30:00-05:00" and rule == "publishedDate with its own offset"


def test_a_second_company_row_with_the_same_ticker_and_another_name_is_refused(
    store, tmp_path
) -> None:
    path = write(
        tmp_path, "companies.csv", "ticker,name\nZQDD,Acme\nZQEE,Beta\nZQDD,Acme Holdings\n"
    )
    e = refused(store, "companies", path)
    assert (e.line, e.field) == (4, "key") and "companies.csv line 2" in str(e)


def test_the_same_row_twice_is_a_harmless_repeat(store, tmp_path) -> None:
    path = write(tmp_path, "companies.csv", "ticker,name\nZQDD,Acme\nZQDD,Acme\n")
    report = ingest(
        store, "companies", loader("companies"), [path], IngestOptions(graphs=store.graphs)
    )
    assert (report.written, report.skipped_existing, report.rejects) == (1, 1, [])


def test_two_news_lines_with_one_url_and_other_titles_are_refused_across_files(
    store, tmp_path
) -> None:
    first = write(tmp_path, "a.jsonl", news())
    second = write(tmp_path, "b.jsonl", news(title="Acme misses estimates"))
    options = IngestOptions(graphs=store.graphs, now=NOW)
    with pytest.raises(InputError, match=r"a\.jsonl line 1") as error:
        ingest(store, "news", loader("news"), [first, second], options)
    assert Path(str(error.value.source)).name == "b.jsonl"


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("javascript:alert(1)", "not an http(s) URL"),
        ("https://example.org/a b", "not a valid IRI"),
        ("example.org/a", "not an http(s) URL"),
        ("ftp://example.org/a", "not an http(s) URL"),
    ],
)
def test_a_url_that_is_not_an_http_iri_is_refused_naming_the_field(
    store, tmp_path, url: str, reason: str
) -> None:
    e = refused(store, "news", write(tmp_path, "n.jsonl", news(url=url)))
    assert (e.line, e.field) == (1, "url") and reason in str(e)


def test_a_documents_sidecar_with_a_javascript_source_is_refused(store, tmp_path) -> None:
    from finkg.kg.ingest.documents import ingest_documents

    doc = write(tmp_path, "report.txt", "Revenue rose 5%.\n")
    write(tmp_path, "report.txt.meta.json", '{"published": "2019-02-16", "source": "javascript:x"}')
    report = ingest_documents(store, [doc])
    [reject] = report.rejects
    assert reject.field == "source" and reject.source.endswith(".meta.json")
    assert "not an http(s) URL" in reject.reason


def test_a_second_file_for_a_stored_filing_cannot_give_it_another_content_hash(
    store, tmp_path
) -> None:
    """Found by the fuzzed corpus: a changed copy of an ingested filing had its passages
    skipped as present but for one more, whose source document (the filing, keyed by its
    accession) then held two content hashes and two sources; validate flagged it."""
    from tests.fuzz_inputs import SGML, SUBMISSIONS

    index = write(tmp_path, "CIK0099000001.json", SUBMISSIONS)
    first = write(tmp_path, "0099000001-20-000001.txt", SGML)
    options = IngestOptions(graphs=store.graphs, now=NOW)
    ingest(store, "filings", loader("filings"), [index, first], options)
    longer = SGML.replace(
        "million.\n", "million.\n\n" + "Outlook raised for the year. " * 200 + "\n"
    )
    (tmp_path / "again").mkdir()
    second = write(tmp_path / "again", "0099000001-20-000001.txt", longer)
    with pytest.raises(InputError, match="with what the store already holds") as error:
        ingest(store, "filings", loader("filings"), [index, second], options)
    assert error.value.field == "https://w3id.org/finkg/ns#contentHash"
