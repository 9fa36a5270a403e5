"""Crash safety: SIGKILL an ingest in the middle of a write; the store opens, every batch
in it is whole, and running the ingest again completes it without duplicates."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from finkg.config import Settings
from finkg.kg.store import open_store

ITEMS, BATCH = 6_000, 500

CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    import finkg.kg.ingest.core as core
    from finkg.config import Settings
    from finkg.kg.ingest import IngestOptions, ingest, loader
    from finkg.kg.store import open_store

    core.WRITE_BATCH = int(sys.argv[3])
    store = open_store(sys.argv[1], settings=Settings(home=Path(sys.argv[1]).parent))
    write = store.write_nquads

    def announced(data, **kw):
        print("write", flush=True)
        return write(data, **kw)

    store.write_nquads = announced
    ingest(store, "news", loader("news"), [Path(sys.argv[2])],
           IngestOptions(graphs=store.graphs))
    print("done", flush=True)
    """
)


def _news(path: Path) -> None:
    with path.open("w") as f:
        for i in range(ITEMS):
            f.write(
                json.dumps(
                    {
                        "symbol": "ZQAW",
                        "publishedDate": f"2019-03-{1 + i % 28:02d} 10:{i % 60:02d}:00",
                        "title": f"Item {i}",
                        "site": "wire",
                        "text": "x " * 40,
                        "url": f"https://example.org/{i}",
                    }
                )
                + "\n"
            )


def _run(store: Path, news: Path, *, kill_at: int | None) -> int:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(store), str(news), str(BATCH)],
        stdout=subprocess.PIPE,
        text=True,
    )
    writes = 0
    assert child.stdout is not None
    for line in child.stdout:
        if line.strip() == "write":
            writes += 1
            if kill_at is not None and writes == kill_at:
                os.kill(child.pid, signal.SIGKILL)  # inside (or right at) the third write
                break
    child.wait(timeout=120)
    return child.returncode


def _batches(location: Path) -> list[tuple[int, int]]:
    """(quads the commit says it wrote, source documents linked to it) for every commit."""
    with open_store(location, settings=Settings(home=location.parent), read_only=True) as s:
        rows = s.select(
            "SELECT ?commit ?count (COUNT(?doc) AS ?docs) WHERE { "
            "GRAPH ?a { ?commit <https://w3id.org/finkg/ns#quadCount> ?count } "
            "OPTIONAL { GRAPH ?g { ?doc <http://www.w3.org/ns/prov#wasGeneratedBy> ?commit } } } "
            "GROUP BY ?commit ?count"
        )
        return [(int(r["count"].value), int(r["docs"].value)) for r in rows]  # type: ignore[union-attr]


def _articles(location: Path) -> int:
    with open_store(location, settings=Settings(home=location.parent), read_only=True) as s:
        rows = s.select(
            "SELECT (COUNT(?n) AS ?c) WHERE { GRAPH ?g { "
            "?n a <https://w3id.org/finkg/ns#NewsArticle> } }"
        )
        return int(rows.rows[0][0].value)  # type: ignore[union-attr]


def test_sigkill_mid_ingest_leaves_whole_batches_and_resumes(tmp_path: Path) -> None:
    news, location = tmp_path / "news.jsonl", tmp_path / "store"
    _news(news)
    assert _run(location, news, kill_at=3) == -signal.SIGKILL
    batches = _batches(location)
    assert 2 <= len(batches) <= 3  # the third write landed whole or not at all
    # every committed batch is whole: its BATCH source documents and its quads are all there
    assert all(docs == BATCH for _, docs in batches)
    assert _articles(location) == BATCH * len(batches)
    assert _run(location, news, kill_at=None) == 0
    assert _articles(location) == ITEMS  # resumed: the rest written, nothing twice
    assert sum(docs for _, docs in _batches(location)) == ITEMS
