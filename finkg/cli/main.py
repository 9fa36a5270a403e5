"""finkg's command line: the `finkg` group and its entry point; each command parses, makes
one library call, prints (one module per command group beside this one).

Exit codes: 0 success, 1 validation failures found, 2 usage or input error, 3 internal
error (store or endpoint failure).
"""

from __future__ import annotations

import click

from finkg.cli.adapt import train_reader_command
from finkg.cli.demo import demo
from finkg.cli.facts import facts
from finkg.cli.impact import impact
from finkg.cli.ingest import ingest
from finkg.cli.mcp import mcp
from finkg.cli.movement import forecast_command, train_retriever_command
from finkg.cli.qa import ask, bank, train_reranker_command
from finkg.cli.query import export, query
from finkg.cli.recommend import recommend
from finkg.cli.store import audit, index_command, init, serve, stats, validate
from finkg.cli.support import FinkgGroup
from finkg.config import Settings


@click.group(cls=FinkgGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="finkg")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """finkg: a point-in-time financial evidence graph.

    Evidence (news, filings, prices, documents, transactions) is RDF in one Oxigraph store,
    stamped with when it became knowable; queries, exports and checks run over it.
    """
    ctx.obj = Settings.from_env()


cli.add_command(init)
cli.add_command(validate)
cli.add_command(stats)
cli.add_command(index_command)
cli.add_command(audit)
cli.add_command(serve)
cli.add_command(ingest)
cli.add_command(query)
cli.add_command(export)
cli.add_command(demo)
cli.add_command(impact)
cli.add_command(recommend)
cli.add_command(forecast_command)
cli.add_command(train_retriever_command)
cli.add_command(ask)
cli.add_command(facts)
cli.add_command(bank)
cli.add_command(train_reranker_command)
cli.add_command(train_reader_command)
cli.add_command(mcp)


def main() -> None:
    cli(prog_name="finkg")


if __name__ == "__main__":
    main()
