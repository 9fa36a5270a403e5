"""The statement facts' own accuracy and cost for `qa_facts.py` (issue 44): facts per
filing, the seconds reading them takes, precision and recall on FinanceBench's statement
evidence pages, and the share of facts whose page holds their figure."""

from __future__ import annotations

import re
import time
from collections import defaultdict
from pathlib import Path

from benchmarks import qa_data, qa_pages
from finkg.kg.facts.read import is_primary, read_facts
from finkg.kg.facts.stored import stored_facts
from finkg.kg.statements import title_kind
from finkg.kg.store import BaseStore

_FIGURE = re.compile(r"^\(?\$?\s?\(?\d[\d,]*(?:\.\d+)?\)?%?$")


def evidence_rows(text: str) -> list[tuple[str, list[str]]]:
    """The statement rows of an evidence text (plain PDF text: a label line, then its
    figures on lines of their own): (label letters, figures as digits)."""
    rows: list[tuple[str, list[str]]] = []
    label, figures = "", []
    for raw in text.split("\n"):
        line = raw.strip().replace("$", "").strip()
        if not line:
            continue
        parts = line.split()
        if parts and all(_FIGURE.match(p) for p in parts):
            figures += [_digits(p) for p in parts]
            continue
        if label and figures:
            rows.append((label, figures))
        label, figures = _letters(line), []
    if label and figures:
        rows.append((label, figures))
    return rows


def _letters(text: str) -> str:
    return re.sub(r"[^a-z]", "", text.lower())


def _digits(text: str) -> str:
    return re.sub(r"[^\d.]", "", text).rstrip(".")


def facts_accuracy(store: BaseStore, questions, cache: qa_pages.PageCache, pdf_dir: Path) -> dict:
    """Precision and recall of facts on FinanceBench's statement evidence pages (their
    whole page's text, `evidence_text_full_page`; a fact printed as a dash is left out:
    that text leaves dashes out), and the share of all facts whose page holds their figure
    (module docstring, step 2)."""
    pages_seen: dict[tuple[str, int], str] = {}
    for q in questions:
        for e in q.evidence:
            lines = e.full_page.split("\n")
            if any(title_kind(x) and is_primary(x.strip()) for x in lines):
                pages_seen[(e.doc_name, e.page)] = e.full_page
    by_doc = _facts_by_document(store)
    right = extracted = recalled = figures = dashes = 0
    examples: list[str] = []
    for (doc, page), text in sorted(pages_seen.items()):
        facts = [f for f in by_doc.get(doc, []) if f.page == page + 1]
        rows = evidence_rows(text)
        figures += sum(len(f) for _, f in rows)
        found: set[tuple[int, int]] = set()
        for f in facts:
            label, figure = _letters(f.label.split(":")[-1]), _digits(f.printed)
            if not figure:  # a dash (zero): the evidence text leaves dashes out
                dashes += 1
                continue
            extracted += 1
            hit = next(
                (
                    (i, j)
                    for i, (lab, figs) in enumerate(rows)
                    if lab and (lab == label or lab.endswith(label) or label.endswith(lab))
                    for j, fig in enumerate(figs)
                    # by column where the evidence row has a figure in each (a dash is none)
                    if fig == figure and (len(figs) != f.columns or j == f.column_of)
                ),
                None,
            )
            if hit is not None:
                right += 1
                found.add(hit)
            elif len(examples) < 8:
                examples.append(f"{doc} p.{page + 1}: {f.label} = {f.printed} (FY{f.year})")
        recalled += len(found)
    pages_ok = checked = 0
    for doc, facts in by_doc.items():
        pdf = pdf_dir / f"{doc}.pdf"
        if not pdf.exists():
            continue
        pages = cache.pdf_pages(pdf)
        for f in facts:
            if f.page is None or not 1 <= f.page <= len(pages):
                continue
            checked += 1
            pages_ok += f.printed in pages[f.page - 1]
    return {
        "statement_evidence_pages": len(pages_seen),
        "facts_on_them": extracted,
        "dash_facts_left_out": dashes,
        "value_precision": round(right / extracted, 4) if extracted else None,
        "figures_in_evidence": figures,
        "recall": round(recalled / figures, 4) if figures else None,
        "not_matched_examples": examples,
        "facts_checked_for_page": checked,
        "page_holds_figure": round(pages_ok / checked, 4) if checked else None,
    }


class _Fact:
    """A stored fact with its column among its row's facts (evidence rows list figures by
    column)."""

    def __init__(self, ref, column: int, columns: int) -> None:
        self.label, self.printed, self.page, self.year = ref.label, ref.printed, ref.page, ref.year
        self.column_of, self.columns = column, columns


def _facts_by_document(store: BaseStore) -> dict[str, list[_Fact]]:
    facts = stored_facts(store, before=qa_data.LATE)
    titles = _titles(store)
    rows: dict[tuple[str, int], list] = defaultdict(list)
    for f in facts:
        rows[(f.document.value, f.start)].append(f)
    out: dict[str, list[_Fact]] = defaultdict(list)
    for (doc, _start), row in rows.items():
        # the columns left to right are the row's facts in order of their IRIs' column part
        row.sort(key=lambda f: int(f.iri.value.rsplit("-", 1)[1]))
        for column, f in enumerate(row):
            out[titles.get(doc, doc)].append(_Fact(f, column, len(row)))
    return out


def _titles(store: BaseStore) -> dict[str, str]:
    rows = store.select(
        "SELECT ?d ?t WHERE { GRAPH ?g { ?d a <https://w3id.org/finkg/ns#Document> ; "
        "<http://purl.org/dc/terms/title> ?t } }"
    )
    return {r["d"].value: r["t"].value for r in rows}  # type: ignore[union-attr]


def extraction_cost(cache: qa_pages.PageCache, pdf_dir: Path) -> dict:
    """Facts per filing and the seconds reading them takes (the text already extracted)."""
    from finkg.kg import chunking
    from finkg.kg.ingest import doctext

    counts, seconds = {}, 0.0
    for pdf in sorted(pdf_dir.glob("*.pdf")):
        pages = cache.pdf_pages(pdf)
        text = chunking.normalize(doctext.normalize("\n\n".join(p for p in pages if p)))
        t = time.perf_counter()
        counts[pdf.stem] = len(read_facts(text))
        seconds += time.perf_counter() - t
    values = sorted(counts.values())
    return {
        "filings": len(counts),
        "facts": sum(values),
        "median_per_filing": values[len(values) // 2] if values else 0,
        "filings_without_facts": sorted(k for k, v in counts.items() if v == 0),
        "seconds_per_filing": round(seconds / max(1, len(counts)), 3),
    }
