"""Event-impact benchmark on real data (paper 000 §4): decisions by scoring, heads, baselines.

The periods, the data folder and the sample sizes are options; the defaults are the shared
data's validation 2019 and test 2020. Everything decided is decided on validation:

1. Validation: the class weights and the shuffled-label mix from the residual labels of all
   its anchors (as the job does); then a deterministic sample of its anchors (stratified by
   month) read without memory, the reader's option scores stored as scored decisions. The
   decision rule of the test run (`--head auto`, the job's own `head_feed.choose`) is chosen
   on them: fitted on the first 60 % and scored on the last 40 % (macro-F1), among the
   reader's heads and the no-skill rules the job computes (momentum, tone).
2. Test: a sample of the test period's anchors, every variant in one prequential pass
   (`prequential.Prequential.run`), each variant's heads starting from the validation
   decisions and learning from its own matured labels.
3. Every rule on the same test anchors (`tasks.impact.scoreboard`): all-neutral, stratified,
   momentum, tone, the reader through each head, the card-only head, and the variants'
   stored decisions; bootstrap 95 % intervals, paired differences, permutation controls.
4. Speed (`--compare N`): the compact grammar reply against scoring on the same N test
   anchors, without any cache, in one process (each form N anchors in a row, both orders).

Reads answered by the reply cache are counted apart and never in a throughput figure
(`--fresh-cache` empties it first).

    python -m benchmarks.impact --store /work/impact-store --val-anchors 1000 \
        --anchors 2000 --fresh-cache
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import hashlib
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np

from benchmarks.harness import DATA, bootstrap_option, report_option, threads_option, write_report
from benchmarks.impact_adapted import decisions_json
from benchmarks.impact_data import bars_span, build, describe
from benchmarks.impact_replies import compare_replies
from benchmarks.impact_report import report, speed_lines, summary_json
from finkg import queries
from finkg.config import Settings
from finkg.evaluation.stats import paired
from finkg.kg.calendar import get_calendar
from finkg.reader.read import OutputCache
from finkg.reader.transport.backends import open_reader
from finkg.retrieval.index.indexes import open_indexes
from finkg.retrieval.memory.source import MemoryParams
from finkg.tasks.head_choice import AUTO
from finkg.tasks.impact.anchors import Anchor, anchors
from finkg.tasks.impact.head_feed import CANDIDATES, choose
from finkg.tasks.impact.history import Start, scored_items
from finkg.tasks.impact.job import backtest_job, memory_of, validation
from finkg.tasks.impact.predict import ImpactConfig
from finkg.tasks.impact.prequential import Prequential
from finkg.tasks.impact.scoreboard import (
    METRICS,
    decisions,
    horizon_mix,
    labelled_anchors,
    rank_ic_interval,
    scoreboard,
)
from finkg.tasks.span import Span

NEW_YORK = ZoneInfo("America/New_York")
VARIANTS = "static,cited,shuffled-labels:0,shuffled-labels:1,shuffled-labels:2"
PROXY = "QQQ"


def period(text: str) -> Span:
    """`2019` or `2019-01-01:2020-01-01` (end exclusive), in New York time."""
    if ":" not in text:
        y = int(text)
        start, end = dt.date(y, 1, 1), dt.date(y + 1, 1, 1)
    else:
        a, b = text.split(":", 1)
        start, end = dt.date.fromisoformat(a), dt.date.fromisoformat(b)
    if end <= start:
        raise argparse.ArgumentTypeError(f"an empty period: {text}")
    return Span(
        dt.datetime.combine(start, dt.time(0), NEW_YORK),
        dt.datetime.combine(end, dt.time(0), NEW_YORK),
    )


def year(y: int) -> Span:
    return period(str(y))


def clear_runs(store) -> int:  # type: ignore[no-untyped-def]
    """Drop the outputs and memory graphs, the state earlier runs left; return how many quads.
    A rerun must not find an earlier run's predictions (`write_output` keeps an existing
    one, so a changed reader or reply form would silently keep the old) or its memory."""
    graphs = (store.graphs.outputs, store.graphs.memory)
    count = sum(sum(1 for _ in store.quads(g)) for g in graphs)
    if count:
        queries.run(store, "clear_graphs", {"graph": list(graphs)}, allow_update=True)
    return count


def stratified(found: Sequence[Anchor], n: int) -> list[Anchor]:
    """`n` anchors, each month its share (largest remainders), in SHA-256 order inside it."""
    months: dict[tuple[int, int], list[Anchor]] = {}
    for a in found:
        months.setdefault((a.published.year, a.published.month), []).append(a)
    n = min(n, len(found))
    exact = {m: n * len(v) / len(found) for m, v in months.items()}
    take = {m: int(x) for m, x in exact.items()}
    for m in sorted(exact, key=lambda m: (take[m] - exact[m], m))[: n - sum(take.values())]:
        take[m] += 1
    out = []
    for m, group in months.items():
        group = sorted(group, key=lambda a: hashlib.sha256(a.news.value.encode()).hexdigest())
        out += group[: take[m]]
    return sorted(out, key=lambda a: (a.decision_time, a.news.value))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True, help="built here when new")
    parser.add_argument(
        "--data", type=Path, default=DATA, help="a folder laid out like ../shared/data"
    )
    parser.add_argument("--validation", type=period, default=period("2019"), help="YEAR or FROM:TO")
    parser.add_argument("--test", type=period, default=period("2020"), help="YEAR or FROM:TO")
    parser.add_argument("--val-anchors", type=int, default=1000, help="validation anchors read")
    parser.add_argument("--anchors", type=int, default=2000, help="test anchors to sample")
    parser.add_argument("--variants", default=VARIANTS, help="comma-separated")
    parser.add_argument("--reader", default="qwen2.5-coder-0.5b-q4_0")
    parser.add_argument(
        "--adapter", default=None, help="a LoRA adapter for the reader (`finkg train-reader`)"
    )
    parser.add_argument("--head", default=AUTO, choices=(AUTO, *CANDIDATES))
    parser.add_argument("--snippet-chars", type=int, default=160)
    parser.add_argument("--lambda", dest="lam", type=float, default=0.30)
    parser.add_argument("--delta", type=float, default=0.20)
    parser.add_argument("--proxy", default=PROXY)
    threads_option(parser)
    parser.add_argument(
        "--compare", type=int, default=40, help="anchors for the speed comparison (0: none)"
    )
    parser.add_argument(
        "--speed-only",
        action="store_true",
        help="time the decision forms on --compare test anchors and write impact_speed.md",
    )
    bootstrap_option(parser)
    parser.add_argument(
        "--fresh-cache", action="store_true", help="empty the reply cache first (timed runs)"
    )
    parser.add_argument(
        "--keep-runs", action="store_true", help="do not clear earlier runs (resume)"
    )
    report_option(parser, "impact.md")
    args = parser.parse_args(argv)
    if not (args.data / "event").is_dir():
        print(f"no event data under {args.data}; pass --data", file=sys.stderr)
        return 2
    command = "python -m benchmarks.impact " + " ".join(argv or sys.argv[1:])
    print(f"options: {vars(args)}", flush=True)
    began = time.perf_counter()
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    first_bar, last_bar = bars_span(args.validation.first_day, args.test.last_day)
    store = build(args.store, args.data, first_day=first_bar, last_day=last_bar)
    if not args.keep_runs and not args.speed_only:
        print(f"run state cleared: {clear_runs(store):,} quads of earlier runs", flush=True)
    settings = Settings(
        home=args.store / "home", reader=args.reader, adapter=args.adapter, threads=args.threads
    )
    calendar = get_calendar()
    val, test = args.validation, args.test

    started = time.perf_counter()
    texts, vectors, _ = open_indexes(store, settings)
    index_s = time.perf_counter() - started
    print(f"indexes: {len(texts)} texts, {index_s:.0f} s", flush=True)

    validated = validation(store, start=val.start, end=val.end, calendar=calendar, proxy=args.proxy)
    val_sample = stratified(validated.anchors, args.val_anchors)
    everything = anchors(store, start=test.start, end=test.end, calendar=calendar)
    sample = stratified(everything, args.anchors)
    print(
        f"validation: {len(validated.anchors)} anchors, {len(val_sample)} read; "
        f"test: {len(everything)} anchors, {len(sample)} sampled",
        flush=True,
    )
    llm = open_reader(settings)
    replies = settings.cache_dir / "replies.sqlite"
    if args.fresh_cache:
        replies.unlink(missing_ok=True)
    cache = OutputCache(replies)
    memory = dataclasses.replace(MemoryParams(), lam=args.lam, delta=args.delta)
    base = ImpactConfig(proxy=args.proxy, snippet_chars=args.snippet_chars, memory=memory)

    def progress(stage: str):  # type: ignore[no-untyped-def]
        clock = time.perf_counter()

        def show(i: int, n: int) -> None:
            if i % 50 == 0 or i == n:
                hours = (time.perf_counter() - clock) / 3600
                print(
                    f"  {stage}: {i}/{n} anchors, {hours * 60:.1f} min, {i / hours:.0f} anchors/h",
                    flush=True,
                )

        return show

    if args.speed_only:  # the decision forms timed alone, nothing written
        load = os.getloadavg()[0]
        from finkg.tasks.impact.labels import load_prices

        prices = load_prices(store, sample, proxy=args.proxy, calendar=calendar)
        comparison = compare_replies(
            store, llm, sample, texts=texts, vectors=vectors, config=base,
            prices=prices, calendar=calendar, n=args.compare,
        )  # fmt: skip
        lines = [
            "# Event-impact decisions: scoring against grammar replies",
            "",
            f"Command: `{command}`; reader `{llm.model_id}`, {args.threads} threads on 2 "
            f"CPU cores (load average {load:.1f} when it started).",
            *speed_lines(comparison),
        ]
        out = args.report.with_name("impact_speed.md")
        out.write_text("\n".join(lines) + "\n")
        out.with_suffix(".json").write_text(json.dumps(comparison, indent=2) + "\n")
        print("\n".join(lines))
        store.close()
        return 0

    # 1. validation decisions (no memory), then the head chosen on them
    started = time.perf_counter()
    # what both runs read with and the validation period's weights; each run its config
    run = Prequential(
        store,
        llm,
        texts,
        vectors,
        calendar,
        validated.weights,
        validated.mix,
        config=dataclasses.replace(base, head="none"),
        cache=cache,
    )
    val_runs = run.run(
        val_sample, {"static": None}, progress=progress("validation"), keep_results=False
    )
    val_minutes = (time.perf_counter() - started) / 60
    val_items = scored_items(
        store,
        None,
        first_day=val.first_day,
        last_day=val.last_day,
        proxy=args.proxy,
        calendar=calendar,
    )
    start = Start.of(val_items)  # what every variant's heads start from
    # the job's own `--head auto` (`head_feed.choose`), before the test's first decision
    choice = choose(start.history, before=sample[0].decision_time) if args.head == "auto" else None
    head = choice.chosen if choice else args.head
    head_scores = choice.scores if choice else {}
    print(f"decision head: {choice.describe() if choice else head}", flush=True)
    config = dataclasses.replace(base, head=head, head_choice=choice)

    # 4. speed, before the test run fills the cache (no cache is used here)
    prices = None
    comparison = None
    if args.compare:
        from finkg.tasks.impact.labels import load_prices

        prices = load_prices(store, sample, proxy=args.proxy, calendar=calendar)
        comparison = compare_replies(
            store, llm, sample, texts=texts, vectors=vectors, config=config,
            prices=prices, calendar=calendar, n=args.compare,
        )  # fmt: skip
        print(f"speed: {comparison}", flush=True)

    # 2. the test run
    started = time.perf_counter()
    test_run = dataclasses.replace(
        run,
        config=config,
        prices=prices,
        history=start.history,
        since=val.end.date(),
        citations=start.citations,
    )
    runs = test_run.run(
        sample, {v: memory_of(store, v) for v in variants}, progress=progress("test")
    )
    run_minutes = (time.perf_counter() - started) / 60

    # 3. every rule on the same anchors
    items = {
        v: scored_items(
            store, memory_of(store, v), first_day=test.first_day, last_day=test.last_day,
            proxy=args.proxy, calendar=calendar,
        )
        for v in variants
    }  # fmt: skip
    board = labelled_anchors(items["static"] if "static" in items else next(iter(items.values())))
    decided = decisions(val_items, board, variants=items, seed=0)
    rows = scoreboard(decided, board, n=args.bootstrap)
    ics = {name: rank_ic_interval(d, board, n=args.bootstrap) for name, d in decided.items()}
    labels = board.labels
    memory_rows = {}
    if "static" in decided:
        for v in variants:
            if v != "static":
                memory_rows[v] = tuple(
                    paired(
                        METRICS["macro-F1"], decided[v], decided["static"], labels,
                        n=args.bootstrap, groups=weeks,
                    )
                    for weeks in (None, board.weeks)
                )  # fmt: skip
    agree = (
        float(np.mean(decided["static"] == decided[head])) if "static" in decided else float("nan")
    )
    png = args.report.with_suffix(".png")
    args.report.parent.mkdir(parents=True, exist_ok=True)
    results, benchmarks = backtest_job(
        store, test=test, variants=variants, proxy=args.proxy, png=png,
        vectors=vectors, near_duplicate=config.pool.near_duplicate,  # type: ignore[arg-type]
    )  # fmt: skip
    static_run = runs.get("static") or next(iter(runs.values()))
    pools = [[c.family for c in r.retrieved.pool.candidates] for r in static_run.results]
    facts = {
        "command": command,
        "data": describe(args.data),
        "validation": f"{val.first_day} to {val.last_day}",
        "test": f"{test.first_day} to {test.last_day}",
        "val_anchors": len(validated.anchors),
        "val_read": len(val_sample),
        "test_anchors": len(everything),
        "sample": len(sample),
        "labelled": len(board.keys),
        "weeks": sorted({f"{y}-W{w:02d}" for y, w in board.weeks}),
        "months": dict(sorted(Counter(a.published.strftime("%Y-%m") for a in sample).items())),
        "reader": llm.model_id,
        "head": head,
        "head_scores": head_scores,
        "agree": agree,
        "weights": {
            h: {y: round(w, 2) for y, w in ws.items()} for h, ws in validated.weights.items()
        },
        "val_minutes": val_minutes,
        "val_reads": val_runs["static"].reads,
        "val_cached": val_runs["static"].cached,
        "val_reader_seconds": val_runs["static"].reader_seconds,
        "run_minutes": run_minutes,
        "index_s": index_s,
        "total_minutes": (time.perf_counter() - began) / 60,
        "reuse": (getattr(llm, "reused_tokens", 0), getattr(llm, "prompt_tokens", 0)),
        "args": {k: str(v) for k, v in vars(args).items()},
    }
    lines = report(
        facts=facts,
        runs=runs,
        rows=rows,
        ics=ics,
        decided=decided,
        mixes={name: horizon_mix(d) for name, d in decided.items()},
        memory_rows=memory_rows,
        results=results,
        benchmarks=benchmarks,
        pools=pools,
        comparison=comparison,
        png=png.name,
    )
    text = "\n".join(lines) + "\n"
    print(text)
    write_report(args.report, text)
    args.report.with_suffix(".json").write_text(
        json.dumps(summary_json(facts, runs, rows, ics, memory_rows, comparison, decided), indent=2)
        + "\n"
    )
    args.report.with_suffix(".decisions.json").write_text(
        json.dumps(decisions_json(facts, board, decided, adapter=args.adapter)) + "\n"
    )
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
