"""The event-impact job end to end (paper 000 §4): variants, validation weights, runs, backtest.

- Variants name the memory a run reads: `static` (none), `cited` (the method),
  `selected-evidence`, `shuffled-event-types`, `shuffled-labels` (seed 0), or
  `shuffled-labels:3` for another seed. Each has its own memory node, so all of them can
  run over one store.
- Class weights w_y = 1 / (3 pi_y) and the shuffled-label draw come from the residual labels
  of the validation period's anchors, per horizon, fixed before the test run.
- `backtest` reads a variant's stored predictions, labels each (anchor, horizon) from the
  store's prices, and computes the §4 metrics and the §4.4 portfolio.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from finkg.config import Settings
from finkg.errors import InputError
from finkg.evaluation.backtest import Performance, returns_panel
from finkg.evaluation.metrics import (
    VariantResult,
)
from finkg.kg.calendar import MarketCalendar
from finkg.kg.store import BaseStore
from finkg.reader.llm import LLM
from finkg.reader.read import OutputCache
from finkg.retrieval.memory.source import VARIANTS, SourceMemory, class_weights, label_mix
from finkg.retrieval.memory.source import source_memory as memory_named
from finkg.retrieval.pools import VectorSource
from finkg.tasks.impact.anchors import Anchor, anchors
from finkg.tasks.impact.evaluate import evaluate, held_sessions
from finkg.tasks.impact.feedback import FeedbackReport, feedback
from finkg.tasks.impact.history import head_history
from finkg.tasks.impact.labels import load_prices, residual_labels
from finkg.tasks.impact.predict import ImpactConfig
from finkg.tasks.impact.prequential import Prequential, RunSummary
from finkg.tasks.span import Span

STATIC = "static"


def memory_of(store: BaseStore, variant: str) -> SourceMemory | None:
    """The memory a variant reads (`shuffled-labels:3` is the shuffled-label memory, seed 3)."""
    if variant == STATIC:
        return None
    kind, _, seed = variant.partition(":")
    if kind not in VARIANTS or (seed and not seed.isdigit()):
        raise InputError(
            "unknown variant",
            field="variant",
            value=variant,
            hint="use static, " + ", ".join(VARIANTS) + ", or shuffled-labels:SEED",
        )
    return memory_named(store, variant.replace(":", "-"), variant=kind, seed=int(seed or 0))


@dataclass(frozen=True)
class Validation:
    weights: dict[int, dict[int, float]]
    mix: dict[int, dict[int, float]]
    labels: int  # labelled anchor-horizon pairs behind them
    anchors: tuple[Anchor, ...] = ()  # the validation period's anchors


def validation(
    store: BaseStore,
    *,
    start: dt.datetime,
    end: dt.datetime,
    calendar: MarketCalendar,
    proxy: str,
) -> Validation:
    """Class weights and label mix per horizon from the validation period's anchors."""
    found = anchors(store, start=start, end=end, calendar=calendar)
    if not found:
        raise InputError(
            "no news anchors in the validation period",
            field="validation",
            value=f"{start.isoformat()}..{end.isoformat()}",
            hint="choose a period the store holds news for",
        )
    by_h = residual_labels(store, found, proxy=proxy, calendar=calendar)
    if not any(by_h.values()):
        raise InputError(
            "no validation anchor could be labelled (too little price history)",
            field="validation",
            value=f"{start.isoformat()}..{end.isoformat()}",
            hint="ingest prices from at least six months before the period",
        )
    return Validation(
        {h: class_weights(v) for h, v in by_h.items()},
        {h: label_mix(v) for h, v in by_h.items()},
        sum(len(v) for v in by_h.values()),
        tuple(found),
    )


def _validated(
    store: BaseStore, variants: Sequence[str], span: Span, proxy: str
) -> tuple[MarketCalendar, Validation]:
    """The calendar and the validation period's weights, after refusing an unknown variant
    (before any work)."""
    from finkg.kg.calendar import get_calendar

    for v in variants:
        memory_of(store, v)
    calendar = get_calendar()
    found = validation(store, start=span.start, end=span.end, calendar=calendar, proxy=proxy)
    return calendar, found


