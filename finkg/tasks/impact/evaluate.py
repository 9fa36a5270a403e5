"""Scoring one variant's stored impact predictions (paper 000 §4): the event-level metrics,
the audit of the context it read, and the §4.4 portfolio of its 3D stock-day scores."""

from __future__ import annotations

import datetime as dt

from pyoxigraph import NamedNode

from finkg import queries
from finkg.evaluation.audit import ContextUse, audit
from finkg.evaluation.backtest import DayScore, portfolio, returns_panel
from finkg.evaluation.labels import NoLabel, PriceTable, residual_label
from finkg.evaluation.metrics import (
    Scored,
    VariantResult,
    citation_rate,
    macro_f1,
    non_neutral_f1,
    rank_ic,
    rank_ic_days,
)
from finkg.kg.calendar import MarketCalendar
from finkg.kg.iri import readable_keys
from finkg.kg.store import BaseStore
from finkg.queries.results import python_value
from finkg.retrieval.memory.source import HORIZONS, SourceMemory
from finkg.retrieval.pools import VectorSource


def evaluate(
    store: BaseStore,
    variant: str,
    *,
    memory: SourceMemory | None,
    first_day: dt.date,
    last_day: dt.date,
    calendar: MarketCalendar,
    proxy: str,
    prices: PriceTable,
    vectors: VectorSource,
    near_duplicate: float = 0.9,
    k: int = 10,
) -> VariantResult:
    """§4 metrics, the validity audit of the context read, and the §4.4 portfolio of one
    variant's stored predictions (`memory`: the variant's, None for static)."""
    values: dict[str, object] = {"firstDay": first_day, "lastDay": last_day}
    if memory is not None:
        values["memory"] = memory.iri
    rows = queries.select(store, "impact_predictions", values)
    scored: list[Scored] = []
    cited: dict[NamedNode, int] = {}  # prediction -> its rows' ?cited, summed
    scores: dict[tuple[str, dt.date], list[tuple[int, float]]] = {}  # (ticker, day) -> h=3
    for r in rows:
        keys = readable_keys("company", r.iri("company"), base=store.graphs.base)
        if keys is None:
            continue
        day, h, value = r.date("day"), r.integer("horizon"), r.integer("value")
        prediction = r.iri("prediction")
        cited.setdefault(prediction, 0)
        cited[prediction] += r.integer("cited")
        label = residual_label(prices, keys[0], proxy, day, h, calendar=calendar)
        if h == 3:
            static = r.maybe_double("static") or 0.0
            scores.setdefault((keys[0], day), []).append((value, static))
        if isinstance(label, NoLabel):
            continue
        scored.append(Scored(keys[0], day, h, value, label.label, label.z))
    day_scores = [
        DayScore(t, d, sum(v for v, _ in g) / len(g), sum(s for _, s in g) / len(g))
        for (t, d), g in scores.items()
    ]
    sessions = held_sessions(calendar, first_day, last_day)
    tickers = sorted({t for t, _ in scores})
    closes = {t: prices.series[t] for t in tickers if t in prices.series}
    perf = (
        portfolio(variant, day_scores, returns_panel(closes, sessions), k=k)
        if closes and sessions
        else None
    )
    return VariantResult(
        variant=variant,
        predictions=len(cited),
        labelled=len(scored),
        macro_f1={h: macro_f1(scored, h) for h in HORIZONS},
        macro_f1_all=sum(macro_f1(scored, h) for h in HORIZONS) / len(HORIZONS),
        non_neutral_f1=non_neutral_f1(scored),
        rank_ic=rank_ic(scored),
        rank_ic_days=rank_ic_days(scored),
        citation_rate=citation_rate(cited.values()),
        portfolio=perf,
        audit=audit(_context_uses(store, values), vectors.vectors, threshold=near_duplicate),
    )


def held_sessions(calendar: MarketCalendar, first: dt.date, last: dt.date) -> list[dt.date]:
    """The sessions from `first` to three after `last` (the longest sleeve holds 3 days);
    `last` may be a weekend or holiday (a span ending at a Monday midnight)."""
    last = last if calendar.is_session(last) else calendar.previous_session(last)
    return calendar.sessions(first, calendar.session_offset(last, 3))


def _context_uses(store: BaseStore, values: dict[str, object]) -> list[ContextUse]:
    rows = queries.select(store, "impact_context", values)
    return [
        ContextUse(
            r.iri("prediction"),
            r.iri("news"),
            python_value(r.term("decision")),
            r.iri("evidence"),
            None if r.maybe("available") is None else python_value(r.term("available")),
        )
        for r in rows
    ]


# -- one call per command -----------------------------------------------------------------
