"""`finkg ask`: an auditable answer over filings and documents (papers 002 + 003).

Parses the options, opens what answering needs (indexes, reader, reranker, memory bank)
through `finkg.tasks.qa.setup`, makes one `QA.ask` call and prints the answer with its
status, scores, routes and citations.
"""

from __future__ import annotations

import datetime as dt
import json

import click

from finkg.cli_support import _open, _progress, _settings, out, parse_instant, store_option
from finkg.tasks.qa.setup import RERANKERS


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
    help="cross: the trained cross-encoder; llm: the reader's yes/no log-odds; none; "
    "auto: cross when it is trained, else none.",
)
@click.option(
    "--paths",
    default="sparse,dense",
    show_default=True,
    help="Retrieval paths fused by RRF: some of sparse, dense, metadata.",
)
@click.option("--reader", help="Reader: a packaged model name or .gguf path [$FINKG_READER].")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
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
    store: str | None,
) -> None:
    """Answer QUESTION from the store's filings and documents, citing chunk ids.

    The question is split into sub-questions, each answered from the memory bank, a
    market-data tool or multi-path retrieval (BM25, dense, metadata; RRF; reranking); the
    reader answers in JSON citing the evidence; finkg checks the citations and numbers,
    scores groundedness (S_comp) and writes the answer with its run. `finkg audit IRI`
    traces it back to the documents.
    """
    from finkg.tasks.qa.ask import QAConfig
    from finkg.tasks.qa.setup import open_qa, resolve_company

    config = QAConfig(paths=tuple(p.strip() for p in paths.split(",") if p.strip()))

    settings = _settings(ctx)
    if reader:
        settings = settings.with_(reader=reader)
    instant = parse_instant(as_of, tz, field="--as-of") if as_of else dt.datetime.now(dt.UTC)
    with _open(ctx, store) as s, _progress() as bar:
        task = bar.add_task("opening indexes and reader", total=None)
        qa = open_qa(s, settings, rerank=rerank, config=config)
        bar.update(task, description="answering")
        asked = qa.ask(question, as_of=instant, company=resolve_company(s, company))
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
    for p in asked.parts:
        out.print(f"  [{p.route}] {p.question.text}", highlight=False, markup=False)
    for b in asked.blocks:
        out.print(f"  {b.id}: {b.node.value}", highlight=False, markup=False)
    out.print(f"answer: {report['answer']}", highlight=False, markup=False)
