"""Compact JSON-LD in finkg's context that expands back to exactly the quads it came from.

rdflib's compaction turned literals into Python values and wrote them back: `...Z` came
back `...+00:00`, `.67581Z` as `.675810+00:00`, `"INF"^^xsd:double` as `inf` (which
expands to an ill-formed literal). Here every literal keeps its lexical form:

- a literal whose datatype is the term's coercion (`"availableAt": "2020-...Z"`) is its
  lexical form; an `xsd:string` under a term without coercion is a plain string;
- an `xsd:integer` in canonical form below 2^53 and an `xsd:boolean` `true`/`false` are JSON
  numbers and booleans (a JSON-LD processor writes them back in that same form);
- an `rdf:JSON` literal under an `@json` term is its JSON, where the JSON-LD processor's
  canonical form (JCS) of it is the literal itself;
- everything else is a value object, `{"@value": lexical form, "@type": datatype}` or
  `{"@value": ..., "@language": ...}`, which no coercion touches; where the term's
  coercion is `@json` (which would swallow a value object) the property's IRI is the key.

IRIs under an `@id` term are strings; under a `@vocab` term, a term's name where one names
the IRI; elsewhere `{"id": ...}`. Keys are terms, else compact IRIs, else full IRIs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache
from typing import Any

import pyoxigraph as ox

from finkg.errors import InputError
from finkg.ontology import jsonld_context

_RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
_XSD = "http://www.w3.org/2001/XMLSchema#"
_INTEGER = re.compile(r"-?(0|[1-9][0-9]*)")
_SAFE = 2**53


class _Context:
    """finkg's context read for compaction: terms by IRI, prefixes, coercions."""

    def __init__(self, context: dict[str, Any]) -> None:
        self.prefixes: dict[str, str] = {}
        self.terms: dict[str, tuple[str, str | None]] = {}  # IRI -> (term, coercion)
        self.names: dict[str, str] = {}  # IRI -> term (simple terms, for @vocab values)
        simple = {k: v for k, v in context.items() if isinstance(v, str) and not k.startswith("@")}
        for k, v in simple.items():
            if v.endswith(("#", "/")) and ":" in v:
                self.prefixes[k] = v
        for key in sorted(context):
            value = context[key]
            if key.startswith("@") or value in ("@id", "@type"):
                continue
            iri = self.expand(value if isinstance(value, str) else value.get("@id", key))
            coercion = value.get("@type") if isinstance(value, dict) else None
            if coercion not in (None, "@id", "@vocab", "@json"):
                coercion = self.expand(coercion)
            self.terms.setdefault(iri, (key, coercion))
            if isinstance(value, str):
                self.names.setdefault(iri, key)

    def expand(self, text: str) -> str:
        prefix, sep, rest = text.partition(":")
        if sep and prefix in self.prefixes and not rest.startswith("//"):
            return self.prefixes[prefix] + rest
        return text

    def compact(self, iri: str) -> str:
        """A compact IRI where a prefix fits and the result names nothing else."""
        for prefix, base in sorted(self.prefixes.items(), key=lambda p: -len(p[1])):
            local = iri[len(base) :]
            if iri.startswith(base) and local and re.fullmatch(r"[A-Za-z_][\w.\-]*", local):
                candidate = f"{prefix}:{local}"
                if candidate not in self.terms:
                    return candidate
        return iri


@cache
def _finkg_context() -> _Context:
    return _Context(jsonld_context()["@context"])


def to_jsonld(quads: Iterable[ox.Quad | ox.Triple]) -> dict[str, Any]:
    """Compact JSON-LD in finkg's context, always with a top-level `@graph`; the triples of
    each named graph become one `{"id": graph, "@graph": [...]}` entry."""
    ctx = _finkg_context()
    graphs: dict[str | None, dict[str, dict[str, list[Any]]]] = {}
    for q in quads:
        name = q.graph_name if isinstance(q, ox.Quad) else ox.DefaultGraph()
        key = None if isinstance(name, ox.DefaultGraph) else _node_id(name)
        node = graphs.setdefault(key, {}).setdefault(_node_id(q.subject), {})
        prop, value = _property(ctx, q.predicate.value, q.object)
        node.setdefault(prop, []).append(value)
    body: list[dict[str, Any]] = []
    for graph in sorted(graphs, key=lambda g: (g is not None, g or "")):
        nodes = [_node(s, props) for s, props in sorted(graphs[graph].items())]
        body += nodes if graph is None else [{"id": graph, "@graph": nodes}]
    return {"@context": jsonld_context()["@context"], "@graph": body}


