"""finkg's SHACL shapes as SPARQL: one SELECT per constraint, run by Oxigraph.

pyshacl validates about 7,000 triples a second here; ingest must check hundreds of
thousands. This module reads the shapes graph and writes, for every constraint of every
property shape, a query that returns exactly the (focus node, value) pairs that violate it,
following the SHACL Core definitions. Targets are `sh:targetClass`, widened to the class's
subclasses from finkg.ttl at compile time, so the data needs no ontology beside it.

It supports the constraints finkg's shapes use (cardinality, datatype with well-formedness,
node kind, class, in, pattern, lengths, value ranges, hasValue, lessThan/lessThanOrEquals on
predicate paths) and refuses, when compiling, any shape that needs more; pyshacl stays the
reference, and a test checks both engines agree on every fixture.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import rdflib
from rdflib.collection import Collection
from rdflib.namespace import RDF, RDFS, SH, XSD

from finkg.errors import FinkgError

# xsd datatypes whose well-formedness a SPARQL cast can check
_CASTABLE = {
    str(XSD[t])
    for t in ("string", "integer", "decimal", "double", "float", "boolean", "date", "dateTime")
}
_RANGE = {SH.minInclusive: ">=", SH.minExclusive: ">", SH.maxInclusive: "<=", SH.maxExclusive: "<"}
_SUPPORTED_PROPERTY = {
    SH.path,
    SH.minCount,
    SH.maxCount,
    SH.datatype,
    SH.nodeKind,
    SH["class"],
    SH["in"],
    SH.pattern,
    SH.flags,
    SH.minLength,
    SH.maxLength,
    SH.hasValue,
    SH.lessThan,
    SH.lessThanOrEquals,
    SH.message,
    SH.name,
    SH.description,
    SH.severity,
    SH.deactivated,
    *_RANGE,
    RDF.type,
    RDFS.label,
    RDFS.comment,
}
_SUPPORTED_NODE = {
    SH.targetClass,
    SH.property,
    SH.sparql,
    SH.message,
    SH.severity,
    SH.deactivated,
    SH.name,
    SH.description,
    RDF.type,
    RDFS.label,
    RDFS.comment,
}


class ShapeCompileError(FinkgError):
    """A shape uses SHACL this compiler does not implement."""


@dataclass(frozen=True)
class Check:
    """One constraint as a query: its SELECT returns ?focus (and ?value where there is one).

    `arg` is the constraint's parameter, for engines that evaluate it without the query
    (`screen.py`): a count or length (int) for Min/MaxCount and Min/MaxLength; the datatype
    IRI (Datatype); the sh:nodeKind IRI (NodeKind); the member class IRIs (Class); the
    allowed terms as N-Triples (In); (pattern, flags or None) (Pattern); (operator,
    lexical form, datatype IRI) of the bound (Min/MaxIn/Exclusive); the value as N-Triples
    (HasValue); the other path's IRI (LessThan, LessThanOrEquals); None (SPARQL)."""

    shape: str  # the property shape's IRI (or a description of a blank one)
    classes: frozenset[str]  # the target classes and their subclasses (IRIs)
    path: str
    component: str  # the SHACL constraint component, e.g. "MinCount"
    message: str
    query: str
    arg: object = None


def _term(node: rdflib.term.Node) -> str:
    return node.n3()


def _message(shapes: rdflib.Graph, shape: rdflib.term.Node, default: str) -> str:
    text = shapes.value(shape, SH.message)
    return str(text) if text is not None else default


def _subclasses(ontology: rdflib.Graph, cls: rdflib.term.Node) -> list[str]:
    found, todo = {cls}, [cls]
    while todo:
        for sub in ontology.subjects(RDFS.subClassOf, todo.pop()):
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    return sorted(_term(c) for c in found)


