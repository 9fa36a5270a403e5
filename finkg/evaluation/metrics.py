"""Event-level metrics of paper 000 §4 over predictions and their matured labels.

- macro-F1 over the classes -1, 0, +1, per horizon and averaged over horizons;
- non-neutral F1: the mean F1 of the +1 and -1 classes only;
- rank IC: per prediction day, the Spearman correlation across tickers between the
  ticker-day prediction (anchor predictions averaged) and the standardised residual z;
  averaged over days (days with fewer than three tickers, or no spread, are skipped) and
  then over horizons;
- citation rate: the share of outputs citing at least one valid retrieved id.

>>> rows = [Scored("A", dt.date(2020, 5, 1), 1, p, y, z) for p, y, z in
...         [(1, 1, 1.5), (0, 0, 0.1), (-1, 0, -0.2), (1, 1, 2.0)]]
>>> round(macro_f1(rows, 1), 3), round(non_neutral_f1(rows, 1), 3)
(0.556, 0.5)
"""

from __future__ import annotations

import datetime as dt
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import spearmanr

if TYPE_CHECKING:
    from finkg.evaluation.audit import ContextAudit
    from finkg.evaluation.backtest import Performance

CLASSES = (-1, 0, 1)


@dataclass(frozen=True)
class Scored:
    """One anchor's prediction at one horizon beside what the market said."""

    ticker: str
    day: dt.date  # the prediction day P
    horizon: int
    predicted: float  # the class, -1, 0 or 1; a ticker-day's mean of them (`ticker_days`)
    label: int
    z: float


def _f1(rows: Sequence[Scored], cls: int) -> float:
    tp = sum(r.predicted == cls and r.label == cls for r in rows)
    fp = sum(r.predicted == cls and r.label != cls for r in rows)
    fn = sum(r.predicted != cls and r.label == cls for r in rows)
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def _at(rows: Iterable[Scored], horizon: int | None) -> list[Scored]:
    return [r for r in rows if horizon is None or r.horizon == horizon]


def macro_f1(rows: Iterable[Scored], horizon: int) -> float:
    chosen = _at(rows, horizon)
    return statistics.fmean(_f1(chosen, c) for c in CLASSES) if chosen else float("nan")


def non_neutral_f1(rows: Iterable[Scored], horizon: int | None = None) -> float:
    """Mean F1 of +1 and -1; over all horizons pooled by horizon mean when `horizon` is None."""
    rows = list(rows)
    horizons = sorted({r.horizon for r in rows}) if horizon is None else [horizon]
    values = [
        statistics.fmean(_f1(_at(rows, h), c) for c in (-1, 1)) for h in horizons if _at(rows, h)
    ]
    return statistics.fmean(values) if values else float("nan")


def ticker_days(rows: Iterable[Scored]) -> list[Scored]:
    """Anchors of one ticker and prediction day averaged into one stock-day signal per horizon
    (the prediction becomes the mean, the label and z are the day's own)."""
    groups: dict[tuple[str, dt.date, int], list[Scored]] = defaultdict(list)
    for r in rows:
        groups[(r.ticker, r.day, r.horizon)].append(r)
    out = []
    for (ticker, day, h), g in sorted(groups.items()):
        mean = statistics.fmean(r.predicted for r in g)
        out.append(Scored(ticker, day, h, mean, g[0].label, g[0].z))
    return out


def _cross_sections(
    rows: Iterable[Scored], horizon: int | None
) -> dict[int, dict[dt.date, tuple[np.ndarray, np.ndarray]]]:
    """Per horizon, the days with a cross-section to rank: three tickers or more, and
    spread in both the signals and z."""
    stock_days = ticker_days(rows)
    horizons = sorted({r.horizon for r in stock_days}) if horizon is None else [horizon]
    found: dict[int, dict[dt.date, tuple[np.ndarray, np.ndarray]]] = {}
    for h in horizons:
        by_day: dict[dt.date, list[Scored]] = defaultdict(list)
        for r in stock_days:
            if r.horizon == h:
                by_day[r.day].append(r)
        found[h] = {}
        for day, g in by_day.items():
            pred = np.array([r.predicted for r in g], dtype=float)
            z = np.array([r.z for r in g], dtype=float)
            if len(g) >= 3 and pred.std() > 0 and z.std() > 0:
                found[h][day] = (pred, z)
    return found


def rank_ic(rows: Iterable[Scored], horizon: int | None = None) -> float:
    """Mean daily cross-sectional Spearman correlation of ticker-day signals with z
    (`rank_ic_days` says over how many days)."""
    per_h = [
        statistics.fmean(float(spearmanr(pred, z).statistic) for pred, z in days.values())
        for days in _cross_sections(rows, horizon).values()
        if days
    ]
    return statistics.fmean(per_h) if per_h else float("nan")


