"""Five-session indicator windows with movement labels, serialized as paper 001 §3.2 does.

The timing rule. Paper 001 serializes a *candidate* for stock s on date d as the five
sessions before d (`recent_date_list`, d-5 .. d-1) with their values of one series, and
the movement of d itself (`candidate_movement`): the adjusted-close return from d-1 to d,
"rise" if above 0.55 %, "fall" if below -0.5 %, else "freeze" (eq. 1-2). So a window is
knowable only once d has closed, and finkg stamps it so:

- `fkg:sessionDate` = d, the candidate session (the paper's `candidate_date`; it keys the
  IRI too); the window's values end the session before it;
- `fkg:movement` = the movement of d, from adj_close(d) / adj_close(d-1) - 1;
- `fkg:availableAt` = the XNYS close of d: never earlier than the close of the session
  whose return the label uses (it *is* that close), and after every value in the window.

A window is made only where d-5 .. d are six consecutive XNYS sessions with bars (a
missing or rejected bar breaks the windows that would span it) and its five values are
finite. The last bar of a file is a candidate with its own movement; the five sessions
ending on it form the *query* of the next session, whose movement is not known yet, so it
is not a window.

Worked example (AAPL, 2020): the candidate of Friday 2020-05-01 holds the values of
2020-04-24, 04-27, 04-28, 04-29 and 04-30; its movement compares adj_close on 2020-05-01
with 2020-04-30 (71.3788 / 72.5467 - 1 = -1.61 %: "fall"); it is available at
2020-05-01T16:00:00-04:00, so it is eligible evidence only for decisions strictly after
that close, e.g. for predicting Monday 2020-05-04 from news published that evening.
Its IRI is `window/AAPL/adj_close/2020-05-01` (one per series: `window/AAPL/rsi/...`) and
its text is

    {"candidate_stock": "AAPL", "candidate_date": "2020-05-01", "candidate_movement": "fall",
     "recent_date_list": ["2020-04-24", "2020-04-27", "2020-04-28", "2020-04-29", "2020-04-30"],
     "adj_close_list": [69.8725, 69.9219, 68.7885, 71.0479, 72.5467]}

>>> import pandas as pd
>>> bars = pd.DataFrame({"adj_close": [10.0, 10.1, 10.2, 10.3, 10.4, 10.504]},
...     index=pd.to_datetime(["2020-04-24", "2020-04-27", "2020-04-28", "2020-04-29",
...                           "2020-04-30", "2020-05-01"]).date)
>>> w = Windows.of(bars, bars[["adj_close"]], "AAPL")
>>> w.candidates(), w.movement[5]
([5], 'rise')
>>> print(w.text(5, "adj_close"))
{"candidate_stock": "AAPL", "candidate_date": "2020-05-01", "candidate_movement": "rise", \
"recent_date_list": ["2020-04-24", "2020-04-27", "2020-04-28", "2020-04-29", "2020-04-30"], \
"adj_close_list": [10.0, 10.1, 10.2, 10.3, 10.4]}
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pyoxigraph import Literal, NamedNode, Quad

from finkg.kg.calendar import get_calendar
from finkg.kg.derive.indicators import INTEGRAL
from finkg.kg.ingest import common
from finkg.kg.ingest.core import IngestOptions, Item
from finkg.kg.iri import mint
from finkg.ontology.terms import FKG, PROV, RDF

LENGTH = 5  # sessions per window (paper 001)
RISE = 0.55  # percent: a return above it is a rise
FALL = -0.5  # percent: a return below it is a fall
TIME_RULE = "close of the candidate session (XNYS), whose movement the window carries"


def movements(adj_close: np.ndarray) -> np.ndarray:
    """Paper 001 eq. 1-2 per session: the label of the return from the session before
    (the first session has none: "").

    >>> movements(np.array([100.0, 101.0, 99.99, 100.19])).tolist()
    ['', 'rise', 'fall', 'freeze']
    """
    out = np.full(len(adj_close), "", dtype=object)
    if len(adj_close) > 1:
        r = (adj_close[1:] - adj_close[:-1]) / adj_close[:-1] * 100.0
        out[1:] = np.where(r > RISE, "rise", np.where(r < FALL, "fall", "freeze"))
        out[1:][~np.isfinite(r)] = ""
    return out


def value_text(x: float, *, integral: bool) -> str:
    """A value as written in a window: whole numbers without decimals, others to six
    significant digits (prices to the cent and beyond, ratios to 1e-6 relative).

    >>> value_text(11.552857398986816, integral=False), value_text(445138400.0, integral=True)
    ('11.5529', '445138400')
    """
    if integral:
        return str(round(x))
    return repr(float(f"{x:.6g}"))


@dataclass
class Windows:
    """The candidate sessions of one ticker and the strings every window reuses."""

    ticker: str
    dates: list[dt.date]
    date_text: list[str]  # ISO dates, JSON-quoted
    movement: np.ndarray  # per session, "" where unknown
    consecutive: np.ndarray  # bool: sessions i-5 .. i are consecutive XNYS sessions
    values: pd.DataFrame  # the series, one column each

    @classmethod
    def of(cls, bars: pd.DataFrame, values: pd.DataFrame, ticker: str) -> Windows:
        dates = [d if isinstance(d, dt.date) else d.date() for d in bars.index]
        cal = get_calendar()
        consecutive = np.zeros(len(dates), dtype=bool)
        if dates:
            sessions = cal.sessions(dates[0], dates[-1])
            pos = np.searchsorted(
                np.array(sessions, dtype="datetime64[D]"), np.array(dates, dtype="datetime64[D]")
            )
            consecutive[LENGTH:] = (pos[LENGTH:] - pos[:-LENGTH]) == LENGTH
        return cls(
            ticker=ticker,
            dates=dates,
            date_text=[json.dumps(d.isoformat()) for d in dates],
            movement=movements(bars["adj_close"].to_numpy(float)),
            consecutive=consecutive,
            values=values,
        )

    def candidates(self) -> list[int]:
        """Rows that can be candidate sessions (before looking at any series' values)."""
        return [int(i) for i in np.flatnonzero(self.consecutive) if self.movement[i]]

    def text(self, i: int, name: str) -> str:
        """The JSON of candidate row `i` for series `name` (one-off; `items` is the fast path)."""
        strings = _strings(self.values[name].to_numpy(float), integral=name in INTEGRAL)
        return self.head(i) + _tail(name, strings, i)

    def head(self, i: int) -> str:
        """The JSON of candidate row `i` up to its series' name: the same for every series."""
        return (
            f'{{"candidate_stock": {json.dumps(self.ticker)}, '
            f'"candidate_date": {self.date_text[i]}, '
            f'"candidate_movement": "{self.movement[i]}", '
            f'"recent_date_list": [{", ".join(self.date_text[i - LENGTH : i])}], "'
        )


def _tail(name: str, strings: list[str], i: int) -> str:
    return f'{name}_list": [{", ".join(strings[i - LENGTH : i])}]}}'


def _strings(values: np.ndarray, *, integral: bool) -> list[str]:
    return [value_text(x, integral=integral) if np.isfinite(x) else "" for x in values]


def _complete(x: np.ndarray) -> np.ndarray:
    """complete[i]: the LENGTH values before row i are all finite."""
    run = np.convolve(np.isfinite(x).astype(np.int64), np.ones(LENGTH, dtype=np.int64))
    complete = np.zeros(len(x), dtype=bool)
    complete[LENGTH:] = run[LENGTH - 1 : len(x) - 1] == LENGTH
    return complete


def items(
    w: Windows,
    options: IngestOptions,
    *,
    source_quads: list[Quad],
    source_doc: NamedNode,
    source: str,
) -> Iterator[Item]:
    """The `fkg:IndicatorWindow`s of each candidate session, one item per session: a window
    per series with five finite values, keyed by the session's first window (the others
    its `siblings`) and carrying its source document's quads once. A session's windows are
    written (and skipped on a re-ingest) together, so the key's presence means all of them
    are in the store.

    The hot path: every term shared by many windows is built once, and each window makes
    eleven new quads (pyoxigraph spends ~2 us on a quad with a literal object).
    """
    cal = get_calendar()
    g = options.graphs.market
    company = mint("company", w.ticker, base=options.base)
    p_type, c_window, p_ind, p_day, p_move = (
        RDF.type,
        FKG.IndicatorWindow,
        FKG.indicator,
        FKG.sessionDate,
        FKG.movement,
    )
    p_at, p_text, p_tq, p_tr, p_fam, p_about, p_from = (
        FKG.availableAt,
        FKG.text,
        FKG.timeQuality,
        FKG.timeRule,
        FKG.sourceFamily,
        FKG.about,
        PROV.wasDerivedFrom,
    )
    exact, rule, market = common.string("exact"), common.string(TIME_RULE), FKG.Market
    move = {m: common.string(m) for m in ("rise", "fall", "freeze")}
    columns = []
    for name in w.values.columns:
        x = w.values[name].to_numpy(float)
        strings = _strings(x, integral=name in INTEGRAL)
        columns.append(
            (name, Literal(name), strings, _complete(x), _prefix(w.ticker, name, options))
        )
    for i in w.candidates():
        iso = w.dates[i].isoformat()
        at = common.datetime(cal.bar_available_at(w.dates[i]))
        day, movement, head = common.date(w.dates[i]), move[w.movement[i]], w.head(i)
        quads = list(source_quads)
        key, siblings = None, []
        for name, indicator, strings, complete, prefix in columns:
            if not complete[i]:
                continue
            node = (
                NamedNode(prefix + iso)
                if prefix
                else mint("window", w.ticker, name, iso, base=options.base)
            )
            if key is None:
                key = node
            else:
                siblings.append(node)
            text = Literal(head + _tail(name, strings, i))
            quads += (
                Quad(node, p_type, c_window, g),
                Quad(node, p_ind, indicator, g),
                Quad(node, p_day, day, g),
                Quad(node, p_move, movement, g),
                Quad(node, p_at, at, g),
                Quad(node, p_text, text, g),
                Quad(node, p_tq, exact, g),
                Quad(node, p_tr, rule, g),
                Quad(node, p_fam, market, g),
                Quad(node, p_about, company, g),
                Quad(node, p_from, source_doc, g),
            )
        if key is not None:
            yield Item(key, quads, source, derived=True, siblings=frozenset(siblings))


def _prefix(ticker: str, name: str, options: IngestOptions) -> str | None:
    """`{base}window/{ticker}/{name}/` when `mint` writes these keys readably (a date key
    always is), so the hot loop can append the date; None when `mint` must hash them."""
    probe = mint("window", ticker, name, "2000-01-03", base=options.base).value
    prefix = f"{options.base}window/{ticker}/{name}/"
    return prefix if probe == prefix + "2000-01-03" else None
