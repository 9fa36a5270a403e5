"""What running a query returns: solutions of a SELECT, triples of a CONSTRUCT."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from pyoxigraph import BlankNode, Literal, NamedNode, Triple

Term = NamedNode | BlankNode | Literal | Triple
# The dataset a query reads: graphs by name, "union" (every graph as the default graph), or
# None (the store's own default).
DefaultGraphs = Sequence[NamedNode] | str | None


@dataclass(frozen=True)
class Solutions:
    """SELECT results: the projected variables and one tuple per solution (None: unbound)."""

    variables: tuple[str, ...]
    rows: list[tuple[Term | None, ...]]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Term | None]]:
        for row in self.rows:
            yield dict(zip(self.variables, row, strict=True))

    def column(self, name: str) -> list[Term | None]:
        i = self.variables.index(name)
        return [row[i] for row in self.rows]

    def scalar(self) -> Term | None:
        """The single value of a one-row, one-column result."""
        if len(self.rows) != 1 or len(self.variables) != 1:
            raise ValueError(f"expected one value, got {len(self.rows)} rows x {self.variables}")
        return self.rows[0][0]


def python_value(term: Term | None) -> object:
    """A plain Python value for display and JSON: IRIs and literals as their lexical form,
    integers, decimals and doubles as numbers, booleans as bool."""
    if term is None:
        return None
    if isinstance(term, Literal):
        dt = term.datatype.value.rsplit("#", 1)[-1]
        try:
            if dt in ("integer", "int", "long", "nonNegativeInteger"):
                return int(term.value)
            if dt in ("double", "float", "decimal"):
                return float(term.value)
            if dt == "boolean":  # "1" and "0" are booleans too (Virtuoso writes them so)
                return term.value in ("true", "1")
        except ValueError:
            return term.value
        return term.value
    if isinstance(term, NamedNode | BlankNode):
        return term.value if isinstance(term, NamedNode) else "_:" + term.value
    return str(term)


_XSD = "http://www.w3.org/2001/XMLSchema#"
_NUMBERS = {_XSD + t for t in ("integer", "decimal", "double", "float", "int", "long", "short")}


def comparable(term: Term | None) -> object:
    """A form of `term` that is equal for the same value however an engine wrote it:
    numbers by value (`"10.50"^^xsd:decimal` and `10.5`), dateTimes as instants (an offset
    of -05:00 or the same instant in Z), dates by day, booleans (`true` and `1`), rdf:JSON
    by its parsed value; IRIs by IRI, blank nodes all alike. For comparing the answers of
    two SPARQL engines (tests/test_engines.py, benchmarks/retrieval.py --engines).

    >>> from pyoxigraph import Literal, NamedNode
    >>> dec = NamedNode(_XSD + "decimal")
    >>> comparable(Literal("10.50", datatype=dec)) == comparable(Literal("10.5", datatype=dec))
    True
    >>> t = NamedNode(_XSD + "dateTime")
    >>> a = Literal("2020-01-03T08:30:00-05:00", datatype=t)
    >>> comparable(a) == comparable(Literal("2020-01-03T13:30:00Z", datatype=t))
    True
    """
    if term is None or isinstance(term, NamedNode):
        return None if term is None else term.value
    if isinstance(term, BlankNode):
        return "_:"
    if isinstance(term, Triple):
        return tuple(comparable(t) for t in (term.subject, term.predicate, term.object))
    kind, text = term.datatype.value, term.value
    try:
        if kind in _NUMBERS:
            return ("number", round(Decimal(text).normalize(), 9))
        if kind == _XSD + "dateTime":
            return ("dateTime", dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())
        if kind == _XSD + "date":
            return ("date", text[:10])
        if kind == _XSD + "boolean":
            return ("boolean", text in ("true", "1"))
        if kind.endswith("#JSON"):
            return ("json", json.dumps(json.loads(text), sort_keys=True))
    except (ValueError, InvalidOperation):
        pass
    return (text, term.language or "", kind)
