"""The persisted BM25 index: search, incremental refresh, staleness, reopening, refusing a
mismatched manifest, surviving a failed save; where indexes live; `finkg index`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from pyoxigraph import Literal, NamedNode, Quad

from finkg.cli import cli
from finkg.config import Settings
from finkg.errors import InputError
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.store import BaseStore, open_store
from finkg.ontology.terms import FKG, RDF
from finkg.retrieval.index import text as text_module
from finkg.retrieval.index.bm25 import bm25_scores, tokenize
from finkg.retrieval.index.indexes import index_dir, parse_classes
from finkg.retrieval.index.persist import NotIndexedError
from finkg.retrieval.index.text import TextIndex

NEWS = {
    "guidance": ("Acme raises guidance", "Acme lifted its full-year revenue guidance."),
    "recall": ("Acme recalls widgets", "A safety recall covers two million widgets."),
    "oil": ("Oil prices fall", "Crude fell on rising inventories."),
    "merger": ("Beta agrees merger", "Beta will merge with Gamma in an all-stock deal."),
}


def add_news(store: BaseStore, folder: Path, keys: list[str], *, day: int = 1) -> None:
    """Ingest news items through the real loader (one JSONL file)."""
    path = folder / f"news-{'-'.join(keys)}.jsonl"
    lines = [
        json.dumps(
            {
                "symbol": "ZQAW",
                "publishedDate": f"2019-03-{day:02d} 09:{i:02d}:00",
                "title": NEWS[key][0],
                "site": "wire",
                "text": NEWS[key][1],
                "url": f"https://example.org/news/{key}",
            }
        )
        for i, key in enumerate(keys)
    ]
    path.write_text("\n".join(lines) + "\n")
    ingest(store, "news", loader("news"), [path], IngestOptions(graphs=store.graphs))


def node_of(store: BaseStore, title: str) -> NamedNode:
    rows = store.select(
        "PREFIX fkg: <https://w3id.org/finkg/ns#> SELECT ?n WHERE { GRAPH ?g { "
        f"?n a fkg:NewsArticle ; fkg:text ?t FILTER (STRSTARTS(?t, {json.dumps(title)})) }} }}"
    )
    (row,) = list(rows)
    return row["n"]  # type: ignore[return-value]


def set_text(store: BaseStore, node: NamedNode, text: str) -> None:
    store.update(
        "PREFIX fkg: <https://w3id.org/finkg/ns#> "
        f"WITH <{store.graphs.news.value}> DELETE {{ {node} fkg:text ?t }} "
        f"INSERT {{ {node} fkg:text {Literal(text)} }} "
        f"WHERE {{ {node} fkg:text ?t }}"
    )


def delete_node(store: BaseStore, node: NamedNode) -> None:
    store.update(f"DELETE WHERE {{ GRAPH <{store.graphs.news.value}> {{ {node} ?p ?o }} }}")


@pytest.fixture
def built(store: BaseStore, tmp_path: Path) -> tuple[BaseStore, TextIndex]:
    add_news(store, tmp_path, ["guidance", "recall", "oil"])
    index = TextIndex.open(tmp_path / "text")
    index.refresh(store)
    return store, index


def test_search_finds_the_node_with_the_scores_of_bm25_scores(built) -> None:
    store, index = built
    hits = index.search("raised guidance", 3)
    assert hits[0][0] == node_of(store, "Acme raises guidance")
    assert len(hits) == 1  # the other two share no word with the query
    nodes = sorted(node_of(store, NEWS[k][0]) for k in ("guidance", "recall", "oil"))
    expected = bm25_scores(tokenize(["raised guidance"])[0], index.tokens(nodes))
    assert hits[0][1] == pytest.approx(max(expected), rel=1e-6)
    acme = [n for n, _ in index.search("acme", 5)]  # twice in the guidance item, once in the recall
    assert acme == [node_of(store, "Acme raises guidance"), node_of(store, "Acme recalls widgets")]


def test_among_restricts_the_ranking(built) -> None:
    store, index = built
    recall = node_of(store, "Acme recalls widgets")
    guidance = node_of(store, "Acme raises guidance")
    assert [n for n, _ in index.search("acme guidance", 5, among=[recall])] == [recall]
    assert {n for n, _ in index.search("acme", 5, among={recall.value, guidance})} == {
        recall,
        guidance,
    }
    unknown = NamedNode("https://e.org/unknown")  # not indexed: ignored
    assert index.search("acme", 1, among=[recall, unknown])[0][0] == recall
    assert index.search("acme", 5, among=[]) == []


def test_tokens_are_the_stored_token_lists(built) -> None:
    store, index = built
    node = node_of(store, "Oil prices fall")
    assert index.tokens([node]) == tokenize([f"{NEWS['oil'][0]}\n\n{NEWS['oil'][1]}"])


def test_a_refresh_tokenizes_only_new_nodes(built, tmp_path: Path, monkeypatch) -> None:
    store, index = built
    seen: list[str] = []

    def spy(texts: list[str]) -> list[list[str]]:
        seen.extend(texts)
        return tokenize(texts)

    monkeypatch.setattr(text_module, "tokenize", spy)
    add_news(store, tmp_path, ["merger"], day=2)
    report = index.refresh(store)
    assert (report.added, report.changed, report.removed, report.unchanged) == (1, 0, 0, 3)
    assert len(seen) == 1 and seen[0].startswith("Beta agrees merger")
    assert index.search("merger", 1)[0][0] == node_of(store, "Beta agrees merger")
    seen.clear()
    report = index.refresh(store)  # nothing new
    assert (report.added, report.unchanged, seen) == (0, 4, [])


def test_a_changed_text_is_tokenized_again(built, monkeypatch) -> None:
    store, index = built
    node = node_of(store, "Oil prices fall")
    set_text(store, node, "Copper rallies on supply worries")
    seen: list[str] = []
    monkeypatch.setattr(text_module, "tokenize", lambda t: seen.extend(t) or tokenize(t))
    report = index.refresh(store)
    assert (report.added, report.changed, report.removed, report.unchanged) == (0, 1, 0, 2)
    assert seen == ["Copper rallies on supply worries"]
    assert index.search("copper", 3)[0][0] == node
    assert index.search("crude inventories", 3) == []


def test_a_removed_node_disappears(built) -> None:
    store, index = built
    node = node_of(store, "Acme recalls widgets")
    delete_node(store, node)
    report = index.refresh(store)
    assert (report.removed, report.unchanged, len(index)) == (1, 2, 2)
    assert node not in [n for n, _ in index.search("recall widgets acme", 5)]
    with pytest.raises(NotIndexedError, match="refresh the index") as e:
        index.tokens([node])
    assert node.value in str(e.value)


def test_stale_before_and_after_refresh(store: BaseStore, tmp_path: Path) -> None:
    index = TextIndex.open(tmp_path / "text")
    assert index.stale(store) and index.generation is None
    assert index.refresh(store).added == 0 and not index.stale(store)
    add_news(store, tmp_path, ["oil"])
    assert index.stale(store)
    index.refresh(store)
    assert not index.stale(store) and index.generation == store.generation()


def test_a_rebuilt_store_at_the_same_generation_is_still_stale(tmp_path: Path) -> None:
    first, second = open_store(None), open_store(None)
    add_news(first, tmp_path, ["oil"])
    add_news(second, tmp_path, ["merger"])
    assert first.generation() == second.generation()
    index = TextIndex.open(tmp_path / "text")
    index.refresh(first)
    assert not index.stale(first) and index.stale(second)


def test_reopening_gives_identical_results(built, tmp_path: Path) -> None:
    store, index = built
    add_news(store, tmp_path, ["merger"], day=2)
    delete_node(store, node_of(store, "Oil prices fall"))
    index.refresh(store)  # built step by step
    again = TextIndex.open(tmp_path / "text")
    scratch = TextIndex.open(tmp_path / "scratch")
    scratch.refresh(store)  # built in one go
    nodes = sorted(node_of(store, NEWS[k][0]) for k in ("guidance", "recall", "merger"))
    for query in ("acme", "merger deal", "guidance revenue", "widgets"):
        assert again.search(query, 5) == index.search(query, 5) == scratch.search(query, 5)
    assert again.tokens(nodes) == index.tokens(nodes) == scratch.tokens(nodes)
    assert (len(again), again.generation, again.stale(store)) == (3, store.generation(), False)


@pytest.mark.parametrize(
    ("option", "stored", "asked"),
    [("k1", "1.5", "1.2"), ("b", "0.75", "0.5"), ("classes", "NewsArticle", "PriceSummary")],
)
def test_a_manifest_mismatch_is_refused(tmp_path: Path, option, stored, asked) -> None:
    TextIndex.open(tmp_path / "text")
    value = {"k1": 1.2, "b": 0.5, "classes": [FKG.PriceSummary]}[option]
    with pytest.raises(InputError) as e:
        TextIndex.open(tmp_path / "text", **{option: value})
    message = str(e.value)
    assert f"{option}=" in message and stored in message and asked in message
    assert "delete" in message


def test_a_manifest_of_another_tokenizer_is_refused(tmp_path: Path) -> None:
    TextIndex.open(tmp_path / "text")
    path = tmp_path / "text" / "manifest.json"
    path.write_text(path.read_text().replace('"finkg-words', '"old-words'))
    with pytest.raises(InputError, match="tokenizer='old-words"):
        TextIndex.open(tmp_path / "text")


def test_options_are_checked_when_opening(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"k1.*got 0"):
        TextIndex.open(tmp_path / "a", k1=0)
    with pytest.raises(InputError, match=r"b.*got 1.5"):
        TextIndex.open(tmp_path / "b", b=1.5)
    with pytest.raises(InputError, match="at least one class"):
        TextIndex.open(tmp_path / "c", classes=[])
    with pytest.raises(InputError, match=r"k must.*got 0"):
        TextIndex.open(tmp_path / "d").search("x", 0)


def test_a_failed_save_leaves_the_old_index_readable(built, tmp_path: Path, monkeypatch) -> None:
    store, index = built
    before = index.search("acme", 5)

    def half_written(self, folder: Path) -> None:
        (folder / "nodes.json").write_text("{}")
        raise OSError("disk full")

    add_news(store, tmp_path, ["merger"], day=2)
    monkeypatch.setattr(text_module._Data, "write", half_written)
    with pytest.raises(OSError, match="disk full"):
        index.refresh(store)
    assert index.search("acme", 5) == before and index.stale(store)  # unchanged in memory
    reopened = TextIndex.open(tmp_path / "text")
    assert reopened.search("acme", 5) == before and len(reopened) == 3
    folders = [p.name for p in (tmp_path / "text").iterdir() if p.is_dir()]
    assert len(folders) == 1  # the half-written folder was removed
    monkeypatch.undo()
    assert reopened.refresh(store).added == 1 and len(TextIndex.open(tmp_path / "text")) == 4


def test_where_indexes_live(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home")
    assert index_dir(str(tmp_path / "db"), settings) == tmp_path / "db.indexes"
    remote = index_dir("http://localhost:7878", settings)
    assert remote.parent == settings.cache_dir / "indexes" and len(remote.name) == 16
    assert index_dir(":memory:", settings) != remote
    assert parse_classes(None) == (FKG.NewsArticle, FKG.FilingPassage, FKG.DocumentChunk)
    with pytest.raises(InputError, match="NewsArticel"):
        parse_classes("NewsArticel")


def test_the_index_command_refreshes_the_text_index(tmp_path: Path) -> None:
    location = tmp_path / "store"
    with open_store(location) as s:
        add_news(s, tmp_path, ["guidance", "oil"])
    runner = CliRunner()
    env = {"FINKG_HOME": str(tmp_path / "home")}
    args = ["index", "--no-vectors", "--store", str(location)]
    result = runner.invoke(cli, args, env=env)
    assert result.exit_code == 0, result.output
    assert "text: 2 added, 0 changed, 0 removed, 0 unchanged" in result.output
    assert TextIndex.open(tmp_path / "store.indexes" / "text").search("oil", 1)
    result = runner.invoke(cli, args, env=env)
    assert "text: 0 added, 0 changed, 0 removed, 2 unchanged" in result.output
    result = runner.invoke(cli, [*args, "--classes", "PriceSummary"], env=env)
    assert result.exit_code == 2 and "classes=" in result.output
    assert "--no-vectors" in runner.invoke(cli, ["index", "--help"]).output


def test_nodes_of_other_classes_are_not_indexed(store: BaseStore, tmp_path: Path) -> None:
    g, node = store.graphs.market, NamedNode("https://e.org/summary/1")
    store.write(
        add=[Quad(node, RDF.type, FKG.PriceSummary, g), Quad(node, FKG.text, Literal("up"), g)],
        note="test",
    )
    index = TextIndex.open(tmp_path / "text")
    index.refresh(store)
    assert len(index) == 0 and index.search("up", 3) == []
    summaries = TextIndex.open(tmp_path / "summaries", classes=[FKG.PriceSummary])
    summaries.refresh(store)
    (score,) = bm25_scores(["up"], [["up"]])
    assert summaries.search("up", 3) == [(node, pytest.approx(score, rel=1e-6))]
