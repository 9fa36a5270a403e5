"""What running a query returns: solutions of a SELECT, triples of a CONSTRUCT."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from pyoxigraph import BlankNode, Literal, NamedNode, Triple

Term = NamedNode | BlankNode | Literal | Triple


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
            if dt == "boolean":
                return term.value == "true"
        except ValueError:
            return term.value
        return term.value
    if isinstance(term, NamedNode | BlankNode):
        return term.value if isinstance(term, NamedNode) else "_:" + term.value
    return str(term)
