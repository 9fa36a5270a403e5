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
    python -m benchmarks.scale --again indexes,validate,servers --work DIR   # on a --keep run
    scripts/with-virtuoso-server sh -c 'python -m benchmarks.scale --again servers --work DIR \
        --virtuoso "$FINKG_TEST_VIRTUOSO" --virtuoso-gsp "$FINKG_TEST_VIRTUOSO_GSP"'

A 50× run needs about 40 GB of disk under `--work` and runs for about 1.5 hours on 2 cores.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyoxigraph as ox

from benchmarks import scale_indexes, scale_report
from benchmarks.harness import data_option, report_option
from benchmarks.ingest import settle
from benchmarks.scale_figures import Replica, Size
from benchmarks.scale_queries import choose_anchors, groups, ms, say, servers, time_queries
from finkg.config import Settings
from finkg.demo.run import SOURCES
from finkg.errors import InputError
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.ingest.documents import ingest_documents
from finkg.kg.setup import init_store
from finkg.kg.store import BaseStore, open_store
from finkg.shapes.validate import validate_store
from finkg.tasks.impact.anchors import Anchor

from .scale_unit import MAX_REPLICAS, Unit


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

    say(f"{units}×: settled in {settle():.1f} s; counting")
    store.flush()
    triples, raw_triples = _count(work / "store"), _count(work / "raw")
    say(f"{units}×: {triples:,} triples; timing queries on {len(chosen) - 10} anchors")
    timed = time_queries(store, chosen)
    say(f"{units}×: pool p50 {ms(timed['pool'])[0]:.1f} ms; building indexes")
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
        pool_ms=ms(timed["pool"]),
        one_hop_ms=ms(timed["hop"]),
        evidence_ms=ms(timed["evidence"]),
        groups=groups(timed, labels, first),
        anchors=len(chosen) - 10,
        index=index,
        validate_s=None,
        conforms=None,
    )
    return size, timed


def validate(store: BaseStore, size: Size) -> None:
    """`validate` timed as `finkg validate` runs it, its checks `Settings().threads` at a time
    (last at each size: the longest, and written down after the rest)."""
    say(f"{size.units}×: validating")
    started = time.perf_counter()
    checked = validate_store(store, workers=Settings().threads)
    size.validate_s, size.conforms = time.perf_counter() - started, checked.conforms
    say(f"{size.units}×: validate {size.validate_s:.0f} s, conforms {size.conforms}")


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
    p.add_argument("--virtuoso", help="Virtuoso's SPARQL endpoint: the pool query there too")
    p.add_argument("--virtuoso-gsp", help="Virtuoso's Graph Store endpoint (with --virtuoso)")
    p.add_argument(
        "--chunk", type=int, default=50_000, help="triples per Graph Store request [50000]"
    )
    p.add_argument(
        "--again",
        type=_steps,
        default=(),
        metavar="STEPS",
        help="on the store a --keep run left in --work, at its largest size: measure these "
        f"steps again ({', '.join(AGAIN)}, comma-separated) and replace them in --report's "
        "JSON (for a run stopped before a step, or a step finkg has changed since)",
    )
    return p


AGAIN = ("indexes", "validate", "servers")


def _steps(text: str) -> tuple[str, ...]:
    steps = tuple(t.strip() for t in text.split(",") if t.strip())
    unknown = sorted(set(steps) - set(AGAIN))
    if unknown or not steps:
        message = f"unknown step {unknown[0]!r}" if unknown else "no step named"
        raise argparse.ArgumentTypeError(f"{message}: name some of {', '.join(AGAIN)}")
    return steps


def again(args, settings: Settings) -> int:
    """Steps measured again on a kept store, replacing them in the report (`--again`)."""
    if args.work is None or not (args.work / "store").is_dir():
        raise InputError(
            "--again needs the --work folder of a --keep run",
            field="--work",
            value=str(args.work),
            hint="name that folder",
        )
    run_args, sizes, replicas, engines, found = scale_report.read(args.report.with_suffix(".json"))
    run_args.report = args.report
    largest = sizes[-1]
    unit = Unit(args.work / "unit", args.data, args.start, args.to)
    with open_store(args.work / "store", settings=settings) as store:
        if "indexes" in args.again:
            say(f"{largest.units}×: building indexes again")
            largest.index = scale_indexes.measure(store, _headlines(unit, largest.index.queries))
            say(f"{largest.units}×: HNSW {largest.index.calibration}")
            scale_report.write(run_args, sizes, replicas, engines, found)
        if "validate" in args.again:
            validate(store, largest)
            scale_report.write(run_args, sizes, replicas, engines, found)
        chosen: list[Anchor] = []
        last: dict = {}
        if "servers" in args.again:
            chosen, _, _ = choose_anchors(store, unit, args)
            say(f"embedded: timing {len(chosen) - 10} anchors")
            last = time_queries(store, chosen)
    if "servers" in args.again:
        engines = servers(args.work, chosen, last, settings, _virtuoso(args), args.chunk)
        engines["embedded, timed again beside it"] = {
            "pool_ms": ms(last["pool"]),
            "same": len(chosen) - 10,
            "anchors": len(chosen) - 10,
        }
        scale_report.write(run_args, sizes, replicas, engines, found)
    say(f"wrote {args.report}")
    return 0


def _virtuoso(args) -> tuple[str, str] | None:
    """Virtuoso's SPARQL and Graph Store URLs, when the pool query is to run there too."""
    if args.virtuoso is None:
        return None
    if args.virtuoso_gsp is None:
        raise InputError(
            "--virtuoso needs --virtuoso-gsp, its Graph Store endpoint",
            field="--virtuoso-gsp",
            value=None,
            hint="scripts/with-virtuoso-server exports it as FINKG_TEST_VIRTUOSO_GSP",
        )
    return args.virtuoso, args.virtuoso_gsp


def _headlines(unit: Unit, count: int) -> list[str]:
    """The index queries: `count` headlines spread evenly over the unit's real news."""
    headlines = [r["title"] for r in unit.news][:: max(1, len(unit.news) // count)]
    return headlines[:count]


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    _virtuoso(args)  # a half-given Virtuoso is refused now, not after the run
    if args.again:
        return again(args, Settings())
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
    say(f"work folder {work}; sizes {args.sizes}")
    unit = Unit(work / "unit", args.data, args.start, args.to)
    headlines = _headlines(unit, args.index_queries)
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
                settle()
                line = ingest_replica(store, folder, say)
                if r == 0:
                    dump_unit(store, work / "unit.nq")
                    unit_nq = (work / "unit.nq").read_bytes()
                raw_s = raw_load(raw, unit_nq, r, settings.base_iri, work / "raw-replica.nq")
                line = dataclasses.replace(
                    line, replica=r, raw_quads=unit_nq.count(b"\n"), raw_seconds=raw_s
                )
                replicas.append(line)
                left = (time.perf_counter() - started) / (r + 1) * (args.sizes[-1] - r - 1)
                say(
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
        engines = servers(work, chosen, last, settings, _virtuoso(args), args.chunk)
        scale_report.write(args, sizes, replicas, engines, found)
        say(f"done in {(time.perf_counter() - started) / 60:.0f} min: {args.report}")
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
