"""The impact scoreboard (issue 27 items 3-4): every rule on the same anchors, decided only
from what had matured, with intervals over anchors; synthetic stored decisions, no store."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest

from finkg.evaluation.labels import ResidualLabel
from finkg.evaluation.stats import macro_f1, multiclass_mcc
from finkg.tasks.impact.history import ScoredItem
from finkg.tasks.impact.scoreboard import (
    HORIZONS,
    METRICS,
    decisions,
    labelled_anchors,
    momentum_option,
    rank_ic_interval,
    scoreboard,
)
from finkg.tasks.impact.scoring import FEATURES

UTC = dt.UTC
OPTION = {1: "up", 0: "neutral", -1: "down"}
START = dt.date(2020, 1, 6)
TICKERS = ("AAA", "BBB", "CCC", "DDD")
LOGIT = {
    1: {"up": -0.5, "neutral": -1.5, "down": -2.5},
    0: {"up": -1.5, "neutral": -0.5, "down": -2.5},
    -1: {"up": -1.5, "neutral": -2.5, "down": -0.5},
}


def _item(
    i: int, ticker: str, h: int, label: int | None, *, told: int, z: float = 0.0
) -> ScoredItem:
    """Anchor i (one a day per ticker), its reader scores pointing to `told`, its label."""
    day = START + dt.timedelta(days=i)
    decision = dt.datetime.combine(day, dt.time(9), UTC)
    matured = decision + dt.timedelta(days=h)
    features = tuple(z if name == "prior_z" else 0.0 for name in FEATURES)
    found = None
    if label is not None:
        found = ResidualLabel(ticker, day, h, 0, 0, 0, 1, 0.01, label * 1.5, label, 200, matured)
    return ScoredItem(
        prediction=f"p-{i}-{ticker}",
        anchor=f"a-{i}-{ticker}",
        ticker=ticker,
        headline="Acme beats estimates" if told == 1 else "Acme names a director",
        prediction_day=day,
        decision=decision,
        horizon=h,
        value=told,
        logprobs=dict(LOGIT[told]),
        features=features,
        label=found,
    )


def _world(n: int = 60, *, flip_after: int | None = None) -> list[ScoredItem]:
    rng = np.random.default_rng(1)
    items = []
    for i in range(n):
        for ticker in TICKERS:
            label = int(rng.choice([-1, 0, 0, 1]))
            told = label if rng.random() < 0.6 else 0
            if flip_after is not None and i >= flip_after:
                label = -label
            for h in HORIZONS:
                items.append(_item(i, ticker, h, label, told=told, z=1.5 * label))
    return items


def test_only_anchors_labelled_at_every_horizon_count_in_decision_order() -> None:
    items = _world(5)
    items[0] = _item(0, "AAA", 1, None, told=0)  # no 1D label for one anchor
    board = labelled_anchors(items)
    assert len(board.keys) == 5 * len(TICKERS) - 1 and "a-0-AAA" not in board.keys
    decisions_at = [board.items[1][i].decision for i in range(len(board.keys))]
    assert decisions_at == sorted(decisions_at)
    assert board.labels.shape == (len(board.keys), 3)


def test_every_rule_decides_every_anchor_and_the_baselines_are_what_they_say() -> None:
    items = _world()
    validation, test = items[: 20 * 12], items[20 * 12 :]
    board = labelled_anchors(test)
    made = decisions(validation, board, variants={"static": test})
    assert set(made) == {
        "stratified", "all-neutral", "momentum", "tone", "none", "prior", "multinomial",
        "card", "static",
    }  # fmt: skip
    for rule, d in made.items():
        assert d.shape == board.labels.shape, rule
    assert (made["all-neutral"] == "neutral").all()
    assert (made["momentum"] == board.labels).all()  # z = 1.5 x label, beyond the threshold
    assert set(np.unique(made["tone"])) <= {"up", "neutral"}
    # the reader's scores point to its own told value: the raw argmax reads it back
    rows = zip(*(board.items[h] for h in HORIZONS), strict=True)
    told = np.array([[OPTION[s.value] for s in row] for row in rows])
    assert (made["none"] == told).all() and (made["static"] == told).all()


def test_a_decision_never_depends_on_labels_that_matured_after_it() -> None:
    """Flipping every label from anchor 40 on changes no decision made before anchor 40's
    labels matured (all rules, heads included)."""
    plain, flipped = _world(), _world(flip_after=40)
    first = decisions(plain[:240], labelled_anchors(plain[240:]))
    second = decisions(flipped[:240], labelled_anchors(flipped[240:]))
    board = labelled_anchors(plain[240:])
    # anchors decided before day 40 plus the longest horizon: none of the flips had matured
    early = [i for i, d in enumerate(board.days) if (d - START).days < 40]
    assert len(early) > 20
    for rule in first:
        assert (first[rule][early] == second[rule][early]).all(), rule
    assert any((first[r] != second[r]).any() for r in ("prior", "multinomial", "card"))


def test_figures_average_the_horizons_and_intervals_cover_the_value() -> None:
    items = _world()
    board = labelled_anchors(items[240:])
    made = decisions(items[:240], board, variants={"static": items[240:]})
    rows = scoreboard(made, board, n=200)
    by = {r.name: r for r in rows}
    y = board.labels
    for rule, d in made.items():
        expected = np.mean([macro_f1(_v(d[:, j]), _v(y[:, j])) for j in range(3)])
        got = by[rule].metrics["macro-F1"]
        assert math.isclose(got.value, expected) and got.low <= got.value <= got.high
        assert got.n == len(board.keys)
    perfect = np.mean([multiclass_mcc(_v(y[:, j]), _v(y[:, j])) for j in range(3)])
    assert math.isclose(by["momentum"].metrics["MCC"].value, perfect)
    assert by["momentum"].metrics["macro-F1"].value == 1.0 and by["momentum"].permutation.p < 0.01
    assert by["all-neutral"].permutation.p == 1.0  # a constant cannot be reordered
    assert set(by["prior"].versus) == {"all-neutral", "stratified", "momentum", "tone", "card"}
    d = by["all-neutral"].versus["momentum"]
    f1 = METRICS["macro-F1"]
    assert d.high < 0
    assert math.isclose(d.value, f1(made["all-neutral"], y) - f1(made["momentum"], y))
    # macro-F1 and the differences again, whole trading weeks resampled
    assert len(board.weeks) == len(board.keys)
    assert board.weeks == [(d.isocalendar().year, d.isocalendar().week) for d in board.days]
    for r in rows:
        assert r.grouped is not None and r.grouped.value == r.metrics["macro-F1"].value
        assert set(r.versus_grouped) == set(r.versus)
    assert by["all-neutral"].versus_grouped["momentum"].value == d.value


def test_rank_ic_of_a_perfect_rule_is_one_and_rests_on_days() -> None:
    items = _world(30)
    board = labelled_anchors(items)
    interval, days = rank_ic_interval(board.labels, board, n=100)
    assert days > 10 and interval.value == pytest.approx(1.0) and interval.low == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("z", "option"), [(1.2, "up"), (-1.01, "down"), (0.99, "neutral"), (float("nan"), "neutral")]
)
def test_momentum_reads_the_recorded_prior_z(z: float, option: str) -> None:
    features = [0.0] * len(FEATURES)
    features[FEATURES.index("prior_z")] = z
    features[FEATURES.index("tone")] = -1.0  # read by the tone rule, never by momentum
    assert momentum_option(features) == option


def _v(a: np.ndarray) -> np.ndarray:
    return np.vectorize({"up": 1, "neutral": 0, "down": -1}.get)(a)
