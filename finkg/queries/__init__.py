"""finkg's SPARQL: one query per `.rq` file, run with bound terms.

Each file starts with a header saying what the query returns, takes and binds
(`header.py`: its inputs and outputs typed).

`load("evidence_before")` reads one; `select(store, q, values)` converts the values by the
declared types, binds them (see `binding.bind`), runs the query on any store and returns
`rows.Rows` with typed accessors (`row.datetime("availableAt")`); `ask`, `construct` and
`update` run the other forms (`run` does any form and returns what the form gives).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pyoxigraph import NamedNode, Triple

from finkg.errors import QueryError
from finkg.queries.binding import Binding, BindingKey, bind, inline_iri, to_term
from finkg.queries.bound import bound_triples
from finkg.queries.header import OUTPUT_TYPES, Form, Input, NamedQuery, parse, query_form
from finkg.queries.results import DefaultGraphs, Solutions
from finkg.queries.rows import Row, Rows

if TYPE_CHECKING:
    from finkg.kg.graphs import Graphs

__all__ = [
    "OUTPUT_TYPES",
    "Form",
    "Input",
    "NamedQuery",
    "Row",
    "Rows",
    "Solutions",
    "ask",
    "catalog",
    "construct",
    "load",
    "packaged",
    "parse",
    "prepare",
    "query_form",
    "run",
    "select",
    "update",
]


class QueryRunner(Protocol):
    """The part of a store that `run` needs."""

    graphs: Graphs

    def select(self, query: str, *, default_graphs: DefaultGraphs = None) -> Solutions: ...
    def construct(self, query: str, *, default_graphs: DefaultGraphs = None) -> list[Triple]: ...
    def ask(self, query: str, *, default_graphs: DefaultGraphs = None) -> bool: ...
    def update(self, update: str, *, note: str = ..., maintenance: bool = ...) -> object: ...


def _query_dir() -> Path:
    return Path(str(resources.files(__package__)))


@cache
def _load_packaged(name: str) -> NamedQuery:
    path = _query_dir() / f"{name}.rq"
    return parse(path.read_text(encoding="utf-8"), name=name, path=path)


def catalog() -> list[NamedQuery]:
    """Every packaged query, by name."""
    return [_load_packaged(p.stem) for p in sorted(_query_dir().glob("*.rq"))]


def packaged(name: str) -> NamedQuery:
    """A packaged query by its name alone, never a file (for callers that must not read
    what a name points at: a server's clients)."""
    if re.fullmatch(r"[a-z][a-z0-9_]*", name) and (_query_dir() / f"{name}.rq").exists():
        return _load_packaged(name)
    names = ", ".join(q.name for q in catalog())
    raise QueryError("no packaged query of this name", field="name", value=name, hint=names)


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
    bindings: dict[BindingKey, Binding] = {}
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
        bound_term = bindings.get(spec.name)
        if spec.type in ("iri", "graph") and isinstance(bound_term, NamedNode):
            inlined = inline_iri(text, spec.name, bound_term)
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
