"""Movement decisions on ACL18 (paper 001): every retriever on the same queries, honestly.

Each retriever reads the same validation queries and a prefix of the same seeded list of
test queries (`--queries-small` for every retriever; `--queries` for no retrieval and for
the retriever chosen on the validation queries); the reader's scores of "rise" and "fall"
become decisions prequentially through the decision heads beside majority, stratified,
previous-day, momentum and the reader-free `card` head; each with ACC and MCC and their
bootstrap 95 % intervals, a permutation control, the class mix and paired MCC differences
against majority, previous-day and no retrieval (`finkg.tasks.movement.compare`). The
chosen retriever's heads are written to the store as RDF (`fkg:DecisionHead`).

With `--adapter NAME` (an adapter trained by `finkg train-reader --job movement`, paper 001's
StockLLM, on the same `--seed`'s training stocks), `none` and the chosen retriever read every
query again with the adapted reader, in a table of their own beside the frozen reader's
rules, with paired differences between the two; `--adapted-retrievers` names more (a
FinSeer trained on the adapted reader's feedback, as paper 001 pairs them).

Reads go through a score cache (`--cache`, keyed by the exact messages and the reader):
stop the run at any time and start it again with the same options to continue; cached
reads are counted apart and never in reads/hour. Progress goes to stderr. Builds the
ACL18 store from `--data` first when `--store` holds no indicator windows (as
benchmarks/movement.py does: about 16 M quads, a few minutes).

    python -m benchmarks.movement_decisions --store /work/acl18-store \\
        --retrievers none,random,dtw,bm25,minilm,finseer --val-queries 300 \\
        --queries 1000 --queries-small 300 --threads 2
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.harness import bootstrap_option, data_option, report_option, write_report
from benchmarks.movement import has_windows, ingest_market
from finkg.config import Settings
from finkg.errors import InputError
from finkg.kg.store import open_store
from finkg.reader.transport.backends import open_reader
from finkg.retrieval.rank import finseer
from finkg.retrieval.rank.trained import read_manifest
from finkg.retrieval.sequence_retrievers import RETRIEVERS, check_retriever
from finkg.retrieval.sequences import WindowPool
from finkg.tasks.head_records import write_head
from finkg.tasks.heads import KINDS, fit_as_of
from finkg.tasks.movement.compare import (
    Reader,
    ScoreCache,
    as_json,
    compare,
    last_decision,
)
from finkg.tasks.movement.compare_adapted import compare_adapted
from finkg.tasks.movement.compare_report import render
from finkg.tasks.movement.forecast import LABELS, MovementConfig
from finkg.tasks.movement.questions import labelled_queries, split_stocks, store_tickers
from finkg.tasks.movement.train import default_model_dir, open_sequence_retriever


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def step(stage: str, done: int, total: int) -> None:
    """Progress of long work, a line every 200 items and at the end."""
    if done == total or done % 200 == 0:
        log(f"{stage}: {done}/{total}")


def options(argv: list[str] | None) -> argparse.Namespace:
    day = dt.date.fromisoformat
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    data_option(p)
    p.add_argument("--store", type=Path, default=Path("/tmp/finkg-acl18-store"))
    p.add_argument("--since", type=day, default=dt.date(2014, 6, 2), help="first window")
    p.add_argument("--val-from", type=day, default=dt.date(2015, 1, 2))
    p.add_argument("--val-to", type=day, default=dt.date(2015, 6, 2))
    p.add_argument("--from", dest="start", type=day, default=dt.date(2015, 6, 3))
    p.add_argument("--to", dest="end", type=day, default=dt.date(2015, 12, 31))
    p.add_argument("--val-queries", type=int, default=300)
    p.add_argument("--queries", type=int, default=1000, help="test queries: none and the best")
    p.add_argument("--queries-small", type=int, default=300, help="test queries: the others")
    p.add_argument("--retrievers", default=",".join(RETRIEVERS))
    p.add_argument("--select-head", default="prior", choices=KINDS, help="chooses on validation")
    p.add_argument("--reader", default="qwen2.5-coder-0.5b-q4_0")
    p.add_argument("--adapter", help="a trained adapter's name: adds the adapted reader's rows")
    p.add_argument(
        "--adapted-retrievers",
        default="",
        help="retrievers the adapted reader reads too, beside none and the chosen one "
        "(each must read every test query: --queries-small equal to --queries)",
    )
    p.add_argument("--threads", type=int, help="reader and embedder threads [the free cores]")
    p.add_argument("--model-dir", type=Path, help="the trained retriever (for finseer)")
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--sample", type=float, default=0.02)
    p.add_argument("--seed", type=int, default=0)
    bootstrap_option(p)
    p.add_argument("--cache", type=Path, help="score cache [the store's path + .scores.json]")
    report_option(p, "movement.md")
    p.add_argument("--no-heads", action="store_true", help="write no decision head to the store")
    args = p.parse_args(argv)
    args.retrievers = [check_retriever(r.strip()) for r in args.retrievers.split(",") if r.strip()]
    args.adapted_retrievers = [
        check_retriever(r.strip()) for r in args.adapted_retrievers.split(",") if r.strip()
    ]
    if args.adapted_retrievers and not args.adapter:
        p.error("--adapted-retrievers needs --adapter")
    if missing := set(args.adapted_retrievers) - set(args.retrievers):
        p.error(f"--adapted-retrievers names {sorted(missing)}, not in --retrievers")
    if args.adapted_retrievers and args.queries_small < args.queries:
        p.error(
            f"--adapted-retrievers needs every test query read by the frozen reader too: "
            f"--queries-small {args.queries_small} is less than --queries {args.queries}"
        )
    if args.queries_small > args.queries:
        p.error(f"--queries-small {args.queries_small} is more than --queries {args.queries}")
    if not args.val_to < args.start:
        p.error(f"the validation period must end before the test period: {args.val_to}")
    args.cache = args.cache or args.store.with_name(args.store.name + ".scores.json")
    return args


def frozen_settings(args: argparse.Namespace, env: Settings) -> Settings:
    """The frozen reader's settings: `--reader` and `--threads`, and no adapter, whatever
    FINKG_ADAPTER says (the frozen rows would be adapted reads; `--adapter` names the
    adapted reader)."""
    settings = env.with_(reader=args.reader)
    if settings.adapter:
        log(f"FINKG_ADAPTER={settings.adapter} ignored: --adapter names the adapted reader")
        settings = settings.with_(adapter=None)
    return settings.with_(threads=args.threads) if args.threads else settings


def finseer_manifest(model_dir: Path, test_stocks: Sequence[str]) -> dict[str, Any]:
    """The trained FinSeer's manifest, refused when it trained on a test stock (its split's
    seed or store differ from the benchmark's): its test figures would have seen them."""
    m = read_manifest(model_dir, kind=finseer.KIND, format=finseer.FORMAT, train=finseer.TRAIN)
    if seen := sorted(set(test_stocks) & {*m["split"]["train"], *m["split"]["valid"]}):
        raise InputError(
            f"the FinSeer in {model_dir} was trained on test stocks",
            field="--model-dir",
            value=seen,
            hint="train it with the benchmark's --seed on the same store",
        )
    return m