def rank_ic_days(rows: Iterable[Scored], horizon: int | None = None) -> int:
    """How many prediction days `rank_ic` rests on (a day with a cross-section at any
    horizon): with a few tickers, only the days on which three or more were predicted."""
    return len({day for days in _cross_sections(rows, horizon).values() for day in days})


def citation_rate(cited_counts: Iterable[int]) -> float:
    counts = list(cited_counts)
    return sum(c > 0 for c in counts) / len(counts) if counts else float("nan")


@dataclass(frozen=True)
class VariantResult:
    variant: str
    predictions: int
    labelled: int
    macro_f1: dict[int, float]
    macro_f1_all: float
    non_neutral_f1: float
    rank_ic: float
    citation_rate: float
    portfolio: Performance | None  # the §4.4 portfolio of its 3D signals
    audit: ContextAudit  # future-document and near-duplicate anchor rates of its context
    rank_ic_days: int = 0  # the prediction days rank_ic rests on


# --- movement forecasts (paper 001 §4) ------------------------------------------------------

MOVEMENT_VALUE = {"rise": 1, "freeze": 0, "fall": -1}


def _binary(predicted: Sequence[str], actual: Sequence[str]) -> list[tuple[str, str]]:
    if len(predicted) != len(actual):
        raise ValueError(f"{len(predicted)} predictions for {len(actual)} labels")
    return [(p, a) for p, a in zip(predicted, actual, strict=True) if a in ("rise", "fall")]


def movement_accuracy(predicted: Sequence[str], actual: Sequence[str]) -> float:
    """ACC over non-freeze queries (paper 001 §2: freeze cases are not evaluated).

    >>> movement_accuracy(["rise", "fall", "rise"], ["rise", "rise", "freeze"])
    0.5
    """
    pairs = _binary(predicted, actual)
    return sum(p == a for p, a in pairs) / len(pairs) if pairs else float("nan")


def movement_mcc(predicted: Sequence[str], actual: Sequence[str]) -> float:
    """Matthews correlation over non-freeze queries, rise the positive class (0 when a
    margin is empty, as scikit-learn does).

    >>> movement_mcc(["rise", "fall", "rise", "fall"], ["rise", "fall", "fall", "fall"])
    0.57735
    """
    pairs = _binary(predicted, actual)
    tp = sum(p == "rise" and a == "rise" for p, a in pairs)
    tn = sum(p == "fall" and a == "fall" for p, a in pairs)
    fp = sum(p == "rise" and a == "fall" for p, a in pairs)
    fn = sum(p == "fall" and a == "rise" for p, a in pairs)
    denominator = ((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)) ** 0.5
    return round((tp * tn - fp * fn) / denominator, 6) if denominator else 0.0


def candidate_movement_correlation(
    retrieved: Sequence[Sequence[str]], predicted: Sequence[str]
) -> tuple[float, float]:
    """Pearson r and its p-value between the mean movement of each query's retrieved
    windows (rise 1, freeze 0, fall -1) and the prediction (paper 001 appendix B.2).
    Queries without retrieved windows are left out; NaN when either side is constant.

    >>> r, p = candidate_movement_correlation(
    ...     [["rise", "rise"], ["fall", "freeze"], ["rise", "fall"], ["fall", "fall"]],
    ...     ["rise", "fall", "rise", "fall"])
    >>> round(r, 3)
    0.845
    """
    from scipy.stats import pearsonr

    xs, ys = [], []
    for moves, p in zip(retrieved, predicted, strict=True):
        if moves:
            xs.append(sum(MOVEMENT_VALUE[m] for m in moves) / len(moves))
            ys.append(MOVEMENT_VALUE[p])
    if len(xs) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return float("nan"), float("nan")
    result = pearsonr(xs, ys)
    return float(result.statistic), float(result.pvalue)


def indicator_occurrences(retrieved: Iterable[Sequence[str]]) -> dict[str, int]:
    """How often each indicator group appears among the retrieved windows (paper 001
    Figure 2), groups as in `finkg.kg.derive.indicators.GROUPS`, most frequent first.

    >>> indicator_occurrences([["rsi", "kdj_k"], ["kdj_d", "close"]])
    {'kdj': 2, 'close': 1, 'rsi': 1}
    """
    from finkg.kg.derive.indicators import GROUPS

    group_of = {s: g for g, names in GROUPS.items() for s in names}
    counts: dict[str, int] = defaultdict(int)
    for names in retrieved:
        for name in names:
            counts[group_of.get(name, name)] += 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
