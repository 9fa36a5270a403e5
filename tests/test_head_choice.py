"""`--head auto` (issue 42 item 4): the decision rule is chosen on validation items alone,
among the reader's heads and the no-skill rules, and a rule can win."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest

from finkg.errors import InputError
from finkg.tasks.head_choice import choose_head
from finkg.tasks.heads import Matured, SignRule
from finkg.tasks.impact.head_feed import CANDIDATES, choose
from finkg.tasks.impact.scoring import FEATURES, RULES

T0 = dt.datetime(2019, 1, 2, 21, tzinfo=dt.UTC)
Z, TONE = FEATURES.index("prior_z"), FEATURES.index("tone")


def _features(z: float, tone: float) -> tuple[float, ...]:
    out = [0.0] * len(FEATURES)
    out[Z], out[TONE] = z, tone
    return tuple(out)


def world(n: int, *, seed: int = 0, start: dt.datetime = T0) -> dict[int, list[Matured]]:
    """Labels that follow momentum (z beyond +-1) nine times in ten; a reader whose scores
    are noise; a tone that is noise."""
    rng = np.random.default_rng(seed)
    out: dict[int, list[Matured]] = {}
    for h in (1, 3, 5):
        items = []
        for i in range(n):
            z = float(rng.normal(0, 1.5))
            label = RULES["momentum"].decide(z)
            if rng.random() < 0.1:
                label = str(rng.choice(["up", "neutral", "down"]))
            scores = {c: float(rng.normal(-1.1, 0.3)) for c in ("up", "neutral", "down")}
            at = start + dt.timedelta(days=i, hours=h)
            items.append(Matured(at, scores, _features(z, float(rng.integers(-1, 2))), label))
        out[h] = items
    return out


def test_a_rule_wins_where_the_reader_is_noise_and_every_candidate_is_scored() -> None:
    choice = choose(world(200), before=T0 + dt.timedelta(days=400))
    assert choice.chosen == "momentum"
    assert list(choice.scores) == list(CANDIDATES)
    assert choice.scores["momentum"] > 0.8 > 0.5 > choice.scores["tone"]
    assert choice.fitted == 3 * 120 and choice.scored == 3 * 80
    assert "momentum, chosen on 240 held-out validation items" in choice.describe()


def test_a_head_wins_where_the_reader_knows() -> None:
    history = world(200, seed=1)
    for items in history.values():  # the reader now scores the label's option highest
        for k, m in enumerate(items):
            scores = {c: -2.0 + 1.5 * (c == m.label) for c in ("up", "neutral", "down")}
            items[k] = Matured(m.matured_at, scores, m.features, m.label)
    choice = choose(history, before=T0 + dt.timedelta(days=400))
    assert choice.chosen in ("prior", "multinomial", "none") and choice.scores[choice.chosen] == 1.0


def test_the_choice_never_sees_an_item_matured_at_or_after_its_instant() -> None:
    """Future invariance: items matured from `before` on can say anything; the choice, its
    scores and counts stay the same."""
    before = T0 + dt.timedelta(days=150)
    past = world(150)
    later = world(100, seed=9, start=before)  # matured at or after `before`
    for items in later.values():  # labels that would make `tone` perfect
        for k, m in enumerate(items):
            label = SignRule(TONE, 0.0, "up", "neutral", "down").decide(m.features[TONE])
            items[k] = Matured(m.matured_at, m.scores, m.features, label)
    mixed = {h: past[h] + later[h] for h in past}
    assert choose(mixed, before=before) == choose(past, before=before)


def test_without_enough_items_the_first_candidate_is_kept_and_says_so() -> None:
    choice = choose({1: world(1)[1]}, before=T0 + dt.timedelta(days=5))
    assert (choice.chosen, choice.scores, choice.scored) == ("prior", {}, 0)


def test_bad_arguments_are_named() -> None:
    items = world(10)
    with pytest.raises(InputError, match="needs a zone"):
        choose(items, before=dt.datetime(2020, 1, 1))  # noqa: DTZ001  (the bad value)
    with pytest.raises(InputError, match="no candidate"):
        choose_head(
            items,
            before=T0,
            classes=("up",),
            candidates=(),
            rules={},
            metric=lambda p, a: math.nan,
        )
