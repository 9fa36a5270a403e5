"""The core line items (`ontology/line_items.ttl`) and the printed labels that read as them.

A label reads as a concept when, normalized, it equals one of the concept's labels
(prefLabel or altLabel), normalized the same way, and the statement it stands in is one
the concept is reported in (`fkg:reportedIn`): "Income taxes" is the income tax expense in a
statement of income, not in a balance sheet. Normalizing lowercases, spells `&` as "and",
drops parenthesized words ("(loss)", "(Note 4)"), footnote marks, punctuation, a leading
"total", a trailing "net", and reads "X attributable to <anyone but noncontrolling
interests>" as "X attributable to parent" and "total <anyone's> shareholders' equity" as
"shareholders equity": the general forms of the labels a company writes its name into.

>>> normalize("Total Best Buy Co., Inc. Shareholders' Equity")
'shareholders equity'
>>> normalize("Property and equipment, net"), normalize("Net income (loss)")
('property and equipment', 'net income')
>>> normalize("Total liabilities and stockholders' equity")
'liabilities and shareholders equity'
>>> concept_of("Merchandise inventories", "balance").value
'https://w3id.org/finkg/items#Inventories'
>>> concept_of("Income taxes", "balance") is None
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import pyoxigraph as ox
from pyoxigraph import NamedNode

from finkg.ontology import line_items_path
from finkg.ontology.terms import FKG, SKOS

# statement kinds as `kg/statements.py` names them, and their concepts
KINDS = {
    "income": FKG.IncomeStatement,
    "balance": FKG.BalanceSheet,
    "cash flow": FKG.CashFlowStatement,
    "equity": FKG.EquityStatement,
    "comprehensive": FKG.ComprehensiveIncomeStatement,
}

_PARENS = re.compile(r"\([^()]*\)")
_MARKS = re.compile(r"[*†‡§¹²³⁴⁵]|\[\d+\]")
_ATTRIBUTABLE = re.compile(r"\b(attributable|available) to (?!.*non ?controlling)[a-z0-9 .,&'’-]+$")
_EQUITY_OF = re.compile(
    r"^(?:total )?(?!.*\bliabilit)(?:[a-z0-9.,&'’ -]+ )?"
    r"(share(?:holder|owner)s?|stockholders?)['’]? (equity|investment)$"
)
_PUNCT = re.compile(r"[^a-z0-9& ]+")
_QUALIFIER = re.compile(r",\s*(?:net\s+of|excluding|less|including|inclusive\s+of)\b.*$")


def normalize(label: str) -> str:
    """The form labels are matched in (module docstring)."""
    text = _MARKS.sub(" ", label.lower()).replace("’", "'")
    while True:
        stripped = _PARENS.sub(" ", text)
        if stripped == text:
            break
        text = stripped
    text = text.replace("&", " and ").replace("-", " ").replace("—", " ").replace("–", " ")
    text = " ".join(text.replace(":", " ").split()).strip(" ,.;")
    # a qualifier after the line item: "Capital expenditures, net of construction payable"
    text = _QUALIFIER.sub("", text)
    text = _ATTRIBUTABLE.sub(r"\1 to parent", text)
    if m := _EQUITY_OF.match(text):
        kind = "shareholders" if m.group(1).startswith("share") else "stockholders"
        text = f"{kind} {m.group(2)}"
    text = " ".join(_PUNCT.sub(" ", text).split())
    text = text.replace("shareowners", "shareholders").replace("stockholders", "shareholders")
    text = re.sub(r"^total ", "", text)
    text = re.sub(r" net$", "", text)
    return text


@dataclass(frozen=True)
class LineItem:
    """A core line item: its concept, preferred label, the normalized labels that read as
    it, the statements it is reported in and its US-GAAP element (if one matches)."""

    concept: NamedNode
    label: str
    labels: frozenset[str]
    kinds: frozenset[NamedNode]
    gaap: NamedNode | None

    @property
    def name(self) -> str:
        return self.concept.value.rsplit("#", 1)[-1]


@cache
def line_items() -> dict[NamedNode, LineItem]:
    """Every core line item, by concept."""
    quads = ox.parse(path=str(line_items_path()), format=ox.RdfFormat.TURTLE)
    found: dict[NamedNode, dict[str, list]] = {}
    for q in quads:
        if isinstance(q.subject, NamedNode):
            found.setdefault(q.subject, {}).setdefault(q.predicate.value, []).append(q.object)
    items = {}
    for concept, props in found.items():
        pref = props.get(SKOS.prefLabel.value)
        if not pref:
            continue
        labels = [pref[0].value, *(o.value for o in props.get(SKOS.altLabel.value, []))]
        gaap = props.get(SKOS.exactMatch.value) or props.get(SKOS.closeMatch.value) or [None]
        items[concept] = LineItem(
            concept,
            pref[0].value,
            frozenset(normalize(x) for x in labels),
            frozenset(props.get(FKG.reportedIn.value, [])),
            gaap[0],
        )
    return items


@cache
def _by_label() -> dict[str, list[LineItem]]:
    out: dict[str, list[LineItem]] = {}
    for item in line_items().values():
        for label in item.labels:
            out.setdefault(label, []).append(item)
    return out


def concept_of(label: str, kind: str) -> NamedNode | None:
    """The concept a printed label reads as in a statement of `kind` (None: no concept)."""
    statement = KINDS.get(kind)
    for item in _by_label().get(normalize(label), []):
        if statement in item.kinds:
            return item.concept
    return None


def by_name(name: str) -> LineItem:
    """A line item by its local name (`Revenue`, `CapitalExpenditures`)."""
    for item in line_items().values():
        if item.name == name:
            return item
    raise KeyError(name)


@dataclass(frozen=True)
class Mention:
    """A line item named in a phrase: where (start, end) and which."""

    start: int
    end: int
    item: LineItem


def mentions(phrase: str) -> list[Mention]:
    """The line items `phrase` names, longest labels first and without overlap, in order.

    >>> [m.item.name for m in mentions("FY2019 COGS + change in inventory")]
    ['CostOfRevenue', 'Inventories']
    """
    words = normalize(phrase).split()
    labels = _by_label()
    longest = max((len(label.split()) for label in labels), default=1)
    taken: list[Mention] = []
    used = [False] * len(words)
    for size in range(min(longest, len(words)), 0, -1):
        for start in range(len(words) - size + 1):
            if any(used[start : start + size]):
                continue
            found = labels.get(" ".join(words[start : start + size]))
            if found:
                taken.append(Mention(start, start + size, found[0]))
                for i in range(start, start + size):
                    used[i] = True
    return sorted(taken, key=lambda m: m.start)


__all__ = [
    "KINDS",
    "LineItem",
    "Mention",
    "by_name",
    "concept_of",
    "line_items",
    "mentions",
    "normalize",
]
