"""Scale benchmark (issue 43): what each cost does as the store grows to 50× its unit.

The store grows one unit at a time (`benchmarks/scale_unit.py`: the demo world plus a
period of real news, about 1.1M triples and 12,600 passages; replica r under new tickers,
CIKs, ISINs and customer IDs). Every replica goes through finkg's own ingest (the demo's
loaders in its order, the research documents through the lifecycle, then the real news), so
the ingest curve has one point per unit. Beside it a second store, `raw`, grows by the same
quads loaded with pyoxigraph's bulk loader: the quads finkg wrote for replica 0, with their
instance IRIs moved under `id/r<r>/` (graphs kept), one file per replica.

At each size in `--sizes` (units), once RocksDB has settled:
- the store's triples and its size on disk, the peak RSS of that replica's ingest;
- the pool query (`pool_candidates.rq` as `eligible_rows` binds it), `one_hop.rq` on the
  anchor's news node and its company, and `evidence_before.rq` for its company, p50/p95 over
  `--anchors` news anchors of replica 0's real news in `--anchor-from`..`--to` (the same
  anchors at every size, chosen at the first; ten more, untimed, first), with their answers
  compared with the first size's;
- BM25 and vector indexes built from empty over every passage, query p50 over
  `--index-queries` headlines, HNSW's recall@20 against exact search where finkg uses HNSW
  (`scale_indexes.py`: the vectors are word hashes, not MiniLM, and say so);
- `validate` (the store against finkg's shapes), up to `--validate-max` units.

After the largest size the same pool query runs on an Oxigraph server over the same store
folder (`oxigraph serve`, loopback HTTP) and, with `--virtuoso`, on Virtuoso after a Graph
Store copy. The report (`--report`, Markdown, JSON beside it, a log-log PNG) gives each cost
at each size and its slope against the triples (cost ∝ size^slope: 0 flat, 1 linear).

    python -m benchmarks.scale [--data ../shared/data] [--sizes 1,10,50] [--work DIR]

A 50× run needs about 40 GB of disk under `--work` and runs for about 1.5 hours on 2 cores.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyoxigraph as ox

from benchmarks import scale_indexes, scale_report
from benchmarks.harness import data_option, report_option
from benchmarks.ingest import _settle
from benchmarks.retrieval import sample
from benchmarks.retrieval_engines import oxigraph_server, time_engine
from finkg import queries
from finkg.config import Settings
from finkg.demo.run import SOURCES
from finkg.errors import InputError
from finkg.kg.calendar import get_calendar
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.ingest.documents import ingest_documents
from finkg.kg.setup import init_store
from finkg.kg.store import BaseStore, open_store
from finkg.retrieval.pools import PoolSpec
from finkg.shapes.validate import validate_store
from finkg.tasks.impact.anchors import Anchor, anchors

from .scale_unit import MAX_REPLICAS, Unit, news_symbol


@dataclass
class Replica:
    """One unit's ingest into each store."""

    replica: int
    records: int
    quads: int  # what finkg's batch loaders wrote (the documents' few hundred not counted)
    seconds: float
    peak_rss_mb: float
    rss_before_mb: float  # when the ingest began (what earlier work left in the process)
    raw_quads: int
    raw_seconds: float
    kinds: dict[str, float] = field(default_factory=dict)  # seconds per kind


@dataclass
class Size:
    units: int
    triples: int
    raw_triples: int
    store_mb: float
    raw_mb: float
    ingest: Replica
    pool_ms: tuple[float, float]
    one_hop_ms: tuple[float, float]
    evidence_ms: tuple[float, float]
    groups: dict[str, Group]
    anchors: int
    index: scale_indexes.IndexFigures
    validate_s: float | None
    conforms: bool | None


def _ms(seconds: list[float]) -> tuple[float, float]:
    values = sorted(1000 * s for s in seconds)
    return statistics.median(values), values[min(len(values) - 1, int(0.95 * len(values)))]


def _peak_rss_reset() -> None:
    """Reset this process's peak RSS (VmHWM) where Linux allows it."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def _rss_mb(field: str = "VmHWM") -> float:
    """This process's peak (VmHWM) or current (VmRSS) resident memory, MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _folder_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def _count(path: Path) -> int:
    return len(ox.Store.read_only(str(path)))


