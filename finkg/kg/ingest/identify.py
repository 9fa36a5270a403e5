"""Which filing a document is: the submissions indexes of one ingest call, and the clues a
document carries (its file name, its inline-XBRL cover facts, its cover page).

A document is matched to an index row by, in order: an accession number in its file name;
the row's `primaryDocument` name; then, among the rows of the company's form, the one whose
`filingDate` is the date in a `{ticker}-{form}-{YYYY-MM-DD}` name, or whose `reportDate` is
the period end (inline XBRL `dei:DocumentPeriodEndDate`, or a PDF's cover page "for the
fiscal year ended ..."), or, with only a fiscal year from a `{TICKER}_{YYYY}_{FORM}` name,
the one whose `reportDate` falls in that year, outside January and February (where
companies differ on which year names the fiscal year). A match must be unique.

>>> c = name_clues("AAPL_2019_10K", Index({"0000320193": "AAPL"}))
>>> c.cik, c.form, c.year
('0000320193', '10-K', 2019)
>>> name_clues("aapl-10-k-2024-11-01", Index({})).filed
datetime.date(2024, 11, 1)
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from finkg.kg.ingest import edgar

_FORM = r"(?P<form>\d{1,2}-?[A-Za-z]{1,2})"
_NAME_DATE = re.compile(
    rf"^(?P<co>[A-Za-z][A-Za-z0-9.&]*)[-_]{_FORM}[-_](?P<date>\d{{4}}-\d{{2}}-\d{{2}})$"
)
_NAME_YEAR = re.compile(rf"^(?P<co>[A-Za-z0-9.&-]+?)_(?P<year>\d{{4}})_{_FORM}$")
_PERIOD = re.compile(
    r"(?:fiscal\s+year|quarterly\s+period|period)\s+ended:?\s+"
    r"(?P<date>[A-Z][a-z]{2,8}\.?\s+\d{1,2}\s*,\s*\d{4})",
    re.IGNORECASE,
)
_DEI = r'<ix:non(?:Numeric|Fraction)[^>]*\bname="dei:{}"[^>]*>(.*?)</ix:non(?:Numeric|Fraction)>'
_SYMBOLS = re.compile(r"Trading\s+Symbol", re.I)
_TABLE_END = re.compile(r"Securities\s+registered\s+pursuant\s+to\s+Section\s+12\(g\)", re.I)
COVER_CHARS = 20_000  # where a cover page's "fiscal year ended" is looked for


def _alnum(text: str) -> str:
    return re.sub(r"[^A-Z0-9]", "", text.upper())


@dataclass
class Index:
    """The submissions indexes of this call, and the store's companies by CIK."""

    companies_by_cik: dict[str, str]
    priced_tickers: AbstractSet[str] = frozenset()  # companies the store has prices of
    companies: dict[str, edgar.Submissions] = field(default_factory=dict)
    by_accession: dict[str, edgar.Filing] = field(default_factory=dict)
    by_document: dict[str, list[edgar.Filing]] = field(default_factory=dict)

    def add(self, sub: edgar.Submissions) -> None:
        self.companies[sub.cik] = sub
        for f in sub.filings:
            self.by_accession[f.accession] = f
            if f.primary_document:
                self.by_document.setdefault(f.primary_document.lower(), []).append(f)

    def ticker(self, cik: str | None) -> str | None:
        """The index's first ticker for `cik`, else the store's."""
        sub = self.companies.get(cik or "")
        if sub and sub.tickers:
            return sub.tickers[0]
        return self.companies_by_cik.get(cik or "")

    def cik_of(self, token: str) -> str | None:
        """The CIK of a ticker, or of the one company whose name starts with `token` (four
        letters or more: `APPLE` is Apple Inc.)."""
        up = token.upper()
        for sub in self.companies.values():
            if up in sub.tickers:
                return sub.cik
        for cik, ticker in self.companies_by_cik.items():
            if ticker.upper() == up:
                return cik
        key = _alnum(up)
        named = [c for c, s in self.companies.items() if _alnum(s.name).startswith(key)]
        return named[0] if len(key) >= 4 and len(named) == 1 else None

    def rows(self, cik: str | None, form: str | None) -> list[edgar.Filing]:
        sub = self.companies.get(cik or "")
        if sub is None or not form:
            return []
        return [f for f in sub.filings if f.form.upper() == form.upper()]


@dataclass
class Clues:
    """What a document says about itself."""

    cik: str | None = None
    ticker: str | None = None  # a priced company's ticker, where no CIK is known
    ticker_from: str = ""
    form: str | None = None
    filed: dt.date | None = None  # filing date
    period: dt.date | None = None  # period end
    period_from: str = ""
    year: int | None = None  # fiscal year


def form_name(text: str) -> str:
    """`10k`, `10-k` and `10-K` as EDGAR writes it: `10-K`."""
    m = re.fullmatch(r"(\d{1,2})-?([A-Za-z]{1,2})", text.strip())
    return f"{m.group(1)}-{m.group(2).upper()}" if m else text.strip().upper()


