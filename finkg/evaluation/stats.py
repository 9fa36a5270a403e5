"""Honest statistics for class decisions: bootstrap CIs, paired differences, permutation.

Every figure in an impact or movement report is a metric over items (anchors, queries) with
its 95 % bootstrap interval (items resampled with replacement, percentile interval); a
comparison of two methods on the same items resamples the items once for both (a paired
interval of the difference). Items that share a day share the market's move, so `groups`
(each item's trading week, say) makes both resample whole groups instead: the honest
interval when items cluster, often 2-3x wider than the item-level one. The permutation
control shuffles a method's predictions across the items and asks how often a shuffle
scores as well (the content signal left when the class mix is held fixed). A difference
whose interval contains zero is reported as no difference (`verdict`). Seeded: the same
inputs give the same intervals.

>>> y = [1, 0, -1, 0, 0, 1, -1, 0]
>>> round(macro_f1(y, y), 3), round(macro_f1([0] * 8, y), 3)
(1.0, 0.222)
>>> ci = bootstrap(macro_f1, [0] * 8, y, n=200)
>>> ci.value == macro_f1([0] * 8, y) and ci.low <= ci.value <= ci.high
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

Metric = Callable[[np.ndarray, np.ndarray], float]
CLASSES = (-1, 0, 1)


def _arrays(predicted: ArrayLike, actual: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Items are rows: one value per item, or one row of values per item (an anchor's
    decisions at each horizon), resampled and shuffled together."""
    p, a = np.asarray(predicted), np.asarray(actual)
    if p.shape != a.shape or p.ndim not in (1, 2):
        raise ValueError(f"predictions and labels differ in shape: {p.shape} and {a.shape}")
    return p, a


def f1_of(predicted: ArrayLike, actual: ArrayLike, cls: object) -> float:
    p, a = _arrays(predicted, actual)
    said, was = p == cls, a == cls
    tp = int(np.count_nonzero(said & was))
    wrong = int(np.count_nonzero(said != was))
    return 2 * tp / (2 * tp + wrong) if tp else 0.0


def macro_f1(predicted: ArrayLike, actual: ArrayLike, classes: Sequence = CLASSES) -> float:
    """Mean F1 over `classes` (paper 000 §4: -1, 0, +1), a class never seen scoring 0."""
    return float(np.mean([f1_of(predicted, actual, c) for c in classes]))


def non_neutral_f1(predicted: ArrayLike, actual: ArrayLike) -> float:
    return float(np.mean([f1_of(predicted, actual, c) for c in (-1, 1)]))


def accuracy(predicted: ArrayLike, actual: ArrayLike) -> float:
    p, a = _arrays(predicted, actual)
    return float(np.mean(p == a)) if len(p) else 0.0


def multiclass_mcc(predicted: ArrayLike, actual: ArrayLike, classes: Sequence = CLASSES) -> float:
    """Matthews correlation over several classes (Gorodkin's R_K; 0 when either side is
    constant); for two classes it equals `mcc`.

    >>> round(multiclass_mcc([1, 0, -1, 0], [1, 0, -1, 1]), 3)
    0.7
    """
    p, a = _arrays(predicted, actual)
    index = {c: i for i, c in enumerate(classes)}
    confusion = np.zeros((len(classes), len(classes)))
    for x, y in zip(p.ravel(), a.ravel(), strict=True):
        confusion[index[y], index[x]] += 1
    t, q = confusion.sum(axis=1), confusion.sum(axis=0)
    c, s = float(np.trace(confusion)), float(confusion.sum())
    den = np.sqrt((s * s - float(q @ q)) * (s * s - float(t @ t)))
    return float((c * s - float(t @ q)) / den) if den else 0.0


def per_column(metric: Metric) -> Metric:
    """`metric` averaged over the columns of 2-D items (an anchor's horizons)."""

    def averaged(predicted: np.ndarray, actual: np.ndarray) -> float:
        p, a = np.asarray(predicted), np.asarray(actual)
        if p.ndim == 1:
            return metric(p, a)
        return float(np.mean([metric(p[:, j], a[:, j]) for j in range(p.shape[1])]))

    return averaged


def mcc(predicted: ArrayLike, actual: ArrayLike, positive: object = "rise") -> float:
    """Matthews correlation of a two-class decision (0 when either side is constant)."""
    p, a = _arrays(predicted, actual)
    p, a = p == positive, a == positive
    tp, tn = float(np.sum(p & a)), float(np.sum(~p & ~a))
    fp, fn = float(np.sum(p & ~a)), float(np.sum(~p & a))
    den = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return float((tp * tn - fp * fn) / den) if den else 0.0


@dataclass(frozen=True)
class Interval:
    """A metric's value on all items and its 95 % bootstrap interval."""

    value: float
    low: float
    high: float
    n: int

    def contains_zero(self) -> bool:
        return self.low <= 0.0 <= self.high

    def __str__(self) -> str:
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"


def _resamples(n_items: int, n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n_items, size=(n, n_items))


