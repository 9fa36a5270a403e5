"""The persisted vector index: each text embedded once, incremental refresh, staleness,
reopening, refusing another embedder, FAISS HNSW against exact search, failed saves and
checkpoints; one test with the real packaged MiniLM."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from pyoxigraph import Literal, NamedNode, Quad

from finkg.cli import cli
from finkg.config import Settings
from finkg.errors import InputError
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.store import BaseStore, open_store
from finkg.ontology.terms import FKG, RDF
from finkg.retrieval.index import hnsw as hnsw_module
from finkg.retrieval.index import persist as persist_module
from finkg.retrieval.index import vectors as vectors_module
from finkg.retrieval.index.embed import HashEmbedder
from finkg.retrieval.index.indexes import index_dir, refresh_indexes
from finkg.retrieval.index.persist import NotIndexedError
from finkg.retrieval.index.vectors import VectorIndex

NEWS = {
    "guidance": "Acme raises guidance",
    "recall": "Acme recalls widgets",
    "oil": "Oil prices fall",
    "merger": "Beta agrees merger",
}


class Counting:
    """An embedder that records every text it is asked for (and can fail after `fail_after`)."""

    def __init__(self, dim: int = 32, fail_after: int | None = None) -> None:
        self.inner = HashEmbedder(dim=dim)
        self.model_id, self.dim = self.inner.model_id, dim
        self.texts: list[str] = []
        self.fail_after = fail_after

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.fail_after is not None and len(self.texts) + len(texts) > self.fail_after:
            raise KeyboardInterrupt
        self.texts.extend(texts)
        return self.inner.embed(texts)


def add_news(store: BaseStore, folder: Path, keys: list[str], *, day: int = 1) -> None:
    path = folder / f"news-{'-'.join(keys)}.jsonl"
    records = [
        {
            "symbol": "ZQAW",
            "publishedDate": f"2019-03-{day:02d} 09:{i:02d}:00",
            "title": NEWS[key],
            "site": "wire",
            "text": "",
            "url": f"https://example.org/news/{key}",
        }
        for i, key in enumerate(keys)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    ingest(store, "news", loader("news"), [path], IngestOptions(graphs=store.graphs))


def node_of(store: BaseStore, title: str) -> NamedNode:
    rows = store.select(
        "PREFIX fkg: <https://w3id.org/finkg/ns#> SELECT ?n WHERE { GRAPH ?g { "
        f"?n a fkg:NewsArticle ; fkg:text {Literal(title)} }} }}"
    )
    (row,) = list(rows)
    return row["n"]  # type: ignore[return-value]


def open_index(folder: Path, embedder: Counting, **options: object) -> VectorIndex:
    return VectorIndex.open(folder, model_id=embedder.model_id, dim=embedder.dim, **options)


@pytest.fixture
def built(store: BaseStore, tmp_path: Path) -> tuple[BaseStore, VectorIndex, Counting]:
    add_news(store, tmp_path, ["guidance", "recall", "oil"])
    embedder = Counting()
    index = open_index(tmp_path / "vectors", embedder)
    index.refresh(store, embedder)
    return store, index, embedder


def test_search_finds_the_node_by_cosine(built) -> None:
    store, index, embedder = built
    assert sorted(embedder.texts) == sorted(NEWS[k] for k in ("guidance", "recall", "oil"))
    hits = index.search(embedder.embed(["Oil prices fall"])[0], 3)
    assert hits[0][0] == node_of(store, "Oil prices fall")
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5) and len(hits) == 3
    assert hits[0][1] >= hits[1][1] >= hits[2][1]
    node = node_of(store, "Acme recalls widgets")
    assert np.allclose(index.vectors([node])[0], embedder.embed(["Acme recalls widgets"])[0])
    assert [n for n, _ in index.search(embedder.embed(["oil"])[0], 3, among=[node])] == [node]


def test_each_text_is_embedded_once(built, tmp_path: Path) -> None:
    store, index, embedder = built
    embedder.texts.clear()
    add_news(store, tmp_path, ["merger"], day=2)
    report = index.refresh(store, embedder)
    assert (report.added, report.changed, report.removed, report.unchanged) == (1, 0, 0, 3)
    assert embedder.texts == ["Beta agrees merger"]
    embedder.texts.clear()
    assert index.refresh(store, embedder).unchanged == 4 and embedder.texts == []
    reopened = open_index(tmp_path / "vectors", embedder)
    assert reopened.refresh(store, embedder).unchanged == 4 and embedder.texts == []


def test_a_changed_text_is_embedded_again(built) -> None:
    store, index, embedder = built
    node = node_of(store, "Oil prices fall")
    store.update(
        "PREFIX fkg: <https://w3id.org/finkg/ns#> "
        f"WITH <{store.graphs.news.value}> DELETE {{ {node} fkg:text ?t }} "
        f'INSERT {{ {node} fkg:text "Copper rallies" }} '
        f"WHERE {{ {node} fkg:text ?t }}"
    )
    embedder.texts.clear()
    report = index.refresh(store, embedder)
    assert (report.changed, report.unchanged, embedder.texts) == (1, 2, ["Copper rallies"])
    assert np.allclose(index.vectors([node])[0], embedder.embed(["Copper rallies"])[0])


def test_a_removed_node_disappears(built) -> None:
    store, index, embedder = built
    node = node_of(store, "Acme recalls widgets")
    store.update(f"DELETE WHERE {{ GRAPH <{store.graphs.news.value}> {{ {node} ?p ?o }} }}")
    report = index.refresh(store, embedder)
    assert (report.removed, len(index)) == (1, 2)
    assert node not in [n for n, _ in index.search(embedder.embed([NEWS["recall"]])[0], 5)]
    with pytest.raises(NotIndexedError, match="refresh the index"):
        index.vectors([node])


def test_stale_before_and_after_refresh(store: BaseStore, tmp_path: Path) -> None:
    embedder = Counting()
    index = open_index(tmp_path / "vectors", embedder)
    assert index.stale(store)
    index.refresh(store, embedder)
    assert not index.stale(store) and len(index) == 0
    add_news(store, tmp_path, ["oil"])
    assert index.stale(store)
    index.refresh(store, embedder)
    assert not index.stale(store) and index.generation == store.generation()


def test_reopening_gives_identical_results(built, tmp_path: Path) -> None:
    store, index, embedder = built
    again = open_index(tmp_path / "vectors", embedder)
    nodes = [node_of(store, t) for t in ("Oil prices fall", "Acme raises guidance")]
    assert np.array_equal(again.vectors(nodes), index.vectors(nodes))
    query = embedder.embed(["acme guidance"])[0]
    assert again.search(query, 3) == index.search(query, 3)
    assert (len(again), again.generation, again.stale(store)) == (3, store.generation(), False)


def test_another_embedder_is_refused(built, tmp_path: Path) -> None:
    store, _, embedder = built
    with pytest.raises(InputError) as e:
        VectorIndex.open(tmp_path / "vectors", model_id="other-model", dim=embedder.dim)
    assert "model_id='hash-32'" in str(e.value) and "other-model" in str(e.value)
    with pytest.raises(InputError, match=r"dim=32.*not the 64"):
        VectorIndex.open(tmp_path / "vectors", model_id=embedder.model_id, dim=64)
    with pytest.raises(InputError, match="hash-16"):
        open_index(tmp_path / "vectors", embedder).refresh(store, HashEmbedder(dim=16))
    with pytest.raises(InputError, match=r"dim.*got 0"):
        VectorIndex.open(tmp_path / "other", model_id="m", dim=0)
    with pytest.raises(InputError, match=r"5 dimensions|got 5"):
        open_index(tmp_path / "vectors", embedder).search(np.ones(5), 1)


def write_many(store: BaseStore, n: int, *, words_each: int = 4, start: int = 0) -> list[NamedNode]:
    words = "rates oil guidance merger recall copper dividend buyback lawsuit chip".split()
    rng = np.random.default_rng(3 + start)
    nodes, quads = [], []
    for i in range(start, start + n):
        node = NamedNode(f"https://e.org/news/{i:04d}")
        text = " ".join(rng.choice(words, size=words_each)) + f" item {i}"
        quads += [
            Quad(node, RDF.type, FKG.NewsArticle, store.graphs.news),
            Quad(node, FKG.text, Literal(text), store.graphs.news),
        ]
        nodes.append(node)
    store.write(add=quads, note="many")
    return nodes


def test_faiss_hnsw_agrees_with_exact_search(tmp_path: Path) -> None:
    store, embedder = open_store(None), Counting(dim=48)
    nodes = write_many(store, 400)
    hnsw = open_index(tmp_path / "vectors", embedder, faiss_threshold=100)
    hnsw.refresh(store, embedder)
    manifest = json.loads((tmp_path / "vectors" / "manifest.json").read_text())
    folder = tmp_path / "vectors" / manifest["data"]
    assert (folder / "hnsw.faiss").exists()
    exact = open_index(tmp_path / "vectors", embedder)  # default threshold: exact search
    reloaded = open_index(tmp_path / "vectors", embedder, faiss_threshold=100)
    assert reloaded._data.hnsw is not None and exact._data.hnsw is None  # read from disk
    for node in nodes[::40]:
        query = exact.vectors([node])[0]
        top = exact.search(query, 5)
        assert top[0][0] == node
        for index in (hnsw, reloaded):
            approx = index.search(query, 5)
            assert approx[0][0] == top[0][0]
            assert approx[0][1] == pytest.approx(top[0][1], abs=1e-5)
    assert hnsw.search(query, 3, among=nodes[:2]) == exact.search(query, 3, among=nodes[:2])


def test_hnsw_search_is_calibrated_for_recall_and_says_so(tmp_path: Path) -> None:
    """The build chooses efSearch on its own rows; recall on queries it never saw (texts
    that are not indexed) is close to what it measured, and the choice is kept on disk."""
    store, embedder = open_store(None), Counting(dim=48)
    write_many(store, 600)
    index = open_index(tmp_path / "vectors", embedder, faiss_threshold=100)
    index.refresh(store, embedder)
    chosen = index.calibration
    assert chosen is not None and chosen.ef_search is not None and chosen.recall >= 0.95
    assert chosen.tried[chosen.ef_search] == chosen.recall and chosen.k == 20
    exact = open_index(tmp_path / "vectors", embedder)
    rng = np.random.default_rng(11)
    words = "rates oil guidance merger recall copper dividend buyback lawsuit chip".split()
    found = []
    for query in embedder.embed([" ".join(rng.choice(words, size=3)) for _ in range(40)]):
        floor = exact.search(query, 20)[-1][1] - 1e-6
        found.append(sum(score >= floor for _, score in index.search(query, 20)) / 20)
    assert float(np.mean(found)) >= 0.9
    reopened = open_index(tmp_path / "vectors", embedder, faiss_threshold=100)
    assert reopened.calibration == chosen


def test_hnsw_is_calibrated_on_the_first_words_of_the_passages_it_held_out(tmp_path: Path) -> None:
    """The calibration queries are shaped like a headline, not a whole passage: each held-out
    passage's first line, at most PROBE_WORDS words, embedded after every passage was."""
    store, embedder = open_store(None), Counting(dim=48)
    write_many(store, 300, words_each=20)
    index = open_index(tmp_path / "vectors", embedder, faiss_threshold=100)
    index.refresh(store, embedder)
    passages, probes = embedder.texts[:300], embedder.texts[300:]
    chosen = index.calibration
    assert chosen is not None and chosen.probe == vectors_module.PROBE
    assert len(probes) == chosen.queries == 150  # half the rows, under QUERIES
    assert len(set(probes)) == 150
    for probe in probes:
        assert len(probe.split()) == vectors_module.PROBE_WORDS
        assert any(text.startswith(probe + " ") for text in passages)
    assert f"on 150 {vectors_module.PROBE}" in chosen.describe()


