"""The periods a statement's columns stand for, read from its header lines.

A header names its columns by dates ("February 2, 2019  February 3, 2018"), by years under
a month and day ("Year Ended December 31, | 2019 | 2018 | 2017", "June 30, 2016 2015"), or
by fiscal years ("Fiscal 2019 | Fiscal 2018", "FY2022"). Each column gets:

- its fiscal year: the year the column names as fiscal ("Fiscal 2019"), else the year its
  period ends in, except that a period ending in the first week of January belongs to the
  year before (a 52/53-week year ending January 2, 2021 is fiscal 2020);
- its end date, where the header gives the month and day;
- its duration, for flows: "three months" (P3M), "six months" (P6M), "nine months" (P9M),
  else a year (P1Y); a balance sheet's columns are instants and have none. Where the header
  names several durations (a 10-Q's "Three Months Ended | Nine Months Ended") the columns
  are split among them in order.

>>> columns = header_periods(["February 2, 2019 February 3, 2018"], "balance")
>>> [(p.fiscal_year, p.end) for p in columns]
[(2019, datetime.date(2019, 2, 2)), (2018, datetime.date(2018, 2, 3))]
>>> [(p.fiscal_year, p.end, p.duration) for p in header_periods(
...     ["Year Ended December 31,", "(In millions) | 2019 | 2018"], "income")]
[(2019, datetime.date(2019, 12, 31), 'P1Y'), (2018, datetime.date(2018, 12, 31), 'P1Y')]
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS |= {m.lower(): i for i, m in enumerate(calendar.month_abbr) if m}
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DATE = re.compile(_MONTH + r"\s+(?P<day>\d{1,2})(?:,\s*|\s+)(?P<year>(?:19|20)\d\d)\b", re.I)
_MONTH_DAY = re.compile(_MONTH + r"\s+(?P<day>\d{1,2})\b(?!,?\s*(?:19|20)\d\d)", re.I)
_FISCAL = re.compile(r"\b(?:fiscal(?:\s+year)?|FY)\s*'?(?P<year>(?:19|20)?\d\d)\b", re.I)
_YEAR = re.compile(r"(?<![\d$.])(?<!\d,)(?P<year>(?:19|20)\d\d)(?![\d%]|[,.]\d)")
_DURATIONS = (
    ("P3M", re.compile(r"\b(?:three|3)[- ]months?\b|\bquarters?\s+ended\b", re.I)),
    ("P6M", re.compile(r"\b(?:six|6)[- ]months?\b", re.I)),
    ("P9M", re.compile(r"\b(?:nine|9)[- ]months?\b", re.I)),
    ("P1Y", re.compile(r"\b(?:twelve|12)[- ]months?\b|\byears?\b|\bfiscal\b", re.I)),
)


@dataclass(frozen=True)
class Period:
    """One column's period: fiscal year, end date (if printed), duration (None: instant)."""

    fiscal_year: int
    end: dt.date | None
    duration: str | None

    @property
    def label(self) -> str:
        return (
            f"FY{self.fiscal_year}"
            if self.duration in (None, "P1Y")
            else (f"{self.duration} to {self.end or self.fiscal_year}")
        )


def fiscal_year_of(end: dt.date) -> int:
    """The fiscal year a period ending on `end` belongs to (module docstring)."""
    return end.year - 1 if end.month == 1 and end.day <= 7 else end.year


def _dates(text: str) -> list[dt.date]:
    out = []
    for m in _DATE.finditer(text):
        try:
            out.append(dt.date(int(m["year"]), _MONTHS[m["month"].lower()], int(m["day"])))
        except ValueError:
            continue
    return out


def header_periods(header: list[str], kind: str) -> list[Period]:
    """The columns' periods, left to right; empty when the header does not say."""
    text = " ".join(header)  # a date may run over lines ("December" / "31," / "2018")
    durations = [d for d, pattern in _DURATIONS if pattern.search(text)]
    instant = kind == "balance"
    columns: list[tuple[int, dt.date | None]] = []
    dates = _dates(text)
    # "Fiscal 2019 | Fiscal 2018" names each column's fiscal year; one "Fiscal Year 2022"
    # over "2021 | 2020" is a caption, and the years are read as the others are
    fiscal = [int(m["year"]) for m in _FISCAL.finditer(text)]
    if len(fiscal) < 2:
        fiscal = []
    # each column's year once: a header may name them twice ("Fiscal years ended December
    # 31, 2022, December 25, 2021 ..." over "2022 | 2021")
    plain = _FISCAL.sub(" ", text) if fiscal else text
    years = list(dict.fromkeys(int(m["year"]) for m in _YEAR.finditer(plain)))
    if dates and len(dates) >= len(years):
        columns = [(fiscal_year_of(d), d) for d in dates]
    else:  # years under one month and day ("Year Ended December 31, | 2019 | 2018")
        first = dates[0] if dates else None
        month_day = _MONTH_DAY.search(text)
        month, day = (
            (first.month, first.day)
            if first
            else (_MONTHS[month_day["month"].lower()], int(month_day["day"]))
            if month_day
            else (None, None)
        )
        if fiscal:
            years = [y + 2000 if y < 100 else y for y in fiscal]
        for year in years:
            end = None
            if month is not None and day is not None:
                try:
                    end = dt.date(year, month, day)
                except ValueError:
                    end = None
            columns.append((fiscal_year_of(end) if end and not fiscal else year, end))
    if fiscal and dates and len(fiscal) == len(dates):
        columns = [
            (y + 2000 if y < 100 else y, d) for y, (_, d) in zip(fiscal, columns, strict=True)
        ]
    if not columns:
        return []
    if instant:
        return [Period(y, d, None) for y, d in columns]
    flows = [d for d in durations if d != "P1Y"] or ["P1Y"]
    if len(flows) > 1 and len(columns) % len(flows) == 0:
        per = len(columns) // len(flows)
        spans = [flows[i // per] for i in range(len(columns))]
    else:
        spans = [flows[0]] * len(columns)
    return [Period(y, d, s) for (y, d), s in zip(columns, spans, strict=True)]


__all__ = ["Period", "fiscal_year_of", "header_periods"]
