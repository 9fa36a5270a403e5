"""A SELECT's solutions with typed accessors: `rows[0].datetime("availableAt")`.

Each accessor reads one variable as one Python type and raises a `QueryError` naming the
query and the variable when the solution holds something else (unbound, an IRI where a
literal was declared, a lexical form the type cannot read), so a caller never writes
`int(r["n"].value)` with a type checker's exemption again. The `maybe_` accessors return
None for an unbound variable (an OPTIONAL's).

Where the query's header types a variable (`# output ?at dateTime`), an accessor of another
type is refused too (`row.integer("at")`: it is declared a dateTime), so the header stays
the one statement of what a query returns.

>>> from pyoxigraph import Literal, NamedNode
>>> xsd = "http://www.w3.org/2001/XMLSchema#"
>>> rows = Rows("example", ("n", "at", "who"), [
...     (Literal("3", datatype=NamedNode(xsd + "integer")),
...      Literal("2020-01-02T09:30:00-05:00", datatype=NamedNode(xsd + "dateTime")), None)])
>>> row = rows[0]
>>> row.integer("n"), row.datetime("at").utcoffset().total_seconds(), row.maybe_iri("who")
(3, -18000.0, None)
>>> rows[0].iri("who")
Traceback (most recent call last):
...
finkg.errors.QueryError: example: ?who: unbound; the query returned no value for it
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence
from decimal import Decimal, InvalidOperation

from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from finkg.errors import QueryError

Term = NamedNode | BlankNode | Literal | Triple

# The header types each accessor reads (a term can be read by any; string reads any
# literal's lexical form or an IRI's text).
_READS = {
    "iri": {"iri"},
    "string": {"string", "iri", "date", "dateTime", "integer", "decimal", "double", "boolean"},
    "integer": {"integer"},
    "decimal": {"decimal", "integer", "double"},
    "double": {"double", "decimal", "integer"},
    "boolean": {"boolean"},
    "datetime": {"dateTime"},
    "date": {"date", "dateTime"},
}


class Row:
    """One solution of a named query (module docstring)."""

    __slots__ = ("_declared", "_index", "_query", "_values")

    def __init__(
        self,
        query: str,
        index: dict[str, int],
        values: tuple[Term | None, ...],
        declared: dict[str, str] | None = None,
    ) -> None:
        self._query, self._index, self._values = query, index, values
        self._declared = declared or {}

    def _fail(self, name: str, why: str) -> QueryError:
        return QueryError(why, field=f"{self._query}: ?{name}")

    def _as(self, name: str, accessor: str) -> None:
        """Refuse reading `name` with `accessor` where the header types it otherwise."""
        declared = self._declared.get(name, "term").rstrip("?")
        if declared != "term" and declared not in _READS[accessor]:
            raise self._fail(name, f"declared {declared} in the query's header, read as {accessor}")

    def maybe(self, name: str) -> Term | None:
        """The variable's term, None when unbound; an unknown variable is an error."""
        at = self._index.get(name)
        if at is None:
            known = ", ".join(f"?{v}" for v in self._index)
            raise self._fail(name, f"not a variable of the query (it has {known})")
        return self._values[at]

    def term(self, name: str) -> Term:
        value = self.maybe(name)
        if value is None:
            raise self._fail(name, "unbound; the query returned no value for it")
        return value

    def __getitem__(self, name: str) -> Term | None:
        return self.maybe(name)

    def keys(self) -> list[str]:
        return list(self._index)

    def as_dict(self) -> dict[str, Term | None]:
        return {k: self._values[i] for k, i in self._index.items()}

    # -- IRIs and text ---------------------------------------------------------------------

    def iri(self, name: str) -> NamedNode:
        self._as(name, "iri")
        value = self.term(name)
        if not isinstance(value, NamedNode):
            raise self._fail(name, f"not an IRI: {value}")
        return value

    def maybe_iri(self, name: str) -> NamedNode | None:
        return None if self.maybe(name) is None else self.iri(name)

    def string(self, name: str) -> str:
        """A literal's lexical form (or an IRI's text)."""
        self._as(name, "string")
        value = self.term(name)
        if isinstance(value, Literal | NamedNode):
            return value.value
        raise self._fail(name, f"not a literal or IRI: {value}")

    def maybe_string(self, name: str) -> str | None:
        return None if self.maybe(name) is None else self.string(name)

    # -- numbers --------------------------------------------------------------------------

    def _literal(self, name: str) -> str:
        value = self.term(name)
        if not isinstance(value, Literal):
            raise self._fail(name, f"not a literal: {value}")
        return value.value

    def integer(self, name: str) -> int:
        self._as(name, "integer")
        text = self._literal(name)
        try:
            return int(text)
        except ValueError:
            raise self._fail(name, f"not an integer: {text!r}") from None

    def maybe_integer(self, name: str) -> int | None:
        return None if self.maybe(name) is None else self.integer(name)

    def decimal(self, name: str) -> Decimal:
        self._as(name, "decimal")
        text = self._literal(name)
        try:
            return Decimal(text)
        except InvalidOperation:
            raise self._fail(name, f"not a number: {text!r}") from None

    def maybe_decimal(self, name: str) -> Decimal | None:
        return None if self.maybe(name) is None else self.decimal(name)

    def double(self, name: str) -> float:
        self._as(name, "double")
        text = self._literal(name)
        try:
            return float(text)
        except ValueError:
            raise self._fail(name, f"not a number: {text!r}") from None

    def maybe_double(self, name: str) -> float | None:
        return None if self.maybe(name) is None else self.double(name)

    def boolean(self, name: str) -> bool:
        """xsd:boolean, "1" and "0" included (Virtuoso writes them so)."""
        self._as(name, "boolean")
        text = self._literal(name)
        if text in ("true", "1"):
            return True
        if text in ("false", "0"):
            return False
        raise self._fail(name, f"not a boolean: {text!r}")

    # -- time -----------------------------------------------------------------------------

    def datetime(self, name: str) -> dt.datetime:
        """An xsd:dateTime with its zone (a naive one is an error: finkg stores none)."""
        self._as(name, "datetime")
        text = self._literal(name)
        try:
            value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise self._fail(name, f"not a dateTime: {text!r}") from None
        if value.tzinfo is None:
            raise self._fail(name, f"a dateTime without a zone: {text!r}")
        return value

    def maybe_datetime(self, name: str) -> dt.datetime | None:
        return None if self.maybe(name) is None else self.datetime(name)

    def date(self, name: str) -> dt.date:
        self._as(name, "date")
        text = self._literal(name)
        try:
            return dt.date.fromisoformat(text[:10])
        except ValueError:
            raise self._fail(name, f"not a date: {text!r}") from None

    def maybe_date(self, name: str) -> dt.date | None:
        return None if self.maybe(name) is None else self.date(name)

    def __repr__(self) -> str:
        return f"Row({self._query}, {self.as_dict()})"


class Rows(Sequence[Row]):
    """A SELECT's solutions, in order, as `Row`s."""

    def __init__(
        self,
        query: str,
        variables: tuple[str, ...],
        solutions: list[tuple[Term | None, ...]],
        declared: dict[str, str] | None = None,
    ) -> None:
        self.query, self.variables = query, variables
        self._index = {v: i for i, v in enumerate(variables)}
        self._rows = [Row(query, self._index, s, declared) for s in solutions]

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, i):
        return self._rows[i]

    def __iter__(self) -> Iterator[Row]:
        return iter(self._rows)

    def column(self, name: str) -> list[Term | None]:
        return [r.maybe(name) for r in self._rows]

    def iris(self, name: str) -> list[NamedNode]:
        return [r.iri(name) for r in self._rows]

    def one(self) -> Row:
        """The only row; a QueryError when there are none or several."""
        if len(self._rows) != 1:
            raise QueryError(f"expected one row, got {len(self._rows)}", field=self.query)
        return self._rows[0]

    def first(self) -> Row | None:
        return self._rows[0] if self._rows else None


__all__ = ["Row", "Rows"]
