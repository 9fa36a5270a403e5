"""SHACL shapes as SPARQL: one SELECT per constraint, run by Oxigraph (the constraints of
one shape and path in one pass where they can share it: `passes.py`).

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

from typing import NoReturn

import rdflib
from rdflib.namespace import OWL, RDF, RDFS, SH

from finkg.errors import InputError
from finkg.shapes import constraints
from finkg.shapes.checks import Check, Focus, subclasses
from finkg.shapes.site import Site
from finkg.shapes.terms import PathError, sparql_path


class ShapeCompileError(InputError):
    """A shape uses SHACL this compiler does not implement (exit code 2)."""


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
_REFUSED: dict[rdflib.term.Node, str] = {
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
    site = Site(
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
