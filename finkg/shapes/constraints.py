"""The SHACL Core constraints as SPARQL: for one shape at its focus nodes, a SELECT per
constraint that returns the focus nodes (and value nodes) violating it (SHACL 4).

The value nodes of a property shape are `?focus PATH ?value`; a node shape's value node is
its focus node (`site.py` writes the patterns and the check). Every test is written so that
an expression error counts as a violation (`!COALESCE(test, false)`), as SHACL reads "does
not return true", never as a pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pyoxigraph as ox
import rdflib
from rdflib.collection import Collection
from rdflib.namespace import SH, XSD

from finkg.shapes.checks import Check, subclasses
from finkg.shapes.site import Refuse, Site
from finkg.shapes.terms import REWRITTEN_DATATYPES, rewritten, to_oxigraph, well_formed, xpath_regex

_RANGE = {SH.minInclusive: ">=", SH.minExclusive: ">", SH.maxInclusive: "<=", SH.maxExclusive: "<"}
# parameters of node and property shapes, and of property shapes only
NODE = {
    SH["class"],
    SH.datatype,
    SH.nodeKind,
    *_RANGE,
    SH.minLength,
    SH.maxLength,
    SH.pattern,
    SH.flags,
    SH.languageIn,
    SH["in"],
    SH.hasValue,
    SH.equals,
    SH.disjoint,
    SH.closed,
    SH.ignoredProperties,
    SH.property,
    SH.sparql,
}
PROPERTY = {SH.minCount, SH.maxCount, SH.uniqueLang, SH.lessThan, SH.lessThanOrEquals}
_KINDS = {
    SH.IRI: "isIRI(?value)",
    SH.BlankNode: "isBlank(?value)",
    SH.Literal: "isLiteral(?value)",
    SH.BlankNodeOrIRI: "!isLiteral(?value)",
    SH.IRIOrLiteral: "!isBlank(?value)",
    SH.BlankNodeOrLiteral: "!isIRI(?value)",
}
_PREBOUND = re.compile(r"[?$](PATH|currentShape|shapesGraph)\b")


def refuse_rewritten(
    shape: rdflib.term.Node, parameter: str, terms: list[Any], refuse: Refuse
) -> None:
    """Refuse literals in a shape that Oxigraph would store as another term."""
    literals = [to_oxigraph(t) for t in terms if isinstance(t, rdflib.Literal)]
    for lit, stored in rewritten(literals).items():
        refuse(shape, f"the literal {lit} in {parameter} (Oxigraph stores it as {stored})")


def checks(site: Site) -> Iterator[Check]:
    """Every constraint of the shape at `site`."""
    predicates = set(site.shapes.predicates(site.shape))
    if site.path is None:
        for p in sorted(PROPERTY & predicates):
            site.refuse(site.shape, f"{p.n3(site.shapes.namespace_manager)} on a node shape")
    elif SH.closed in predicates:
        site.refuse(site.shape, "sh:closed on a property shape")
    yield from _counts(site)
    yield from _values(site)
    yield from _ranges(site)
    yield from _pairs(site)
    yield from _closed(site)
    for constraint in sorted(site.objects(SH.sparql), key=str):
        if not is_true(site.shapes.value(constraint, SH.deactivated)):
            yield _sparql(site, constraint)


def _counts(site: Site) -> Iterator[Check]:
    p = site.path
    # Counts of 1 (nearly all) as NOT EXISTS and a self-join: 2-3x faster than GROUP BY.
    for n in (int(c) for c in site.objects(SH.minCount)):
        if n == 1:
            yield site.check(
                "MinCount",
                "no value",
                f"FILTER NOT EXISTS {{ ?focus {p} ?v }}",
                "?focus",
                arg=n,
                shared=site.shared("!BOUND(?value)", with_value=False),
            )
        elif n > 1:
            where, tail = (
                f"OPTIONAL {{ ?focus {p} ?v }}",
                f"GROUP BY ?focus HAVING (COUNT(DISTINCT ?v) < {n})",
            )
            yield site.check("MinCount", f"fewer than {n} values", where, "?focus", tail, arg=n)
    for n in (int(c) for c in site.objects(SH.maxCount)):
        if n == 1:
            where = f"?focus {p} ?v . ?focus {p} ?w . FILTER (!sameTerm(?v, ?w))"
            flag = site.shared("BOUND(?another)", with_value=False, another=True)
            yield site.check("MaxCount", "more than one value", where, "?focus", arg=n, shared=flag)
        else:
            tail = f"GROUP BY ?focus HAVING (COUNT(DISTINCT ?v) > {n})"
            yield site.check(
                "MaxCount", f"more than {n} values", f"?focus {p} ?v .", "?focus", tail, arg=n
            )
    if _true(site, SH.uniqueLang):
        where = (
            f'?focus {p} ?v . ?focus {p} ?w . FILTER (!sameTerm(?v, ?w) && lang(?v) != "" '
            "&& LCASE(lang(?v)) = LCASE(lang(?w)))"
        )
        yield site.check("UniqueLang", "a language is used more than once", where, "?focus")


def _values(site: Site) -> Iterator[Check]:
    """The constraints that test each value node alone."""
    for dt in site.objects(SH.datatype):
        _iri(site, dt, "sh:datatype")
        if str(dt) in REWRITTEN_DATATYPES:
            site.refuse(
                site.shape, f"sh:datatype {dt.n3()} (Oxigraph stores such values as another type)"
            )
        test = well_formed(str(dt))
        if test is None:
            site.refuse(site.shape, f"sh:datatype {dt.n3()} (a lexical space it does not check)")
        yield site.test(
            f"isLiteral(?value) && datatype(?value) = {dt.n3()} && {test}",
            "Datatype",
            f"value is not a well-formed {dt}",
            arg=str(dt),
        )
    for kind in site.objects(SH.nodeKind):
        if kind not in _KINDS:
            site.refuse(site.shape, f"sh:nodeKind {kind.n3()}")
        yield site.test(_KINDS[kind], "NodeKind", f"value is not a {kind}", arg=str(kind))
    for cls in site.objects(SH["class"]):
        _iri(site, cls, "sh:class")
        members = subclasses(site.ontology, cls)
        member = f"{{ VALUES ?vclass {{ {' '.join(members)} }} ?value a ?vclass }}"
        where = f"{site.values()} FILTER NOT EXISTS {member}"
        arg = frozenset(c.strip("<>") for c in members)
        flag = site.shared(f"BOUND(?value) && NOT EXISTS {member}")
        yield site.check("Class", f"value is not a {cls}", where, arg=arg, shared=flag)
    for head in site.objects(SH["in"]):
        items = list(Collection(site.shapes, head))
        _refuse_blank(site, "sh:in", items)
        terms = [m.n3() for m in items]
        allowed = (
            f"{{ VALUES ?allowed {{ {' '.join(terms)} }} FILTER (sameTerm(?value, ?allowed)) }}"
        )
        where = f"{site.values()} FILTER NOT EXISTS {allowed}"
        yield site.check(
            "In",
            "value is not one of the allowed values",
            where,
            arg=frozenset(terms),
            shared=site.shared(f"BOUND(?value) && NOT EXISTS {allowed}"),
        )
    for value in site.objects(SH.hasValue):
        _refuse_blank(site, "sh:hasValue", [value])
        where = (
            f"FILTER NOT EXISTS {{ ?focus {site.path} {value.n3()} }}"
            if site.path
            else f"FILTER (!sameTerm(?focus, {value.n3()}))"
        )
        yield site.check(
            "HasValue", f"does not have the value {value}", where, "?focus", arg=value.n3()
        )
    yield from _strings(site)


def _refuse_blank(site: Site, parameter: str, terms: list[Any]) -> None:
    if any(isinstance(t, rdflib.BNode) for t in terms):
        site.refuse(site.shape, f"a blank node in {parameter}")
    refuse_rewritten(site.shape, parameter, terms, site.refuse)


def _strings(site: Site) -> Iterator[Check]:
    flags = site.shapes.value(site.shape, SH.flags)
    for pattern in site.objects(SH.pattern):
        try:
            translated, rust_flags = xpath_regex(str(pattern), str(flags or ""))
        except ValueError as e:
            site.refuse(site.shape, f"an sh:pattern with {e}")
        args = rdflib.Literal(translated).n3() + (
            f", {rdflib.Literal(rust_flags).n3()}" if rust_flags else ""
        )
        probe = f'SELECT (COALESCE(REGEX("", {args}), "error") AS ?r) WHERE {{}}'
        solutions = ox.Store().query(probe)
        assert isinstance(solutions, ox.QuerySolutions)  # a SELECT's
        if next(iter(solutions))["r"].value == "error":
            site.refuse(site.shape, f"the sh:pattern {pattern.n3()} (Oxigraph cannot compile it)")
        yield site.test(
            f"!isBlank(?value) && REGEX(STR(?value), {args})",
            "Pattern",
            f"value does not match {pattern}",
            arg=(str(pattern), None if flags is None else str(flags)),
        )
    for length, op, component in (
        (SH.minLength, ">=", "MinLength"),
        (SH.maxLength, "<=", "MaxLength"),
    ):
        for n in (int(x) for x in site.objects(length)):
            yield site.test(
                f"!isBlank(?value) && STRLEN(STR(?value)) {op} {n}",
                component,
                f"string length is not {op} {n}",
                arg=n,
            )
    for head in site.objects(SH.languageIn):
        tags = [rdflib.Literal(str(t)).n3() for t in Collection(site.shapes, head)]
        test = " || ".join(f"langMatches(lang(?value), {t})" for t in tags) or "false"
        yield site.test(f"isLiteral(?value) && ({test})", "LanguageIn", "language not allowed")


def _ranges(site: Site) -> Iterator[Check]:
    """Value ranges: ?cmp is unbound where Oxigraph could not compare, and Python decides
    numbers there (`validate.py`)."""
    for bound, op in _RANGE.items():
        for limit in site.objects(bound):
            where = (
                f"{site.values()} BIND ((?value {op} {limit.n3()}) AS ?cmp) "
                "FILTER (!COALESCE(?cmp, false))"
            )
            name = str(bound).rsplit("#", 1)[-1]
            yield site.check(
                name[0].upper() + name[1:],
                f"value is not {op} {limit}",
                where,
                "?focus ?value ?cmp",
                arg=(op, str(limit), str(getattr(limit, "datatype", None) or XSD.string)),
            )


def _pairs(site: Site) -> Iterator[Check]:
    """Constraints between the values of the path and of another property."""
    for other, op, component in (
        (SH.lessThan, "<", "LessThan"),
        (SH.lessThanOrEquals, "<=", "LessThanOrEquals"),
    ):
        for p2 in site.objects(other):
            _iri(site, p2, component)
            where = (
                f"{site.values()} ?focus {p2.n3()} ?other . BIND ((?value {op} ?other) AS ?cmp) "
                "FILTER (!COALESCE(?cmp, false))"
            )
            yield site.check(
                component,
                f"value is not {op} the value of {p2}",
                where,
                "?focus ?value ?other ?cmp",
                arg=str(p2),
            )
    for p2 in site.objects(SH.equals):  # both differences: a value missing on either side
        _iri(site, p2, "sh:equals")
        message = f"the values differ from those of {p2}"
        where = f"{site.values()} FILTER NOT EXISTS {{ ?focus {p2.n3()} ?value }}"
        yield site.check("Equals", message, where)
        where = f"?focus {p2.n3()} ?value . FILTER NOT EXISTS {{ {site.holds('?value')} }}"
        yield site.check("Equals", message, where)
    for p2 in site.objects(SH.disjoint):
        _iri(site, p2, "sh:disjoint")
        where = f"{site.values()} ?focus {p2.n3()} ?value ."
        yield site.check("Disjoint", f"a value is also a value of {p2}", where)


def is_true(node: object) -> bool:
    """Whether `node` is the literal true (only "true"^^xsd:boolean: SHACL names no other)."""
    return isinstance(node, rdflib.Literal) and str(node) == "true" and node.datatype == XSD.boolean


def _true(site: Site, parameter: rdflib.URIRef) -> bool:
    return any(is_true(v) for v in site.objects(parameter))


def _iri(site: Site, node: object, parameter: str) -> None:
    """Refuse a parameter value that must be an IRI and is not."""
    if not isinstance(node, rdflib.URIRef):
        site.refuse(site.shape, f"{parameter} with a value that is not an IRI")


def _closed(site: Site) -> Iterator[Check]:
    if not _true(site, SH.closed):
        return
    allowed = {p for prop in site.objects(SH.property) for p in site.shapes.objects(prop, SH.path)}
    for head in site.objects(SH.ignoredProperties):
        allowed |= set(Collection(site.shapes, head))
    iris = " , ".join(sorted(p.n3() for p in allowed if isinstance(p, rdflib.URIRef)))
    where = f"?focus ?path ?value . FILTER (?path NOT IN ({iris}))"
    yield site.check(
        "Closed", "a property the closed shape does not allow", where, "?focus ?path ?value"
    )


def _sparql(site: Site, constraint: rdflib.term.Node) -> Check:
    """A SHACL-SPARQL constraint of a node shape: its SELECT, with $this joined to the
    shape's focus nodes."""
    select = site.shapes.value(constraint, SH.select)
    if site.path is not None:
        site.refuse(site.shape, "sh:sparql on a property shape")
    if select is None:
        site.refuse(site.shape, f"the SPARQL constraint {constraint} without sh:select")
    if _PREBOUND.search(str(select)):
        site.refuse(site.shape, "a SPARQL constraint using $PATH, $currentShape or $shapesGraph")
    prologue = "".join(
        f"PREFIX {site.shapes.value(d, SH.prefix)}: <{site.shapes.value(d, SH.namespace)}>\n"
        for p in site.shapes.objects(constraint, SH.prefixes)
        for d in site.shapes.objects(p, SH.declare)
    )
    inner = re.sub(r"[?$]this\b", "?focus", str(select))
    query = (
        f"{prologue}SELECT DISTINCT ?focus ?value WHERE {{ {site.focus.pattern()} {{ {inner} }} }}"
    )
    message = site.shapes.value(constraint, SH.message)
    return Check(
        site.name,
        site.focus.class_iris,
        "",
        "SPARQL",
        str(message) if message is not None else "SPARQL constraint violated",
        query,
        other_targets=site.focus.other_targets,
    )
