"""FinanceBench's numeric questions answered from statement facts (issue 44).

    python -m benchmarks.qa_facts --work /work/qa-cache [--questions FILE] [--pdfs DIR]
        [--reader qwen2.5-coder-0.5b] [--answers N] [--only-facts] [--baseline]
        [--report benchmarks/reports/qa_facts.json]

1. The store: every PDF of `--pdfs` through the document lifecycle, as `finkg ingest
   documents` does it (layout text, from `qa_pages.PageCache`; 192/32 chunks; statement
   facts read at the Analyzed stage), the store `qa_retrieval.py` calls `layout-192`.
2. The facts themselves: facts per filing and the seconds reading them takes; on the
   evidence pages FinanceBench cites that hold a primary statement (a title line of one in
   `evidence_text`), the precision and recall of the facts read there against the
   statement rows of that text (label, and the figure in its column; scale and sign are
   those of the printed figure, which the evidence writes too); and over every fact, the
   share whose page (`fkg:page`) holds its printed figure.
3. Answers: each dev question whose PDF is present, in its own document (`--answers N`: the
   first N, in file order), through `finkg ask`'s path: the statement facts first, the
   reader (`--reader`, the packaged 0.5B by default) for the rest; with `--only-facts` the
   reader is not opened and a question the facts do not answer counts as wrong. Exact
   (`evaluation.answers.correct`) by FinanceBench question type (metrics-generated,
   domain-relevant, novel-generated) and answer kind (extraction, arithmetic, yes/no, text),
   numeric questions (extraction or arithmetic with a number in the reference), how many
   were computed from facts and how many of those were right, seconds per answer, and the
   validation status: the share of answers rated High and how many of those are right.
4. `--baseline`: today's path (statement facts off: retrieval and the reader) on the
   questions where the facts route changed the answer's path (it computed the answer, or
   put a computed figure before the reader); elsewhere both paths are the same computation
   (same evidence, same greedy reader), and the report says so. Paired differences.

Intervals: 95 %, resampling companies whole (questions about one filer share its
statements), with the question-level count beside. Splits: A and B by company
(`qa_retrieval.split_of`), both reported.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from pathlib import Path

from benchmarks import qa_data, qa_pages, qa_retrieval
from benchmarks.harness import bootstrap_option, report_option, write_report
from benchmarks.qa_facts_accuracy import extraction_cost, facts_accuracy
from finkg.config import Settings
from finkg.errors import FinkgError
from finkg.evaluation.answers import correct, numbers, strict_yes_no
from finkg.evaluation.stats import mean_by_groups, paired_by_groups, verdict
from finkg.kg.iri import mint
from finkg.kg.store import BaseStore
from finkg.tasks.qa.ask import QA
from finkg.tasks.qa.types import QAConfig

KINDS = ("metrics-generated", "domain-relevant", "novel-generated")
TYPES = ("extraction", "arithmetic", "yes/no", "text")


def log(*parts: object) -> None:
    print(*parts, flush=True)


# -- answers --------------------------------------------------------------------------------


def numeric(q) -> bool:
    return q.answer_type in ("extraction", "arithmetic") and bool(numbers(q.answer))


def answer_rows(qa: QA, questions, store: BaseStore, *, reader: bool, label: str) -> list[dict]:
    """Each question answered in its own document (module docstring, step 3)."""
    rows = []
    for n, q in enumerate(questions, 1):
        doc = mint("document", _digest(store, q.doc_name), base=store.graphs.base)
        t = time.perf_counter()
        try:
            if reader:
                asked = qa.ask(q.question, as_of=qa_data.LATE, documents=[doc])
            else:
                asked = qa.answer_from_facts(q.question, as_of=qa_data.LATE, documents=[doc])
        except FinkgError as e:
            log(f"  {label} {q.id}: failed: {e}")
            asked = None
        seconds = time.perf_counter() - t
        said = ""
        if asked is not None:
            said = asked.summary
            if asked.facts is None and asked.calculation is None and asked.output is not None:
                said += " " + " ".join(i.text for i in asked.output.insights)
        ok = bool(asked is not None and correct(said, q.answer))
        computed = bool(asked is not None and asked.facts is not None)
        figure = bool(asked is not None and asked.facts is None and "finkg computed" in said)
        rows.append(
            {
                "id": q.id,
                "doc": q.doc_name,
                "company": qa_data.company_key(q.doc_name),
                "split": qa_retrieval.split_of(q),
                "kind": q.kind,
                "type": q.answer_type,
                "numeric": numeric(q),
                "correct": ok,
                "computed": computed,
                "figure_for_reader": figure,
                "status": asked.status if asked is not None else "none",
                "seconds": round(seconds, 3),
                "answer": (asked.summary if asked is not None else "")[:300],
                "reference": q.answer[:200],
                "note": (asked.note if asked is not None else "")[:400],
                "iri": asked.iri.value if asked is not None and asked.iri else None,
            }
        )
        log(
            f"  {label} {n}/{len(questions)} {q.doc_name} [{q.kind[:6]} {q.answer_type}]: "
            f"{'right' if ok else 'wrong'} {'facts ' if computed else ''}"
            f"{rows[-1]['status']} {seconds:.1f}s | {rows[-1]['answer'][:70]!r} "
            f"vs {q.answer[:30]!r}"
        )
    return rows


_DIGESTS: dict[str, str] = {}


def _digest(store: BaseStore, doc_name: str) -> str:
    """The digest a document's node is minted from, by its title (the PDF's name)."""
    if not _DIGESTS:
        rows = store.select(
            "SELECT ?d ?t WHERE { GRAPH ?g { ?d a <https://w3id.org/finkg/ns#Document> ; "
            "<http://purl.org/dc/terms/title> ?t } }"
        )
        for r in rows:
            _DIGESTS[r["t"].value] = r["d"].value.rsplit("/", 1)[-1]  # type: ignore[union-attr]
    return _DIGESTS[doc_name]


def audit_computed(store: BaseStore, rows: list[dict]) -> dict:
    """Of the computed answers' citations: how many resolve to a stored statement fact with
    a page, whose chunk holds its printed figure (`finkg audit` walks the same links)."""
    from finkg.retrieval.index.live import node_texts

    cited = resolved = 0
    for r in rows:
        if not r["computed"] or not r["iri"]:
            continue
        found = store.select(
            "PREFIX fkg: <https://w3id.org/finkg/ns#> PREFIX prov: <http://www.w3.org/ns/prov#> "
            "SELECT ?f ?printed ?page ?chunk WHERE { GRAPH ?o { <" + r["iri"] + "> "
            "fkg:citation/fkg:cites ?f } OPTIONAL { GRAPH ?g { ?f a fkg:StatementFact ; "
            "fkg:printedValue ?printed ; fkg:page ?page ; prov:wasDerivedFrom ?chunk } } }"
        )
        rows_ = list(found)
        chunks = [x["chunk"] for x in rows_ if x["chunk"] is not None]
        texts = node_texts(store, chunks) if chunks else {}  # type: ignore[arg-type]
        for x in rows_:
            cited += 1
            chunk = x["chunk"]
            resolved += bool(
                chunk is not None and x["printed"].value in texts.get(chunk, "")  # type: ignore[union-attr, call-overload]
            )
    return {
        "citations": cited,
        "resolved": resolved,
        "resolution": round(resolved / cited, 4) if cited else None,
    }


def summary(rows: list[dict], boot: int) -> dict:
    """Exact by type, kind, numeric and split, with company-resampled intervals."""

    def part(chosen: list[dict]) -> dict | None:
        if not chosen:
            return None
        ci = mean_by_groups([r["correct"] for r in chosen], [r["company"] for r in chosen], n=boot)
        return {"exact": [round(ci.value, 4), round(ci.low, 4), round(ci.high, 4)], "n": ci.n}

    out: dict = {"all": part(rows)}
    for k in KINDS:
        out[k] = part([r for r in rows if r["kind"] == k])
    for t in TYPES:
        out[t] = part([r for r in rows if r["type"] == t])
    out["numeric"] = part([r for r in rows if r["numeric"]])
    out["yes/no, strict"] = part(
        [
            {**r, "correct": bool(strict_yes_no(r["answer"], r["reference"]))}
            for r in rows
            if r["type"] == "yes/no" and strict_yes_no(r["answer"], r["reference"]) is not None
        ]
    )
    for s in ("A", "B"):
        out[f"split {s}"] = part([r for r in rows if r["split"] == s])
        out[f"split {s} metrics-generated"] = part(
            [r for r in rows if r["split"] == s and r["kind"] == "metrics-generated"]
        )
    computed = [r for r in rows if r["computed"]]
    high = [r for r in rows if r["status"] == "High"]
    out["computed"] = {
        "n": len(computed),
        "right": sum(r["correct"] for r in computed),
        "seconds_mean": round(sum(r["seconds"] for r in computed) / len(computed), 3)
        if computed
        else None,
    }
    out["high"] = {
        "share_of_answers": round(len(high) / len(rows), 4) if rows else None,
        "n": len(high),
        "right": part(high),
    }
    out["seconds_mean"] = round(sum(r["seconds"] for r in rows) / len(rows), 2) if rows else None
    return out


def baseline(qa_today: QA, new_rows: list[dict], questions, store, boot: int) -> dict:
    """Today's path where the facts route changed the path, the same rows elsewhere, and the
    paired differences (module docstring, step 4)."""
    changed = {r["id"] for r in new_rows if r["computed"] or r["figure_for_reader"]}
    todo = [q for q in questions if q.id in changed]
    rerun = {r["id"]: r for r in answer_rows(qa_today, todo, store, reader=True, label="today")}
    today = [rerun.get(r["id"], {**r, "same_path": True}) for r in new_rows]
    return {"rerun": len(rerun), "same_path": len(new_rows) - len(rerun), "rows": today} | paired(
        new_rows, today, boot
    )


def paired(new_rows: list[dict], today: list[dict], boot: int) -> dict:
    """Today's exact and the facts path's difference from it, paired by question."""
    out: dict = {}
    for name, keep in (
        ("all", lambda r: True),
        ("metrics-generated", lambda r: r["kind"] == "metrics-generated"),
        ("numeric", lambda r: r["numeric"]),
    ):
        pairs = [(n, t) for n, t in zip(new_rows, today, strict=True) if keep(n)]
        if not pairs:
            continue
        d = paired_by_groups(
            [n["correct"] for n, _ in pairs],
            [t["correct"] for _, t in pairs],
            [n["company"] for n, _ in pairs],
            n=boot,
        )
        today_ci = mean_by_groups(
            [t["correct"] for _, t in pairs], [n["company"] for n, _ in pairs], n=boot
        )
        out[name] = {
            "today": [round(today_ci.value, 4), round(today_ci.low, 4), round(today_ci.high, 4)],
            "difference": [round(d.value, 4), round(d.low, 4), round(d.high, 4)],
            "verdict": verdict(d),
            "n": d.n,
        }
    return out


def rescore(report: Path, boot: int) -> int:
    """`--rescore`: the summaries of a saved run, recomputed from its rows."""
    from benchmarks.qa_facts_report import render

    saved = json.loads(report.read_text())
    rows = saved["answers"]["rows"]
    saved["answers"] = summary(rows, boot) | {"rows": rows}
    if saved.get("baseline"):
        b = saved["baseline"]
        keep = {k: b[k] for k in ("rerun", "same_path", "rows")}
        saved["baseline"] = keep | paired(rows, b["rows"], boot)
    report.write_text(json.dumps(saved, indent=1) + "\n")
    write_report(report.with_suffix(".md"), render(saved))
    log(f"rescored {report} and {report.with_suffix('.md')}")
    return 0


# -- the run ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, required=True, help="page cache, stores, embeddings")
    ap.add_argument("--questions", type=Path, default=qa_data.QUESTIONS, help="FinanceBench JSONL")
    ap.add_argument("--pdfs", type=Path, default=qa_data.PDFS, help="folder of the filings' PDFs")
    ap.add_argument("--reader", default="qwen2.5-coder-0.5b", help="the reader of the rest")
    ap.add_argument("--answers", type=int, default=0, help="the first N questions (0: all)")
    ap.add_argument("--only-facts", action="store_true", help="no reader: facts alone")
    ap.add_argument("--baseline", action="store_true", help="today's path where it differs")
    bootstrap_option(ap, 2000)
    report_option(ap, "qa_facts.json")
    ap.add_argument(
        "--rescore",
        action="store_true",
        help="recompute the summaries and paired differences from --report's saved rows "
        "(no store, no reader) and rewrite it and its Markdown",
    )
    args = ap.parse_args(argv)
    log(f"options: {vars(args)}")
    if args.rescore:
        return rescore(args.report, args.bootstrap)
    settings = Settings.from_env().with_(reader=args.reader)
    from finkg.retrieval.index.embed import open_embedder

    embedder = qa_pages.CachedEmbedder(
        open_embedder(settings.embedder, threads=settings.threads), args.work / "embeddings"
    )
    variant = qa_retrieval.VARIANTS["layout-192"]
    started = time.perf_counter()
    store, retriever, cache = qa_retrieval.open_variant(
        variant, args.work, args.pdfs, settings, embedder
    )
    log(f"store and indexes ready in {time.perf_counter() - started:.0f} s")
    pdfs = {p.stem for p in args.pdfs.glob("*.pdf")}
    questions = [q for q in qa_data.financebench_questions(args.questions) if q.doc_name in pdfs]
    if args.answers:
        questions = questions[: args.answers]
    out: dict = {
        "run": dt.datetime.now(dt.UTC).isoformat(timespec="minutes"),
        "options": {k: str(v) for k, v in vars(args).items()},
        "store": str(args.work / "stores" / variant.name),
    }
    out["extraction"] = extraction_cost(cache, args.pdfs)
    log(f"extraction: {out['extraction']}")
    out["accuracy"] = facts_accuracy(
        store, qa_data.financebench_questions(args.questions), cache, args.pdfs
    )
    log(f"accuracy: {out['accuracy']}")
    if args.only_facts:
        qa = QA.facts_only(store)
    else:
        from finkg.reader.transport.backends import open_reader

        qa = QA(store, retriever, open_reader(settings), config=QAConfig())
    rows = answer_rows(qa, questions, store, reader=not args.only_facts, label="facts")
    out["answers"] = summary(rows, args.bootstrap) | {"rows": rows}
    out["audit"] = audit_computed(store, rows)
    log(f"audit of computed answers: {out['audit']}")
    out["reader"] = "none (facts only)" if args.only_facts else args.reader
    if args.baseline and not args.only_facts:
        today = QA(qa.store, qa.retriever, qa.llm, config=QAConfig(facts=False))
        out["baseline"] = baseline(today, rows, questions, store, args.bootstrap)
    args.report.write_text(json.dumps(out, indent=1) + "\n")
    from benchmarks.qa_facts_report import render

    write_report(args.report.with_suffix(".md"), render(out))
    log(f"wrote {args.report} and {args.report.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