def ingest_replica(store: BaseStore, folder: Path, say: Callable[[str], None]) -> Replica:
    """Replica `folder` through finkg's loaders, timed (settling is not)."""
    kinds, records, quads = {}, 0, 0
    options = IngestOptions(graphs=store.graphs)
    _peak_rss_reset()
    before = _rss_mb("VmRSS")
    sources = [*SOURCES, ("news", ["real-news/news.jsonl"])]
    for kind, patterns in sources:
        paths = sorted(p for pattern in patterns for p in folder.glob(pattern))
        started = time.perf_counter()
        if kind == "documents":
            docs = ingest_documents(store, paths)
            records += docs.files
            if docs.rejects:
                say(f"  documents rejected: {docs.rejects[:3]}")
        else:
            report = ingest(store, kind, loader(kind), paths, options, skip_bad=True)
            records, quads = records + report.records, quads + report.quads
            if report.rejects:
                say(f"  {kind}: {len(report.rejects)} rejected, first {report.rejects[0]}")
        name = "real news" if patterns[0].startswith("real-news") else kind
        kinds[name] = kinds.get(name, 0.0) + time.perf_counter() - started
    seconds = sum(kinds.values())
    return Replica(0, records, quads, seconds, _rss_mb(), before, 0, 0.0, kinds)


def dump_unit(store: BaseStore, path: Path) -> int:
    """Every quad of the store but the ontology graph's, as N-Quads; their number."""
    ontology = store.graphs.ontology
    kept = [q for q in store.quads() if q.graph_name != ontology]
    path.write_bytes(ox.serialize(kept, format=ox.RdfFormat.N_QUADS) or b"")
    return len(kept)


def raw_load(raw: ox.Store, unit: bytes, replica: int, base: str, scratch: Path) -> float:
    """The unit's quads under `id/r<replica>/` into `raw` with pyoxigraph's bulk loader."""
    moved = unit.replace(f"<{base}".encode(), f"<{base}r{replica}/".encode())
    moved = moved.replace(f"<{base}r{replica}/graph/".encode(), f"<{base}graph/".encode())
    scratch.write_bytes(moved)
    started = time.perf_counter()
    raw.bulk_load(path=str(scratch), format=ox.RdfFormat.N_QUADS)
    raw.flush()
    return time.perf_counter() - started