def run_job(
    store: BaseStore,
    settings: Settings,
    *,
    test: Span,
    validation_span: Span,
    variants: Sequence[str],
    config: ImpactConfig,
    llm: LLM | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> tuple[Validation, dict[str, RunSummary]]:
    """`finkg impact run`: indexes refreshed, weights from validation, variants run."""
    from finkg.reader.transport.backends import open_reader
    from finkg.retrieval.index.indexes import open_indexes

    calendar, validated = _validated(store, variants, validation_span, config.proxy)
    texts, vectors, _ = open_indexes(
        store,
        settings,
        progress=None if progress is None else lambda stage, i, n: progress(stage, i, n or 0),
    )
    llm = llm or open_reader(settings)
    cache = OutputCache(settings.cache_dir / "replies.sqlite")
    start = head_history(
        store,
        first_day=validation_span.first_day,
        last_day=validation_span.last_day,
        proxy=config.proxy,
        calendar=calendar,
    )
    found = anchors(store, start=test.start, end=test.end, calendar=calendar)
    run = Prequential(
        store,
        llm,
        texts,
        vectors,
        calendar,
        validated.weights,
        validated.mix,
        config=config,
        cache=cache,
        prices=load_prices(store, found, proxy=config.proxy, calendar=calendar),
        history=start.history,
        since=validation_span.end.date(),
        citations=start.citations,
    )
    # every variant over the anchors of the test span, in one time-ordered pass; a scored
    # reply's heads start from the validation history and learn from decisions stored
    # since the validation span's end; its citation head is fitted on the earlier reads
    stage = f"anchors x {len(variants)} variants"
    runs = run.run(
        found,
        {v: memory_of(store, v) for v in variants},
        keep_results=False,
        progress=None if progress is None else lambda i, n: progress(stage, i, n),
    )
    return validated, runs


def backtest_job(
    store: BaseStore,
    *,
    test: Span,
    variants: Sequence[str],
    proxy: str,
    png: Path | None,
    vectors: VectorSource,
    near_duplicate: float = 0.9,
) -> tuple[list[VariantResult], list[Performance]]:
    """`finkg impact backtest`: each variant's metrics, audit and portfolio, and the
    benchmarks. `vectors` embeds anchors and passages for the near-duplicate audit (the
    embedder the runs retrieved with)."""
    from finkg.evaluation.backtest import equal_weight, equity_png
    from finkg.evaluation.backtest import proxy as proxy_performance
    from finkg.kg.calendar import get_calendar

    for v in variants:
        memory_of(store, v)  # refuse an unknown variant before any work
    calendar = get_calendar()
    found = anchors(store, start=test.start, end=test.end, calendar=calendar)
    if not found:
        raise InputError(
            "no news anchors in the test period",
            field="--from/--to",
            value=f"{test.first_day}..{test.last_day}",
        )
    prices = load_prices(store, found, proxy=proxy, calendar=calendar)
    results = [
        evaluate(
            store,
            v,
            memory=memory_of(store, v),
            first_day=test.first_day,
            last_day=test.last_day,
            calendar=calendar,
            proxy=proxy,
            prices=prices,
            vectors=vectors,
            near_duplicate=near_duplicate,
        )
        for v in variants
    ]
    sessions = held_sessions(calendar, test.first_day, test.last_day)
    universe = sorted({a.ticker for a in found})
    closes = {t: prices.series[t] for t in universe if t in prices.series}
    panel = returns_panel(closes, sessions)
    market = returns_panel({proxy: prices.series[proxy]}, sessions)[proxy]
    benchmarks = [proxy_performance(proxy, market), equal_weight("equal-weight universe", panel)]
    if png is not None:
        equity_png(str(png), [*(r.portfolio for r in results if r.portfolio), *benchmarks])
    return results, benchmarks


def feedback_job(
    store: BaseStore,
    *,
    as_of: dt.datetime,
    since: dt.date,
    variants: Sequence[str],
    validation_span: Span,
    proxy: str,
) -> dict[str, FeedbackReport]:
    """`finkg impact feedback`: outcomes and memory updates for every memory variant's
    predictions made since `since` whose horizons matured by `as_of`."""
    calendar, validated = _validated(store, variants, validation_span, proxy)
    found = anchors(
        store,
        start=dt.datetime.combine(since, dt.time(0), as_of.tzinfo),
        end=as_of,
        calendar=calendar,
    )
    prices = load_prices(store, found, proxy=proxy, calendar=calendar)
    out = {}
    for variant in variants:
        memory = memory_of(store, variant)
        if memory is None:
            continue  # static retrieval keeps no memory
        out[variant] = feedback(
            store,
            memory,
            as_of=as_of,
            first_day=since,
            prices=prices,
            calendar=calendar,
            proxy=proxy,
            weights=validated.weights,
            mix=validated.mix,
        )
    return out