def main(argv: list[str] | None = None) -> int:
    args = options(argv)
    started = time.perf_counter()
    settings = frozen_settings(args, Settings.from_env())
    log(f"options: { {k: str(v) for k, v in vars(args).items()} }; threads {settings.threads}")
    skipped = {}
    model_dir = args.model_dir or default_model_dir(settings)
    if "finseer" in args.retrievers and not (model_dir / "manifest.json").exists():
        skipped["finseer"] = (
            f"no trained model in {model_dir}: train one with `finkg train-retriever` "
            "(heavy: reader feedback over many windows) or pass --model-dir"
        )
        args.retrievers.remove("finseer")
        log(f"finseer skipped: {skipped['finseer']}")
    store = open_store(args.store)
    if not has_windows(store):
        ingest_market(store, args.data, args.since, args.end, args.store.with_suffix(".csv"))
    stocks = split_stocks(store_tickers(store), seed=args.seed)["test"]
    val = labelled_queries(
        store, stocks, args.val_from, args.val_to, n=args.val_queries, seed=args.seed,
        salt="val", progress=step,
    )  # fmt: skip
    test = labelled_queries(
        store, stocks, args.start, args.end, n=args.queries, seed=args.seed, salt="test",
        progress=step,
    )  # fmt: skip
    pool = WindowPool.load(
        store,
        before=max(q.decision for q, _ in val + test),
        since=args.since,
        sample=args.sample,
        universe=stocks,
        progress=step,
    )
    log(
        f"{len(val)} validation and {len(test)} test queries on {len(stocks)} stocks; "
        f"{len(pool)} windows in the pool"
    )
    trained = None
    if "finseer" in args.retrievers:
        try:
            trained = finseer_manifest(model_dir, stocks)
        except InputError as e:
            log(f"refused: {e}")
            return 2
    llm = open_reader(settings)
    retrievers = {}
    for name in args.retrievers:
        retrievers[name] = open_sequence_retriever(name, settings, model_dir=model_dir)
        if hasattr(retrievers[name], "matrix"):
            log(f"embedding the pool's windows for {name} (cached on disk)")
            retrievers[name].matrix(pool)  # type: ignore[attr-defined]
    config = MovementConfig(k=args.k, sample=args.sample, since=args.since, universe=tuple(stocks))
    reader = Reader(llm, pool, config, ScoreCache(args.cache), log=log)
    log(f"score cache: {args.cache} ({len(reader.cache.data)} scores)")
    result = compare(
        retrievers,
        val,
        test,
        reader,
        small=args.queries_small,
        head=args.select_head,
        n=args.bootstrap,
        seed=args.seed,
    )
    manifest = None
    if args.adapter:
        from finkg.reader.adapt.manifest import AdapterManifest, adapter_dir

        manifest = AdapterManifest.model_validate_json(
            (adapter_dir(settings.cache_dir, args.adapter) / "manifest.json").read_text()
        )
        adapted = Reader(
            open_reader(settings.with_(adapter=args.adapter)), pool, config, reader.cache, log=log
        )
        also = [r for r in args.adapted_retrievers if r in retrievers]  # finseer may be skipped
        result = compare_adapted(
            result, retrievers, val, test, adapted, also=also, n=args.bootstrap, seed=args.seed
        )
    chosen = result.choice.best or "none"
    heads = {}
    if chosen in result.test and not args.no_heads:
        matured = [
            i.matured() for i in (*result.fitting[chosen].values(), *result.test[chosen].values())
        ]
        as_of = last_decision(result) + dt.timedelta(seconds=1)
        for kind in ("prior", "multinomial", "card"):
            state = fit_as_of(matured, as_of=as_of, kind=kind, classes=LABELS)
            heads[kind] = (write_head(store, "movement", state).value, state.n, state.sha256)
    report = {
        "options": {k: str(v) for k, v in vars(args).items()},
        "reader": llm.model_id,
        "data": {
            "folder": str(args.data),
            "store": str(args.store),
            "stocks": len(stocks),
            "validation": [str(args.val_from), str(args.val_to)],
            "test": [str(args.start), str(args.end)],
            "test_queries": len(test),
            "since": str(args.since),
            "sample": args.sample,
            "pool": len(pool),
            "k": args.k,
            "threads": settings.threads,
        },
        **as_json(result),
        "heads": heads,
        "adapter": manifest.model_dump(mode="json") if manifest else None,
        "finseer": trained if "finseer" in retrievers else None,
        "heads_retriever": chosen,
        "skipped": skipped,
        "wall_seconds": round(time.perf_counter() - started, 1),
    }
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.with_suffix(".json").write_text(json.dumps(report, indent=1) + "\n")
    write_report(args.report, render(report))
    print(args.report.read_text())
    log(f"report: {args.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
