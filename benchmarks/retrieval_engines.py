"""`retrieval.py --engines`: the point-in-time pool query and the one-hop CONSTRUCT on two
SPARQL engines, Oxigraph and Virtuoso 7, over the same store.

Every finkg graph of the store is copied into a fresh Oxigraph server (`oxigraph serve`,
on disk in a temporary folder) and into the Virtuoso server at `--virtuoso` through finkg's
own Graph Store Protocol load (`RemoteStore.load`, `--chunk` triples a request): triples
loaded per second. Then, for the same sampled news anchors, each engine answers

- `pool_candidates.rq` with the values `retrieval.pools.eligible_rows` binds (the
  company and its sector peers, news and filing evidence in the 365 days before the
  decision time), and
- `one_hop.rq` on the anchor's news node and its company (a company is the object of
  every bar, summary and window about it: the large side of the paper-004 subgraph),

timed per call (p50, p95; ten anchors first to warm connections and caches), the embedded
store as the reference; the answers are compared (`queries.results.comparable`: literals
by value) and the report says for how many anchors they are the same.

Virtuoso is started by `scripts/with-virtuoso-server`, which exports its URLs:

    scripts/with-virtuoso-server sh -c 'python -m benchmarks.retrieval --engines \\
        --store DIR --virtuoso "$FINKG_TEST_VIRTUOSO" --virtuoso-gsp "$FINKG_TEST_VIRTUOSO_GSP"'
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyoxigraph as ox
from pyoxigraph import Triple

from finkg import queries
from finkg.config import Settings
from finkg.kg.store import BaseStore, open_store
from finkg.kg.store.remote import RemoteStore
from finkg.queries.results import comparable
from finkg.retrieval.pools import PoolSpec, pool_bindings
from finkg.tasks.impact.anchors import Anchor

SECTION = "## The pool query and the one-hop CONSTRUCT on two engines"


def ms(seconds: list[float]) -> tuple[float, float]:
    """p50 and p95 of `seconds`, in milliseconds."""
    values = sorted(1000 * s for s in seconds)
    return statistics.median(values), values[min(len(values) - 1, int(0.95 * len(values)))]


def copy_store(source: BaseStore, target: BaseStore, *, chunk: int) -> tuple[int, float]:
    """Every finkg graph of `source` into `target`, `chunk` triples a Graph Store request;
    (triples, seconds spent in the loads: serializing the chunks here is not counted)."""
    total, seconds = 0, 0.0

    def send(graph: ox.NamedNode, batch: list[Triple]) -> None:
        nonlocal total, seconds
        data = ox.serialize(batch, format=ox.RdfFormat.N_TRIPLES)
        started = time.perf_counter()
        target.load(data, format=ox.RdfFormat.N_TRIPLES, graph=graph, note="engines benchmark")
        seconds += time.perf_counter() - started
        total += len(batch)

    graphs = source.named_graphs()
    for graph in graphs:
        batch: list[Triple] = []
        for q in source.quads(graph):
            batch.append(Triple(q.subject, q.predicate, q.object))
            if len(batch) == chunk:
                send(graph, batch)
                batch = []
        if batch:
            send(graph, batch)
    print(f"  {total:,} triples in {len(graphs)} graphs, {seconds:.1f} s", flush=True)
    return total, seconds


def time_engine(
    store: BaseStore, chosen: list[Anchor], spec: PoolSpec, *, hop: bool = True
) -> dict:
    """Per anchor: the pool query and (with `hop`) the one-hop CONSTRUCT, timed, with their
    answers."""
    g = store.graphs
    dataset = [g.news, g.filings, g.documents, g.market]
    out: dict[str, list] = {"pool": [], "hop": [], "pool_rows": [], "hop_triples": []}
    for warm, anchors in ((True, chosen[:10]), (False, chosen)):
        for a in anchors:
            started = time.perf_counter()
            bindings = pool_bindings(store, a.news, a.company, a.decision_time, spec)
            rows = queries.run(store, "pool_candidates", bindings, default_graphs=dataset)
            pooled = time.perf_counter() - started
            if hop:
                started = time.perf_counter()
                triples = queries.run(store, "one_hop", {"node": [a.news, a.company]}, bound=0)
                hopped = time.perf_counter() - started
            if warm:
                continue
            out["pool"].append(pooled)
            out["pool_rows"].append(Counter(tuple(comparable(t) for t in r) for r in rows.rows))  # type: ignore[union-attr]
            if hop:
                out["hop"].append(hopped)
                out["hop_triples"].append(Counter(comparable(t) for t in triples))  # type: ignore[union-attr]
    return out


@contextmanager
def oxigraph_server(folder: Path) -> Iterator[str]:
    """A read-write Oxigraph server on disk in `folder`, on a free loopback port."""
    oxigraph = shutil.which("oxigraph") or str(Path(sys.executable).parent / "oxigraph")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [oxigraph, "serve", "--location", str(folder), "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"{url}/query?query=ASK%7B%7D", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait()


def _version(store: RemoteStore) -> str:
    try:
        with urllib.request.urlopen(store.query_url + "?query=ASK%7B%7D", timeout=10) as r:
            return r.headers.get("server", "").split()[0] if r.headers.get("server") else "?"
    except OSError:
        return "?"


def run_engines(args, chosen: list[Anchor], found: int, settings: Settings) -> str:
    """Copy, time and compare; the report section."""
    spec = PoolSpec()
    results, loads, names = {}, {}, {}
    with open_store(args.store, settings=settings, read_only=True) as store:
        print(f"embedded: timing {len(chosen)} anchors", flush=True)
        results["embedded"] = time_engine(store, chosen, spec)
        names["embedded"] = f"embedded (pyoxigraph {ox.__version__})"
        folder = Path(tempfile.mkdtemp(prefix="finkg-engines-"))
        try:
            with oxigraph_server(folder) as url:
                remote = open_store(url, settings=settings)
                print(f"oxigraph server: loading through {remote.gsp_url}", flush=True)
                loads["oxigraph"] = copy_store(store, remote, chunk=args.chunk)
                names["oxigraph"] = f"Oxigraph server ({_version(remote)}, HTTP)"
                results["oxigraph"] = time_engine(remote, chosen, spec)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        if args.virtuoso:
            virtuoso = open_store(args.virtuoso, settings=settings.with_(gsp_url=args.virtuoso_gsp))
            print(f"virtuoso: loading through {virtuoso.gsp_url}", flush=True)
            loads["virtuoso"] = copy_store(store, virtuoso, chunk=args.chunk)
            names["virtuoso"] = f"Virtuoso ({_version(virtuoso)}, HTTP)"
            results["virtuoso"] = time_engine(virtuoso, chosen, spec)
        triples = sum(1 for g in store.named_graphs() for _ in store.quads(g))
    return report(args, results, loads, names, triples, len(chosen), found)


def report(args, results: dict, loads: dict, names: dict, triples: int, n: int, found: int) -> str:
    ref = results["embedded"]
    note = f" ({args.store_note})" if args.store_note else ""
    buffers = os.environ.get("VIRTUOSO_BUFFERS", "10000")
    lines = [
        SECTION,
        "",
        f"Store `{args.store}`{note}: {triples:,} triples in finkg's graphs, copied into each "
        f"server through finkg's Graph Store load ({args.chunk:,} triples a request, the data "
        f"parsed and checked by finkg first, as `RemoteStore.load` does); {n} of {found} news "
        f"anchors published {args.start} to {args.end}, evenly spaced, the first ten run once "
        "more before, untimed, to warm up. Pool: `pool_candidates.rq` as `eligible_rows` binds "
        "it; one hop: `one_hop.rq` on the anchor's news node and its company, unbounded. The "
        "engines ran one after another on the same machine (2 cores; load average "
        f"{args.load_average:.1f} when the run started: other work shared the cores); "
        f"Virtuoso as `scripts/with-virtuoso-server` sets it up, {buffers} page buffers.",
        "",
        "| engine | loaded triples/s | pool p50 ms | pool p95 ms | one-hop p50 ms | "
        "one-hop p95 ms | one-hop triples (median) | same answers as embedded |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for key, r in results.items():
        pool, hop = ms(r["pool"]), ms(r["hop"])
        size = statistics.median(sum(c.values()) for c in r["hop_triples"])
        if key in loads:
            count, seconds = loads[key]
            rate = f"{count / seconds:,.0f} ({count:,} in {seconds:.1f} s)"
            same_pool = sum(a == b for a, b in zip(r["pool_rows"], ref["pool_rows"], strict=True))
            same_hop = sum(
                a == b for a, b in zip(r["hop_triples"], ref["hop_triples"], strict=True)
            )
            same = f"pool {same_pool}/{n}, one hop {same_hop}/{n}"
        else:
            rate, same = "(reference; on disk)", "—"
        lines.append(
            f"| {names[key]} | {rate} | {pool[0]:.1f} | {pool[1]:.1f} | {hop[0]:.1f} | "
            f"{hop[1]:.1f} | {size:,.0f} | {same} |"
        )
    if "virtuoso" not in results:
        lines += [
            "",
            "Virtuoso was not given (--virtuoso): run under scripts/with-virtuoso-server.",
        ]
    lines.append("")
    return "\n".join(lines)


def write_section(path: Path, section: str) -> None:
    """Put `section` in the report at `path`, replacing an earlier one of the same title."""
    text = path.read_text() if path.exists() else "# Retrieval benchmark\n"
    pattern = re.compile(re.escape(SECTION) + r".*?(?=\n## |\Z)", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: section.rstrip("\n"), text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text.rstrip("\n") + "\n")
