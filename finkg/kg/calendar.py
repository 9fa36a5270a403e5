"""Exchange sessions and the anchor times of DESIGN §3 ("Time: the one rule").

Sessions, opens, closes and early closes come from the ``exchange_calendars``
package (XNYS by default); there is no hand-written holiday list here.  The
calendar covers 1990-01-01 to 2035-12-31 (``RANGE_START`` .. ``RANGE_END``); a
date outside it is an InputError.  Future sessions are the library's projection
of the rules: ad hoc closures appear only once the library adds them.  A naive
datetime is a TimestampError; datetimes in any zone are compared as instants and
results are returned in the exchange's zone (America/New_York).

>>> from zoneinfo import ZoneInfo
>>> ny = ZoneInfo("America/New_York")
>>> a = get_calendar().anchor_times(datetime(2020, 4, 30, 16, 30, tzinfo=ny))
>>> a.prediction_day, a.card_last_session, a.decision_time.isoformat()
(datetime.date(2020, 5, 1), datetime.date(2020, 4, 30), '2020-04-30T16:30:00-04:00')
"""

from __future__ import annotations

import bisect
import functools
import warnings
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

from finkg.errors import InputError, TimestampError

if TYPE_CHECKING:
    from exchange_calendars import ExchangeCalendar

RANGE_START = date(1990, 1, 1)
RANGE_END = date(2035, 12, 31)
_RANGE = f"{RANGE_START.isoformat()}..{RANGE_END.isoformat()}"
_WIDEN = "use a date in that range, or widen RANGE_START/RANGE_END in finkg/kg/calendar.py"

__all__ = ["RANGE_END", "RANGE_START", "AnchorTimes", "MarketCalendar", "get_calendar"]


@dataclass(frozen=True)
class AnchorTimes:
    """The times that follow from one publication instant (DESIGN §3).

    ``evidence_cutoff`` equals ``decision_time``: evidence is eligible only if
    ``availableAt < evidence_cutoff`` (strictly).  ``card_last_session`` is the
    session before ``prediction_day``; the market-context card uses bars up to
    and including it.
    """

    published: datetime
    prediction_day: date
    decision_time: datetime
    evidence_cutoff: datetime
    card_last_session: date


