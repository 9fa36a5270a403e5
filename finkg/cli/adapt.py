"""`finkg train-reader`: a LoRA adapter for the local reader, trained on a job's matured
labels (`finkg.tasks.impact.training`, `finkg.tasks.movement.adapt`). Parses the options,
makes one library call, prints."""

from __future__ import annotations

import click

from finkg.cli.impact import _span
from finkg.cli.support import _open, _progress, _reporter, _settings, out, store_option
from finkg.errors import InputError
from finkg.reader.adapt.train import PRECISIONS, LoraParams
from finkg.tasks.impact.predict import ImpactConfig
from finkg.tasks.span import Span


def _period(text: str, field: str) -> Span:
    if ":" not in text:
        raise InputError("a period is FROM:TO", field=field, value=text)
    a, b = text.split(":", 1)
    return _span(a, b, field)


@click.command("train-reader")
@click.option(
    "--job",
    type=click.Choice(["impact", "movement"]),
    default="impact",
    show_default=True,
    help="The job whose scored questions and matured labels train the adapter.",
)
@click.option("--train", "training", required=True, help="Training period FROM:TO (dates).")
@click.option(
    "--validation", required=True, help="Validation period FROM:TO, after the training one."
)
@click.option("--name", required=True, help="The adapter's name (FINKG_ADAPTER=NAME loads it).")
@click.option(
    "--reader",
    default=None,
    help="The packaged reader or .gguf to adapt [default: $FINKG_READER].",
)
@click.option(
    "--anchors",
    type=click.IntRange(min=1),
    help="Training anchors (impact) or queries (movement): a fixed sample [default: all].",
)
@click.option("--val-anchors", type=click.IntRange(min=1), help="Validation ones (likewise).")
@click.option("--epochs", default=3, show_default=True, type=click.IntRange(min=1))
@click.option("--max-steps", type=click.IntRange(min=1), help="Stop after this many steps.")
@click.option("--batch", default=64, show_default=True, type=click.IntRange(min=1))
@click.option("--rank", default=16, show_default=True, type=click.IntRange(min=1))
@click.option("--alpha", default=32, show_default=True, type=click.IntRange(min=1))
@click.option("--dropout", default=0.05, show_default=True, type=click.FloatRange(0, 1))
@click.option("--lr", default=2e-4, show_default=True, help="Learning rate.")
@click.option(
    "--eval-every",
    default=0,
    show_default=True,
    type=click.IntRange(min=0),
    help="Optimizer steps between validations (0: once per epoch).",
)
@click.option("--patience", default=2, show_default=True, type=click.IntRange(min=1))
@click.option("--seed", default=0, show_default=True)
@click.option(
    "--precision",
    type=click.Choice(PRECISIONS),
    default="auto",
    show_default=True,
    help="Matrix products in bf16 or fp32 (auto: bf16 on a GPU, fp32 on a CPU, where bf16 "
    "saves about a fifth of a long prompt's step and nothing on a short one).",
)
@click.option(
    "--shared-prefix/--no-shared-prefix",
    default=True,
    show_default=True,
    help="Evaluate the opening every question shares once per optimizer step (the same "
    "gradient, less work); --no-shared-prefix evaluates each prompt whole, as adapters made "
    "before it were trained.",
)
@click.option(
    "--proxy", default=ImpactConfig.proxy, show_default=True, help="Market proxy ticker (impact)."
)
@click.option(
    "--snippet-chars",
    default=ImpactConfig.snippet_chars,
    show_default=True,
    type=click.IntRange(min=50),
    help="Impact: characters of each evidence snippet in the prompt (as the job will score).",
)
@click.option(
    "--retriever",
    default="none",
    show_default=True,
    help="Movement: the windows the reader is shown (none, random, dtw, bm25, minilm, finseer).",
)
@click.option("--k", default=5, show_default=True, help="Movement: windows shown.")
@click.option("--sample", default=0.02, show_default=True, help="Movement: windows kept.")
@store_option
@click.pass_context
def train_reader_command(
    ctx: click.Context,
    job: str,
    training: str,
    validation: str,
    name: str,
    reader: str | None,
    anchors: int | None,
    val_anchors: int | None,
    epochs: int,
    max_steps: int | None,
    batch: int,
    rank: int,
    alpha: int,
    dropout: float,
    lr: float,
    eval_every: int,
    patience: int,
    seed: int,
    precision: str,
    shared_prefix: bool,
    proxy: str,
    snippet_chars: int,
    retriever: str,
    k: int,
    sample: float,
    store: str | None,
) -> None:
    """Train a LoRA adapter for the local reader on a job's matured labels (paper 000 §4.2,
    paper 001's StockLLM).

    The items are the job's own scored questions over the training period (impact: its
    anchors; movement: rise-or-fall sessions of the training stocks, validated on the
    validation stocks, by paper 001's seeded split), with the labels matured before the
    validation period starts; the loss is on the options the job scores. The adapter with
    the best validation macro-F1 (impact) or MCC (movement) is kept, converted to
    llama.cpp's GGUF format and saved under the cache with a manifest (base model, data
    hashes, periods, hyper-parameters, validation figures, the adapter's SHA-256).
    """

    settings = _settings(ctx)
    if reader:
        settings = settings.with_(reader=reader)
    params = LoraParams(
        rank=rank, alpha=alpha, dropout=dropout, lr=lr, batch=batch, epochs=epochs,
        eval_every=eval_every, patience=patience, max_steps=max_steps, seed=seed,
        precision=precision, shared_prefix=shared_prefix,
    )  # fmt: skip
    train_span = _period(training, "--train")
    val_span = _period(validation, "--validation")
    with _open(ctx, store) as s, _progress() as bar:
        progress = _reporter(bar)
        if job == "movement":
            from finkg.retrieval.sequence_retrievers import check_retriever
            from finkg.tasks.movement.adapt import train_movement_reader
            from finkg.tasks.movement.forecast import MovementConfig
            from finkg.tasks.movement.train import open_sequence_retriever

            config = MovementConfig(k=k, sample=sample)
            manifest = train_movement_reader(
                s, settings, name=name, training=train_span, validation=val_span,
                retriever=open_sequence_retriever(check_retriever(retriever), settings),
                config=config, params=params, queries_limit=anchors,
                validation_limit=val_anchors, progress=progress,
            )  # fmt: skip
            asked = "queries"
        else:
            from finkg.retrieval.index.indexes import open_indexes
            from finkg.tasks.impact.training import train_impact_reader

            texts, vectors, _ = open_indexes(
                s, settings, progress=lambda stage, i, n: progress(stage, i, n or 0)
            )
            impact_config = ImpactConfig(proxy=proxy, snippet_chars=snippet_chars)
            manifest = train_impact_reader(
                s, settings, name=name, training=train_span, validation=val_span,
                texts=texts, vectors=vectors, config=impact_config, params=params,
                anchors_limit=anchors, validation_limit=val_anchors, progress=progress,
            )  # fmt: skip
            asked = "anchors"
    f = manifest.figures
    out.print(
        f"adapter {manifest.name} for {manifest.base_model}: {manifest.adapter_file} "
        f"sha256 {manifest.adapter_sha256[:12]}; trained on {manifest.training.items} questions "
        f"of {manifest.training.anchors} {asked}, {f.steps} steps in {f.seconds:.0f} s "
        f"({f.steps_per_second:.3f} steps/s on {f.device}, {f.precision}); validation {f.metric} "
        f"{f.frozen:.3f} frozen, {f.best:.3f} at step {f.best_step} (kept)"
    )
    out.print(f"load it with FINKG_ADAPTER={manifest.name}")
