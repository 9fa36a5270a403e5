"""Decision rules side by side: prequential, no look-ahead, statistics on the same items."""

from __future__ import annotations

import datetime as dt

import numpy as np

from finkg.evaluation.stats import accuracy
from finkg.tasks.decisions import Item, comparisons, decide_all, figures, table

START = dt.datetime(2015, 1, 2, 14, 30, tzinfo=dt.UTC)
CLASSES = ("rise", "fall")


def items(n: int, *, offset: int = 0, seed: int = 0) -> list[Item]:
    """A reader biased to "rise" with some content, and a previous-day rule that is right
    60 % of the time; each label matures the evening of its decision."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        up = bool(rng.random() < 0.45)
        content = 0.6 * (1 if up else -1) + rng.normal(0, 0.6)
        decision = START + dt.timedelta(days=offset + i)
        prev = ("rise" if up else "fall") if rng.random() < 0.6 else ("fall" if up else "rise")
        out.append(
            Item(
                decision,
                decision + dt.timedelta(hours=6, minutes=30),
                {"rise": -0.3 + content / 2, "fall": -1.5 - content / 2},
                (rng.normal(),),
                "rise" if up else "fall",
                {"previous-day": prev},
            )
        )
    return out


def test_every_rule_decides_every_test_item_from_matured_items_only() -> None:
    fitting, test = items(100), items(300, offset=100, seed=1)
    decisions = decide_all(fitting, test, classes=CLASSES)
    assert set(decisions) == {
        "majority",
        "stratified",
        "previous-day",
        "none",
        "prior",
        "multinomial",
        "card",
    }
    assert all(len(d) == 300 for d in decisions.values())
    labels = [i.label for i in test]
    assert decisions["none"].count("rise") > 0.8 * 300  # the biased reader's raw argmax
    assert accuracy(decisions["prior"], labels) > accuracy(decisions["none"], labels) + 0.1
    assert set(decisions["majority"]) == {"fall"}  # 55 % fall in the matured items


def test_a_decision_does_not_change_when_later_labels_change() -> None:
    fitting, test = items(50), items(100, offset=50, seed=2)
    base = decide_all(fitting, test, classes=CLASSES)
    flipped = [
        Item(
            i.decision,
            i.matured_at,
            i.scores,
            i.features,
            "fall" if i.label == "rise" else "rise",
            i.fixed,
        )
        if k >= 60
        else i
        for k, i in enumerate(test)
    ]
    other = decide_all(fitting, flipped, classes=CLASSES)
    for rule in base:
        # decisions up to and including item 60 used only labels of items before it
        assert base[rule][:61] == other[rule][:61], rule


def test_figures_give_intervals_permutations_and_paired_verdicts() -> None:
    fitting, test = items(100), items(400, offset=100, seed=3)
    decisions = decide_all(fitting, test, classes=CLASSES)
    rows = figures(
        decisions,
        [i.label for i in test],
        metrics={"ACC": accuracy},
        baselines=["majority", "none"],
        classes=CLASSES,
        n=200,
    )
    prior = next(r for r in rows if r.name == "prior")
    assert prior.metrics["ACC"].low < prior.metrics["ACC"].value < prior.metrics["ACC"].high
    assert prior.permutation.p < 0.01
    assert prior.versus["none"].low > 0
    text = "\n".join(table(rows, metric_names=["ACC"]) + comparisons(rows, ["prior"], "ACC"))
    assert "| prior | none |" in text and "better" in text


def test_figures_by_weeks_keep_the_value_and_give_the_verdict_of_the_wider_interval() -> None:
    fitting, test = items(100), items(400, offset=100, seed=3)
    decisions = decide_all(fitting, test, classes=CLASSES)
    weeks = [i.decision.isocalendar()[:2] for i in sorted(test, key=lambda i: i.decision)]
    labels = [i.label for i in sorted(test, key=lambda i: i.decision)]

    def rows_by(groups: list | None) -> list:
        return figures(
            decisions,
            labels,
            metrics={"ACC": accuracy},
            baselines=["majority", "none"],
            classes=CLASSES,
            n=200,
            groups=groups,
        )

    plain = {r.name: r for r in rows_by(None)}
    rows = rows_by(weeks)
    by = {r.name: r for r in rows}
    prior = by["prior"]
    assert plain["prior"].grouped is None and plain["prior"].versus_grouped == {}
    assert prior.grouped is not None and prior.grouped.value == prior.metrics["ACC"].value
    assert prior.versus == plain["prior"].versus  # the item-level figures are unchanged
    week_none = prior.versus_grouped["none"]
    assert week_none.value == prior.versus["none"].value
    text = "\n".join(table(rows, metric_names=["ACC"]) + comparisons(rows, ["prior"], "ACC"))
    assert "ACC, weeks resampled" in text and "verdict (weeks)" in text
    assert f"[{week_none.low:+.3f}, {week_none.high:+.3f}]" in text
