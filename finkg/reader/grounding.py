"""Groundedness of an answer in its evidence (paper 003 §4).

- Critical tokens are numbers, percentages and currency amounts. They are grounded only when
  the same value appears in the evidence: "$58.3 billion", "$58.3bn" and "58.30 billion
  dollars" are the same value; "58.4" is not "58.3". Values are compared, not spellings:
  currency, number (thousands separators and trailing zeros ignored), percent, scale.
- Other tokens are grounded by controlled fuzzy matching: lower case, a few English
  suffixes stripped, financial stop-words ignored.
- G: the share of the answer's tokens that are grounded; Gc: the share of its critical
  tokens that are; N (numeric consistency): the share of the answer's number claims whose
  value appears in the chunk it cites; J: whether the JSON validated (after repairs). A claim
  written without its unit ("4990.6" for "$4,990.6 million") matches the figure as the
  chunk writes it, and a chunk that states its table's units ("in millions") gives its bare
  figures that scale, so a claim is judged by the figure, not by how much of it was copied.
- S_comp = 0.5 G + 0.25 J + 0.25 N, and a validation status from finkg's thresholds:
  Critical Issues (JSON invalid, or Gc < 0.5), Requires Review (an insight without a valid
  citation, or Gc < 1), else High (S >= 0.85), Medium (S >= 0.70) or Low.

>>> g = groundedness("Revenue was $58.3 billion, up 1%.", ["Revenue rose 1% to $58.3bn."])
>>> round(g.g, 2), g.critical, round(g.gc, 2)
(1.0, 2, 1.0)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

_SCALE = {
    "thousand": 3,
    "k": 3,
    "million": 6,
    "mn": 6,
    "m": 6,
    "mm": 6,
    "billion": 9,
    "bn": 9,
    "b": 9,
    "trillion": 12,
    "tn": 12,
    "t": 12,
}
_CURRENCY = {
    "$": "USD",
    "US$": "USD",
    "€": "EUR",
    "£": "GBP",
    "¥": "JPY",
    "usd": "USD",
    "dollars": "USD",
    "eur": "EUR",
    "euros": "EUR",
    "gbp": "GBP",
}
NUMBER = re.compile(
    r"(?P<cur>US\$|[$€£¥])?\s?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?:\s?(?P<pct>%|percent\b|per cent\b))?"
    r"(?:\s?(?P<scale>thousand|million|billion|trillion|bn|mn|mm|tn|k|m|b|t)\b)?"
    r"(?:\s?(?P<curword>dollars|usd|euros|eur|gbp)\b)?",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z][a-z'\-]*")
STOP_WORDS = frozenset(
    "a an the and or of to in on for with by at as from is are was were be been being it its "
    "this that these those which who whom than then there their they we our you your he she "
    "his her not no yes also per vs about into over under up down more less most least very "
    "company companies fiscal year quarter period reported report reports total".split()
)
_SUFFIXES = ("ings", "ing", "ies", "ied", "es", "ed", "s", "ly")


@dataclass(frozen=True)
class Value:
    """A critical token's meaning: currency, value and whether it is a percentage."""

    currency: str | None
    amount: Decimal
    percent: bool
    written: Decimal = field(default=Decimal(0), compare=False)  # the figure before its scale
    scale: int = field(default=0, compare=False)  # the power of ten a scale word applied

    @property
    def bare(self) -> bool:
        """Written without a currency, a scale or a percent sign: "4,990.6"."""
        return self.currency is None and not self.scale and not self.percent

    def __str__(self) -> str:
        return f"{self.currency or ''}{self.amount:f}{'%' if self.percent else ''}"


def values(text: str) -> list[Value]:
    """The critical tokens of `text`, as values.

    >>> [str(v) for v in values("Sales of $1,200.50 million rose 4.0% in 2020")]
    ['USD1200500000', '4%', '2020']
    """
    found = []
    for m in NUMBER.finditer(text):
        try:
            amount = Decimal(m.group("num").replace(",", ""))
        except InvalidOperation:
            continue
        written, power = amount.normalize(), 0
        scale = (m.group("scale") or "").lower()
        # a bare "m"/"b"/"t" only scales money ("$5m"), not "5 m" of something else
        if scale and not (len(scale) == 1 and not m.group("cur")):
            power = _SCALE[scale]
            amount = amount.scaleb(power)
        currency = m.group("cur") or m.group("curword")
        found.append(
            Value(
                _CURRENCY.get(
                    (currency or "").strip().lower(), _CURRENCY.get(currency or "", None)
                ),
                amount.normalize(),
                bool(m.group("pct")),
                written,
                power,
            )
        )
    return found


