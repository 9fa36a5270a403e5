"""Where a filing's financial statements are, and what each covers (a table's label).

A chunk cut from the middle of a statement table holds rows such as "Inventories | (629) |
(903)" and nothing saying which statement, which years or which units they belong to. This
module finds each primary statement in a document's normalized text from its title line and
gives every part of it the same label: the statement's kind, its title, and its column
header (the period line, the years, the units), so that retrieval can match "the cash flow
statement" and "FY2022" against a chunk that does not say either, and a reader sees the
header of the table it is given.

Rules, fixed and general (no company or document is special):

- a title is a line of at most 12 words naming one of the statements below, with no table
  cell separator and no trailing page number (a table of contents lists the same titles,
  each with its page);
- a statement runs from its title to the first of: the next title, the standard footer
  ("The accompanying notes are an integral part ...", "See notes to ..."), a paragraph
  after its table rows (a line of more than `PROSE_CHARS` characters without a cell), the
  end of the text, or `MAX_CHARS` characters;
- its header is the lines after the title up to the first table row whose first cell is
  a line item, at most `HEADER_LINES`: "Years ended December 31", "(Millions) | 2022 |
  2021 | 2020"; its years are the four-digit years 1990-2039 written there.

Kinds: `income` (statements of income, operations, earnings), `balance` (balance sheets,
statements of financial position or condition), `cash flow` (statements of cash flows),
`equity` (statements of shareholders' equity), `comprehensive` (comprehensive income alone).

>>> text = ("Index\\nConsolidated Balance Sheets 52\\n\\nACME Corp\\n"
...         "Consolidated Statements of Cash Flows\\nYears ended December 31\\n"
...         "(In millions) | 2022 | 2021\\nNet income | 5 | 4\\nCapital expenditures | (2) | (1)\\n"
...         "See accompanying notes.\\nItem 9. Other")
>>> [(s.kind, s.title, s.years) for s in statement_sections(text)]
[('cash flow', 'Consolidated Statements of Cash Flows', (2022, 2021))]
>>> s = statement_sections(text)[0]
>>> s.label
'Consolidated Statements of Cash Flows · Years ended December 31 · (In millions) | 2022 | 2021'
>>> text[s.start:s.end].splitlines()[-1]
'See accompanying notes.'
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

MAX_CHARS = 9000
HEADER_LINES = 5
PROSE_CHARS = 120  # a line this long without a table cell is a paragraph
KINDS = ("income", "balance", "cash flow", "equity", "comprehensive")

_OF = r"statements?\s+of\s+(?:consolidated\s+)?"
_TITLES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("cash flow", re.compile(rf"{_OF}cash\s+flows?\b|\bcash\s+flows?\s+statements?\b", re.I)),
    (
        "equity",
        re.compile(
            rf"{_OF}(?:changes\s+in\s+)?(?:(?:stock|share)holders|shareowners|"
            r"members|partners)?['’]?\s*(?:equity|deficit)\b",
            re.I,
        ),
    ),
    (
        "income",
        re.compile(
            rf"{_OF}(?:net\s+)?(?:operations|income|earnings|loss)\b|\bincome\s+statements?\b",
            re.I,
        ),
    ),
    ("comprehensive", re.compile(rf"{_OF}comprehensive\s+(?:income|loss|earnings)\b", re.I)),
    (
        "balance",
        re.compile(
            rf"\bbalance\s+sheets?\b|{_OF}financial\s+(?:position|condition)\b|{_OF}condition\b",
            re.I,
        ),
    ),
)
_FOOTER = re.compile(
    r"accompanying\s+notes|see\s+(?:the\s+)?(?:accompanying\s+)?notes\s+to|"
    r"notes\s+to\s+(?:the\s+)?(?:condensed\s+)?consolidated\s+financial\s+statements\s+are",
    re.I,
)
_PAGE_NUMBER = re.compile(r"(?:\s|\|)\d{1,3}$")
_YEAR = re.compile(r"\b(?:19[9]\d|20[0-3]\d)\b")
_LINE = re.compile(r"[^\n]*")
# a PDF's text can set a title's last letter apart ("Consolidated Balance Shee t")
_SPLIT_LAST = re.compile(r"([A-Za-z]{2,}) ([a-z])$")


@dataclass(frozen=True)
class Section:
    """One statement: its kind, where it lies in the text, its title and header lines."""

    kind: str
    start: int
    end: int
    title: str
    header: tuple[str, ...]
    years: tuple[int, ...]

    @property
    def label(self) -> str:
        return " · ".join(x for x in (self.title, *self.header) if x)


def title_kind(line: str) -> str | None:
    """The statement a line names as a title, or None (a sentence, a table of contents
    entry or a table row is no title).

    >>> title_kind("CONSOLIDATED STATEMENTS OF OPERATIONS"), title_kind("Balance Sheets 52")
    ('income', None)
    >>> title_kind("Consolidated Statements of Operations and Comprehensive Income (Loss)")
    'income'
    >>> title_kind("Consolidated Statement of Incom e")  # a PDF's last letter set apart
    'income'
    """
    line = _SPLIT_LAST.sub(r"\1\2", line.strip())
    if not line or "|" in line or len(line.split()) > 12 or _PAGE_NUMBER.search(line):
        return None
    if line.endswith((".", ",", ";", ":")) and not line.lower().endswith("(continued)."):
        return None
    for kind, pattern in _TITLES:
        if pattern.search(line):
            return kind
    return None


def statement_sections(text: str) -> list[Section]:
    """Each statement in `text` (module docstring), in order."""
    lines = [(m.start(), m.group()) for m in _LINE.finditer(text) if m.group().strip()]
    titles = [(i, kind) for i, (_, line) in enumerate(lines) if (kind := title_kind(line))]
    stacked = _stacked_titles(lines, {i for i, _ in titles})
    written = {i: title for i, _kind, title in stacked}
    titles = sorted({*titles, *((i, kind) for i, kind, _title in stacked)})
    out = []
    for n, (i, kind) in enumerate(titles):
        start = lines[i][0]
        stop = titles[n + 1][0] if n + 1 < len(titles) else len(lines)
        end = min(len(text), start + MAX_CHARS)
        header: list[str] = []
        body_started = False
        for j in range(i + 1, stop):
            offset, line = lines[j]
            if offset >= end:
                break
            if _FOOTER.search(line):
                end = offset + len(line)
                break
            if body_started and "|" not in line and len(line) > PROSE_CHARS:
                end = offset  # a paragraph after the table: the statement has ended
                break
            first = line.split("|", 1)[0]
            if not body_started and len(header) < HEADER_LINES and not _is_item(line, first):
                header.append(line.strip())
            else:
                body_started = True
        else:
            if stop < len(lines):
                end = min(end, lines[stop][0])
        end = max(end, start + len(lines[i][1]))
        years = tuple(dict.fromkeys(int(y) for h in header for y in _YEAR.findall(h)))
        title = written.get(i, lines[i][1].strip())
        out.append(Section(kind, start, end, title, tuple(header), years))
    return [s for s in out if s.end > s.start]


def _stacked_titles(lines: list[tuple[int, str]], known: set[int]) -> list[tuple[int, str, str]]:
    """Titles a PDF's text sets one word a line ("CONSOLIDATED" / "BALANCE" / "SHEETS"):
    up to six lines of one or two words each that read as a title together, as (the last
    of them, where the header follows; the kind; the title's words joined)."""
    out = []
    for i in range(len(lines)):
        words: list[str] = []
        for j in range(i, min(i + 6, len(lines))):
            part = lines[j][1].strip()
            if "|" in part or len(part.split()) > 2:
                break
            words.append(part)
            kind = title_kind(" ".join(words)) if j > i else None
            if kind is not None and j not in known and not any(k in known for k in range(i, j + 1)):
                out.append((j, kind, " ".join(words)))
                break
    return out


def table_sections(text: str) -> list[Section]:
    """Every other table (kind `table`): a run of table lines (with `|`), short caption lines
    allowed inside; its title is the short line just above it, its header the table lines
    before the first line item (column labels, years, units), so a chunk cut from its
    middle still says what its columns are.

    >>> t = "Notes\\nRevenue by region\\n | 2019 | 2018\\nEurope | 5 | 4\\nAsia | 3 | 2\\n\\nProse."
    >>> [(s.title, s.header, s.years) for s in table_sections(t)]
    [('Revenue by region', ('| 2019 | 2018',), (2019, 2018))]
    """
    lines, offset = [], 0
    for line in text.split("\n"):
        lines.append((offset, line))
        offset += len(line) + 1
    out: list[Section] = []
    i = 0
    while i < len(lines):
        if "|" not in lines[i][1]:
            i += 1
            continue
        j = i
        while j < len(lines) and (
            "|" in lines[j][1] or (lines[j][1].strip() and len(lines[j][1]) <= 60)
        ):
            j += 1
        rows = [line for _, line in lines[i:j] if "|" in line]
        header = []
        for line in rows[:HEADER_LINES]:
            values = line.split("|")[1:]
            if any(re.search(r"\d", _YEAR.sub("", v)) for v in values):
                break  # a cell with a figure other than a year: the rows have begun
            header.append(line.strip())
        above = lines[i - 1][1].strip() if i and lines[i - 1][1].strip() else ""
        title = above if 0 < len(above) <= 100 and "|" not in above else ""
        if len(rows) >= 2 and (header or title):
            years = tuple(dict.fromkeys(int(y) for h in header for y in _YEAR.findall(h)))
            start = lines[i - 1][0] if title else lines[i][0]
            end = lines[j - 1][0] + len(lines[j - 1][1])
            out.append(Section("table", start, end, title, tuple(header), years))
        i = max(j, i + 1)
    return out


def _is_item(line: str, first: str) -> bool:
    """A table row whose first cell is a line item (words, not a period or unit caption)."""
    if "|" not in line:
        return False
    words = re.findall(r"[A-Za-z]{3,}", first)
    caption = re.search(r"\b(?:millions?|thousands?|billions?|ended|except|dollars)\b", first, re.I)
    return bool(words) and not caption and not _YEAR.search(first)


def section_at(sections: list[Section], start: int, end: int) -> Section | None:
    """The statement that most of [start, end) lies in (None when none overlaps it)."""
    i = bisect.bisect_right([s.start for s in sections], end) - 1
    best, most = None, 0
    for s in sections[max(0, i - 2) : i + 1]:
        overlap = min(end, s.end) - max(start, s.start)
        if overlap > most:
            best, most = s, overlap
    return best


__all__ = ["KINDS", "Section", "section_at", "statement_sections", "table_sections", "title_kind"]
