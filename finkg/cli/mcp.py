"""`finkg mcp`: the store as tools for an LLM agent (Model Context Protocol), on stdio or
Streamable HTTP (`finkg.agent.server`)."""

from __future__ import annotations

from pathlib import Path

import click

from finkg.cli.support import _settings, err, store_option, timeout_option, token_file_option


@click.command("mcp")
@click.option(
    "--http",
    "http_bind",
    metavar="HOST:PORT",
    help="Serve Streamable HTTP on this address (at /mcp) instead of stdio.",
)
@click.option(
    "--user",
    metavar="ID",
    help="Serve one user: their users/ID graph is shown too (no other user's ever is).",
)
@click.option(
    "--reader",
    metavar="NAME",
    help="The reader `ask` uses for questions statement facts do not answer: a packaged "
    "model name or a .gguf path [default: none; such questions are refused].",
)
@click.option(
    "--view-limit",
    type=click.IntRange(min=1),
    default=5_000_000,
    show_default=True,
    metavar="QUADS",
    help="The most quads an as_of call copies into its point-in-time view.",
)
@timeout_option
@token_file_option
@store_option
@click.pass_context
def mcp(
    ctx: click.Context,
    http_bind: str | None,
    user: str | None,
    reader: str | None,
    view_limit: int,
    timeout_s: float | None,
    token_file: Path | None,
    store: str | None,
) -> None:
    """Serve a store to LLM agents over the Model Context Protocol: read-only, point in
    time, cited.

    Tools: query (SPARQL, optionally as_of an instant), list_queries, run_query,
    evidence_before, facts, ask, audit, describe; resources: the ontology, the JSON-LD
    context, the shapes and the query catalogue. On stdio by default (what Claude Desktop,
    VS Code and Cursor start); --http HOST:PORT serves Streamable HTTP at /mcp (beyond
    loopback only with a token: --token-file or FINKG_TOKEN). Each read stops at the time
    limit; the users/* graphs are never shown but --user's own.

    \b
    finkg mcp --store ~/.finkg/store
    finkg mcp --http 127.0.0.1:8765
    """
    from finkg.agent.calls import Scope
    from finkg.agent.server import Service, build_server
    from finkg.kg.graphs import Graphs
    from finkg.kg.serve import read_token

    settings = _settings(ctx)
    if user is not None:
        Graphs(settings.base_iri).user(user)  # a bad id is refused before anything starts
    location = store or settings.store_location
    limit = settings.query_timeout_s if timeout_s is None else timeout_s
    token = read_token(token_file) if token_file is not None else settings.token
    scope = Scope(location=str(location), settings=settings, user=user, view_limit=view_limit)
    service = Service.open(scope, timeout_s=limit, reader=reader)
    try:
        server = build_server(service)
        said = (
            f"query time limit {f'{limit:g} s' if limit else 'none'}; "
            f"reader {reader or 'none'}; users' graphs "
            + (f"users/{user} only" if user else "not shown")
        )
        if http_bind is None:
            err.print(f"finkg mcp on stdio over {location} ({said})")
            server.run("stdio")
            return
        from finkg.agent.http import serve_http

        def ready(url: str) -> None:
            err.print(
                f"finkg mcp at {url} over {location} ({said}; "
                f"{'token required' if token else 'no token'}); Ctrl-C stops"
            )

        serve_http(
            server.streamable_http_app(host=http_bind.rpartition(":")[0].strip("[]")),
            bind=http_bind,
            token=token,
            on_ready=ready,
        )
    finally:
        service.close()