@pytest.mark.parametrize("older", ["probe", "lower"])
def test_an_index_calibrated_otherwise_is_recalibrated(tmp_path: Path, older: str) -> None:
    """An index saved before the probes (its hnsw.json names no probe: the rows were the
    queries) or before the confidence bound (no `lower`: the mean recall was held to the
    target) still searches, and the next refresh rebuilds it, calibrated on headline-shaped
    queries to the lower bound, without embedding any passage again."""
    store, embedder = open_store(None), Counting(dim=48)
    write_many(store, 300, words_each=20)
    open_index(tmp_path / "vectors", embedder, faiss_threshold=100).refresh(store, embedder)
    manifest = json.loads((tmp_path / "vectors" / "manifest.json").read_text())
    saved = tmp_path / "vectors" / manifest["data"] / "hnsw.json"
    calibrated = json.loads(saved.read_text())
    del calibrated[older]
    saved.write_text(json.dumps(calibrated))
    old = open_index(tmp_path / "vectors", embedder, faiss_threshold=100)
    assert old.calibration is not None
    assert (old.calibration.probe, old.calibration.lower is None) == {
        "probe": (hnsw_module.ROWS, False),
        "lower": (vectors_module.PROBE, True),
    }[older]
    assert old.search(embedder.embed(["oil merger"])[0], 3)
    embedded = len(embedder.texts)
    old.refresh(store, embedder)
    assert old.calibration is not None and old.calibration.probe == vectors_module.PROBE
    assert old.calibration.lower is not None
    assert len(embedder.texts) - embedded == old.calibration.queries  # the probes alone