class MarketCalendar:
    """One exchange's sessions over ``RANGE_START`` .. ``RANGE_END``; see :func:`get_calendar`.

    >>> cal = get_calendar()
    >>> cal.is_session(date(2020, 7, 3)), cal.next_session(date(2020, 7, 3))
    (False, datetime.date(2020, 7, 6))
    >>> cal.session_close(date(2020, 11, 27)).isoformat()
    '2020-11-27T13:00:00-05:00'
    """

    def __init__(self, xcal: ExchangeCalendar) -> None:
        self.name: str = xcal.name
        self.tz = xcal.tz
        self._sessions: list[date] = [ts.date() for ts in xcal.sessions]
        self._index: dict[date, int] = {d: i for i, d in enumerate(self._sessions)}
        self._opens: list[datetime] = [t.to_pydatetime().astimezone(UTC) for t in xcal.opens]
        self._closes: list[datetime] = [t.to_pydatetime().astimezone(UTC) for t in xcal.closes]

    def _day(self, day: date, field: str = "day") -> date:
        if isinstance(day, datetime) or not isinstance(day, date):
            raise InputError(
                "expected a calendar date",
                field=field,
                value=day,
                hint="pass a datetime.date, e.g. date(2020, 5, 1) or dt.date()",
            )
        if not RANGE_START <= day <= RANGE_END:
            raise InputError(
                f"date outside the {self.name} calendar range {_RANGE}",
                field=field,
                value=day.isoformat(),
                hint=_WIDEN,
            )
        return day

    def _instant(self, when: datetime, field: str = "published") -> datetime:
        if not isinstance(when, datetime):
            raise TimestampError(
                "expected a zone-aware datetime",
                field=field,
                value=when,
                hint="pass a datetime with tzinfo, e.g. ZoneInfo('America/New_York')",
            )
        if when.tzinfo is None or when.utcoffset() is None:
            raise TimestampError(
                "naive datetime (no time zone)",
                field=field,
                value=when.isoformat(),
                hint="attach a zone, e.g. tzinfo=ZoneInfo('America/New_York')",
            )
        self._day(when.astimezone(self.tz).date(), field)
        return when.astimezone(UTC)

    def _session_index(self, session: date, field: str = "session") -> int:
        i = self._index.get(self._day(session, field))
        if i is None:
            raise InputError(
                f"not an {self.name} session (a weekend or exchange holiday)",
                field=field,
                value=session.isoformat(),
                hint="use next_session(day) or previous_session(day) to reach a session",
            )
        return i

    def _at(self, i: int, what: str, value: object) -> date:
        if not 0 <= i < len(self._sessions):
            raise InputError(
                f"{what} falls outside the {self.name} calendar range {_RANGE}",
                value=value,
                hint=_WIDEN,
            )
        return self._sessions[i]

    def is_session(self, day: date) -> bool:
        """Whether ``day`` is a trading session.

        >>> get_calendar().is_session(date(2020, 5, 2))
        False
        """
        return self._day(day) in self._index

    def session_open(self, day: date) -> datetime:
        """The open of session ``day`` in the exchange zone.

        >>> get_calendar().session_open(date(2020, 5, 1)).isoformat()
        '2020-05-01T09:30:00-04:00'
        """
        return self._opens[self._session_index(day, "day")].astimezone(self.tz)

    def session_close(self, day: date) -> datetime:
        """The close of session ``day`` in the exchange zone (early closes respected).

        >>> get_calendar().session_close(date(2020, 5, 1)).isoformat()
        '2020-05-01T16:00:00-04:00'
        """
        return self._closes[self._session_index(day, "day")].astimezone(self.tz)

    def next_session(self, day: date) -> date:
        """The first session strictly after ``day`` (``day`` need not be a session).

        >>> get_calendar().next_session(date(2020, 5, 1))
        datetime.date(2020, 5, 4)
        """
        i = bisect.bisect_right(self._sessions, self._day(day))
        return self._at(i, "the session after this day", day.isoformat())

    def previous_session(self, day: date) -> date:
        """The last session strictly before ``day`` (``day`` need not be a session).

        >>> get_calendar().previous_session(date(2020, 5, 4))
        datetime.date(2020, 5, 1)
        """
        i = bisect.bisect_left(self._sessions, self._day(day)) - 1
        return self._at(i, "the session before this day", day.isoformat())

    def session_offset(self, session: date, n: int) -> date:
        """The session ``n`` sessions after ``session`` (before it when ``n < 0``).

        >>> get_calendar().session_offset(date(2020, 5, 1), 4)
        datetime.date(2020, 5, 7)
        """
        i = self._session_index(session) + n
        return self._at(i, f"{n:+d} sessions from {session.isoformat()}", n)

    def sessions(self, start: date, end: date) -> list[date]:
        """The sessions from ``start`` to ``end``, both inclusive.

        >>> get_calendar().sessions(date(2020, 7, 2), date(2020, 7, 6))
        [datetime.date(2020, 7, 2), datetime.date(2020, 7, 6)]
        """
        lo, hi = self._day(start, "start"), self._day(end, "end")
        if lo > hi:
            raise InputError(
                "start is after end",
                field="start",
                value=f"{lo.isoformat()} > {hi.isoformat()}",
                hint="swap the two dates",
            )
        return self._sessions[
            bisect.bisect_left(self._sessions, lo) : bisect.bisect_right(self._sessions, hi)
        ]

    def bar_available_at(self, session: date) -> datetime:
        """When the daily bar of ``session`` becomes knowable: its close.

        >>> get_calendar().bar_available_at(date(2020, 11, 27)).isoformat()
        '2020-11-27T13:00:00-05:00'
        """
        return self.session_close(session)

    def prediction_day(self, published: datetime) -> date:
        """The first session whose open is strictly after ``published``.

        >>> from zoneinfo import ZoneInfo
        >>> get_calendar().prediction_day(datetime(2020, 5, 2, 12, tzinfo=ZoneInfo("UTC")))
        datetime.date(2020, 5, 4)
        """
        i = bisect.bisect_right(self._opens, self._instant(published))
        return self._at(i, "the prediction day", published.isoformat())

    def decision_time(self, published: datetime) -> datetime:
        """``max(published, close of the session before the prediction day)``.

        >>> from zoneinfo import ZoneInfo
        >>> ny = ZoneInfo("America/New_York")
        >>> get_calendar().decision_time(datetime(2020, 4, 30, 11, tzinfo=ny)).isoformat()
        '2020-04-30T16:00:00-04:00'
        """
        return self.anchor_times(published).decision_time

    def anchor_times(self, published: datetime) -> AnchorTimes:
        """All anchor times of ``published`` (returned as the same instant in the exchange zone).

        >>> from zoneinfo import ZoneInfo
        >>> ny = ZoneInfo("America/New_York")
        >>> a = get_calendar().anchor_times(datetime(2020, 5, 1, 7, 30, tzinfo=ny))
        >>> a.prediction_day, a.decision_time.isoformat(), a.evidence_cutoff == a.decision_time
        (datetime.date(2020, 5, 1), '2020-05-01T07:30:00-04:00', True)
        """
        instant = self._instant(published)
        i = bisect.bisect_right(self._opens, instant)
        day = self._at(i, "the prediction day", published.isoformat())
        last = self._at(i - 1, "the session before the prediction day", published.isoformat())
        decided = max(instant, self._closes[i - 1]).astimezone(self.tz)
        return AnchorTimes(
            published=instant.astimezone(self.tz),
            prediction_day=day,
            decision_time=decided,
            evidence_cutoff=decided,
            card_last_session=last,
        )

    def label_window(self, prediction_day: date, horizon: int) -> tuple[date, date]:
        """``(session before P, session P+h-1)``: label = adjClose(end) / adjClose(start) - 1.

        >>> get_calendar().label_window(date(2020, 5, 1), 5)
        (datetime.date(2020, 4, 30), datetime.date(2020, 5, 7))
        """
        if isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < 1:
            raise InputError(
                "horizon must be a whole number of sessions >= 1",
                field="horizon",
                value=horizon,
                hint="use 1 for next-session labels, 5 for a week",
            )
        i = self._session_index(prediction_day, "prediction_day")
        start = self._at(i - 1, "the session before the prediction day", prediction_day.isoformat())
        end = self._at(i + horizon - 1, f"the label end for horizon {horizon}", horizon)
        return start, end


def get_calendar(name: str = "XNYS") -> MarketCalendar:
    """The calendar ``name`` over ``RANGE_START`` .. ``RANGE_END``, built once per process.

    >>> get_calendar() is get_calendar("XNYS")
    True
    """
    return _build(name)


@functools.cache
def _build(name: str) -> MarketCalendar:
    import exchange_calendars as xc

    try:
        with warnings.catch_warnings():
            # exchange_calendars 4.13 calls Series.values on tz-aware data inside its
            # constructor; pandas 3.1 deprecates that (Pandas4Warning). Library noise only.
            warnings.filterwarnings("ignore", message="Series.values returning an ndarray")
            xcal = xc.get_calendar(name, start=RANGE_START.isoformat(), end=RANGE_END.isoformat())
    except (xc.errors.InvalidCalendarName, ValueError) as exc:
        raise InputError(
            f"cannot build exchange calendar: {exc}",
            field="name",
            value=name,
            hint="use an exchange_calendars name such as 'XNYS'",
        ) from exc
    return MarketCalendar(xcal)
