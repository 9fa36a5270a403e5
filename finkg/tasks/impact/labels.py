"""The prices and residual labels (paper 000 §3.4) of a set of event anchors: what the
validation weights, the prequential feedback and the benchmarks all label with."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from finkg.errors import InputError
from finkg.evaluation.labels import NoLabel, PriceTable, residual_label, span_needed
from finkg.kg.calendar import MarketCalendar
from finkg.kg.store import BaseStore
from finkg.retrieval.memory.source import HORIZONS
from finkg.tasks.impact.anchors import Anchor


def load_prices(
    store: BaseStore, anchors: Sequence[Anchor], *, proxy: str, calendar: MarketCalendar
) -> PriceTable:
    """The adjusted closes labels need for `anchors` (every ticker and the proxy); an
    empty table for no anchors, an InputError when the proxy has no bars in the span."""
    return prices_for(
        store, [(a.ticker, a.prediction_day) for a in anchors], proxy=proxy, calendar=calendar
    )


def prices_for(
    store: BaseStore,
    decisions: Sequence[tuple[str, dt.date]],
    *,
    proxy: str,
    calendar: MarketCalendar,
) -> PriceTable:
    """`load_prices` for (ticker, prediction day) pairs."""
    if not decisions:
        return PriceTable({})
    first, last = span_needed(
        calendar,
        min(day for _, day in decisions),
        max(day for _, day in decisions),
        horizon=max(HORIZONS),
    )
    prices = PriceTable.load(store, {t for t, _ in decisions} | {proxy}, first=first, last=last)
    if prices.series[proxy].empty:
        raise InputError(
            f"the market proxy has no prices from {first} to {last}",
            field="proxy",
            value=proxy,
            hint="ingest the proxy's prices, or pass --proxy with a ticker whose bars are stored",
        )
    return prices


def residual_labels(
    store: BaseStore, anchors: Sequence[Anchor], *, proxy: str, calendar: MarketCalendar
) -> dict[int, list[int]]:
    """The residual labels of `anchors` per horizon; anchors without one are left out."""
    prices = load_prices(store, anchors, proxy=proxy, calendar=calendar)
    by_h: dict[int, list[int]] = {h: [] for h in HORIZONS}
    for a in anchors:
        for h in HORIZONS:
            label = residual_label(prices, a.ticker, proxy, a.prediction_day, h, calendar=calendar)
            if not isinstance(label, NoLabel):
                by_h[h].append(label.label)
    return by_h
