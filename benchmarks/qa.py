"""QA over filings (papers 002 + 003) on FinanceBench and TAT-QA: retrieval, answers,
groundedness, latency and auditability, beside the papers' figures.

    python -m benchmarks.qa --store /work/qastore --answers 12 --tatqa 12 --llm-rerank 8
        [--questions FILE] [--pdfs DIR] [--tatqa-seed 0]

Page-level retrieval and its ablation (issue 28) run apart, in `qa_retrieval.py`, and land
in the same report; the answer runs (`qa_answers.py`) report exact match with 95 %
bootstrap intervals by question type.

1. The store: the 74 FinanceBench PDFs go through `finkg ingest documents` (lifecycle,
   768/128 chunks, enrichment) with a companies CSV (see `qa_data`), then the text and
   vector indexes are refreshed. Skipped when the store already holds the chunks.
2. Retrieval (paper 003 Table 4 layout), on every dev question whose PDF is present, in
   three settings (data README): inside the question's own document; across all 74
   documents; across them with the company filter taken from the question. Methods:
   sparse (BM25), dense (MiniLM), hybrid (RRF k=60 of BM25, dense and metadata), hybrid +
   the trained cross-encoder, and (own-document setting, a deterministic sample) hybrid +
   LLM yes/no reranking. A chunk is relevant when its character span overlaps an evidence
   page's span in the document's normalized text. The questions whose PDF is absent are
   counted apart (their only corpus would be their own evidence pages).
3. Answers (Table 3 layout): `QA.ask` in the own-document setting on a deterministic
   sample, correctness by `finkg.evaluation.answers.correct`, G / J / N / S_comp means,
   validation statuses, latency by stage. TAT-QA: a sample of dev questions over their own
   context (table rows and paragraphs as one TXT document), same measures.
4. Auditability (Table 6): over the written answers, citation coverage (claims with a
   citation: the summary, each insight and each number claim), citation resolution (cited
   nodes that resolve to a chunk with document and offsets), artifact completeness (run
   with prompt hash, used passages with rank and score, scores and status stored),
   traceability (audit reaches a Ready transition); and
   recovery: 30 failures injected into normalization, enrichment and indexing of fresh
   copies of documents, each ending in Error and resumed to Ready with exactly the chunks
   of an unbroken run.

Writes benchmarks/reports/qa.md from benchmarks/reports/qa.json, into which each run merges
the parts it ran (so retrieval and the slow answer runs can be made separately); each part
records the run (time, reader, reranker) that made it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from pyoxigraph import NamedNode

from benchmarks import bench_queries, qa_answers, qa_data, qa_pages
from benchmarks.harness import REPORTS, write_report
from benchmarks.qa_report import METHODS, report
from finkg import queries
from finkg.config import Settings
from finkg.errors import InputError
from finkg.evaluation.ranking import table
from finkg.kg import lifecycle
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.ingest.documents import extract, ingest_documents, upload
from finkg.kg.setup import init_store
from finkg.kg.store import BaseStore, open_store
from finkg.reader.transport.backends import open_reader
from finkg.retrieval.plan.query_plan import plan
from finkg.retrieval.rank.rerank import LLMReranker, rerank
from finkg.tasks.qa.setup import open_qa, open_reranker

FKG = "https://w3id.org/finkg/ns#"


def log(*parts: object) -> None:
    print(*parts, flush=True)


# -- the store ------------------------------------------------------------------------------


def prepare(store: BaseStore, work: Path, pdf_dir: Path = qa_data.PDFS) -> dict[str, object]:
    have = bench_queries.chunk_count(store)
    if have:
        log(f"store holds {have} chunks: ingest skipped")
        return {"chunks": have, "ingest_seconds": None, "chunking": chunk_settings(store)}
    init_store(store)
    companies, pdfs = qa_data.stage_financebench(work / "financebench", pdf_dir)
    ingest(store, "companies", loader("companies"), [companies], IngestOptions(graphs=store.graphs))
    started = time.perf_counter()
    report = ingest_documents(
        store, pdfs, progress=lambda name, i: log(f"  document {i}/{len(pdfs)} {name}")
    )
    seconds = time.perf_counter() - started
    log(f"ingested {report.ready} documents, {report.chunks} chunks in {seconds:.0f} s")
    return {
        "chunks": report.chunks,
        "ingest_seconds": seconds,
        "rejects": len(report.rejects),
        "chunking": chunk_settings(store),
    }


def chunk_settings(store: BaseStore) -> list[list[int]]:
    """The chunk sizes and overlaps (tokens) the store's chunks were cut with."""
    rows = bench_queries.run(store, "chunk_settings")
    return [[int(r["size"].value), int(r["overlap"].value)] for r in rows]


