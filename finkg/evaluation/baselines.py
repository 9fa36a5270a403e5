"""No-skill rules and plain numbers for the impact job (paper 000 §4): what a decision
must beat, and what a decision head may use besides the reader.

- `momentum`: the prior five sessions' residual return, standardised by the anchor's own
  market model (the one its labels use, `labels.market_model` at horizon 5), read as a
  label: +1 if z > 1, -1 if z < -1, else 0. The return runs over (P-6, P-1], the five
  sessions ending at the session before the prediction day P, so it reads no bar on or
  after P: it is knowable at the decision time.
- `tone`: the sign of a headline's finance word count (Loughran-McDonald-style positive and
  negative words, a negation within three words before a word flipping it).
- `card_features` and `event_type_features`: the market card's numbers and the anchor's
  event type as floats (NaN where unknown), named by `CARD_FEATURES` and `EVENT_FEATURES`,
  for the `multinomial` and `card` heads of `tasks.heads`.

Everything here is pure apart from reading a `PriceTable`; nothing reads a store.

>>> tone("Acme beats estimates; shares surge"), tone("Regulator finds no violation")
(1, 1)
>>> tone("Acme names a new finance chief"), tone("Acme's growth was not strong")
(0, 0)
"""

from __future__ import annotations

import datetime as dt
import math
import re

import numpy as np
from pyoxigraph import NamedNode

from finkg.errors import InputError
from finkg.evaluation.labels import (
    THRESHOLD,
    NoLabel,
    PriceTable,
    market_model,
)
from finkg.kg.calendar import MarketCalendar
from finkg.kg.derive.cards import MarketCard
from finkg.ontology.terms import FKG

MOMENTUM_SESSIONS = 5

# --- momentum ------------------------------------------------------------------------------


def prior_z(
    prices: PriceTable,
    ticker: str,
    proxy: str,
    prediction_day: dt.date,
    *,
    calendar: MarketCalendar,
) -> float | None:
    """The z-score of the residual return over the five sessions ending at the session
    before `prediction_day`, under the horizon-5 market model of the anchor's labels;
    None where a bar or the estimation window's history is missing."""
    last = calendar.session_offset(prediction_day, -1)
    first = calendar.session_offset(last, -MOMENTUM_SESSIONS)
    now = prices.aligned((ticker, proxy), [first, last])
    if not np.isfinite(now).all():
        return None
    model = market_model(
        prices, ticker, proxy, prediction_day, MOMENTUM_SESSIONS, calendar=calendar
    )
    if isinstance(model, NoLabel):
        return None
    stock_ret, market_ret = now[1] / now[0] - 1
    return model.z(float(stock_ret), float(market_ret))


def momentum(
    prices: PriceTable,
    ticker: str,
    proxy: str,
    prediction_day: dt.date,
    *,
    calendar: MarketCalendar,
    threshold: float = THRESHOLD,
) -> int:
    """+1 / -1 when the prior five-session residual return's |z| exceeds `threshold`, in its
    sign; 0 otherwise, and 0 when there is not enough history (see `prior_z`)."""
    z = prior_z(prices, ticker, proxy, prediction_day, calendar=calendar)
    if z is None:
        return 0
    return 1 if z > threshold else -1 if z < -threshold else 0


# --- tone ----------------------------------------------------------------------------------

POSITIVE = frozenset(
    """
    achieve achieved achievement advance advances approval approved beat beats benefit
    benefits boost boosts breakthrough exceed exceeded exceeds expand expands expansion
    favorable gain gains growth improve improved improvement improves outperform
    outperformed outperforms profitable rally rebound rebounds strength strong stronger
    success successful surge surged surges surpass surpassed upgrade upgraded upgrades win
    wins
    """.split()
)
NEGATIVE = frozenset(
    """
    adverse bankruptcy concern concerns cut cuts decline declined declines default deficit
    delay delayed downgrade downgraded downgrades downturn drop drops fell fall falls fined
    fraud halt halted impairment investigation lawsuit lawsuits layoffs litigation loss
    losses miss missed misses penalty plunge plunged plunges probe recall resigns
    restatement shortfall slump subpoena sued suspended violation violations warning warns
    weak weaker weakness
    """.split()
)
NEGATIONS = frozenset(
    """
    not no never without nor none cannot can't isn't aren't wasn't weren't doesn't don't
    didn't won't hasn't haven't
    """.split()
)
NEGATION_REACH = 3  # a negation flips a word at most this many words after it
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def tokens(text: str) -> list[str]:
    """Lower-case words; apostrophes inside a word kept ("isn't"), all else a separator."""
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def tone(headline: str) -> int:
    """+1 if the headline's positive words outnumber its negative ones, -1 if the reverse,
    else 0. A word within NEGATION_REACH words after a negation counts for the other side
    (and uses the negation up)."""
    score, reach = 0, 0
    for word in tokens(headline):
        if word in NEGATIONS:
            reach = NEGATION_REACH
            continue
        polarity = (word in POSITIVE) - (word in NEGATIVE)
        if polarity:
            score += -polarity if reach else polarity
            reach = 0
        else:
            reach = max(reach - 1, 0)
    return (score > 0) - (score < 0)


# --- features for decision heads -----------------------------------------------------------

CARD_FEATURES = (
    "stock_1d",
    "stock_5d",
    "stock_20d",
    "market_1d",
    "market_5d",
    "market_20d",
    "relative_5d",
    "stock_volatility",  # elevated 1, normal 0, low -1
    "market_volatility",
    "trend",  # up 1, flat 0, down -1
)
_VOLATILITY = {"elevated": 1.0, "normal": 0.0, "low": -1.0, "unknown": math.nan}
_TREND = {"up": 1.0, "flat": 0.0, "down": -1.0, "unknown": math.nan}


def _code(codes: dict[str, float], value: str, field: str) -> float:
    if value not in codes:
        raise InputError(f"not one of {sorted(codes)}", field=field, value=value)
    return codes[value]


def _num(x: float | None) -> float:
    return math.nan if x is None else float(x)


def card_features(card: MarketCard) -> tuple[float, ...]:
    """The card's numbers in `CARD_FEATURES` order; NaN where the card says unknown."""
    s, m = card.stock, card.market
    relative = _num(s.d5) - _num(m.d5)  # NaN when either is unknown
    return (
        _num(s.d1),
        _num(s.d5),
        _num(s.d20),
        _num(m.d1),
        _num(m.d5),
        _num(m.d20),
        relative,
        _code(_VOLATILITY, s.volatility_state, "stock.volatility_state"),
        _code(_VOLATILITY, m.volatility_state, "market.volatility_state"),
        _code(_TREND, card.trend, "trend"),
    )


EVENT_TYPES = (
    FKG.EarningsGuidance,
    FKG.LegalRegulatory,
    FKG.CapitalTransactions,
    FKG.ManagementOperations,
    FKG.OtherMixed,
)
EVENT_FEATURES = tuple(f"event_{t.value.rpartition('#')[2]}" for t in EVENT_TYPES)


def event_type_features(event_type: NamedNode) -> tuple[float, ...]:
    """One-hot over `EVENT_TYPES` (named by `EVENT_FEATURES`)."""
    if event_type not in EVENT_TYPES:
        raise InputError(
            "not an event type of fkg:EventTypes",
            field="event_type",
            value=str(event_type),
            hint="one of " + ", ".join(EVENT_FEATURES),
        )
    return tuple(1.0 if event_type == t else 0.0 for t in EVENT_TYPES)
