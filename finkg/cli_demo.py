"""`finkg demo`: the synthetic market written, loaded, checked and queried end to end."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from finkg.cli_support import _settings, err, out, store_option


@click.command()
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