def chunk_spans(store: BaseStore) -> dict[NamedNode, list[tuple[NamedNode, int, int]]]:
    """Each document's chunks with their [start, end) character spans."""
    rows = bench_queries.run(store, "chunk_spans")
    out: dict[NamedNode, list[tuple[NamedNode, int, int]]] = defaultdict(list)
    for r in rows:
        out[r["d"]].append((r["c"], int(r["s"].value), int(r["e"].value)))
    return out


def relevant_chunks(
    store, questions, docs, spans, pdf_dir=qa_data.PDFS, pages: Path | None = None
) -> dict[str, set[str]]:
    """The chunks overlapping each question's evidence pages, the pages located in the
    document's text as the page-level benchmark locates them (`qa_pages.located_spans`,
    pages cached under `pages`)."""
    pdfs = qa_data.pdf_paths(pdf_dir)
    folder = pages or Path(tempfile.gettempdir()) / "finkg-qa-pages"
    located: dict[str, list] = {}
    out: dict[str, set[str]] = {}
    for q in questions:
        found: set[str] = set()
        for e in q.evidence:
            if e.doc_name not in docs or e.doc_name not in pdfs:
                continue
            if e.doc_name not in located:
                rows = queries.run(store, "document_text", {"document": docs[e.doc_name]})
                text = next(iter(rows))["text"].value  # type: ignore[index, union-attr]
                located[e.doc_name] = qa_pages.located_spans(text, pdfs[e.doc_name], folder)
            page_spans = located[e.doc_name]
            span = page_spans[e.page] if e.page < len(page_spans) else None
            if span is None:
                continue
            for chunk, s, t in spans[docs[e.doc_name]]:
                if s < span[1] and t > span[0]:
                    found.add(chunk.value)
        out[q.id] = found
    return out


# -- retrieval ------------------------------------------------------------------------------


def retrieval(qa, questions, docs, relevant, companies, llm_sample: int, cross) -> dict:
    r = qa.retriever
    settings = {
        "own document": lambda q: {"documents": [docs[q.doc_name]]},
        "all documents": lambda q: {},
        "all documents, company filter": lambda q: {"company": companies[q.doc_name]},
    }
    results: dict[str, dict[str, list]] = {}
    seconds: dict[str, list[float]] = defaultdict(list)
    llm = LLMReranker(qa.llm) if llm_sample else None
    for setting, scope in settings.items():
        runs: dict[str, list] = defaultdict(list)
        for i, q in enumerate(questions):
            gold = relevant[q.id]
            t = time.perf_counter()
            pool = r.candidates(before=qa_data.LATE, **scope(q))
            ranks = r.ranks(q.question, pool)
            seconds["retrieve"].append(time.perf_counter() - t)
            for method, paths in METHODS.items():
                hits = r.fuse(pool, {p: ranks[p] for p in paths})
                runs[method].append(([h.node.value for h in hits], gold))
            # what `finkg ask` retrieves and reranks by default (QAConfig: the query plan,
            # its paths and weights)
            c = qa.config
            reading = plan(q.question) if c.planned else None
            asked = r.ranks(q.question, pool, c.paths, reading=reading)
            hybrid = r.fuse(pool, asked, dict(c.weights))
            runs["finkg ask default"].append(([h.node.value for h in hybrid], gold))
            hybrid = hybrid[: c.pool]
            texts = {h.node: t for h, t in zip(hybrid, _texts(qa.store, hybrid), strict=True)}
            if cross is not None and setting == "own document":  # the answers' setting
                t = time.perf_counter()
                order = rerank(cross, q.question, [(h.node, texts[h.node]) for h in hybrid])
                seconds["rerank (cross)"].append(time.perf_counter() - t)
                runs["hybrid+rerank (cross-encoder)"].append(([o.node.value for o in order], gold))
            if llm is not None and setting == "own document" and i < llm_sample:
                t = time.perf_counter()
                order = rerank(llm, q.question, [(h.node, texts[h.node]) for h in hybrid])
                seconds["rerank (LLM)"].append(time.perf_counter() - t)
                runs["hybrid+rerank (LLM yes/no)"].append(([o.node.value for o in order], gold))
                runs["finkg ask default (LLM sample)"].append(
                    ([h.node.value for h in hybrid], gold)
                )
        results[setting] = runs
        log(f"  {setting}: " + ", ".join(f"{m} MRR {table(v)['MRR']:.3f}" for m, v in runs.items()))
    return {
        "tables": {
            s: {m: table(v) | {"n": len(v)} for m, v in runs.items()} for s, runs in results.items()
        },
        "seconds": {k: statistics.mean(v) for k, v in seconds.items() if v},
    }


