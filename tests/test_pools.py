"""Point-in-time pools (paper 000 §3.3): eligibility, exclusions, peer cap, fusion, and
future invariance, on a small hand-made store."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from finkg.errors import InputError
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.iri import mint
from finkg.kg.store import BaseStore, open_store
from finkg.ontology.terms import FKG
from finkg.retrieval.index.embed import HashEmbedder
from finkg.retrieval.index.live import LiveTexts, LiveVectors, node_texts
from finkg.retrieval.pools import PoolSpec, anchor_cluster, build_pool

NY = ZoneInfo("America/New_York")
COMPANIES = "ticker,cik,name,sector,industry\nZQAA,1,Alpha (synthetic),Tech,Chips\n"
COMPANIES += "ZQBB,2,Beta (synthetic),Tech,Software\nZQCC,3,Gamma (synthetic),Energy,Oil\n"
DECISION = dt.datetime(2020, 5, 1, 16, 0, tzinfo=NY)
PEER_WORDS = [
    "cloud sales double in Asia",
    "new CFO joins from a rival",
    "buyback of shares approved",
    "software margins widen",
    "data center orders climb",
    "licensing deal with a carmaker",
    "patent suit settled",
    "dividend lifted by a tenth",
    "factory in Texas opens",
    "subscription churn falls",
]
ANCHOR_TEXT = "Alpha raises guidance on strong chip demand and record quarterly revenue"


def _news(symbol: str, when: str, title: str, text: str, url: str) -> dict:
    return {
        "symbol": symbol,
        "publishedDate": when,
        "title": title,
        "site": "wire",
        "text": text,
        "url": url,
    }


def _items(later: bool = False) -> list[dict]:
    items = [
        _news(
            "ZQAA", "2020-05-01 08:00:00", "Alpha raises guidance", ANCHOR_TEXT, "https://x/anchor"
        ),
        # the same URL again under another ticker: a copy of the anchor
        _news("ZQBB", "2020-04-30 09:00:00", "Beta mention", "Beta and Alpha", "https://x/anchor"),
        # the anchor's exact title
        _news("ZQAA", "2020-04-29 10:00:00", "Alpha raises guidance", "old copy", "https://x/t"),
        # a near-duplicate rewrite of the anchor (one word added)
        _news(
            "ZQAA",
            "2020-04-30 11:00:00",
            "Alpha raises guidance, update",
            ANCHOR_TEXT + " update",
            "https://x/near",
        ),
        _news(
            "ZQAA",
            "2020-05-01 16:00:00",
            "At the bell",
            "Alpha guidance at the close",
            "https://x/bell",
        ),  # available exactly at the decision: not eligible
        _news("ZQCC", "2020-04-28 10:00:00", "Gamma drills", "Gamma guidance oil", "https://x/g"),
        _news("ZQAA", "2019-01-02 10:00:00", "Ancient", "Alpha guidance 2019", "https://x/old"),
    ]
    for i in range(12):  # company items, some sharing the anchor's words
        words = "raises guidance revenue" if i % 3 == 0 else "opens a plant in Ohio"
        items.append(
            _news(
                "ZQAA",
                f"2020-04-{10 + i:02d} 12:00:00",
                f"Alpha item {i}",
                f"Alpha {words} number {i}",
                f"https://x/a{i}",
            )
        )
    for i in range(10):  # same-sector peer items
        items.append(
            _news(
                "ZQBB",
                f"2020-04-{10 + i:02d} 13:00:00",
                f"Beta item {i}",
                f"Beta says Alpha raises guidance: {PEER_WORDS[i]}",
                f"https://x/b{i}",
            )
        )
    if later:  # everything after the decision: must change nothing
        for i in range(5):
            items.append(
                _news(
                    "ZQAA",
                    f"2020-05-0{2 + i} 10:00:00",
                    f"Later {i}",
                    ANCHOR_TEXT + f" later {i}",
                    f"https://x/later{i}",
                )
            )
    return items


def _store(tmp_path: Path, *, later: bool = False) -> BaseStore:
    store = open_store(None)
    (tmp_path / "companies.csv").write_text(COMPANIES)
    news = tmp_path / f"news{int(later)}.jsonl"
    news.write_text("".join(json.dumps(i) + "\n" for i in _items(later)))
    options = IngestOptions(graphs=store.graphs)
    ingest(store, "companies", loader("companies"), [tmp_path / "companies.csv"], options)
    ingest(store, "news", loader("news"), [news], options)
    return store


def _pool(store: BaseStore, spec: PoolSpec | None = None):
    anchor = mint("news", "ZQAA", "https://x/anchor")
    return build_pool(
        store,
        anchor=anchor,
        company=mint("company", "ZQAA"),
        decision_time=DECISION,
        query="Alpha raises guidance",
        texts=LiveTexts(store),
        vectors=LiveVectors(store, HashEmbedder(dim=64)),
        spec=spec,
    )


def test_only_eligible_evidence_enters_the_pool(tmp_path: Path) -> None:
    store = _store(tmp_path)
    pool = _pool(store, PoolSpec(size=50, peer_share=1.0))
    iris = {c.evidence.value for c in pool.candidates}
    assert all(c.available_at < DECISION for c in pool.candidates)
    assert mint("news", "ZQAA", "https://x/anchor").value not in iris  # the anchor
    assert mint("news", "ZQBB", "https://x/anchor").value not in iris  # its URL
    assert mint("news", "ZQAA", "https://x/t").value not in iris  # its title
    assert mint("news", "ZQAA", "https://x/near").value not in iris  # its near-duplicate
    assert mint("news", "ZQAA", "https://x/bell").value not in iris  # at the decision
    assert mint("news", "ZQCC", "https://x/g").value not in iris  # another sector
    assert mint("news", "ZQAA", "https://x/old").value not in iris  # beyond the lookback
    assert pool.removed["near-duplicate of the anchor"] == 1
    assert len(pool.candidates) == 12 + 10
    assert {c.family for c in pool.candidates} == {FKG.News}


def test_peers_take_at_most_a_fifth_and_the_best_come_first(tmp_path: Path) -> None:
    store = _store(tmp_path)
    pool = _pool(store, PoolSpec(size=10))
    assert len(pool.candidates) == 10
    assert sum(c.peer for c in pool.candidates) == 2  # 20 % of M0 = 10
    assert pool.removed["peer cap"] > 0
    relevance = [c.relevance for c in pool.candidates]
    assert relevance == sorted(relevance, reverse=True)
    assert 0 <= min(relevance) and max(relevance) <= 1  # min-max with equal weights
    texts = node_texts(store, [c.evidence for c in pool.candidates])
    own = [texts[c.evidence] for c in pool.candidates if not c.peer]
    assert all("raises guidance" in t for t in own[:4])  # the four that share the query


def test_a_pool_without_a_peer_slot_reads_the_company_alone(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with_peers = _pool(store, PoolSpec(size=50, peer_share=1.0))
    alone = _pool(store, PoolSpec(size=50, peer_share=0.0))
    assert any(c.peer for c in with_peers.candidates)
    assert not any(c.peer for c in alone.candidates) and alone.candidates
    assert alone.removed["peer cap"] == 0  # no peer was read to be capped
    peers = sum(c.peer for c in with_peers.candidates)
    assert alone.eligible == with_peers.eligible - peers
    assert {c.evidence for c in alone.candidates} == {
        c.evidence for c in with_peers.candidates if not c.peer
    }


def test_rrf_fusion_is_selectable(tmp_path: Path) -> None:
    pool = _pool(_store(tmp_path), PoolSpec(size=10, fusion="rrf"))
    assert all(c.relevance <= 2 / 61 + 1e-12 for c in pool.candidates)
    with pytest.raises(InputError, match="fusion"):
        PoolSpec(fusion="sum")  # type: ignore[arg-type]


def test_later_evidence_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    early = _pool(_store(tmp_path / "a"))
    full = _pool(_store(tmp_path / "b", later=True))
    assert early == full


def test_a_naive_decision_time_is_refused(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with pytest.raises(InputError, match="zone"):
        build_pool(
            store,
            anchor=mint("news", "ZQAA", "https://x/anchor"),
            company=mint("company", "ZQAA"),
            decision_time=DECISION.replace(tzinfo=None),
            query="x",
            texts=LiveTexts(store),
            vectors=LiveVectors(store, HashEmbedder()),
        )


def test_the_anchor_cluster_follows_chains_of_near_duplicates() -> None:
    import numpy as np

    anchor = np.array([1.0, 0.0, 0.0])
    a = np.array([0.95, np.sqrt(1 - 0.95**2), 0.0])  # near the anchor
    b = np.array([0.81, 0.59, 0.0]) / np.linalg.norm([0.81, 0.59, 0.0])  # near a, not the anchor
    c = np.array([0.0, 0.0, 1.0])
    assert anchor @ b < 0.9 <= a @ b
    assert anchor_cluster(anchor, np.stack([a, b, c]), 0.9) == {0, 1}


def test_a_filing_the_anchor_paraphrases_stays_in_the_pool(tmp_path: Path) -> None:
    """Regression: the 8-K a news item reports was dropped as the anchor's near-duplicate."""
    from pyoxigraph import Literal

    from finkg.kg.ingest import common

    store = _store(tmp_path)
    passage = mint("passage", "0001-20-000001", "1")
    q = common.Quads(store.graphs.filings)
    q.node(
        passage,
        (FKG.sourceFamily, FKG.SecFiling),
        (FKG.about, mint("company", "ZQAA")),
        (FKG.availableAt, common.datetime(DECISION - dt.timedelta(hours=9))),
        (FKG.text, Literal(ANCHOR_TEXT)),  # word for word what the news anchor says
    )
    store.write(add=q.items, note="a filing passage")
    pool = _pool(store, PoolSpec(size=50, peer_share=1.0))
    iris = {c.evidence for c in pool.candidates}
    assert passage in iris
    assert mint("news", "ZQAA", "https://x/near") not in iris  # the news rewrite still goes


