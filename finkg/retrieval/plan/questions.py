"""What a question says before it is matched: its fiscal period and its normalized words.

Periods ("FY2020", "fiscal 2020", "Q3 2020", "third quarter of 2020"): a memory-bank entry
holds the answer for one period, labelled `FY2020` (a fiscal year) or `2020Q3` (a fiscal
quarter). `periods_in(text)` finds every period a question names, with where it is written,
so that the matcher can both check the period asked for and take the phrase out of the
question before comparing it with canonical questions (which name none).

Quarter forms are read first (`Q3 FY2020` is a quarter, not the year); then year forms;
a bare year ("revenue in 2020") is read as that fiscal year. Two-digit years are 20xx.

Normalized words (paper 002 §4.4: "remove punctuation and irrelevant entities"): lower case,
no punctuation, no period phrases, no company names or tickers, no articles or the
prepositions that attached them, so that "What was ACME's total revenue in Q3 2020?" and
the canonical "What was the total revenue?" read alike.

>>> [p.label for p in periods_in("Revenue in Q3'20 vs the third quarter of fiscal 2019?")]
['2020Q3', '2019Q3']
>>> parse_period("What was diluted EPS for FY 2021?"), parse_period("fiscal year 2018 capex")
('FY2021', 'FY2018')
>>> parse_period("net income in 2020"), parse_period("revenue growth"), parse_period("3Q 2020")
('FY2020', None, '2020Q3')
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from finkg.errors import InputError

LABEL = re.compile(r"(FY[0-9]{4}|[0-9]{4}Q[1-4])")
_YY = r"'?(\d{4}|\d{2})"
_ORDINAL = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "1st": 1,
    "2nd": 2,
    "3rd": 3,
    "4th": 4,
}
_FISCAL = r"(?:(?:fiscal\s+(?:year\s+)?)|FY\s*)?"
# (pattern, which group is the quarter, which the year); quarters before years
_QUARTERS = [
    (re.compile(rf"\bQ([1-4])\s*(?:of\s+)?{_FISCAL}{_YY}\b", re.I), 1, 2),
    (re.compile(r"\b(\d{4})\s*-?\s*Q([1-4])\b", re.I), 2, 1),
    (re.compile(rf"\b([1-4])Q\s*{_YY}\b", re.I), 1, 2),
    (
        re.compile(
            rf"\b({'|'.join(_ORDINAL)})\s+(?:fiscal\s+)?quarter\s+(?:of\s+)?{_FISCAL}(\d{{4}})\b",
            re.I,
        ),
        1,
        2,
    ),
]
_YEARS = [
    re.compile(rf"\bFY\s*{_YY}\b", re.I),
    re.compile(r"\bfiscal\s+(?:year\s+)?(\d{4})\b", re.I),
    re.compile(r"\b(\d{4})\s+fiscal\s+year\b", re.I),
    re.compile(r"\b((?:19|20)\d{2})\b"),
]


@dataclass(frozen=True)
class Period:
    label: str  # FY2020 or 2020Q3
    start: int  # where the phrase is written in the text
    end: int


def check_label(label: str, *, field: str = "period") -> str:
    """`label` if it is a period label (FY2020, 2020Q3); an InputError otherwise."""
    if not isinstance(label, str) or not LABEL.fullmatch(label):
        raise InputError(
            "a period is FY<year> for a fiscal year or <year>Q<1-4> for a quarter",
            field=field,
            value=label,
            hint="for example FY2020 or 2020Q3",
        )
    return label


def _year(text: str) -> str:
    return text if len(text) == 4 else "20" + text


def _quarter(text: str) -> int:
    return int(text) if text.isdigit() else _ORDINAL[text.lower()]


def periods_in(text: str) -> list[Period]:
    """Every period `text` names, in the order written."""
    found: list[Period] = []
    blank = text
    for pattern, q, y in _QUARTERS:
        for m in pattern.finditer(blank):
            label = f"{_year(m.group(y))}Q{_quarter(m.group(q))}"
            found.append(Period(label, m.start(), m.end()))
        blank = pattern.sub(lambda m: " " * len(m.group(0)), blank)
    for pattern in _YEARS:
        for m in pattern.finditer(blank):
            found.append(Period(f"FY{_year(m.group(1))}", m.start(), m.end()))
        blank = pattern.sub(lambda m: " " * len(m.group(0)), blank)
    return sorted(found, key=lambda p: p.start)


def parse_period(text: str) -> str | None:
    """The one period `text` asks about; None when it names none or several."""
    labels = {p.label for p in periods_in(text)}
    return labels.pop() if len(labels) == 1 else None


def without_periods(text: str) -> str:
    """`text` with every period phrase blanked out."""
    for p in periods_in(text):
        text = text[: p.start] + " " * (p.end - p.start) + text[p.end :]
    return text


_SUFFIX = re.compile(
    r"(\s*\(synthetic\)|,?\s+(inc|corp|corporation|co|company|ltd|plc|group|holdings)\.?)+$",
    re.IGNORECASE,
)


# Articles and the prepositions that attach a company or a period ("revenue *of* Apple *in*
# FY2020"): once those are taken out, they only tell the two texts apart by accident.
FILLERS = frozenset({"a", "an", "the", "in", "for", "of", "during", "at", "by"})


def company_names(names: Iterable[str]) -> tuple[list[str], list[str]]:
    """(names matched in any case, names matched as written) from a company's labels and
    tickers: "Apple Inc." also gives "Apple"; a ticker, and the first word of a longer name
    ("Acme" of "Acme Widgets Inc", title case), count only as written.

    >>> company_names(["Acme Widgets Inc (synthetic)", "ACME"])
    (['Acme Widgets Inc (synthetic)', 'Acme Widgets'], ['ACME', 'Acme'])
    """
    words, written = set(), set()
    for name in names:
        if re.fullmatch(r"[A-Z][A-Z0-9.\-]{0,9}", name):
            written.add(name)
            continue
        words.add(name)
        core = _SUFFIX.sub("", name).strip()
        if core:
            words.add(core)
            first = core.split()[0]
            if " " in core and len(first) >= 4 and first.isalpha():
                written.add(first.title())
    return sorted(words, key=lambda w: (-len(w), w)), sorted(written, key=lambda w: (-len(w), w))


def normalize(text: str, *, names: Iterable[str] = ()) -> str:
    """Lower-case words of `text` without punctuation, period phrases, company names or
    FILLERS.

    >>> normalize("What was Apple Inc.'s total revenue in FY2020?", names=["Apple Inc", "AAPL"])
    'what was total revenue'
    >>> normalize("What was the total revenue?")
    'what was total revenue'
    """
    words, written = company_names(names)
    for name in words:
        text = re.sub(rf"(?<!\w){re.escape(name)}\.?(?:['’]s)?(?!\w)", " ", text, flags=re.I)
    for name in written:
        text = re.sub(rf"(?<!\w){re.escape(name)}(?:['’]s)?(?!\w)", " ", text)
    text = without_periods(text)
    words = re.sub(r"[^\w\s]|_", " ", text.lower()).split()
    return " ".join(w for w in words if w not in FILLERS)


def names_company(query: str, names: Iterable[str]) -> bool:
    """Whether `query` names the company by one of `names` (tickers as written)."""
    words, written = company_names(names)
    return any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", query, flags=re.I) for w in words) or any(
        re.search(rf"(?<!\w){re.escape(t)}(?!\w)", query) for t in written
    )
