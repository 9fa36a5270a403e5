"""What the SHACL compiler needs to know about terms: paths, literals and datatypes.

- `sparql_path`: a SHACL property path as a SPARQL property path (every SHACL path has one).
- `well_formed`: a SPARQL expression that is true when `?value`'s lexical form is in its
  datatype's lexical space, for the datatypes the compiler checks; the others it refuses.
- `rewritten`: the literals that Oxigraph would not store as written. Oxigraph keeps values
  in a canonical form: `"01"^^xsd:integer` becomes `"1"`, `"1"^^xsd:byte` becomes
  `"1"^^xsd:integer`, `xsd:dateTimeStamp` becomes `xsd:dateTime`, `+00:00` becomes `Z`.
  A check run on Oxigraph sees the rewritten literal, so such a literal cannot be checked as
  written: the compiler refuses it in a shape, and `validate_quads(..., exact=True)` in data.
- `numeric_holds`: SPARQL's order on two numeric literals, computed in Python, for the
  numbers Oxigraph cannot compare (integers beyond 64 bits, decimals beyond 18 digits after
  the point): Oxigraph answers an error there, which a check would read as a violation.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable, Iterable
from decimal import Decimal, InvalidOperation
from typing import overload

import pyoxigraph as ox
import rdflib
from rdflib.collection import Collection
from rdflib.namespace import RDF, SH

XSD = "http://www.w3.org/2001/XMLSchema#"
_RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"


class PathError(ValueError):
    """A node that is not a well-formed SHACL path."""


def sparql_path(shapes: rdflib.Graph, path: rdflib.term.Node) -> str:
    """The SPARQL property path of a SHACL path (SHACL 2.3.1)."""
    if isinstance(path, rdflib.URIRef):
        return path.n3()
    if not isinstance(path, rdflib.BNode):
        raise PathError(f"{path!r} is not a path")
    if shapes.value(path, RDF.first) is not None:
        members = list(Collection(shapes, path))
        if len(members) < 2:
            raise PathError("a sequence path needs at least two members")
        return "(" + "/".join(sparql_path(shapes, m) for m in members) + ")"
    kinds: dict[rdflib.term.Node, str | None] = {
        SH.alternativePath: None,
        SH.inversePath: "^",
        SH.zeroOrMorePath: "*",
        SH.oneOrMorePath: "+",
        SH.zeroOrOnePath: "?",
    }
    found = [(p, o) for p, o in shapes.predicate_objects(path) if p in kinds]
    if len(found) != 1 or len(set(shapes.predicates(path))) != 1:
        raise PathError("a path node needs exactly one of sh:alternativePath, sh:inversePath, ...")
    kind, inner = found[0]
    if kind == SH.alternativePath:
        members = list(Collection(shapes, inner))
        if len(members) < 2:
            raise PathError("an alternative path needs at least two members")
        return "(" + "|".join(sparql_path(shapes, m) for m in members) + ")"
    op = kinds[kind]
    text = sparql_path(shapes, inner)
    return f"^{text}" if op == "^" else f"({text}){op}"


# Lexical spaces (XML Schema 1.1) of the datatypes whose values Oxigraph compares as numbers
# or booleans: a regular expression is exact for these, and Oxigraph's casts are not (they
# fail beyond 64-bit integers and 18 decimal places)
_LEXICAL = {
    "integer": r"^[+-]?[0-9]+$",
    "decimal": r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$",
    "double": r"^([+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?INF|NaN)$",
    "float": r"^([+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?INF|NaN)$",
    "boolean": r"^(true|false|1|0)$",
    # string types without a value space of their own (no rewriting by Oxigraph)
    "normalizedString": r"^[^\r\n\t]*$",
    "token": r"^([^\s]+( [^\s]+)*)?$",
    "language": r"^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$",
    "hexBinary": r"^([0-9a-fA-F]{2})*$",
}
# datatypes whose lexical form Oxigraph's cast of the same name checks exactly
_CAST = (
    "date",
    "dateTime",
    "time",
    "duration",
    "dayTimeDuration",
    "yearMonthDuration",
    "gYear",
    "gYearMonth",
    "gMonth",
    "gMonthDay",
    "gDay",
)
# datatypes Oxigraph stores as another (xsd:byte as xsd:integer, ...): no stored value has them
REWRITTEN_DATATYPES = frozenset(
    XSD + t
    for t in (
        "byte",
        "short",
        "int",
        "long",
        "unsignedByte",
        "unsignedShort",
        "unsignedInt",
        "unsignedLong",
        "positiveInteger",
        "nonNegativeInteger",
        "negativeInteger",
        "nonPositiveInteger",
        "dateTimeStamp",
    )
)
NUMERIC = frozenset(XSD + t for t in ("integer", "decimal", "double", "float"))


def well_formed(datatype: str) -> str | None:
    """A SPARQL expression true when `?value` (a literal of `datatype`) is well-formed;
    "true" where every lexical form is (strings, datatypes outside XSD and RDF); None
    where this compiler cannot tell (the caller refuses the shape)."""
    if datatype in (XSD + "string", XSD + "anyURI"):
        return "true"
    if datatype == _RDF + "langString":
        return 'lang(?value) != ""'
    if datatype.startswith(XSD):
        name = datatype[len(XSD) :]
        if name in _LEXICAL:
            return f"REGEX(STR(?value), {rdflib.Literal(_LEXICAL[name]).n3()})"
        if name in _CAST:
            return f"isLiteral(<{datatype}>(STR(?value)))"
        return None
    if datatype.startswith(_RDF):
        return None  # rdf:XMLLiteral, rdf:HTML, rdf:JSON: well-formedness not checked here
    return "true"


@overload
def to_oxigraph(term: rdflib.Literal) -> ox.Literal: ...
@overload
def to_oxigraph(term: rdflib.term.Node) -> ox.NamedNode | ox.BlankNode | ox.Literal: ...
def to_oxigraph(term: rdflib.term.Node) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    if isinstance(term, rdflib.URIRef):
        return ox.NamedNode(str(term))
    if isinstance(term, rdflib.BNode):
        return ox.BlankNode(str(term))
    if isinstance(term, rdflib.Literal):
        if term.language:
            return ox.Literal(str(term), language=term.language)
        return ox.Literal(str(term), datatype=ox.NamedNode(str(term.datatype or XSD + "string")))
    raise TypeError(f"not an RDF term: {term!r}")


_KEPT = frozenset((XSD + "string", _RDF + "langString"))


def rewritten(literals: Iterable[ox.Literal]) -> dict[ox.Literal, ox.Literal]:
    """The literals among `literals` that Oxigraph would store as another term, each with
    the term it would store."""
    candidates = list(
        dict.fromkeys(
            lit
            for lit in literals
            if lit.datatype.value not in _KEPT
            or (lit.language or "") != (lit.language or "").lower()
        )
    )
    if not candidates:
        return {}
    probe = ox.Store()
    predicate = ox.NamedNode("urn:finkg:probe")
    probe.extend(
        ox.Quad(ox.NamedNode(f"urn:finkg:probe:{i}"), predicate, lit)
        for i, lit in enumerate(candidates)
    )
    changed = {}
    for q in probe:
        original = candidates[int(q.subject.value.rsplit(":", 1)[1])]
        if q.object != original:
            changed[original] = q.object
    return changed


def _number(literal: object) -> Decimal | float | None:
    """A numeric literal's value as SPARQL compares it (None: not a well-formed number)."""
    if not isinstance(literal, ox.Literal) or literal.datatype.value not in NUMERIC:
        return None
    kind, text = literal.datatype.value[len(XSD) :], literal.value
    if re.fullmatch(_LEXICAL[kind][1:-1], text) is None:
        return None
    if kind in ("double", "float"):
        value = float(text.replace("INF", "inf").replace("NaN", "nan"))
        if kind == "float":  # a float's value is the nearest single-precision number
            try:
                value = struct.unpack("f", struct.pack("f", value))[0]
            except OverflowError:
                value = math.copysign(math.inf, value)
        return value
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


