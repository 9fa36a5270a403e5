"""finkg's command line: each command parses, makes one library call, prints.

Exit codes: 0 success, 1 validation failures found, 2 usage or input error, 3 internal
error (store or endpoint failure).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from pyoxigraph import NamedNode
from rich.table import Table
from rich.text import Text

from finkg import queries
from finkg.cli_bank import bank
from finkg.cli_impact import impact
from finkg.cli_movement import forecast_command, train_retriever_command
from finkg.cli_qa import ask
from finkg.cli_recommend import recommend
from finkg.cli_rerank import train_reranker_command
from finkg.cli_support import FinkgGroup, _open, _progress, _settings, err, out, store_option
from finkg.config import Settings
from finkg.errors import InputError
from finkg.kg import export as exporting
from finkg.kg.store import BaseStore
from finkg.queries.results import Solutions, python_value


@click.group(cls=FinkgGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="finkg")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """finkg: a point-in-time financial evidence graph.

    Evidence (news, filings, prices, documents, transactions) is RDF in one Oxigraph store,
    stamped with when it became knowable; queries, exports and checks run over it.
    """
    ctx.obj = Settings.from_env()


@cli.command()
@store_option
@click.pass_context
def init(ctx: click.Context, store: str | None) -> None:
    """Create a store (or refresh its ontology graph)."""
    from finkg.kg.setup import init_store

    with _open(ctx, store) as s:
        commit = init_store(s)
        state = "ontology graph written" if commit else "already current"
        out.print(f"store {s.location}: {state}; generation {s.generation()}")


@cli.command()
@click.argument("kind")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--graph", "graph", help="Named graph for RDF triples (news, market, users/<id>, ...)."
)
@click.option(
    "--tz",
    "tz",
    metavar="ZONE",
    help="Zone of naive source timestamps [default: the format's documented zone].",
)
@click.option(
    "--skip-bad",
    is_flag=True,
    help="Skip bad records, writing them with reasons to the rejects file.",
)
@click.option(
    "--rejects",
    "rejects_path",
    type=click.Path(path_type=Path),
    help="Rejects file (JSON Lines) [default: ./finkg-rejects-KIND.jsonl].",
)
@click.option(
    "--chunk-size", default=768, show_default=True, help="documents: the largest chunk, in tokens."
)
@click.option(
    "--chunk-overlap",
    default=128,
    show_default=True,
    help="documents: tokens shared by neighbouring chunks.",
)
@store_option
@click.pass_context
def ingest(
    ctx: click.Context,
    kind: str,
    paths: tuple[Path, ...],
    graph: str | None,
    tz: str | None,
    skip_bad: bool,
    rejects_path: Path | None,
    chunk_size: int,
    chunk_overlap: int,
    store: str | None,
) -> None:
    """Load source files of one KIND: rdf, companies, news, prices, filings, fartrans,
    documents.

    Everything is checked before anything is written (records, then finkg's shapes); a bad
    record stops the ingest with its file, line and field, and nothing is written, unless
    --skip-bad. Records already in the store are skipped, so a repeated or resumed ingest
    adds nothing twice. Documents (PDF, DOCX, XLSX, HTML, TXT, each with an optional
    FILE.meta.json giving its publication time, title and tickers) go through the lifecycle
    Uploaded → Normalized → Analyzed → Indexed → Ready, one audited transition at a time,
    and resume where they stopped.
    """
    from finkg.kg.ingest.common import zone

    with _open(ctx, store) as s:
        target = s.graphs.parse(graph) if graph else None
        if kind == "rdf":
            from finkg.kg.rdf_files import ingest_rdf

            rejects = rejects_path or Path("finkg-rejects-rdf.jsonl")
            done = ingest_rdf(
                s,
                list(paths),
                graph=target,
                skip_bad=skip_bad,
                rejects_file=rejects if skip_bad else None,
            )
            out.print(
                f"{done.quads} quads from {len(paths) - len(done.rejects)} file(s), "
                f"{len(done.rejects)} rejected; generation {s.generation()}"
            )
            if done.rejects:
                out.print(f"rejected files and reasons: {rejects}")
            return
        if kind == "documents":
            _ingest_documents(
                ctx,
                s,
                paths,
                zone(tz) if tz else None,
                skip_bad,
                rejects_path,
                chunk_size,
                chunk_overlap,
            )
            return
        from finkg.kg.ingest import IngestOptions, loader
        from finkg.kg.ingest import ingest as run_ingest

        options = IngestOptions(graphs=s.graphs, tz=zone(tz) if tz else None, graph=target)
        rejects = rejects_path or Path(f"finkg-rejects-{kind}.jsonl")
        with _progress() as bar:
            task = bar.add_task(f"ingest {kind}", total=None)
            report = run_ingest(
                s,
                kind,
                loader(kind),
                list(paths),
                options,
                skip_bad=skip_bad,
                rejects_file=rejects if skip_bad else None,
                progress=lambda stage, n: bar.update(
                    task, advance=n, description=f"{kind}: {stage}"
                ),
            )
        out.print(
            f"{kind}: {report.records} records read, {report.written} written "
            f"({report.quads} quads, {len(report.commits)} commit(s)), "
            f"{report.skipped_existing} already present, {len(report.rejects)} rejected; "
            f"generation {s.generation()}"
        )
        if report.rejects_file:
            out.print(f"rejected records and reasons: {report.rejects_file}")


def _ingest_documents(
    ctx: click.Context,
    s: BaseStore,
    paths: tuple[Path, ...],
    tz: Any,
    skip_bad: bool,
    rejects_path: Path | None,
    size: int,
    overlap: int,
) -> None:
    from finkg.kg.ingest.core import write_rejects
    from finkg.kg.ingest.documents import ingest_documents
    from finkg.kg.lifecycle import Settings as ChunkSettings

    with _progress() as bar:
        task = bar.add_task("documents", total=len(paths))
        report = ingest_documents(
            s,
            list(paths),
            tz=tz,
            settings=ChunkSettings(chunk_size=size, chunk_overlap=overlap),
            progress=lambda _stage, n: bar.update(task, advance=n),
        )
    out.print(
        f"documents: {report.files} file(s), {report.ready} now Ready "
        f"({report.chunks} chunks), {report.already_ready} already Ready, "
        f"{len(report.rejects)} failed; generation {s.generation()}"
    )
    for r in report.rejects:
        err.print(Text.assemble(("failed: ", "bold red"), f"{r.source}: {r.reason}"))
    if report.rejects and skip_bad:
        rejects = rejects_path or Path("finkg-rejects-documents.jsonl")
        write_rejects(rejects, report.rejects)
        out.print(f"failed documents and reasons: {rejects}")
    elif report.rejects:
        ctx.exit(2)


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


@cli.command()
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
)
@click.option("--list", "list_", is_flag=True, help="List the packaged queries and exit.")
@store_option
@click.pass_context
def query(
    ctx: click.Context,
    query: str,
    binds: tuple[str, ...],
    update: bool,
    graphs_option: str | None,
    fmt: str,
    list_: bool,
    store: str | None,
) -> None:
    """Run a SPARQL query: a packaged name, a .rq file, or query text.

    Values are bound as typed RDF terms (never pasted into the text). Read-only unless
    --update is given.

    \b
    finkg query evidence_before --bind company=https://w3id.org/finkg/id/company/ZQAW \\
        --bind before=2019-06-01T09:30:00-04:00
    finkg query --list
    """
    if list_:
        for q in queries.catalog():
            inputs = " ".join(f"?{i.name}:{i.type}{'*' if i.many else ''}" for i in q.inputs)
            out.print(f"[bold]{q.name}[/] ({q.form}) {inputs}\n    {q.summary}")
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
    with _open(ctx, store, read_only=not update) as s:
        result = queries.run(
            s, named, bindings, default_graphs=_dataset(ctx, graphs_option), allow_update=update
        )
        _print_result(result, fmt)
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
            table.add_row(*("" if v is None else _cell(v) for v in row))
        out.print(table)
        err.print(f"{len(result)} row(s)")


def _cell(term: Any) -> str:
    text = str(python_value(term))
    return text if len(text) <= 120 else text[:117] + "..."


@cli.command()
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
    store: str | None,
) -> None:
    """Export graphs or a CONSTRUCT result as Turtle, N-Triples, N-Quads, TriG or JSON-LD.

    JSON-LD is compacted with finkg's context (embedded in the file).
    """

    with _open(ctx, store, read_only=True) as s:
        data = exporting.export_bytes(
            s,
            graphs=list(graphs_),
            query=query_,
            bindings=_parse_bindings(binds),
            fmt=fmt,
            user=user,
        )
    if output is None:
        sys.stdout.buffer.write(data)
    else:
        output.write_bytes(data)
        err.print(f"wrote {len(data)} bytes to {output}")


@cli.command()
@click.option(
    "--file",
    "files",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Validate RDF files instead of the store (repeatable).",
)
@click.option("--graph", "graphs_", multiple=True, metavar="NAME", help="Only these graphs.")
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
    as_json: bool,
    engine: str,
    store: str | None,
) -> None:
    """Check data against finkg's SHACL shapes.

    Exit code 0: conforms; 1: violations (listed with focus node, path and message);
    2: the data could not be read.
    """
    from finkg.shapes.validate import validate_quads, validate_store

    if files:
        from finkg.kg.graphs import Graphs
        from finkg.kg.rdf_files import read_rdf

        graphs = Graphs(_settings(ctx).base_iri)
        # Shapes ignore graph names: a file's plain triples are checked as they are.
        unnamed = NamedNode(graphs.prefix + "file")
        report = validate_quads(
            (q for p in files for q in read_rdf(p, graphs=graphs, graph=unnamed)), engine=engine
        )
    else:
        with _open(ctx, store, read_only=True) as s:
            chosen = [s.graphs.parse(g) for g in graphs_] or None
            report = validate_store(s, chosen, engine=engine)
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


@cli.command()
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
    out.print(table)
    table = Table("graph", "class", "instances")
    for c in st.classes:
        table.add_row(c.name or c.graph, _curie(c.class_iri), str(c.instances))
    out.print(table)


@cli.command(name="index")
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
    from finkg.retrieval.indexes import parse_classes, refresh_indexes

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


def _refresh_line(name: str, r: Any, nodes: int | None) -> str:
    return (
        f"{name}: {r.added} added, {r.changed} changed, {r.removed} removed, "
        f"{r.unchanged} unchanged in {r.seconds:.1f} s; {nodes} nodes"
    )


def _curie(iri: str) -> str:
    from finkg.ontology.terms import PREFIXES

    for prefix, ns in PREFIXES.items():
        if iri.startswith(ns):
            return f"{prefix}:{iri[len(ns) :]}"
    return iri


@cli.command()
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
        out.print(f"[bold]{hop.depth * '  '}{hop.iri}[/]")
        for p, o in hop.statements:
            out.print(f"{hop.depth * '  '}  {_curie(p)}: {o}", highlight=False)


@cli.command()
@click.option(
    "--bind",
    "bind_addr",
    default="127.0.0.1:7878",
    show_default=True,
    help="Host and port to listen on.",
)
@click.option("--read-write", is_flag=True, help="Accept SPARQL updates and Graph Store writes.")
@store_option
@click.pass_context
def serve(ctx: click.Context, bind_addr: str, read_write: bool, store: str | None) -> None:
    """Serve a store as a SPARQL 1.1 endpoint (the Oxigraph server); read-only by default.

    Query it at http://HOST:PORT/query, or point finkg at it: --store http://HOST:PORT
    """
    from finkg.kg.serve import serve_store

    location = store or _settings(ctx).store_location
    err.print(
        f"serving {location} at http://{bind_addr}/query "
        f"({'read-write' if read_write else 'read-only'}); Ctrl-C stops"
    )
    ctx.exit(serve_store(Path(location), bind=bind_addr, read_write=read_write))


@cli.command()
@click.option(
    "--files",
    "files_dir",
    type=click.Path(path_type=Path),
    help="Where the world's files go [default: $FINKG_HOME/demo-files].",
)
@click.option("--seed", default=7, show_default=True, help="World seed.")
@click.option("--small", is_flag=True, help="A small world (4 tickers, 80 sessions, 6 users).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@store_option
@click.pass_context
def demo(
    ctx: click.Context,
    files_dir: Path | None,
    seed: int,
    small: bool,
    as_json: bool,
    store: str | None,
) -> None:
    """Build the synthetic demo market and load it through finkg's real path.

    Writes the world's files (real formats, labelled synthetic), ingests them into the store
    (the default store unless --store; only a previous demo store is ever replaced),
    validates it, prints counts and a point-in-time query, and exports one subgraph as
    JSON-LD. Exit code 1 if the store does not conform to the shapes.
    """
    from finkg.demo.run import run_demo
    from finkg.demo.world import WorldSpec

    settings = _settings(ctx)
    spec = WorldSpec(seed=seed, tickers=4, sessions=80, users=6) if small else WorldSpec(seed=seed)
    with err.status("demo") as status:
        report = run_demo(
            store_location=store or settings.store_location,
            files_dir=files_dir or settings.home / "demo-files",
            settings=settings,
            spec=spec,
            progress=lambda msg: status.update(msg),
        )
    if as_json:
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
        ctx.exit(0 if report.conforms else 1)
    _print_demo(report)
    ctx.exit(0 if report.conforms else 1)


def _print_demo(r: Any) -> None:
    out.print(f"[bold]finkg demo[/]: {r.synthetic_notice}", highlight=False)
    out.print(f"files: {r.files_dir}\nstore: {r.store}", highlight=False)
    table = Table(
        "kind", "files", "records", "written", "already present", "rejected", title="ingest"
    )
    for line in r.ingests:
        table.add_row(
            line.kind,
            str(line.files),
            str(line.records),
            str(line.written),
            str(line.skipped_existing),
            str(line.rejected),
        )
    out.print(table)
    if r.skipped_kinds:
        out.print(f"not loaded (no loader yet): {', '.join(r.skipped_kinds)}")
    state = "[green]conforms[/]" if r.conforms else f"[red]{r.violations} violation(s)[/]"
    out.print(f"shapes: {state} ({r.checked_triples} triples checked)")
    table = Table(
        "graph", "triples", title=f"{r.stats.triples} triples, generation {r.stats.generation}"
    )
    for g in r.stats.graphs:
        table.add_row(g.name or g.graph, str(g.triples))
    out.print(table)
    out.print(f"\n[bold]point in time[/]: news anchor {r.anchor}", highlight=False)
    out.print(
        f'  "{r.anchor_title}"\n  published {r.published}, decision time {r.decision_time}',
        highlight=False,
    )
    out.print(
        f"  {r.evidence_total} evidence nodes about the company are available strictly "
        "before the decision time; the newest:"
    )
    table = Table("available at", "family", "text")
    for e in r.evidence:
        table.add_row(e.available_at, e.family, e.text)
    out.print(table)
    out.print(
        f"subgraph (JSON-LD, finkg context): {r.subgraph_path} ({r.subgraph_triples} triples)",
        highlight=False,
    )


cli.add_command(impact)
cli.add_command(recommend)
cli.add_command(forecast_command)
cli.add_command(train_retriever_command)
cli.add_command(ask)
cli.add_command(bank)
cli.add_command(train_reranker_command)


def main() -> None:
    cli(prog_name="finkg")


if __name__ == "__main__":
    main()
