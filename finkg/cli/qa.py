"""`finkg ask`, `finkg bank` and `finkg train-reranker`: the QA job (papers 002 + 003) on
the CLI.

`finkg ask` parses the options, opens what answering needs (indexes, reader, reranker,
memory bank) through `finkg.tasks.qa.setup`, makes one `QA.ask` call and prints the answer
with its status, scores, routes and citations.

`finkg bank` is the memory bank of paper 002 §3.2: `finkg bank add FILE.jsonl` stores
expert-verified answers, one JSON object per line:

    {"company": "ACME", "question": "What was the total revenue?", "period": "FY2020",
     "answer": "$274.5 billion", "available_at": "2020-10-30T16:30:00-04:00",
     "evidence": ["https://w3id.org/finkg/id/chunk/..."]}

(`company` a ticker the store holds; `available_at` zoned, when the answer became knowable,
never before its evidence). The whole file is checked first: a bad line stops it with the
line number and field, and nothing is written. `finkg bank list` prints the entries as of an
instant. `finkg ask` answers from them when a question matches one.

`finkg train-reranker` makes one library call per stage (`finkg.tasks.qa.rerank_train`)
and prints the manifest's figures.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import click

from finkg.cli.support import (
    _open,
    _progress,
    _reading,
    _reporter,
    _settings,
    concurrency_option,
    out,
    parse_instant,
    store_option,
)
from finkg.errors import InputError
from finkg.tasks.qa.setup import RERANKERS
from finkg.tasks.qa.types import QAConfig

QA_PATHS = QAConfig().paths


@click.command("ask")
@click.argument("question")
@click.option("--company", help="Only passages about this company (its ticker).")
@click.option(
    "--as-of",
    "as_of",
    help="Use only what was available before this date (YYYY-MM-DD) or zoned instant [now].",
)
@click.option("--tz", default="America/New_York", show_default=True, help="Zone of a date alone.")
@click.option(
    "--rerank",
    type=click.Choice(RERANKERS),
    default="auto",
    show_default=True,
    help="cross: the trained cross-encoder; llm: the reader's yes/no log-odds (the options "
    "scored); none; auto: cross only when its manifest shows a held-out MRR gain, else none.",
)
@click.option(
    "--paths",
    default=",".join(QA_PATHS),
    show_default=True,
    help="Retrieval paths fused by RRF: some of sparse, dense, metadata, statement (the "
    "statement the question names or implies), parts (one sub-query per line item).",
)
@click.option("--reader", help="Reader: a packaged model name or .gguf path [$FINKG_READER].")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@concurrency_option
@store_option
@click.pass_context
def ask(
    ctx: click.Context,
    question: str,
    company: str | None,
    as_of: str | None,
    tz: str,
    rerank: str,
    paths: str,
    reader: str | None,
    as_json: bool,
    concurrency: int | None,
    store: str | None,
) -> None:
    """Answer QUESTION from the store's filings and documents, citing chunk ids.

    A numeric question about the statements (a line item, or a metric it defines or finkg's
    library knows: DPO, ROA, current ratio, ...) is computed from the statement facts when
    every operand is one (no index or reader is opened), the formula and each cited fact
    shown. Otherwise the question is split into sub-questions, each answered from the memory bank, a
    market-data tool or multi-path retrieval (BM25, dense, metadata; RRF; reranking); the
    reader answers in JSON citing the evidence; finkg checks the citations and numbers,
    scores groundedness (S_comp) and writes the answer with its run. `finkg audit IRI`
    traces it back to the documents.
    """
    from finkg.tasks.qa.setup import answer

    chosen = tuple(p.strip() for p in paths.split(",") if p.strip())
    config = QAConfig(paths=chosen)

    settings = _reading(ctx, concurrency)
    if reader:
        settings = settings.with_(reader=reader)
    instant = parse_instant(as_of, tz, field="--as-of") if as_of else dt.datetime.now(dt.UTC)
    with _open(ctx, store) as s, _progress() as bar:
        task = bar.add_task("checking the question", total=None)
        asked = answer(
            s,
            settings,
            question,
            as_of=instant,
            company=company,
            rerank=rerank,
            config=config,
            stage=lambda text: bar.update(task, description=text),
        )
    report = {
        "answer": asked.iri.value if asked.iri is not None else None,
        "question": asked.question,
        "as_of": asked.as_of.isoformat(),
        "summary": asked.summary,
        "validation_status": asked.status,
        "scores": {k: round(v, 4) for k, v in asked.scores.items()},
        "routes": [{"question": p.question.text, "route": p.route} for p in asked.parts],
        "evidence": [{"id": b.id, "node": b.node.value} for b in asked.blocks],
        "output": asked.output.model_dump(by_alias=True) if asked.output else None,
        "seconds": {k: round(v, 3) for k, v in asked.seconds.items()},
        "facts": str(asked.facts) if asked.facts is not None else None,
        "facts_note": asked.note or None,
    }
    if as_json:
        out.print_json(json.dumps(report))
        return
    out.print(asked.summary or "(no valid answer)", highlight=False, markup=False)
    sc = asked.scores
    out.print(
        f"status {asked.status}: S_comp {sc['s_comp']:.2f} (G {sc['g']:.2f}, Gc {sc['gc']:.2f}, "
        f"N {sc['n']:.2f}, J {sc['j']:.0f})",
        highlight=False,
        markup=False,
    )
    if asked.facts is not None:  # the formula, the operands and their pages
        for insight in asked.output.insights if asked.output else []:
            out.print(f"  {insight.text}", highlight=False, markup=False)
    elif asked.note:
        out.print(f"  ({asked.note})", highlight=False, markup=False)
    for p in asked.parts:
        out.print(f"  [{p.route}] {p.question.text}", highlight=False, markup=False)
    for b in asked.blocks:
        out.print(f"  {b.id}: {b.node.value}", highlight=False, markup=False)
    out.print(f"answer: {report['answer']}", highlight=False, markup=False)


@click.group("bank")
def bank() -> None:
    """The memory bank: verified answers to canonical questions, per company and period."""


@bank.command("add")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@store_option
@click.pass_context
def add(ctx: click.Context, path: Path, store: str | None) -> None:
    """Store the verified entries of a JSON Lines file (see `finkg bank --help`)."""
    from finkg.retrieval.memory.bank import BankEntry, add_entries
    from finkg.tasks.qa.setup import resolve_company

    with _open(ctx, store) as s:
        entries = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if not isinstance(row, dict):
                    raise InputError("each line is a JSON object", field="line", value=line[:60])
                missing = [
                    k
                    for k in ("company", "question", "period", "answer", "available_at", "evidence")
                    if k not in row
                ]
                if missing:
                    raise InputError("missing field", field=missing[0])
                company = resolve_company(s, str(row["company"]))
                assert company is not None
                available = dt.datetime.fromisoformat(str(row["available_at"]))
                entries.append(
                    BankEntry(
                        company=company.value,
                        question=str(row["question"]),
                        period=str(row["period"]),
                        answer=str(row["answer"]),
                        available_at=available,
                        evidence=tuple(row["evidence"]),
                    )
                )
            except json.JSONDecodeError as e:
                raise InputError(f"not JSON: {e.msg}", source=path, line=number) from None
            except InputError as e:
                raise InputError(
                    e.message,
                    source=path,
                    line=number,
                    field=e.field,
                    value=e.value,
                    hint=e.hint,
                ) from None
            except (ValueError, TypeError) as e:  # a date fromisoformat cannot read
                raise InputError(str(e), source=path, line=number) from None
        added = add_entries(s, entries)
    out.print(f"memory bank: {len(entries)} entries read, {added} added", highlight=False)


@bank.command("list")
@click.option("--company", help="Only this company's entries (its ticker).")
@click.option("--as-of", "as_of", help="Only entries knowable before this date or instant.")
@click.option("--tz", default="America/New_York", show_default=True, help="Zone of a date alone.")
@store_option
@click.pass_context
def list_entries(
    ctx: click.Context, company: str | None, as_of: str | None, tz: str, store: str | None
) -> None:
    """Print the bank's entries, latest answer per question and period last."""
    from finkg.retrieval.memory.bank import entries
    from finkg.tasks.qa.setup import resolve_company

    before = parse_instant(as_of, tz, field="--as-of") if as_of else None
    with _open(ctx, store, read_only=True) as s:
        found = entries(s, company=resolve_company(s, company), before=before)
    for e in found:
        out.print(
            f"{e.period}  {e.question}  {e.answer}  (available {e.available_at.isoformat()}, "
            f"{len(e.evidence)} evidence)",
            highlight=False,
        )
    out.print(f"{len(found)} entries", highlight=False)


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
            from finkg.reader.transport.backends import open_reader

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
        stage_no, held_out = m["stage"], m["held_out"]
        assert isinstance(stage_no, int) and isinstance(held_out, dict)  # a training manifest's
        out.print(f"stage {stage_no} saved to {dirs[stage_no]} ({m['seconds']} s)")
        out.print(f"  model_id: {m['model_id']}")
        for name, f in held_out.items():
            out.print(
                f"  {name}: MRR {f['mrr']}, accuracy@1 {f['accuracy@1']} ({f['groups']} groups)"
            )