def compile_shapes(shapes: rdflib.Graph, ontology: rdflib.Graph) -> list[Check]:
    """Every constraint of every active node shape with class targets, as a Check."""
    checks: list[Check] = []
    for node_shape in sorted(set(shapes.subjects(SH.targetClass, None)), key=str):
        if shapes.value(node_shape, SH.deactivated) == rdflib.Literal(True):
            continue
        _refuse_unknown(shapes, node_shape, _SUPPORTED_NODE)
        classes = sorted(
            {
                c
                for t in shapes.objects(node_shape, SH.targetClass)
                for c in _subclasses(ontology, t)
            }
        )
        focus = f"VALUES ?class {{ {' '.join(classes)} }} ?focus a ?class ."
        targets = frozenset(c.strip("<>") for c in classes)
        for prop in sorted(shapes.objects(node_shape, SH.property), key=str):
            if shapes.value(prop, SH.deactivated) == rdflib.Literal(True):
                continue
            _refuse_unknown(shapes, prop, _SUPPORTED_PROPERTY)
            checks.extend(_property_checks(shapes, ontology, prop, focus, targets))
        for constraint in sorted(shapes.objects(node_shape, SH.sparql), key=str):
            checks.append(_sparql_check(shapes, node_shape, constraint, focus, targets))
    return checks


def _sparql_check(
    shapes: rdflib.Graph,
    node_shape: rdflib.term.Node,
    constraint: rdflib.term.Node,
    focus: str,
    targets: frozenset[str],
) -> Check:
    """A SHACL-SPARQL constraint: its SELECT, with $this joined to the shape's targets."""
    select = shapes.value(constraint, SH.select)
    if select is None:
        raise ShapeCompileError(f"SPARQL constraint {constraint} has no sh:select")
    prologue = "".join(
        f"PREFIX {shapes.value(d, SH.prefix)}: <{shapes.value(d, SH.namespace)}>\n"
        for p in shapes.objects(constraint, SH.prefixes)
        for d in shapes.objects(p, SH.declare)
    )
    inner = str(select).replace("$this", "?focus")
    query = f"{prologue}SELECT DISTINCT ?focus ?value WHERE {{ {focus} {{ {inner} }} }}"
    return Check(
        str(node_shape),
        targets,
        "",
        "SPARQL",
        _message(shapes, constraint, "SPARQL constraint violated"),
        query,
    )


def _refuse_unknown(shapes: rdflib.Graph, shape: rdflib.term.Node, allowed: set) -> None:
    for p in set(shapes.predicates(shape, None)):
        if p not in allowed:
            raise ShapeCompileError(
                f"shape {shape} uses {p}, which finkg's SPARQL validator does not implement; "
                "express it with supported constraints or validate with engine='pyshacl'"
            )


