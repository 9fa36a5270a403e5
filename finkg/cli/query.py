"""`finkg query` and `finkg export`: SPARQL with typed bindings, and graphs as RDF files."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from finkg import queries
from finkg.cli.support import _open, _settings, err, out, print_table, state_cuts, store_option
from finkg.errors import InputError
from finkg.kg import export as exporting
from finkg.queries.results import Solutions, python_value


def _parse_bindings(values: tuple[str, ...]) -> dict[str, object]:
    bindings: dict[str, object] = {}
    for item in values:
        if "=" not in item:
            raise InputError("a binding is NAME=VALUE", field="--bind", value=item)
        name, value = item.split("=", 1)
        name = name.strip().lstrip("?")
        if name in bindings:  # repeated: a list (VALUES ?name { ... })
            previous = bindings[name]
            bindings[name] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            bindings[name] = value
    return bindings


def _dataset(ctx: click.Context, graphs_option: str | None) -> list[Any] | str | None:
    if graphs_option is None:
        return None
    if graphs_option == "union":
        return "union"
    from finkg.kg.graphs import Graphs

    g = Graphs(_settings(ctx).base_iri)
    return [g.parse(name) for name in graphs_option.split(",") if name.strip()]


# for `query` and `export`: the bound of a bounded CONSTRUCT
bound_option = click.option(
    "--bound",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="For a bounded CONSTRUCT (one_hop, one_hop_before: 25): at most N triples per "
    "selected node, predicate and direction, a deterministic sample; 0: all. What is left "
    "out is stated on stderr.",
)


@click.command()
@click.argument("query", required=False)
@click.option(
    "--bind",
    "binds",
    multiple=True,
    metavar="NAME=VALUE",
    help="Bind an input; repeat a name to bind a list.",
)
@click.option("--update", is_flag=True, help="Allow a SPARQL update (writes).")
@click.option(
    "--maintenance",
    is_flag=True,
    help="With --update: allow writing the audit and ontology graphs (finkg's commits, "
    "lifecycle and vocabulary), or graphs the update does not name; recorded as a commit.",
)
@click.option(
    "--graphs",
    "graphs_option",
    metavar="NAMES",
    help="Query dataset: 'union' or comma-separated graph names (the only graphs read).",
)
@click.option(
    "--format",
    "fmt",
    default="table",
    show_default=True,
    type=click.Choice(["table", "json", "csv", "tsv", *exporting.FORMATS]),
    help="Result format; a table is printed tab-separated when stdout is not a terminal.",
)
@click.option("--list", "list_", is_flag=True, help="List the packaged queries and exit.")
@bound_option
@store_option
@click.pass_context
def query(
    ctx: click.Context,
    query: str,
    binds: tuple[str, ...],
    update: bool,
    maintenance: bool,
    graphs_option: str | None,
    fmt: str,
    list_: bool,
    bound: int | None,
    store: str | None,
) -> None:
    """Run a SPARQL query: a packaged name, a .rq file, or query text.

    Values are bound as typed RDF terms (never pasted into the text). Read-only unless
    --update is given; an update that writes the audit or ontology graph, or graphs it
    does not name (GRAPH ?g, CLEAR ALL), is refused unless --maintenance is given too.

    \b
    finkg query evidence_before --bind company=https://w3id.org/finkg/id/company/ZQAW \\
        --bind before=2019-06-01T09:30:00-04:00
    finkg query --list
    """
    if list_:
        for q in queries.catalog():
            inputs = " ".join(f"?{i.name}:{i.type}{'*' if i.many else ''}" for i in q.inputs)
            out.print(Text.assemble((q.name, "bold"), f" ({q.form}) {inputs}\n    {q.summary}"))
        return
    if not query:
        raise click.UsageError(
            "give a query (a packaged name, a .rq file or SPARQL text), or --list"
        )
    named = queries.load(query) if not any(c in query for c in "{ ") else queries.parse(query)
    bindings = _parse_bindings(binds)
    if named.form == "update" and not update:
        raise InputError(
            f"{named.name} is a SPARQL update; finkg query is read-only",
            field="query",
            value=named.name,
            hint="pass --update to allow writes",
        )
    if maintenance and not update:
        raise click.UsageError("--maintenance goes with --update")
    with _open(ctx, store, read_only=not update) as s:
        result = queries.run(
            s,
            named,
            bindings,
            default_graphs=_dataset(ctx, graphs_option),
            allow_update=update,
            maintenance=maintenance,
            bound=bound,
        )
        _print_result(result, fmt)
        state_cuts(named.name, result)
        if named.form == "update":
            err.print(f"updated; generation {s.generation()}")


def _print_result(result: object, fmt: str) -> None:
    if isinstance(result, Solutions):
        _print_solutions(result, fmt)
    elif isinstance(result, bool):
        out.print("true" if result else "false")
    elif isinstance(result, list):
        fmt = "turtle" if fmt in ("table", "json", "csv", "tsv") else fmt
        sys.stdout.write(exporting.serialize(_as_quads(result), fmt).decode("utf-8"))


def _as_quads(triples: list[Any]) -> list[Any]:
    import pyoxigraph as ox

    return [ox.Quad(t.subject, t.predicate, t.object) for t in triples]


def _print_solutions(result: Solutions, fmt: str) -> None:
    count = fmt == "table"  # a person reads it: say how many rows
    if fmt == "table" and not out.is_terminal:
        fmt = "tsv"  # another program reads it: one row a line, every value whole
    if fmt == "json":
        rows = [{k: python_value(v) for k, v in row.items()} for row in result]
        sys.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
    elif fmt in ("csv", "tsv"):
        import csv

        writer = csv.writer(sys.stdout, delimiter="," if fmt == "csv" else "\t")
        writer.writerow(result.variables)
        for row in result.rows:
            writer.writerow(["" if v is None else python_value(v) for v in row])
    else:
        table = Table(*result.variables, show_lines=False)
        for row in result.rows:
            table.add_row(*("" if v is None else str(python_value(v)) for v in row))
        print_table(table)
    if count:
        err.print(f"{len(result)} row(s)")


@click.command()
@click.option(
    "--graph",
    "graphs_",
    multiple=True,
    metavar="NAME",
    help="Graph to export (repeatable) [default: all].",
)
@click.option("--query", "query_", metavar="NAME|FILE", help="Export a CONSTRUCT result instead.")
@click.option("--bind", "binds", multiple=True, metavar="NAME=VALUE")
@click.option(
    "--user",
    metavar="ID",
    help="Read only this user's graph and the market graph (for a per-user export).",
)
@click.option(
    "--format", "fmt", default="turtle", show_default=True, type=click.Choice(exporting.FORMATS)
)
@click.option(
    "-o", "--output", type=click.Path(path_type=Path), help="File to write [default: stdout]."
)
@bound_option
@store_option
@click.pass_context
def export(
    ctx: click.Context,
    graphs_: tuple[str, ...],
    query_: str | None,
    binds: tuple[str, ...],
    user: str | None,
    fmt: str,
    output: Path | None,
    bound: int | None,
    store: str | None,
) -> None:
    """Export graphs or a CONSTRUCT result as Turtle, N-Triples, N-Quads, TriG or JSON-LD.

    JSON-LD is compacted with finkg's context (embedded in the file).
    """

    with _open(ctx, store, read_only=True) as s:
        exported = exporting.export_bytes(
            s,
            graphs=list(graphs_),
            query=query_,
            bindings=_parse_bindings(binds),
            fmt=fmt,
            user=user,
            bound=bound,
        )
    if output is None:
        sys.stdout.buffer.write(exported.data)
    else:
        output.write_bytes(exported.data)
        err.print(f"wrote {len(exported.data)} bytes to {output}")
    state_cuts(query_ or "export", exported.triples)
