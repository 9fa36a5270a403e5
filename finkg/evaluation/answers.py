"""Answer correctness for QA benchmarks (FinanceBench, TAT-QA).

The rule, stated once:

1. numeric: when the reference answer holds a number, the answer is correct if any number
   it states equals the reference's first number after rounding it to the reference's
   decimals (so 1.9 matches 1.87 and 1.94 but not 2.0), with scales read ("$1.5 billion" is
   1,500 million when the reference is in millions: equal if either the raw or the
   rescaled value matches), percent signs ignored, parentheses read as negative;
2. yes/no: when the reference starts with yes or no, the answer must start with the same;
3. otherwise: the reference's words appear in the answer in order and together (a span
   answer quoted inside a longer sentence), or token F1 of at least 0.5.

A yes/no reference whose first sentence holds a number ("No, working capital was -$1,561M")
is scored by the number (rule 1), so an answer that states the right figure with the wrong
verdict counts; `strict_yes_no` is the verdict alone, for a figure beside it.

>>> correct("The 3-year average is 1.9%.", "1.9%")
True
>>> correct("Capex was $1,577 million", "$1577.00")
True
>>> correct("It was 2.1", "1.9%")
False
>>> correct("No, it is not capital intensive.", "No, the company is managing its CAPEX")
True
>>> correct("Offices: San Diego, California, leased.", "San Diego, California")
True
>>> strict_yes_no("It has positive working capital of -$1,561M", "No, it had -$1561M")
False
"""

from __future__ import annotations

import re
from collections import Counter
from decimal import Decimal, InvalidOperation

_NUMBER = re.compile(
    r"\(?-?\$?\s?\d[\d,]*(?:\.\d+)?\)?\s*(?:%|billion|million|thousand|bn|mn|m|b|k)?\b", re.I
)
_SCALES = {"thousand": 3, "k": 3, "million": 6, "mn": 6, "m": 6, "billion": 9, "bn": 9, "b": 9}
_WORD = re.compile(r"[a-z0-9]+")
_VERDICT = re.compile(r"(yes|no)\b")


def numbers(text: str) -> list[tuple[Decimal, int, int]]:
    """(value, decimals written, scale exponent) of each number in `text`."""
    out = []
    for m in _NUMBER.finditer(text):
        raw = m.group(0)
        negative = (raw.strip().startswith("(") and raw.strip().endswith(")")) or "-" in raw
        digits = re.search(r"\d[\d,]*(?:\.\d+)?", raw)
        if digits is None:
            continue
        plain = digits.group(0).replace(",", "")
        try:
            value = Decimal(plain)
        except InvalidOperation:
            continue
        decimals = len(plain.split(".")[1]) if "." in plain else 0
        unit = re.search(r"(billion|million|thousand|bn|mn|m|b|k)\s*$", raw, re.I)
        scale = _SCALES[unit.group(1).lower()] if unit else 0
        out.append((-value if negative else value, decimals, scale))
    return out


def _matches(value: Decimal, decimals: int, reference: Decimal) -> bool:
    step = Decimal(1).scaleb(-decimals)
    return value.quantize(step) == reference.quantize(step) if step else value == reference


def numeric_match(answer: str, reference: str) -> bool | None:
    """True/False when the reference holds a number, None when it holds none."""
    wanted = numbers(reference)
    if not wanted:
        return None
    ref, decimals, ref_scale = wanted[0]
    for value, _, scale in numbers(answer):
        candidates = {value, value.scaleb(scale - ref_scale)} if scale != ref_scale else {value}
        for v in candidates:
            try:
                if _matches(v, decimals, ref):
                    return True
            except InvalidOperation:  # a value too large to round at that precision
                continue
    return False


def token_f1(answer: str, reference: str) -> float:
    a, r = _WORD.findall(answer.lower()), _WORD.findall(reference.lower())
    common = sum((Counter(a) & Counter(r)).values())
    if not common:
        return 0.0
    precision, recall = common / len(a), common / len(r)
    return 2 * precision * recall / (precision + recall)


def correct(answer: str, reference: str) -> bool:
    """The stated rule (module docstring)."""
    ref = reference.strip().lower()
    if ref.startswith(("yes", "no")) and not numbers(reference.split(".")[0]):
        said = answer.strip().lower()
        return said.startswith("yes" if ref.startswith("yes") else "no")
    numeric = numeric_match(answer, reference)
    if numeric is not None:
        return numeric
    words, wanted = _WORD.findall(answer.lower()), _WORD.findall(reference.lower())
    n = len(wanted)
    if n and any(words[i : i + n] == wanted for i in range(len(words) - n + 1)):
        return True
    return token_f1(answer, reference) >= 0.5


def strict_yes_no(answer: str, reference: str) -> bool | None:
    """Whether the answer opens with the reference's yes or no, numbers or not; None when
    the reference is not a yes/no answer."""
    wanted = _VERDICT.match(reference.strip().lower())
    if wanted is None:
        return None
    said = _VERDICT.match(answer.strip().lower())
    return said is not None and said.group(1) == wanted.group(1)