def test_a_refresh_that_only_adds_passages_grows_the_index_and_measures_it_again(
    tmp_path: Path,
) -> None:
    """News arrives daily: a refresh that only adds passages adds them to the FAISS index it
    has and measures its recall again on the queries the build held out (their vectors kept
    beside it), embedding nothing but the new passages; one that removes a passage, or grows
    the index past twice the rows it was built over, builds and calibrates a new one."""
    store, embedder = open_store(None), Counting(dim=48)
    first = write_many(store, 300, words_each=20)
    index = open_index(tmp_path / "vectors", embedder, faiss_threshold=100)
    index.refresh(store, embedder)
    built = index.calibration
    assert built is not None and built.rows == 300 and built.grown == 0
    new = write_many(store, 60, words_each=20, start=300)
    embedded = len(embedder.texts)
    index.refresh(store, embedder, batch_size=10, checkpoint=20)  # saved twice on the way
    grown = index.calibration
    assert len(embedder.texts) - embedded == 60  # the new passages; no probe embedded again
    assert grown is not None and (grown.rows, grown.grown, grown.queries) == (300, 60, 150)
    assert grown.lower is not None and grown.lower >= 0.95
    assert "60 rows added since its build" in grown.describe()
    for node in [*new[:5], *first[:5]]:
        assert index.search(index.vectors([node])[0], 1)[0][0] == node
    reopened = open_index(tmp_path / "vectors", embedder, faiss_threshold=100)
    assert reopened.calibration == grown
    query = embedder.embed(["oil merger copper"])[0]
    assert reopened.search(query, 20) == index.search(query, 20)

    gone = first[0]
    store.write(
        remove=[q for q in store.quads(store.graphs.news) if q.subject == gone], note="drop"
    )
    embedded = len(embedder.texts)
    index.refresh(store, embedder)
    rebuilt = index.calibration
    assert rebuilt is not None and (rebuilt.rows, rebuilt.grown) == (359, 0)
    assert len(embedder.texts) - embedded == rebuilt.queries  # the probes, embedded anew

    write_many(store, 360, words_each=20, start=360)  # 719 rows: past twice 359
    index.refresh(store, embedder)
    assert index.calibration is not None
    assert (index.calibration.rows, index.calibration.grown) == (719, 0)


