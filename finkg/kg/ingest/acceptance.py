"""When a filing became public: its EDGAR acceptance time, or a bound that is never earlier.

Exact times come from EDGAR: the SGML header's `<ACCEPTANCE-DATETIME>YYYYMMDDHHMMSS` and
the submissions index's `acceptanceDateTime`, which ends in `Z` but is read, like the
header, as US Eastern wall time (the AAPL 8-K `2024-10-31T16:30:25.000Z` is the 16:30
after-close earnings release); an index whose times look like UTC (`Clock`) gives
approximate times, never earlier than the truth. Without an acceptance time, the time is
*approximate* and chosen so that it can never be earlier than the true acceptance, so the
filing is never used before it was public (it may be used later than it could have been):

- a filing date: 22:00 America/New_York that day, the latest EDGAR accepts a filing for
  that filing date (EDGAR closes at 22:00; later submissions get the next filing date);
- a period end and a form: the period end plus the longest the form may take, Rule 12b-25
  extension included (10-K 90 + 15 days, 10-Q 45 + 5, 20-F 4 months + 15 days, 8-K four
  business days, taken as 10 calendar days), at 22:00 America/New_York;
- only a fiscal year Y: its end is the company's `fiscalYearEnd` in Y (in Y + 1 when that
  falls in January or February, where companies differ on which year names the fiscal
  year), or, unknown, the end of February of Y + 1; then the form's longest delay as above.

A filing later than its deadline (a delinquent filer) would be dated too early by the last
two rules: pair such a document with its submissions index to get its exact time.

>>> acceptance_time("2024-10-31T16:30:25.000Z", field="acceptanceDateTime").isoformat()
'2024-10-31T16:30:25-04:00'
>>> acceptance_time("20200213071218", field="ACCEPTANCE-DATETIME").isoformat()
'2020-02-13T07:12:18-05:00'
>>> by_filing_date(dt.date(2020, 4, 30), "filingDate of the index").at.isoformat()
'2020-04-30T22:00:00-04:00'
>>> by_period(dt.date(2019, 12, 31), "10-K", "the cover page").at.isoformat()
'2020-04-14T22:00:00-04:00'
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from finkg.errors import InputError, TimestampError

EASTERN = ZoneInfo("America/New_York")
EXACT, APPROXIMATE = "exact", "approximate"
LATEST = dt.time(22, 0)  # EDGAR's last acceptance for a filing date (US Eastern)

# the longest a form may follow its period end, in calendar days, and why
DEADLINES: dict[str, tuple[int, str]] = {
    "10-K": (105, "10-K due 90 days after the fiscal year end at the latest, plus 15 (12b-25)"),
    "10-KT": (105, "10-KT due 90 days after the period end at the latest, plus 15 (Rule 12b-25)"),
    "10-Q": (50, "10-Q due 45 days after the quarter end at the latest, plus 5 (Rule 12b-25)"),
    "20-F": (135, "20-F due four months after the fiscal year end, plus 15 (Rule 12b-25)"),
    "8-K": (10, "8-K due four business days after the event, taken as 10 calendar days"),
}


def acceptance_time(text: str, *, field: str) -> dt.datetime:
    """An EDGAR acceptance time (`YYYYMMDDHHMMSS` or ISO with a `Z`) as New York time."""
    raw = text.strip()
    try:
        if raw.isdigit() and len(raw) == 14:
            wall = dt.datetime.strptime(raw, "%Y%m%d%H%M%S")  # noqa: DTZ007 (zone below)
        else:
            iso = re.sub(r"(\.\d+)?(Z|[+-]00:?00)$", "", raw)
            wall = dt.datetime.fromisoformat(iso)
            if wall.tzinfo is not None:
                raise ValueError("an offset other than Z")
    except ValueError:
        raise TimestampError(
            "not an EDGAR acceptance time (YYYYMMDDHHMMSS, or YYYY-MM-DDTHH:MM:SS.000Z)",
            field=field,
            value=text,
        ) from None
    return wall.replace(tzinfo=EASTERN)


@dataclass(frozen=True)
class Clock:
    """How many of an index's acceptance times fall outside EDGAR's hours (06:00-22:00
    US Eastern) when read as Eastern wall time, and when read as UTC.

    EDGAR's `acceptanceDateTime` is documented here as Eastern wall time, and some indexes
    are (AAPL's); others hold UTC (TSLA's index has the 10-K whose SGML header says
    07:12:18 at 12:12:18Z). Reading UTC as Eastern dates a filing 4-5 hours late, never
    early, so finkg always reads Eastern, and marks the times of an index that looks like
    UTC as approximate.
    """

    outside_as_eastern: int
    outside_as_utc: int
    total: int

    @property
    def looks_utc(self) -> bool:
        return self.outside_as_eastern >= 10 and self.outside_as_eastern > 5 * self.outside_as_utc

    @classmethod
    def of(cls, walls: list[dt.datetime]) -> Clock:
        def outside(t: dt.datetime) -> bool:
            return not dt.time(6) <= t.time() < dt.time(22)

        utc = [w.replace(tzinfo=dt.UTC).astimezone(EASTERN) for w in walls]
        return cls(sum(map(outside, walls)), sum(map(outside, utc)), len(walls))


@dataclass(frozen=True)
class Availability:
    """When a filing became public, how sure that is, and the rule that says so."""

    at: dt.datetime
    quality: str
    rule: str


def exact(text: str, *, field: str, rule: str, now: dt.datetime | None = None) -> Availability:
    """An EDGAR acceptance time; one after `now` is an InputError (a filing from the future)."""
    at = acceptance_time(text, field=field)
    now = now or dt.datetime.now(dt.UTC)
    if at > now:
        raise InputError(
            "acceptance time is in the future",
            field=field,
            value=text,
            hint="check the file: EDGAR accepts filings only up to now",
        )
    return Availability(at, EXACT, rule)


def _at_latest(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, LATEST, tzinfo=EASTERN)


def by_filing_date(day: dt.date, where: str) -> Availability:
    rule = (
        f"approximate: filing date {day.isoformat()} ({where}) at 22:00 America/New_York, "
        "EDGAR's latest acceptance for a filing date; no acceptance time was found"
    )
    return Availability(_at_latest(day), APPROXIMATE, rule)


def _deadline(form: str) -> tuple[int, str] | None:
    return DEADLINES.get(form.upper())


def by_period(period: dt.date, form: str, where: str) -> Availability | None:
    """The period end plus the form's longest delay; None for forms without a deadline."""
    deadline = _deadline(form)
    if deadline is None:
        return None
    days, why = deadline
    rule = (
        f"approximate: period end {period.isoformat()} ({where}) + {days} days ({why}), "
        "at 22:00 America/New_York; no acceptance time or filing date was found"
    )
    return Availability(_at_latest(period + dt.timedelta(days=days)), APPROXIMATE, rule)


def by_fiscal_year(year: int, form: str, fiscal_year_end: str | None) -> Availability | None:
    """A bound from a fiscal year alone (see the module docstring)."""
    deadline = _deadline(form)
    if deadline is None:
        return None
    if fiscal_year_end:
        month, day = int(fiscal_year_end[:2]), int(fiscal_year_end[2:])
        end_year = year + 1 if month <= 2 else year
        try:
            end = dt.date(end_year, month, day)
        except ValueError:  # 0229 in a common year
            end = dt.date(end_year, month, 28)
        how = f"the company's fiscalYearEnd {fiscal_year_end} for fiscal year {year}"
    else:
        end = dt.date(year + 1, 3, 1) - dt.timedelta(days=1)
        how = f"fiscal year {year} taken to end by the end of February {year + 1} (the latest)"
    found = by_period(end, form, how)
    assert found is not None
    return found