# "(in millions)", "$ in thousands", "in millions of US dollars": a table's stated units
_UNITS = re.compile(
    r"(?P<cur>\$|US\$|USD)?\s*in\s+(?P<scale>thousands|millions|billions)"
    r"(?:\s+of\s+(?:US\s+)?(?P<curword>dollars|euros))?\b",
    re.IGNORECASE,
)


def _cited_values(text: str) -> list[Value]:
    """The values of a cited text; where it states its units ("in millions"), its bare
    figures also count at that scale (and currency, when the statement names one)."""
    found = values(text)
    stated = _UNITS.search(text)
    if stated is None:
        return found
    power = _SCALE[stated.group("scale").lower().removesuffix("s")]
    named = stated.group("cur") or stated.group("curword") or ""
    currency = _CURRENCY.get(named.lower(), _CURRENCY.get(named, "USD" if named else None))
    scaled = [
        Value(currency, v.written.scaleb(power).normalize(), False, v.written, power)
        for v in found
        if v.bare
    ]
    return found + scaled


def _consistent(claim: Value, cited: list[Value]) -> bool:
    """`claim` is one of `cited`, or, written bare, the figure of one of them as written."""
    if claim in cited:
        return True
    if claim.bare:
        return any(c.written == claim.written for c in cited)
    if claim.currency is not None:  # the currency stated by the claim and not the table
        plain = Value(None, claim.amount, claim.percent)
        return plain in cited
    return False


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def words(text: str) -> list[str]:
    """The non-critical tokens that count: lower-cased stems, stop-words left out."""
    return [_stem(w) for w in _WORD.findall(NUMBER.sub(" ", text.lower())) if w not in STOP_WORDS]


@dataclass(frozen=True)
class Groundedness:
    g: float  # grounded tokens / tokens
    gc: float  # grounded critical tokens / critical tokens (1.0 when there are none)
    tokens: int
    critical: int
    ungrounded: tuple[str, ...]  # what was not found, for the reviewer


def groundedness(answer: str, evidence: Sequence[str]) -> Groundedness:
    vocabulary = {w for text in evidence for w in words(text)}
    known = {v for text in evidence for v in values(text)}
    answer_words, answer_values = words(answer), values(answer)
    missing = [w for w in answer_words if w not in vocabulary]
    missing_values = [v for v in answer_values if v not in known]
    total = len(answer_words) + len(answer_values)
    grounded = total - len(missing) - len(missing_values)
    return Groundedness(
        g=grounded / total if total else 1.0,
        gc=1 - len(missing_values) / len(answer_values) if answer_values else 1.0,
        tokens=total,
        critical=len(answer_values),
        ungrounded=tuple([*missing, *map(str, missing_values)]),
    )


def numeric_consistency(claims: Iterable[tuple[str, str | None]]) -> float:
    """The share of (value, cited text) claims whose value appears in the cited text;
    a claim citing nothing that resolves counts as wrong. 1.0 when there are no claims."""
    claims = list(claims)
    if not claims:
        return 1.0
    right = 0
    for value, cited in claims:
        wanted = values(value)
        if cited is None or not wanted:
            continue
        found = _cited_values(cited)
        right += all(_consistent(v, found) for v in wanted)
    return right / len(claims)


def s_comp(g: float, j: float, n: float) -> float:
    """S_comp = 0.50 G + 0.25 J + 0.25 N (paper 003, eq. 1)."""
    return 0.5 * g + 0.25 * j + 0.25 * n


def validation_status(*, s: float, gc: float, json_valid: bool, uncited_insights: int = 0) -> str:
    """finkg's thresholds for paper 003's statuses (see the module docstring)."""
    if not json_valid or gc < 0.5:
        return "Critical Issues"
    if uncited_insights or gc < 1.0:
        return "Requires Review"
    if s >= 0.85:
        return "High"
    if s >= 0.70:
        return "Medium"
    return "Low"
