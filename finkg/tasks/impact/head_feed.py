"""Decision heads kept current through a prequential impact run (DESIGN §6 "Decisions").

Each variant keeps, per horizon, a `tasks.heads.Prequential` head: started from the
validation period's matured items (`history`), then fed each of the variant's own scored
decisions once its label has matured (the close of session P+h-1 has passed), on the same
clock as the source memory's feedback. A decision at t therefore uses a head fitted only on
labels that were public before t; the state it used is written to the memory graph
(`tasks.head_records`, task `impact-{h}@{variant}`) and cited by the signal it decided.

`LabelBook` computes each anchor's residual labels once for all variants. `choose` is the
job's `--head auto`: the head or rule (momentum, tone) that scored best on the validation
items (`tasks.head_choice`), so a run is never knowingly worse than a rule it computes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyoxigraph import NamedNode

from finkg.evaluation.labels import NoLabel, PriceTable, ResidualLabel, residual_label
from finkg.evaluation.stats import macro_f1
from finkg.kg.calendar import MarketCalendar
from finkg.kg.store import BaseStore
from finkg.tasks.head_choice import HeadChoice, choose_head
from finkg.tasks.head_records import Head, write_head
from finkg.tasks.heads import Matured, Prequential
from finkg.tasks.impact.anchors import Anchor
from finkg.tasks.impact.scoring import CLASSES, OPTIONS, RULES, Scored, option_logprobs

LABEL_OPTION = {value: option for option, value in OPTIONS.items()}
# what `--head auto` chooses among, in the order that breaks ties
CANDIDATES = ("prior", "multinomial", "card", "none", *RULES)


def choose(history: Mapping[int, Sequence[Matured]], *, before: dt.datetime) -> HeadChoice:
    """The candidate with the best mean macro-F1 over the horizons on the validation items
    matured before `before`, fitted on their first 60 % (`head_choice.choose_head`)."""
    return choose_head(
        history,
        before=before,
        classes=CLASSES,
        candidates=CANDIDATES,
        rules=RULES,
        metric=lambda p, a: macro_f1(p, a, classes=CLASSES),
    )


def head_task(horizon: int, variant: str) -> str:
    """The `fkg:task` of a variant's head at one horizon (`impact-3@cited`)."""
    return f"impact-{horizon}@{variant}"


def cite_task(variant: str) -> str:
    """The `fkg:task` of a variant's citation head (`impact-cite@cited`)."""
    return f"impact-cite@{variant}"


class LabelBook:
    """Residual labels by (ticker, prediction day, horizon), each computed once."""

    def __init__(self, prices: PriceTable, *, proxy: str, calendar: MarketCalendar) -> None:
        self.prices = prices
        self.proxy = proxy
        self.calendar = calendar
        self._labels: dict[tuple[str, dt.date, int], ResidualLabel | None] = {}

    def matures_by(self, day: dt.date, horizon: int, now: dt.datetime) -> bool:
        """Whether the label of prediction day `day` at `horizon` is public by `now` (its
        last bar closed at or before it)."""
        _, end = self.calendar.label_window(day, horizon)
        return self.calendar.bar_available_at(end) <= now

    def label(self, ticker: str, day: dt.date, horizon: int) -> ResidualLabel | None:
        key = (ticker, day, horizon)
        if key not in self._labels:
            found = residual_label(
                self.prices, ticker, self.proxy, day, horizon, calendar=self.calendar
            )
            self._labels[key] = None if isinstance(found, NoLabel) else found
        return self._labels[key]


@dataclass(frozen=True)
class _Pending:
    ticker: str
    day: dt.date  # the prediction day P
    horizon: int
    logprobs: dict[str, float]
    features: tuple[float, ...]
    label: ResidualLabel | None = None  # known already (an earlier run's decision)
    labelled: bool = False  # whether `label` is known (None then: no label)


def matured_item(
    label: ResidualLabel, logprobs: Mapping[str, float], features: Sequence[float]
) -> Matured:
    """A decision's inputs beside its label, as a head learns from them."""
    return Matured(label.matured_at, dict(logprobs), tuple(features), LABEL_OPTION[label.label])


class HeadFeed:
    """One variant's heads (module docstring)."""

    def __init__(
        self,
        store: BaseStore,
        variant: str,
        *,
        kind: str,
        horizons: Sequence[int],
        labels: LabelBook,
        history: Mapping[int, Sequence[Matured]] | None = None,
    ) -> None:
        history = history or {}
        self.store = store
        self.variant = variant
        self.labels = labels
        self.heads = {
            h: Prequential(kind, CLASSES, history=history.get(h, ()), rules=RULES) for h in horizons
        }
        self.pending: list[_Pending] = []
        self.fed = 0  # test decisions that reached a head
        self._written: dict[tuple[int, dt.datetime, str], NamedNode] = {}

    def record(self, anchor: Anchor, scored: Scored) -> None:
        """Remember a decision, to feed its head once its label matures."""
        for h, scores in scored.scores.items():
            logprobs = option_logprobs(scores.logprobs)
            self.pending.append(
                _Pending(anchor.ticker, anchor.prediction_day, h, logprobs, scored.features)
            )

    def remember(
        self,
        *,
        ticker: str,
        day: dt.date,
        horizon: int,
        logprobs: Mapping[str, float],
        features: Sequence[float],
        label: ResidualLabel | None,
    ) -> None:
        """Remember an earlier run's decision (raw option log-probabilities) with its label
        (None: it has none), to feed once the label has matured."""
        self.pending.append(
            _Pending(ticker, day, horizon, option_logprobs(logprobs), tuple(features), label, True)
        )

    def mature(self, now: dt.datetime) -> int:
        """Feed every remembered decision whose label matured by `now`; return how many.
        A decision without a label (too little price history) is dropped."""
        waiting, fed = [], 0
        for p in self.pending:
            if not self.labels.matures_by(p.day, p.horizon, now):
                waiting.append(p)
                continue
            label = p.label if p.labelled else self.labels.label(p.ticker, p.day, p.horizon)
            if label is not None:
                self.heads[p.horizon].add(matured_item(label, p.logprobs, p.features))
                fed += 1
        self.pending = waiting
        self.fed += fed
        return fed

    def at(self, decision: dt.datetime) -> dict[int, Head]:
        """Each horizon's head as of `decision`, its state written to the memory graph."""
        out = {}
        for h, head in self.heads.items():
            state = head.at(decision)
            key = (h, state.as_of, state.sha256)
            if key not in self._written:
                self._written[key] = write_head(self.store, head_task(h, self.variant), state)
            out[h] = Head(self._written[key], state)
        return out
