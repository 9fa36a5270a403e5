"""Time-series retrieval for movement forecasting (paper 001): queries and window pools.

A *query* (§3.2) is a stock's five adjusted closes before the session it is for, serialized

    {"query_stock": "MO", "query_date": "2015-06-02",
     "recent_date_list": ["2015-05-26", ..., "2015-06-01"],
     "adjusted_close_list": [29.669, ..., 29.6227]}

and its decision instant is the open of that session: every bar it shows closed before then.

A *pool* holds the `fkg:IndicatorWindow`s a forecast may retrieve: available strictly before
the latest decision instant it serves, from a first candidate session on, optionally only
those of a universe of tickers and a deterministic sample of them. `eligible(decision)`
gives the rows of one decision (`fkg:availableAt` < decision), so one pool serves many
queries and each sees exactly what a pool loaded for it alone would hold.

The sample keeps a window when the SHA-256 of its IRI falls under the fraction: a property
of the window alone, so adding later windows never changes which earlier ones are kept
(future invariance), and the same windows recur across queries (their embeddings are
cached once). Rows are sorted by IRI, which breaks every tie in the retrievers.

What the reader is shown is shorter than what is stored and embedded: one line per
sequence, `STOCK DATE series: five values -> movement` (`brief`), with the values to four
significant digits (`short_number`). DATE is the session the movement is of (a window's
candidate date, the query's own date), the five values end the session before it, and the
query's movement is `?`. Paper 001's content is all there (stock, series, values, what
followed; the five dates are the five sessions before DATE), in about a fifth of the
tokens of the JSON, whose dates and digits a tokenizer splits one character at a time.
The retrievers that read text (BM25, MiniLM, FinSeer) keep reading the JSON in `fkg:text`.

>>> brief("MO", dt.date(2014, 7, 2), "high", [42.2, 42.0, 41.86, 42.28, 42.0], "freeze")
'MO 2014-07-02 high: 42.2 42 41.86 42.28 42 -> freeze'
>>> values_of('{"candidate_stock": "MO", "rsi_list": [51.2, 49.0, 47.5, 48.1, 50.0]}')
[51.2, 49.0, 47.5, 48.1, 50.0]
>>> keep("https://w3id.org/finkg/id/window/MO/rsi/2015-01-02", 1.0)
True
"""

from __future__ import annotations

import bisect
import datetime as dt
import hashlib
import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from pyoxigraph import NamedNode

from finkg import queries
from finkg.errors import InputError
from finkg.kg.calendar import get_calendar
from finkg.kg.derive.windows import LENGTH, value_text
from finkg.kg.iri import mint
from finkg.kg.store import BaseStore
from finkg.retrieval.index.bm25 import tokenize
from finkg.retrieval.index.live import node_texts

Progress = Callable[[str, int, int], None]
_TEXT_CHUNK = 2000