def choose_anchors(store: BaseStore, unit: Unit, args) -> tuple[list[Anchor], list[str], int]:
    """Replica 0's anchors, half on its real news from `--anchor-from` (companies with news
    alone), half on its demo news of the whole period (companies with prices, filings and
    windows: a large one hop), ten more to warm up; and how many there were to choose from."""
    ny, calendar = get_calendar().tz, get_calendar()
    chosen, found = [], 0
    real = frozenset(news_symbol(r["symbol"], 0) for r in unit.news)
    halves = (
        (real, args.anchor_from, args.anchors // 2 + 5),
        (unit.tickers, args.start, args.anchors - args.anchors // 2 + 5),
    )
    for tickers, start, n in halves:
        group = anchors(
            store,
            start=dt.datetime.combine(start, dt.time(), ny),
            end=dt.datetime.combine(args.to + dt.timedelta(days=1), dt.time(), ny),
            calendar=calendar,
            tickers=tickers,
        )
        if len(group) < n:
            raise InputError(
                f"only {len(group)} news anchors fall in the period",
                field="--anchor-from",
                value=str(start),
                hint=f"an earlier start, or fewer --anchors than {args.anchors}",
            )
        chosen.append(sample(group, n))
        found += len(group)
    real_part, demo_part = chosen
    # the first ten (five of each) are the untimed warm-up
    labels = [GROUPS[0]] * (len(real_part) - 5) + [GROUPS[1]] * (len(demo_part) - 5)
    return real_part[:5] + demo_part[:5] + real_part[5:] + demo_part[5:], labels, found


GROUPS = ("real news (the company alone)", "demo news (the company and its sector peers)")


@dataclass
class Group:
    """One group of anchors' query figures at one size."""

    anchors: int
    pool_ms: tuple[float, float]  # p50, p95
    one_hop_ms: tuple[float, float]
    evidence_ms: tuple[float, float]
    pool_rows: float  # median
    one_hop_triples: float
    evidence_rows: float
    # anchors whose answer equals the first size's, per query
    same: dict[str, int] = field(default_factory=dict)


def time_queries(store: BaseStore, chosen: list[Anchor]) -> dict[str, list]:
    """Per timed anchor (`chosen[10:]`; the first ten run once before, untimed): the pool
    and the one hop (`time_engine`), then evidence_before; seconds and answers."""
    timed = time_engine(store, chosen, PoolSpec())
    n = len(chosen) - 10
    out = {
        "pool": timed["pool"][-n:],
        "hop": timed["hop"][-n:],
        "pool_rows": timed["pool_rows"][-n:],
        "hop_triples": timed["hop_triples"][-n:],
        "evidence": [],
        "evidence_rows": [],
    }
    for warm, group in ((True, chosen[:10]), (False, chosen[10:])):
        for a in group:
            started = time.perf_counter()
            rows = queries.select(
                store, "evidence_before", {"company": a.company, "before": a.decision_time}
            )
            if not warm:
                out["evidence"].append(time.perf_counter() - started)
                out["evidence_rows"].append(sorted(r.iri("evidence").value for r in rows))
    return out


ANSWERS = {"pool": "pool_rows", "one_hop": "hop_triples", "evidence_before": "evidence_rows"}


def groups(timed: dict, labels: list[str], first: dict | None) -> dict[str, Group]:
    """The figures of each group of anchors; answers compared with `first` (the first
    size's `timed`)."""
    out = {}
    ref = first or timed
    for name in GROUPS:
        idx = [i for i, label in enumerate(labels) if label == name]
        if not idx:
            continue

        def pick(key: str, idx: list[int] = idx) -> list:
            return [timed[key][i] for i in idx]

        out[name] = Group(
            anchors=len(idx),
            pool_ms=_ms(pick("pool")),
            one_hop_ms=_ms(pick("hop")),
            evidence_ms=_ms(pick("evidence")),
            pool_rows=statistics.median(sum(c.values()) for c in pick("pool_rows")),
            one_hop_triples=statistics.median(sum(c.values()) for c in pick("hop_triples")),
            evidence_rows=statistics.median(len(r) for r in pick("evidence_rows")),
            same={
                query: sum(timed[key][i] == ref[key][i] for i in idx)
                for query, key in ANSWERS.items()
            },
        )
    return out


def measure_size(
    args,
    store: BaseStore,
    work: Path,
    units: int,
    replica: Replica,
    chosen,
    labels,
    first,
    headlines,
) -> tuple[Size, dict]:
    say = _say
    say(f"{units}×: settled in {_settle():.1f} s; counting")
    store.flush()
    triples, raw_triples = _count(work / "store"), _count(work / "raw")
    say(f"{units}×: {triples:,} triples; timing queries on {len(chosen) - 10} anchors")
    timed = time_queries(store, chosen)
    say(f"{units}×: pool p50 {_ms(timed['pool'])[0]:.1f} ms; building indexes")
    index = scale_indexes.measure(store, headlines)
    say(
        f"{units}×: {index.passages:,} passages, BM25 {index.bm25_build_s:.0f} s, "
        f"vectors {index.vector_build_s:.0f} s"
    )
    size = Size(
        units=units,
        triples=triples,
        raw_triples=raw_triples,
        store_mb=_folder_mb(work / "store"),
        raw_mb=_folder_mb(work / "raw"),
        ingest=replica,
        pool_ms=_ms(timed["pool"]),
        one_hop_ms=_ms(timed["hop"]),
        evidence_ms=_ms(timed["evidence"]),
        groups=groups(timed, labels, first),
        anchors=len(chosen) - 10,
        index=index,
        validate_s=None,
        conforms=None,
    )
    return size, timed


def validate(store: BaseStore, size: Size) -> None:
    """`validate` timed (last at each size: the longest, and written down after the rest)."""
    _say(f"{size.units}×: validating")
    started = time.perf_counter()
    checked = validate_store(store)
    size.validate_s, size.conforms = time.perf_counter() - started, checked.conforms
    _say(f"{size.units}×: validate {size.validate_s:.0f} s, conforms {size.conforms}")


def servers(work: Path, chosen: list[Anchor], last: dict, settings: Settings) -> dict:
    """The pool query at the largest size on an Oxigraph server over the same store folder,
    its rows compared with the embedded store's at that size."""
    with oxigraph_server(work / "store") as url:
        remote = open_store(url, settings=settings)
        _say(f"Oxigraph server at {url}: timing {len(chosen) - 10} anchors")
        timed = time_engine(remote, chosen, PoolSpec())
    n = len(chosen) - 10
    rows = timed["pool_rows"][-n:]
    same = sum(a == b for a, b in zip(rows, last["pool_rows"], strict=True))
    return {"oxigraph": {"pool_ms": _ms(timed["pool"][-n:]), "same": same, "anchors": n}}


def _say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def _sizes(text: str) -> list[int]:
    try:
        sizes = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise InputError("sizes are whole numbers of units", field="--sizes", value=text) from None
    if not sizes or sizes[0] < 1 or sizes[-1] > MAX_REPLICAS:
        raise InputError(
            f"each size must be from 1 to {MAX_REPLICAS} units",
            field="--sizes",
            value=text,
            hint="for example 1,10,50",
        )
    return sizes


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.scale", description=__doc__.split("\n")[0]
    )
    data_option(p)
    report_option(p, "scale.md")
    p.add_argument("--sizes", type=_sizes, default=_sizes("1,10,50"), help="units [1,10,50]")
    p.add_argument("--from", dest="start", type=dt.date.fromisoformat, default=dt.date(2019, 1, 1))
    p.add_argument("--to", type=dt.date.fromisoformat, default=dt.date(2020, 12, 31))
    p.add_argument(
        "--anchor-from",
        type=dt.date.fromisoformat,
        default=dt.date(2020, 1, 1),
        help="anchors are replica 0's real news from this day to --to [2020-01-01]",
    )
    p.add_argument("--anchors", type=int, default=100, help="timed anchors [100]")
    p.add_argument("--index-queries", type=int, default=1000, help="index queries [1000]")
    p.add_argument("--validate-max", type=int, default=10**6, help="validate up to N units")
    p.add_argument("--work", type=Path, help="where the stores go [a new temporary folder]")
    p.add_argument("--keep", action="store_true", help="keep the stores afterwards")
    p.add_argument(
        "--servers-only",
        action="store_true",
        help="on the store a --keep run left in --work: time the pool query embedded and on "
        "the Oxigraph server again, and add them to --report's JSON (for a run stopped "
        "before its server step)",
    )
    return p


def servers_only(args, settings: Settings) -> int:
    """The server step on a kept store, added to the report (`--servers-only`)."""
    if args.work is None or not (args.work / "store").is_dir():
        raise InputError(
            "--servers-only needs the --work folder of a --keep run",
            field="--work",
            value=str(args.work),
            hint="name that folder",
        )
    run_args, sizes, replicas, _, found = scale_report.read(args.report.with_suffix(".json"))
    unit = Unit(args.work / "unit", args.data, args.start, args.to)
    with open_store(args.work / "store", settings=settings) as store:
        chosen, _, _ = choose_anchors(store, unit, args)
        _say(f"embedded: timing {len(chosen) - 10} anchors")
        last = time_queries(store, chosen)
    engines = servers(args.work, chosen, last, settings)
    engines["embedded, timed again beside it"] = {
        "pool_ms": _ms(last["pool"]),
        "same": len(chosen) - 10,
        "anchors": len(chosen) - 10,
    }
    run_args.report = args.report
    scale_report.write(run_args, sizes, replicas, engines, found)
    _say(f"wrote {args.report}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.servers_only:
        return servers_only(args, Settings())
    work = args.work or Path(tempfile.mkdtemp(prefix="finkg-scale-"))
    if (work / "store").exists():
        raise InputError(
            "the work folder holds a store already",
            field="--work",
            value=str(work),
            hint="name a new or empty folder",
        )
    work.mkdir(parents=True, exist_ok=True)
    settings = Settings()
    started = time.perf_counter()
    _say(f"work folder {work}; sizes {args.sizes}")
    unit = Unit(work / "unit", args.data, args.start, args.to)
    headlines = [r["title"] for r in unit.news][:: max(1, len(unit.news) // args.index_queries)]
    headlines = headlines[: args.index_queries]
    replicas, sizes = [], []
    chosen: list[Anchor] = []
    labels: list[str] = []
    first = last = None
    found = 0
    raw = ox.Store(str(work / "raw"))
    unit_nq = b""
    try:
        with open_store(work / "store", settings=settings) as store:
            init_store(store)
            for r in range(args.sizes[-1]):
                folder = unit.write(r, work / "replica")
                _settle()
                line = ingest_replica(store, folder, _say)
                if r == 0:
                    dump_unit(store, work / "unit.nq")
                    unit_nq = (work / "unit.nq").read_bytes()
                raw_s = raw_load(raw, unit_nq, r, settings.base_iri, work / "raw-replica.nq")
                line = dataclasses.replace(
                    line, replica=r, raw_quads=unit_nq.count(b"\n"), raw_seconds=raw_s
                )
                replicas.append(line)
                left = (time.perf_counter() - started) / (r + 1) * (args.sizes[-1] - r - 1)
                _say(
                    f"replica {r + 1}/{args.sizes[-1]}: {line.records:,} records, "
                    f"{line.quads:,} quads in {line.seconds:.1f} s "
                    f"({line.quads / line.seconds:,.0f} quads/s; raw "
                    f"{line.raw_quads / raw_s:,.0f}); RSS {line.rss_before_mb:,.0f} MB before, "
                    f"peak {line.peak_rss_mb:,.0f} MB; "
                    f"about {left / 60:.0f} min of ingest left"
                )
                if r + 1 not in args.sizes:
                    continue
                if not chosen:
                    chosen, labels, found = choose_anchors(store, unit, args)
                size, answers = measure_size(
                    args, store, work, r + 1, line, chosen, labels, first, headlines
                )
                first, last = first or answers, answers
                sizes.append(size)
                scale_report.write(args, sizes, replicas, {}, found)
                if size.units <= args.validate_max:
                    validate(store, size)
                    scale_report.write(args, sizes, replicas, {}, found)
        del raw
        engines = servers(work, chosen, last, settings)
        scale_report.write(args, sizes, replicas, engines, found)
        _say(f"done in {(time.perf_counter() - started) / 60:.0f} min: {args.report}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