class _Breadths:
    """A stand-in index: at each breadth, the top-k scores each query gets back."""

    def __init__(self, by_breadth: dict[int, np.ndarray]) -> None:
        self.by_breadth, self.breadth = by_breadth, 0

    def search(self, asked: np.ndarray, k: int) -> tuple[np.ndarray, None]:
        return self.by_breadth[self.breadth], None


def test_a_breadth_is_kept_only_when_its_recall_clears_the_target_with_confidence() -> None:
    """Four queries finding 20, 20, 20 and 17 of their top 20 average 0.9625, above 0.95 by
    luck as far as four queries can tell (the lower bound is 0.889): the next breadth, where
    all four find all 20, is the one kept."""
    floors = np.zeros(4, dtype=np.float32)
    short = np.ones((4, 20), dtype=np.float32)
    short[3, 17:] = -1.0  # the fourth query misses three of its top 20
    index = _Breadths({8: short, 16: np.ones((4, 20), dtype=np.float32)})

    def breadth(n: int) -> None:
        index.breadth = n

    asked = np.zeros((4, 3), dtype=np.float32)
    chosen, tried, lower = hnsw_module.climb(index, breadth, (8, 16), asked, floors, 20, 0.95)
    assert tried[8] == pytest.approx(0.9625) and chosen == 16 and lower == pytest.approx(1.0)
    alone, _, low = hnsw_module.climb(index, breadth, (8,), asked, floors, 20, 0.95)
    assert alone is None and low == pytest.approx(0.9625 - 1.96 * 0.075 / 2)


