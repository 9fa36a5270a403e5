"""Numeric questions answered by finkg's calculator (`calculator`), the operands read
from the evidence blocks' table cells (`cells`) instead of written by the reader.

1. the operation: cue phrases of the question, first match wins ("percentage change",
   "average", "as a percentage of", "ratio", "change"/"difference", "total"); when no cue
   decides and a reader is given, the reader scores the operation names as options;
   a metric the question defines with one operation ("X is defined as: A / B") is that
   operation over A and B;
2. the line items: the question without its cue, period and filler words; a two-item
   operation ("X as a percentage of Y", "ratio of X to Y", "difference between X and Y",
   "X and Y" for a total) splits it in two; each item is matched to the table row whose
   label (with its group) shares the most words with it (failing any, the words filings
   use for it, `retrieval.glossary`), rarer words counting more; when
   two rows match about as well and a reader is given, the reader scores the rows'
   letters as options (one prompt evaluation, single-token options);
3. the columns: the years the question names (in time order), else the row's first
   columns (filings put the latest first): a change runs from the earlier to the later
   period, a two-item operation reads both items in the same column;
4. `calculator.calculate` evaluates it; every operand keeps its block id, the figure as
   written there, its unit, scale, period and row label, so the answer cites each one and
   the numeric check (N) verifies each against its block's text.

Nothing here is fitted to a data set: the cues are English, the matching is word overlap.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from finkg.errors import InputError
from finkg.reader.llm import LLM
from finkg.reader.schemas import Answer
from finkg.retrieval.plan.glossary import GLOSSARY
from finkg.tasks.qa.calculator import OPERATIONS, Calculation, Operand, calculate
from finkg.tasks.qa.cells import Cell, table_cells

_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("growth rate", re.compile(r"\bCAGR\b|compound(?:ed)?\s+(?:annual\s+)?growth", re.I)),
    (
        "percent change",
        re.compile(
            r"percent(?:age)?\s+(?:change|increase|decrease|growth|decline|rise|drop)|"
            r"%\s*(?:change|increase|decrease|growth)|growth\s+rate|rate\s+of\s+(?:change|growth)|"
            r"percent(?:age)?\s+(?:increase\s*/\s*\(?decrease\)?)|by\s+what\s+percent",
            re.I,
        ),
    ),
    ("average", re.compile(r"(?<!weighted[- ])\baverage\b|\bmean\b", re.I)),
    (
        "ratio",
        re.compile(
            r"as\s+an?\s+(?:percentage|%|proportion|share|fraction|ratio)\s+of|"
            r"\bratio\b|what\s+(?:percentage|%|proportion|share|fraction)\s+of|"
            r"percentage\s+of\s+(?:the\s+)?total|\bproportion\b",
            re.I,
        ),
    ),
    (
        "difference",
        re.compile(
            r"\bchange\b|\bdifference\b|\bdiffer\b|\bincrease\b|\bdecrease\b|\bvariance\b|"
            r"\bhow\s+much\s+(?:more|less|higher|lower)\b",
            re.I,
        ),
    ),
    ("sum", re.compile(r"\btotal\b|\bsum\b|\bcombined\b|\baltogether\b|\bin\s+all\b", re.I)),
)
_PERCENT = re.compile(r"percent|%|proportion|share", re.I)
_TWO_ITEMS = (
    re.compile(
        r"(?P<a>.+?)\s+as\s+an?\s+(?:percentage|%|proportion|share|fraction)\s+of\s+(?P<b>.+)", re.I
    ),
    re.compile(r"ratio\s+of\s+(?P<a>.+?)\s+(?:to|and|over)\s+(?P<b>.+)", re.I),
    re.compile(
        r"(?:percentage|%|proportion|share|fraction)\s+of\s+(?P<b>.+?)\s+(?:that|which)\s+(?:is|are|was|were)\s+(?P<a>.+)",
        re.I,
    ),
    re.compile(r"difference\s+between\s+(?P<a>.+?)\s+and\s+(?P<b>.+)", re.I),
    re.compile(r"(?P<a>.+?)\s+(?:to|over)\s+(?P<b>.+?)\s+ratio", re.I),
)
_YEAR = re.compile(r"\b(?:FY\s?)?((?:19|20)\d{2})\b|\bFY\s?(\d{2})\b", re.I)
_WORD = re.compile(r"[a-z][a-z0-9]+")
_FILLER = frozenset(
    "what was were is are the a an of in for from to between and at by on as with how much "
    "many did does do its their this that year years fiscal period respectively value amount "
    "change difference increase decrease percentage percent average ratio total sum growth "
    "rate compared end ending ended during both over under which fy".split()
)


@dataclass(frozen=True)
class Block:
    """An evidence block the operands may come from: its id and text."""

    id: str
    text: str


def operation_of(question: str) -> tuple[str | None, bool]:
    """(the operation a cue names, whether the result is asked as a percentage)."""
    for name, cue in _CUES:
        if cue.search(question):
            return name, bool(_PERCENT.search(question)) and name == "ratio"
    return None, False


_RANGE = re.compile(r"^\s*(?:-|–|to|through|until)\s*$", re.I)


def years_in(question: str) -> list[str]:
    """The years a question names, in time order; a range ("from 2017 to 2019",
    "2015-2019") stands for every year in it."""
    found = list(_YEAR.finditer(question))
    years = [int(m.group(1) or "20" + m.group(2)) for m in found]
    for a, b, ya, yb in zip(found, found[1:], years, years[1:], strict=False):
        if _RANGE.match(question[a.end() : b.start()]) and 0 < yb - ya < 10:
            years += list(range(ya + 1, yb))
    return [str(y) for y in sorted(set(years))]


def _words(text: str) -> list[str]:
    out = []
    for w in _WORD.findall(text.lower()):
        if w in _FILLER:
            continue
        out.append(w[:-1] if w.endswith("s") and len(w) > 3 else w)
    return out


def items_of(question: str, operation: str) -> list[str]:
    """The line items a question names: two for a two-item operation, else one."""
    text = _YEAR.sub(" ", question)
    if operation in ("ratio", "difference", "sum"):
        for pattern in _TWO_ITEMS:
            m = pattern.search(text)
            if m and _words(m.group("a")) and _words(m.group("b")):
                return [m.group("a"), m.group("b")]
        if operation == "sum":
            parts = re.split(r"\s+and\s+|,\s*", text)
            if len(parts) > 1 and all(_words(p) for p in parts):
                return parts
    return [text]


@dataclass(frozen=True)
class _Row:
    label: str
    group: str
    cells: tuple[tuple[str, Cell], ...]  # (block id, cell) in column order

    @property
    def name(self) -> str:
        return f"{self.label} ({self.group})" if self.group else self.label


def rows_of(blocks: Sequence[Block]) -> list[_Row]:
    """The table rows of the blocks, in block order; a row two blocks both hold (chunks
    overlap) is kept once, from the first."""
    rows: dict[tuple[str, int], list[tuple[str, Cell]]] = {}
    for b in blocks:
        for c in table_cells(b.text):
            rows.setdefault((b.id, c.row), []).append((b.id, c))
    seen: set[tuple[str, tuple[str, ...]]] = set()
    out = []
    for cs in rows.values():
        key = (cs[0][1].label, tuple(c.written for _, c in cs))
        if key not in seen:
            seen.add(key)
            out.append(_Row(cs[0][1].label, cs[0][1].group, tuple(cs)))
    return out


def _match(item: str, rows: Sequence[_Row]) -> list[tuple[float, _Row]]:
    """Rows by how well their label (and group) cover the item's words, rarer words
    weighing more; best first."""
    wanted = _words(item)
    df = Counter(w for r in rows for w in set(_words(r.label + " " + r.group)))
    n = len(rows) or 1
    scored = []
    for r in rows:
        have = set(_words(r.label)) | (set(_words(r.group)) if r.group else set())
        if not have:
            continue
        idf = {w: math.log(1 + n / (1 + df[w])) for w in set(wanted) | have}
        hit = sum(idf[w] for w in set(wanted) & have)
        if not hit:
            continue
        extra = sum(idf[w] for w in have - set(wanted))
        score = hit / (sum(idf[w] for w in set(wanted)) or 1) - 0.1 * extra / (hit + extra)
        scored.append((score, r))
    return sorted(scored, key=lambda x: -x[0])


def _cells_for(row: _Row, years: list[str], needed: int) -> list[tuple[str, Cell]] | None:
    if years:
        by_year: dict[str, tuple[str, Cell]] = {}
        for bid, c in row.cells:
            by_year.setdefault(c.period, (bid, c))
        picked = [by_year[y] for y in years if y in by_year]
        return picked if len(picked) >= min(needed, len(years)) else None
    ordered = sorted(row.cells, key=lambda x: x[1].index)
    if len(ordered) < needed:
        return None
    return ordered[:needed]


def _operand(bid: str, c: Cell) -> Operand:
    return Operand(bid, " ".join(c.written.split()), c.value, c.unit, c.scale, c.period, c.label)


_DEFINED = re.compile(
    r"\b(?:is\s+defined\s+as|define\s+[^.?:]{2,60}?\s+as)\s*:?\s*(?P<formula>[^.?]+)", re.I
)
_BINARY = {
    "/": "ratio",
    "divided by": "ratio",
    "+": "sum",
    "plus": "sum",
    "-": "difference",
    "less": "difference",
    "minus": "difference",
}
_OPERATOR = re.compile(r"\s(/|\+|-|divided by|plus|less|minus)\s", re.I)


def defined(question: str) -> tuple[str, list[str]] | None:
    """A metric the question defines with one operation of two line items ("X is defined
    as: A / B"): the operation and the two items; None for anything longer (an average
    inside, several operators), which the reader answers."""
    m = _DEFINED.search(question)
    if not m:
        return None
    formula = m.group("formula").strip()
    ops = _OPERATOR.findall(formula)
    if len(ops) != 1 or re.search(r"average|change", formula, re.I):
        return None
    a, _, b = _OPERATOR.split(formula, maxsplit=1)
    return _BINARY[ops[0].lower()], [a.strip(" ()"), b.strip(" ()")]


def solve(question: str, blocks: Sequence[Block], *, llm: LLM | None = None) -> Calculation | None:
    """The question's calculation over the blocks' table cells, or None when no operation
    or no operands can be read (the reader then answers as usual)."""
    formula = defined(question)
    if formula is not None:
        try:
            return _across(
                formula[0],
                False,
                formula[1],
                rows_of(blocks),
                years_in(question)[-1:],
                llm,
                question,
            )
        except InputError:
            return None
    operation, percent = operation_of(question)
    if operation is None and llm is not None:
        operation, percent = choose_operation(llm, question)
    if operation is None:
        return None
    rows = rows_of(blocks)
    if not rows:
        return None
    years = years_in(question)
    items = items_of(question, operation)
    try:
        if len(items) >= 2:
            return _across(operation, percent, items, rows, years, llm, question)
        return _along(operation, percent, items[0], rows, years, llm, question)
    except InputError:
        return None


def _best(item: str, rows: Sequence[_Row], llm: LLM | None, question: str) -> _Row | None:
    ranked = _match(item, rows)
    if not ranked:  # no row shares a word with it: the words filings use for it
        synonyms = " ".join(t.words for t in GLOSSARY if t.pattern.search(item))
        ranked = _match(synonyms, rows) if synonyms else []
    if not ranked:
        return None
    close = [r for s, r in ranked[:4] if s >= ranked[0][0] - 0.05]
    if llm is not None and len(close) > 1:
        return choose_row(llm, question, item, close)
    return ranked[0][1]


def _along(operation, percent, item, rows, years, llm, question) -> Calculation | None:
    """One line item over periods: a change, an average, a total over years."""
    row = _best(item, [r for r in rows if len(r.cells) >= 2], llm, question)
    if row is None:
        return None
    pair = operation in ("difference", "percent change", "ratio")
    if operation == "average" and len(years) == 1:  # a year's average: its start and its end
        years = [str(int(years[0]) - 1), years[0]]
    needed = 2 if pair else max(2, len(years))
    if not years and not pair:  # an average or total of a row: every column of its unit
        needed = len(row.cells)
    picked = _cells_for(row, years, needed)
    if picked:
        kind = picked[0][1].unit == "%"
        picked = [(b, c) for b, c in picked if (c.unit == "%") == kind]
    if not picked or len(picked) < 2:
        return None
    if not years:  # the row's first columns: the latest first, as filings print them
        picked = list(reversed(picked)) if _descending(picked) else picked
    operands = [_operand(b, c) for b, c in picked]
    if operation == "difference":  # later minus earlier
        operands = [operands[-1], operands[0]]
    elif operation == "ratio":
        operands = [operands[-1], operands[0]]
    return calculate(operation, operands, percent=percent)


def _descending(picked: list[tuple[str, Cell]]) -> bool:
    periods = [c.period for _, c in picked]
    return (
        all(periods) and periods == sorted(periods, reverse=True) and len(set(periods)) > 1
    ) or (not all(periods))


def _across(operation, percent, items, rows, years, llm, question) -> Calculation | None:
    """Several line items in one period: a ratio, a difference or a total of items."""
    operands = []
    used: set[int] = set()
    for item in items:
        row = _best(item, [r for r in rows if id(r) not in used], llm, question)
        if row is None:
            return None
        used.add(id(row))
        picked = _cells_for(row, years[-1:], 1) if years else _cells_for(row, [], 1)
        if not picked:
            return None
        operands.append(_operand(*picked[0]))
    if operation == "percent change":
        operation = "difference"
    return calculate(operation, operands, percent=percent)


# -- the reader's choices, by option scoring ----------------------------------------------

LETTERS = "ABCDEFGHIJKL"


def choose_operation(llm: LLM, question: str) -> tuple[str | None, bool]:
    """The operation names scored as whole replies; "none" among them."""
    from finkg.reader.read import prompt

    options = [*OPERATIONS, "none"]
    messages = prompt("calc_operation").render({"question": question})
    scores = llm.score(messages, options)
    best = max(options, key=lambda o: scores[o])
    return (None, False) if best == "none" else (best, bool(_PERCENT.search(question)))


def choose_row(llm: LLM, question: str, item: str, rows: Sequence[_Row]) -> _Row:
    """The row among `rows` the reader scores highest for `item` (letters as options)."""
    from finkg.reader.read import prompt

    shown = rows[: len(LETTERS)]
    listing = "\n".join(f"{LETTERS[i]}. {r.name}" for i, r in enumerate(shown))
    messages = prompt("calc_row").render({"question": question, "item": item, "rows": listing})
    options = list(LETTERS[: len(shown)])
    scores = llm.score(messages, options)
    return shown[options.index(max(options, key=lambda o: scores[o]))]


def answer_of(calc: Calculation) -> Answer:
    """The answer finkg writes for its calculation: the result as the summary, the
    calculation (operation and cited operands) as an insight, each operand a number claim
    citing its block, so that the numeric check verifies it there."""
    ids = list(dict.fromkeys(o.id for o in calc.operands))
    labels = " and ".join(dict.fromkeys(o.label for o in calc.operands if o.label))
    return Answer.model_validate(
        {
            "summary": f"{calc.formatted()} ({calc.operation} of {labels})"[:400],
            "insights": [{"text": str(calc)[:300], "citations": ids}],
            "signals": [],
            "citations": ids,
            "numbers": [
                {
                    "value": o.written,
                    "label": f"{o.label} {o.period}".strip()[:120],
                    "citation": o.id,
                }
                for o in calc.operands
            ],
            "validation_status": "High",
        }
    )


__all__ = ["Block", "answer_of", "items_of", "operation_of", "rows_of", "solve", "years_in"]
