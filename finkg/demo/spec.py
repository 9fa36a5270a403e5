"""What a synthetic world is generated from: `WorldSpec`, every field checked when built
(the planted effects it sets are described in `finkg.demo.world`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from datetime import UTC, date, datetime, timedelta

from finkg.demo.universe import MAX_TICKERS
from finkg.errors import InputError
from finkg.kg.calendar import RANGE_END, RANGE_START

# field -> (low, high) inclusive; ints are checked as whole numbers
_BOUNDS: dict[str, tuple[float, float]] = {
    "seed": (0, 2**32 - 1),
    "sessions": (30, 2520),
    "tickers": (3, MAX_TICKERS),
    "users": (1, 1000),
    "news_per_ticker_session": (0.01, 5.0),
    "news_tone_effect": (0.0, 0.2),
    "exact_duplicate_share": (0.0, 0.2),
    "near_duplicate_share": (0.0, 0.2),
    "extra_8k_per_ticker_session": (0.0, 1.0),
    "guidance_day1_effect": (0.0, 0.2),
    "guidance_drift": (0.0, 0.5),
    "guidance_drift_sessions": (1, 20),
    "market_vol": (0.0, 0.1),
    "sector_vol": (0.0, 0.1),
    "preferred_sector_share": (0.5, 1.0),
    "dividend_tickers": (0, 8),
    "filing_report_share": (0.0, 1.0),
    "chatter_share": (0.0, 1.0),
    "chatter_contrary_share": (0.0, 1.0),
}


@dataclass(frozen=True, kw_only=True)
class WorldSpec:
    """What to generate; checked when built (an InputError quotes the bad value).

    >>> WorldSpec(tickers=2)
    Traceback (most recent call last):
    ...
    finkg.errors.InputError: tickers: must be between 3 and 24 (got 2); the default is 8
    """

    seed: int = 7
    start: date = date(2019, 1, 2)  # first session is the first XNYS session on or after it
    sessions: int = 260
    tickers: int = 8  # companies, sectors taken in turn: Technology, Healthcare, Energy
    users: int = 24  # FAR-Trans customers
    news_per_ticker_session: float = 0.3  # original news items
    news_tone_effect: float = 0.015
    exact_duplicate_share: float = 0.03
    near_duplicate_share: float = 0.05
    extra_8k_per_ticker_session: float = 0.06  # 8-Ks besides the quarterly earnings 8-K
    guidance_day1_effect: float = 0.0025
    guidance_drift: float = 0.04
    guidance_drift_sessions: int = 4
    market_vol: float = 0.01
    sector_vol: float = 0.006
    preferred_sector_share: float = 0.85
    dividend_tickers: int = 2
    filing_report_share: float = 0.8  # guidance 8-Ks that a news item reports within 90 min
    chatter_share: float = 1.0  # reported guidance 8-Ks preceded by market chatter
    chatter_contrary_share: float = 0.8  # chatter whose cue contradicts the filing

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name == "start":
                continue
            value, (lo, hi) = getattr(self, f.name), _BOUNDS[f.name]
            whole = isinstance(f.default, int)
            if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)):
                raise InputError(
                    f"must be a {'whole number' if whole else 'number'}",
                    field=f.name,
                    value=value,
                    hint=f"the default is {f.default!r}",
                )
            if not lo <= value <= hi:
                raise InputError(
                    f"must be between {lo} and {hi}",
                    field=f.name,
                    value=value,
                    hint=f"the default is {f.default!r}",
                )
        if self.dividend_tickers > self.tickers:
            raise InputError(
                "must not exceed tickers",
                field="dividend_tickers",
                value=self.dividend_tickers,
                hint=f"use at most {self.tickers}",
            )
        if isinstance(self.start, datetime) or not isinstance(self.start, date):
            raise InputError(
                "must be a datetime.date",
                field="start",
                value=self.start,
                hint="e.g. date(2019, 1, 2)",
            )
        last = self.start + timedelta(days=int(self.sessions * 1.6) + 30)
        if self.start <= RANGE_START or last > RANGE_END:
            raise InputError(
                f"the world must fit in the calendar range {RANGE_START}..{RANGE_END}",
                field="start",
                value=self.start.isoformat(),
                hint="choose a later start or fewer sessions",
            )
        if last >= datetime.now(UTC).date():  # ingest refuses what is available after its moment
            raise InputError(
                "the world must end before today: nothing after the moment of ingestion "
                "can be ingested",
                field="start",
                value=self.start.isoformat(),
                hint="choose an earlier start or fewer sessions",
            )

    def as_json(self) -> dict[str, object]:
        return {k: (v.isoformat() if isinstance(v, date) else v) for k, v in asdict(self).items()}


DEFAULT_SPEC = WorldSpec()
