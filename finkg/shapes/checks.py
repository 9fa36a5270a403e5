"""What a compiled shape is made of: a `Check` (one constraint as a query), the `Focus`
its focus nodes come from, and a class's closure under rdfs:subClassOf (`subclasses`).

`compile.py` reads a shapes graph into checks, `constraints.py` (with `site.py`) writes
each component's query, `engine.py` and `screen.py` run them; `passes.py` joins the checks
of one shape and path that can share a pass (`Shared`) into one query.
"""

from __future__ import annotations

from dataclasses import dataclass

import rdflib
from rdflib.namespace import RDFS

# A check's `arg`, by component (see `Check`): a count or length; an IRI or a term as
# N-Triples; class IRIs or allowed terms; (pattern, flags); (operator, lexical, datatype).
Arg = int | str | frozenset[str] | tuple[str, str | None] | tuple[str, str, str] | None


@dataclass(frozen=True)
class Shared:
    """How a check reads in one pass with the others of its shape and path (`passes.py`).

    `pattern` binds ?focus to each focus node and ?value to each of its value nodes, leaving
    ?value unbound where a focus node has none; checks with the same pattern share the pass.
    `flag` is true on a row that violates the constraint and false otherwise, never an
    error. With `another`, the pass also binds ?another to a second value of the same focus
    node where there is one (sh:maxCount 1)."""

    pattern: str
    flag: str
    with_value: bool = True  # the violation names the value node (counts name none)
    another: str = ""  # the pattern that binds ?another, where the flag reads it


@dataclass(frozen=True)
class Check:
    """One constraint as a query: its SELECT returns ?focus (and ?value where there is one;
    ?path where the path differs by row, sh:closed; ?cmp where Python decides the rows
    Oxigraph could not compare, the value ranges and sh:lessThan).

    `arg` is the constraint's parameter, for engines that evaluate it without the query
    (`screen.py`): a count or length (int) for Min/MaxCount and Min/MaxLength; the datatype
    IRI (Datatype); the sh:nodeKind IRI (NodeKind); the member class IRIs (Class); the
    allowed terms as N-Triples (In); (pattern, flags or None) (Pattern); (operator,
    lexical form, datatype IRI) of the bound (Min/MaxIn/Exclusive); the value as N-Triples
    (HasValue); the other path's IRI (LessThan, LessThanOrEquals); None (SPARQL and the
    components finkg's shapes do not use)."""

    shape: str  # the shape's IRI (or a description of a blank one)
    classes: frozenset[str]  # the target classes and their subclasses (IRIs)
    path: str  # the predicate IRI; a SPARQL path for other paths; "" for node shapes
    component: str  # the SHACL constraint component, e.g. "MinCount"
    message: str
    query: str
    arg: Arg = None
    severity: str = "Violation"
    other_targets: bool = False  # targets beyond `classes`: run whatever classes occur
    shared: Shared | None = None  # where the check can share a pass with others


@dataclass(frozen=True)
class Focus:
    """Where a shape's focus nodes come from: its targets, or (for a property shape inside
    a property shape) the value nodes of the outer shape."""

    classes: tuple[str, ...] = ()  # the class closure, as N-Triples
    nodes: tuple[str, ...] = ()
    subjects_of: tuple[str, ...] = ()
    objects_of: tuple[str, ...] = ()
    outer: Focus | None = None
    outer_path: str = ""

    @property
    def other_targets(self) -> bool:
        if self.outer is not None:
            return self.outer.other_targets
        return bool(self.nodes or self.subjects_of or self.objects_of)

    @property
    def class_iris(self) -> frozenset[str]:
        if self.outer is not None:
            return self.outer.class_iris
        return frozenset(c.strip("<>") for c in self.classes)

    def pattern(self, var: str = "?focus") -> str:
        """A group graph pattern that binds `var` to each focus node (maybe more than once)."""
        if self.outer is not None:
            up = var + "_up"
            inner = f"{self.outer.pattern(up)} {up} {self.outer_path} {var} ."
            return f"{{ SELECT DISTINCT {var} WHERE {{ {inner} }} }}"
        parts = []
        if self.classes:
            parts.append(f"VALUES {var}_class {{ {' '.join(self.classes)} }} {var} a {var}_class .")
        if self.nodes:
            parts.append(f"VALUES {var} {{ {' '.join(self.nodes)} }}")
        parts += [f"{var} {p} [] ." for p in self.subjects_of]
        parts += [f"[] {p} {var} ." for p in self.objects_of]
        if len(parts) == 1:
            return parts[0]
        return " UNION ".join(f"{{ {p} }}" for p in parts)


def subclasses(ontology: rdflib.Graph, cls: rdflib.term.Node) -> list[str]:
    """`cls` and its subclasses in `ontology` (rdfs:subClassOf, transitively), as N-Triples."""
    found, todo = {cls}, [cls]
    while todo:
        for sub in ontology.subjects(RDFS.subClassOf, todo.pop()):
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    return sorted(c.n3() for c in found)


__all__ = ["Arg", "Check", "Focus", "Shared", "subclasses"]
