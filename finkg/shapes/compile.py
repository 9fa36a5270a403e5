"""SHACL shapes as SPARQL: one SELECT per constraint, run by Oxigraph.

pyshacl validates about 7,000 triples a second here; ingest must check hundreds of
thousands. This module reads a shapes graph and writes, for every constraint of every
targeted shape, a query that returns exactly the focus nodes (and value nodes) that violate
it, following the SHACL Core definitions (`constraints.py` writes the queries).

Targets: `sh:targetClass`, implicit class targets (a shape that is also an `rdfs:Class` or
`owl:Class`), `sh:targetNode`, `sh:targetSubjectsOf`, `sh:targetObjectsOf`. A class target
reaches the class's subclasses in the `ontology` graph (finkg.ttl, so finkg's data needs no
ontology beside it) and, at run time, those stated in the data (`validate.py` compiles again
when the data adds any). Paths: every SHACL path, as a SPARQL property path. Property shapes
inside property shapes are followed.

Anything else is refused when compiling, with a ShapeCompileError (exit code 2) that names
the shape and the feature (README, "What the SHACL compiler refuses"): a shape is either
checked as SHACL says or not checked at all, never passed unchecked. pyshacl stays the
reference: a test runs the W3C SHACL core suite through this compiler, and another checks
both engines agree on every finkg fixture.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import NoReturn

import rdflib
from rdflib.namespace import OWL, RDF, RDFS, SH

from finkg.errors import InputError
from finkg.shapes import constraints
from finkg.shapes.terms import PathError, sparql_path


class ShapeCompileError(InputError):
    """A shape uses SHACL this compiler does not implement (exit code 2)."""


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
    arg: object = None
    severity: str = "Violation"
    other_targets: bool = False  # targets beyond `classes`: run whatever classes occur


# shape parameters that change nothing about validation
_NON_VALIDATING = {
    SH.message,
    SH.name,
    SH.description,
    SH.severity,
    SH.deactivated,
    SH.order,
    SH.group,
    SH.defaultValue,
}
_TARGETS = {SH.targetClass, SH.targetNode, SH.targetSubjectsOf, SH.targetObjectsOf}
_CLASSES = {RDFS.Class, OWL.Class}
_REFUSED = {
    SH.node: "sh:node (a value node must conform to another shape)",
    SH["not"]: "sh:not",
    SH["and"]: "sh:and",
    SH["or"]: "sh:or",
    SH.xone: "sh:xone",
    SH.qualifiedValueShape: "qualified value shapes (sh:qualifiedValueShape)",
    SH.qualifiedMinCount: "qualified value shapes (sh:qualifiedMinCount)",
    SH.qualifiedMaxCount: "qualified value shapes (sh:qualifiedMaxCount)",
    SH.qualifiedValueShapesDisjoint: "qualified value shapes (sh:qualifiedValueShapesDisjoint)",
    SH.target: "SHACL-AF targets (sh:target)",
    SH.rule: "SHACL-AF rules (sh:rule)",
    SH.js: "SHACL-JS",
}
_PREDICATES = _NON_VALIDATING | _TARGETS | constraints.NODE | constraints.PROPERTY | {SH.path}


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


def compile_shapes(shapes: rdflib.Graph, ontology: rdflib.Graph) -> list[Check]:
    """Every constraint of every active, targeted shape (and the property shapes inside
    it), as a Check; raises ShapeCompileError on any construct it does not implement."""
    for component in shapes.subjects(RDF.type, SH.ConstraintComponent):
        _refuse(component, "custom constraint components (sh:ConstraintComponent)")
    if (None, OWL.imports, None) in shapes:
        _refuse(next(shapes.subjects(OWL.imports, None)), "owl:imports in the shapes graph")
    checks: list[Check] = []
    for shape in sorted(_targeted(shapes), key=str):
        if _active(shapes, shape):
            focus = _focus(shapes, ontology, shape)
            checks.extend(_shape_checks(shapes, ontology, shape, focus, depth=0))
    return checks


def _active(shapes: rdflib.Graph, shape: rdflib.term.Node) -> bool:
    return not any(constraints.is_true(v) for v in shapes.objects(shape, SH.deactivated))


def _is_shape(shapes: rdflib.Graph, node: rdflib.term.Node) -> bool:
    types = set(shapes.objects(node, RDF.type))
    return bool(types & {SH.NodeShape, SH.PropertyShape}) or any(
        p in _PREDICATES or p in _REFUSED for p in shapes.predicates(node)
    )


def _targeted(shapes: rdflib.Graph) -> set[rdflib.term.Node]:
    found = {s for p in _TARGETS for s in shapes.subjects(p, None)}
    for cls in _CLASSES:
        found |= {s for s in shapes.subjects(RDF.type, cls) if _is_shape(shapes, s)}
    return found


def _refuse(shape: rdflib.term.Node, feature: str, path: str = "") -> NoReturn:
    raise ShapeCompileError(
        f"shape {_name(shape, path)} uses {feature}, which finkg's SPARQL validator does not "
        "implement",
        hint="validate with --engine pyshacl (or engine='pyshacl'), or drop the feature",
    )


def _name(shape: rdflib.term.Node, path: str = "") -> str:
    if isinstance(shape, rdflib.URIRef):
        return str(shape)
    return f"[shape on {path}]" if path else f"_:{shape}"


def _focus(shapes: rdflib.Graph, ontology: rdflib.Graph, shape: rdflib.term.Node) -> Focus:
    classes = set(shapes.objects(shape, SH.targetClass))
    if set(shapes.objects(shape, RDF.type)) & _CLASSES:
        classes.add(shape)
    nodes = list(shapes.objects(shape, SH.targetNode))
    for node in nodes:
        if isinstance(node, rdflib.BNode):
            _refuse(shape, "a blank node as sh:targetNode")
        constraints.refuse_rewritten(shape, "sh:targetNode", [node], _refuse)
    props = [
        *shapes.objects(shape, SH.targetSubjectsOf),
        *shapes.objects(shape, SH.targetObjectsOf),
    ]
    if not all(isinstance(c, rdflib.URIRef) for c in [*classes, *props]):
        _refuse(shape, "a target class or predicate that is not an IRI")
    return Focus(
        classes=tuple(sorted({c for t in classes for c in subclasses(ontology, t)})),
        nodes=tuple(sorted({n.n3() for n in nodes})),
        subjects_of=tuple(sorted(p.n3() for p in shapes.objects(shape, SH.targetSubjectsOf))),
        objects_of=tuple(sorted(p.n3() for p in shapes.objects(shape, SH.targetObjectsOf))),
    )


def _shape_checks(
    shapes: rdflib.Graph,
    ontology: rdflib.Graph,
    shape: rdflib.term.Node,
    focus: Focus,
    *,
    depth: int,
) -> list[Check]:
    """The checks of one shape at `focus`, and of the property shapes inside it."""
    if depth > 8:
        _refuse(shape, "property shapes nested more than 8 deep (or in a cycle)")
    paths = list(shapes.objects(shape, SH.path))
    if len(paths) > 1:
        _refuse(shape, "more than one sh:path")
    path = None
    if paths:
        try:
            path = sparql_path(shapes, paths[0])
        except PathError as e:
            _refuse(shape, f"a malformed sh:path ({e})")
    path_iri = str(paths[0]) if paths and isinstance(paths[0], rdflib.URIRef) else path or ""
    for p in set(shapes.predicates(shape)):
        if p in _REFUSED:
            _refuse(shape, _REFUSED[p], path_iri)
        if str(p).startswith(str(SH)) and p not in _PREDICATES:
            _refuse(shape, p.n3(shapes.namespace_manager), path_iri)
    site = constraints.Site(
        shapes=shapes,
        ontology=ontology,
        shape=shape,
        name=_name(shape, path_iri),
        focus=focus,
        path=path,
        path_iri=path_iri,
        refuse=lambda _shape, feature: _refuse(shape, feature, path_iri),
    )
    checks = list(constraints.checks(site))
    for inner in sorted(shapes.objects(shape, SH.property), key=str):
        if not _active(shapes, inner):
            continue
        if not list(shapes.objects(inner, SH.path)):
            _refuse(inner, "a property shape without sh:path")
        inner_focus = focus if path is None else Focus(outer=focus, outer_path=path)
        checks += _shape_checks(shapes, ontology, inner, inner_focus, depth=depth + 1)
    return checks


@cache
def finkg_checks() -> tuple[Check, ...]:
    """The compiled checks of finkg's packaged shapes (built once per process)."""
    from finkg.shapes.validate import ontology_graph, shapes_graph

    return tuple(compile_shapes(shapes_graph(), ontology_graph()))
