"""`finkg demo`: the synthetic market written, loaded, checked and queried end to end."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from finkg.cli.support import _open, _settings, err, out, print_table, store_option


@click.command()
@click.option(
    "--files",
    "files_dir",
    type=click.Path(path_type=Path),
    help="Where the world's files go [default: $FINKG_HOME/demo-files].",
)
@click.option("--seed", default=7, show_default=True, help="World seed.")
@click.option("--small", is_flag=True, help="A small world (4 tickers, 80 sessions, 6 users).")
@click.option(
    "--impact",
    is_flag=True,
    help="Build the world with its source-reliability signal planted densely (4 tickers), "
    "then run the event-impact job (paper 000) on its late news: static, memory and "
    "shuffled-label variants, feedback, backtest, report (a few minutes).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@store_option
@click.pass_context
def demo(
    ctx: click.Context,
    files_dir: Path | None,
    seed: int,
    small: bool,
    impact: bool,
    as_json: bool,
    store: str | None,
) -> None:
    """Build the synthetic demo market and load it through finkg's real path.

    Writes the world's files (real formats, labelled synthetic), ingests them into the store
    (the default store unless --store; only a previous demo store is ever replaced),
    validates it, prints counts and a point-in-time query, and exports one subgraph as
    JSON-LD. With --impact, the world is built with its source-reliability signal planted
    densely, and the event-impact job then runs on its late news with the rule analyst as
    its reader (`finkg.tasks.impact.demo`); its report and equity curve are written beside
    the world's files. Exit code 1 if the store does not conform to the
    shapes.
    """
    from finkg.demo.run import run_demo
    from finkg.demo.world import WorldSpec
    from finkg.tasks.impact.demo import demo_impact, impact_world, spans

    settings = _settings(ctx)
    spec = WorldSpec(seed=seed, tickers=4, sessions=80, users=6) if small else WorldSpec(seed=seed)
    if impact:
        spans(spec)  # a world too short for the job is refused before any work
        spec = impact_world(spec)
    files = files_dir or settings.home / "demo-files"
    location = store or settings.store_location
    found = None
    with err.status("demo") as status:
        report = run_demo(
            store_location=location,
            files_dir=files,
            settings=settings,
            spec=spec,
            progress=lambda msg: status.update(msg),
        )
        if impact and report.conforms:
            with _open(ctx, location) as s:
                found = demo_impact(s, settings, spec, files.parent, progress=status.update)
    if as_json:
        payload = report.model_dump(mode="json")
        if found is not None:
            payload["impact"] = found.model_dump(mode="json")
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        ctx.exit(0 if report.conforms else 1)
    _print_demo(report)
    if found is not None:
        _print_impact(found)
    ctx.exit(0 if report.conforms else 1)


def _print_impact(r: Any) -> None:
    out.print(
        Text.assemble(
            "\n",
            ("event impact", "bold"),
            f" (paper 000) on the world's late news: predictions {r.test}, "
            f"class weights from {r.validation}, reader {r.reader}, memory {r.memory}",
        )
    )
    table = Table(
        "variant", "predicted", "labelled", "macro\nF1", "non-neutral\nF1", "rank\nIC", "IC\ndays"
    )
    for v in r.variants:
        table.add_row(
            v.variant,
            str(v.predictions),
            str(v.labelled),
            f"{v.macro_f1:.3f}",
            f"{v.non_neutral_f1:.3f}",
            f"{v.rank_ic:.3f}",
            str(v.rank_ic_days),
        )
    print_table(table)
    out.print(
        "rank IC: the mean daily Spearman correlation of the signals with the residual returns "
        "over the days with three tickers or more predicted (IC days); on a few days it is "
        "mostly noise."
    )
    table = Table("strategy", "annual return", "Sharpe", "max drawdown", title="top-10 portfolio")
    for p in r.portfolios:
        table.add_row(
            p.strategy, f"{p.annual_return:.1%}", f"{p.sharpe:.2f}", f"{p.max_drawdown:.1%}"
        )
    print_table(table)
    out.print(f"report: {r.report} (equity curve {r.equity_curve})", highlight=False)


def _print_demo(r: Any) -> None:
    out.print(Text.assemble(("finkg demo", "bold"), f": {r.synthetic_notice}"))
    out.print(f"files: {r.files_dir}\nstore: {r.store}")
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
    print_table(table)
    if r.skipped_kinds:
        out.print(f"not loaded (no loader yet): {', '.join(r.skipped_kinds)}")
    table = Table("graph", "triples")
    users = [g for g in r.stats.graphs if (g.name or "").startswith("users/")]
    for g in r.stats.graphs:
        if g not in users:
            table.add_row(g.name or g.graph, f"{g.triples:,}")
    if users:  # one graph per customer: one row for them all
        total = sum(g.triples for g in users)
        table.add_row(f"users/* ({len(users)} customers, one graph each)", f"{total:,}")
    print_table(table)
    out.print(Text.assemble("\n", ("point in time", "bold"), f": news anchor {r.anchor}"))
    out.print(f'  "{r.anchor_title}"\n  published {r.published}, decision time {r.decision_time}')
    out.print(
        f"  {r.evidence_total:,} evidence nodes about the company are available strictly "
        "before the decision time; the newest of each kind:"
    )
    table = Table("available at", "kind", "first line")
    for e in r.evidence:
        table.add_row(e.available_at, e.kind, e.text)
    print_table(table)
    out.print(
        f"subgraph (JSON-LD, finkg context): {r.subgraph_path} ({r.subgraph_triples} triples)"
    )
    state = ("conforms", "green") if r.conforms else (f"{r.violations} violation(s)", "red")
    out.print(
        Text.assemble(
            "\n",
            ("built", "bold"),
            f": the store {r.store}, {r.stats.triples:,} triples in "
            f"{len(r.stats.graphs)} named graphs (generation {r.stats.generation}); shapes: ",
            state,
            f" ({r.checked_triples:,} triples checked)",
        )
    )
    out.print(Text.assemble(("next", "bold"), ", try (the README's tour says what each does):"))
    for command in r.try_next:
        out.print(f"  {command}")
