"""What a numeric question asks of the statements, read from its own words: a `Plan`.

A question asks for a line item ("the year end FY2019 total amount of inventories") or a
metric ("FY2017 days payable outstanding (DPO)"), for a year or over years, and often says
how to answer ("Answer in USD millions", "in units of percents and round to one decimal
place"). `plan(question)` reads, in this order:

1. its definitions: every "X is defined as: EXPR." and "Define X as EXPR." (the expression
   language of `formula.py`); a definition may use the names of others ("CCC is defined as:
   DIO + DSO - DPO. DIO is defined as: ...");
2. the years: a range ("FY2017 - FY2019", "from FY2016 to FY2018") or one year ("FY2019",
   "FY22", "fiscal 2020");
3. how to answer: percents, USD millions (billions, thousands), the decimals to round to;
4. what it asks: the phrase after "what is" / "what was" / "how much", without the company,
   the years and the instructions, read as
   - "N year average of E" / "average E" over a range: E each year, averaged;
   - "E as a % of F": E / F, a percentage;
   - "change in E" over a range: E at the later year less E at the earlier;
   - "E growth rate", "year-over-year change in E", "percent change in E": E's growth;
   - "N year E CAGR": E's compound annual growth;
   - "E % margin", "E margin": E / revenue, a percentage;
   - a name the question defines or finkg's library knows (`definitions.py`);
   - else an expression of line items ("operating income + depreciation and amortization
     from the cash flow statement").
5. a yes/no question ("Does AMD have a healthy liquidity profile based on its quick ratio
   for FY22?") is planned for the metric it names: finkg states the figure, the reader
   gives the judgement.

Anything it cannot read gives no plan (`NoPlan`, with the reason): the reader answers.

>>> p = plan("What is the FY2018 fixed asset turnover ratio for CVS Health? Fixed asset "
...          "turnover ratio is defined as: FY2018 revenue / (average PP&E between FY2017 and "
...          "FY2018). Round your answer to two decimal places.")
>>> str(p.node), p.year, p.unit, p.decimals, p.source
('fixed asset turnover ratio', 2018, 'ratio', 2, 'question')
>>> str(p.definitions["fixed asset turnover ratio"].node)
'revenue[FY2018] / average(property, plant and equipment, FY2017-FY2018)'
>>> p = plan("What is the FY2017 - FY2019 3 year average of capex as a % of revenue for "
...          "Activision Blizzard? Answer in units of percents and round to one decimal place.")
>>> str(p.node), (p.first, p.last), p.unit, p.decimals
('average(capital expenditures / revenue, FY2017-FY2019)', (2017, 2019), 'percent', 1)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from finkg.kg.facts.concepts import by_name
from finkg.tasks.qa.definitions import Definition, key, library
from finkg.tasks.qa.formula import FY, Item, Node, Op, Ref, Span, Unparsed, parse, year_of

_DEFINED = re.compile(
    r"(?:^|(?<=[.?!]\s)|(?<=\]\s))(?P<name>[A-Za-z][\w&%/'’ -]{0,60}?)"
    r"\s+(?:is|are)\s+defined\s+as:?\s+"
    r"(?P<expr>.+?)(?=\.\s+[A-Z]|\.$|$)",
    re.S,
)
_DEFINE = re.compile(
    r"\bDefine\s+(?P<name>[A-Za-z][\w&%/'’ -]{0,60}?)\s+as:?\s+(?P<expr>.+?)(?=\.\s+[A-Z]|\.$|$)",
    re.S | re.I,
)
_RANGE = re.compile(
    rf"{FY}\s*(?:-|–|to|through)\s*{FY}|\b(?:from|between)\s+{FY}\s+(?:to|and|through)\s+{FY}", re.I
)
_ONE = re.compile(FY, re.I)
_PERCENT = re.compile(
    r"\bin\s+(?:units\s+of\s+)?percent(?:s|age)?\b|\bas\s+a\s+percent(?:age)?\b", re.I
)
_MONEY = re.compile(
    r"\b(?:in\s+)?(?:USD|US\$|\$)\s*(millions|billions|thousands)\b|\bin\s+(millions|billions|thousands)\b",
    re.I,
)
_DECIMALS = re.compile(
    r"round(?:ed)?\s+(?:(?:your|the)\s+)?(?:answer\s+|final\s+answer\s+)?to\s+(?:the\s+nearest\s+)?"
    r"(one|two|three|four|zero|\d)\s+decimal",
    re.I,
)
_WHOLE = re.compile(
    r"round(?:ed)?\s+.{0,20}\bnearest\s+(?:whole\s+(?:number|percent)|integer)", re.I
)
_NUMBERS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4}
_ASK = re.compile(
    r"\b(?:what\s+(?:is|was|were|are)|what's|how\s+much|calculate|compute)\s+(?P<rest>[^?]+)", re.I
)
_YES_NO = re.compile(r"^\s*(?:does|do|did|is|are|was|were|has|have|can|will|would|should)\b", re.I)
_BASED_ON = re.compile(
    r"\bbased\s+on\s+(?:its|the|their)?\s*(?P<what>[^,?.]+?)(?:\s+for\b|[,?.]|$)", re.I
)
_COMPANY_OF = re.compile(
    r"\b(?:for|of|at)\s+[A-Z][\w&.,'’-]*(?:\s+(?:[A-Z][\w&.,'’-]*|\(formerly[^)]*\)|of|and|&))*\s*$"
)
_POSSESSIVE = re.compile(r"\b(?:[A-Z][\w&.-]*\s+){0,4}[A-Z][\w&.-]*['’]s?\s+(?=[a-zA-Z0-9])")
_AVERAGE_OVER = re.compile(
    r"^(?:(?:the\s+)?(?:\w+|\d+)[- ]year\s+)?average\s+(?:of\s+)?(?P<e>.+)$", re.I
)
_AS_PERCENT_OF = re.compile(
    r"^(?P<a>.+?)\s+as\s+an?\s+(?:%|percent(?:age)?)\s+of\s+(?:total\s+)?(?P<b>.+)$", re.I
)
_CHANGE_IN = re.compile(
    r"^(?:the\s+)?(?:year[- ]over[- ]year\s+|yoy\s+|annual\s+)?"
    r"(?P<pct>percent(?:age)?\s+|%\s*)?change\s+in\s+(?P<e>.+)$",
    re.I,
)
_GROWTH = re.compile(
    r"^(?:(?P<e1>.+?)\s+(?:growth\s+rate|growth)|(?:growth\s+rate|growth)\s+(?:of|in)\s+(?P<e2>.+))$",
    re.I,
)
_CAGR = re.compile(
    r"^(?:(?:\w+|\d+)[- ]year\s+)?(?:(?P<e1>.+?)\s+CAGR|CAGR\s+(?:of|in|for)\s+(?P<e2>.+))$", re.I
)
_MARGIN = re.compile(r"^(?P<e>.+?)\s+(?:%\s*)?margin$", re.I)
_TRIM = re.compile(
    r"\s*\((?:in\s+)?(?:units\s+of\s+)?(?:percent|usd|\$|millions|round)[^)]*\)|"
    r"\b(?:in|as)\s+(?:units\s+of\s+)?percents?\b|\bin\s+(?:USD\s+)?(?:millions|billions|thousands)\b|"
    r"\bin\s+USD\b|\bfor\s+the\s+(?:fiscal\s+)?year\b|\bat\s+the\s+end(?:\s+of)?\b|\bduring\b|"
    r"\bof\s+the\s+company\b|\bthe\s+company'?s\b|\bdid\s+.+?\s+(?:have|generate|report|spend|record|pay)\b(?:\s+in|\s+on)?|"
    r"\bgenerate\s+in\b",
    re.I,
)


class NoPlan(Exception):
    """The question does not read as a computation finkg can plan: why."""


@dataclass(frozen=True)
class Plan:
    """What to compute: the tree, the year(s), how the result reads, where its definition
    came from ("question", "library" or "line item"), the definitions it refers to, and
    whether the question is a yes/no judgement over the figure."""

    node: Node
    asked: str
    year: int
    first: int | None
    last: int | None
    unit: str  # ratio, percent, days, money
    decimals: int
    money_scale: int  # 6: USD millions
    source: str
    definitions: dict[str, Definition] = field(default_factory=dict)
    yes_no: bool = False
    note: str = ""

    @property
    def definition_text(self) -> str:
        """The definitions used, in words, as the answer quotes them."""
        parts = [
            f"{d.name} = {d.formula}" + (f" ({d.note})" if d.note else "")
            for d in self.definitions.values()
        ]
        return "; ".join(dict.fromkeys(parts))


def definitions_in(question: str) -> dict[str, Definition]:
    """The metrics a question defines, by name (module docstring, step 1)."""
    found: dict[str, str] = {}
    for pattern in (_DEFINED, _DEFINE):
        for m in pattern.finditer(question):
            name = m.group("name").strip()
            name = re.sub(r"^(?:and|then|where|here|also)\s+", "", name, flags=re.I)
            found[key(name)] = m.group("expr").strip()
            short = re.fullmatch(r"(.+?)\s*\((\w{2,6})\)", name)
            if short:
                found[key(short.group(1))] = found[key(name)]
                found[key(short.group(2))] = found[key(name)]
    names = set(found) | set(library().names)
    out = {}
    for name, expr in found.items():
        node = parse(expr, names=names)
        if isinstance(node, Unparsed):
            raise NoPlan(f"the question defines {name!r} in words finkg cannot read: {node}")
        out[name] = Definition(name, expr, node, "ratio", source="question")
    return out


def _years(text: str) -> tuple[int | None, int | None, int | None]:
    """(year, first, last): the year asked, and the range asked if any."""
    if m := _RANGE.search(text):
        ys = [year_of(g) for g in m.groups() if g]
        first, last = min(ys), max(ys)
        return last, first, last
    ones = [year_of(m.group(1)) for m in _ONE.finditer(text)]
    return (ones[-1] if ones else None), None, None


def _how(question: str) -> tuple[str | None, int | None, int]:
    """(percent or None, the decimals asked or None, the money scale: 6 for millions)."""
    unit = "percent" if _PERCENT.search(question) else None
    decimals = None
    if m := _DECIMALS.search(question):
        word = m.group(1).lower()
        decimals = _NUMBERS[word] if word in _NUMBERS else int(word)
    elif _WHOLE.search(question):
        decimals = 0
    scale = 6
    if m := _MONEY.search(question):
        word = (m.group(1) or m.group(2)).lower()
        scale = {"thousands": 3, "millions": 6, "billions": 9}[word]
    return unit, decimals, scale


def _asked(question: str) -> str:
    """The phrase of what is asked (module docstring, step 4)."""
    sentences = [s for s in re.split(r"(?<=[.?!])\s+", question) if s.strip()]
    ask = next((s for s in sentences if "?" in s), None) or next(
        (s for s in sentences if _ASK.search(s)), ""
    )
    if _YES_NO.search(ask):
        named = _named_metric(ask)
        if named is not None:
            return named
        if m := _BASED_ON.search(ask):
            return m.group("what")
    m = _ASK.search(ask)
    if m is None:
        raise NoPlan("no 'what is' or 'how much' part")
    rest = m.group("rest")
    rest = re.sub(r"^(?:the\s+)?", "", rest.strip(), flags=re.I)
    rest = _RANGE.sub(" ", rest)
    rest = re.sub(rf"\b(?:in|for|of|as\s+of)?\s*{FY}", " ", rest, flags=re.I)
    rest = _TRIM.sub(" ", rest)
    rest = _COMPANY_OF.sub("", rest.strip(" ,.?"))
    rest = _POSSESSIVE.sub("", rest)
    rest = re.sub(r"\(\s*\)", " ", rest)
    return " ".join(rest.split()).strip(" ,.?")


def _named_metric(text: str) -> str | None:
    """The longest metric of the library a sentence names ("positive working capital",
    "its quick ratio", "gross margins"), else None."""
    words = key(text)
    found = [name for name in library().names if re.search(rf"\b{re.escape(name)}s?\b", words)]
    return max(found, key=len) if found else None


def plan(question: str) -> Plan:
    """The computation a question asks for, or NoPlan (module docstring)."""
    defined = definitions_in(question)
    lib = library()
    year, first, last = _years(question)
    if year is None:
        raise NoPlan("no fiscal year named")
    percent, decimals, scale = _how(question)
    asked = _asked(question)
    names = set(defined) | set(lib.names)
    node, unit, source = _read_asked(asked, names, defined, first, last, bool(percent))
    used: dict[str, Definition] = {}
    _collect(node, defined, used)
    if percent:
        unit = "percent"
    if decimals is None:  # money: whole units of the scale asked (USD millions)
        decimals = {"percent": 1, "money": 0}.get(unit, 2)
    yes_no = bool(_YES_NO.search(question))
    return Plan(node, asked, year, first, last, unit, decimals, scale, source, used, yes_no)


def _collect(node: Node, defined: dict[str, Definition], out: dict[str, Definition]) -> None:
    """The definitions `node` refers to, transitively (the question's before the library's)."""
    if isinstance(node, Ref):
        d = defined.get(node.name) or library().find(node.name)
        if d is not None and d.name not in out:
            out[d.name] = d
            _collect(d.node, defined, out)
    elif isinstance(node, Span):
        _collect(node.node, defined, out)
    elif isinstance(node, Op):
        _collect(node.left, defined, out)
        _collect(node.right, defined, out)


def _read_asked(
    asked: str,
    names: set[str],
    defined: dict[str, Definition],
    first: int | None,
    last: int | None,
    percent: bool = False,
) -> tuple[Node, str, str]:
    """(tree, unit, source) of the asked phrase."""
    text, alias = asked, None
    if m := re.search(r"\s*\(([^()]+)\)$", text):  # "days payable outstanding (DPO)"
        text, alias = text[: m.start()].strip(), key(m.group(1))
    if alias in defined:  # the question defines it by its short name
        return Ref(alias), _unit_of(defined[alias].node, defined), "question"
    m = _AVERAGE_OVER.match(text)
    if m and first is not None:
        node, unit, source = _read_asked(m.group("e"), names, defined, None, None)
        return Span("average", node, first, last), unit, source
    if m := _AS_PERCENT_OF.match(text):
        a = _expression(m.group("a"), names)
        b = _expression(m.group("b"), names)
        return Op("/", a, b), "percent", "line item"
    if (m := _CHANGE_IN.match(text)) and first is not None:
        inner, unit, source = _read_asked(m.group("e"), names, defined, None, None)
        # a change asked in percents of an amount is its growth; of a percentage, the
        # difference in points
        if m.group("pct") or (percent and unit != "percent"):
            return Span("growth", inner, first, last), "percent", source
        return Span("change", inner, first, last), unit, source
    if m := _CAGR.match(text):
        inner = _expression(m.group("e1") or m.group("e2"), names)
        return Span("cagr", inner, first, last), "percent", "line item"
    if m := _GROWTH.match(text):
        inner = _expression(m.group("e1") or m.group("e2"), names)
        return Span("growth", inner, first, last), "percent", "line item"
    if key(text) in names:
        d = defined.get(key(text)) or library().find(text)
        assert d is not None
        found = library().find(text)
        unit = found.unit if found else _unit_of(d.node, defined)
        return Ref(key(text)), unit, d.source
    if (m := _MARGIN.match(text)) and key(m.group("e")) not in names:
        inner = _expression(m.group("e"), names)
        return Op("/", inner, Item(by_name("Revenue"))), "percent", "line item"
    node = _expression(text, names)
    unit = "money"
    if isinstance(node, Ref):
        d = defined.get(node.name) or library().find(node.name)
        unit = d.unit if d is not None else "ratio"
    return node, unit, "line item"


def _unit_of(node: Node, defined: dict[str, Definition]) -> str:
    """How a defined expression's result reads: a quotient is a ratio (days when it is
    365 times one), a sum or difference of amounts is money."""
    if isinstance(node, Op):
        if node.op == "*" and "365" in (str(node.left), str(node.right)):
            return "days"
        if node.op == "/":
            return "days" if str(node.left).startswith("365 ") else "ratio"
        if node.op in "+-":
            return _unit_of(node.left, defined)
        return _unit_of(node.left, defined)
    if isinstance(node, Ref):
        d = defined.get(node.name) or library().find(node.name)
        return (
            d.unit
            if d is not None and d.source == "library"
            else (_unit_of(d.node, defined) if d is not None else "ratio")
        )
    if isinstance(node, Span) and node.how in ("growth", "cagr"):
        return "percent"
    if isinstance(node, Span):
        return _unit_of(node.node, defined)
    return "money" if isinstance(node, Item) else "ratio"


def _expression(text: str, names: set[str]) -> Node:
    node = parse(text, names=names)
    if isinstance(node, Unparsed):
        raise NoPlan(f"what is asked does not read: {node}")
    return node


__all__ = ["NoPlan", "Plan", "definitions_in", "plan"]