def _texts(store: BaseStore, hits) -> list[str]:
    from finkg.retrieval.index.live import node_texts

    found = node_texts(store, [h.node for h in hits])
    return [found[h.node] for h in hits]


# -- auditability ---------------------------------------------------------------------------


def recovery(pdfs: list[Path], failures: int = 30) -> dict:
    """Inject `failures` failures, a third each into normalization, enrichment and
    indexing: each document must end in Error, then resume to Ready with exactly the chunks
    an unbroken run gives and one Ready transition (nothing done twice)."""
    stages = ("Normalized", "Analyzed", "Indexed")
    reference = {}
    for pdf in pdfs:
        store = open_store(None)
        init_store(store)
        doc = upload(pdf)
        lifecycle.process(store, doc, extract)
        reference[doc.digest] = _chunks(store)
    recovered: Counter[str] = Counter()
    for i in range(failures):
        stage, pdf = stages[i % 3], pdfs[i % len(pdfs)]
        store = open_store(None)
        init_store(store)
        doc = upload(pdf)
        if stage == "Normalized":
            first = lifecycle.process(store, doc, _failing_extract)
        else:
            first = lifecycle.process(store, doc, extract, check=functools.partial(_fail_at, stage))
        resumed = lifecycle.process(store, doc, extract)
        ready = bench_queries.run(store, "ready_transitions")
        good = (
            first.state == "Error"
            and resumed.state == "Ready"
            and _chunks(store) == reference[doc.digest]
            and len(ready) == 1
        )
        recovered[stage] += good
    return {
        "injected": failures,
        "recovered": sum(recovered.values()),
        "per_stage": dict(recovered),
    }


def _failing_extract(upload: object) -> str:
    raise InputError("injected failure at normalization", field="stage", value="Normalized")


def _fail_at(stage: str, quads: list) -> None:
    if any(
        q.predicate.value == f"{FKG}lifecycleState" and q.object.value.endswith(stage)
        for q in quads
    ):
        raise InputError(f"injected failure at {stage}", field="stage", value=stage)


def _chunks(store: BaseStore) -> list[tuple[str, str]]:
    rows = bench_queries.run(store, "chunk_texts")
    return [(r["c"].value, r["t"].value) for r in rows]


