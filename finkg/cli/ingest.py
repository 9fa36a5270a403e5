"""`finkg ingest`: source files of one kind into the store, checked before anything is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.text import Text

from finkg.cli.support import _open, _progress, err, out, store_option
from finkg.kg.store import BaseStore


@click.command()
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
    "--chunk-size",
    type=click.IntRange(min=16),
    default=None,
    help="documents: the largest chunk, in tokens [default: 192, what finkg ask's retrieval "
    "was chosen on; paper 003 used 768].",
)
@click.option(
    "--chunk-overlap",
    type=click.IntRange(min=0),
    default=None,
    help="documents: tokens shared by neighbouring chunks [default: 32; paper 003: 128].",
)
@click.option(
    "--no-facts",
    is_flag=True,
    help="documents: do not read the primary statements into statement facts.",
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
    chunk_size: int | None,
    chunk_overlap: int | None,
    no_facts: bool,
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
                not no_facts,
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
            f"{report.skipped_existing} already present, {report.revisions} revision(s) of "
            f"stored records, {len(report.rejects)} rejected; generation {s.generation()}"
        )
        if report.kept_stored:
            out.print(
                f"{report.kept_stored} record(s) with no time of their own (companies, assets, "
                "profiles) differ from the stored ones, which were kept: change a stored node "
                "with `finkg query --update`"
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
    size: int | None,
    overlap: int | None,
    facts: bool,
) -> None:
    from finkg.kg.ingest.core import write_rejects
    from finkg.kg.ingest.documents import ingest_documents
    from finkg.kg.lifecycle import Settings as ChunkSettings

    default = ChunkSettings()
    chunking = ChunkSettings(
        chunk_size=default.chunk_size if size is None else size,
        chunk_overlap=default.chunk_overlap if overlap is None else overlap,
        facts=facts,
    )
    with _progress() as bar:
        task = bar.add_task("documents", total=len(paths))
        report = ingest_documents(
            s,
            list(paths),
            tz=tz,
            settings=chunking,
            progress=lambda _stage, n: bar.update(task, advance=n),
        )
    out.print(
        f"documents: {report.files} file(s), {report.ready} now Ready "
        f"({report.chunks} chunks, {report.facts} statement facts), "
        f"{report.already_ready} already Ready, "
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
