"""Movement decisions on ACL18 (paper 001) with honest statistics: does anything beat chance?

The reader scores "rise" and "fall" for each query (its log-probabilities, paper 001 §3.4);
decision rules turn the scores into forecasts on the same queries, each deciding a query
from what had matured before its decision instant (the open of its session) only: the
validation queries first, then the test queries as their sessions close
(`finkg.tasks.decisions`). Rules: majority, stratified random, previous-day, 5-day momentum,
the reader's raw argmax, and the decision heads (class-prior correction; multinomial over
the scores and the query's own returns; the same without the scores, `card`). Each comes
with ACC and MCC and their bootstrap 95 % intervals, a permutation control, and paired
MCC differences against the baselines. The heads' final states are written to the store
as RDF (`fkg:DecisionHead`).

Every read is timed; reads answered by the score cache (`--cache`, keyed by the exact
messages and the reader) are counted apart and not in the throughput.

    python benchmarks/movement_decisions.py --store /tmp/finkg-acl18-store \
        --val-queries 300 --queries 1000
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import sys
import time
from pathlib import Path

from finkg.config import Settings
from finkg.evaluation.stats import accuracy, mcc
from finkg.kg.calendar import get_calendar
from finkg.kg.store import open_store
from finkg.reader.backends import open_reader
from finkg.reader.llm import messages_hash
from finkg.retrieval.sequence_retrievers import RETRIEVERS
from finkg.retrieval.sequences import Query, WindowPool
from finkg.tasks.decisions import Item, comparisons, decide_all, figures, table
from finkg.tasks.head_records import write_head
from finkg.tasks.heads import fit_as_of
from finkg.tasks.movement.forecast import (
    LABELS,
    MovementConfig,
    movement_messages,
    predict,
    query_features,
)
from finkg.tasks.movement.train import (
    labelled_queries,
    open_sequence_retriever,
    split_stocks,
    store_tickers,
)

ROOT = Path(__file__).resolve().parents[1]
HEADS = ("none", "prior", "multinomial", "card")
BASELINES = ("majority", "stratified", "previous-day", "momentum", "none")


def sign(x: float) -> str:
    return "rise" if x > 0 else "fall"


class ScoreCache:
    """Scores by (reader, exact messages), in a JSON file; a hit is not a read."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.data: dict[str, dict[str, float]] = {}
        if path and path.exists():
            self.data = json.loads(path.read_text())

    def key(self, model: str, messages: list) -> str:  # type: ignore[type-arg]
        return hashlib.sha256(f"{model}/{messages_hash(messages)}".encode()).hexdigest()

    def save(self) -> None:
        if self.path:
            self.path.write_text(json.dumps(self.data))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    p.add_argument("--store", type=Path, default=Path("/tmp/finkg-acl18-store"))
    p.add_argument("--since", type=dt.date.fromisoformat, default=dt.date(2014, 6, 2))
    p.add_argument("--val-from", type=dt.date.fromisoformat, default=dt.date(2015, 1, 2))
    p.add_argument("--val-to", type=dt.date.fromisoformat, default=dt.date(2015, 6, 2))
    p.add_argument("--from", dest="start", type=dt.date.fromisoformat, default=dt.date(2015, 6, 3))
    p.add_argument("--to", dest="end", type=dt.date.fromisoformat, default=dt.date(2015, 12, 31))
    p.add_argument("--val-queries", type=int, default=300)
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--reader", default="qwen2.5-coder-0.5b-q4_0")
    p.add_argument("--retriever", default="none", choices=list(RETRIEVERS))
    p.add_argument("--model-dir", type=Path, help="the trained retriever (for finseer)")
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--sample", type=float, default=0.02)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--bootstrap", type=int, default=1000)
    p.add_argument("--cache", type=Path, help="a JSON file of scores to reuse (not timed)")
    p.add_argument("--report", type=Path, default=ROOT / "benchmarks/reports/movement.md")
    args = p.parse_args(argv)
    settings = Settings.from_env().with_(reader=args.reader)
    store = open_store(args.store)
    tickers = store_tickers(store)
    if not tickers:
        print(f"{args.store} holds no prices: run benchmarks/movement.py once to build it")
        return 2
    split = split_stocks(tickers, seed=args.seed)
    stocks = split["test"]
    val = labelled_queries(
        store, stocks, args.val_from, args.val_to, n=args.val_queries, seed=args.seed, salt="val"
    )
    test = labelled_queries(
        store, stocks, args.start, args.end, n=args.queries, seed=args.seed, salt="test"
    )
    print(f"{len(val)} validation and {len(test)} test queries on {len(stocks)} stocks", flush=True)
    llm = open_reader(settings)
    retriever = None
    pool = None
    config = MovementConfig(k=args.k, sample=args.sample, since=args.since, universe=tuple(stocks))
    if args.retriever != "none":
        retriever = open_sequence_retriever(args.retriever, settings, model_dir=args.model_dir)
        pool = WindowPool.load(
            store,
            before=max(q.decision for q, _ in test),
            since=args.since,
            sample=args.sample,
            universe=stocks,
        )
        if hasattr(retriever, "matrix"):
            retriever.matrix(pool)  # type: ignore[attr-defined]
    cache = ScoreCache(args.cache)
    calendar = get_calendar()
    reads, cached, read_s = 0, 0, 0.0

    def item(q: Query, label: str) -> Item:
        nonlocal reads, cached, read_s
        if retriever is None:
            messages = movement_messages(q, "(none)")
        else:
            f = predict(store, q, pool, llm=llm, retriever=retriever, config=config, write=False)  # type: ignore[arg-type]
            messages = list(f.messages)
        key = cache.key(llm.model_id, messages)
        if key in cache.data:
            scores = cache.data[key]
            cached += 1
        else:
            t0 = time.perf_counter()
            scores = llm.score(messages, list(LABELS))
            read_s += time.perf_counter() - t0
            reads += 1
            cache.data[key] = scores
        d1, d4 = query_features(q)
        return Item(
            q.decision,
            calendar.bar_available_at(q.day),
            scores,
            (d1, d4),
            label,
            {"previous-day": sign(d1), "momentum": sign(d4)},
        )

    started = time.perf_counter()
    items = []
    for n, (q, label) in enumerate(sorted(val + test, key=lambda x: x[0].decision), start=1):
        items.append(item(q, label))
        if n % 50 == 0:
            rate = reads / read_s if read_s else 0.0
            print(f"{n}/{len(val) + len(test)} queries, {reads} reads ({rate:.2f}/s)", flush=True)
            cache.save()
    cache.save()
    wall = time.perf_counter() - started
    val_keys = {q.key for q, _ in val}
    ordered = sorted(val + test, key=lambda x: x[0].decision)
    fitting = [i for i, (q, _) in zip(items, ordered, strict=True) if q.key in val_keys]
    tested = [i for i, (q, _) in zip(items, ordered, strict=True) if q.key not in val_keys]
    decisions = decide_all(fitting, tested, classes=LABELS, heads=HEADS, seed=args.seed)
    labels = [i.label for i in tested]
    rows = figures(
        decisions,
        labels,
        metrics={"MCC": mcc, "ACC": accuracy},
        baselines=BASELINES,
        classes=LABELS,
        n=args.bootstrap,
        seed=args.seed,
    )
    last = max(i.decision for i in tested) + dt.timedelta(seconds=1)
    heads = {}
    for kind in HEADS[1:]:
        state = fit_as_of(
            [i.matured() for i in fitting + tested], as_of=last, kind=kind, classes=LABELS
        )
        heads[kind] = (write_head(store, "movement", state).value, state.n, state.sha256)
    result = {
        "options": {k: str(v) for k, v in vars(args).items()},
        "reader": llm.model_id,
        "validation_queries": len(fitting),
        "test_queries": len(tested),
        "test_rise_share": labels.count("rise") / len(labels),
        "reads": reads,
        "cached": cached,
        "read_seconds": round(read_s, 1),
        "reads_per_hour": round(3600 * reads / read_s, 1) if read_s else None,
        "wall_seconds": round(wall, 1),
        "rules": {
            r.name: {
                "metrics": {k: [v.value, v.low, v.high] for k, v in r.metrics.items()},
                "permutation": {"shuffled_mean": r.permutation.shuffled_mean, "p": r.permutation.p},
                "mix": r.mix,
                "mcc_vs": {b: [d.value, d.low, d.high] for b, d in r.versus.items()},
            }
            for r in rows
        },
        "heads": heads,
    }
    args.report.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    args.report.write_text(render(result, rows))
    print(render(result, rows))
    return 0


