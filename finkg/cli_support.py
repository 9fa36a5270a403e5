"""What every finkg command shares: consoles, error reporting, settings, the store option."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console
from rich.text import Text

from finkg.config import Settings
from finkg.errors import FinkgError
from finkg.kg.store import BaseStore, open_store

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


class FinkgClickError(click.ClickException):
    """A FinkgError at the CLI boundary, keeping its exit code."""

    def __init__(self, error: FinkgError) -> None:
        super().__init__(str(error))
        self.exit_code = error.exit_code

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


def _progress() -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )
