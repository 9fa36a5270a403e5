"""`finkg serve` under load: concurrent read queries from a bounded loopback client while an
ingest writes through the same server.

The store starts with no news. A writer ingests generated news files of BATCH items
through the server (`--store http://...`; each file one commit, one SPARQL Update, so one
transaction) until the time is up. WORKERS reader threads send queries for SECONDS,
three point queries (`evidence_before` of a company, packaged) for each batch check.
The batch check is one query, so one snapshot: every ingest commit it sees must link
exactly BATCH source documents, and the news articles must number BATCH per commit; a
commit seen without all its articles, or articles without their commit, is a half batch.

    python -m benchmarks.serve_load [--workers 8] [--seconds 60]

Prints and returns queries/s, p50/p99 latency, errors, half batches seen, the batches the
writer committed and how many distinct store states the readers saw. (Called by
benchmarks/reliability.py; tests/test_serve.py runs it briefly.)
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from finkg import queries
from finkg.config import Settings
from finkg.kg.graphs import Graphs
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.serve import server_command
from finkg.kg.setup import init_store
from finkg.kg.store import open_store

BATCH = 500  # news items per ingested file: one commit (below the ingest's WRITE_BATCH)
TICKERS = ("ZQAW", "ZQIB", "ZQMX")
NS = "https://w3id.org/finkg/ns#"
CHECK = f"""
PREFIX fkg: <{NS}>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT ?articles ?commit (COUNT(?doc) AS ?docs) WHERE {{
  {{ SELECT (COUNT(?a) AS ?articles) WHERE {{ GRAPH ?n {{ ?a a fkg:NewsArticle }} }} }}
  OPTIONAL {{
    GRAPH ?audit {{ ?commit a fkg:Commit ; rdfs:label ?label }}
    FILTER(STRSTARTS(?label, "ingest news"))
    OPTIONAL {{ GRAPH ?g {{ ?doc prov:wasGeneratedBy ?commit }} }}
  }}
}} GROUP BY ?articles ?commit
"""


@dataclass
class LoadResult:
    workers: int
    seconds: float
    bare: bool = False
    queries: int = 0
    errors: int = 0
    half_batches: int = 0
    checks: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    batches_written: int = 0
    states_seen: int = 0
    error_samples: list[str] = field(default_factory=list)

    @property
    def qps(self) -> float:
        return self.queries / self.seconds if self.seconds else 0.0

    def percentile(self, p: float) -> float:
        if not self.latencies_ms:
            return float("nan")
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]

    def summary(self) -> dict[str, object]:
        return {
            "server": "oxigraph (bare)" if self.bare else "finkg serve (front + oxigraph)",
            "workers": self.workers,
            "seconds": round(self.seconds, 1),
            "queries": self.queries,
            "queries_per_s": round(self.qps, 1),
            "p50_ms": round(self.percentile(50), 1),
            "p99_ms": round(self.percentile(99), 1),
            "mean_ms": round(statistics.fmean(self.latencies_ms), 1) if self.latencies_ms else None,
            "errors": self.errors,
            "batch_checks": self.checks,
            "half_batches": self.half_batches,
            "batches_written": self.batches_written,
            "store_states_seen": self.states_seen,
        }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _news(path: Path, first: int) -> None:
    with path.open("w") as f:
        for i in range(first, first + BATCH):
            record = {
                "symbol": TICKERS[i % len(TICKERS)],
                "publishedDate": f"2019-{1 + i // 28 % 12:02d}-{1 + i % 28:02d} "
                f"{10 + i % 6}:{i % 60:02d}:00",
                "title": f"Load item {i}",
                "site": "wire",
                "text": f"Load test item {i}. " + "words " * 30,
                "url": f"https://example.org/load/{i}",
            }
            f.write(json.dumps(record) + "\n")


def _start(location: Path, *, bare: bool = False) -> tuple[subprocess.Popen, str]:
    """`finkg serve --read-write` over the store (the bare Oxigraph server with `bare`)."""
    port = _free_port()
    bind = f"127.0.0.1:{port}"
    finkg = [sys.executable, "-m", "finkg.cli", "serve", "--read-write", "--store"]
    command = (
        server_command(location, bind=bind, read_write=True)
        if bare
        else [*finkg, str(location), "--bind", bind]
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"oxigraph server exited: {proc.stderr.read().decode()}")  # type: ignore[union-attr]
        try:
            urllib.request.urlopen(url + "/query?query=ASK%7B%7D", timeout=1)
            return proc, url
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("oxigraph server did not answer within 60 s") from None
            time.sleep(0.1)


def _ask(url: str, query: str) -> dict:
    request = urllib.request.Request(
        url + "/query",
        data=urllib.parse.urlencode({"query": query}).encode(),
        headers={"Accept": "application/sparql-results+json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def _half(rows: list[dict]) -> bool:
    """Whether one snapshot of the batch check shows a half-written batch."""
    articles = int(rows[0]["articles"]["value"]) if rows else 0
    commits = [int(r["docs"]["value"]) for r in rows if "commit" in r]
    return any(docs != BATCH for docs in commits) or articles != BATCH * len(commits)


def run_load(
    location: Path,
    *,
    workers: int = 8,
    seconds: float = 60.0,
    home: Path | None = None,
    bare: bool = False,
) -> LoadResult:
    """Serve the store at `location`, read it with `workers` threads for `seconds` while a
    writer ingests news through the server; see the module docstring."""
    settings = Settings(home=home or location.parent / "home")
    with open_store(location, settings=settings) as store:
        init_store(store)
    proc, url = _start(location, bare=bare)
    result = LoadResult(workers=workers, seconds=seconds, bare=bare)
    lock = threading.Lock()
    stop = threading.Event()
    states: set[int] = set()
    point = [
        queries.prepare(
            queries.load("evidence_before"),
            {
                "company": f"https://w3id.org/finkg/id/company/{t}",
                "before": "2019-07-01T16:00:00-04:00",
            },
            graphs=Graphs(),
        )
        for t in TICKERS
    ]

    def writer(folder: Path) -> None:
        remote = open_store(url, settings=settings)
        first = 0
        while not stop.is_set():
            path = folder / f"news-{first}.jsonl"
            _news(path, first)
            report = ingest(
                remote, "news", loader("news"), [path], IngestOptions(graphs=remote.graphs)
            )
            with lock:
                result.batches_written += len(report.commits)
            first += BATCH

    def reader(k: int) -> None:
        i = k
        while not stop.is_set():
            check = i % 4 == 0
            started = time.perf_counter()
            try:
                data = _ask(url, CHECK if check else point[i % len(point)])
                rows = data["results"]["bindings"]
                half = check and _half(rows)
            except Exception as e:  # every failure is counted, not raised
                with lock:
                    result.errors += 1
                    if len(result.error_samples) < 5:
                        result.error_samples.append(f"{type(e).__name__}: {e}")
            else:
                elapsed = (time.perf_counter() - started) * 1000
                with lock:
                    result.queries += 1
                    result.latencies_ms.append(elapsed)
                    if check:
                        result.checks += 1
                        result.half_batches += half
                        states.add(sum(1 for r in rows if "commit" in r))
            i += 1

    with tempfile.TemporaryDirectory() as tmp:
        write = threading.Thread(target=writer, args=(Path(tmp),), daemon=True)
        read = [threading.Thread(target=reader, args=(k,), daemon=True) for k in range(workers)]
        begun = time.perf_counter()
        write.start()
        for t in read:
            t.start()
        time.sleep(seconds)
        stop.set()
        for t in read:
            t.join(timeout=60)
        result.seconds = time.perf_counter() - begun
        write.join(timeout=300)
    proc.terminate()
    proc.wait(timeout=30)
    result.states_seen = len(states)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument(
        "--bare", action="store_true", help="the bare Oxigraph server, without finkg's front"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = run_load(
            Path(tmp) / "store", workers=args.workers, seconds=args.seconds, bare=args.bare
        )
    print(json.dumps(result.summary(), indent=2))
    for sample in result.error_samples:
        print("error:", sample)


if __name__ == "__main__":
    main()
