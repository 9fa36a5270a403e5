"""`finkg impact run | feedback | backtest`: the event-impact job of paper 000 on the CLI.

Each command parses its options, makes one library call (`finkg.tasks.impact.job`), prints.
Dates are New York session dates (`2020-01-01`) or zoned instants; a period is [--from,
--to] with --to inclusive.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

import click

from finkg.cli.support import (
    _open,
    _progress,
    _reading,
    _reporter,
    _settings,
    concurrency_option,
    out,
    store_option,
)
from finkg.errors import InputError
from finkg.retrieval.pools import PoolSpec
from finkg.tasks.head_choice import AUTO
from finkg.tasks.impact.head_feed import CANDIDATES
from finkg.tasks.impact.predict import ImpactConfig
from finkg.tasks.span import Span

NY = ZoneInfo("America/New_York")
DEFAULT_VARIANTS = "static,cited"

proxy_option = click.option(
    "--proxy", default=ImpactConfig.proxy, show_default=True, help="Market proxy ticker."
)


def _instant(text: str, field: str, *, end: bool = False) -> dt.datetime:
    """A date (midnight New York; the next midnight for an inclusive end) or a zoned instant."""
    try:
        if len(text) == 10:
            day = dt.date.fromisoformat(text) + dt.timedelta(days=1 if end else 0)
            return dt.datetime.combine(day, dt.time(0), NY)
        value = dt.datetime.fromisoformat(text)
    except ValueError:
        raise InputError(
            "not a date or an instant", field=field, value=text, hint="e.g. 2020-01-31"
        ) from None
    if value.tzinfo is None:
        raise InputError(
            "an instant needs a zone", field=field, value=text, hint="e.g. 2020-01-31T16:00-05:00"
        )
    return value


def _span(start: str, end: str, field: str) -> Span:
    span = Span(_instant(start, f"{field} from"), _instant(end, f"{field} to", end=True))
    if span.start >= span.end:
        raise InputError("the period is empty", field=field, value=f"{start}..{end}")
    return span


def _validation(text: str | None, test: Span) -> Span:
    if text is None:  # the year before the test period, as in paper 000 (2020 for 2021-23)
        start = test.start.replace(year=test.start.year - 1)
        return Span(start, test.start)
    if ":" not in text:
        raise InputError("a period is FROM:TO", field="--validation", value=text)
    a, b = text.split(":", 1)
    return _span(a, b, "--validation")


def _variants(text: str) -> list[str]:
    return [v.strip() for v in text.split(",") if v.strip()]


@click.group()
def impact() -> None:
    """Event-impact predictions on news anchors (paper 000): run, feed back, backtest."""


@impact.command("run")
@click.option("--from", "start", required=True, help="First publication date of the anchors.")
@click.option("--to", "end", required=True, help="Last publication date (inclusive).")
@click.option(
    "--variant",
    "variants",
    default=DEFAULT_VARIANTS,
    show_default=True,
    help="Comma-separated: static, cited, selected-evidence, shuffled-event-types, "
    "shuffled-labels[:SEED].",
)
@click.option("--validation", help="FROM:TO period for class weights [default: the year before].")
@proxy_option
@click.option("--lambda", "lam", default=0.30, show_default=True, help="Memory strength.")
@click.option("--delta", default=0.20, show_default=True, help="Memory clip.")
@click.option(
    "--peer-share",
    default=PoolSpec.peer_share,
    show_default=True,
    help="The pool's share of sector-peer evidence (paper 000: 0.2, every peer passage "
    "read); 0 reads the company's evidence alone, much faster on a large store.",
)
@click.option(
    "--reply",
    type=click.Choice(["scored", "full", "compact"]),
    default="scored",
    show_default=True,
    help="How the reader decides: scored (the log-probabilities of the whole options up, "
    "neutral and down per horizon, through --head; the cited evidence scored likewise), or a "
    "generated JSON reply with reasons (full, paper 000's schema) or without (compact).",
)
@click.option(
    "--head",
    type=click.Choice([*CANDIDATES, AUTO]),
    default="prior",
    show_default=True,
    help="The decision head of a scored reply: class-prior correction, a multinomial model "
    "over the scores and the market card, the card alone, or the raw argmax; fitted only on "
    "labels matured before each decision, starting from the scored validation decisions "
    "stored (run `--variant static` over the validation period first). momentum and tone "
    "decide by the no-skill rule alone; auto chooses among all six on the validation "
    "decisions (fitted on their first 60 %, macro-F1 on the rest) and says which.",
)
@concurrency_option
@store_option
@click.pass_context
def run_command(
    ctx: click.Context,
    start: str,
    end: str,
    variants: str,
    validation: str | None,
    proxy: str,
    lam: float,
    delta: float,
    peer_share: float,
    reply: str,
    head: str,
    concurrency: int | None,
    store: str | None,
) -> None:
    """Predict every news anchor of a period, feeding matured labels back in time order.

    Each variant writes its own predictions and runs to the outputs graph; memory variants
    update their source memory in the memory graph as labels mature, and every variant's
    decision heads (a scored reply) learn from its own matured labels. With an endpoint
    reader, the anchors of one decision session are read --concurrency at a time.
    """
    import dataclasses

    from finkg.retrieval.memory.source import MemoryParams
    from finkg.tasks.impact.job import run_job

    test = _span(start, end, "--from/--to")
    config = ImpactConfig(
        proxy=proxy,
        memory=dataclasses.replace(MemoryParams(), lam=lam, delta=delta),
        reply=reply,
        head=head,
        pool=PoolSpec(peer_share=peer_share),
    )
    with _open(ctx, store) as s, _progress() as bar:
        progress = _reporter(bar)
        validated, runs = run_job(
            s,
            _reading(ctx, concurrency),
            test=test,
            validation_span=_validation(validation, test),
            variants=_variants(variants),
            config=config,
            progress=progress,
        )
    out.print(
        f"validation: {validated.labels} labelled anchor-horizons; class weights "
        f"{ {h: {y: round(w, 2) for y, w in ws.items()} for h, ws in validated.weights.items()} }"
    )
    choice = next((r.head_choice for r in runs.values() if r.head_choice), None)
    if choice is not None:
        out.print(f"decision head: {choice.describe()}")
    for variant, summary in runs.items():
        fb = summary.feedback
        heads = (
            f"; {summary.head_items} matured labels reached its heads" if reply == "scored" else ""
        )
        out.print(
            f"{variant}: {summary.predictions} predictions, {summary.json_invalid} without valid "
            f"JSON; {summary.reads} reads made, {summary.cached} anchors answered by the cache; "
            f"feedback: {fb.outcomes} outcomes, {fb.updates} memory updates, "
            f"{fb.uncited} uncited signals{heads}"
        )


@impact.command("feedback")
@click.option("--as-of", "as_of", required=True, help="Feed back what matured by this instant.")
@click.option("--since", required=True, help="The first prediction date to look at.")
@click.option("--variant", "variants", default="cited", show_default=True)
@click.option("--validation", required=True, help="FROM:TO period for class weights.")
@proxy_option
@store_option
@click.pass_context
def feedback_command(
    ctx: click.Context,
    as_of: str,
    since: str,
    variants: str,
    validation: str,
    proxy: str,
    store: str | None,
) -> None:
    """Outcomes (residual-return labels) and memory updates for matured predictions.

    Idempotent: feeding back the same span twice adds nothing.
    """
    from finkg.tasks.impact.job import feedback_job

    instant = _instant(as_of, "--as-of")
    first = _instant(since, "--since").date()
    with _open(ctx, store) as s:
        reports = feedback_job(
            s,
            as_of=instant,
            since=first,
            variants=_variants(variants),
            validation_span=_validation(validation, Span(instant, instant)),
            proxy=proxy,
        )
    for variant, r in reports.items():
        skipped = sum(r.no_label.values())
        out.print(
            f"{variant}: {r.signals} matured signals, {r.outcomes} outcomes, {r.updates} memory "
            f"updates, {r.uncited} uncited, {skipped} without a label"
        )


@impact.command("backtest")
@click.option("--from", "start", required=True, help="First prediction date.")
@click.option("--to", "end", required=True, help="Last prediction date (inclusive).")
@click.option("--variant", "variants", default=DEFAULT_VARIANTS, show_default=True)
@proxy_option
@click.option("--report", type=click.Path(path_type=Path), help="Write a Markdown report here.")
@store_option
@click.pass_context
def backtest_command(
    ctx: click.Context,
    start: str,
    end: str,
    variants: str,
    proxy: str,
    report: Path | None,
    store: str | None,
) -> None:
    """Metrics of paper 000 §4 and the §4.4 portfolio for stored predictions."""
    from finkg.evaluation.report import event_table, impact_report, portfolio_table
    from finkg.retrieval.index.embed import open_embedder
    from finkg.retrieval.index.live import LiveVectors
    from finkg.tasks.impact.job import backtest_job

    test = _span(start, end, "--from/--to")
    png = report.with_suffix(".png") if report else None
    settings = _settings(ctx)
    with _open(ctx, store, read_only=True) as s:
        vectors = LiveVectors(
            s, open_embedder(settings.embedder, threads=settings.threads, device=settings.device)
        )
        results, benchmarks = backtest_job(
            s,
            test=test,
            variants=_variants(variants),
            proxy=proxy,
            png=png,
            vectors=vectors,
            near_duplicate=ImpactConfig().pool.near_duplicate,
        )
    for line in event_table(results):
        out.print(line, highlight=False)
    out.print()
    perfs = [r.portfolio for r in results if r.portfolio is not None]
    for line in portfolio_table([*perfs, *benchmarks]):
        out.print(line, highlight=False)
    if report:
        report.write_text(
            impact_report(
                title="Event-impact backtest",
                setup=[
                    f"Predictions {test.first_day} to {test.last_day}; proxy {proxy}; "
                    f"variants {variants}."
                ],
                results=results,
                benchmarks=benchmarks,
                png=png.name if png else None,
            )
        )
        out.print(f"report: {report}")
