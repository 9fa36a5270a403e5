"""A record re-ingested with other content is kept as a revision (issue 38 item 3): a news
item edited at its source, a restated bar. Checked with the future-invariance method: a
decision before the correction was ingested gets exactly what it got without it; one after
sees the corrected version and not the old one."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from finkg import queries
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.iri import mint
from finkg.kg.store import BaseStore, open_store
from finkg.ontology.terms import FKG, PROV
from finkg.retrieval.index.live import node_texts
from tests.test_pools import COMPANIES, DECISION, NY, _items, _pool, _store

EDITED = "https://x/a3"  # an Alpha item the pool draws from
CORRECTED = "Alpha raises guidance revenue number 3, corrected: the plant is in Iowa"


def _correction(tmp_path: Path, store: BaseStore, *, at: dt.datetime):
    """Ingest the edited item at `at`; the ingest report."""
    edited = next(i for i in _items() if i["url"] == EDITED)
    path = tmp_path / f"edited-{at:%Y%m%d}.jsonl"
    path.write_text(json.dumps({**edited, "text": CORRECTED}) + "\n")
    options = IngestOptions(graphs=store.graphs, now=at)
    return ingest(store, "news", loader("news"), [path], options)


def _texts(store: BaseStore, pool) -> dict[str, str]:
    texts = node_texts(store, [c.evidence for c in pool.candidates])
    return {c.evidence.value: texts[c.evidence] for c in pool.candidates}


def test_a_correction_after_the_decision_changes_nothing_for_it(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    without = _pool(_store(tmp_path / "a"))
    store = _store(tmp_path / "b")
    report = _correction(tmp_path, store, at=DECISION + dt.timedelta(days=30))
    assert (report.written, report.revisions) == (1, 1)
    assert _pool(store) == without  # future invariance
    before = dt.datetime(2020, 5, 1, 9, 0, tzinfo=NY)
    company = mint("company", "ZQAA")
    for bound in (before, DECISION):
        rows = queries.run(store, "evidence_before", {"company": company, "before": bound})
        assert CORRECTED not in {r["text"].value for r in rows}  # type: ignore[union-attr]


def test_a_decision_after_the_correction_sees_the_new_version_only(tmp_path: Path) -> None:
    store = _store(tmp_path)
    original = mint("news", "ZQAA", EDITED)
    _correction(tmp_path, store, at=dt.datetime(2020, 4, 25, 12, 0, tzinfo=NY))
    texts = _texts(store, _pool(store))
    assert original.value not in texts
    revised = [iri for iri, text in texts.items() if text.endswith("Iowa")]
    assert len(revised) == 1 and revised[0].startswith(original.value + "/rev/")
    # the revision says what it revises, when finkg learned of it and what the record states
    rows = store.select(f"SELECT ?p ?o WHERE {{ GRAPH ?g {{ <{revised[0]}> ?p ?o }} }}")
    said = {r["p"]: r["o"].value for r in rows}  # type: ignore[union-attr]
    assert said[PROV.wasRevisionOf] == original.value
    assert said[FKG.availableAt].startswith("2020-04-25T16:00:00")
    assert said[FKG.recordHash].startswith("sha256:")
    # the old version is kept, as it was
    old = store.select(
        f"SELECT ?t WHERE {{ GRAPH ?g {{ <{original.value}> <{FKG.text.value}> ?t }} }}"
    )
    assert "corrected" not in old.rows[0][0].value  # type: ignore[union-attr]


def test_ingesting_either_version_again_adds_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path)
    at = dt.datetime(2020, 4, 25, 12, 0, tzinfo=NY)
    _correction(tmp_path, store, at=at)
    generation = store.generation()
    again = _correction(tmp_path, store, at=at + dt.timedelta(days=1))
    assert (again.written, again.revisions, again.skipped_existing) == (0, 0, 1)
    # the original file again: a version the store holds, not a revert
    original = tmp_path / "original.jsonl"
    original.write_text("".join(json.dumps(i) + "\n" for i in _items()))
    report = ingest(store, "news", loader("news"), [original], IngestOptions(graphs=store.graphs))
    assert (report.written, report.revisions) == (0, 0)
    assert store.generation() == generation


def test_a_second_correction_revises_the_first(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _correction(tmp_path, store, at=dt.datetime(2020, 4, 25, 12, 0, tzinfo=NY))
    edited = next(i for i in _items() if i["url"] == EDITED)
    path = tmp_path / "second.jsonl"
    path.write_text(json.dumps({**edited, "text": "second correction"}) + "\n")
    at = dt.datetime(2020, 4, 27, 12, 0, tzinfo=NY)
    report = ingest(
        store, "news", loader("news"), [path], IngestOptions(graphs=store.graphs, now=at)
    )
    assert report.revisions == 1
    chain = store.select(
        f"SELECT ?new ?old WHERE {{ GRAPH ?g {{ ?new <{PROV.wasRevisionOf.value}> ?old . "
        f"?new a <{FKG.NewsArticle.value}> }} }}"
    )
    pairs = {(r["new"].value, r["old"].value) for r in chain}  # type: ignore[union-attr]
    original = mint("news", "ZQAA", EDITED).value
    first = next(n for n, o in pairs if o == original)
    assert any(o == first for n, o in pairs if n != first)  # the second revises the first
    rows = queries.run(
        store, "evidence_before", {"company": mint("company", "ZQAA"), "before": DECISION}
    )
    texts = [r["text"].value for r in rows]  # type: ignore[union-attr]
    assert sum(t.endswith("second correction") for t in texts) == 1
    assert not any(t.endswith(CORRECTED) for t in texts)
    assert not any(t == "Alpha item 3\n\nAlpha raises guidance revenue number 3" for t in texts)


PRICES = (
    "Date,Open,High,Low,Close,Adj Close,Volume\n"
    "2020-04-01,10,11,9,10,10,100\n2020-04-02,10,11,9,10.5,10.5,100\n"
)


def test_a_restated_bar_is_read_as_of_its_correction_and_never_twice(tmp_path: Path) -> None:
    store = open_store(None)
    (tmp_path / "companies.csv").write_text(COMPANIES)
    options = IngestOptions(graphs=store.graphs)
    ingest(store, "companies", loader("companies"), [tmp_path / "companies.csv"], options)
    (tmp_path / "ZQAA.csv").write_text(PRICES)
    ingest(store, "prices", loader("prices"), [tmp_path / "ZQAA.csv"], options)
    (tmp_path / "restated").mkdir()
    (tmp_path / "restated" / "ZQAA.csv").write_text(PRICES.replace("10.5,10.5", "10.6,10.6"))
    at = dt.datetime(2020, 6, 1, 12, 0, tzinfo=NY)
    restated = IngestOptions(graphs=store.graphs, now=at)
    report = ingest(
        store, "prices", loader("prices"), [tmp_path / "restated" / "ZQAA.csv"], restated
    )
    assert report.revisions == 1  # the bar; what is derived from it is not revised
    company, day = mint("company", "ZQAA"), dt.date(2020, 4, 2)
    closes = queries.run(
        store, "adj_closes", {"entity": [company], "first": dt.date(2020, 4, 1), "last": day}
    )
    assert len(closes) == 2  # type: ignore[arg-type]  # one bar a session
    for before, close in ((at - dt.timedelta(days=1), "10.5"), (at + dt.timedelta(days=1), "10.6")):
        rows = queries.run(store, "close_before", {"entity": company, "day": day, "before": before})
        assert [float(r["close"].value) for r in rows] == [float(close)]  # type: ignore[union-attr]


def test_a_record_with_no_time_of_its_own_is_kept_as_stored_and_counted(tmp_path: Path) -> None:
    store = open_store(None)
    (tmp_path / "companies.csv").write_text(COMPANIES)
    options = IngestOptions(graphs=store.graphs)
    ingest(store, "companies", loader("companies"), [tmp_path / "companies.csv"], options)
    (tmp_path / "renamed.csv").write_text(COMPANIES.replace("Alpha (synthetic)", "Alpha Two"))
    report = ingest(store, "companies", loader("companies"), [tmp_path / "renamed.csv"], options)
    assert (report.written, report.revisions, report.kept_stored) == (0, 0, 1)
    assert report.skipped_existing == 3  # the two unchanged and the one kept as stored


def test_anchors_are_never_revisions(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _correction(tmp_path, store, at=dt.datetime(2020, 4, 25, 12, 0, tzinfo=NY))
    rows = queries.run(
        store,
        "news_anchors",
        {"from": dt.datetime(2020, 1, 1, tzinfo=NY), "to": dt.datetime(2020, 12, 1, tzinfo=NY)},
    )
    assert not any("/rev/" in r["news"].value for r in rows)  # type: ignore[union-attr]
    in_2020 = [i for i in _items() if i["publishedDate"] >= "2020"]
    assert len(rows) == len(in_2020)  # type: ignore[arg-type]
