"""Every impact decision rule on the same anchors, with honest statistics (issue 27 items 3-4).

From the stored scored decisions of a validation period and a test period
(`history.scored_items`), each rule decides every test anchor at every horizon from what
had matured before that anchor's decision only (`tasks.decisions.decide_all`):

- no-skill rules: `all-neutral`, `stratified` (a seeded draw from the matured class mix),
  `momentum` (the prior five sessions' residual z beyond +-1, `baselines.momentum`, read
  from the decision's recorded `prior_z`), `tone` (the headline's finance words);
- the reader through each decision head: `none` (the raw argmax of the option scores),
  `prior`, `multinomial`, and `card` (the same model without the reader's scores: what
  the reader adds is multinomial minus card);
- each variant's stored decisions (`static`, `cited`, the shuffled-label controls), as the
  job made them.

An item is an anchor with a label at every horizon; metrics average the horizons (macro-F1,
non-neutral F1, accuracy, multi-class MCC) and their intervals resample anchors, so the
three horizons of one anchor move together; macro-F1 and the paired differences come again
with intervals that resample whole trading weeks, since anchors of one week share the
market's moves (the anchor-level interval is too narrow). Rank IC comes with an interval
that resamples prediction days.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import spearmanr

from finkg.evaluation.baselines import tone
from finkg.evaluation.metrics import Scored, _cross_sections
from finkg.evaluation.stats import (
    Interval,
    accuracy,
    macro_f1,
    multiclass_mcc,
    non_neutral_f1,
    per_column,
)
from finkg.tasks.decisions import Item, RuleFigures, decide_all, figures
from finkg.tasks.impact.history import ScoredItem
from finkg.tasks.impact.scoring import CLASSES, OPTIONS, RULES, option_logprobs

HORIZONS = (1, 3, 5)
HEADS = ("none", "prior", "multinomial", "card")
BASELINES = ("all-neutral", "stratified", "momentum", "tone", "card")
LABEL_OPTION = {v: k for k, v in OPTIONS.items()}
_NAMES = np.array(sorted(OPTIONS))
_VALUES = np.array([OPTIONS[name] for name in _NAMES])


def option_values(options: np.ndarray) -> np.ndarray:
    """Option names as the stats module's values (up 1, neutral 0, down -1), by a sorted
    lookup: a bootstrap converts every draw, and `np.vectorize` made that half its time.

    >>> option_values(np.array([["up", "down"], ["neutral", "up"]])).tolist()
    [[1, -1], [0, 1]]
    """
    names = np.asarray(options)
    at = np.minimum(np.searchsorted(_NAMES, names), len(_NAMES) - 1)
    if names.size and not np.all(_NAMES[at] == names):
        unknown = sorted(set(names[_NAMES[at] != names].ravel().tolist()))
        raise ValueError(f"not an option: {unknown[:5]} (the options are {_NAMES.tolist()})")
    return _VALUES[at]


def _metric(fn):
    """A metric over option names, as the stats module's metrics read values."""

    def over_values(p: np.ndarray, a: np.ndarray) -> float:
        return fn(option_values(p), option_values(a))

    return per_column(over_values)


METRICS = {
    "macro-F1": _metric(macro_f1),
    "non-neutral F1": _metric(non_neutral_f1),
    "ACC": _metric(accuracy),
    "MCC": _metric(multiclass_mcc),
}


def momentum_option(features: Sequence[float]) -> str:
    """`baselines.momentum` from a decision's recorded prior residual z (NaN: not enough
    history), through the job's own rule (`scoring.RULES`)."""
    rule = RULES["momentum"]
    return rule.decide(features[rule.feature])


def _item(s: ScoredItem) -> Item:
    assert s.label is not None
    return Item(
        decision=s.decision,
        matured_at=s.label.matured_at,
        scores=option_logprobs(s.logprobs),
        features=s.features,
        label=LABEL_OPTION[s.label.label],
        fixed={
            "all-neutral": "neutral",
            "momentum": momentum_option(s.features),
            "tone": LABEL_OPTION[tone(s.headline)],
        },
    )


@dataclass(frozen=True)
class Anchors:
    """The test anchors labelled at every horizon, in decision order."""

    keys: list[str]  # anchor IRIs
    tickers: list[str]
    days: list
    items: dict[int, list[ScoredItem]]  # per horizon, aligned with `keys`

    @property
    def weeks(self) -> list[tuple[int, int]]:
        """Each anchor's trading week (ISO year and week of its prediction day): anchors of
        one week share the market's moves, so honest intervals resample whole weeks."""
        return [(c.year, c.week) for c in (d.isocalendar() for d in self.days)]

    @property
    def labels(self) -> np.ndarray:
        return np.array(
            [
                [LABEL_OPTION[self.items[h][i].labelled().label] for h in HORIZONS]
                for i in range(len(self.keys))
            ]
        )


