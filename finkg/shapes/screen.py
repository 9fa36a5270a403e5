"""A quick pass in Python that says when statements surely conform to finkg's shapes.

Every ingest batch is checked against the shapes before it commits. The compiled SPARQL
checks (`compile.py`) load the batch into a scratch store and run one query per
constraint: about 95 µs of CPU a news item, a third of its ingest. Nearly every batch
conforms, so this pass
first evaluates the same constraints (each `Check`'s `arg`) over the statements as they
are, once over the batch, and answers True only where it is sure no constraint is
broken. Wherever it cannot be sure (a lexical form it does not know, values it cannot
compare, a pattern or a text where Python's regular expressions could differ from
SPARQL's, a SHACL-SPARQL constraint), it answers False, as it does for a broken one.
False sends the batch to the SPARQL checks, so every report still comes from them.

It follows `compile.py`'s SPARQL: the union of the statements' graphs is the data,
targets are the checks' classes (subclasses included), and a constraint holds where its
query would return no row; the subjects of a predicate a check targets
(sh:targetSubjectsOf: revisions) are checked as class targets are. Tests hold it to that:
every invalid shape fixture is held back at the shape it breaks, the valid fixture passes
(but for the nodes a SHACL-SPARQL constraint targets), and the lexical forms, comparisons
and patterns it passes are checked against Oxigraph's on generated literals.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from functools import cache
from typing import Any, Protocol

from pyoxigraph import BlankNode, Literal, NamedNode

from finkg.shapes.castable import decimal_value, integer_value
from finkg.shapes.checks import Check
from finkg.shapes.validate import finkg_checks

Term = NamedNode | BlankNode | Literal
Subject = NamedNode | BlankNode
Statement = tuple[Subject, NamedNode, Term]
Types = dict[Subject, set[str]]  # the classes (IRIs) each subject is stated to have
# a literal's value where SPARQL orders it as Python does (`_ordered`)
Ordered = Decimal | float | dt.datetime | dt.date | str

_RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
_XSD = "http://www.w3.org/2001/XMLSchema#"
_SH = "http://www.w3.org/ns/shacl#"
_OFFSET = r"(Z|[+-](?:0[0-9]|1[0-4]):[0-5][0-9])?"
_DOUBLE = re.compile(r"-?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|-?INF|NaN")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})" + _OFFSET)
_DATE_TIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])(\.[0-9]{1,6})?"
    + _OFFSET
)


def surely_conforms(statements: Iterable[Statement]) -> bool:
    """True when no shape constraint can be broken by `statements` (the union of their
    graphs); False when one is broken or this pass cannot tell (see the module docstring)."""
    return next(doubts(statements), None) is None


def doubts(statements: Iterable[Statement]) -> Iterator[tuple[Subject, Check]]:
    """The (focus node, check) pairs this pass cannot pass: broken, or beyond it."""
    values: dict[Subject, dict[str, list[Term]]] = {}
    types: Types = {}
    last: Subject | None = None
    props: dict[str, list[Term]] = {}
    for s, p, o in statements:
        if s is not last:  # a loader's statements come subject by subject
            last, props = s, values.setdefault(s, {})
        predicate = p.value
        if predicate in props:
            props[predicate].append(o)
        else:
            props[predicate] = [o]
        if predicate == _RDF_TYPE and isinstance(o, NamedNode):
            types.setdefault(s, set()).add(o.value)
    for subject, classes in types.items():
        props = values[subject]
        for check, holds in _checks_for(frozenset(classes)):
            if not holds(props.get(check.path, ()), props, types):
                yield subject, check
    targeted = _subject_targets()
    for subject, props in values.items():  # sh:targetSubjectsOf: the subjects of a predicate
        for predicate in props.keys() & targeted.keys():
            for check, holds in targeted[predicate]:
                if not holds(props.get(check.path, ()), props, types):
                    yield subject, check


@cache
def _subject_targets() -> dict[str, tuple[tuple[Check, Test], ...]]:
    """The checks that target the subjects of a predicate (sh:targetSubjectsOf), by it."""
    out: dict[str, list[tuple[Check, Test]]] = {}
    for check in finkg_checks():
        if check.other_targets:
            for iri in dict.fromkeys(_SUBJECTS_OF.findall(check.query)):
                out.setdefault(iri, []).append((check, _test(check)))
    return {k: tuple(v) for k, v in out.items()}


_SUBJECTS_OF = re.compile(r"\?focus <([^<>\s]+)> \[\] \.")


Test = Callable[[Sequence[Term], dict[str, list[Term]], Types], bool]


@cache
def _checks_for(classes: frozenset[str]) -> tuple[tuple[Check, Test], ...]:
    """The checks that target any of `classes`, each with its test."""
    return tuple((c, _test(c)) for c in finkg_checks() if c.classes & classes)


def _test(check: Check) -> Test:
    """The constraint of `check` as a Python test of a focus node's values: True when it
    surely holds."""
    arg, kind = check.arg, check.component
    if kind == "MinCount" and isinstance(arg, int):
        n = arg
        return lambda vs, _p, _t: len(vs) >= n and (n <= 1 or len(set(vs)) >= n)
    if kind == "MaxCount" and isinstance(arg, int):
        n = arg
        return lambda vs, _p, _t: len(vs) <= n or len(set(vs)) <= n
    if kind == "Datatype":
        well_formed = _LEXICAL.get(str(arg))
        datatype = str(arg)
        return lambda vs, _p, _t: all(
            isinstance(v, Literal)
            and v.datatype.value == datatype
            and (well_formed is None or well_formed(v.value))
            for v in vs
        )
    if kind == "NodeKind":
        allowed = _KINDS[str(arg)]
        return lambda vs, _p, _t: all(isinstance(v, allowed) for v in vs)
    if kind == "Class" and isinstance(arg, frozenset):
        members = arg
        return lambda vs, _p, types: all(
            not isinstance(v, Literal) and types.get(v, frozenset()) & members for v in vs
        )
    if kind == "In" and isinstance(arg, frozenset):
        terms = arg
        return lambda vs, _p, _t: all(str(v) in terms for v in vs)
    if kind == "HasValue":
        return lambda vs, _p, _t: any(str(v) == arg for v in vs)
    if kind == "Pattern" and isinstance(arg, tuple) and len(arg) == 2:
        matches = _pattern(*arg)
        return lambda vs, _p, _t: all(matches(v) for v in vs)
    if kind in ("MinLength", "MaxLength") and isinstance(arg, int):
        n = arg
        fits = (lambda k: k >= n) if kind == "MinLength" else (lambda k: k <= n)
        return lambda vs, _p, _t: all(
            isinstance(v, NamedNode | Literal) and fits(len(v.value)) for v in vs
        )
    bounded = ("MinInclusive", "MinExclusive", "MaxInclusive", "MaxExclusive")
    if kind in bounded and isinstance(arg, tuple) and len(arg) == 3:
        op, lexical, datatype = arg
        bound = _ordered(lexical, datatype)
        holds = _OPERATORS[op]
        return lambda vs, _p, _t: (
            bound is not None and all(_compare(holds, _value(v), bound) for v in vs)
        )
    if kind in ("LessThan", "LessThanOrEquals"):
        other, holds = str(arg), _OPERATORS["<" if kind == "LessThan" else "<="]
        return lambda vs, props, _t: all(
            _compare(holds, _value(v), _value(w)) for v in vs for w in props.get(other, ())
        )
    # SHACL-SPARQL, a component this pass does not know, or an `arg` not of its component's
    # form (compile.py writes none)
    return lambda _vs, _p, _t: False


_KINDS: dict[str, tuple[type, ...]] = {
    _SH + "IRI": (NamedNode,),
    _SH + "BlankNode": (BlankNode,),
    _SH + "Literal": (Literal,),
    _SH + "BlankNodeOrIRI": (NamedNode, BlankNode),
    _SH + "IRIOrLiteral": (NamedNode, Literal),
    _SH + "BlankNodeOrLiteral": (BlankNode, Literal),
}


class _Comparable(Protocol):
    """A value with an order (`_compare` compares only values of one family)."""

    def __lt__(self, other: Any, /) -> bool: ...
    def __le__(self, other: Any, /) -> bool: ...
    def __gt__(self, other: Any, /) -> bool: ...
    def __ge__(self, other: Any, /) -> bool: ...


_OPERATORS: dict[str, Callable[[_Comparable, _Comparable], bool]] = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def _date_time(text: str) -> dt.datetime | None:
    m = _DATE_TIME.fullmatch(text)
    if m is None:
        return None
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:  # 2021-02-30
        return None


def _date(text: str) -> dt.date | None:
    m = _DATE.fullmatch(text)
    if m is None:
        return None
    try:
        return dt.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


# lexical forms this pass accepts for the datatypes whose form the SPARQL check casts
# (compile._CASTABLE); each accepts a subset of what Oxigraph's casts accept (a test
# checks every probe it accepts against the cast). Numbers must also be in the range
# Oxigraph holds (`castable.py`): 1e25 is a decimal's lexical form, but not one it can cast.
_LEXICAL: dict[str, Callable[[str], bool] | None] = {
    _XSD + "string": None,  # every string is a well-formed xsd:string
    _XSD + "integer": lambda t: integer_value(t) is not None,
    _XSD + "decimal": lambda t: decimal_value(t) is not None,
    _XSD + "double": lambda t: _DOUBLE.fullmatch(t) is not None,
    _XSD + "float": lambda t: False,  # f32 rounding: left to SPARQL
    _XSD + "boolean": lambda t: t in ("true", "false", "1", "0"),
    _XSD + "date": lambda t: _date(t) is not None,
    _XSD + "dateTime": lambda t: _date_time(t) is not None,
}


def _ordered(lexical: str, datatype: str) -> tuple[str, Ordered] | None:
    """A literal's value as (family, Python value) where SPARQL's order on it is Python's:
    exact numbers Oxigraph holds, doubles, zoned date-times to the microsecond (Python
    keeps no finer fraction), dates without zone, strings; else None."""
    if datatype == _XSD + "integer":
        number = integer_value(lexical)
        return ("number", Decimal(number)) if number is not None else None
    if datatype == _XSD + "decimal":
        value = decimal_value(lexical)
        return ("number", value) if value is not None else None
    if datatype == _XSD + "double":
        return ("number", float(lexical)) if _DOUBLE.fullmatch(lexical) else None
    if datatype == _XSD + "dateTime":
        at = _date_time(lexical)
        return ("dateTime", at) if at is not None and at.tzinfo is not None else None
    if datatype == _XSD + "date":
        day = _date(lexical)
        return ("date", day) if day is not None and len(lexical) == 10 else None
    if datatype == _XSD + "string":
        return ("string", lexical)
    return None


def _value(term: Term) -> tuple[str, Ordered] | None:
    if not isinstance(term, Literal):
        return None
    return _ordered(term.value, term.datatype.value)


def _compare(
    holds: Callable[[Ordered, Ordered], bool],
    a: tuple[str, Ordered] | None,
    b: tuple[str, Ordered] | None,
) -> bool:
    """Whether `a holds b` surely, as SPARQL compares: False when either is unknown, the
    families differ, or NaN makes the order undefined."""
    if a is None or b is None or a[0] != b[0]:
        return False
    x, y = a[1], b[1]
    if isinstance(x, Decimal | float) and isinstance(y, Decimal | float):  # numbers
        if isinstance(x, float) or isinstance(y, float):  # decimal vs double: promoted to double
            x, y = float(x), float(y)
            if x != x or y != y:
                return False
    return holds(x, y)


# XPath's own classes, class subtraction, Python's (?...) groups, and \w, whose classes
# differ on printable ASCII (XPath's leaves out "_" and holds "$", "+", "<", ...)
_DIFFERENT = re.compile(r"\\[iIcCpPwW]|-\[|\(\?")
_FLAGS = {"i": re.IGNORECASE, "s": re.DOTALL, "m": re.MULTILINE}


def _pattern(pattern: str, flags: str | None) -> Callable[[Term], bool]:
    """The sh:pattern test for one value: True when SPARQL's REGEX surely matches. Python
    and XPath regular expressions agree on the printable ASCII texts and the patterns
    allowed here; anything else is left to SPARQL."""
    if _DIFFERENT.search(pattern) or any(f not in _FLAGS for f in flags or ""):
        return lambda _v: False
    compiled = re.compile(pattern, sum(_FLAGS[f] for f in flags or ""))

    def matches(v: Term) -> bool:
        if not isinstance(v, NamedNode | Literal):  # a blank node, a triple term
            return False
        text = v.value
        return text.isascii() and text.isprintable() and compiled.search(text) is not None

    return matches
