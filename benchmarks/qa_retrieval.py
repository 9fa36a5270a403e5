"""Page-level retrieval inside the question's own filing (FinanceBench's single-document
setting), with an ablation that adds one lever at a time on the same questions.

    python -m benchmarks.qa_retrieval --work /work/qa-cache [--questions FILE] [--pdfs DIR]
        [--holdout FILE] [--llm-rerank 10]

Stores: one per way of building it (`VARIANTS`: the PDF extraction, the chunk size and
overlap), each built through the document lifecycle from the same cached pages
(`qa_pages.PageCache`) under `--work/stores/`, its indexes beside it, embeddings kept by text
(`qa_pages.CachedEmbedder`). Questions: every one whose own PDF is in `--pdfs`; its
evidence pages (0-based) located in its document's normalized text. For each question
the retriever ranks the document's chunks; the chunks become pages (`qa_pages.ranked_pages`);
page Hit@k (an evidence page among the first k pages), page R@5 (the share of evidence pages
there), page MRR, and the chunk-level P@5, R@5 and MRR (a chunk is relevant when it overlaps
an evidence page) are averaged, each with a 95 % bootstrap interval over questions.

Choices (BM25 k1 and b, the fusion weights) are made on split A of the dev file (companies
whose key hashes even) and the table reports split B; a `--holdout` file is scored with the
same choices. Rows, each adding one lever to the row above:

 0. today: pypdf plain text, 768/128 chunks, BM25 + MiniLM, RRF k=60, the raw question
 1. + layout extraction: a table row on one line, its cells joined by " | "
 2. + chunks that fit the embedder (192/32 tokens: MiniLM reads 256 word pieces)
 3. + query plan: answering instructions out of the query, glossary words for its metrics
 4. + statement path: passages inside the statement the question names or implies
 5. + parts: one sub-query per line item a ratio needs
 6. + metadata path (titles, headings, topics)
 7. + BM25 k1, b chosen on split A
 8. + fusion weights chosen on split A
 9. + LLM yes/no rerank (option scoring) of the top 10, on the first `--llm-rerank`
    questions of split B, beside the row it reorders (`--rerank-row`; 5, `finkg ask`'s
    default paths, k1 and b) on the same questions, with the paired step and its cost
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import itertools
import json
import statistics
import sys
import time
from pathlib import Path

from benchmarks import bench_queries, qa_data, qa_pages
from benchmarks.harness import REPORTS, bootstrap_option, write_report
from benchmarks.qa_measures import Item, measures, step, table
from benchmarks.qa_report import report, report_lines
from benchmarks.qa_rows import ROWS, VARIANTS, Row, Variant
from finkg import queries
from finkg.config import Settings
from finkg.kg import lifecycle
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.ingest.documents import check_artifacts, upload
from finkg.kg.setup import init_store
from finkg.kg.store import open_store
from finkg.retrieval.passages import PassageRetriever
from finkg.retrieval.plan.query_plan import plan

K1S, BS = (0.9, 1.2, 1.5, 2.0), (0.4, 0.6, 0.75, 0.9)
WEIGHT_GRID = {
    "sparse": (0.5, 1.0, 1.5),
    "dense": (0.5, 1.0, 1.5),
    "statement": (0.0, 0.5, 1.0, 2.0),
    "parts": (0.0, 0.5, 1.0),
    "metadata": (0.0, 0.5, 1.0),
}


def log(*parts: object) -> None:
    print(*parts, flush=True)


# -- stores ---------------------------------------------------------------------------------


def open_variant(variant: Variant, work: Path, pdf_dir: Path, settings: Settings, embedder):
    """The variant's store (built when empty) and a retriever over its refreshed indexes."""
    from finkg.retrieval.index.indexes import open_indexes

    folder = work / "stores" / variant.name
    store = open_store(folder, settings=settings)
    cache = qa_pages.PageCache(work / "pages", layout=variant.layout)
    if not bench_queries.chunk_count(store):
        init_store(store)
        companies_csv, pdfs = qa_data.stage_financebench(work / "staged", pdf_dir)
        ingest(
            store,
            "companies",
            loader("companies"),
            [companies_csv],
            IngestOptions(graphs=store.graphs),
        )
        names = {r["ticker"].value: r["name"].value for r in queries.run(store, "company_names")}  # type: ignore[union-attr]
        chunking = lifecycle.Settings(chunk_size=variant.size, chunk_overlap=variant.overlap)
        started = time.perf_counter()
        for i, pdf in enumerate(pdfs, 1):
            out = lifecycle.process(
                store,
                upload(pdf),
                cache.extractor(),
                settings=chunking,
                companies=names,
                check=check_artifacts,
            )
            log(
                f"  {variant.name}: {i}/{len(pdfs)} {pdf.stem} {out.state} {out.chunks} chunks "
                f"({time.perf_counter() - started:.0f} s)"
            )
    last = [0.0]

    def progress(stage: str, done: int, total: int) -> None:
        if time.perf_counter() - last[0] > 30 or done == total:
            last[0] = time.perf_counter()
            log(f"  {variant.name} indexes: {stage} {done}/{total}")

    text, vectors, _ = open_indexes(
        store,
        settings,
        embedder=embedder,
        directory=work / "stores" / f"{variant.name}.indexes",
        progress=progress,
    )
    embedder.save()
    return store, PassageRetriever(store, text=text, vectors=vectors, embedder=embedder), cache