def render(result: dict, rows: list) -> str:  # type: ignore[type-arg]
    o = result["options"]
    n = result["test_queries"]
    lines = [
        "# Movement decisions (paper 001, ACL18): the reader's scores and the no-skill rules",
        "",
        f"`python benchmarks/movement_decisions.py` with {json.dumps(o)}.",
        "",
        f"Reader `{result['reader']}`, retriever `{o['retriever']}`. Test: **{n} non-freeze "
        f"queries** of the test stocks, {o['start']} to {o['end']} (rise share "
        f"{result['test_rise_share']:.1%}); fitting (validation) queries: "
        f"{result['validation_queries']}, {o['val_from']} to {o['val_to']}, the same stocks. "
        "Every rule decides a query from what had matured before its decision instant (the "
        "open of its session) only; the heads are refitted whenever new labels matured.",
        "",
        f"Reads: {result['reads']} made in {result['read_seconds']} s "
        f"({result['reads_per_hour']} per hour on this machine), {result['cached']} answered "
        f"by the score cache (not counted); {result['wall_seconds']} s in all.",
        "",
        "## Every rule on the same queries (95 % bootstrap intervals)",
        "",
        *table(rows, metric_names=["MCC", "ACC"]),
        "",
        "The permutation control shuffles each rule's forecasts across the queries (the class "
        "mix kept): p is the share of the shuffles (as many as the bootstrap resamples) whose "
        "MCC is at least the rule's.",
        "",
        "## Paired MCC differences on the same queries",
        "",
        *comparisons(rows, ["prior", "multinomial", "card", "none"], "MCC"),
        "",
        "A difference whose interval contains zero is reported as no difference.",
        "",
        "## Decision heads in the store",
        "",
        *[
            f"- `{kind}`: {iri} (n = {n_}, sha256 {sha[:12]})"
            for kind, (iri, n_, sha) in result["heads"].items()
        ],
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
