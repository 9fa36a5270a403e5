"""What every finkg command shares: consoles, error reporting, settings, the store option."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from finkg.config import Settings
from finkg.errors import FinkgError
from finkg.kg.ingest.common import parse_instant as parse_instant  # the commands' import
from finkg.kg.store import BaseStore, open_store
from finkg.queries.bound import Triples

# Nothing finkg prints is read as markup: data holds "[...]" and ":label:" (rich would style
# the one and turn the other into an emoji), so styles are given as `style=` or `Text`.
out = Console(soft_wrap=True, markup=False, emoji=False, highlight=False)
err = Console(stderr=True, soft_wrap=True, markup=False, emoji=False, highlight=False)


def curie(iri: str) -> str:
    """`fkg:about` for an IRI in one of finkg's prefixes (PREFIXES), else the IRI whole."""
    from finkg.ontology.terms import PREFIXES

    for prefix, ns in PREFIXES.items():
        if iri.startswith(ns):
            return f"{prefix}:{iri[len(ns) :]}"
    return iri


def state_cuts(name: str, triples: object) -> None:
    """Say on stderr what a bounded CONSTRUCT result left out (`finkg.queries.bound`)."""
    if not isinstance(triples, Triples) or not triples.cuts:
        return
    err.print(
        f"{name}: bounded to {triples.limit} triples per selected node, predicate and direction "
        f"(a deterministic sample); {triples.left_out} left out:"
    )
    for cut in triples.cuts:
        err.print(f"  kept {cut.describe(curie)}")
    err.print("  --bound N keeps N of each, --bound 0 all of them")


def print_table(table: Table) -> None:
    """Print `table` with every value whole: in a terminal a value too wide for its column
    folds onto the next line; elsewhere (piped, redirected) the table is as wide as its widest
    row, so another program reads each value on one line."""
    for column in table.columns:
        column.overflow = "fold"
    if out.is_terminal:
        out.print(table)
        return
    natural = Measurement.get(out, out.options.update_width(1_000_000), table).maximum
    width = out.width  # print(width=) cannot widen past the console's own width
    out.width = max(natural, width)
    try:
        out.print(table)
    finally:
        out.width = width


class FinkgClickError(click.ClickException):
    """A FinkgError at the CLI boundary, keeping its exit code."""

    def __init__(self, error: FinkgError) -> None:
        super().__init__(str(error))
        self._exit_code = error.exit_code

    # click declares `exit_code` on the class; this error's code is the FinkgError's own
    @property
    def exit_code(self) -> int:
        return self._exit_code

    @exit_code.setter
    def exit_code(self, code: int) -> None:
        self._exit_code = code

    def show(self, file: Any = None) -> None:
        err.print(Text.assemble(("error: ", "bold red"), self.message), highlight=False)


class FinkgGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except FinkgError as e:
            raise FinkgClickError(e) from e


def _settings(ctx: click.Context) -> Settings:
    return ctx.find_object(Settings) or Settings.from_env()


def _open(ctx: click.Context, store: str | None, *, read_only: bool = False) -> BaseStore:
    settings = _settings(ctx)
    return open_store(store or settings.store_location, settings=settings, read_only=read_only)


store_option = click.option(
    "--store",
    "store",
    metavar="LOCATION",
    help="Store directory or http(s):// SPARQL endpoint [default: $FINKG_STORE or ~/.finkg/store].",
)


token_file_option = click.option(
    "--token-file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    metavar="FILE",
    help="Ask every request for this bearer token (the file's first line) [default: "
    "$FINKG_TOKEN, else none].",
)

timeout_option = click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=0),
    default=None,
    metavar="SECONDS",
    help="Query time limit [default: $FINKG_QUERY_TIMEOUT or 60; 0: none].",
)


concurrency_option = click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Prompts read at once through an endpoint reader ($FINKG_LLM_URL); a local reader "
    "reads one at a time [default: $FINKG_CONCURRENCY or 1].",
)


def _reading(ctx: click.Context, concurrency: int | None) -> Settings:
    """The settings, with `--concurrency` when it was given."""
    settings = _settings(ctx)
    return settings.with_(concurrency=concurrency) if concurrency else settings


def _progress() -> Any:
    """A progress bar on stderr; plain lines where stderr is no terminal (`cli/progress.py`)."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    from finkg.cli.progress import LoggedProgress

    return LoggedProgress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )


def _reporter(bar: Any) -> Any:
    """A progress callback (stage, done, total) that keeps one bar per stage."""
    tasks: dict[str, int] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if stage not in tasks:
            tasks[stage] = bar.add_task(stage, total=total or None)
        bar.update(tasks[stage], completed=done, total=total or None)

    return progress