def items_for(store, retriever, cache, questions, pdf_dir: Path) -> list[Item]:
    docs = bench_queries.documents(store)
    pdfs = qa_data.pdf_paths(pdf_dir)
    spans_of: dict[str, list] = {}
    out = []
    for q in questions:
        if q.doc_name not in docs:
            continue
        if q.doc_name not in spans_of:
            rows = queries.run(store, "document_text", {"document": docs[q.doc_name]})
            text = next(iter(rows))["text"].value  # type: ignore[index, union-attr]
            spans_of[q.doc_name] = qa_pages.page_spans(text, cache.pdf_pages(pdfs[q.doc_name]))
        spans = spans_of[q.doc_name]
        pages = {e.page for e in q.evidence if e.doc_name == q.doc_name}
        evidence = {p for p in pages if p < len(spans) and spans[p] is not None}
        pool = retriever.candidates(before=qa_data.LATE, documents=[docs[q.doc_name]])
        out.append(Item(q, pool, spans, evidence))
    return out


# -- scoring --------------------------------------------------------------------------------


def order(retriever, item: Item, row: Row, k1: float, b: float, weights) -> list:
    key = (k1, b, row.planned, row.paths)
    if key not in item.ranks:
        retriever.k1, retriever.b = k1, b
        reading = plan(item.question.question) if row.planned else None
        item.ranks[key] = retriever.ranks(
            item.question.question, item.pool, row.paths, reading=reading
        )
    hits = retriever.fuse(item.pool, item.ranks[key], weights)
    return [h.passage for h in hits]


def split_of(q: qa_data.FBQuestion) -> str:
    key = qa_data.company_key(q.doc_name).encode()
    return "A" if hashlib.sha256(key).digest()[0] % 2 == 0 else "B"


def choose(retriever, items: list[Item], row: Row) -> tuple[float, float, dict[str, float]]:
    """k1, b (then the weights) that give split A the best page Hit@5, MRR breaking ties."""

    def score(k1, b, w):
        ms = [measures(i, order(retriever, i, row, k1, b, w)) for i in items]
        return (
            statistics.mean(m["page Hit@5"] for m in ms),
            statistics.mean(m["page MRR"] for m in ms),
        )

    if not items:
        from finkg.retrieval.index.bm25 import K1, B

        return K1, B, {}
    best_kb = max(itertools.product(K1S, BS), key=lambda kb: score(kb[0], kb[1], None))
    names = [p for p in row.paths if p in WEIGHT_GRID]
    grid = [
        dict(zip(names, ws, strict=True))
        for ws in itertools.product(*(WEIGHT_GRID[p] for p in names))
    ]
    grid = [w for w in grid if any(v > 0 for v in w.values())]
    best_w = max(grid, key=lambda w: score(*best_kb, w))
    return best_kb[0], best_kb[1], best_w


def llm_rerank(retriever, items: list[Item], row: Row, choice, reader, top: int, n_boot: int):
    """The LLM yes/no reranker (option scoring, `retrieval.rerank.LLMReranker`) over the
    best `top` chunks of `row`, beside `row` on the same questions (the paired step of page
    Hit@5 and MRR), with its cost: seconds and prompt tokens a question, every read made
    (no cache)."""
    from finkg.retrieval.index.live import node_texts
    from finkg.retrieval.rank.rerank import LLMReranker, rerank

    reranker = LLMReranker(reader)
    k1, b, weights = params(row, choice)
    before, after, seconds, prompts = [], [], [], []
    for item in items:
        ranked = order(retriever, item, row, k1, b, weights)
        head = ranked[:top]
        texts = node_texts(retriever.store, [p.node for p in head])
        started = time.perf_counter()
        found = rerank(reranker, item.question.question, [(p.node, texts[p.node]) for p in head])
        seconds.append(time.perf_counter() - started)
        prompts.append(reranker.last_tokens)
        by_node = {p.node: p for p in head}
        reordered = [by_node[r.node] for r in found] + ranked[top:]
        before.append(measures(item, ranked))
        after.append(measures(item, reordered))
        log(
            f"  llm rerank {len(after)}/{len(items)}: {seconds[-1]:.0f} s, "
            f"MRR {before[-1]['page MRR']:.2f} -> {after[-1]['page MRR']:.2f}"
        )
    ids = [i.question.id for i in items]
    return {
        "model": reranker.model_id,
        "row": row.name,
        "top": top,
        "before": table(before, n_boot),
        "after": table(after, n_boot),
        "step": step(
            dict(zip(ids, after, strict=True)), dict(zip(ids, before, strict=True)), n_boot
        ),
        "seconds_per_question": statistics.mean(seconds) if seconds else None,
        "prompt_tokens_per_question": statistics.mean(prompts) if prompts else None,
    }


def params(row: Row, choice) -> tuple[float, float, dict[str, float] | None]:
    """The k1, b and fusion weights `row` ranks with: split A's choices where the row takes
    them, BM25's defaults and equal weights where it does not."""
    from finkg.retrieval.index.bm25 import K1, B

    k1, b, w = choice or (K1, B, None)
    if not row.tuned_bm25:
        k1, b = K1, B
    return k1, b, (w if row.tuned_weights else None)


