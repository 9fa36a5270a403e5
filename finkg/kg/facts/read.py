"""Statement facts read from a document's text: every figure of its primary statements.

The statements are found as `kg/statements.py` finds them (a title line, a header, table
rows up to a footer or a paragraph). Within one:

- its columns' periods come from its header (`periods.header_periods`);
- its scale from the words of its title, header or the lines just above the title ("in
  millions, except per share data", "$ in thousands"): money is multiplied out, per-share
  figures and percentages never are, share counts are unless the header excepts them
  ("except per share and share amounts") or gives them a scale of their own ("shares in
  thousands");
- each table row ("Merchandise inventories | 5,409 | 5,209") gives one fact per column: its
  label as printed (a row such as "Basic" with the heading it stands under, "Earnings per
  share: Basic"), the concept that label reads as in this statement (`concepts`), the
  value as a decimal with the sign read from parentheses (a dash is zero), and the span of
  the row in the text. A row with one more cell than columns, a small whole number first,
  gives the others (a note reference comes first); any other row whose cells are not its
  columns' figures is left out. A row of figures with no label is its heading's total
  ("Revenues" over its parts, then "5,162 | 12,900") when the heading reads as a line item
  no row under it has given yet.

Nothing here knows a company or a document: the rules are the layout of US statements.

>>> text = ("CONSOLIDATED BALANCE SHEETS\\n(in millions)\\nDecember 31, | 2019 | 2018\\n"
...         "Inventories | $1,234 | $(5)\\nTotal current assets | 2,000 | —\\n"
...         "See notes to consolidated financial statements.")
>>> for f in read_facts(text):
...     print(f.label, f.period.fiscal_year, f.value, f.concept.value.rsplit("#")[1])
Inventories 2019 1234000000 Inventories
Inventories 2018 -5000000 Inventories
Total current assets 2019 2000000000 CurrentAssets
Total current assets 2018 0 CurrentAssets
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from pyoxigraph import NamedNode

from finkg.kg.facts.concepts import concept_of
from finkg.kg.facts.periods import Period, header_periods
from finkg.kg.statements import Section, statement_sections

KINDS = ("income", "balance", "cash flow", "comprehensive")  # equity: a matrix, not columns
HEADER_LINES = 8
_SCALES = {"thousand": 3, "million": 6, "billion": 9}
_SCALE = re.compile(r"\b(thousand|million|billion)s?\b", re.I)
_SHARES_EXCEPTED = re.compile(r"except\b[^.;)]*\bshares?\b(?!\s+data)(?!\s+amounts?\s+in)", re.I)
_SHARES_SCALE = re.compile(r"shares?\b[^.;)]{0,40}\bin\s+(thousand|million|billion)s?", re.I)
_SHARE_COUNT = re.compile(
    r"^(?:[^:]*:\s*)?(?:shares\b|weighted[- ]average|number\s+of|average\s+(?:common\s+)?shares)"
    r"|\bshares\s+(?:used|outstanding|issued)\b",
    re.I,
)
_CELL = re.compile(
    r"^(?P<open>\()?\s*(?:US)?\$?\s*(?P<open2>\()?\s*(?P<num>\d[\d,]*(?:\.\d+)?|\.\d+)\s*"
    r"(?P<pct>%)?\s*(?P<close>\))?\s*(?P<pct2>%)?$"
)
_STOCK = re.compile(
    r"^(?:[^:]*:\s*)?(?:common|preferred|preference|treasury|capital|class\s+\w+)\s+(?:stock|shares)\b",
    re.I,
)
_SIGNS = frozenset(("$", "US$", "€", "£", "¥", ""))
_DASH = re.compile(r"^\$?\s*[-–—]+\s*%?$")
_LABEL_WORDS = re.compile(r"[A-Za-z]{2,}")


@dataclass(frozen=True)
class Fact:
    """One figure of a statement (module docstring)."""

    kind: str
    title: str
    label: str
    concept: NamedNode | None
    period: Period
    value: Decimal
    unit: str
    printed: str
    start: int  # the row's span in the text
    end: int
    column: int  # the period's column, from the left


def read_facts(text: str, sections: list[Section] | None = None) -> list[Fact]:
    """Every fact of the primary statements in `text`, statement by statement."""
    found = statement_sections(text) if sections is None else sections
    out: list[Fact] = []
    for section in found:
        if section.kind in KINDS and is_primary(section.title):
            out += _section_facts(text, section)
    return out


_STATEMENT_NAME = (
    r"(?:statements?\s+of\s+(?:consolidated\s+)?(?:"
    r"(?:net\s+)?(?:operations|income|earnings|loss)(?:\s*\((?:loss|income)\))?"
    r"(?:\s+and\s+comprehensive\s+(?:income|loss|earnings)(?:\s*\((?:loss|income)\))?)?"
    r"|comprehensive\s+(?:income|loss|earnings)(?:\s*\((?:loss|income)\))?"
    r"|cash\s+flows?|financial\s+(?:position|condition)|condition)"
    r"|balance\s+sheets?|income\s+statements?)"
)
_NAME_WORD = r"(?:[A-Z0-9][\w.,&'’/-]*|and|&|–|-)"  # a company's name: capitalized words
_PRIMARY = re.compile(
    rf"^(?:{_NAME_WORD}\s+)*?(?i:(?:(?:consolidated|combined|condensed)\s+)*{_STATEMENT_NAME}"
    r"(?:\s*\((?:continued|unaudited)\))*(?:\s*\([^()]*(?:millions|thousands|billions|dollars)[^()]*\))?)"
    rf"(?:(?:\s+{_NAME_WORD})*?\s+(?i:(?:and\s+)?(?:consolidated\s+)?subsidiar(?:y|ies)"
    r"(?:\s+companies)?))?"
    r"(?i:\s+(?:at|as\s+of|for\s+the\s+(?:fiscal\s+)?(?:years?|periods?)\s+ended|years?\s+ended)"
    r"\b[^|]*)?$"
)


def is_primary(title: str) -> bool:
    """Whether a statement's title names a primary statement and nothing more: "Consolidated
    Statements of Operations", not "Consolidated Statements of Operations Data" (a table of
    selected data) or "Supplemental Income Statement Information" (a note).

    >>> is_primary("CONSOLIDATED BALANCE SHEETS")
    True
    >>> is_primary("Consolidated Statements of Operations Data")
    False
    """
    title = re.sub(r"([A-Za-z]{2,}) ([a-z])$", r"\1\2", title.strip())
    return _PRIMARY.match(title) is not None


def _scale_words(text: str, section: Section, header: list[str]) -> str:
    """Where a statement says its scale: the lines just above its title, its title and
    header."""
    above = text[max(0, section.start - 300) : section.start].split("\n")[-3:]
    return " ".join([*above, section.title, *header])


def _header(lines: list[tuple[int, str]]) -> int:
    """How many of a statement's first lines (after its title) are its header: those
    before its first row of figures (a row whose cells are all years is a header line)."""
    for i, (_offset, line) in enumerate(lines[:HEADER_LINES]):
        if "|" not in line:
            continue
        values = [_number(c) for c in line.split("|")[1:]]
        figures = [v for v in values if v is not None]
        years = all(
            v is not None
            and not v[1]
            and v[0] == int(v[0])
            and 1990 <= v[0] <= 2039
            and "," not in c
            and "$" not in c
            for v, c in zip(values, line.split("|")[1:], strict=True)
        )
        if figures and not years:
            return i
    return min(len(lines), HEADER_LINES)


def _section_facts(text: str, section: Section) -> list[Fact]:
    body = text[section.start : section.end]
    lines = [(m.start() + section.start, m.group()) for m in re.finditer(r"[^\n]+", body)][1:]
    size = _header(lines)
    header = [line for _, line in lines[:size]]
    periods = header_periods(header or [section.title], section.kind)
    if not periods:
        return []
    words = _scale_words(text, section, header)
    money = _scale_of(words)
    shares = money
    if _SHARES_EXCEPTED.search(words):
        shares = 0
    if m := _SHARES_SCALE.search(words):
        shares = _SCALES[m.group(1).lower()]
    out: list[Fact] = []
    # the header's last line may already be the first rows' heading ("Revenues")
    last = header[-1].strip() if header else ""
    caption = re.search(
        r"\d|\b(?:millions?|thousands?|billions?|ended|except|fiscal)\b", last, re.I
    )
    heading = last.rstrip(":").strip() if last and "|" not in last and not caption else ""
    pending = ""
    seen: set[NamedNode] = set()  # the concepts read since the heading
    for offset, line in lines[size:]:
        if "|" not in line:
            if line.rstrip().endswith(":") or not line[:1].islower():
                heading, pending = line.strip().rstrip(":").strip(), line.strip()
                seen = set()
            else:
                pending = (pending + " " + line.strip()).strip()
            continue
        # a currency sign in a cell of its own (HTML tables: "Net income | $ | 93,736") is
        # the next figure's
        cells = [c.strip() for c in line.split("|") if c.strip() not in _SIGNS]
        # a label the layout split into cells ("Total | current assets | 5,121.3") runs to
        # the first figure
        first = next((i for i, c in enumerate(cells) if _number(c) is not None), len(cells))
        label, values = " ".join(cells[:first]), cells[first:]
        if label[:1].islower() and pending:  # a label printed over two lines
            label = pending + " " + label
        pending = ""
        if not _fits(values, len(periods)):
            continue
        found = [_number(v) for v in values[-len(periods) :]]
        parsed = [p for p in found if p is not None]
        if len(parsed) != len(found):
            continue
        if _LABEL_WORDS.search(label):
            concept, printed_label = _concept(label, heading, section.kind)
        else:  # a total printed without a label: its heading's, where none was read yet
            concept = concept_of(heading, section.kind) if heading else None
            if concept is None or concept in seen:
                continue
            printed_label = f"{heading} (a total row without a label)"
        if concept is not None:
            seen.add(concept)
        columns = zip(periods, values[-len(periods) :], parsed, strict=True)
        for column, (period, cell, number) in enumerate(columns):
            value, is_percent = number
            unit, scale = _unit(printed_label, is_percent, money, shares)
            out.append(
                Fact(
                    kind=section.kind,
                    title=section.title,
                    label=printed_label,
                    concept=concept,
                    period=period,
                    value=value * Decimal(10) ** scale if scale else value,
                    unit=unit,
                    printed=cell,
                    start=offset,
                    end=offset + len(line),
                    column=column,
                )
            )
    return out


def _fits(values: list[str], columns: int) -> bool:
    """Whether a row's cells are its columns' figures: as many, or one more that is a note
    reference before them ("Note 5 | 1,234 | 1,100": a small whole number)."""
    if len(values) == columns:
        return True
    if len(values) == columns + 1:
        return re.fullmatch(r"\(?\d{1,2}\)?", values[0].strip()) is not None
    return False


def _scale_of(words: str) -> int:
    m = _SCALE.search(words)
    return _SCALES[m.group(1).lower()] if m else 0


def _number(cell: str) -> tuple[Decimal, bool] | None:
    """(value, is a percentage) of a figure as printed; None for anything else."""
    cell = cell.strip().replace(" ", "")
    if _DASH.match(cell):
        return Decimal(0), cell.endswith("%")
    m = _CELL.match(cell)
    if m is None:
        return None
    try:
        value = Decimal(m["num"].replace(",", ""))
    except InvalidOperation:
        return None
    negative = bool((m["open"] or m["open2"]) and m["close"])
    return (-value if negative else value), bool(m["pct"] or m["pct2"])


def _concept(label: str, heading: str, kind: str) -> tuple[NamedNode | None, str]:
    """The concept of a row and its label as stored: the row's own label when it reads as
    a line item, else with its heading ("Earnings per share: Basic") when that does."""
    concept = concept_of(label, kind)
    if concept is not None or not heading:
        return concept, label
    joined = concept_of(f"{heading} {label}", kind)
    if joined is not None or len(label.split()) <= 2:
        return joined, f"{heading}: {label}"
    return None, label


def _unit(label: str, is_percent: bool, money: int, shares: int) -> tuple[str, int]:
    """The unit of a row's figures and the power of ten that scales them."""
    lowered = label.lower()
    if is_percent:
        return "percent", 0
    if _STOCK.match(label):  # "Common stock, $0.01 par value; 900,000 shares issued": an amount
        return "USD", money
    if _SHARE_COUNT.search(label):  # "Shares used in computing earnings per share: Diluted"
        return "shares", shares
    if "per share" in lowered or "per common share" in lowered or "per unit" in lowered:
        return "USD/share", 0
    if re.search(r"\bshares\b", lowered):
        return "shares", shares
    return "USD", money


__all__ = ["KINDS", "Fact", "read_facts"]
