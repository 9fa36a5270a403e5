"""`--head auto`: the decision rule chosen on validation, among the reader's heads and the
no-skill rules the job computes anyway.

A small reader's heads often lose to a plain rule (on the event benchmark no learned head
beat momentum), so a job that only chose among its heads could be knowingly worse than a
rule it already has. `choose_head` scores every candidate on the validation period's
matured items alone: per horizon (or task), the items matured strictly before `before` (the
first decision the choice will serve) in maturity order, each head fitted on the first
`share` of them and scored on the rest with `metric`; the candidate with the best mean over
horizons wins, ties going to the candidate listed first. A rule (`heads.SignRule`) fits
nothing, so it is scored on the same held-out items. The choice records every candidate's
score, so the run can say which rule decided and why.

>>> import datetime as dt
>>> from finkg.tasks.heads import SignRule
>>> t = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
>>> items = [Matured(t + dt.timedelta(days=i), {"up": -0.1, "down": -2.0}, (z,), label)
...          for i, (z, label) in enumerate([(1.0, "up"), (-1.0, "down")] * 10)]
>>> sign = {"sign": SignRule(0, 0.0, "up", "up", "down")}
>>> choice = choose_head({1: items}, before=t + dt.timedelta(days=30), classes=("up", "down"),
...                      candidates=("prior", "sign"), rules=sign, metric=_accuracy)
>>> choice.chosen, choice.scores["sign"], choice.fitted, choice.scored
('sign', 1.0, 12, 8)
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from finkg.errors import InputError
from finkg.tasks.heads import Matured, SignRule, fit_as_of

Metric = Callable[[np.ndarray, np.ndarray], float]
AUTO = "auto"
SHARE = 0.6  # fitted on the first 60 % of the validation items, scored on the rest


@dataclass(frozen=True)
class HeadChoice:
    """The candidate chosen and what every candidate scored on the held-out validation
    items (the mean of `metric` over horizons)."""

    chosen: str
    scores: dict[str, float]
    fitted: int  # validation items the heads were fitted on, all horizons together
    scored: int  # validation items every candidate was scored on
    before: dt.datetime  # only items matured strictly before this instant were used

    def describe(self) -> str:
        """`momentum, chosen on 1,200 validation items (prior 0.321, momentum 0.350)`."""
        scores = ", ".join(f"{k} {v:.3f}" for k, v in self.scores.items())
        return f"{self.chosen}, chosen on {self.scored:,} held-out validation items ({scores})"

    def as_json(self) -> dict[str, object]:
        return {
            "chosen": self.chosen,
            "scores": self.scores,
            "fitted": self.fitted,
            "scored": self.scored,
            "before": self.before.isoformat(),
        }


def _accuracy(predicted: np.ndarray, actual: np.ndarray) -> float:
    return float(np.mean(np.asarray(predicted) == np.asarray(actual)))


def choose_head(
    history: Mapping[int, Sequence[Matured]],
    *,
    before: dt.datetime,
    classes: Sequence[str],
    candidates: Sequence[str],
    rules: Mapping[str, SignRule],
    metric: Metric,
    share: float = SHARE,
) -> HeadChoice:
    """The best candidate on the validation items (module docstring). With too few items
    to hold any out, the first candidate, scored nowhere."""
    if before.tzinfo is None:
        raise InputError("an instant needs a zone", field="before", value=before.isoformat())
    if not candidates:
        raise InputError("no candidate to choose the decision head from", field="head")
    if not 0 < share < 1:
        raise InputError("the fitted share is between 0 and 1", field="share", value=share)
    per_horizon: dict[str, list[float]] = {c: [] for c in candidates}
    fitted = scored = 0
    for items in history.values():
        known = sorted(
            (i for i in items if i.matured_at < before and i.label in classes),
            key=lambda i: i.matured_at,
        )
        cut = int(len(known) * share)
        fit, held = known[:cut], known[cut:]
        if not fit or not held:
            continue
        fitted, scored = fitted + len(fit), scored + len(held)
        labels = np.array([i.label for i in held])
        for c in candidates:
            head = fit_as_of(fit, as_of=before, kind=c, classes=classes, rules=rules)
            decided = np.array([head.decide(i.scores, i.features) for i in held])
            per_horizon[c].append(metric(decided, labels))
    if not scored:
        return HeadChoice(candidates[0], {}, 0, 0, before)
    scores = {c: float(np.mean(v)) for c, v in per_horizon.items()}
    chosen = max(candidates, key=lambda c: (scores[c], -candidates.index(c)))
    return HeadChoice(chosen, scores, fitted, scored, before)
