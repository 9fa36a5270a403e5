"""finkg's SPARQL: one query per `.rq` file, run with bound terms.

Each file starts with a header:

    # name: one line saying what it returns.
    #
    # input  ?company  iri        the company (required)
    # input  ?before   dateTime   exclusive bound, with a zone
    # input  ?node     iri*       a list (VALUES ?node { ... })
    # input  ?limitTo  integer?   optional (left unbound when not given)
    # input  ?audit    graph:audit  a named graph, bound from the store's layout
    # dataset: union             the default graph is the union of all graphs
    # bound  ?node  25           (CONSTRUCT) at most 25 triples per ?node, predicate and
    #                            direction (`bound.py`); `run(..., bound=)` overrides it
    # output ?evidence iri        a typed output (one a line: iri, dateTime, date, string,
    # output ?note string?        integer, decimal, double, boolean or term; ? = may be
    #                             unbound); or the names alone: # output ?a ?b ?c

`load("evidence_before")` reads one; `select(store, q, values)` converts the values by the
declared types, binds them (see `binding.bind`), runs the query on any store and returns
`rows.Rows` with typed accessors (`row.datetime("availableAt")`); `ask`, `construct` and
`update` run the other forms (`run` does any form and returns what the form gives).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from pyoxigraph import NamedNode, Triple

from finkg.errors import QueryError
from finkg.queries.binding import SCALAR_TYPES, Binding, bind, inline_iri, to_term
from finkg.queries.bound import bound_triples
from finkg.queries.results import Solutions
from finkg.queries.rows import Row, Rows

if TYPE_CHECKING:
    from finkg.kg.graphs import Graphs

__all__ = [
    "Input",
    "NamedQuery",
    "Row",
    "Rows",
    "Solutions",
    "ask",
    "catalog",
    "construct",
    "load",
    "prepare",
    "run",
    "select",
    "update",
]

Form = Literal["select", "construct", "ask", "describe", "update"]
_FORM = re.compile(
    r"\b(SELECT|CONSTRUCT|ASK|DESCRIBE|INSERT|DELETE|LOAD|CLEAR|DROP|CREATE|ADD|MOVE|COPY|WITH)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"\.(?=\s|$)")
_HEADER_WORDS = ("input", "output", "dataset", "rows", "bound")
_INPUT = re.compile(r"#\s*input\s+\?(\w+)\s+(\S+)\s*(.*)")
_TYPED_OUTPUT = re.compile(r"#\s*output\s+\?(\w+)\s+([A-Za-z]+\??)\s*(.*)$")
OUTPUT_TYPES = (*SCALAR_TYPES, "term")
_BOUND = re.compile(r"#\s*bound\s+\?(\w+)\s+(\d+)\s*$")


@dataclass(frozen=True)
class Input:
    name: str
    type: str  # one of SCALAR_TYPES, or "graph"
    many: bool = False
    optional: bool = False
    graph: str | None = None  # for type "graph": the named graph bound by default
    description: str = ""


@dataclass(frozen=True)
class NamedQuery:
    name: str
    text: str
    form: Form
    summary: str = ""
    inputs: tuple[Input, ...] = ()
    outputs: tuple[str, ...] = ()
    output_types: tuple[tuple[str, str], ...] = ()  # (name, type), where the header types them
    union: bool = False
    path: Path | None = None
    bound: tuple[str, int] | None = None  # (input, limit): see `bound.py`

    @property
    def read_only(self) -> bool:
        return self.form != "update"


class QueryRunner(Protocol):
    """The part of a store that `run` needs."""

    graphs: Graphs

    def select(self, query: str, *, default_graphs: object = None) -> Solutions: ...
    def construct(self, query: str, *, default_graphs: object = None) -> list[Triple]: ...
    def ask(self, query: str, *, default_graphs: object = None) -> bool: ...
    def update(self, update: str, *, note: str = ..., maintenance: bool = ...) -> object: ...


def query_form(text: str) -> Form:
    """select, construct, ask, describe or update: the query's first keyword.

    IRIs go before comments: the `#` of `<https://w3id.org/finkg/ns#>` starts no comment.

    >>> query_form("PREFIX fkg: <https://w3id.org/finkg/ns#> SELECT * WHERE { ?s ?p ?o }")
    'select'
    >>> query_form("INSERT DATA { <urn:a> <urn:b> <urn:c> }  # not a SELECT")
    'update'
    """
    stripped = re.sub(r"<[^<>\s]*>", " ", text)  # IRIs (PREFIX declarations among them)
    stripped = re.sub(r"#[^\n]*", " ", stripped)
    m = _FORM.search(stripped)
    if m is None:
        raise QueryError(
            "not a SPARQL query or update",
            field="query",
            value=text.strip()[:80],
            hint="expected SELECT, CONSTRUCT, ASK, DESCRIBE or an update operation",
        )
    word = m.group(1).upper()
    return word.lower() if word in ("SELECT", "CONSTRUCT", "ASK", "DESCRIBE") else "update"  # type: ignore[return-value]


def _summary(text: str) -> str:
    """The first sentence of the header's opening paragraph (`# name: what it returns...`),
    however many comment lines it runs over."""
    lines = text.splitlines()
    first = lines[0].lstrip("#").strip() if lines and lines[0].startswith("#") else ""
    if ":" not in first or first.startswith(_HEADER_WORDS):
        return ""
    words = [first.split(":", 1)[1].strip()]
    for line in lines[1:]:
        body = line.lstrip("#").strip()
        if not line.startswith("#") or not body or body.startswith(_HEADER_WORDS):
            break
        words.append(body)
    paragraph = " ".join(words)
    end = _SENTENCE_END.search(paragraph)
    return paragraph[: end.start() + 1] if end else paragraph


def parse(text: str, *, name: str = "query", path: Path | None = None) -> NamedQuery:
    """A `NamedQuery` from SPARQL text with (or without) a header."""
    summary, inputs, union = _summary(text), [], False
    outputs: list[str] = []
    typed: list[tuple[str, str]] = []
    bounded: tuple[str, int] | None = None
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.startswith("#"):
            break
        body = line.lstrip("#").strip()
        if m := _INPUT.match(line):
            inputs.append(_parse_input(m, path or name, i))
        elif m := _BOUND.match(line):
            bounded = (m.group(1), int(m.group(2)))
        elif (m := _TYPED_OUTPUT.match(line)) and not m.group(2).startswith("?"):
            kind = m.group(2)
            if kind.rstrip("?") not in OUTPUT_TYPES:
                raise QueryError(
                    f"unknown output type in header; use one of {', '.join(OUTPUT_TYPES)}",
                    source=str(path or name),
                    line=i,
                    field=f"?{m.group(1)}",
                    value=kind,
                )
            outputs.append(m.group(1))
            typed.append((m.group(1), kind))
        elif re.match(r"output\s+\?", body):
            outputs += [v.lstrip("?") for v in body.split()[1:]]
        elif body.startswith("dataset:"):
            union = body.split(":", 1)[1].strip() == "union"
    query = NamedQuery(
        name=name,
        text=text,
        form=query_form(text),
        summary=summary,
        inputs=tuple(inputs),
        outputs=tuple(outputs),
        output_types=tuple(typed),
        union=union,
        path=path,
        bound=bounded,
    )
    if query.form == "select":
        body = "\n".join(x for x in text.splitlines() if not x.startswith("#"))
        missing = [o for o in outputs if not re.search(rf"[?$]{re.escape(o)}\b", body)]
        if missing:
            raise QueryError(
                "the header declares outputs the query never binds",
                source=str(path or name),
                field="output",
                value=", ".join(f"?{m}" for m in missing),
            )
    return query


def _parse_input(m: re.Match[str], where: object, line: int) -> Input:
    name, type_, description = m.group(1), m.group(2), m.group(3).strip()
    optional, many = type_.endswith("?"), type_.rstrip("?").endswith("*")
    type_ = type_.rstrip("?").rstrip("*")
    graph = None
    if type_.startswith("graph:"):
        type_, graph = "graph", type_.split(":", 1)[1]
    elif type_ not in SCALAR_TYPES:
        raise QueryError(
            f"unknown input type in header; use one of {', '.join(SCALAR_TYPES)} or graph:NAME",
            source=str(where),
            line=line,
            field=f"?{name}",
            value=type_,
        )
    return Input(name, type_, many, optional, graph, description)


def _query_dir() -> Path:
    return Path(str(resources.files(__package__)))


@cache
def _load_packaged(name: str) -> NamedQuery:
    path = _query_dir() / f"{name}.rq"
    return parse(path.read_text(encoding="utf-8"), name=name, path=path)


def catalog() -> list[NamedQuery]:
    """Every packaged query, by name."""
    return [_load_packaged(p.stem) for p in sorted(_query_dir().glob("*.rq"))]


def load(name_or_path: str | Path) -> NamedQuery:
    """A packaged query by name (`evidence_before`) or any `.rq` file by path."""
    text = str(name_or_path)
    if re.fullmatch(r"[a-z][a-z0-9_]*", text) and (_query_dir() / f"{text}.rq").exists():
        return _load_packaged(text)
    path = Path(text)
    if path.suffix == ".rq" or path.exists():
        try:
            return parse(path.read_text(encoding="utf-8"), name=path.stem, path=path)
        except OSError as e:
            raise QueryError(f"cannot read query file: {e.strerror}", source=path) from None
    names = ", ".join(q.name for q in catalog())
    raise QueryError("no such query", value=text, hint=f"give a .rq path or one of: {names}")


def prepare(
    query: NamedQuery, values: Mapping[str, object] | None = None, *, graphs: Graphs
) -> str:
    """The query text with every declared input bound (typed) and graphs filled in."""
    values = dict(values or {})
    declared = {i.name: i for i in query.inputs}
    bindings: dict[str, Binding] = {}
    for name, value in values.items():
        spec = declared.get(name)
        if spec is None and query.inputs:
            raise QueryError(
                f"{query.name} has no input ?{name}",
                field="bind",
                value=name,
                hint="its inputs are " + ", ".join(f"?{n}" for n in declared),
            )
        type_ = "iri" if spec is not None and spec.type == "graph" else (spec.type if spec else "")
        if isinstance(value, list | tuple | set | frozenset):
            if spec is not None and not spec.many:
                raise QueryError(f"?{name} takes one value", field=name, value=list(value))
            bindings[name] = [to_term(v, type_, name=name) for v in value]
        else:
            term = to_term(value, type_, name=name)
            bindings[name] = [term] if spec is not None and spec.many else term
    for spec in query.inputs:
        if spec.name in bindings:
            continue
        if spec.type == "graph" and spec.graph:
            bindings[spec.name] = graphs.parse(spec.graph)
        elif not spec.optional:
            raise QueryError(
                f"{query.name} needs a value for ?{spec.name} ({spec.type})",
                field="bind",
                value=spec.name,
                hint=f"pass --bind {spec.name}=VALUE"
                + (f": {spec.description}" if spec.description else ""),
            )
    text = query.text
    for spec in query.inputs:  # a single IRI is written in as a constant where it can be
        term = bindings.get(spec.name)
        if spec.type in ("iri", "graph") and isinstance(term, NamedNode):
            inlined = inline_iri(text, spec.name, term)
            if inlined is not None:
                text = inlined
                del bindings[spec.name]
    return bind(text, bindings)


def run(
    store: QueryRunner,
    query: NamedQuery | str,
    values: Mapping[str, object] | None = None,
    *,
    default_graphs: list[NamedNode] | str | None = None,
    allow_update: bool = False,
    maintenance: bool = False,
    bound: int | None = None,
) -> Solutions | list[Triple] | bool | None:
    """Run a query (a NamedQuery, a packaged name or SPARQL text) with bound values.

    `default_graphs` sets the query dataset: None for the store's default graph (or the
    union when the query's header says `dataset: union`), "union" for all graphs, or a list
    of graphs, which then are the only graphs the query can read. A CONSTRUCT whose header
    declares a bound returns `bound.Triples`, cut to it; `bound` overrides the declared
    limit (0: no bound). An update runs only with `allow_update`; one that writes the
    audit or ontology graph (or graphs it cannot name) also needs `maintenance`
    (`kg.update_targets`).
    """
    if isinstance(query, str):
        query = load(query) if re.fullmatch(r"[a-z][a-z0-9_]*", query) else parse(query)
    limit = _limit(query, bound)
    text = prepare(query, values, graphs=store.graphs)
    if default_graphs is None and query.union:
        default_graphs = "union"
    if query.form == "update":
        if not allow_update:
            raise QueryError(
                f"{query.name} is an update and this run is read-only",
                field="query",
                value=query.name,
                hint="pass --update to allow writes",
            )
        if default_graphs is not None:
            raise QueryError("an update cannot be restricted to a dataset", field="query")
        store.update(text, note=f"query {query.name}", maintenance=maintenance)
        return None
    if query.form == "select":
        return store.select(text, default_graphs=default_graphs)
    if query.form == "ask":
        return store.ask(text, default_graphs=default_graphs)
    triples = store.construct(text, default_graphs=default_graphs)
    if limit and query.bound is not None:
        nodes = (values or {}).get(query.bound[0], [])
        items = nodes if isinstance(nodes, list | tuple | set | frozenset) else [nodes]
        iris = [n.value if isinstance(n, NamedNode) else str(n) for n in items]
        return bound_triples(triples, nodes=iris, limit=limit)
    return triples


def _named(query: NamedQuery | str) -> NamedQuery:
    if isinstance(query, str):
        return load(query) if re.fullmatch(r"[a-z][a-z0-9_]*", query) else parse(query)
    return query


def _form(query: NamedQuery, wanted: str) -> None:
    if query.form != wanted:
        raise QueryError(
            f"{query.name}: expected a {wanted.upper()} query, got {query.form.upper()}",
            field="query",
            value=query.name,
        )


def select(
    store: QueryRunner,
    query: NamedQuery | str,
    values: Mapping[str, object] | None = None,
    *,
    default_graphs: list[NamedNode] | str | None = None,
) -> Rows:
    """A SELECT's solutions as typed rows (`rows.Rows`); see `run` for the dataset."""
    named = _named(query)
    _form(named, "select")
    result = run(store, named, values, default_graphs=default_graphs)
    assert isinstance(result, Solutions)  # a SELECT's
    return Rows(named.name, result.variables, result.rows, dict(named.output_types))


