"""`finkg facts`: a company's statement facts as a table, CSV, JSON or JSON-LD."""

from __future__ import annotations

import csv
import datetime as dt
import json
import sys

import click
from rich.table import Table

from finkg.cli.support import _open, err, out, parse_instant, print_table, store_option

FORMATS = ("table", "csv", "json", "jsonld")


@click.command("facts")
@click.argument("company")
@click.option("--period", metavar="FY2019", help="Only this fiscal year (FY2019, FY19 or 2019).")
@click.option(
    "--concept",
    "concepts",
    multiple=True,
    metavar="NAME",
    help="Only this core line item (Revenue, Inventories, ...; repeatable).",
)
@click.option(
    "--as-of",
    "as_of",
    help="Only facts available before this date (YYYY-MM-DD) or zoned instant [now].",
)
@click.option("--tz", default="America/New_York", show_default=True, help="Zone of a date alone.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@store_option
@click.pass_context
def facts(
    ctx: click.Context,
    company: str,
    period: str | None,
    concepts: tuple[str, ...],
    as_of: str | None,
    tz: str,
    fmt: str,
    store: str | None,
) -> None:
    """COMPANY's statement facts (its ticker): every figure of the primary statements of its
    filings and documents, with its line item, concept, period, value, unit, page and the
    chunk it was read from; only what was available before --as-of.

    \b
    finkg facts BBY --period FY2019 --concept Inventories
    finkg facts BBY --format jsonld > bby-facts.jsonld
    """
    from finkg.kg.facts.listing import facts_of, fiscal_year, to_jsonld
    from finkg.tasks.qa.setup import resolve_company

    instant = parse_instant(as_of, tz, field="--as-of") if as_of else dt.datetime.now(dt.UTC)
    year = fiscal_year(period) if period else None
    with _open(ctx, store, read_only=True) as s:
        node = resolve_company(s, company)
        assert node is not None  # a ticker was given
        found = facts_of(s, node, before=instant, year=year, concepts=concepts)
        if fmt == "jsonld":
            sys.stdout.write(to_jsonld(s, found))
            return
    rows = [f.row() for f in found]
    if fmt == "json":
        sys.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
    elif fmt == "csv":
        writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]) if rows else ["fact"])
        writer.writeheader()
        writer.writerows(rows)
    else:
        table = Table("FY", "statement", "line item", "concept", "value", "unit", "page")
        for f in found:
            table.add_row(
                str(f.year),
                f.kind,
                f.label,
                f.concept.value.rsplit("#", 1)[-1] if f.concept else "",
                f"{f.value:,f}",
                f.unit,
                str(f.page or ""),
            )
        print_table(table)
        out.print(f"{len(found)} fact(s)") if out.is_terminal else err.print(
            f"{len(found)} fact(s)"
        )
