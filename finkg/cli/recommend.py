"""`finkg recommend`: three assets for one customer as of a date (paper 004) on the CLI.

The command parses its options, makes one library call (`finkg.tasks.recommend.pipeline`), prints.
"""

from __future__ import annotations

import datetime as dt
import json

import click

from finkg.cli.support import _open, _settings, out, parse_instant, store_option

DEFAULT_TZ = "Europe/Athens"  # FAR-Trans's zone, as the loader reads its dates


def parse_date(text: str, tz: str) -> dt.datetime:
    return parse_instant(text, tz, field="--date")


@click.command("recommend")
@click.option("--user", required=True, help="The customer id (their graph is users/ID).")
@click.option("--date", "date", required=True, help="Recommendation date (YYYY-MM-DD) or instant.")
@click.option(
    "--variant",
    default="multi",
    show_default=True,
    help="multi (PTR then MR with its context), parallel (MR without it), full (whole-graph "
    "baseline, cut to the context window).",
)
@click.option("--tz", default=DEFAULT_TZ, show_default=True, help="Zone of a date given alone.")
@click.option("--json", "as_json", is_flag=True, help="Print the recommendation as JSON.")
@store_option
@click.pass_context
def recommend(
    ctx: click.Context,
    user: str,
    date: str,
    variant: str,
    tz: str,
    as_json: bool,
    store: str | None,
) -> None:
    """Recommend three assets to a customer from data available before --date (paper 004).

    The reader picks transactions from the customer's graph, then ten-week summaries and
    assets from the market graph; their subgraphs (JSON-LD) ground three recommendations,
    each citing graph nodes. Only the customer's graph and the market graph are read. The
    recommendation and its run are written to the outputs graph. Exit 1 when the reader's
    reply never met the contract (nothing is written).
    """
    from finkg.tasks.recommend.pipeline import RecommendConfig, run_recommendation

    config = RecommendConfig(variant=variant)
    as_of = parse_date(date, tz)
    with _open(ctx, store) as s:
        result = run_recommendation(s, _settings(ctx), user=user, as_of=as_of, config=config)
    assert result.output is not None
    picks = [r.model_dump() for r in result.output.recommendations]
    if as_json:
        doc = {
            "recommendation": result.recommendation.value if result.recommendation else None,
            "user": user,
            "as_of": as_of.isoformat(),
            "variant": variant,
            "recommendations": picks,
            "prompt_tokens": result.prompt_tokens,
            "seconds": round(result.seconds, 2),
        }
        out.print_json(json.dumps(doc))
        return
    out.print(f"{variant} recommendation for {user} as of {as_of.isoformat()}:", highlight=False)
    for k, pick in enumerate(picks, start=1):
        out.print(f"{k}. {pick['asset']}\n   {pick['reason']}", highlight=False)
        for node in pick["evidence"]:
            out.print(f"   - {node}", highlight=False)
    assert result.recommendation is not None
    state = "written" if result.written else "already stored"
    out.print(
        f"{state}: {result.recommendation.value} ({result.prompt_tokens} prompt tokens, "
        f"{result.seconds:.1f} s)",
        highlight=False,
    )
