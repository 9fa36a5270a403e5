"""Table cells read from evidence text: each figure with its row label, column label, period,
unit and scale, the candidates a numeric question's operands are chosen from.

finkg writes a table row as its cells joined by `" | "` (HTML tables and PDF layout text
alike, `kg.ingest.doctext`). Rules:

- a table line has at least one `|`; its first cell is the row label, the others values;
- a header is a table line (or a line just before a table) whose value cells hold no figure
  other than years, or whose value cells are years ("2019 €m", "2018"); it names the columns
  of the rows below it, aligned from the right (a row may have fewer cells than its header);
- a row with a label and no figures ("Current assets"), or a short line without a full
  stop between table rows, is a group: the rows below it carry it until the next group,
  header or blank line;
- a figure is a number as finance writes it: `1,234.5`, `(1,234)` and `-1,234` are negative,
  `$`, `€` and `%` are read as units, a dash alone is no figure;
- the scale comes from the column label ("€m", "$000", "in millions") or, failing that, from
  the text's first "in thousands/millions/billions"; the period is the column's year (else
  the group's or label's).

>>> text = ("(In millions) | 2019 | 2018\\nNet sales | $1,200 | $1,100\\n"
...         "Cost of sales | (700) | (650)")
>>> [(c.label, c.column, c.period, str(c.value), c.unit, c.scale) for c in table_cells(text)]
... # doctest: +NORMALIZE_WHITESPACE
[('Net sales', '2019', '2019', '1200', '$', 'million'),
 ('Net sales', '2018', '2018', '1100', '$', 'million'),
 ('Cost of sales', '2019', '2019', '-700', '', 'million'),
 ('Cost of sales', '2018', '2018', '-650', '', 'million')]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

_FIGURE = re.compile(
    r"^(?P<neg1>[(\-–−])?\s*(?P<cur>US\$|[$€£¥])?\s*(?P<neg2>[(\-–−])?\s*"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)\s*(?P<pct>%)?\s*\)?\s*%?\s*$"
)
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
_SCALE_WORDS = (
    (re.compile(r"\bbillions?\b|\bbn\b|[$€£]\s?b\b", re.I), "billion"),
    (re.compile(r"\bmillions?\b|\bmn\b|\bmm\b|[$€£]\s?m\b|\b[€£$]?m\b", re.I), "million"),
    (re.compile(r"\bthousands?\b|\$\s?000|\b000s?\b|[$€£]\s?k\b", re.I), "thousand"),
)
_STATED = re.compile(r"in\s+(thousands|millions|billions)", re.I)


@dataclass(frozen=True)
class Cell:
    label: str  # the row label
    column: str  # the column label ("" when the table has no header)
    group: str  # the group row above ("" when none)
    written: str  # the cell as written
    value: Decimal  # signed, without its scale
    unit: str  # "%", "$", "€", ... or ""
    scale: str  # thousand, million, billion or ""
    period: str  # a year, when the column, group or label names one
    row: int  # the line the row is on, for telling tables apart
    index: int  # the value's position in its row (0: the first value cell)


def figure(text: str) -> tuple[Decimal, str] | None:
    """A cell's value and unit, or None when it holds no figure.

    >>> figure("$(1,234.5)"), figure("12.5 %"), figure("—"), figure("2019 €m")
    ((Decimal('-1234.5'), '$'), (Decimal('12.5'), '%'), None, None)
    """
    m = _FIGURE.match(text.strip())
    if not m:
        return None
    try:
        value = Decimal(m.group("num").replace(",", ""))
    except InvalidOperation:
        return None
    negative = bool(m.group("neg1") or m.group("neg2"))
    unit = "%" if "%" in text else (m.group("cur") or "")
    return (-value if negative else value), unit


def _scale(text: str) -> str:
    for pattern, name in _SCALE_WORDS:
        if pattern.search(text):
            return name
    return ""


def _is_header(values: list[str]) -> bool:
    if not values:
        return False
    figures = [figure(v) for v in values]
    years = [
        bool(_YEAR.fullmatch(v.strip())) or bool(_YEAR.search(v) and f is None)
        for v, f in zip(values, figures, strict=True)
    ]
    if any(years) and all(y or f is None for y, f in zip(years, figures, strict=True)):
        return True
    return all(f is None for f in figures) and any(v.strip() for v in values)


def table_cells(text: str) -> list[Cell]:
    """Every figure in `text`'s table rows (module docstring)."""
    stated = _STATED.search(text)
    default_scale = stated.group(1).lower().rstrip("s") if stated else ""
    out: list[Cell] = []
    header: list[str] = []
    group = ""
    for n, line in enumerate(text.split("\n")):
        if "|" not in line:
            words = line.split()
            if not words:
                header, group = [], ""
            elif (out or header) and len(words) <= 8 and not line.rstrip().endswith((".", ":")):
                group = line.strip()  # a caption row between table rows: "Current assets"
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.strip().startswith("|"):
            cells = ["", *cells]
        label, values = cells[0], cells[1:]
        if _is_header(values) and not any(figure(v) and not _YEAR.fullmatch(v) for v in values):
            if any(_YEAR.search(v) for v in values) or not header:
                header = values
            continue
        found = [(i, v, figure(v)) for i, v in enumerate(values)]
        if not any(f for _, _, f in found):
            if label:
                group = label
            continue
        shift = len(header) - len(values)
        for i, written, f in found:
            if f is None:
                continue
            column = header[i + shift] if 0 <= i + shift < len(header) else ""
            years = _YEAR.findall(column) or _YEAR.findall(group) or _YEAR.findall(label)
            scale = _scale(column) or default_scale
            if f[1] == "%":
                scale = ""
            out.append(
                Cell(
                    label,
                    column,
                    group,
                    written,
                    f[0],
                    f[1],
                    scale,
                    years[0] if years else "",
                    n,
                    i,
                )
            )
    return out


__all__ = ["Cell", "figure", "table_cells"]
