"""Values into SPARQL as bound terms, never as formatted strings.

`to_term` turns a Python value (or a command-line string, by the declared input type)
into an RDF term; `bind` puts terms into a query as a `VALUES` block at the head of every
top-level `WHERE { ... }` group. Terms are written by pyoxigraph's N-Triples serializer, so
a value stays one term whatever it contains: quotes, braces and `DROP ALL` are characters
of a literal, an IRI with `>` or a space is refused.

`inline_iri` writes a single IRI into the query as a constant instead, where that means the
same (`queries.prepare` does so for single iri and graph inputs): Oxigraph plans a pattern
with a constant from its indexes, and one with a VALUES-bound variable as an open pattern.

One mechanism serves both backends and every query form. pyoxigraph's own `substitutions`
(0.5.13) only bind variables that appear in a SELECT projection, refuse CONSTRUCT and ASK,
and bind one value per variable; a VALUES block does all three and is standard SPARQL 1.1,
so a remote endpoint receives the same text. A bound variable must be used in the outer
group of the WHERE clause (or in an OPTIONAL's filter), which every `.rq` file here does.

>>> print(bind("SELECT ?s WHERE { ?s ?p ?o }", {"o": Literal('x" } ; DROP ALL ; #')}))
SELECT ?s WHERE { VALUES (?o) { ("x\\" } ; DROP ALL ; #") } ?s ?p ?o }
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal, InvalidOperation

from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from finkg.errors import QueryError, TimestampError
from finkg.ontology.terms import XSD

Term = NamedNode | BlankNode | Literal | Triple
# One term, a list of terms for one variable, or rows of terms for a tuple of variables.
Binding = Term | Sequence[Term] | Sequence[Sequence[Term]]
BindingKey = str | tuple[str, ...]

SCALAR_TYPES = ("iri", "dateTime", "date", "string", "integer", "decimal", "double", "boolean")

# Tokens the binder must step over: comments, long and short strings, IRIs; then braces
# and the WHERE keyword, which are what it looks for.
_TOKEN = re.compile(
    r"""
    (?P<comment>\#[^\n]*)
  | (?P<string>\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"|'''(?:[^'\\]|\\.|'(?!''))*'''
              |"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<iri><[^<>"{}|^`\\\s]*>)
  | (?P<open>\{)
  | (?P<close>\})
  | (?P<where>(?<![\w?$:])WHERE(?![\w:]))
    """,
    re.VERBOSE | re.IGNORECASE,
)


def to_term(value: object, type_: str = "", *, name: str = "value") -> Term:
    """An RDF term for `value`; strings are read as the declared `type_`.

    >>> to_term("https://example.org/a", "iri")
    <NamedNode value=https://example.org/a>
    >>> to_term("2020-04-30T16:30:00-04:00", "dateTime").value
    '2020-04-30T16:30:00-04:00'
    """
    if isinstance(value, NamedNode | Literal | Triple):
        return value
    if isinstance(value, BlankNode):
        raise QueryError("blank nodes cannot be bound into a query", field=name, value=value)
    if isinstance(value, bool):
        return Literal("true" if value else "false", datatype=XSD.boolean)
    if isinstance(value, int):
        return Literal(str(value), datatype=XSD.integer)
    if isinstance(value, float):
        return Literal(repr(value), datatype=XSD.double)
    if isinstance(value, Decimal):
        return Literal(format(value, "f"), datatype=XSD.decimal)
    if isinstance(value, dt.datetime):
        return datetime_literal(value, name=name)
    if isinstance(value, dt.date):
        return Literal(value.isoformat(), datatype=XSD.date)
    if not isinstance(value, str):
        raise QueryError("cannot bind a value of this type", field=name, value=type(value).__name__)
    return _parse_string(value, type_ or "string", name=name)


def datetime_literal(value: dt.datetime, *, name: str = "value") -> Literal:
    """An xsd:dateTime literal that keeps the value's zone offset; naive values are refused."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise TimestampError(
            "timestamp has no zone",
            field=name,
            value=value.isoformat(),
            hint="give an offset (2020-04-30T16:30:00-04:00) or a zone-aware datetime",
        )
    return Literal(value.isoformat(), datatype=XSD.dateTime)


def _parse_string(text: str, type_: str, *, name: str) -> Term:
    try:
        if type_ == "iri":
            if not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", text):
                raise ValueError("not an absolute IRI (no scheme)")
            return NamedNode(text)
        if type_ == "dateTime":
            return datetime_literal(dt.datetime.fromisoformat(text), name=name)
        if type_ == "date":
            return Literal(dt.date.fromisoformat(text).isoformat(), datatype=XSD.date)
        if type_ == "integer":
            return Literal(str(int(text)), datatype=XSD.integer)
        if type_ == "decimal":
            return Literal(format(Decimal(text), "f"), datatype=XSD.decimal)
        if type_ == "double":
            return Literal(repr(float(text)), datatype=XSD.double)
        if type_ == "boolean":
            if text.lower() not in ("true", "false"):
                raise ValueError("expected true or false")
            return Literal(text.lower(), datatype=XSD.boolean)
        if type_ == "string":
            return Literal(text)
    except TimestampError:
        raise
    except (ValueError, InvalidOperation) as e:
        raise QueryError(f"not a valid {type_}: {e}", field=name, value=text) from None
    raise QueryError(
        "unknown input type", field=name, value=type_, hint="use one of " + ", ".join(SCALAR_TYPES)
    )


def values_block(bindings: Mapping[BindingKey, Binding]) -> str:
    """The VALUES clauses for `bindings`: one row for the scalars, one block per list, and
    one block of rows for each tuple of variable names.

    >>> a, b = NamedNode("https://e.org/a"), NamedNode("https://e.org/b")
    >>> values_block({"x": a, "n": [a, b], ("s", "o"): [(a, b), (b, a)]})
    'VALUES (?x) { (<https://e.org/a>) } VALUES ?n { <https://e.org/a> <https://e.org/b> } \
VALUES (?s ?o) { (<https://e.org/a> <https://e.org/b>) (<https://e.org/b> <https://e.org/a>) }'
    """
    scalars = {k: v for k, v in bindings.items() if isinstance(k, str) and not _is_list(v)}
    parts: list[str] = []
    if scalars:
        names = " ".join(f"?{_var(k)}" for k in scalars)
        row = " ".join(_serialize(k, v) for k, v in scalars.items())
        parts.append(f"VALUES ({names}) {{ ({row}) }}")
    for k, vs in bindings.items():
        if isinstance(k, tuple):
            names = " ".join(f"?{_var(n)}" for n in k)
            rows = " ".join(
                "(" + " ".join(_serialize(n, t) for n, t in zip(k, _items(row), strict=True)) + ")"
                for row in _items(vs)
            )
            parts.append(f"VALUES ({names}) {{ {rows} }}")
        elif _is_list(vs):
            row = " ".join(_serialize(k, v) for v in _items(vs))
            parts.append(f"VALUES ?{_var(k)} {{ {row} }}")
    return " ".join(parts)


def bind(query: str, bindings: Mapping[BindingKey, Binding]) -> str:
    """`query` with `bindings` as a VALUES block opening each top-level WHERE group."""
    if not bindings:
        return query
    block = values_block(bindings)
    positions = _top_level_where_groups(query)
    if not positions:
        raise QueryError(
            "query has no top-level 'WHERE {' to bind values into",
            field="query",
            value=", ".join(f"?{k}" for k in bindings if isinstance(k, str)),
            hint="write the WHERE keyword explicitly (ASK WHERE { ... }, SELECT * WHERE { ... })",
        )
    out, last = [], 0
    for pos in positions:
        out += [query[last:pos], " ", block]
        last = pos
    out.append(query[last:])
    return "".join(out)


def _top_level_where_groups(query: str) -> list[int]:
    """Offsets just after the '{' of each WHERE group at brace depth 0."""
    depth, expecting, found = 0, False, []
    for m in _TOKEN.finditer(query):
        kind = m.lastgroup
        if kind == "where" and depth == 0:
            expecting = True
        elif kind == "open":
            if expecting and depth == 0:
                found.append(m.end())
            expecting = False
            depth += 1
        elif kind == "close":
            depth = max(0, depth - 1)
    return found


def inline_iri(query: str, name: str, iri: NamedNode) -> str | None:
    """`query` with the variable ?name written as the constant `iri`, or None where that
    would not mean the same as binding it or would not parse: the variable is an output
    (projected, `SELECT *`, bound with AS), is tested with BOUND, groups or orders, or the
    query has a MINUS (which joins on shared variables). Oxigraph plans a pattern with a
    constant from its indexes, but plans one whose variable a VALUES block binds as if it
    were open: feedback's query for the citations of 24 signals read every graph's matches
    first (180 ms against 2 ms)."""
    var = re.compile(rf"[?$]{re.escape(name)}(?!\w)")
    pieces, last = [], 0  # (is code, text): comments, strings and IRIs are not code
    for m in _TOKEN.finditer(query):
        if m.lastgroup in ("comment", "string", "iri"):
            pieces += [(True, query[last : m.start()]), (False, m.group())]
            last = m.end()
    pieces.append((True, query[last:]))
    code = " ".join(text for is_code, text in pieces if is_code)
    heads = re.findall(r"\bSELECT\b(.*?)(?:\bWHERE\b|\{)", code, re.IGNORECASE | re.DOTALL)
    if any(var.search(h) or re.match(r"\s*(DISTINCT|REDUCED)?\s*\*", h, re.I) for h in heads):
        return None
    if re.search(rf"\bAS\s+{var.pattern}|\bBOUND\s*\(\s*{var.pattern}|\bMINUS\b", code, re.I):
        return None
    if re.search(rf"\b(GROUP|ORDER)\s+BY\b[^{{}}]*{var.pattern}", code, re.I):
        return None  # a bare IRI is not a grouping or ordering condition
    return "".join(var.sub(str(iri), text) if is_code else text for is_code, text in pieces)


def _is_list(v: object) -> bool:
    return isinstance(v, list | tuple | set | frozenset)


def _items(v: object) -> Iterable[object]:
    """The values of a list binding (a row of a tuple binding included)."""
    if not isinstance(v, Iterable):
        raise QueryError("expected a list of values", field="bind", value=repr(v))
    return v


def _var(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise QueryError("not a SPARQL variable name", field="bind", value=name)
    return name


def _serialize(name: str, term: object) -> str:
    if isinstance(term, BlankNode) or not isinstance(term, NamedNode | Literal | Triple):
        raise QueryError(
            "only IRIs, literals and triples can be bound", field=name, value=repr(term)
        )
    return str(term)
