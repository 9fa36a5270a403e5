"""The vector index's recall at scale (issue 43): finkg's calibrated build on N replicas of
the scale unit's passages, searched with real headlines.

`benchmarks/scale.py` measures the indexes on a store it grew through finkg's ingest, which
takes about 1.5 hours to 50×. This measures the index alone, in minutes: it reads every
passage of a 1× store (`python -m benchmarks.scale --sizes 1 --keep --work DIR` leaves one
in `DIR/store`), writes replica r of each text as the scale unit does (`Renamer.text`: new
tickers, CIKs, ISINs, customer IDs and company names; the real news's text is unchanged, as
in the unit, where only its symbol moves), and embeds them with the scale benchmark's word
hashes. On those rows it runs finkg's own build (`build_hnsw`, with the probe
`VectorIndex` uses: each held-out passage's first line) and searches, one query at a time as
`VectorIndex.search` does, with `--queries` real headlines spread evenly over the unit's
news. Recall@20 counts a hit that ties exact search's 20th score (near-copies tie); its 95 %
CI resamples the headlines' publication days (1,000 draws).

With `--grow G`, each size is also reached as a refresh that only adds passages reaches it:
the build over the first N − G replicas, then the last G added to it (`grow.grow`: the rows
added, the recall measured again on the build's held-out queries), searched with the same
headlines; the report gives its time against the whole build's and the paired difference
in recall (grown − built, by day).

    python -m benchmarks.scale_recall --store DIR/store [--sizes 10,50] [--grow 1]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.harness import data_option, report_option, write_report
from benchmarks.scale_indexes import DIM, K, WordHashEmbedder
from benchmarks.scale_unit import Renamer, Unit
from finkg.kg.store import open_store
from finkg.retrieval.index import persist
from finkg.retrieval.index.grow import grow
from finkg.retrieval.index.hnsw import Hnsw, build_hnsw
from finkg.retrieval.index.vectors import PROBE, lead


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.scale_recall", description=__doc__.split("\n")[0]
    )
    data_option(p)
    report_option(p, "scale_recall.md")
    p.add_argument("--store", type=Path, required=True, help="a 1× scale store (read only)")
    p.add_argument("--sizes", default="10,50", help="replicas of its passages [10,50]")
    p.add_argument("--from", dest="start", type=dt.date.fromisoformat, default=dt.date(2019, 1, 1))
    p.add_argument("--to", type=dt.date.fromisoformat, default=dt.date(2020, 12, 31))
    p.add_argument("--queries", type=int, default=1000, help="headlines [1000]")
    p.add_argument(
        "--grow", type=int, default=0, help="replicas added to a smaller build at each size [0]"
    )
    return p


def _normalised(vectors: np.ndarray) -> np.ndarray:
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def _day_ci(values: np.ndarray, days: list[str], draws: int = 1000) -> tuple[float, float]:
    """The 95 % interval of the mean of `values`, resampling whole days."""
    groups = [np.flatnonzero(np.array(days) == d) for d in sorted(set(days))]
    rng = np.random.default_rng(0)
    means = []
    for _ in range(draws):
        picked = np.concatenate([groups[i] for i in rng.integers(len(groups), size=len(groups))])
        means.append(float(values[picked].mean()))
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def _recall(built: Hnsw, matrix: np.ndarray, asked: np.ndarray, floors: np.ndarray) -> tuple:
    """Each query's recall@K through `built` (exact where it chose exact search), and the
    seconds each search took."""
    seconds, recall = [], []
    for q, floor in zip(asked, floors, strict=True):
        started = time.perf_counter()
        if built.exact:
            scores = matrix @ q
            found = scores[np.argpartition(-scores, K)[:K]]
        else:
            found, _ = built.search(q, K)
        seconds.append(time.perf_counter() - started)
        recall.append(min(K, int(np.sum(found >= floor))) / K)
    return np.array(recall), seconds


def measure(
    texts: list[str], heads: list[str], days: list[str], unit: Unit, n: int, added: int = 0
) -> dict:
    """Build finkg's calibrated index over `n` replicas of `texts`; search with `heads`; with
    `added`, grow one built over `n - added` replicas by the rest and search it too."""
    rows = list(texts)
    for r in range(1, n):
        names = Renamer.for_replica(r, customers=unit.customers, names=unit.names)
        rows += [names.text(t) for t in texts]
    embedder = WordHashEmbedder(dim=DIM)
    matrix = _normalised(embedder.embed(rows))
    asked = _normalised(embedder.embed(heads))
    floors = np.empty(len(asked), dtype=np.float32)
    exact_s = []
    for i, q in enumerate(asked):
        started = time.perf_counter()
        scores = matrix @ q
        floors[i] = np.partition(scores, len(scores) - K)[len(scores) - K] - 1e-6
        exact_s.append(time.perf_counter() - started)

    def probe(held: np.ndarray) -> np.ndarray:
        return _normalised(embedder.embed([lead(rows[r]) for r in held]))

    started = time.perf_counter()
    built = build_hnsw(matrix, probe=probe, probe_name=PROBE)
    build_s = time.perf_counter() - started
    values, seconds = _recall(built, matrix, asked, floors)
    grown = {}
    if 0 < added < n:
        base = (n - added) * len(texts)
        smaller = build_hnsw(matrix[:base], probe=probe, probe_name=PROBE)
        started = time.perf_counter()
        bigger = grow(smaller, matrix, smaller.order, np.arange(base, len(rows)))
        grow_s = time.perf_counter() - started
        if bigger is None:  # it could not be grown: a refresh builds anew
            grown = {"added": len(rows) - base, "grow_s": grow_s, "described": "rebuilt"}
        else:
            more, _ = _recall(bigger, matrix, asked, floors)
            grown = {
                "added": len(rows) - base,
                "grow_s": grow_s,
                "described": bigger.calibration.describe(),
                "recall": float(more.mean()),
                "recall_ci_days": _day_ci(more, days),
                "difference": float((more - values).mean()),
                "difference_ci_days": _day_ci(more - values, days),
            }
    return {
        "grown": grown,
        "replicas": n,
        "passages": len(rows),
        "build_s": build_s,
        "calibration": built.calibration.__dict__,
        "described": built.calibration.describe(),
        "recall": float(values.mean()),
        "recall_ci_days": _day_ci(values, days),
        "search_p50_ms": 1000 * statistics.median(seconds),
        "exact_p50_ms": 1000 * statistics.median(exact_s),
        "queries": len(heads),
        "days": len(set(days)),
    }


def write(report: Path, figures: list[dict], args: argparse.Namespace) -> None:
    lines = [
        "# The vector index's recall at scale",
        "",
        f"`python -m benchmarks.scale_recall --store {args.store} --sizes {args.sizes}"
        f"{f' --grow {args.grow}' if args.grow else ''}` "
        f"({dt.datetime.now(dt.UTC):%Y-%m-%d}): finkg's calibrated build over N replicas of a "
        f"1× scale store's passages (text replicated as the scale unit does; word-hash vectors, "
        f"{DIM} dimensions), searched one query at a time with {args.queries} real headlines "
        "of the unit's news (module docstring). Recall@20 counts ties with exact search's "
        "20th score; its CI resamples publication days.",
        "",
        "| replicas | passages | build s | what the build chose (on its held-out queries) | "
        "recall@20 on headlines [95 % CI, by day] | search p50 ms | exact p50 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in figures:
        low, high = f["recall_ci_days"]
        lines.append(
            f"| {f['replicas']} | {f['passages']:,} | {f['build_s']:.0f} | {f['described']} | "
            f"{f['recall']:.3f} [{low:.3f}, {high:.3f}] ({f['queries']} on {f['days']} days) | "
            f"{f['search_p50_ms']:.2f} | {f['exact_p50_ms']:.1f} |"
        )
    grown = [f for f in figures if f.get("grown")]
    if grown:
        lines += [
            "",
            f"Grown instead (`--grow {args.grow}`): the build over {args.grow} replica(s) "
            "fewer, then the rest added as a refresh adds them (`grow.grow`), the same "
            "headlines:",
            "",
            "| replicas | passages added | grow s (whole build s) | after growing | "
            "recall@20 on headlines [95 % CI, by day] | grown − built [95 % CI, by day] |",
            "|---|---|---|---|---|---|",
        ]
        for f in grown:
            g = f["grown"]
            if "recall" not in g:
                lines.append(
                    f"| {f['replicas']} | {g['added']:,} | {g['grow_s']:.1f} "
                    f"({f['build_s']:.0f}) | not grown: built anew | — | — |"
                )
                continue
            low, high = g["recall_ci_days"]
            d_low, d_high = g["difference_ci_days"]
            lines.append(
                f"| {f['replicas']} | {g['added']:,} | {g['grow_s']:.1f} ({f['build_s']:.0f}) "
                f"| {g['described']} | {g['recall']:.3f} [{low:.3f}, {high:.3f}] | "
                f"{g['difference']:+.3f} [{d_low:+.3f}, {d_high:+.3f}] |"
            )
    write_report(report, "\n".join(lines))
    report.with_suffix(".json").write_text(json.dumps(figures, indent=1, default=str) + "\n")


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="finkg-scale-recall-") as folder:
        unit = Unit(Path(folder), args.data, args.start, args.to)
    news = unit.news[:: max(1, len(unit.news) // args.queries)][: args.queries]
    heads = [r["title"] for r in news]
    days = [r["publishedDate"][:10] for r in news]
    with open_store(args.store, read_only=True) as store:
        texts = list(persist.node_texts(store, [c.value for c in persist.DEFAULT_CLASSES]).values())
    print(f"{len(texts):,} passages at 1×; {len(heads)} headlines on {len(set(days))} days")
    figures = []
    for n in sizes:
        figures.append(measure(texts, heads, days, unit, n, args.grow))
        print(json.dumps(figures[-1], default=str), flush=True)
        write(args.report, figures, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