def evaluate(retriever, items, row, choice) -> list[dict[str, float]]:
    """Each question's measures under `row` (in the order of `items`)."""
    k1, b, w = params(row, choice)
    return [measures(i, order(retriever, i, row, k1, b, w)) for i in items]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=Path("/work/qa-cache"))
    ap.add_argument(
        "--questions", type=Path, default=qa_data.QUESTIONS, help="FinanceBench-format JSONL (dev)"
    )
    ap.add_argument("--pdfs", type=Path, default=qa_data.PDFS, help="folder of the questions' PDFs")
    ap.add_argument(
        "--holdout", type=Path, help="a second question file, scored with dev's choices"
    )
    ap.add_argument("--rows", default=",".join(r.number for r in ROWS), help="rows to run")
    ap.add_argument("--llm-rerank", type=int, default=0, help="split-B questions the LLM reranks")
    ap.add_argument("--rerank-top", type=int, default=10)
    ap.add_argument(
        "--rerank-row", default="5", help="the row (by number) the LLM reranks (5: finkg ask's)"
    )
    ap.add_argument("--reader", default="qwen2.5-coder-0.5b")
    bootstrap_option(ap)
    ap.add_argument(
        "--report", type=Path, default=REPORTS / "qa.json", help="the JSON report merged into"
    )
    args = ap.parse_args(argv)
    log(f"options: {vars(args)}")
    settings = Settings.from_env().with_(reader=args.reader)
    from finkg.retrieval.index.embed import open_embedder

    embedder = qa_pages.CachedEmbedder(
        open_embedder(settings.embedder, threads=settings.threads), args.work / "embeddings"
    )
    dev = qa_data.financebench_questions(args.questions)
    held = qa_data.financebench_questions(args.holdout) if args.holdout else []
    wanted = set(args.rows.split(","))
    rows = [r for r in ROWS if r.number in wanted]
    reranked = next((r for r in ROWS if r.number == args.rerank_row), None)
    if args.llm_rerank and reranked not in rows:
        ap.error(f"--rerank-row {args.rerank_row!r} is not among the rows run (--rows {args.rows})")
    out: dict = {
        "run": dt.datetime.now(dt.UTC).isoformat(timespec="minutes"),
        "options": {k: str(v) for k, v in vars(args).items()},
        "rows": [],
    }
    choice = None
    above: dict[str, dict] = {}  # the row above's measures by question id, by split
    for name in dict.fromkeys(r.variant for r in rows):
        store, retriever, cache = open_variant(
            VARIANTS[name], args.work, args.pdfs, settings, embedder
        )
        sets = {"A": [], "B": []}
        for item in items_for(store, retriever, cache, dev, args.pdfs):
            if item.evidence:
                sets[split_of(item.question)].append(item)
        if held:
            sets["held-out"] = [
                i for i in items_for(store, retriever, cache, held, args.pdfs) if i.evidence
            ]
        out["questions"] = {k: len(v) for k, v in sets.items()} | {"dev file": len(dev)}
        for row in (r for r in rows if r.variant == name):
            if (row.tuned_bm25 or row.tuned_weights) and choice is None:
                started = time.perf_counter()
                choice = choose(retriever, sets["A"], ROWS[-1])
                out["choice"] = {
                    "k1": choice[0],
                    "b": choice[1],
                    "weights": choice[2],
                    "seconds": round(time.perf_counter() - started),
                }
                log(f"  chosen on split A: {out['choice']}")
            result = {"row": row.name, "variant": name}
            for split, items in sets.items():
                each = evaluate(retriever, items, row, choice)
                result[split] = table(each, args.bootstrap)
                by_id = {i.question.id: m for i, m in zip(items, each, strict=True)}
                if split in above:
                    result[split]["step"] = step(by_id, above[split], args.bootstrap)
                above[split] = by_id
            out["rows"].append(result)
            log(
                f"{row.name}: "
                + ", ".join(
                    f"{s} Hit@5 {result[s]['page Hit@5'][0]:.3f} MRR {result[s]['page MRR'][0]:.3f}"
                    for s in sets
                    if result[s]
                )
            )
            if args.llm_rerank and row is reranked:
                from finkg.reader.transport.backends import open_reader

                out["llm_rerank"] = llm_rerank(
                    retriever,
                    sets["B"][: args.llm_rerank],
                    row,
                    choice,
                    open_reader(settings),
                    args.rerank_top,
                    args.bootstrap,
                )
    out["reranker"] = cross_encoder_status(settings)
    path = args.report
    results = json.loads(path.read_text()) if path.exists() else {}
    results["pages"] = merged(results.get("pages") or {}, out)
    path.write_text(json.dumps(results, indent=1, default=str))
    write_report(path.with_suffix(".md"), report(results))
    print("\n".join(report_lines(out)))
    return 0


def merged(old: dict, new: dict) -> dict:
    """A run's rows over an earlier run's (rows run apart, such as the stores built later,
    land in one table in the ablation's order); the rest is the new run's."""
    if old.get("options", {}).get("questions") != new["options"]["questions"]:
        return new
    rows = {r["row"]: r for r in old.get("rows", [])} | {r["row"]: r for r in new["rows"]}
    order = [r.name for r in ROWS]
    out = {**old, **new}
    out["rows"] = sorted(
        rows.values(), key=lambda r: order.index(r["row"]) if r["row"] in order else 99
    )
    out["runs"] = sorted({*old.get("runs", [old.get("run")]), new["run"]} - {None})
    return out


def cross_encoder_status(settings: Settings) -> dict:
    """What `--rerank auto` does with the trained cross-encoder, and why."""
    from finkg.tasks.qa.setup import auto_reranker_decision

    return auto_reranker_decision(settings)


if __name__ == "__main__":
    sys.exit(main())