def test_hnsw_that_cannot_reach_the_target_searches_exactly(tmp_path: Path, monkeypatch) -> None:
    store, embedder = open_store(None), Counting(dim=48)
    write_many(store, 300)
    strict = functools.partial(hnsw_module.build_hnsw, ladder=(1,), target=1.0, ivf_ladder=(1,))
    monkeypatch.setattr(vectors_module, "build_hnsw", strict)
    index = open_index(tmp_path / "vectors", embedder, faiss_threshold=100)
    index.refresh(store, embedder)
    chosen = index.calibration
    assert chosen is not None and chosen.ef_search is None and list(chosen.tried) == [1]
    assert "exact search" in chosen.describe() and "below the target 1.0" in chosen.describe()
    assert chosen.structure == "ivf" and chosen.before.startswith("HNSW recall@20 reached")
    folder = (
        tmp_path
        / "vectors"
        / json.loads((tmp_path / "vectors" / "manifest.json").read_text())["data"]
    )
    assert (folder / "hnsw.json").exists() and not (folder / "hnsw.faiss").exists()
    exact = open_index(tmp_path / "vectors", embedder)
    reopened = open_index(tmp_path / "vectors", embedder, faiss_threshold=100)
    for query in embedder.embed(["oil merger", "chip lawsuit rates", "item 7"]):
        assert index.search(query, 20) == exact.search(query, 20) == reopened.search(query, 20)


def test_where_hnsw_falls_short_an_ivf_index_is_calibrated_and_kept(
    tmp_path: Path, monkeypatch
) -> None:
    """An HNSW ladder that cannot reach the target (here: one rung, efSearch 20) gives way
    to IVF, calibrated on the same queries; it is saved, read back and searched with its
    nprobe, and finds what exact search finds."""
    store, embedder = open_store(None), Counting(dim=48)
    write_many(store, 600, words_each=20)
    short = functools.partial(hnsw_module.build_hnsw, ladder=(1,), target=0.99)
    monkeypatch.setattr(vectors_module, "build_hnsw", short)
    index = open_index(tmp_path / "vectors", embedder, faiss_threshold=100)
    index.refresh(store, embedder)
    chosen = index.calibration
    assert chosen is not None and chosen.structure == "ivf" and chosen.ef_search is not None
    assert chosen.lower is not None and chosen.lower >= 0.99 and chosen.ef_search < chosen.lists
    assert (
        chosen.before.startswith("HNSW recall@20 reached") and "below the target" in chosen.before
    )
    assert f"IVF nprobe ({chosen.lists} lists) {chosen.ef_search}" in chosen.describe()
    reopened = open_index(tmp_path / "vectors", embedder, faiss_threshold=100)
    assert reopened.calibration == chosen and not reopened._data.hnsw.exact
    exact = open_index(tmp_path / "vectors", embedder)
    found = []
    for query in embedder.embed(["oil merger copper", "chip lawsuit rates", "dividend"]):
        truth = exact.search(query, 20)
        assert reopened.search(query, 20) == index.search(query, 20)
        floor = truth[-1][1] - 1e-6
        found.append(sum(score >= floor for _, score in index.search(query, 20)) / 20)
    assert float(np.mean(found)) >= 0.9


def test_an_hnsw_index_built_before_calibration_is_rebuilt(tmp_path: Path) -> None:
    store, embedder = open_store(None), Counting(dim=48)
    write_many(store, 300)
    open_index(tmp_path / "vectors", embedder, faiss_threshold=100).refresh(store, embedder)
    manifest = json.loads((tmp_path / "vectors" / "manifest.json").read_text())
    (tmp_path / "vectors" / manifest["data"] / "hnsw.json").unlink()  # as an older finkg saved it
    old = open_index(tmp_path / "vectors", embedder, faiss_threshold=100)
    assert old.calibration is None
    embedded = len(embedder.texts)
    old.refresh(store, embedder)  # nothing changed but the graph: rebuilt, no passage re-embedded
    assert old.calibration is not None
    assert len(embedder.texts) - embedded == old.calibration.queries  # the probes alone
    again = json.loads((tmp_path / "vectors" / "manifest.json").read_text())
    assert (tmp_path / "vectors" / again["data"] / "hnsw.json").exists()


def test_a_failed_save_leaves_the_old_index_readable(built, tmp_path: Path, monkeypatch) -> None:
    store, index, embedder = built
    query = embedder.embed(["acme"])[0]
    before = index.search(query, 5)

    def half_written(self, folder: Path) -> None:
        np.save(folder / "vectors.npy", np.zeros((1, 2)))
        raise OSError("disk full")

    add_news(store, tmp_path, ["merger"], day=2)
    monkeypatch.setattr(vectors_module._Data, "write", half_written)
    with pytest.raises(OSError, match="disk full"):
        index.refresh(store, embedder)
    reopened = open_index(tmp_path / "vectors", embedder)
    assert reopened.search(query, 5) == before and len(reopened) == 3 and reopened.stale(store)
    assert len([p for p in (tmp_path / "vectors").iterdir() if p.is_dir()]) == 1