# -- report ---------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "finkg-qa")
    ap.add_argument("--reader", default="qwen2.5-coder-0.5b")
    ap.add_argument("--answers", type=int, default=12, help="FinanceBench questions answered")
    ap.add_argument("--tatqa", type=int, default=12, help="TAT-QA questions answered")
    ap.add_argument("--llm-rerank", type=int, default=8, help="questions reranked by the LLM")
    ap.add_argument("--recovery", type=int, default=30, help="failures injected")
    ap.add_argument(
        "--no-retrieval", dest="retrieval", action="store_false", help="skip the retrieval part"
    )
    ap.add_argument(
        "--rerank",
        default="auto",
        help="the trained reranker for hybrid+rerank and the answers (auto, cross, none)",
    )
    ap.add_argument("--questions", type=Path, default=qa_data.QUESTIONS, help="FinanceBench JSONL")
    ap.add_argument("--pdfs", type=Path, default=qa_data.PDFS, help="folder of the filings' PDFs")
    ap.add_argument(
        "--pages",
        type=Path,
        help="where the PDFs' extracted pages are cached (qa_retrieval.py's WORK/pages)",
    )
    ap.add_argument("--tatqa-seed", type=int, default=0, help="seed of the TAT-QA sample")
    ap.add_argument(
        "--report", type=Path, default=REPORTS / "qa.json", help="the JSON report merged into"
    )
    args = ap.parse_args(argv)
    log(f"options: {vars(args)}")
    if not args.questions.exists():
        log(f"no questions at {args.questions}: nothing to measure")
        return 2
    settings = Settings.from_env().with_(reader=args.reader)
    store = open_store(args.store, settings=settings)
    prep = prepare(store, args.work, args.pdfs)
    reader = open_reader(settings)
    log("opening indexes (refreshing them if the store changed)")
    qa = open_qa(store, settings, rerank="none", llm=reader)
    cross = open_reranker(args.rerank, settings, reader) if args.rerank != "none" else None
    cross_id = cross.model_id if cross is not None else f"none (--rerank {args.rerank})"
    docs = bench_queries.documents(store)
    questions = qa_data.financebench_questions(args.questions)
    present = [q for q in questions if q.doc_name in docs]
    absent = [q for q in questions if q.doc_name not in docs]
    log(f"{len(present)} questions with their PDF, {len(absent)} without")
    spans = chunk_spans(store)
    relevant = relevant_chunks(store, present, docs, spans, args.pdfs, args.pages)
    scored = [q for q in present if relevant[q.id]]
    log(f"{len(scored)} questions with located evidence pages")
    companies = {
        q.doc_name: NamedNode(
            f"https://w3id.org/finkg/id/company/{qa_data.company_key(q.doc_name)}"
        )
        for q in scored
    }
    results_path = args.report
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    run = (
        f"{dt.datetime.now(dt.UTC).isoformat(timespec='minutes')}, reader {args.reader}, "
        f"reranker {cross_id}"
    )
    results["corpus"] = prep | {"store": str(args.store)}

    def save() -> None:  # after every part: a later part's failure keeps the earlier ones
        results_path.parent.mkdir(parents=True, exist_ok=True)
        results_path.write_text(json.dumps(results, indent=1, default=str))
        write_report(results_path.with_suffix(".md"), report(results))

    if args.retrieval:
        ret = retrieval(qa, scored, docs, relevant, companies, args.llm_rerank, cross)
        results["retrieval"] = ret | {
            "run": run,
            "questions": len(scored),
            "absent": len(absent),
            "reranker": cross_id,
            "reader": args.reader,
        }
        save()
    # answers: a deterministic sample evenly spread over the questions whose PDF is in the
    # store (an answer is scored against the reference, so it needs no located evidence page)
    n = min(args.answers, len(present))
    sample = [present[i * len(present) // n] for i in range(n)] if n else []
    qa.reranker = cross
    if args.answers:
        scope = lambda q: {"documents": [docs[q.doc_name]]}  # noqa: E731
        fb = qa_answers.answers(qa, sample, scope, "financebench", qa_data.LATE)
        results["financebench"] = fb | {"run": run}
        save()
    if results.get("financebench"):  # recomputed from the stored answers on every run
        results["audit"] = qa_answers.auditability(store, results["financebench"].get("rows", []))
        save()
    if args.tatqa:
        tq = qa_answers.tatqa(
            settings, reader, args.tatqa, args.work, qa_data.LATE, args.tatqa_seed
        )
        tat_store = tq.pop("store")
        results["tatqa"] = tq | {"run": run}
        results["audit_tatqa"] = qa_answers.auditability(tat_store, tq["rows"])
        save()
    if args.recovery:
        pdfs = sorted(qa_data.pdf_paths(args.pdfs).values(), key=lambda p: p.stat().st_size)[:6]
        results["recovery"] = recovery(pdfs, args.recovery)
        log(f"recovery: {results['recovery']}")
    text = report(results)
    write_report(results_path.with_suffix(".md"), text)
    results_path.write_text(json.dumps(results, indent=1, default=str))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