def labelled_anchors(items: Sequence[ScoredItem]) -> Anchors:
    by_anchor: dict[str, dict[int, ScoredItem]] = {}
    for s in items:
        if s.label is not None:
            by_anchor.setdefault(s.anchor, {})[s.horizon] = s
    whole = [a for a, hs in by_anchor.items() if all(h in hs for h in HORIZONS)]
    whole.sort(key=lambda a: (by_anchor[a][1].decision, a))
    return Anchors(
        whole,
        [by_anchor[a][1].ticker for a in whole],
        [by_anchor[a][1].prediction_day for a in whole],
        {h: [by_anchor[a][h] for a in whole] for h in HORIZONS},
    )


def decisions(
    validation: Sequence[ScoredItem],
    test: Anchors,
    *,
    variants: Mapping[str, Sequence[ScoredItem]] = {},
    heads: Sequence[str] = HEADS,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """Each rule's and each variant's decisions, (anchors, horizons) arrays of option names;
    `heads` the decision heads decided through (all of them by default)."""
    out: dict[str, list[list[str]]] = {}
    for h in HORIZONS:
        fitting = [_item(s) for s in validation if s.horizon == h and s.label is not None]
        made = decide_all(
            fitting, [_item(s) for s in test.items[h]], classes=CLASSES, heads=heads, seed=seed
        )
        made.pop("majority")  # all-neutral is the fixed rule: neutral is every period's majority
        for rule, chosen in made.items():
            out.setdefault(rule, []).append(chosen)
    arrays = {rule: np.array(cols).T for rule, cols in out.items()}
    for name, items in variants.items():
        stored = {(s.anchor, s.horizon): LABEL_OPTION[s.value] for s in items}
        arrays[name] = np.array([[stored[(a, h)] for h in HORIZONS] for a in test.keys])
    return arrays


def scoreboard(
    decided: Mapping[str, np.ndarray],
    test: Anchors,
    *,
    baselines: Sequence[str] = BASELINES,
    n: int = 1000,
    seed: int = 0,
) -> list[RuleFigures]:
    """Every rule's metrics with bootstrap intervals, its permutation control, and its paired
    macro-F1 difference against each baseline; macro-F1 and the differences also with
    intervals that resample whole trading weeks (`Anchors.weeks`)."""
    return figures(
        decided,
        test.labels,
        metrics=METRICS,
        baselines=baselines,
        classes=CLASSES,
        n=n,
        seed=seed,
        groups=test.weeks,
    )


def horizon_mix(decided: np.ndarray) -> dict[int, dict[str, float]]:
    """The share of each option among a rule's decisions, per horizon."""
    return {
        h: {c: float(np.mean(decided[:, j] == c)) for c in CLASSES} for j, h in enumerate(HORIZONS)
    }


def rank_ic_interval(
    decided: np.ndarray, test: Anchors, *, n: int = 1000, seed: int = 0
) -> tuple[Interval, int]:
    """Rank IC (paper 000 §4: per day, the Spearman correlation across tickers of the
    ticker-day mean decision with z; averaged over days, then horizons) with an interval
    that resamples days; and how many days it rests on."""
    rows = [
        Scored(
            t,
            d,
            h,
            OPTIONS[decided[i, j]],
            test.items[h][i].labelled().label,
            test.items[h][i].labelled().z,
        )
        for i, (t, d) in enumerate(zip(test.tickers, test.days, strict=True))
        for j, h in enumerate(HORIZONS)
    ]
    per_h = {
        h: {day: float(spearmanr(p, z).statistic) for day, (p, z) in days.items()}
        for h, days in _cross_sections(rows, None).items()
    }
    all_days = sorted({d for days in per_h.values() for d in days})
    if not all_days:
        nan = float("nan")
        return Interval(nan, nan, nan, 0), 0

    def value(chosen: Sequence) -> float:
        means = [
            statistics.fmean(per_h[h][d] for d in chosen if d in per_h[h])
            for h in per_h
            if any(d in per_h[h] for d in chosen)
        ]
        return statistics.fmean(means) if means else float("nan")

    rng = np.random.default_rng(seed)
    draws = [
        value([all_days[i] for i in rng.integers(0, len(all_days), len(all_days))])
        for _ in range(n)
    ]
    low, high = np.nanpercentile(draws, [2.5, 97.5])
    return Interval(value(all_days), float(low), float(high), len(all_days)), len(all_days)
