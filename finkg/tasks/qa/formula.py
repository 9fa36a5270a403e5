"""A small expression language for the metrics questions define in words, parsed
deterministically into a tree finkg evaluates itself (nothing is ever run as code).

    365 * (average accounts payable between FY2016 and FY2017)
        / (FY2017 COGS + change in inventory between FY2016 and FY2017)

Operators: `+ - * /` and parentheses, or their words (`plus`, `minus`, `less`, `times`,
`multiplied by`, `divided by`, `over`); numbers (`365`, `100`). Everything between operators
is a *phrase*:

- a line item (`kg/facts/concepts.mentions`: "accounts payable", "COGS", "PP&E"), in the
  question's year unless it names one ("FY2017 COGS", "COGS for FY2017");
- `average X [between FYa and FYb]`: the mean of X at both years (without years: the
  year asked and the one before);
- `change in X [between FYa and FYb]`: X at the later year less X at the earlier;
- a name the question or finkg's definitions library defines ("DIO", "EBITDA"): `Ref`;
- a statement named after it ("D&A [from cash flow statement]", "(from the cash flow
  statement)") says which statement to read the line item from.

A phrase that is none of these leaves the whole expression unparsed (`Unparsed`, naming the
phrase): finkg computes a metric only when it can read all of its definition.

>>> dpo = ("365 * (average accounts payable between FY2016 and FY2017) / "
...        "(FY2017 COGS + change in inventory between FY2016 and FY2017)")
>>> print(parse(dpo))  # doctest: +NORMALIZE_WHITESPACE
365 * average(accounts payable, FY2016-FY2017)
    / (cost of goods sold[FY2017] + change(inventories, FY2016-FY2017))
>>> str(parse("total current assets divided by total current liabilities"))
'current assets / current liabilities'
>>> str(parse("DIO + DSO - DPO", names={"dio", "dso", "dpo"}))
'DIO + DSO - DPO'
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

from finkg.kg.facts.concepts import LineItem, mentions

# -- the tree ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Num:
    value: str

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Item:
    """A line item, at a year (None: the year asked) from a statement (None: its own)."""

    item: LineItem
    year: int | None = None
    kind: str | None = None

    def __str__(self) -> str:
        year = f"[FY{self.year}]" if self.year is not None else ""
        kind = f"{{{self.kind}}}" if self.kind else ""
        return f"{self.item.label}{year}{kind}"


@dataclass(frozen=True)
class Span:
    """An aggregate of `node` over two years: `average` (their mean) or `change` (the later
    less the earlier). Years None: the year asked and the one before."""

    how: str
    node: Node
    first: int | None = None
    last: int | None = None

    def __str__(self) -> str:
        years = f", FY{self.first}-FY{self.last}" if self.first is not None else ""
        return f"{self.how}({self.node}{years})"


@dataclass(frozen=True)
class Ref:
    """A name defined elsewhere (in the question, else in the definitions library)."""

    name: str

    def __str__(self) -> str:
        return self.name.upper() if len(self.name) <= 5 else self.name


@dataclass(frozen=True)
class Op:
    op: str  # + - * /
    left: Node
    right: Node

    def __str__(self) -> str:
        def side(n: Node, right: bool) -> str:
            text = str(n)
            tight = isinstance(n, Op) and (
                _PRECEDENCE[n.op] < _PRECEDENCE[self.op]
                or (right and _PRECEDENCE[n.op] == _PRECEDENCE[self.op])
            )
            return f"({text})" if tight else text

        return f"{side(self.left, False)} {self.op} {side(self.right, True)}"


Node = Num | Item | Span | Ref | Op
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}


@dataclass(frozen=True)
class Unparsed:
    """Why an expression was not read: the phrase no line item or name matched."""

    phrase: str
    reason: str = "no line item or defined name matches it"

    def __str__(self) -> str:
        return f"cannot read {self.phrase!r}: {self.reason}"


class _Fail(Exception):
    def __init__(self, unparsed: Unparsed) -> None:
        self.unparsed = unparsed


# -- reading words -------------------------------------------------------------------------

_WORD_OPS = (
    (re.compile(r"\s+divided\s+by\s+", re.I), " / "),
    (re.compile(r"\s+multiplied\s+by\s+", re.I), " * "),
    (re.compile(r"\s+times\s+", re.I), " * "),
    (re.compile(r"\s+over\s+(?!the\s+(?:year|period))", re.I), " / "),
    (re.compile(r"\s+plus\s+", re.I), " + "),
    (re.compile(r"\s+minus\s+", re.I), " - "),
    (re.compile(r"\s+less\s+(?!than)", re.I), " - "),
)
_TOKEN = re.compile(
    r"\s*(\(|\)|\[|\]|\+|\*|/|(?<![A-Za-z])-(?![A-Za-z])|[^()\[\]+*/]+?(?=\s*(?:[()\[\]+*/]|(?<![A-Za-z])-(?![A-Za-z])|$)))"
)
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
FY = r"(?:FY\s?|fiscal\s+(?:year\s+)?)'?((?:19|20)?\d\d)\b"
_BETWEEN = re.compile(rf"\b(?:between|from)\s+{FY}\s+(?:and|to|-|through)\s+{FY}", re.I)
_YEAR = re.compile(rf"\b(?:in|for|of|at\s+the\s+end\s+of|as\s+of)?\s*{FY}", re.I)
_STATEMENT = re.compile(
    r"\b(?:from|per|in|on|of)\s+(?:the\s+)?(cash\s+flows?|income|balance\s+sheet|p&l|"
    r"profit\s+and\s+loss|statement\s+of\s+(?:cash\s+flows?|income|operations|earnings|"
    r"financial\s+position))(?:\s+statement)?s?\b",
    re.I,
)
_AVERAGE = re.compile(r"^(?:the\s+)?(?:average|avg\.?|mean)\s+(?:of\s+)?(?:the\s+)?", re.I)
_CHANGE = re.compile(r"^(?:the\s+)?(?:change|increase|decrease)\s+(?:in|of)\s+(?:the\s+)?", re.I)
_FILLER = re.compile(
    r"\b(?:the|a|an|unadjusted|reported|total\s+amount\s+of|amount\s+of|company'?s|"
    r"year[- ]end|ending|end\s+of|balance\s+of|value\s+of|figure)\b",
    re.I,
)


def year_of(text: str) -> int:
    """A two- or four-digit year as four digits (FY22: 2022)."""
    year = int(text)
    return year + 2000 if year < 100 else year


def _statement_kind(text: str) -> str:
    t = text.lower()
    if "cash" in t:
        return "cash flow"
    if "balance" in t or "financial position" in t:
        return "balance"
    return "income"


@dataclass
class _Parser:
    tokens: list[str]
    names: Collection[str]
    at: int = 0
    kinds: dict[int, str] = field(default_factory=dict)  # phrase index -> statement hint

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def expr(self) -> Node:
        node = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            node = Op(op, node, self.term())
        return node

    def term(self) -> Node:
        node = self.factor()
        while self.peek() in ("*", "/"):
            op = self.take()
            node = Op(op, node, self.factor())
        return node

    def factor(self) -> Node:
        token = self.peek()
        if token is None:
            raise _Fail(Unparsed("", "the expression ends where a value was expected"))
        if token == "(":
            self.take()
            node = self.expr()
            if self.peek() == ")":
                self.take()
            node = self._annotated(node)
            return node
        if token in (")", "+", "*", "/", "]"):
            raise _Fail(Unparsed(token, "an operator where a value was expected"))
        if token == "-":  # a leading minus: 0 - x
            self.take()
            return Op("-", Num("0"), self.factor())
        self.take()
        return self._annotated(phrase(token, self.names))

    def _annotated(self, node: Node) -> Node:
        """A bracketed note after a value ("[from cash flow statement]") gives its
        statement; other notes are read past."""
        while self.peek() == "[":
            self.take()
            words = []
            while self.peek() not in (None, "]"):
                words.append(self.take())
            if self.peek() == "]":
                self.take()
            note = " ".join(words)
            statement = _STATEMENT.search(note)
            if statement:
                node = _with_kind(node, _statement_kind(statement.group(1)))
        return node


def _with_kind(node: Node, kind: str) -> Node:
    if isinstance(node, Item):
        return Item(node.item, node.year, kind)
    if isinstance(node, Span):
        return Span(node.how, _with_kind(node.node, kind), node.first, node.last)
    if isinstance(node, Op):
        return Op(node.op, _with_kind(node.left, kind), _with_kind(node.right, kind))
    return node


def phrase(text: str, names: Collection[str] = ()) -> Node:
    """One phrase of an expression (module docstring)."""
    raw = " ".join(text.split()).strip(" ,.;:")
    if _NUMBER.match(raw.replace(",", "")):
        return Num(raw.replace(",", ""))
    kind = None
    if m := _STATEMENT.search(raw):
        kind = _statement_kind(m.group(1))
        raw = (raw[: m.start()] + raw[m.end() :]).strip()
    first = last = year = None
    if m := _BETWEEN.search(raw):
        first, last = sorted((year_of(m.group(1)), year_of(m.group(2))))
        raw = (raw[: m.start()] + raw[m.end() :]).strip()
    elif m := _YEAR.search(raw):
        year = year_of(m.group(1))
        raw = (raw[: m.start()] + " " + raw[m.end() :]).strip()
    how = None
    if m := _AVERAGE.match(raw):
        how, raw = "average", raw[m.end() :]
    elif m := _CHANGE.match(raw):
        how, raw = "change", raw[m.end() :]
    words = " ".join(_FILLER.sub(" ", raw).split()).strip(" ,.;:")
    node: Node = _named(words, names) or _line_item(words, raw)
    if kind and isinstance(node, Item):
        node = Item(node.item, node.year, kind)
    if year is not None and isinstance(node, Item):
        node = Item(node.item, year, node.kind)
    if how is not None:
        return Span(how, node, first, last)
    if first is not None:  # a span with no word for what: the change over it
        return Span("change", node, first, last)
    return node


def _named(words: str, names: Collection[str]) -> Ref | None:
    key = words.lower().strip()
    key = re.sub(r"\s*\(([a-z]{2,5})\)$", "", key)  # "days payable outstanding (dpo)"
    return Ref(key) if key in names else None


def _line_item(words: str, raw: str) -> Item:
    found = mentions(words)
    if len(found) != 1:
        reason = (
            "no line item matches it"
            if not found
            else "it names more than one line item: " + ", ".join(m.item.label for m in found)
        )
        raise _Fail(Unparsed(raw, reason))
    leftover = len(words.split()) - (found[0].end - found[0].start)
    if leftover > 2:  # most of the phrase is not the line item: not what it asks
        raise _Fail(Unparsed(raw, f"it says more than the line item {found[0].item.label!r}"))
    return Item(found[0].item)


def tokens(text: str) -> list[str]:
    """The expression's tokens: operators, parentheses, brackets and phrases."""
    for pattern, op in _WORD_OPS:
        text = pattern.sub(op, text)
    out = [t.strip() for t in _TOKEN.findall(text)]
    return [t for t in out if t]


def parse(text: str, *, names: Collection[str] = ()) -> Node | Unparsed:
    """The tree of an expression in words, or why it could not be read. `names`: the
    names (lowercase) defined in the question or the library, read as `Ref`s."""
    parser = _Parser(tokens(text), {n.lower() for n in names})
    try:
        node = parser.expr()
    except _Fail as e:
        return e.unparsed
    if parser.peek() is not None:
        rest = " ".join(parser.tokens[parser.at :])
        return Unparsed(rest, "left over after the expression")
    return node


__all__ = [
    "FY",
    "Item",
    "Node",
    "Num",
    "Op",
    "Ref",
    "Span",
    "Unparsed",
    "parse",
    "phrase",
    "tokens",
    "year_of",
]