_OPS: dict[str, Callable[[Decimal | float, Decimal | float], bool]] = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def numeric_holds(left: object, op: str, right: object) -> bool | None:
    """`left op right` for two numeric literals as SPARQL orders them (a double on either
    side makes both doubles; NaN compares false); None when either is not a number."""
    a, b = _number(left), _number(right)
    if a is None or b is None:
        return None
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
    return _OPS[op](a, b)


# XPath's classes written as Rust regex classes (Oxigraph runs Rust's regex crate, whose
# \s, \w and "." differ from XPath's: "_" is a word character there, "\f" a space, "\r"
# matched by "."); nested classes keep them valid inside a character class too
_XPATH_CLASSES = {
    "s": r"[ \t\n\r]",
    "S": r"[^ \t\n\r]",
    "w": r"[^\p{P}\p{Z}\p{C}]",
    "W": r"[\p{P}\p{Z}\p{C}]",
}
_ESCAPES = set("nrt\\|.?*+(){}-[]^$dD")


def xpath_regex(pattern: str, flags: str) -> tuple[str, str]:
    """An XPath regular expression (sh:pattern, sh:flags) as one Oxigraph's REGEX reads the
    same way; ValueError names what cannot be translated."""
    bad = sorted(set(flags) - set("smixq"))
    if bad:
        raise ValueError(f"the flag {bad[0]!r}")
    if "q" in flags:  # the pattern is a plain string: Oxigraph implements q itself
        return pattern, flags
    out: list[str] = []
    depth, i, verbose = 0, 0, "x" in flags
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            e = pattern[i + 1 : i + 2]
            if e in _XPATH_CLASSES:
                out.append(_XPATH_CLASSES[e])
            elif e in ("p", "P"):
                end = pattern.find("}", i)
                if pattern[i + 2 : i + 3] != "{" or end < 0:
                    raise ValueError(f"the escape \\{e} without {{...}}")
                out.append(pattern[i : end + 1])
                i = end + 1
                continue
            elif e in _ESCAPES:
                out.append(pattern[i : i + 2])
            else:
                raise ValueError(f"the escape \\{e} (not XPath, or read otherwise by Oxigraph)")
            i += 2
            continue
        if c == "[":
            if depth:
                raise ValueError("character class subtraction")
            depth = 1
        elif c == "]" and depth:
            depth = 0
        elif c == "(" and pattern[i + 1 : i + 2] == "?":
            raise ValueError("(? groups")
        elif c == "." and not depth and "s" not in flags:
            out.append(r"[^\n\r]")
            i += 1
            continue
        elif verbose and not depth and c in " \t\n\r":
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out), flags.replace("x", "")
