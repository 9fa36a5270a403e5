"""Decision rules side by side on the same items, prequentially, with honest statistics.

The items are a job's decisions in time order, each with the reader's option scores, the
job's own numbers (`features`), the label and the instant it matured. Every rule decides
each test item from what had matured before that item's decision instant only: the
fitting (validation) items, then the test items as they mature.

Rules: the no-skill ones (`majority`: the most frequent matured class; `stratified`: a
seeded draw from the matured class mix), the job's own fixed rules passed in by the caller
(`previous-day`, `momentum`, `tone`, ...), the reader's raw argmax, and each decision head
of `tasks.heads` (`prior`, `multinomial`, `card`). For each: the metrics with bootstrap
95 % intervals, the permutation control, and paired differences against every baseline;
given each item's group (its trading week), the first metric and the differences again
with intervals that resample whole groups, since items of one week share the market.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from finkg.evaluation.stats import Interval, Permutation, bootstrap, paired, permutation, verdict
from finkg.tasks.heads import Matured, Prequential

Metric = Callable[[np.ndarray, np.ndarray], float]


@dataclass(frozen=True)
class Item:
    decision: dt.datetime
    matured_at: dt.datetime
    scores: Mapping[str, float]
    features: tuple[float, ...]
    label: str
    fixed: Mapping[str, str] = field(default_factory=dict)  # a fixed rule's own decision

    def matured(self) -> Matured:
        return Matured(self.matured_at, self.scores, self.features, self.label)


def _no_skill(kind: str, classes: Sequence[str], known: Counter, rng: np.random.Generator) -> str:
    if not known:
        return classes[0]
    if kind == "majority":
        return max(classes, key=lambda c: (known[c], -classes.index(c)))
    weights = np.array([known[c] for c in classes], dtype=float)
    return classes[int(rng.choice(len(classes), p=weights / weights.sum()))]


def decide_all(
    fitting: Sequence[Item],
    test: Sequence[Item],
    *,
    classes: Sequence[str],
    heads: Sequence[str] = ("none", "prior", "multinomial", "card"),
    seed: int = 0,
) -> dict[str, list[str]]:
    """Each rule's decision for every test item, prequentially (module docstring)."""
    classes = tuple(classes)
    test = sorted(test, key=lambda i: i.decision)
    models = {h: Prequential(h, classes, history=[i.matured() for i in fitting]) for h in heads}
    rng = np.random.default_rng(seed)
    fixed = sorted({k for i in test for k in i.fixed})
    out: dict[str, list[str]] = {k: [] for k in ("majority", "stratified", *fixed, *heads)}
    pending = [*fitting]
    for item in test:
        known = Counter(i.label for i in pending if i.matured_at < item.decision)
        out["majority"].append(_no_skill("majority", classes, known, rng))
        out["stratified"].append(_no_skill("stratified", classes, known, rng))
        for k in fixed:
            out[k].append(item.fixed[k])
        for h, model in models.items():
            out[h].append(model.at(item.decision).decide(item.scores, item.features))
        pending.append(item)
        for model in models.values():
            model.add(item.matured())
    return out


@dataclass(frozen=True)
class RuleFigures:
    name: str
    metrics: dict[str, Interval]
    permutation: Permutation
    mix: dict[str, float]  # the share of each class among the decisions
    versus: dict[str, Interval]  # paired difference of the first metric against each baseline
    # the first metric and its paired differences again, whole groups (weeks) resampled
    grouped: Interval | None = None
    versus_grouped: dict[str, Interval] = field(default_factory=dict)