def _node(subject: str, props: dict[str, list[Any]]) -> dict[str, Any]:
    node: dict[str, Any] = {"id": subject}
    for key, values in props.items():
        unique = sorted({json.dumps(v, sort_keys=True): v for v in values}.items())
        node[key] = unique[0][1] if len(unique) == 1 else [v for _, v in unique]
    return dict(sorted(node.items()))


def _node_id(term: object) -> str:
    if isinstance(term, ox.NamedNode):
        return term.value
    if isinstance(term, ox.BlankNode):
        return "_:" + term.value
    raise InputError("JSON-LD cannot hold this node (an RDF 1.2 triple term?)", value=str(term))


def _property(ctx: _Context, predicate: str, obj: object) -> tuple[str, Any]:
    """The key and the value that expand to `predicate obj`."""
    fallback = ctx.compact(predicate)
    if predicate == _RDF + "type" and isinstance(obj, ox.NamedNode):
        return "type", ctx.names.get(obj.value) or obj.value
    term, coercion = ctx.terms.get(predicate, (fallback, None))
    if predicate == _RDF + "type":  # a blank node or literal type: a plain property
        term, coercion = fallback, None
    if isinstance(obj, ox.Literal):
        if coercion == "@json":
            native = _canonical_json(obj)
            return (term, native) if native is not None else (fallback, _value_object(ctx, obj))
        return term, _literal(ctx, obj, coercion)
    ref = _node_id(obj)
    if coercion == "@id" and isinstance(obj, ox.NamedNode):
        return term, ref
    if coercion == "@vocab" and isinstance(obj, ox.NamedNode):
        return term, ctx.names.get(ref) or ref
    if coercion == "@json":
        return fallback, {"id": ref}
    return term, {"id": ref}


def _literal(ctx: _Context, lit: ox.Literal, coercion: str | None) -> Any:
    datatype = lit.datatype.value
    if lit.language is None and datatype == coercion:
        return lit.value
    if coercion is None and lit.language is None:
        if datatype == _XSD + "string":
            return lit.value
        if datatype == _XSD + "integer" and _INTEGER.fullmatch(lit.value) and lit.value != "-0":
            if abs(int(lit.value)) < _SAFE:
                return int(lit.value)
        if datatype == _XSD + "boolean" and lit.value in ("true", "false"):
            return lit.value == "true"
    return _value_object(ctx, lit)


def _value_object(ctx: _Context, lit: ox.Literal) -> dict[str, str]:
    if lit.language is not None:
        return {"@value": lit.value, "@language": lit.language}
    if lit.datatype.value == _XSD + "string":
        return {"@value": lit.value}
    return {"@value": lit.value, "@type": ctx.compact(lit.datatype.value)}


def _canonical_json(lit: ox.Literal) -> Any:
    """The JSON of an rdf:JSON literal, where JSON-LD's canonical form of it (JCS: sorted
    keys, no spaces; numbers only as integers, whose form JCS keeps) is the literal; None
    where it is not, or where it holds a fraction or an exponent JCS could write otherwise."""
    if lit.datatype.value != _RDF + "JSON" or lit.language is not None:
        return None
    try:
        value = json.loads(lit.value)
    except ValueError:
        return None
    if _unsure(value):
        return None
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return value if canonical == lit.value else None


def _unsure(value: Any) -> bool:
    """Whether JCS could write `value` otherwise than sorted, compact json.dumps: numbers
    with a fraction or beyond 2^53, keys beyond the BMP (JCS sorts UTF-16 units)."""
    if isinstance(value, float):
        return True
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _SAFE:
        return True
    if isinstance(value, dict):
        return any(max(k, default="\0") > "\uffff" or _unsure(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_unsure(v) for v in value)
    return False
