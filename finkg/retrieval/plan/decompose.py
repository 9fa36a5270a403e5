"""Query preprocessing (paper 002 §4.1): normalize a question, then decompose it into
minimal self-contained sub-questions.

Paper 002 asks an LLM to rewrite and split the query. finkg does it by rule, which a
2-core machine can afford on every question and a test can pin down:

- normalization: Unicode NFKC, whitespace collapsed, no control characters; numbers,
  currencies and percentages kept as written (`chunking.normalize`);
- question sentences: each sentence ending in "?" is one sub-question; the other sentences
  (context such as "Answer in USD millions.") are kept with every sub-question, which then
  reads on its own;
- periods: a question naming several fiscal periods ("revenue in FY2019 and FY2020",
  "capex from FY2017 to FY2019") becomes one sub-question per period, each with the other
  period phrases taken out, so each part can be matched to the memory bank (whose entries
  hold one period each) or retrieved on its own. The whole question is still what the
  reader answers at the end, from the evidence of all its parts. A range of fiscal years
  ("FY2017 - FY2019", "FY2017 to FY2019") stands for every year in it. Each sub-question
  names its period by label (FY2019, 2020Q3), the form the bank and the filings use.

>>> [s.text for s in decompose("What was ACME's revenue in fiscal 2019 and fiscal 2020?")]
["What was ACME's revenue in FY2019?", "What was ACME's revenue in FY2020?"]
>>> [s.period for s in decompose("Average capex, FY2017 - FY2019?")]
['FY2017', 'FY2018', 'FY2019']
>>> [s.text for s in decompose("Is the dividend stable?  What is net debt? Answer in USD.")]
['Is the dividend stable? Answer in USD.', 'What is net debt? Answer in USD.']
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from finkg.errors import InputError
from finkg.kg.chunking import normalize
from finkg.retrieval.plan.questions import periods_in

_SENTENCE = re.compile(r"[^?.!]*(?:[?.!]+|$)")
# what joins listed periods: "FY2019 and FY2020", "FY2017, FY2018, FY2019", "FY2017 - FY2019"
_RANGE = re.compile(r"^\s*(?:-|–|to|through)\s*$", re.I)
_JOINER = re.compile(r"^[\s,]*(?:and|or|to|through|vs\.?|versus|-|–|&)?[\s,]*(?:and\s+)?$", re.I)


@dataclass(frozen=True)
class SubQuestion:
    text: str
    period: str | None  # the one fiscal period it asks about, when it names one


def clean(question: str) -> str:
    """The question normalized; an empty question is an error that says so."""
    text = " ".join(normalize(question).split())
    if not text:
        raise InputError("the question is empty", field="question", value=question)
    return text


def decompose(question: str) -> list[SubQuestion]:
    """Self-contained sub-questions of `question`, in the order they are asked."""
    text = clean(question)
    sentences = [s.strip() for s in _SENTENCE.findall(text) if s.strip()]
    asks = [s for s in sentences if s.endswith("?")]
    context = [s for s in sentences if not s.endswith("?")]
    if not asks:  # an instruction or a statement: the whole text is the one question
        asks, context = [" ".join(sentences)], []
    out: list[SubQuestion] = []
    for ask in asks:
        whole = " ".join([ask, *context])
        out.extend(_by_period(whole))
    return list(dict.fromkeys(out))


def _by_period(text: str) -> list[SubQuestion]:
    """One sub-question per listed period, or `text` itself."""
    found = periods_in(text)
    labels = list(dict.fromkeys(p.label for p in found))
    if len(labels) < 2 or not _listed(text, found):
        return [SubQuestion(text, labels[0] if len(labels) == 1 else None)]
    first, last = found[0], found[-1]
    if len(found) == 2 and _RANGE.match(text[first.end : last.start]):
        labels = _years_between(first.label, last.label) or labels
    out = []
    for label in labels:
        part = text[: first.start] + label + text[last.end :]
        out.append(SubQuestion(" ".join(part.split()), label))
    return out


def _years_between(a: str, b: str) -> list[str]:
    """FY2017, FY2019 -> FY2017, FY2018, FY2019 (fiscal years only, at most ten)."""
    if not (a.startswith("FY") and b.startswith("FY")):
        return []
    lo, hi = sorted((int(a[2:]), int(b[2:])))
    return [f"FY{y}" for y in range(lo, hi + 1)] if hi - lo < 10 else []


def _listed(text: str, found: list) -> bool:
    """The periods are written as one list (only joiners between them)."""
    return all(_JOINER.match(text[a.end : b.start]) for a, b in itertools.pairwise(found))
