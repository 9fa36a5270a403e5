"""The demo's trading sessions and the prediction-day rule, vectorised.

Sessions, opens and closes come from :func:`finkg.kg.calendar.get_calendar` (XNYS from
``exchange_calendars``).  Wall times are America/New_York clock readings without a zone,
held as ``datetime64[s]``; :meth:`Sessions.prediction_index` applies DESIGN §3: the
prediction day is the first session whose open is strictly after the instant.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np
import pandas as pd

from finkg.errors import InputError
from finkg.kg.calendar import get_calendar

ZONE = "America/New_York"


@dataclass(frozen=True)
class Sessions:
    """``n`` consecutive XNYS sessions with their opens and closes (UTC nanoseconds)."""

    days: tuple[date, ...]
    opens_ns: np.ndarray
    closes_ns: np.ndarray

    def __len__(self) -> int:
        return len(self.days)

    @property
    def iso(self) -> list[str]:
        return [d.isoformat() for d in self.days]

    def prediction_index(self, wall: np.ndarray) -> np.ndarray:
        """Index of the first session whose open is strictly after each wall time."""
        return np.searchsorted(self.opens_ns, wall_to_utc_ns(wall), side="right")


def wall_to_utc_ns(wall: np.ndarray) -> np.ndarray:
    """New York wall times (``datetime64``) as UTC epoch nanoseconds.

    The demo never writes a time between 00:00 and 04:59, so DST gaps cannot occur.
    """
    idx = pd.DatetimeIndex(np.asarray(wall, dtype="datetime64[s]"))
    utc = idx.tz_localize(ZONE, ambiguous="raise", nonexistent="raise").tz_convert("UTC")
    return utc.as_unit("ns").asi8


def demo_sessions(start: date, n: int) -> Sessions:
    """The ``n`` sessions from the first session on or after ``start``."""
    cal = get_calendar("XNYS")
    days = cal.sessions(start, start + timedelta(days=int(n * 1.6) + 30))
    if len(days) < n:  # pragma: no cover - the span above always holds n sessions
        raise InputError("not enough sessions after start", field="start", value=start)
    days = days[:n]
    opens = np.array([cal.session_open(d).timestamp() for d in days]) * 1e9
    closes = np.array([cal.session_close(d).timestamp() for d in days]) * 1e9
    return Sessions(tuple(days), opens.round().astype(np.int64), closes.round().astype(np.int64))


def as_wall_strings(wall: np.ndarray, sep: str = " ") -> list[str]:
    """``datetime64`` wall times as ``YYYY-MM-DD HH:MM:SS`` (or with ``sep='T'``)."""
    text = np.datetime_as_string(np.asarray(wall, dtype="datetime64[s]"), unit="s")
    return [t.replace("T", sep) for t in text.tolist()]
