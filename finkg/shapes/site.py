"""One shape where its constraints apply (`Site`): its focus nodes and path, and how a
constraint of it becomes a `Check` (its own query, and the pass it can share with the
others of the same shape and path: `passes.py`). `constraints.py` says what each SHACL
component tests; this module writes the SPARQL around it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import rdflib
from rdflib.namespace import SH

from finkg.shapes.checks import Arg, Check, Focus, Shared

Refuse = Callable[[rdflib.term.Node, str], NoReturn]


@dataclass(frozen=True)
class Site:
    """One shape where its constraints apply: its focus nodes and, for a property shape,
    its path (a SPARQL property path)."""

    shapes: rdflib.Graph
    ontology: rdflib.Graph
    shape: rdflib.term.Node
    name: str
    focus: Focus
    path: str | None
    path_iri: str
    refuse: Refuse

    def values(self, var: str = "?value") -> str:
        """Binds `var` to each value node of each focus node."""
        return f"?focus {self.path} {var} ." if self.path else f"BIND (?focus AS {var})"

    @property
    def pass_pattern(self) -> str:
        """The pattern of a pass shared by this shape's checks (`Shared`): every focus node,
        with each of its value nodes where it has any."""
        values = (
            f"OPTIONAL {{ ?focus {self.path} ?value }}" if self.path else "BIND (?focus AS ?value)"
        )
        return f"{self.focus.pattern()} {values}"

    def shared(self, flag: str, *, with_value: bool = True, another: bool = False) -> Shared:
        """This site's pass, with `flag` true where a row violates the constraint."""
        pattern = (
            f"OPTIONAL {{ ?focus {self.path} ?another FILTER (!sameTerm(?another, ?value)) }}"
            if another
            else ""
        )
        return Shared(self.pass_pattern, flag, with_value, pattern)

    def holds(self, var: str) -> str:
        """True (as a pattern) when the bound `var` is a value node of ?focus."""
        return f"?focus {self.path} {var} ." if self.path else f"FILTER (sameTerm(?focus, {var}))"

    def objects(self, p: rdflib.URIRef) -> list[Any]:
        return list(self.shapes.objects(self.shape, p))

    def check(
        self,
        component: str,
        default: str,
        where: str,
        select: str = "?focus ?value",
        tail: str = "",
        *,
        arg: Arg = None,
        shared: Shared | None = None,
    ) -> Check:
        query = f"SELECT DISTINCT {select} WHERE {{ {self.focus.pattern()} {where} }} {tail}"
        text = self.shapes.value(self.shape, SH.message)
        severity = self.shapes.value(self.shape, SH.severity)
        return Check(
            self.name,
            self.focus.class_iris,
            self.path_iri,
            component,
            str(text) if text is not None else default,
            query.rstrip(),
            arg,
            severity=str(severity).rsplit("#", 1)[-1] if severity is not None else "Violation",
            other_targets=self.focus.other_targets,
            shared=shared,
        )

    def test(self, condition: str, component: str, default: str, *, arg: Arg = None) -> Check:
        """A check of each value node: a violation where `condition` is not true."""
        where = f"{self.values()} FILTER (!COALESCE({condition}, false))"
        flag = self.shared(f"BOUND(?value) && !COALESCE({condition}, false)")
        return self.check(component, default, where, arg=arg, shared=flag)


__all__ = ["Refuse", "Site"]
