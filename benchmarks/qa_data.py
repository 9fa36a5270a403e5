"""The QA benchmark's data: FinanceBench and TAT-QA read from ../shared/data/qa, and the
FinanceBench PDFs taken into a store through `finkg ingest documents`' own path.

FinanceBench gives each document a `doc_name` ("3M_2018_10K") and a company name but no
ticker, so the company key of the doc_name ("3M", "ACTIVISIONBLIZZARD") stands in as the
company's ticker (its first ten characters) in a `companies` CSV: the documents' chunks are
then `fkg:about` that company (sidecar) and `--company` filters work as they do on real
tickers. The documents'
publication times are unknown (FinanceBench gives a fiscal period only), so no sidecar
states one and each document is available from its ingestion, as finkg records for any
document without one.

Relevance for retrieval metrics (paper 003 §4: a chunk is relevant when its normalized
character span overlaps an annotated evidence span): each evidence page is extracted alone
with the same extractor and normalizer, located in the document's normalized text, and a
chunk is relevant to a question when its [charStart, charEnd) overlaps one of the question's
evidence page spans.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.harness import ROOT

DATA = ROOT.parent / "shared" / "data" / "qa"
FINANCEBENCH = DATA / "financebench"
TATQA = DATA / "tatqa" / "tatqa_dataset_dev.json"

# an as-of instant after everything a benchmark ingests: every passage is available before it
LATE = dt.datetime(2100, 1, 1, tzinfo=dt.UTC)


def company_key(doc_name: str) -> str:
    """'3M_2018_10K' -> '3M'; 'AMERICANEXPRESS_2022_10K' -> 'AMERICANEX' (a ticker is at
    most ten characters; the first ten of the 30 FinanceBench keys are all different)."""
    return doc_name.split("_", 1)[0].upper()[:10]


@dataclass(frozen=True)
class Evidence:
    doc_name: str
    page: int  # 0-based PDF page
    text: str
    full_page: str


@dataclass(frozen=True)
class FBQuestion:
    id: str
    company: str
    doc_name: str
    question: str
    answer: str
    kind: str  # question_type: metrics-generated, domain-relevant, novel-generated
    evidence: tuple[Evidence, ...]
    reasoning: str = ""  # question_reasoning: Numerical reasoning, Information extraction, ...

    @property
    def type(self) -> str:
        return self.answer_type

    @property
    def answer_type(self) -> str:
        """extraction, arithmetic, yes/no or text (the report's question types): yes/no by
        the reference's first word, arithmetic when the question needs numerical reasoning,
        extraction when it asks for information as stated, text otherwise."""
        first = self.answer.strip().lower().split(" ", 1)[0].strip(".,")
        if first in ("yes", "no"):
            return "yes/no"
        if "numerical reasoning" in self.reasoning.lower():
            return "arithmetic"
        if "extraction" in self.reasoning.lower():
            return "extraction"
        return "text"

    @property
    def period(self) -> str | None:
        """The fiscal period the question's document covers: FY2018 or 2023Q2."""
        m = re.search(r"_(\d{4})(Q[1-4])?_", self.doc_name + "_")
        if not m:
            return None
        return f"{m.group(1)}{m.group(2)}" if m.group(2) else f"FY{m.group(1)}"


QUESTIONS = FINANCEBENCH / "financebench_questions_dev.jsonl"
PDFS = FINANCEBENCH / "pdfs"


def financebench_questions(path: Path = QUESTIONS) -> list[FBQuestion]:
    """Questions from a FinanceBench-format JSONL file (one question object a line)."""
    rows = path.read_text().splitlines()
    out = []
    for line in rows:
        if not line.strip():
            continue
        r = json.loads(line)
        out.append(
            FBQuestion(
                id=r["financebench_id"],
                company=r["company"],
                doc_name=r["doc_name"],
                question=r["question"],
                answer=r["answer"],
                kind=r.get("question_type") or "",
                reasoning=r.get("question_reasoning") or "",
                evidence=tuple(
                    Evidence(
                        e["doc_name"],
                        int(e["evidence_page_num"]),
                        e["evidence_text"],
                        e.get("evidence_text_full_page") or "",
                    )
                    for e in r["evidence"]
                ),
            )
        )
    return out


def financebench_documents() -> dict[str, dict[str, object]]:
    path = FINANCEBENCH / "financebench_document_information.jsonl"
    return {
        (r := json.loads(line))["doc_name"]: r for line in path.read_text().splitlines() if line
    }


def pdf_paths(folder: Path = PDFS) -> dict[str, Path]:
    return {p.stem: p for p in sorted(folder.glob("*.pdf"))}


def stage_financebench(folder: Path, pdf_dir: Path = PDFS) -> tuple[Path, list[Path]]:
    """The companies CSV and the PDFs (linked) with title/ticker sidecars, under `folder`.
    A PDF the document list does not name gets its company from its name's first part."""
    folder.mkdir(parents=True, exist_ok=True)
    info = financebench_documents()
    pdfs = pdf_paths(pdf_dir)
    for name in pdfs:
        info.setdefault(name, {"company": company_key(name), "gics_sector": ""})
    companies = folder / "companies.csv"
    keys = sorted({(company_key(n), str(info[n]["company"])) for n in pdfs if n in info})
    with companies.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ticker", "name", "sector"])
        for key, name in keys:
            sector = next(
                (str(r["gics_sector"]) for n, r in info.items() if company_key(n) == key), ""
            )
            w.writerow([key, name, sector])
    docs = folder / "pdfs"
    docs.mkdir(exist_ok=True)
    staged = []
    for name, src in pdfs.items():
        link = docs / src.name
        if not link.exists():
            link.symlink_to(src)
        meta = {"title": name, "tickers": [company_key(name)]}
        (docs / (src.name + ".meta.json")).write_text(json.dumps(meta))
        staged.append(link)
    return companies, staged


@dataclass
class TatContext:
    uid: str
    text: str  # the table as rows of cells, then the paragraphs
    questions: list[dict[str, object]] = field(default_factory=list)


def tatqa_contexts() -> Iterator[TatContext]:
    for ctx in json.loads(TATQA.read_text()):
        rows = ctx["table"]["table"]
        table = "\n".join(" | ".join(c.strip() for c in row) for row in rows)
        paras = "\n\n".join(p["text"] for p in sorted(ctx["paragraphs"], key=lambda p: p["order"]))
        yield TatContext(ctx["table"]["uid"], table + "\n\n" + paras, list(ctx["questions"]))
