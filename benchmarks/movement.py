"""Movement forecasting on ACL18 (paper 001 Table 3, Table 4, Figure 2) with every retriever.

Ingests the ACL18 prices (sessions from 120 days before --since to --to, so indicators have
history) into an on-disk store unless the given --store already holds indicator windows,
splits the stocks as `finkg train-retriever` does (Table 2 proportions, seeded), and
forecasts a deterministic sample of non-freeze queries of the test stocks in the query
period with each retriever: candidates are the test stocks' windows available before each
query's decision instant (paper 001 §4.1), a deterministic --sample of them. Prints and
writes ACC / MCC beside the paper's figures, the candidate-movement correlation (appendix
B.2) and indicator occurrences (Figure 2) to benchmarks/reports/movement_retrievers.md.

    python -m benchmarks.movement --store /tmp/acl18-store --queries 8 \
        --model-dir ~/.finkg/cache/movement/finseer
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from pathlib import Path

from benchmarks.harness import ROOT, data_option, write_report
from finkg.config import Settings
from finkg.evaluation.metrics import (
    candidate_movement_correlation,
    indicator_occurrences,
    movement_accuracy,
    movement_mcc,
)
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.store import BaseStore, open_store
from finkg.reader.transport.backends import open_reader
from finkg.retrieval.sequence_retrievers import RETRIEVERS
from finkg.retrieval.sequences import WindowPool
from finkg.tasks.movement.forecast import MovementConfig, predict
from finkg.tasks.movement.questions import labelled_queries, split_stocks, store_tickers
from finkg.tasks.movement.train import open_sequence_retriever

WARM_UP_DAYS = 120
# paper 001 Table 3, ACL18 column (StockLLM = fine-tuned LLaMA 3.2-1B)
PAPER = {
    "none": (0.496, -0.007),
    "random": (0.481, -0.036),
    "dtw": (0.518, 0.045),
    "finseer": (0.521, 0.042),
}
PAPER_TEXT_RETRIEVERS = {
    "Instructor": (0.496, -0.008),
    "UAE": (0.482, -0.036),
    "E5": (0.510, 0.028),
    "BGE": (0.489, -0.019),
    "LLM Embedder": (0.499, 0.000),
}
PAPER_CORRELATION = {"finseer": (0.054, 0.004)}  # Table 4, ACL18


def has_windows(store: BaseStore) -> bool:
    return bool(store.ask("ASK { GRAPH ?g { ?w a <https://w3id.org/finkg/ns#IndicatorWindow> } }"))


def ingest_market(store: BaseStore, data: Path, since: dt.date, end: dt.date, tmp: Path) -> None:
    tmp.mkdir(parents=True, exist_ok=True)
    first = (since - dt.timedelta(days=WARM_UP_DAYS)).isoformat()
    paths = []
    for src in sorted((data / "movement/acl18_stocknet/price_raw").glob("*.csv")):
        lines = src.read_text().splitlines()
        kept = [lines[0]] + [x for x in lines[1:] if first <= x[:10] <= end.isoformat()]
        if len(kept) > 1:
            (tmp / src.name).write_text("\n".join(kept) + "\n")
            paths.append(tmp / src.name)
    started = time.perf_counter()
    report = ingest(
        store, "prices", loader("prices"), paths, IngestOptions(graphs=store.graphs), skip_bad=True
    )
    print(
        f"ingested {len(paths)} price files: {report.written} records, {report.quads} quads "
        f"in {time.perf_counter() - started:.0f} s"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    data_option(p)
    p.add_argument("--store", type=Path, default=Path("/tmp/finkg-acl18-store"))
    p.add_argument("--since", type=dt.date.fromisoformat, default=dt.date(2014, 6, 2))
    p.add_argument("--from", dest="start", type=dt.date.fromisoformat, default=dt.date(2015, 6, 3))
    p.add_argument("--to", dest="end", type=dt.date.fromisoformat, default=dt.date(2015, 12, 31))
    p.add_argument("--queries", type=int, default=8, help="query sample size (deterministic)")
    p.add_argument("--sample", type=float, default=0.02, help="fraction of windows kept")
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--reader", default="qwen2.5-coder-0.5b")
    p.add_argument("--retrievers", default=",".join(RETRIEVERS))
    p.add_argument("--model-dir", type=Path, help="the trained retriever (for finseer)")
    p.add_argument(
        "--report", type=Path, default=ROOT / "benchmarks/reports/movement_retrievers.md"
    )
    p.add_argument(
        "--merge",
        action="store_true",
        help="keep other retrievers' results from an earlier run with the same options",
    )
    args = p.parse_args(argv)
    settings = Settings.from_env().with_(reader=args.reader)
    print(f"options: {vars(args)}; threads {settings.threads}")
    names = [n.strip() for n in args.retrievers.split(",") if n.strip()]
    if "finseer" in names and (args.model_dir is None or not args.model_dir.exists()):
        print("no --model-dir: finseer left out")
        names.remove("finseer")

    store = open_store(args.store)
    if not has_windows(store):
        ingest_market(store, args.data, args.since, args.end, args.store.with_suffix(".csv"))
    split = split_stocks(store_tickers(store), seed=args.seed)
    print("split:", {k: len(v) for k, v in split.items()})
    started = time.perf_counter()
    labelled = labelled_queries(
        store, split["test"], args.start, args.end, n=args.queries, seed=args.seed, salt="test"
    )
    config = MovementConfig(
        k=args.k, sample=args.sample, since=args.since, universe=tuple(split["test"])
    )
    pool = WindowPool.load(
        store,
        before=max(q.decision for q, _ in labelled),
        since=args.since,
        sample=args.sample,
        universe=split["test"],
    )
    print(
        f"{len(labelled)} queries, pool of {len(pool)} windows "
        f"({time.perf_counter() - started:.0f} s)"
    )
    llm = open_reader(settings)
    saved = args.report.with_suffix(".json")
    # what the figures depend on (not where the store or the report live)
    key = json.dumps(
        {
            k: str(v)
            for k, v in vars(args).items()
            if k not in ("retrievers", "merge", "model_dir", "store", "report")
        }
    )
    results: dict[str, dict[str, object]] = {}
    if args.merge and saved.exists():
        earlier = json.loads(saved.read_text(encoding="utf-8"))
        if earlier.get("options") == key:
            results = earlier["results"]
    for name in names:
        t0 = time.perf_counter()
        retriever = open_sequence_retriever(name, settings, model_dir=args.model_dir)
        if hasattr(retriever, "matrix"):
            retriever.matrix(pool)  # type: ignore[attr-defined]
        embed_s = time.perf_counter() - t0
        predicted, actual, moves, indicators, p_rise = [], [], [], [], []
        for query, label in labelled:
            f = predict(store, query, pool, llm=llm, retriever=retriever, config=config)
            predicted.append(f.label)
            p_rise.append(f.rise_probability)
            actual.append(label)
            moves.append([str(pool.movements[h.row]) for h in f.hits])
            indicators.append([str(pool.indicators[h.row]) for h in f.hits])
        r, pv = candidate_movement_correlation(moves, predicted)
        results[name] = {
            "acc": movement_accuracy(predicted, actual),
            "mcc": movement_mcc(predicted, actual),
            "r": r,
            "p": pv,
            "occurrences": indicator_occurrences(indicators),
            "rise_share": predicted.count("rise") / len(predicted),
            "p_rise": sum(p_rise) / len(p_rise),
            "p_rise_range": [min(p_rise), max(p_rise)],
            "seconds": time.perf_counter() - t0,
            "embed_seconds": embed_s,
        }
        x = results[name]
        print(
            f"{name:8s} ACC {x['acc']:.3f} MCC {x['mcc']:+.3f} corr {r:+.3f} (p {pv:.3f}) "
            f"rise share {x['rise_share']:.2f} P(rise) {_p(x)} [{x['seconds']:.0f} s]",
            flush=True,
        )
        saved.write_text(json.dumps({"options": key, "results": results}, indent=1))
    order = {n: i for i, n in enumerate(RETRIEVERS)}
    results = dict(sorted(results.items(), key=lambda kv: order.get(kv[0], 99)))
    _report(args, settings, split, labelled, pool, llm.model_id, results)
    return 0


def finseer_section(folder: Path) -> list[str]:
    """What the trained retriever was trained on and how, from its manifest."""
    m = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    h, kl = m["hyper_parameters"], m["valid_kl"]
    return [
        "## The trained retriever (FinSeer)",
        "",
        f"`{m['model_id']}`, trained by `finkg train-retriever` from `{m['reader']}` feedback "
        f"(the same reader as above) in {m['seconds']:.0f} s: {m['examples']['train']} training "
        f"and {m['examples']['valid']} validation queries x {h['candidates']} scored windows "
        f"(top-1 positive, bottom-{h['negatives']} negatives), alpha {h['alpha']}, tau "
        f"{h['tau']}, {h['epochs']} epochs, lr {h['lr']}, windows sample {h['sample']} "
        f"({m['data']['windows_in_pool']} windows of the train and valid stocks). Train loss "
        f"per epoch {', '.join(f'{x:.3f}' for x in m['train_loss'])}; validation KL "
        f"{kl['base_minilm']:.3f} (MiniLM) -> {kl['finseer']:.3f} (FinSeer)."
        + (
            " A smaller run than the command's default (16 + 4 queries)."
            if h["queries"] < 16
            else ""
        ),
    ]


def _p(x: dict) -> str:  # type: ignore[type-arg]
    if "p_rise" not in x:
        return "—"
    lo, hi = x["p_rise_range"]
    return f"{x['p_rise']:.3f} [{lo:.3f}, {hi:.3f}]"


def _report(args, settings, split, labelled, pool, reader_id, results) -> None:  # type: ignore[no-untyped-def]
    rises = sum(1 for _, y in labelled if y == "rise")
    lines = [
        "# Movement forecasting benchmark (paper 001, ACL18)",
        "",
        f"Data: `{args.data}/movement/acl18_stocknet/price_raw`; windows from {args.since}; "
        f"queries {args.start} to {args.end} on the {len(split['test'])} test stocks of a seeded "
        f"stock split ({len(split['train'])} / {len(split['valid'])} / {len(split['test'])}: "
        "Table 2's 33 / 5 / 33 scaled to the 87 price files).",
        f"Sample: **{len(labelled)} non-freeze queries** ({rises} rise), a deterministic sample "
        f"(seed {args.seed}) of the period's queries; candidates: the test stocks' windows "
        f"available before each decision (the session's open), **{args.sample:.0%} of them** "
        f"kept by a hash of their IRI ({len(pool)} windows in the pool); k = {args.k}.",
        f"Reader: `{reader_id}` (the paper's StockLLM is a fine-tuned LLaMA 3.2-1B); "
        f"{settings.threads} threads on a 2-core machine shared with other work. The full set "
        "(about 2,900 queries x 6 retrievers) does not fit: a 0.5B forward pass over a "
        "five-window prompt takes about 10-30 s here.",
        "",
        "## Table 3 layout (ACL18)",
        "",
        "| retriever | ACC | MCC | paper ACC | paper MCC | rise share | mean P(rise) [min, max] "
        "| seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, x in results.items():
        pa = PAPER.get(name)
        paper = f"{pa[0]:.3f} | {pa[1]:+.3f}" if pa else "— | —"
        lines.append(
            f"| {name} | {x['acc']:.3f} | {x['mcc']:+.3f} | {paper} | {x['rise_share']:.2f} | "
            f"{_p(x)} | {x['seconds']:.0f} |"
        )
    lines += [
        "",
        "The paper's text retrievers, for reference (no counterpart here; finkg's text "
        "baselines are BM25 and the packaged MiniLM): "
        + "; ".join(f"{k} {a:.3f} / {m:+.3f}" for k, (a, m) in PAPER_TEXT_RETRIEVERS.items()),
        "",
        f"With {len(labelled)} queries the standard error of an accuracy near 0.5 is about "
        f"{0.5 / max(1, len(labelled)) ** 0.5:.2f}: these figures cannot separate retrievers.",
        "",
        "## Candidate-movement correlation (appendix B.2, Table 4)",
        "",
        "| retriever | Pearson r | p-value | paper r (p) |",
        "|---|---|---|---|",
    ]
    for name, x in results.items():
        if name == "none":
            continue
        pc = PAPER_CORRELATION.get(name)
        lines.append(
            f"| {name} | {x['r']:+.3f} | {x['p']:.3f} | "
            f"{f'{pc[0]:+.3f} ({pc[1]:.3f})' if pc else '—'} |"
        )
    lines += ["", "## Indicator occurrences among retrieved windows (Figure 2)", ""]
    for name, x in results.items():
        if name == "none":
            continue
        occ = x["occurrences"]
        lines.append(f"- {name}: " + ", ".join(f"{k} {v}" for k, v in list(occ.items())[:12]))
    if "finseer" in results:
        lines += ["", *finseer_section(args.model_dir)]
    write_report(args.report, "\n".join(lines))
    print(f"report: {args.report}")


if __name__ == "__main__":
    sys.exit(main())
