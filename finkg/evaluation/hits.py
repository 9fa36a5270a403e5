"""Paper 004 §4.1: Pref@3, Prof@3 and Comb@3 of asset recommendations.

For a recommendation made for customer u at instant D, over the window (D, D + 180 days]:

- purchased: the assets u bought in the window (their buys' `fkg:availableAt` in it);
- profitable: the assets whose last close known at D + 180 days is above their last close
  known at D (an asset without a close on either side is not counted as profitable);
- combined: purchased and profitable.

Each metric is a Hits@3: a recommendation scores 1 when at least one of its three assets is
in the set, else 0, and the metric is the mean over recommendations. A recommendation whose
reader reply failed scores 0 on all three (it recommended nothing). Evaluation reads the
future on purpose; nothing here is ever shown to a reader.

Recommendation dates are every `every_days` days over a test period, as in the paper (every
two weeks over a test year).

>>> o = Outcome(purchased=frozenset({"a", "b"}), profitable=frozenset({"b", "c"}))
>>> o.combined == frozenset({"b"}), hit(["x", "a", "y"], o.purchased), hit(["c"], o.combined)
(True, 1.0, 0.0)
"""

from __future__ import annotations

import datetime as dt
import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from pyoxigraph import NamedNode

from finkg import queries
from finkg.kg.store import BaseStore

HORIZON_DAYS = 180


@dataclass(frozen=True)
class Outcome:
    purchased: frozenset[str]
    profitable: frozenset[str]

    @property
    def combined(self) -> frozenset[str]:
        return self.purchased & self.profitable


def hit(recommended: Sequence[str], relevant: Iterable[str]) -> float:
    """1.0 when one of the first three recommended assets is relevant, else 0.0."""
    return 1.0 if set(recommended[:3]) & set(relevant) else 0.0


def outcome(
    store: BaseStore, user_graph: NamedNode, as_of: dt.datetime, *, days: int = HORIZON_DAYS
) -> Outcome:
    """What happened in the `days` after `as_of`: the customer's buys and the assets' returns."""
    until = as_of + dt.timedelta(days=days)
    rows = queries.select(
        store,
        "recommend_purchases",
        {"after": as_of, "until": until},
        default_graphs=[user_graph],
    )
    purchased = frozenset(r.iri("asset").value for r in rows)
    start = returns_start(store, as_of)
    end = last_closes(store, as_of, until)
    profitable = frozenset(a for a, p in end.items() if a in start and p > start[a])
    return Outcome(purchased, profitable)


def returns_start(store: BaseStore, as_of: dt.datetime) -> dict[str, Decimal]:
    """Each asset's last close known at `as_of` (looking back up to a year)."""
    return last_closes(store, as_of - dt.timedelta(days=366), as_of)


def last_closes(store: BaseStore, after: dt.datetime, until: dt.datetime) -> dict[str, Decimal]:
    """Each asset's last close available in (after, until]."""
    rows = queries.select(store, "asset_closes", {"after": after, "until": until})
    out: dict[str, Decimal] = {}
    for r in rows:
        out[r.iri("asset").value] = r.decimal("close")  # rows come oldest first per asset
    return out


@dataclass(frozen=True)
class Hits:
    pref: float
    prof: float
    comb: float
    n: int

    def as_dict(self) -> dict[str, float | int]:
        return {"Pref@3": self.pref, "Prof@3": self.prof, "Comb@3": self.comb, "n": self.n}


def hits_at_3(rows: Sequence[tuple[Sequence[str], Outcome]]) -> Hits:
    """Mean Pref@3, Prof@3 and Comb@3 over (recommended assets, outcome) rows."""
    return _means(rows, hit)


def _means(
    rows: Sequence[tuple[Sequence[str], Outcome]],
    score: Callable[[Sequence[str], Iterable[str]], float],
) -> Hits:
    if not rows:
        return Hits(0.0, 0.0, 0.0, 0)
    return Hits(
        statistics.fmean(score(r, o.purchased) for r, o in rows),
        statistics.fmean(score(r, o.profitable) for r, o in rows),
        statistics.fmean(score(r, o.combined) for r, o in rows),
        len(rows),
    )


def chance(offered: Sequence[str], relevant: Iterable[str], picks: int = 3) -> float:
    """The expected `hit` of `picks` different assets drawn at random from `offered`: the
    reference a Hits@3 figure needs when few assets are offered and customers buy many.

    >>> chance(["a", "b", "c", "d"], {"a"})  # 1 - C(3, 3) / C(4, 3)
    0.75
    >>> chance(["a", "b", "c", "d"], set())
    0.0
    """
    n = len(set(offered))
    k = len(set(offered) & set(relevant))
    if n < picks:
        return 1.0 if k else 0.0
    return 1.0 - math.comb(n - k, picks) / math.comb(n, picks)


def chance_at_3(rows: Sequence[tuple[Sequence[str], Outcome]]) -> Hits:
    """`hits_at_3` of random picks, expected: rows are (offered assets, outcome)."""
    return _means(rows, chance)


def recommendation_dates(first: dt.date, last: dt.date, *, every_days: int = 14) -> list[dt.date]:
    """`first`, then every `every_days` days, up to and including `last`.

    >>> [d.isoformat() for d in recommendation_dates(dt.date(2020, 1, 1), dt.date(2020, 2, 1))]
    ['2020-01-01', '2020-01-15', '2020-01-29']
    """
    out, day = [], first
    while day <= last:
        out.append(day)
        day += dt.timedelta(days=every_days)
    return out