def _property_checks(
    shapes: rdflib.Graph,
    ontology: rdflib.Graph,
    prop: rdflib.term.Node,
    focus: str,
    targets: frozenset[str],
) -> Iterator[Check]:
    path = shapes.value(prop, SH.path)
    if not isinstance(path, rdflib.URIRef):
        raise ShapeCompileError(f"shape {prop}: only predicate paths are supported, got {path}")
    name = str(prop) if isinstance(prop, rdflib.URIRef) else f"[shape on {path}]"
    p = _term(path)

    def check(
        component: str,
        default: str,
        where: str,
        select: str = "?focus ?value",
        tail: str = "",
        *,
        arg: object,
    ) -> Check:
        query = f"SELECT DISTINCT {select} WHERE {{ {focus} {where} }} {tail}".rstrip()
        message = _message(shapes, prop, default)
        return Check(name, targets, str(path), component, message, query, arg)

    def values(condition: str, component: str, default: str, *, arg: object) -> Check:
        return check(component, default, f"?focus {p} ?value . FILTER ({condition})", arg=arg)

    # Counts of 1 (nearly all) as NOT EXISTS and a self-join: 2-3x faster than GROUP BY.
    for count in shapes.objects(prop, SH.minCount):
        n = int(count)
        if n == 1:
            yield check(
                "MinCount", "no value", f"FILTER NOT EXISTS {{ ?focus {p} ?v }}", "?focus", arg=n
            )
        elif n > 1:
            yield check(
                "MinCount",
                f"fewer than {n} values",
                f"OPTIONAL {{ ?focus {p} ?v }}",
                "?focus",
                f"GROUP BY ?focus HAVING (COUNT(DISTINCT ?v) < {n})",
                arg=n,
            )
    for count in shapes.objects(prop, SH.maxCount):
        n = int(count)
        if n == 1:
            yield check(
                "MaxCount",
                "more than one value",
                f"?focus {p} ?v . ?focus {p} ?w . FILTER (!sameTerm(?v, ?w))",
                "?focus",
                arg=n,
            )
        else:
            yield check(
                "MaxCount",
                f"more than {n} values",
                f"?focus {p} ?v .",
                "?focus",
                f"GROUP BY ?focus HAVING (COUNT(DISTINCT ?v) > {n})",
                arg=n,
            )
    for dt in shapes.objects(prop, SH.datatype):
        d = _term(dt)
        cast = " || !BOUND(?cast)" if str(dt) in _CASTABLE else ""
        bind = f"BIND ({d}(STR(?value)) AS ?cast) " if str(dt) in _CASTABLE else ""
        yield check(
            "Datatype",
            f"value is not a well-formed {dt}",
            f"?focus {p} ?value . {bind}"
            f"FILTER (!isLiteral(?value) || datatype(?value) != {d}{cast})",
            arg=str(dt),
        )
    for kind in shapes.objects(prop, SH.nodeKind):
        test = {
            SH.IRI: "isIRI(?value)",
            SH.BlankNode: "isBlank(?value)",
            SH.Literal: "isLiteral(?value)",
            SH.BlankNodeOrIRI: "!isLiteral(?value)",
            SH.IRIOrLiteral: "!isBlank(?value)",
            SH.BlankNodeOrLiteral: "!isIRI(?value)",
        }
        yield values(f"!({test[kind]})", "NodeKind", f"value is not a {kind}", arg=str(kind))
    for cls in shapes.objects(prop, SH["class"]):
        classes = _subclasses(ontology, cls)
        members = " ".join(classes)
        yield check(
            "Class",
            f"value is not a {cls}",
            f"?focus {p} ?value . FILTER NOT EXISTS {{ VALUES ?vclass {{ {members} }} "
            "?value a ?vclass }",
            arg=frozenset(c.strip("<>") for c in classes),
        )
    for head in shapes.objects(prop, SH["in"]):
        terms = [_term(x) for x in Collection(shapes, head)]
        allowed = " ".join(terms)
        yield check(
            "In",
            "value is not one of the allowed values",
            f"?focus {p} ?value . FILTER NOT EXISTS {{ VALUES ?allowed {{ {allowed} }} "
            "FILTER (sameTerm(?value, ?allowed)) }",
            arg=frozenset(terms),
        )
    for pattern in shapes.objects(prop, SH.pattern):
        flags = shapes.value(prop, SH.flags)
        args = _term(rdflib.Literal(str(pattern))) + (
            f", {_term(rdflib.Literal(str(flags)))}" if flags is not None else ""
        )
        yield values(
            f"isBlank(?value) || !REGEX(STR(?value), {args})",
            "Pattern",
            f"value does not match {pattern}",
            arg=(str(pattern), None if flags is None else str(flags)),
        )
    for length, op, component in (
        (SH.minLength, "<", "MinLength"),
        (SH.maxLength, ">", "MaxLength"),
    ):
        for n in shapes.objects(prop, length):
            yield values(
                f"isBlank(?value) || STRLEN(STR(?value)) {op} {int(n)}",
                component,
                f"string length {op} {int(n)}",
                arg=int(n),
            )
    for bound, op in _RANGE.items():
        for limit in shapes.objects(prop, bound):
            yield values(
                f"!COALESCE(?value {op} {_term(limit)}, false)",
                bound.split("#")[-1][0].upper() + bound.split("#")[-1][1:],
                f"value is not {op} {limit}",
                arg=(op, str(limit), str(limit.datatype or XSD.string)),
            )
    for value in shapes.objects(prop, SH.hasValue):
        yield check(
            "HasValue",
            f"does not have the value {value}",
            f"FILTER NOT EXISTS {{ ?focus {p} {_term(value)} }}",
            "?focus",
            arg=_term(value),
        )
    for other, op, component in (
        (SH.lessThan, "<", "LessThan"),
        (SH.lessThanOrEquals, "<=", "LessThanOrEquals"),
    ):
        for p2 in shapes.objects(prop, other):
            yield check(
                component,
                f"value is not {op} the value of {p2}",
                f"?focus {p} ?value . ?focus {_term(p2)} ?other . "
                f"FILTER (!COALESCE(?value {op} ?other, false))",
                arg=str(p2),
            )


@cache
def finkg_checks() -> tuple[Check, ...]:
    """The compiled checks of finkg's packaged shapes (built once per process)."""
    from finkg.shapes.validate import ontology_graph, shapes_graph

    return tuple(compile_shapes(shapes_graph(), ontology_graph()))
