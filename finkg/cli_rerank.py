"""`finkg train-reranker`: the QA job's cross-encoder, trained in paper 002's two stages.

The command parses its options, makes one library call per stage
(`finkg.tasks.qa.rerank_train`), prints the manifest's figures.
"""

from __future__ import annotations

from pathlib import Path

import click

from finkg.cli_movement import _reporter
from finkg.cli_support import _progress, _settings, out


@click.command("train-reranker")
@click.option(
    "--data",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Folder laid out like ../shared/data/qa (tatqa/ and financebench/).",
)
@click.option(
    "--stage",
    type=click.Choice(["1", "2", "both"]),
    default="both",
    show_default=True,
    help="1: general (TAT-QA), 2: one company (needs stage 1), both.",
)
@click.option("--questions", default=300, show_default=True, help="Stage-1 training questions.")
@click.option("--eval-questions", default=100, show_default=True, help="Held-out TAT-QA questions.")
@click.option("--mined", default=4, show_default=True, help="Hard negatives mined per question.")
@click.option("--negatives", default=3, show_default=True, help="Negatives per training step.")
@click.option("--epochs", default=1, show_default=True, help="Stage-1 epochs.")
@click.option("--lr", default=3e-5, show_default=True, help="Stage-1 learning rate.")
@click.option("--no-abstraction", is_flag=True, help="Train stage 1 on raw text.")
@click.option("--company", default="PEPSICO", show_default=True, help="Stage-2 company key.")
@click.option(
    "--document",
    "documents",
    multiple=True,
    default=["PEPSICO_2022_10K"],
    show_default=True,
    help="Stage-2 FinanceBench document name (repeatable).",
)
@click.option(
    "--company-questions", default=16, show_default=True, help="Questions the reader writes."
)
@click.option("--company-valid", default=4, show_default=True, help="Of those, held out.")
@click.option(
    "--candidates", default=8, show_default=True, help="Retrieved candidates labelled per question."
)
@click.option(
    "--threshold", default=0.5, show_default=True, help="P(yes) at which a candidate is a positive."
)
@click.option("--company-epochs", default=2, show_default=True, help="Stage-2 epochs.")
@click.option("--seed", default=0, show_default=True)
@click.option(
    "--reader",
    default="qwen2.5-coder-0.5b",
    show_default=True,
    help="The reader that writes and labels stage 2.",
)
@click.option(
    "--model-dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Parent folder of stage1/ and stage2/ [default: the cache's qa/reranker].",
)
@click.pass_context
def train_reranker_command(
    ctx: click.Context,
    data: Path,
    stage: str,
    questions: int,
    eval_questions: int,
    mined: int,
    negatives: int,
    epochs: int,
    lr: float,
    no_abstraction: bool,
    company: str,
    documents: tuple[str, ...],
    company_questions: int,
    company_valid: int,
    candidates: int,
    threshold: float,
    company_epochs: int,
    seed: int,
    reader: str,
    model_dir: Path | None,
) -> None:
    """Train the QA reranker, a cross-encoder from the packaged MiniLM (paper 002 §4.3).

    Stage 1 learns general financial relevance from entity-abstracted TAT-QA pairs with
    hard negatives mined by BM25 and MiniLM; stage 2 adapts it to one company's documents
    with questions written and candidates labelled yes/no by the reader. Each stage is saved
    with a manifest (data and hashes, split, hyper-parameters, held-out figures), e.g.
    `finkg train-reranker --data ../shared/data/qa`.
    """
    from finkg.tasks.qa.rerank_train import (
        RerankConfig,
        default_model_dir,
        train_stage1,
        train_stage2,
    )

    config = RerankConfig(
        questions=questions,
        eval_questions=eval_questions,
        mined=mined,
        negatives=negatives,
        epochs=epochs,
        lr=lr,
        abstraction=not no_abstraction,
        company=company.upper(),
        documents=tuple(documents),
        company_questions=company_questions,
        company_valid=company_valid,
        candidates=candidates,
        threshold=threshold,
        company_epochs=company_epochs,
        seed=seed,
    )
    settings = _settings(ctx).with_(reader=reader)
    dirs = {
        s: (model_dir / f"stage{s}" if model_dir else default_model_dir(settings, s))
        for s in (1, 2)
    }
    manifests = []
    with _progress() as bar:
        progress = _reporter(bar)
        if stage in ("1", "both"):
            manifests.append(
                train_stage1(
                    data, settings=settings, config=config, folder=dirs[1], progress=progress
                )
            )
        if stage in ("2", "both"):
            from finkg.reader.backends import open_reader

            manifests.append(
                train_stage2(
                    data,
                    llm=open_reader(settings),
                    settings=settings,
                    config=config,
                    start=dirs[1],
                    folder=dirs[2],
                    progress=progress,
                )
            )
    for m in manifests:
        out.print(f"stage {m['stage']} saved to {dirs[int(m['stage'])]} ({m['seconds']} s)")
        out.print(f"  model_id: {m['model_id']}")
        for name, f in m["held_out"].items():  # type: ignore[union-attr]
            out.print(
                f"  {name}: MRR {f['mrr']}, accuracy@1 {f['accuracy@1']} ({f['groups']} groups)"
            )