def name_clues(stem: str, index: Index) -> Clues:
    """Clues from a file name without its suffixes."""
    c = Clues()
    if m := _NAME_DATE.match(stem):
        c.filed = _parse_date(m.group("date"))
    elif not (m := _NAME_YEAR.match(stem)):
        return c
    else:
        c.year = int(m.group("year"))
    c.cik = index.cik_of(m.group("co"))
    if c.cik is None and m.group("co").upper() in index.priced_tickers:
        c.ticker, c.ticker_from = m.group("co").upper(), "the file name"
    c.form = form_name(m.group("form"))
    return c


def html_clues(c: Clues, html: bytes) -> None:
    """Add the inline-XBRL cover facts (CIK, form, period end) of an HTML document."""
    text = html.decode("utf-8", errors="replace")
    cik, form, period = (
        _dei(text, k) for k in ("EntityCentralIndexKey", "DocumentType", "DocumentPeriodEndDate")
    )
    if cik and cik.isdigit() and len(cik) <= 10:
        c.cik = edgar.cik10(cik)
    c.form = form_name(form) if form else c.form
    if period_end := _parse_date(period):
        c.period, c.period_from = period_end, "dei:DocumentPeriodEndDate"


def cover_clues(c: Clues, text: str, index: Index) -> None:
    """Add the period end on a cover page ("for the fiscal year ended September 28, 2019"),
    when it agrees with a fiscal year from the name (that year or the next); and, when
    nothing names the company yet, the first priced ticker in the cover's "Trading
    Symbol(s)" table (10-K and 10-Q covers carry one since 2019)."""
    cover = text[:COVER_CHARS]
    if m := _PERIOD.search(cover):
        period = _parse_date(m.group("date"))
        if period and (c.year is None or period.year in (c.year, c.year + 1)):
            c.period, c.period_from = period, "the cover page"
    if c.cik is None and c.ticker is None and (ticker := trading_symbol(cover, index)):
        c.ticker, c.ticker_from = ticker, "the cover page's Trading Symbol"


def trading_symbol(cover: str, index: Index) -> str | None:
    """The first ticker of a priced company in a cover's "Trading Symbol(s)" table.

    >>> cover = ("Title of each class Trading Symbol(s) Name of each exchange "
    ...          "Common Stock, par value $0.000001 per share ATVI The Nasdaq Global Select "
    ...          "Market Securities registered pursuant to Section 12(g) of the Act: None EA")
    >>> trading_symbol(cover, Index({}, frozenset({"ATVI", "EA"})))
    'ATVI'
    >>> trading_symbol(cover, Index({}, frozenset({"EA"}))) is None
    True
    """
    m = _SYMBOLS.search(cover)
    if m is None:
        return None
    table = cover[m.end() : m.end() + 600]
    if stop := _TABLE_END.search(table):
        table = table[: stop.start()]
    symbols = re.findall(r"\b[A-Z]{1,5}\b", table)
    return next((t for t in symbols if t in index.priced_tickers), None)


def _dei(html: str, name: str) -> str | None:
    m = re.search(_DEI.format(name), html, re.S | re.I)
    return (re.sub(r"<[^>]+>|\s+", " ", m.group(1)).strip() or None) if m else None


def _parse_date(text: str | None) -> dt.date | None:
    if not text:
        return None
    text = re.sub(r"\s+", " ", text.replace(" ,", ",")).replace("Sept.", "Sep.").replace(".", "")
    for fmt in ("%Y-%m-%d", "%B %d, %Y", "%b %d, %Y", "%d %B %Y"):
        try:
            return dt.datetime.strptime(text, fmt).date()  # noqa: DTZ007 (a date)
        except ValueError:
            continue
    return None


def by_name(name: str, index: Index) -> tuple[edgar.Filing | None, str]:
    """The row named by a file name (its accession number or primary-document name)."""
    accession = edgar.accession_in(name)
    if accession and accession in index.by_accession:
        return index.by_accession[accession], "the accession number in the file name"
    if len(found := index.by_document.get(name.lower(), [])) == 1:
        return found[0], "the primaryDocument name"
    return None, ""


def by_clues(c: Clues, index: Index) -> tuple[edgar.Filing | None, str]:
    """The one row of the company's form that the clues single out, and how."""
    tests: list[tuple[str, Callable[[edgar.Filing], bool]]] = []
    if c.filed:
        tests.append(("the filing date in the file name", lambda f: f.filing_date == c.filed))
    if c.period:
        tests.append(
            (
                f"reportDate = period end {c.period} ({c.period_from})",
                lambda f: f.report_date == c.period,
            )
        )
    elif c.year:
        tests.append(
            (
                f"reportDate in fiscal year {c.year} (file name)",
                lambda f: _in_year(f.report_date, c.year),
            )
        )
    rows = index.rows(c.cik, c.form)
    for how, keep in tests:
        if len(hits := [f for f in rows if keep(f)]) == 1:
            return hits[0], how
    return None, ""


def _in_year(day: dt.date | None, year: int | None) -> bool:
    return day is not None and day.year == year and day.month > 2