def test_a_near_duplicate_group_keeps_its_newest_member_at_its_best_score() -> None:
    """Regression: this quarter's templated 8-K passage was collapsed into last quarter's
    (the copy that happened to score higher), or left out when only the old one made the
    window, so the reader saw stale guidance."""
    import numpy as np

    from finkg.retrieval.pools import _near_duplicate_groups

    t = [dt.datetime(2019, 1, d, 16, tzinfo=dt.UTC) for d in (1, 2, 3, 4)]
    old, new = np.array([1.0, 0.0, 0.0]), np.array([0.99, np.sqrt(1 - 0.99**2), 0.0])
    other = np.array([0.0, 0.0, 1.0])
    vecs = np.stack([old, other, new, other])
    families = [FKG.SecFiling, FKG.SecFiling, FKG.SecFiling, FKG.News]
    # rows 0 (old) and 1 make the window; row 2 (new, a near-copy of 0) does not; row 3 is
    # as close to row 1 as can be, but of another family
    groups = _near_duplicate_groups([0, 1], vecs, families, t, 0.9)
    assert groups == [(0, 2, 2), (1, 1, 1)]


def test_news_of_every_publisher_family_is_drawn_under_the_default_families(
    tmp_path: Path,
) -> None:
    """News split by publisher (finkg's extension): PoolSpec's default News + SecFiling
    still draws press releases, analysis and news reports, and the anchor's near-duplicate
    from another publisher is still its copy."""
    sites = ["businesswire.com", "fool.com", "reuters.com", "wire"]
    items = _items()
    for i, item in enumerate(items):
        item["site"] = sites[i % len(sites)]
    assert (items[0]["site"], items[3]["site"]) == ("businesswire.com", "wire")  # anchor, near
    items[3]["site"] = "www.reuters.com"
    store = open_store(None)
    (tmp_path / "companies.csv").write_text(COMPANIES)
    (tmp_path / "news.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    options = IngestOptions(graphs=store.graphs)
    ingest(store, "companies", loader("companies"), [tmp_path / "companies.csv"], options)
    ingest(store, "news", loader("news"), [tmp_path / "news.jsonl"], options)
    pool = _pool(store, PoolSpec(size=50, peer_share=1.0))
    assert {c.family for c in pool.candidates} == {
        FKG.PressRelease,
        FKG.Analysis,
        FKG.NewsReport,
        FKG.News,
    }
    assert len(pool.candidates) == 12 + 10  # as with one publisher
    assert mint("news", "ZQAA", "https://x/near") not in {c.evidence for c in pool.candidates}
    assert pool.removed["near-duplicate of the anchor"] == 1
    releases = _pool(store, PoolSpec(size=50, peer_share=1.0, families=(FKG.PressRelease,)))
    assert {c.family for c in releases.candidates} == {FKG.PressRelease}
    assert {c.evidence for c in releases.candidates} < {c.evidence for c in pool.candidates}
