"""`finkg init`, `validate`, `stats`, `index`, `audit` and `serve`: setting up, checking,
indexing, tracing and serving a store."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from pyoxigraph import NamedNode
from rich.table import Table

from finkg.cli.support import (
    _open,
    _progress,
    _reporter,
    _settings,
    curie,
    err,
    out,
    print_table,
    store_option,
    timeout_option,
    token_file_option,
)


@click.command()
@store_option
@click.pass_context
def init(ctx: click.Context, store: str | None) -> None:
    """Create a store (or refresh its ontology graph)."""
    from finkg.kg.setup import init_store

    with _open(ctx, store) as s:
        commit = init_store(s)
        state = "ontology graph written" if commit else "already current"
        out.print(f"store {s.location}: {state}; generation {s.generation()}")


@click.command()
@click.option(
    "--file",
    "files",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Validate RDF files instead of the store (repeatable).",
)
@click.option("--graph", "graphs_", multiple=True, metavar="NAME", help="Only these graphs.")
@click.option(
    "--shapes",
    "shape_paths",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Check against these SHACL files instead of finkg's shapes (repeatable); "
    "the sparql engine refuses (exit 2) what it does not implement.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--engine",
    default="sparql",
    show_default=True,
    type=click.Choice(["sparql", "pyshacl"]),
    help="sparql: the shapes compiled to SPARQL on Oxigraph; pyshacl: the reference.",
)
@store_option
@click.pass_context
def validate(
    ctx: click.Context,
    files: tuple[Path, ...],
    graphs_: tuple[str, ...],
    shape_paths: tuple[Path, ...],
    as_json: bool,
    engine: str,
    store: str | None,
) -> None:
    """Check data against finkg's SHACL shapes (or --shapes).

    A whole store is checked shape by shape, the constraints of one shape and path in one
    query, FINKG_THREADS queries at a time (default: the free cores), with progress on
    stderr: the 950,000-triple demo store takes 12 s on 2 cores (18 s with FINKG_THREADS=1).

    Exit code 0: conforms; 1: violations (listed with focus node, path and message);
    2: the data or shapes could not be read, or the shapes use SHACL the sparql engine
    does not implement (named in the message).
    """
    from finkg.shapes.validate import read_shapes, validate_quads, validate_store

    shapes = read_shapes(shape_paths) if shape_paths else None

    if files:
        from finkg.kg.graphs import Graphs
        from finkg.kg.rdf_files import read_rdf

        graphs = Graphs(_settings(ctx).base_iri)
        # Shapes ignore graph names: a file's plain triples are checked as they are.
        unnamed = NamedNode(graphs.prefix + "file")
        report = validate_quads(
            (q for p in files for q in read_rdf(p, graphs=graphs, graph=unnamed)),
            engine=engine,
            shapes=shapes,
            exact=shapes is not None,  # finkg's shapes check files as the store would hold them
        )
    else:
        with _open(ctx, store, read_only=True) as s, _progress() as bar:
            chosen = [s.graphs.parse(g) for g in graphs_] or None
            report = validate_store(
                s,
                chosen,
                engine=engine,
                shapes=shapes,
                progress=_reporter(bar),
                workers=_settings(ctx).threads,
            )
    if as_json:
        sys.stdout.write(
            json.dumps(
                {
                    "conforms": report.conforms,
                    "triples": report.triples,
                    "violations": [v.__dict__ for v in report.violations],
                },
                indent=2,
            )
            + "\n"
        )
    else:
        out.print(report.text(), highlight=False, markup=False)
    ctx.exit(0 if report.conforms else 1)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@store_option
@click.pass_context
def stats(ctx: click.Context, as_json: bool, store: str | None) -> None:
    """Triples per named graph and instances per class."""
    from finkg.kg.stats import store_stats

    with _open(ctx, store, read_only=True) as s:
        st = store_stats(s)
    if as_json:
        sys.stdout.write(st.model_dump_json(indent=2) + "\n")
        return
    out.print(f"store {st.location}: {st.triples} triples, generation {st.generation}")
    table = Table("graph", "triples")
    for g in st.graphs:
        table.add_row(g.name or g.graph, str(g.triples))
    print_table(table)
    table = Table("graph", "class", "instances")
    for c in st.classes:
        table.add_row(c.name or c.graph, curie(c.class_iri), str(c.instances))
    print_table(table)


@click.command(name="index")
@click.option(
    "--classes",
    metavar="NAMES",
    help="Evidence classes to index: comma-separated fkg: names or IRIs "
    "[default: NewsArticle,FilingPassage,DocumentChunk].",
)
@click.option("--no-vectors", is_flag=True, help="Refresh only the BM25 text index.")
@store_option
@click.pass_context
def index_command(
    ctx: click.Context, classes: str | None, no_vectors: bool, store: str | None
) -> None:
    """Build or refresh the text (BM25) and vector indexes over evidence text.

    Incremental: only new or changed nodes are tokenized and embedded (with the packaged
    MiniLM), removed ones are dropped, and each index is saved atomically. The indexes live
    beside an on-disk store (STORE.indexes/), or under $FINKG_HOME/cache/indexes/ for a
    remote endpoint.
    """
    from finkg.retrieval.index.indexes import parse_classes, refresh_indexes

    settings = _settings(ctx)
    chosen = parse_classes(classes)
    with _open(ctx, store, read_only=True) as s, _progress() as bar:
        task = bar.add_task("index", total=None)
        reports = refresh_indexes(
            s,
            settings,
            classes=chosen,
            vectors=not no_vectors,
            progress=lambda stage, done, total: bar.update(
                task, description=stage, completed=done, total=total
            ),
        )
        generation = s.generation()
    out.print(f"indexes of {s.location} (generation {generation}): {reports.directory}")
    out.print(_refresh_line("text", reports.text, reports.text_nodes), highlight=False)
    if reports.vectors is not None:
        name = f"vectors ({reports.model_id})"
        out.print(_refresh_line(name, reports.vectors, reports.vector_nodes), highlight=False)
        out.print(f"vector search: {reports.search}", highlight=False)


def _refresh_line(name: str, r: Any, nodes: int | None) -> str:
    return (
        f"{name}: {r.added} added, {r.changed} changed, {r.removed} removed, "
        f"{r.unchanged} unchanged in {r.seconds:.1f} s; {nodes} nodes"
    )


@click.command()
@click.argument("iri")
@store_option
@click.pass_context
def audit(ctx: click.Context, iri: str, store: str | None) -> None:
    """Trace a node's provenance: what it was derived from, generated by, used and cited,
    down to source documents (hash, offsets) and the commit that wrote them."""
    from finkg.kg.audit import trace

    with _open(ctx, store, read_only=True) as s:
        hops = trace(s, iri)
    for hop in hops:
        out.print(f"{hop.depth * '  '}{hop.iri}", style="bold")
        for p, o in hop.statements:
            out.print(f"{hop.depth * '  '}  {curie(p)}: {o}")


@click.command()
@click.option(
    "--bind",
    "bind_addr",
    default="127.0.0.1:7878",
    show_default=True,
    help="Host and port to listen on.",
)
@click.option("--read-write", is_flag=True, help="Accept SPARQL updates and Graph Store writes.")
@click.option(
    "--allow-service",
    is_flag=True,
    help="Let queries use SERVICE and updates LOAD (the server then calls other hosts).",
)
@token_file_option
@click.option(
    "--include-users",
    is_flag=True,
    help="Serve the users/* graphs too (personal transactions and profiles; left out by default).",
)
@timeout_option
@store_option
@click.pass_context
def serve(
    ctx: click.Context,
    bind_addr: str,
    read_write: bool,
    allow_service: bool,
    token_file: Path | None,
    include_users: bool,
    timeout_s: float | None,
    store: str | None,
) -> None:
    """Serve a store as a SPARQL 1.1 endpoint (the Oxigraph server); read-only by default.

    Query it at http://HOST:PORT/query, or point finkg at it: --store http://HOST:PORT.
    Queries with SERVICE (and LOAD) are refused unless --allow-service. With a token
    (--token-file, FINKG_TOKEN) every request must send `Authorization: Bearer TOKEN` (401
    otherwise); --read-write beyond loopback needs one. The users/* graphs (personal data)
    are not served unless --include-users (403). The audit and ontology graphs take no
    rewrite (403). SIGTERM or Ctrl-C stops it.
    """
    from finkg.kg.graphs import Graphs
    from finkg.kg.serve import is_loopback, read_token, serve_store

    settings = _settings(ctx)
    location = store or settings.store_location
    limit = settings.query_timeout_s if timeout_s is None else timeout_s
    token = read_token(token_file) if token_file is not None else settings.token

    def ready(url: str) -> None:  # said once it listens, never before a refusal
        err.print(
            f"serving {location} at {url} "
            f"({'read-write' if read_write else 'read-only'}; "
            f"SERVICE {'allowed' if allow_service else 'refused'}; "
            f"query time limit {f'{limit:g} s' if limit else 'none'}; "
            f"{'token required' if token else 'no token'}; "
            f"users' graphs {'served' if include_users else 'not served'}); Ctrl-C stops"
        )
        host = bind_addr.rpartition(":")[0].strip("[]")
        if token is None and not is_loopback(host):
            err.print(
                f"warning: {bind_addr} is reachable from other machines and no token is "
                "asked: anyone who reaches it reads every graph served (--token-file)"
            )

    ctx.exit(
        serve_store(
            Path(location),
            bind=bind_addr,
            read_write=read_write,
            allow_service=allow_service,
            timeout_s=limit,
            token=token,
            include_users=include_users,
            graphs=Graphs(settings.base_iri),
            on_ready=ready,
        )
    )