def ask(
    store: QueryRunner,
    query: NamedQuery | str,
    values: Mapping[str, object] | None = None,
    *,
    default_graphs: list[NamedNode] | str | None = None,
) -> bool:
    named = _named(query)
    _form(named, "ask")
    return bool(run(store, named, values, default_graphs=default_graphs))


def construct(
    store: QueryRunner,
    query: NamedQuery | str,
    values: Mapping[str, object] | None = None,
    *,
    default_graphs: list[NamedNode] | str | None = None,
    bound: int | None = None,
) -> list[Triple]:
    """A CONSTRUCT's (or DESCRIBE's) triples; a bounded one's are `bound.Triples`."""
    named = _named(query)
    if named.form not in ("construct", "describe"):
        _form(named, "construct")
    result = run(store, named, values, default_graphs=default_graphs, bound=bound)
    assert isinstance(result, list)  # a CONSTRUCT's
    return result


def update(
    store: QueryRunner,
    query: NamedQuery | str,
    values: Mapping[str, object] | None = None,
    *,
    maintenance: bool = False,
) -> None:
    """Run an update (the store records it as a commit; see `run` for what is refused)."""
    named = _named(query)
    _form(named, "update")
    run(store, named, values, allow_update=True, maintenance=maintenance)


def _limit(query: NamedQuery, bound: int | None) -> int:
    if bound is None:
        return query.bound[1] if query.bound else 0
    if isinstance(bound, bool) or not isinstance(bound, int) or bound < 0:
        raise QueryError("a bound is a whole number, 0 for none", field="bound", value=bound)
    if bound and query.bound is None:
        raise QueryError(
            f"{query.name} declares no bound to set",
            field="bound",
            value=bound,
            hint="a bound applies to CONSTRUCT queries whose header has '# bound ?node N' "
            "(one_hop, one_hop_before)",
        )
    return bound