def test_an_interrupted_refresh_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    store = open_store(None)
    write_many(store, 10)
    failing = Counting(fail_after=7)
    index = open_index(tmp_path / "vectors", failing)
    with pytest.raises(KeyboardInterrupt):
        index.refresh(store, failing, batch_size=2, checkpoint=4)
    saved = open_index(tmp_path / "vectors", failing)
    assert len(saved) == 4 and saved.stale(store)  # one checkpoint after four texts
    counting = Counting()
    report = saved.refresh(store, counting, batch_size=2, checkpoint=4)
    assert (report.added, report.unchanged, len(counting.texts)) == (6, 4, 6)
    assert not saved.stale(store) and len(saved) == 10


def test_refresh_indexes_fills_both_indexes(
    store: BaseStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both indexes from one read of the store's texts (at 5× the scale unit, 5.5 s of a
    12 s BM25 refresh)."""
    settings, embedder = Settings(home=tmp_path / "home"), Counting()
    add_news(store, tmp_path, ["guidance", "oil"])
    reads: list[tuple[str, ...]] = []
    node_texts = persist_module.node_texts

    def counted(store_: BaseStore, classes: Sequence[str]) -> dict[str, str]:
        reads.append(tuple(classes))
        return node_texts(store_, classes)

    monkeypatch.setattr(persist_module, "node_texts", counted)
    stages: list[str] = []
    reports = refresh_indexes(
        store, settings, embedder=embedder, progress=lambda stage, *_: stages.append(stage)
    )
    assert reports.directory == index_dir(store.location, settings)
    assert (reports.text.added, reports.text_nodes, reports.vector_nodes) == (2, 2, 2)
    assert (reports.directory / "text" / "manifest.json").exists()
    assert (reports.directory / "vectors" / "hash-32" / "manifest.json").exists()
    assert "text: tokenize" in stages and "vectors: embed" in stages
    assert reports.search == "exact (below 100,000 nodes)"
    assert len(reads) == 1
    again = refresh_indexes(store, settings, embedder=embedder, vectors=False)
    assert (again.text.unchanged, again.vectors, len(embedder.texts)) == (2, None, 2)


@pytest.mark.model
def test_the_index_command_embeds_with_the_packaged_minilm(tmp_path: Path) -> None:
    from finkg.retrieval.index.embed import MiniLM

    location = tmp_path / "store"
    with open_store(location) as s:
        add_news(s, tmp_path, ["guidance", "recall", "oil"])
    env = {"FINKG_HOME": str(tmp_path / "home"), "FINKG_THREADS": "1"}
    result = CliRunner().invoke(cli, ["index", "--store", str(location)], env=env)
    assert result.exit_code == 0, result.output
    assert "vectors (all-MiniLM-L6-v2" in result.output and "3 added" in result.output
    assert "vector search: exact (below 100,000 nodes)" in result.output
    model = MiniLM(threads=1)
    folder = next((tmp_path / "store.indexes" / "vectors").iterdir())
    index = VectorIndex.open(folder, model_id=model.model_id, dim=model.dim)
    hits = index.search(model.embed(["crude oil became cheaper"])[0], 3)
    with open_store(location, read_only=True) as s:
        assert hits[0][0] == node_of(s, "Oil prices fall")
    assert 0.3 < hits[0][1] <= 1.0


def test_the_device_is_cuda_only_when_torch_sees_one() -> None:
    """FINKG_DEVICE (issue 29): auto takes a CUDA device when there is one, cpu forces the
    CPU, and cuda without one is an error rather than a quiet fallback."""
    import torch

    from finkg.retrieval.index.embed import EmbedderError, torch_device

    assert torch_device("cpu") == "cpu"
    if torch.cuda.is_available():
        assert torch_device("auto") == torch_device("cuda") == "cuda"
    else:
        assert torch_device("auto") == "cpu"
        with pytest.raises(EmbedderError, match="no CUDA device"):
            torch_device("cuda")
    with pytest.raises(InputError, match="FINKG_DEVICE"):
        torch_device("tpu")
