"""`finkg forecast` and `finkg train-retriever`: paper 001's movement job on the CLI.

Each command parses its options, makes one library call (`finkg.tasks.movement.forecast`,
`finkg.tasks.movement.train`), prints. Dates are XNYS session dates (`2015-06-03`).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from finkg.cli.support import _open, _progress, _reporter, _settings, out, store_option
from finkg.errors import InputError
from finkg.retrieval.sequence_retrievers import RETRIEVERS, check_retriever


def _day(text: str, field: str) -> dt.date:
    if len(text) != 10:
        raise InputError(
            "a session date is YYYY-MM-DD (no time: a forecast is for a whole session)",
            field=field,
            value=text,
            hint="e.g. 2015-06-03",
        )
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise InputError("not a date", field=field, value=text, hint="e.g. 2015-06-03") from None


def _tickers(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    names = tuple(sorted({t.strip().upper() for t in text.split(",") if t.strip()}))
    if not names:
        raise InputError("no tickers given", field="--universe", value=text, hint="e.g. AAPL,MSFT")
    return names


def _model_dir(ctx: click.Context, given: Path | None) -> Path:
    from finkg.tasks.movement.train import default_model_dir

    return given or default_model_dir(_settings(ctx))


@click.command("forecast")
@click.option("--ticker", required=True, help="The stock (its prices must be ingested).")
@click.option("--date", "day", required=True, help="The session to forecast (YYYY-MM-DD).")
@click.option(
    "--retriever",
    default="minilm",
    show_default=True,
    callback=lambda _ctx, _param, name: check_retriever(name),
    help="One of " + ", ".join(RETRIEVERS) + ".",
)
@click.option("--k", default=5, show_default=True, help="Windows shown to the reader.")
@click.option(
    "--sample",
    default=0.02,
    show_default=True,
    help="Fraction of windows kept as candidates (deterministic by IRI; 1 keeps all).",
)
@click.option("--since", help="First candidate session (YYYY-MM-DD) [default: all].")
@click.option("--universe", help="Comma-separated tickers whose windows are candidates [all].")
@click.option("--reader", help="Reader: a packaged model name or .gguf path [$FINKG_READER].")
@click.option(
    "--model-dir",
    type=click.Path(path_type=Path),
    help="The trained retriever's folder [default: the cache's movement/finseer].",
)
@click.option(
    "--head",
    default="prior",
    show_default=True,
    help="Decision head: the latest stored one of this kind fitted before the decision "
    "(prior, multinomial, card); none, or none stored: the higher score decides.",
)
@store_option
@click.pass_context
def forecast_command(
    ctx: click.Context,
    ticker: str,
    day: str,
    retriever: str,
    k: int,
    sample: float,
    since: str | None,
    universe: str | None,
    reader: str | None,
    model_dir: Path | None,
    head: str,
    store: str | None,
) -> None:
    """Forecast whether TICKER's adjusted close rises or falls on a session (paper 001).

    Retrieves indicator windows available before the session's open, scores "rise" and
    "fall" as the reader's reply and writes the prediction with its run to the outputs graph.
    """
    from finkg.tasks.movement.forecast import MovementConfig, forecast
    from finkg.tasks.movement.train import open_sequence_retriever

    target = _day(day, "--date")
    config = MovementConfig(
        k=k,
        sample=sample,
        since=_day(since, "--since") if since else MovementConfig().since,
        universe=_tickers(universe),
    )
    settings = _settings(ctx)
    if reader:
        settings = settings.with_(reader=reader)
    from finkg.reader.transport.backends import open_reader

    with _open(ctx, store) as s, _progress() as bar:
        progress = _reporter(bar)
        result = forecast(  # the ticker and date are checked before a model is opened
            s,
            ticker=ticker,
            day=target,
            llm=lambda: open_reader(settings),
            retriever=lambda: open_sequence_retriever(
                retriever, settings, model_dir=_model_dir(ctx, model_dir), progress=progress
            ),
            config=config,
            progress=progress,
            head=head,
        )
    q = result.query
    out.print(
        f"{q.ticker} {q.day.isoformat()}: {result.label} "
        f"(P(rise) = {result.rise_probability:.3f}) with {result.retriever}, "
        f"decision at {q.decision.isoformat()}; "
        + (
            f"decided by the {result.head.state.kind} head {result.head.iri.value} "
            f"(n = {result.head.state.n})"
            if result.head
            else "no decision head: the higher score decided"
        )
    )
    out.print(f"query: {q.text}")
    for rank, hit in enumerate(result.hits, start=1):
        out.print(f"  {rank}. {hit.iri}  score {hit.score:.4f}")
    if result.prediction is not None:
        out.print(f"prediction: {result.prediction.value}")


@click.command("train-retriever")
@click.option("--queries", default=16, show_default=True, help="Training queries (train stocks).")
@click.option("--valid-queries", default=4, show_default=True, help="Validation queries.")
@click.option("--candidates", default=16, show_default=True, help="Windows scored per query.")
@click.option("--alpha", default=0.1, show_default=True, help="Temperature of the LLM rewards.")
@click.option("--tau", default=0.05, show_default=True, help="Temperature of the similarities.")
@click.option("--epochs", default=3, show_default=True)
@click.option("--lr", default=2e-5, show_default=True, help="Learning rate.")
@click.option("--from", "start", default="2015-06-03", show_default=True, help="First query date.")
@click.option("--to", "end", default="2015-12-31", show_default=True, help="Last query date.")
@click.option("--since", default="2014-06-02", show_default=True, help="First candidate session.")
@click.option("--sample", default=0.02, show_default=True, help="Fraction of windows kept.")
@click.option("--seed", default=0, show_default=True, help="Seed of the split and samples.")
@click.option(
    "--reader",
    default="qwen2.5-coder-0.5b",
    show_default=True,
    help="The reader whose feedback trains the retriever.",
)
@click.option("--model-dir", type=click.Path(path_type=Path), help="Where to save the model.")
@store_option
@click.pass_context
def train_retriever_command(
    ctx: click.Context,
    queries: int,
    valid_queries: int,
    candidates: int,
    alpha: float,
    tau: float,
    epochs: int,
    lr: float,
    start: str,
    end: str,
    since: str,
    sample: float,
    seed: int,
    reader: str,
    model_dir: Path | None,
    store: str | None,
) -> None:
    """Train the FinSeer retriever from reader feedback (paper 001 §3.3).

    The reader scores windows for training queries of the train stocks (P(true label |
    query, window)); the top one is the positive, the bottom 15 the negatives; a bi-encoder
    initialised from the packaged MiniLM learns them by KL distillation. Saves the model with
    a manifest (data, split, hyper-parameters, reader).
    """
    from finkg.reader.transport.backends import open_reader
    from finkg.tasks.movement.train import TrainConfig, train_retriever

    config = TrainConfig(
        queries=queries,
        valid_queries=valid_queries,
        candidates=candidates,
        alpha=alpha,
        tau=tau,
        epochs=epochs,
        lr=lr,
        query_from=_day(start, "--from"),
        query_to=_day(end, "--to"),
        since=_day(since, "--since"),
        sample=sample,
        seed=seed,
    )
    settings = _settings(ctx).with_(reader=reader)
    folder = _model_dir(ctx, model_dir)
    with _open(ctx, store, read_only=True) as s, _progress() as bar:
        manifest = train_retriever(
            s,
            llm=open_reader(settings),
            settings=settings,
            config=config,
            folder=folder,
            progress=_reporter(bar),
        )
    out.print(f"trained retriever saved to {folder}")
    for key in ("model_id", "reader", "split_counts", "examples", "valid_kl", "seconds"):
        out.print(f"  {key}: {manifest[key]}")
