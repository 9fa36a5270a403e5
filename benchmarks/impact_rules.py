"""Event impact without a reader: every rule on every anchor, intervals by anchors and by weeks.

The event benchmark (`benchmarks.impact`) reads a sample of anchors with the reader (hours on
2 cores). The no-skill rules and the card-only head need no reader, so they can be scored
on every anchor of the periods, in minutes: all-neutral, stratified random, momentum (the
prior five sessions' residual z beyond ±1), headline tone, and the `card` head (a
multinomial model over the market card, the event type, the prior z and the tone, fitted
prequentially from the validation period's matured labels), plus the rule the job's
`--head auto` would choose among the reader-free candidates (`card`, `momentum`, `tone`)
on the validation period (`head_feed.choose`'s procedure).

Every figure is given twice: with the interval that resamples anchors, and with the one that
resamples whole trading weeks (ISO weeks of the prediction day). Anchors of one week share
the market's moves; the week-level interval is the honest one and the verdicts read it.

    python -m benchmarks.impact_rules --store /work/impact-store
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from benchmarks.harness import bootstrap_option, ci, data_option, report_option, write_report
from benchmarks.impact import PROXY, period
from benchmarks.impact_data import build
from finkg.errors import InputError
from finkg.evaluation.baselines import prior_z
from finkg.evaluation.stats import verdict
from finkg.kg.calendar import get_calendar
from finkg.kg.derive.cards import market_card
from finkg.kg.store import BaseStore
from finkg.tasks.head_choice import choose_head
from finkg.tasks.impact.anchors import anchors
from finkg.tasks.impact.head_feed import LabelBook
from finkg.tasks.impact.history import ScoredItem
from finkg.tasks.impact.labels import load_prices
from finkg.tasks.impact.scoreboard import METRICS, decisions, labelled_anchors, scoreboard
from finkg.tasks.impact.scoring import CLASSES, RULES, anchor_features
from finkg.tasks.span import Span

RULE_NAMES = ("all-neutral", "stratified", "momentum", "tone", "card")
FLAT = {c: 0.0 for c in CLASSES}  # no reader: every option scored alike


def items_of(store: BaseStore, span: Span, proxy: str, log) -> list[ScoredItem]:  # type: ignore[no-untyped-def]
    """Every anchor of `span` at every horizon with its features and its label (if any)."""
    calendar = get_calendar()
    found = anchors(store, start=span.start, end=span.end, calendar=calendar)
    prices = load_prices(store, found, proxy=proxy, calendar=calendar)
    book = LabelBook(prices, proxy=proxy, calendar=calendar)
    out = []
    started = time.perf_counter()
    skipped = 0
    for i, a in enumerate(found, start=1):
        try:
            card = market_card(store, a.ticker, a.card_last_session, proxy=proxy)
        except InputError:  # no bar before the news (an IPO day's): no card, no decision
            skipped += 1
            continue
        z = prior_z(prices, a.ticker, proxy, a.prediction_day, calendar=calendar)
        features = anchor_features(card, a.event_type, z, a.headline)
        for h in (1, 3, 5):
            out.append(
                ScoredItem(
                    prediction=a.iri.value, anchor=a.iri.value, ticker=a.ticker,
                    headline=a.headline, prediction_day=a.prediction_day,
                    decision=a.decision_time, horizon=h, value=0, logprobs=dict(FLAT),
                    features=features, label=book.label(a.ticker, a.prediction_day, h),
                )
            )  # fmt: skip
        if i % 1000 == 0 or i == len(found):
            log(f"  {span.first_day}..{span.last_day}: {i}/{len(found)} anchors, "
                f"{time.perf_counter() - started:.0f} s, {skipped} without a card")  # fmt: skip
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--store", type=Path, required=True, help="the event benchmark's store (built when new)"
    )
    data_option(parser)
    parser.add_argument("--validation", type=period, default=period("2019"), help="YEAR or FROM:TO")
    parser.add_argument("--test", type=period, default=period("2020"), help="YEAR or FROM:TO")
    parser.add_argument("--proxy", default=PROXY)
    bootstrap_option(parser)
    report_option(parser, "impact_rules.md")
    args = parser.parse_args(argv)

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    started = time.perf_counter()
    store = build(args.store, args.data)
    val_items = items_of(store, args.validation, args.proxy, log)
    test_items = items_of(store, args.test, args.proxy, log)
    store.close()
    board = labelled_anchors(test_items)
    # the reader's heads are meaningless with flat scores: only the card head is fitted
    decided = decisions(val_items, board, heads=("card",))
    # the job's --head auto among the reader-free candidates, from validation alone
    history: dict[int, list] = defaultdict(list)
    for s in val_items:
        if s.label is not None:
            history[s.horizon].append(s.matured())
    choice = choose_head(
        history, before=args.test.start, classes=CLASSES, candidates=("card", *RULES),
        rules=RULES, metric=METRICS["macro-F1"],
    )  # fmt: skip
    rows = scoreboard(decided, board, n=args.bootstrap)
    weeks = sorted(set(board.weeks))
    lines = render(args, rows, board, weeks, choice, time.perf_counter() - started)
    write_report(args.report, "\n".join(lines))
    summary = {
        "anchors": len(board.keys),
        "weeks": len(weeks),
        "choice": choice.as_json(),
        "rules": {
            r.name: {
                "macro-F1": [r.metrics["macro-F1"].value, r.metrics["macro-F1"].low,
                             r.metrics["macro-F1"].high],
                "macro-F1_weeks": [r.grouped.low, r.grouped.high] if r.grouped else None,
                "versus": {b: [d.value, d.low, d.high] for b, d in r.versus.items()},
                "versus_weeks": {b: [d.low, d.high] for b, d in r.versus_grouped.items()},
            }
            for r in rows
        },
    }  # fmt: skip
    args.report.with_suffix(".json").write_text(json.dumps(summary, indent=2) + "\n")
    print("\n".join(lines))
    return 0


def render(args, rows, board, weeks, choice, seconds: float) -> list[str]:  # type: ignore[no-untyped-def]
    n = len(board.keys)
    lines = [
        "# Event impact without a reader: every rule on every anchor, by anchors and by weeks",
        "",
        f"`python -m benchmarks.impact_rules --store {args.store}` ({seconds / 60:.0f} min on "
        "2 cores). Validation "
        f"{args.validation.first_day} to {args.validation.last_day}, test "
        f"{args.test.first_day} to {args.test.last_day}; **{n:,} test anchors labelled at all "
        f"three horizons, in {len(weeks)} trading weeks** (ISO weeks of the prediction day). "
        "Metrics average 1D/3D/5D; 95 % bootstrap intervals resample anchors, then whole "
        f"weeks ({args.bootstrap} resamples each).",
        "",
        "| rule | macro-F1 [95 % CI, anchors] | [95 % CI, weeks] | width ratio (weeks / "
        "anchors) | permutation p |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        m, g = r.metrics["macro-F1"], r.grouped
        ratio = (g.high - g.low) / (m.high - m.low) if g and m.high > m.low else float("nan")
        lines.append(
            f"| {r.name} | {ci(m)} | [{g.low:.3f}, {g.high:.3f}] | {ratio:.1f} "
            f"| {r.permutation.p:.3f} |"
        )
    lines += [
        "",
        "Paired macro-F1 differences on the same anchors (the verdict reads the week-level "
        "interval):",
        "",
        "| rule | against | difference [95 % CI, anchors] | [95 % CI, weeks] | verdict |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        for b, d in r.versus.items():
            w = r.versus_grouped[b]
            if RULE_NAMES.index(b) < RULE_NAMES.index(r.name):
                continue  # each pair once
            lines.append(
                f"| {r.name} | {b} | {d.value:+.3f} [{d.low:+.3f}, {d.high:+.3f}] "
                f"| [{w.low:+.3f}, {w.high:+.3f}] | {verdict(w)} |"
            )
    lines += [
        "",
        f"`--head auto` among the reader-free candidates, on the validation period alone: "
        f"**{choice.describe()}**.",
    ]
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
