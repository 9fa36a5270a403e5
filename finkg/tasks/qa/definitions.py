"""finkg's definitions of standard metrics (`metrics.toml`), read once and checked.

Every formula must parse (`formula.parse`) with the library's own names as references, so
a definition that names a line item finkg does not know, or a metric the library lacks,
is an error when the library loads, never a wrong answer later.

>>> d = library().find("DPO")
>>> d.name, d.unit
('days payable outstanding', 'days')
>>> print(d.node)
365 * average(accounts payable) / (cost of goods sold + change(inventories))
>>> library().find("quick ratio").note
'current assets less inventories, over current liabilities'
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from finkg.errors import InputError
from finkg.tasks.qa.formula import Node, Unparsed, parse

UNITS = ("ratio", "percent", "days", "money")
_FILLER = re.compile(r"\b(?:the|unadjusted|company'?s)\b")


def key(name: str) -> str:
    """How names are compared: lowercase, without "unadjusted" or "the", single spaces."""
    return " ".join(_FILLER.sub(" ", name.lower().replace("’", "'")).split())


@dataclass(frozen=True)
class Definition:
    """One metric: its name, the formula in words and as a tree, how its result reads,
    and a note where filers define it otherwise. `source`: "library" or "question"."""

    name: str
    formula: str
    node: Node
    unit: str
    note: str = ""
    source: str = "library"


@dataclass(frozen=True)
class Library:
    definitions: dict[str, Definition]  # by every name, keyed
    outflows: frozenset[str]  # line items (local names) whose magnitude formulas use
    fallbacks: dict[str, str]  # a missing line item -> the one read instead

    def find(self, name: str) -> Definition | None:
        return self.definitions.get(key(name))

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self.definitions)


@cache
def library() -> Library:
    """The definitions of `metrics.toml`, parsed."""
    path = resources.files("finkg.tasks.qa").joinpath("metrics.toml")
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    entries = data.get("metric", [])
    names = {key(n) for e in entries for n in (e["name"], *e.get("names", []))}
    definitions: dict[str, Definition] = {}
    for e in entries:
        node = parse(e["formula"], names=names)
        if isinstance(node, Unparsed) or e.get("unit") not in UNITS:
            raise InputError(
                f"metrics.toml: the definition of {e['name']!r} does not read: {node}",
                field="formula",
                value=e["formula"],
            )
        d = Definition(e["name"], e["formula"], node, e["unit"], e.get("note", ""))
        for n in (e["name"], *e.get("names", [])):
            definitions[key(n)] = d
    return Library(
        definitions, frozenset(data.get("outflows", [])), dict(data.get("fallbacks", {}))
    )


__all__ = ["UNITS", "Definition", "Library", "key", "library"]
