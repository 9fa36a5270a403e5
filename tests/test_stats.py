"""The report statistics: bootstrap intervals, paired differences, permutation controls."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from finkg.evaluation import metrics
from finkg.evaluation.stats import (
    accuracy,
    bootstrap,
    macro_f1,
    mcc,
    non_neutral_f1,
    paired,
    permutation,
    verdict,
)

RNG = np.random.default_rng(7)
LABELS = RNG.choice([-1, 0, 1], size=400, p=[0.25, 0.5, 0.25])


def test_macro_f1_agrees_with_the_report_metrics_module() -> None:
    predicted = RNG.choice([-1, 0, 1], size=len(LABELS))
    rows = [
        metrics.Scored("T", dt.date(2020, 1, 1), 1, int(p), int(y), 0.0)
        for p, y in zip(predicted, LABELS, strict=True)
    ]
    assert macro_f1(predicted, LABELS) == pytest.approx(metrics.macro_f1(rows, 1))
    assert non_neutral_f1(predicted, LABELS) == pytest.approx(metrics.non_neutral_f1(rows, 1))


def test_a_bootstrap_interval_holds_the_value_and_narrows_with_more_items() -> None:
    noisy = np.where(RNG.random(len(LABELS)) < 0.6, LABELS, 0)
    wide = bootstrap(macro_f1, noisy[:50], LABELS[:50], n=300)
    narrow = bootstrap(macro_f1, noisy, LABELS, n=300)
    assert wide.low < wide.value < wide.high and narrow.low < narrow.value < narrow.high
    assert narrow.high - narrow.low < wide.high - wide.low
    assert narrow.n == 400
    assert bootstrap(macro_f1, noisy, LABELS, n=300) == narrow  # seeded


def test_a_paired_difference_of_a_method_with_itself_is_exactly_zero() -> None:
    same = paired(macro_f1, LABELS, LABELS, LABELS, n=200)
    assert (same.value, same.low, same.high) == (0.0, 0.0, 0.0)
    assert verdict(same) == "no difference"


def test_a_paired_difference_tells_better_from_worse() -> None:
    good = np.where(RNG.random(len(LABELS)) < 0.8, LABELS, 0)
    neutral = np.zeros_like(LABELS)
    diff = paired(macro_f1, good, neutral, LABELS, n=300)
    assert diff.low > 0 and verdict(diff) == "better"
    assert verdict(paired(macro_f1, neutral, good, LABELS, n=300)) == "worse"


def test_the_permutation_control_separates_content_from_class_mix() -> None:
    informed = np.where(RNG.random(len(LABELS)) < 0.7, LABELS, -LABELS)
    shuffled = RNG.permutation(informed)  # the same class mix, no content
    real = permutation(macro_f1, informed, LABELS, n=300)
    blind = permutation(macro_f1, shuffled, LABELS, n=300)
    assert real.p < 0.01 and real.excess > 0.2
    assert blind.p > 0.05 and abs(blind.excess) < 0.05


def test_accuracy_and_mcc_of_two_class_decisions() -> None:
    actual = ["rise", "fall", "rise", "fall"]
    assert accuracy(actual, actual) == 1.0 and mcc(actual, actual) == pytest.approx(1.0)
    assert mcc(["rise"] * 4, actual) == 0.0  # a constant forecast has no correlation
    assert mcc(["fall", "rise", "fall", "rise"], actual) == pytest.approx(-1.0)


def test_mismatched_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="differ in shape"):
        macro_f1([1, 0], [1, 0, 0])


def test_resampling_whole_weeks_widens_the_interval_where_items_of_a_week_move_together() -> None:
    # 20 weeks of 20 items; in each week the rule is right on all items or on none, as when
    # one market move decides every anchor of the week
    weeks = np.repeat(np.arange(20), 20)
    right_week = np.random.default_rng(3).random(20) < 0.6
    predicted = np.where(right_week[weeks], LABELS, -LABELS - (LABELS == 0))
    by_item = bootstrap(accuracy, predicted, LABELS, n=400)
    by_week = bootstrap(accuracy, predicted, LABELS, n=400, groups=weeks.tolist())
    assert by_week.value == by_item.value
    assert by_week.high - by_week.low > 2 * (by_item.high - by_item.low)
    neutral = np.zeros_like(LABELS)
    d_item = paired(accuracy, predicted, neutral, LABELS, n=400)
    d_week = paired(accuracy, predicted, neutral, LABELS, n=400, groups=weeks.tolist())
    assert d_week.value == d_item.value
    assert d_week.high - d_week.low > 2 * (d_item.high - d_item.low)
    same = paired(accuracy, predicted, predicted, LABELS, n=100, groups=weeks.tolist())
    assert (same.low, same.high) == (0.0, 0.0)


def test_a_group_key_per_item_is_required() -> None:
    with pytest.raises(ValueError, match="3 group keys for 400 items"):
        bootstrap(accuracy, LABELS, LABELS, n=10, groups=[1, 2, 3])
