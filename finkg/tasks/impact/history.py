"""Stored scored decisions, labelled: what decision heads are fitted on and reports score.

`scored_items` reads one variant's scored horizon signals over a span of prediction days
from the store (`impact_scored_signals.rq`): each with the raw option log-probabilities and
the features its run recorded, the value it decided, the anchor's headline and decision
time, and, where the prices give one, its residual label and the instant it matured.
`validation_history` turns a validation period's items into the `Matured` items a head
starts from (`prequential.Prequential(history=...)`), and `citation_reads` into the
citation scores the citation head is fitted on (`citations=...`): the job and the
benchmarks fit heads on what the store holds, never on a side file.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass
from typing import Any

from finkg import queries
from finkg.evaluation.labels import PriceTable, ResidualLabel
from finkg.kg.calendar import MarketCalendar
from finkg.kg.iri import readable_keys
from finkg.kg.store import BaseStore
from finkg.retrieval.memory.source import SourceMemory
from finkg.tasks.heads import Matured
from finkg.tasks.impact.head_feed import LabelBook, matured_item
from finkg.tasks.impact.labels import prices_for
from finkg.tasks.impact.scoring import CLASSES, FEATURES, option_logprobs


@dataclass(frozen=True)
class ScoredItem:
    """One stored scored decision at one horizon, beside its label (None: no label)."""

    prediction: str
    anchor: str
    ticker: str
    headline: str
    prediction_day: dt.date
    decision: dt.datetime
    horizon: int
    value: int
    logprobs: dict[str, float]  # the options' raw log-probabilities
    features: tuple[float, ...]
    label: ResidualLabel | None
    citation: dict[str, float] | None = None  # the citation question's raw scores

    def labelled(self) -> ResidualLabel:
        """The item's label (only for a labelled item)."""
        if self.label is None:
            raise ValueError(f"{self.prediction} at {self.horizon}D has no label")
        return self.label

    def matured(self) -> Matured:
        """The item as a head learns from it (only for a labelled item)."""
        return matured_item(self.labelled(), option_logprobs(self.logprobs), self.features)


def _features(parameters: dict) -> tuple[float, ...]:
    recorded = parameters.get("features", {})
    return tuple(
        math.nan if recorded.get(name) is None else float(recorded[name]) for name in FEATURES
    )


def scored_items(
    store: BaseStore,
    memory: SourceMemory | None,
    *,
    first_day: dt.date,
    last_day: dt.date,
    proxy: str,
    calendar: MarketCalendar,
    prices: PriceTable | None = None,
) -> list[ScoredItem]:
    """The variant's (`memory`; None for static) scored signals with P in [first_day,
    last_day], in decision order, labelled from `prices` (loaded when not given)."""
    values: dict[str, object] = {"firstDay": first_day, "lastDay": last_day}
    if memory is not None:
        values["memory"] = memory.iri
    rows = queries.select(store, "impact_scored_signals", values)
    found: list[tuple[queries.Row, str, dict[str, Any], int, dict[str, Any]]] = []
    for r in rows:
        keys = readable_keys("company", r.iri("company"), base=store.graphs.base)
        if keys is None:
            continue
        parameters = json.loads(r.string("parameters"))
        horizon = r.integer("horizon")
        logprobs = parameters.get("logprobs", {}).get(f"{horizon}D")
        if logprobs is None or set(logprobs) != set(CLASSES):
            continue  # a run that did not record its scores cannot be refitted on
        found.append((r, keys[0], parameters, horizon, logprobs))
    if not found:
        return []
    if prices is None:
        pairs = [(ticker, r.date("day")) for r, ticker, *_ in found]
        prices = prices_for(store, pairs, proxy=proxy, calendar=calendar)
    book = LabelBook(prices, proxy=proxy, calendar=calendar)
    out: list[ScoredItem] = []
    for r, ticker, parameters, horizon, logprobs in found:
        day = r.date("day")
        out.append(
            ScoredItem(
                prediction=r.string("prediction"),
                anchor=r.string("anchor"),
                ticker=ticker,
                headline=r.string("headline"),
                prediction_day=day,
                decision=r.datetime("decision"),
                horizon=horizon,
                value=r.integer("value"),
                logprobs={k: float(v) for k, v in logprobs.items()},
                features=_features(parameters),
                label=book.label(ticker, day, horizon),
                citation=parameters.get("citation"),
            )
        )
    return out


def validation_history(items: list[ScoredItem]) -> dict[int, list[Matured]]:
    """The labelled items per horizon, as a head's starting history."""
    out: dict[int, list[Matured]] = {}
    for item in items:
        if item.label is not None:
            out.setdefault(item.horizon, []).append(item.matured())
    return out


def citation_reads(items: list[ScoredItem]) -> list[tuple[dt.datetime, dict[str, float]]]:
    """Each stored decision's citation scores (one per prediction), with its decision time."""
    seen: dict[str, tuple[dt.datetime, dict[str, float]]] = {}
    for item in items:
        if item.citation and item.prediction not in seen:
            seen[item.prediction] = (item.decision, dict(item.citation))
    return sorted(seen.values(), key=lambda r: r[0])


@dataclass(frozen=True)
class Start:
    """What a scored run starts from: each horizon's matured items for its decision heads,
    and the citation scores its citation head is fitted on."""

    history: dict[int, list[Matured]]
    citations: list[tuple[dt.datetime, dict[str, float]]]

    @classmethod
    def of(cls, items: list[ScoredItem]) -> Start:
        """From scored validation decisions already read (`scored_items`)."""
        return cls(validation_history(items), citation_reads(items))


def head_history(
    store: BaseStore,
    *,
    first_day: dt.date,
    last_day: dt.date,
    proxy: str,
    calendar: MarketCalendar,
) -> Start:
    """What a scored run's heads start from: the scored decisions the store holds for the
    validation period, made without memory (`static`; a run of `--variants static` over the
    validation period writes them), read once. None stored: the decision heads start empty
    and learn from the test period's matured labels alone, and no citation head is fitted."""
    items = scored_items(
        store, None, first_day=first_day, last_day=last_day, proxy=proxy, calendar=calendar
    )
    return Start.of(items)