def _cluster_resamples(groups: Sequence, n: int, seed: int) -> list[np.ndarray]:
    """Item indices of `n` resamples that draw whole groups (days, weeks, companies) with
    replacement: items of one group share what moves them, and resampling them one by one
    would make the interval too narrow."""
    members: dict[object, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    blocks = [np.asarray(m) for m in members.values()]
    draws = np.random.default_rng(seed).integers(0, len(blocks), size=(n, len(blocks)))
    return [np.concatenate([blocks[j] for j in row]) for row in draws]


def mean_by_groups(
    values: Sequence[float], groups: Sequence, *, n: int = 1000, seed: int = 0
) -> Interval:
    """The mean of per-item `values` with a 95 % interval that resamples `groups` whole.

    >>> ci = mean_by_groups([1, 1, 0, 0, 1, 0], ["a", "a", "b", "b", "c", "c"], n=200)
    >>> ci.value, ci.n, ci.low <= 0.5 <= ci.high
    (0.5, 6, True)
    """
    x = np.asarray(values, dtype=float)
    if len(x) == 0:
        raise ValueError("no items to score")
    means = [float(x[i].mean()) for i in _cluster_resamples(list(groups), n, seed)]
    low, high = np.percentile(means, [2.5, 97.5])
    return Interval(float(x.mean()), float(low), float(high), len(x))


def paired_by_groups(
    first: Sequence[float],
    second: Sequence[float],
    groups: Sequence,
    *,
    n: int = 1000,
    seed: int = 0,
) -> Interval:
    """mean(first) - mean(second) on the same items, groups resampled whole for both."""
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if a.shape != b.shape or len(a) == 0:
        raise ValueError(f"paired values differ in shape or are empty: {a.shape}, {b.shape}")
    diffs = [float(a[i].mean() - b[i].mean()) for i in _cluster_resamples(list(groups), n, seed)]
    low, high = np.percentile(diffs, [2.5, 97.5])
    return Interval(float(a.mean() - b.mean()), float(low), float(high), len(a))


def _draws(n_items: int, groups: Sequence | None, n: int, seed: int) -> Sequence[np.ndarray]:
    """Item indices of `n` resamples: items one by one, or whole `groups` (one key per item)."""
    if groups is None:
        return list(_resamples(n_items, n, seed))
    if len(groups) != n_items:
        raise ValueError(f"{len(groups)} group keys for {n_items} items: give one per item")
    return _cluster_resamples(list(groups), n, seed)


def bootstrap(
    metric: Metric,
    predicted: ArrayLike,
    actual: ArrayLike,
    *,
    n: int = 1000,
    seed: int = 0,
    groups: Sequence | None = None,
) -> Interval:
    """`metric` on all items, with a 95 % interval that resamples items (or whole `groups`).

    >>> y = [1, 0] * 20
    >>> weeks = [i // 10 for i in range(40)]  # a rule right in two weeks, wrong in two
    >>> p = y[:20] + [1 - v for v in y[20:]]
    >>> by_item = bootstrap(accuracy, p, y, n=500)
    >>> by_week = bootstrap(accuracy, p, y, n=500, groups=weeks)
    >>> by_week.high - by_week.low > by_item.high - by_item.low
    True
    """
    p, a = _arrays(predicted, actual)
    if len(p) == 0:
        raise ValueError("no items to score")
    values = [metric(p[i], a[i]) for i in _draws(len(p), groups, n, seed)]
    low, high = np.percentile(values, [2.5, 97.5])
    return Interval(metric(p, a), float(low), float(high), len(p))


def paired(
    metric: Metric,
    first: ArrayLike,
    second: ArrayLike,
    actual: ArrayLike,
    *,
    n: int = 1000,
    seed: int = 0,
    groups: Sequence | None = None,
) -> Interval:
    """`metric(first) - metric(second)` on the same items, with a paired interval (items,
    or whole `groups`, resampled once for both)."""
    p1, a = _arrays(first, actual)
    p2, _ = _arrays(second, actual)
    diffs = [metric(p1[i], a[i]) - metric(p2[i], a[i]) for i in _draws(len(a), groups, n, seed)]
    low, high = np.percentile(diffs, [2.5, 97.5])
    return Interval(metric(p1, a) - metric(p2, a), float(low), float(high), len(a))


@dataclass(frozen=True)
class Permutation:
    """The metric of the predictions as made, and of the same predictions shuffled across
    items: `excess` is what the order (the content) adds over the class mix; `p` how often
    a shuffle did at least as well (with the +1 correction)."""

    value: float
    shuffled_mean: float
    shuffled_high: float  # the 97.5th percentile of the shuffles
    p: float
    n: int

    @property
    def excess(self) -> float:
        return self.value - self.shuffled_mean


def permutation(
    metric: Metric, predicted: ArrayLike, actual: ArrayLike, *, n: int = 1000, seed: int = 0
) -> Permutation:
    p, a = _arrays(predicted, actual)
    rng = np.random.default_rng(seed)
    value = metric(p, a)
    shuffled = np.array([metric(rng.permutation(p), a) for _ in range(n)])
    return Permutation(
        value,
        float(shuffled.mean()),
        float(np.percentile(shuffled, 97.5)),
        float((1 + np.sum(shuffled >= value)) / (n + 1)),
        len(p),
    )


def verdict(difference: Interval) -> str:
    """How a report words a paired difference: better, worse, or no difference."""
    if difference.contains_zero():
        return "no difference"
    return "better" if difference.low > 0 else "worse"