def figures(
    decisions: Mapping[str, ArrayLike],
    labels: ArrayLike,
    *,
    metrics: Mapping[str, Metric],
    baselines: Sequence[str] | Callable[[str], Sequence[str]],
    classes: Sequence[str],
    n: int = 1000,
    seed: int = 0,
    groups: Sequence | None = None,
) -> list[RuleFigures]:
    """Every rule's metrics with intervals, its permutation control, and its paired
    difference in the first metric against each baseline (on the same items); `baselines`
    may name them per rule (a function of the rule's name). With `groups` (one key per
    item: its trading week), the first metric and the paired differences are given again
    with intervals that resample whole groups (`stats.bootstrap`)."""
    y = np.asarray(labels)
    first = next(iter(metrics.values()))
    rows = []
    for name, predicted in decisions.items():
        p = np.asarray(predicted)
        against = [
            b
            for b in (baselines(name) if callable(baselines) else baselines)
            if b != name and b in decisions
        ]

        rows.append(
            RuleFigures(
                name,
                {k: bootstrap(m, p, y, n=n, seed=seed) for k, m in metrics.items()},
                permutation(first, p, y, n=n, seed=seed),
                {c: float(np.mean(p == c)) for c in classes},
                _versus(first, p, decisions, against, y, n=n, seed=seed),
                None if groups is None else bootstrap(first, p, y, n=n, seed=seed, groups=groups),
                {}
                if groups is None
                else _versus(first, p, decisions, against, y, n=n, seed=seed, groups=groups),
            )
        )
    return rows


def _versus(
    metric: Metric,
    p: np.ndarray,
    decisions: Mapping[str, ArrayLike],
    against: Sequence[str],
    y: np.ndarray,
    *,
    n: int,
    seed: int,
    groups: Sequence | None = None,
) -> dict[str, Interval]:
    return {
        b: paired(metric, p, np.asarray(decisions[b]), y, n=n, seed=seed, groups=groups)
        for b in against
    }


def table(
    rows: Sequence[RuleFigures], *, metric_names: Sequence[str], grouped: str = "weeks"
) -> list[str]:
    """Markdown: one row per rule, intervals in brackets; where the rows were figured with
    groups, the first metric's interval by `grouped` (the groups' name) beside it."""
    by_group = any(r.grouped is not None for r in rows)
    names = [metric_names[0], f"{metric_names[0]}, {grouped} resampled"] if by_group else []
    head = " | ".join([*names, *metric_names[1:]] if by_group else metric_names)
    lines = [
        f"| rule | {head} | permutation: shuffled mean, p | class mix |",
        "|---|" + "---|" * (len(metric_names) + by_group + 2),
    ]
    for r in rows:
        values = [str(r.metrics[m]) for m in metric_names]
        if by_group:
            values.insert(1, _bracket(r.grouped) if r.grouped else "")
        cells = " | ".join(values)
        mix = " / ".join(f"{c} {v:.0%}" for c, v in r.mix.items())
        lines.append(
            f"| {r.name} | {cells} | {r.permutation.shuffled_mean:.3f}, "
            f"p = {r.permutation.p:.3f} | {mix} |"
        )
    return lines


def _bracket(i: Interval) -> str:
    """Just the interval: the value stands in the item-level column beside it."""
    return f"[{i.low:.3f}, {i.high:.3f}]"


def _signed(i: Interval) -> str:
    return f"{i.value:+.3f} [{i.low:+.3f}, {i.high:+.3f}]"


def comparisons(
    rows: Sequence[RuleFigures], rules: Sequence[str], metric: str, *, grouped: str = "weeks"
) -> list[str]:
    """Markdown: the paired differences of `rules` against each baseline, with a verdict;
    where the rows were figured with groups, the interval resampling whole groups beside
    the item-level one, and the verdict from the group-level interval (the honest one)."""
    by_group = any(r.versus_grouped for r in rows)
    if by_group:
        lines = [
            f"| rule | baseline | {metric} difference [95 % CI, items] | [95 % CI, {grouped}] "
            f"| verdict ({grouped}) |",
            "|---|---|---|---|---|",
        ]
    else:
        lines = [
            f"| rule | baseline | {metric} difference [95 % CI] | verdict |",
            "|---|---|---|---|",
        ]
    for r in rows:
        if r.name not in rules:
            continue
        for b, diff in r.versus.items():
            if by_group:
                g = r.versus_grouped[b]
                lines.append(
                    f"| {r.name} | {b} | {_signed(diff)} | [{g.low:+.3f}, {g.high:+.3f}] "
                    f"| {verdict(g)} |"
                )
            else:
                lines.append(f"| {r.name} | {b} | {_signed(diff)} | {verdict(diff)} |")
    return lines