def keep(iri: str, fraction: float) -> bool:
    """Whether the deterministic `fraction` sample holds the window `iri`."""
    if fraction >= 1.0:
        return True
    digest = hashlib.sha256(iri.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64 < fraction


def values_of(text: str) -> list[float]:
    """The five values of a serialized window (its one `*_list` other than the dates)."""
    data = json.loads(text)
    for key, value in data.items():
        if key.endswith("_list") and key != "recent_date_list":
            return [float(x) for x in value]
    raise InputError("a window text without a value list", field="fkg:text", value=text[:120])


def short_number(x: float) -> str:
    """`x` to four significant digits, without an exponent; millions and billions as M, B.

    >>> [short_number(v) for v in (29.669, 42.0, -0.0012345, 1234.5, 98765.4, 445138400.0)]
    ['29.67', '42', '-0.001234', '1234', '98770', '445.1M']
    """
    x = float(x)
    if not np.isfinite(x):
        return str(x)
    for scale, suffix in ((1e9, "B"), (1e6, "M")):
        if abs(x) >= scale:
            return short_number(x / scale) + suffix
    if x == 0:
        return "0"
    decimals = 3 - int(np.floor(np.log10(abs(x))))
    if decimals <= 0:
        return str(round(round(x, decimals)))
    return f"{round(x, decimals):.{decimals}f}".rstrip("0").rstrip(".")


def brief(ticker: str, day: dt.date, series: str, values: Sequence[float], movement: str) -> str:
    """One sequence as the reader sees it (module docstring)."""
    numbers = " ".join(short_number(v) for v in values)
    return f"{ticker} {day.isoformat()} {series}: {numbers} -> {movement}"


def znorm(x: np.ndarray) -> np.ndarray:
    """Rows z-normalised (a constant row becomes zeros)."""
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    std = x.std(axis=-1, keepdims=True)
    return np.where(std > 0, (x - mean) / np.where(std > 0, std, 1.0), 0.0)


@dataclass(frozen=True)
class Query:
    """One stock and the session it is forecast for, with the five closes before it."""

    ticker: str
    day: dt.date  # the query date: the session whose movement is forecast
    decision: dt.datetime  # the open of `day`
    company: NamedNode
    dates: tuple[dt.date, ...]
    closes: tuple[float, ...]
    bars: tuple[NamedNode, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.ticker}/{self.day.isoformat()}"

    @property
    def brief(self) -> str:
        """The query as the reader sees it: its adjusted closes, the movement unknown."""
        return brief(self.ticker, self.day, "adj_close", self.closes, "?")

    @property
    def text(self) -> str:
        return json.dumps(
            {
                "query_stock": self.ticker,
                "query_date": self.day.isoformat(),
                "recent_date_list": [d.isoformat() for d in self.dates],
                "adjusted_close_list": [float(value_text(c, integral=False)) for c in self.closes],
            }
        )


def build_query(store: BaseStore, ticker: str, day: dt.date) -> Query:
    """The query of `ticker` for session `day` from the store's bars (module docstring).

    Errors (exit code 2) name the bad value: a day that is not an XNYS session, a ticker
    without bars, or fewer than five consecutive sessions of bars before the day."""
    ticker = ticker.strip().upper()
    cal = get_calendar()
    if not cal.is_session(day):
        raise InputError(
            "not an XNYS session",
            field="--date",
            value=day.isoformat(),
            hint=f"the next session is {cal.next_session(day).isoformat()}",
        )
    company = mint("company", ticker, base=store.graphs.base)
    previous = cal.previous_session(day)
    rows = queries.select(store, "bars_until", {"entity": company, "last": previous})
    if not rows:
        ever = queries.select(
            store, "bars_until", {"entity": company, "last": dt.date(9999, 12, 31)}
        )
        if not ever:
            raise InputError(
                "unknown ticker: no price bars in the store",
                field="--ticker",
                value=ticker,
                hint="ingest its prices first (finkg ingest prices FILE.csv)",
            )
        raise InputError(
            f"no bars of {ticker} before the query date",
            field="--date",
            value=day.isoformat(),
            hint="pick a date after its first five sessions of bars",
        )
    points = sorted((dt.date.fromisoformat(r.string("day")), r.double("adjClose")) for r in rows)
    return query_from_closes(ticker, day, points, base=store.graphs.base)


def query_from_closes(
    ticker: str, day: dt.date, points: Sequence[tuple[dt.date, float]], *, base: str
) -> Query:
    """The query of `ticker` for session `day` from its (session, adjusted close) points,
    oldest first, read before (`build_query` reads them from the store; `labelled_queries`
    reads a whole series once and builds every query from it). The five newest points
    before `day` must be the five sessions before it: else the error names the missing
    ones."""
    cal = get_calendar()
    previous = cal.previous_session(day)
    end = bisect.bisect_right(points, previous, key=lambda p: p[0])
    recent = points[max(0, end - LENGTH) : end]
    dates = tuple(d for d, _ in recent)
    expected = tuple(cal.session_offset(day, -n) for n in range(LENGTH, 0, -1))
    if dates != expected:
        missing = sorted(set(expected) - set(dates))
        raise InputError(
            f"no bars of {ticker} for the five sessions before the query date",
            field="--date",
            value=day.isoformat(),
            hint="missing: " + ", ".join(d.isoformat() for d in missing),
        )
    return Query(
        ticker=ticker,
        day=day,
        decision=cal.session_open(day),
        company=mint("company", ticker, base=base),
        dates=dates,
        closes=tuple(c for _, c in recent),
        bars=tuple(mint("bar", ticker, d.isoformat(), base=base) for d in dates),
    )


@dataclass
class WindowPool:
    """Indicator windows, sorted by IRI, with what the retrievers read (module docstring)."""

    iris: list[str]
    tickers: np.ndarray
    indicators: np.ndarray
    days: np.ndarray  # datetime64[D]
    movements: np.ndarray
    available: np.ndarray  # datetime64[us], UTC
    texts: list[str]
    values: np.ndarray  # (n, 5)
    spec: dict[str, object] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.iris)

    @classmethod
    def load(
        cls,
        store: BaseStore,
        *,
        before: dt.datetime,
        since: dt.date = dt.date(1900, 1, 1),
        sample: float = 1.0,
        universe: Collection[str] | None = None,
        progress: Progress | None = None,
    ) -> WindowPool:
        """The windows available before `before` (see the module docstring)."""
        if before.tzinfo is None:
            raise InputError("a decision instant needs a zone", field="before", value=before)
        if not 0 < sample <= 1:
            raise InputError("a sample is a fraction in (0, 1]", field="sample", value=sample)
        bindings: dict[str, object] = {"before": before, "since": since}
        if universe is not None:
            bindings["company"] = sorted(
                {mint("company", t.upper(), base=store.graphs.base) for t in universe}, key=str
            )
        found = queries.select(store, "movement_windows", bindings)
        rows = [r for r in found if keep(r.string("window"), sample)]
        rows.sort(key=lambda r: r.string("window"))
        iris = [r.string("window") for r in rows]
        texts = _texts(store, iris, progress)
        parsed = [json.loads(t) for t in texts]
        return cls(
            iris=iris,
            tickers=np.array([p["candidate_stock"] for p in parsed], dtype=object),
            indicators=np.array([r.string("indicator") for r in rows], dtype=object),
            days=np.array([r.string("day") for r in rows], dtype="datetime64[D]"),
            movements=np.array([r.string("movement") for r in rows], dtype=object),
            available=np.array(
                [_utc(r.string("availableAt")) for r in rows], dtype="datetime64[us]"
            ).reshape(len(rows)),
            texts=texts,
            values=np.array([values_of(t) for t in texts], dtype=np.float64).reshape(
                len(rows), LENGTH
            ),
            spec={
                "before": before.isoformat(),
                "since": since.isoformat(),
                "sample": sample,
                "universe": sorted(universe) if universe is not None else None,
            },
        )

    def brief(self, row: int) -> str:
        """Window `row` as the reader sees it (module docstring)."""
        return brief(
            str(self.tickers[row]),
            self.days[row].astype(dt.date),
            str(self.indicators[row]),
            self.values[row],
            str(self.movements[row]),
        )

    def eligible(self, decision: dt.datetime) -> np.ndarray:
        """Rows available strictly before `decision` (a zoned instant)."""
        if decision.tzinfo is None:
            raise InputError("a decision instant needs a zone", field="decision", value=decision)
        return np.flatnonzero(self.available < np.datetime64(_utc(decision.isoformat()), "us"))

    @cached_property
    def tokens(self) -> list[list[str]]:
        return tokenize(self.texts)

    @cached_property
    def shape(self) -> np.ndarray:
        """The z-normalised values (what DTW compares)."""
        return znorm(self.values)

    @cached_property
    def iri_hash(self) -> np.ndarray:
        return np.array(
            [
                int.from_bytes(hashlib.sha256(i.encode("utf-8")).digest()[:8], "big")
                for i in self.iris
            ],
            dtype=np.uint64,
        )


def _utc(text: str) -> str:
    value = dt.datetime.fromisoformat(text)
    return value.astimezone(dt.UTC).replace(tzinfo=None).isoformat()


def _texts(store: BaseStore, iris: Sequence[str], progress: Progress | None) -> list[str]:
    out: list[str] = []
    for start in range(0, len(iris), _TEXT_CHUNK):
        chunk = [NamedNode(i) for i in iris[start : start + _TEXT_CHUNK]]
        found = node_texts(store, chunk)
        out += [found[n] for n in chunk]
        if progress:
            progress("window texts", len(out), len(iris))
    return out
