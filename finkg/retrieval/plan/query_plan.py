"""What a filing question asks for, read before retrieval: its core words, the financial
statements and fiscal years it names or implies, the line items it needs, and the words
filings use for them.

Questions about filings mix what is asked with how to answer it ("Answer in USD millions",
"round to two decimal places", "you are an investment banker ... here's the question:",
"if the metric is not useful for this company, explain why"). Those clauses are kept out of
the retrieval query (`core`); the statements they name are kept as statements. Metric names
are read against a glossary of standard financial terms (`GLOSSARY`): each gives the words
filings print for it (capex is "purchases of property, plant and equipment"), the
statements it is read from, and, for a ratio, the line items it is computed from. A metric
defined in the question ("X is defined as: A / (average B between FY2018 and FY2019)")
gives its own line items (`glossary` holds the terms). Each line item becomes a sub-query
(paper 002 §4.1's decomposition, by rule), so that both the income statement and the
balance sheet are looked for when a ratio needs both.

Nothing here knows a company, a document or a benchmark: the glossary is accounting
vocabulary, the clause rules are English.

>>> p = plan("What is the FY2018 capital expenditure amount (in USD millions) for 3M? "
...          "Give a response to the question by relying on the details shown in the "
...          "cash flow statement.")
>>> p.core
'What is the FY2018 capital expenditure amount for 3M?'
>>> p.statements, p.years
(('cash flow',), (2018,))
>>> 'purchases of property plant and equipment' in p.expansion
True
>>> [q.text for q in plan("What is the FY2022 quick ratio for AMD?").parts][:2]
['cash and cash equivalents 2022', 'marketable securities short-term investments 2022']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from finkg.retrieval.plan.glossary import GLOSSARY, Term
from finkg.retrieval.plan.questions import periods_in

# how the statements are named in questions
_NAMED: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "cash flow",
        re.compile(r"cash\s*flows?\s+statements?|statements?\s+of\s+cash\s*flows?", re.I),
    ),
    (
        "income",
        re.compile(
            r"income\s+statements?|statements?\s+of\s+(?:income|operations|earnings)|\bP&L\b|"
            r"profit\s+and\s+loss",
            re.I,
        ),
    ),
    (
        "balance",
        re.compile(
            r"balance\s+sheets?|statements?\s+of\s+financial\s+(?:position|condition)", re.I
        ),
    ),
    ("equity", re.compile(r"statements?\s+of\s+(?:\w+\s+)?(?:shareholders|stockholders)", re.I)),
)


# clauses about how to answer, not what is asked (persona, sources, format, fallbacks)
_CLAUSES = (
    re.compile(r"(?:we|i)\s+(?:want|need)\s+to\s+(?:calculate|compute|know)[^.?]*\.", re.I),
    re.compile(r"(?:please\s+)?help\s+(?:us|me)\s+[^.?]*?(?:\.|(?=here'?s))", re.I),
    re.compile(r"here'?s\s+the\s+question\s*:", re.I),
    re.compile(r"answer\s+the\s+following\s+question[^:?.]*[:.]", re.I),
    re.compile(r"you\s+are\s+an?\s+[^.?:]*?(?:here'?s\s+the\s+question\s*:|\.|$)", re.I),
    re.compile(
        r"(?:answer|respond)\s+(?:the\s+following\s+question\s+)?as\s+if\s+[^.?]*[.?]", re.I
    ),
    re.compile(
        r"(?:please\s+)?(?:give|provide|calculate|compute|approach|address|answer)\b[^.?]*?"
        r"(?:by|from|using|with|in)\s+(?:relying\s+on\s+|using\s+|adopting\s+|assuming\s+|"
        r"the\s+)?[^.?]*?(?:statement|sheet|information|details|data|standpoint|perspective)"
        r"[^.?]*(?:[.?]|$)",
        re.I,
    ),
    re.compile(
        r"(?:please\s+)?(?:base|basing|utiliz\w*|using|use|by\s+drawing|based\s+on|according\s+to"
        r"|relying\s+on|referring\s+to|considering)\b[^.?]*?(?:statement|sheet|information|"
        r"details|data)s?\b[^.?,]*[.?,]?",
        re.I,
    ),
    re.compile(r"(?:answer|reply)\s+in\s+[^.?]*(?:[.?]|$)", re.I),
    re.compile(r"\(?(?:in\s+)?units?\s+of\s+[^.?)]*\)?", re.I),
    re.compile(r"\(?in\s+(?:USD|US\$|\$)\s*(?:millions|billions|thousands)\)?", re.I),
    re.compile(r",?\s*(?:and\s+)?(?:please\s+)?round\s+[^.?]*?decimal\s+places?\.?", re.I),
    re.compile(
        r"if\s+[^.?]*?(?:not\s+(?:a\s+)?(?:useful|relevant|meaningful)|"
        r"not\s+explicitly)[^.?]*(?:[.?]|$)",
        re.I,
    ),
    re.compile(r"(?:then\s+)?(?:please\s+)?state\s+that\s+and\s+explain\s+why\.?", re.I),
)
_DEFINED = re.compile(
    r"\b(?:is\s+defined\s+as|define\s+[^.?:]{2,60}?\s+as)\s*:?\s*(?P<formula>[^.?]+)", re.I
)
_OPERATOR = re.compile(r"\s[/+*×÷-]\s|\bdivided\s+by\b|\bplus\b|\bminus\b|\btimes\b", re.I)
_WRAPPER = re.compile(
    r"^\W*(?:\d+\s*\*?\s*)?(?:\(?\s*)?(?:average|avg\.?|change\s+in|total)?\s*|"
    r"\s*(?:between|from|in|for|at|of)\s+(?:FY\s*)?\d{4}.*$|\W*$",
    re.I,
)


@dataclass(frozen=True)
class Part:
    """A sub-query for one line item: its text and the statements it is read from."""

    text: str
    statements: tuple[str, ...]


@dataclass(frozen=True)
class QueryPlan:
    question: str
    core: str  # the question without answering instructions
    expansion: str  # filing words for the metrics it names
    statements: tuple[str, ...]  # named in the question, else implied by its metrics
    years: tuple[int, ...]  # fiscal years named
    parts: tuple[Part, ...]  # one per line item a metric needs

    @property
    def sparse_text(self) -> str:
        return f"{self.core} {self.expansion}".strip()


def plan(question: str) -> QueryPlan:
    """The question read as the module docstring says."""
    named = tuple(kind for kind, pattern in _NAMED if pattern.search(question))
    core = question
    for clause in _CLAUSES:
        core = clause.sub(" ", core)
    core = " ".join(core.replace(" ?", "?").split()) or question
    core = re.sub(r"\s+([?.,;:])", r"\1", core)
    years = tuple(
        dict.fromkeys(
            int(p.label[2:6]) if p.label.startswith("FY") else int(p.label[:4])
            for p in periods_in(question)
        )
    )
    terms = _terms(core)
    implied = tuple(dict.fromkeys(s for t in terms for s in t.statements))
    statements = named or implied
    expansion = " ".join(dict.fromkeys(t.words for t in terms))
    items: list[Part] = []
    formulas = [m.group("formula") for m in _DEFINED.finditer(question)]
    if formulas:
        pieces = [p for f in formulas for p in _OPERATOR.split(f.replace(" less ", " - "))]
        for piece in pieces:
            item = _WRAPPER.sub("", piece.strip(" ()")).strip(" ()")
            if len(item) > 2 and not item.replace(".", "").isdigit():
                found = _terms(item)
                where = tuple(dict.fromkeys(s for t in found for s in t.statements))
                words = " ".join(dict.fromkeys([item, *(t.words for t in found[:1])]))
                items.append(Part(words, where or statements))
    else:
        for t in terms:
            for item in t.items:
                where = tuple(dict.fromkeys(s for u in _terms(item) for s in u.statements))
                items.append(Part(item, where or t.statements))
    when = " ".join(str(y) for y in years)
    parts = tuple(dict.fromkeys(Part(f"{p.text} {when}".strip(), p.statements) for p in items))
    return QueryPlan(question, core, expansion, statements, years, parts)


def _terms(text: str) -> list[Term]:
    """Glossary entries named in `text`, longest match first, without overlaps."""
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, Term]] = []
    for term in GLOSSARY:
        for m in term.pattern.finditer(text):
            if any(m.start() < b and a < m.end() for a, b in taken):
                continue
            taken.append((m.start(), m.end()))
            found.append((m.start(), term))
            break
    return [t for _, t in sorted(found, key=lambda x: x[0])]


__all__ = ["GLOSSARY", "Part", "QueryPlan", "Term", "plan"]
