"""`benchmarks/scale.py`'s report: a table of every cost at every size, each cost's slope
against the store's triples (a least-squares line through log cost and log triples), the
targets, a log-log plot, and the JSON it was written from.

>>> round(slope([1e6, 1e7, 5e7], [2.0, 20.0, 100.0]), 3), round(slope([1e6, 5e7], [5, 5]), 3)
(1.0, 0.0)
>>> slope([1e6], [3.0]) is None
True
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import platform
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyoxigraph as ox

from benchmarks.harness import write_report
from benchmarks.scale_figures import Group, Replica, Size
from benchmarks.scale_indexes import DIM, IndexFigures
from finkg.retrieval.index import hnsw
from finkg.retrieval.index.vectors import FAISS_THRESHOLD, PROBE

TARGETS = (
    "ingest >= 0.5x raw bulk and pool p50 <= 25 ms at the largest size; HNSW recall@20 >= 0.95"
)


def slope(sizes: Sequence[float], costs: Sequence[float | None]) -> float | None:
    """The exponent b of cost ~ size^b fitted over the points that have a positive cost."""
    points = [(s, c) for s, c in zip(sizes, costs, strict=True) if c is not None and c > 0]
    if len(points) < 2:
        return None
    x = np.log([s for s, _ in points])
    y = np.log([c for _, c in points])
    return float(np.polyfit(x, y, 1)[0])


def _costs(sizes) -> dict[str, list[float | None]]:
    """Each cost at each size, in the unit its name says."""
    return {
        "ingest s per unit (finkg)": [s.ingest.seconds for s in sizes],
        "ingest s per unit (raw bulk load)": [s.ingest.raw_seconds for s in sizes],
        "peak RSS of one unit's ingest, MB": [s.ingest.peak_rss_mb for s in sizes],
        "store on disk, MB": [s.store_mb for s in sizes],
        "pool p50 ms": [s.pool_ms[0] for s in sizes],
        **{
            f"pool p50 ms, {name.split(' (')[0]} anchors": [
                s.groups[name].pool_ms[0] if name in s.groups else None for s in sizes
            ]
            for name in (sizes[0].groups if sizes else {})
        },
        "one_hop p50 ms": [s.one_hop_ms[0] for s in sizes],
        "evidence_before p50 ms": [s.evidence_ms[0] for s in sizes],
        "BM25 build s": [s.index.bm25_build_s for s in sizes],
        "vector build s": [s.index.vector_build_s for s in sizes],
        "BM25 query p50 ms": [s.index.bm25_p50_ms for s in sizes],
        "exact vector query p50 ms": [s.index.exact_p50_ms for s in sizes],
        "validate s": [s.validate_s for s in sizes],
    }


def _cell(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:,.1f}" if value < 1000 else f"{value:,.0f}"


def markdown(args, sizes, replicas, engines: dict, found: int) -> str:
    largest = sizes[-1]
    triples = [s.triples for s in sizes]
    lines = [
        "# Scale benchmark",
        "",
        f"One unit: the demo world (`WorldSpec()`, seed 7) plus the real news of {args.start} to "
        f"{args.to} from `{args.data}`; replica r is the same files under new tickers, CIKs, "
        "ISINs and customer IDs (`benchmarks/scale_unit.py`). Every replica went through "
        "finkg's ingest, one after another, into one on-disk store; a second store grew by the "
        "same quads (replica 0's, IRIs moved per replica) through pyoxigraph's bulk loader. "
        f"Queries: {largest.anchors} news anchors of replica 0's real news from "
        f"{args.anchor_from} (of {found}), the same at every size, ten more run first untimed. "
        f"Indexes: built from empty over every passage; {largest.index.queries} headline "
        f"queries; vectors are word hashes ({DIM} dimensions), not MiniLM "
        "(`benchmarks/scale_indexes.py` says why); finkg searches "
        f"exactly below {FAISS_THRESHOLD:,} passages and with FAISS HNSW (M {hnsw.M}, "
        f"efConstruction {hnsw.EF_CONSTRUCTION}) from there, with the efSearch its build chose "
        f"for recall@{hnsw.K} ≥ {hnsw.TARGET} on {hnsw.QUERIES} queries it held out, {PROBE} "
        "(a figure marked 'rows': on whole held-out rows, as builds before 2026-11-28 did; "
        "exact search where none on the ladder reached it; runs before that choice used "
        "efSearch 128). "
        f"Machine: {_machine()}; pyoxigraph {ox.__version__}; nothing else ran.",
        "",
        "| units | triples | passages | store MB | ingest quads/s (finkg / raw = ratio) | "
        "ingest peak RSS MB (before) | pool p50 / p95 ms | one_hop p50 / p95 ms | evidence_before "
        "p50 / p95 ms | BM25 build s | vector build s | BM25 p50 ms | "
        "exact p50 ms | HNSW efSearch (recall on its held-out queries) | HNSW p50 ms | "
        "HNSW recall@20 (by node; ties counted) | validate s |",
        "|" + "---|" * 17,
    ]
    for s in sizes:
        finkg_rate = s.ingest.quads / s.ingest.seconds
        raw_rate = s.ingest.raw_quads / s.ingest.raw_seconds
        recall = (
            "—"
            if s.index.recall_at_20 is None
            else f"{s.index.recall_at_20:.3f}; {s.index.recall_at_20_scores:.3f}"
        )
        lines.append(
            f"| {s.units} | {s.triples:,} | {s.index.passages:,} | {s.store_mb:,.0f} | "
            f"{finkg_rate:,.0f} / {raw_rate:,.0f} = {finkg_rate / raw_rate:.2f} | "
            f"{s.ingest.peak_rss_mb:,.0f} ({s.ingest.rss_before_mb:,.0f}) | "
            f"{s.pool_ms[0]:.1f} / {s.pool_ms[1]:.1f} | "
            f"{s.one_hop_ms[0]:.1f} / {s.one_hop_ms[1]:.1f} | {s.evidence_ms[0]:.1f} / "
            f"{s.evidence_ms[1]:.1f} | "
            f"{s.index.bm25_build_s:.1f} | {s.index.vector_build_s:.1f} | "
            f"{s.index.bm25_p50_ms:.1f} | {s.index.exact_p50_ms:.1f} | {_ef(s.index)} | "
            f"{_cell(s.index.hnsw_p50_ms)} | {recall} | {_cell(s.validate_s)} |"
        )
    lines += ["", "## Queries by anchor group", ""]
    lines += [
        "Same as 1×: anchors whose answer (rows, or triples) equals the first size's, per query.",
        "",
        "| units | anchors | n | pool p50 / p95 ms | pool rows (median) | one_hop p50 / p95 ms | "
        "one-hop triples | evidence_before p50 / p95 ms | evidence rows | same as 1×: pool, "
        "one hop, evidence |",
        "|" + "---|" * 10,
    ]
    for s in sizes:
        for name, g in s.groups.items():
            same = ", ".join(f"{v}/{g.anchors}" for v in g.same.values())
            lines.append(
                f"| {s.units} | {name} | {g.anchors} | {g.pool_ms[0]:.1f} / {g.pool_ms[1]:.1f} | "
                f"{g.pool_rows:,.0f} | {g.one_hop_ms[0]:.1f} / {g.one_hop_ms[1]:.1f} | "
                f"{g.one_hop_triples:,.0f} | {g.evidence_ms[0]:.1f} / {g.evidence_ms[1]:.1f} | "
                f"{g.evidence_rows:,.0f} | {same} |"
            )
    lines += ["", "## Slopes against the triples (cost ∝ triples^slope)", ""]
    lines += ["| cost | " + " | ".join(f"{s.units}×" for s in sizes) + " | slope |"]
    lines += ["|---|" + "---|" * (len(sizes) + 1)]
    for name, values in _costs(sizes).items():
        b = slope(triples, values)
        cells = " | ".join(_cell(v) for v in values)
        lines.append(f"| {name} | {cells} | {'—' if b is None else f'{b:.2f}'} |")
    lines += ["", "## Ingest, replica by replica", ""]
    rates = [r.quads / r.seconds for r in replicas]
    raw = [r.raw_quads / r.raw_seconds for r in replicas]
    lines.append(
        f"{len(replicas)} replicas; finkg quads/s first {rates[0]:,.0f}, median "
        f"{float(np.median(rates)):,.0f}, last {rates[-1]:,.0f}; raw bulk load first "
        f"{raw[0]:,.0f}, median {float(np.median(raw)):,.0f}, last {raw[-1]:,.0f}. Seconds per "
        "kind, last replica: "
        + ", ".join(f"{k} {v:.1f}" for k, v in replicas[-1].kinds.items())
        + "."
    )
    if engines:
        lines += ["", f"## The pool query on a server at {largest.units}×", ""]
        lines += [
            "| engine | pool p50 ms | pool p95 ms | same rows as embedded |",
            "|---|---|---|---|",
        ]
        lines.append(f"| embedded | {largest.pool_ms[0]:.1f} | {largest.pool_ms[1]:.1f} | — |")
        for name, e in engines.items():
            lines.append(
                f"| {name} | {e['pool_ms'][0]:.1f} | {e['pool_ms'][1]:.1f} | "
                f"{e['same']}/{e['anchors']} |"
            )
        for name, e in engines.items():
            if "loaded" in e:
                count, seconds = e["loaded"]
                lines += [
                    "",
                    f"{name}: {count:,} triples copied through finkg's Graph Store load in "
                    f"{seconds:.0f} s ({count / seconds:,.0f} triples/s).",
                ]
    lines += ["", f"Targets: {TARGETS}.", ""]
    return "\n".join(lines)


def _machine() -> str:
    import os

    return f"{os.cpu_count()} cores, {platform.machine()}"


def plot(sizes, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    triples = [s.triples for s in sizes]
    fig, ax = plt.subplots(figsize=(9, 6))
    colours = plt.get_cmap("tab20").colors
    for i, (name, values) in enumerate(_costs(sizes).items()):
        points = [(t, v) for t, v in zip(triples, values, strict=True) if v]
        if len(points) < 2:
            continue
        b = slope(triples, values)
        ax.plot(
            *zip(*points, strict=True),
            marker="osD^v<>"[i % 7],
            color=colours[i % len(colours)],
            label=f"{name} (slope {b:.2f})",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("triples in the store")
    ax.set_ylabel("cost (unit in the label)")
    ax.set_title("finkg: each cost against the store's size")
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(args, sizes, replicas, engines: dict, found: int) -> None:
    """The report, its JSON and its plot (written after every size, so a cut run keeps
    what it measured)."""
    write_report(args.report, markdown(args, sizes, replicas, engines, found))
    payload = {
        "written": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "options": {k: str(v) for k, v in vars(args).items()},
        "sizes": [dataclasses.asdict(s) for s in sizes],
        "replicas": [dataclasses.asdict(r) for r in replicas],
        "engines": engines,
        "found": found,
    }
    args.report.with_suffix(".json").write_text(json.dumps(payload, indent=1))
    if len(sizes) > 1:
        plot(sizes, args.report.with_suffix(".png"))


def _ef(index: IndexFigures) -> str:
    """The efSearch an HNSW build chose, with the recall it measured on its held-out queries."""
    if index.hnsw_p50_ms is None:
        return "—"
    if index.calibration is None:
        return "128 (fixed)"
    chosen = index.calibration["ef_search"]
    tried = index.calibration["tried"]
    if chosen is None:
        return f"none: exact (best {max(tried.values()):.3f} up to {max(map(int, tried))})"
    rows = "rows " if index.calibration.get("probe", hnsw.ROWS) == hnsw.ROWS else ""
    ivf = "IVF nprobe " if index.calibration.get("structure") == "ivf" else ""
    return f"{ivf}{chosen} ({rows}{index.calibration['recall']:.3f})"


def read(path: Path) -> tuple[argparse.Namespace, list, list, dict, int]:
    """What `write` wrote to the JSON at `path`, as `write` takes it."""
    payload = json.loads(path.read_text())
    options = payload["options"]
    args = argparse.Namespace(**dict(options, report=path.with_suffix(".md")))
    replicas = [Replica(**r) for r in payload["replicas"]]
    sizes = []
    for s in payload["sizes"]:
        s = dict(s, ingest=Replica(**s["ingest"]), index=IndexFigures(**s["index"]))
        s["groups"] = {name: Group(**g) for name, g in s["groups"].items()}
        for key in ("pool_ms", "one_hop_ms", "evidence_ms"):
            s[key] = tuple(s[key])
        for g in s["groups"].values():
            for key in ("pool_ms", "one_hop_ms", "evidence_ms"):
                setattr(g, key, tuple(getattr(g, key)))
        sizes.append(Size(**s))
    found = payload.get("found")
    if found is None:  # written before the JSON kept it: the report says it
        match = re.search(r"\(of ([\d,]+)\)", args.report.read_text())
        found = int(match[1].replace(",", "")) if match else 0
    return args, sizes, replicas, payload.get("engines", {}), found


def main(argv: list[str] | None = None) -> int:
    """Rewrite a report (Markdown and plot) from its JSON."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale_report")
    parser.add_argument("json", type=Path, help="the JSON benchmarks.scale wrote")
    path = parser.parse_args(argv).json
    args, sizes, replicas, engines, found = read(path)
    write_report(args.report, markdown(args, sizes, replicas, engines, found))
    if len(sizes) > 1:
        plot(sizes, args.report.with_suffix(".png"))
    print(f"wrote {args.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
