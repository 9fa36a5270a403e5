"""Page and chunk retrieval measures for one question inside its own document, and their
tables: each measure's mean with a 95 % bootstrap interval over questions, and what a row
adds to the row above with a paired interval (`qa_retrieval`'s ablation)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from benchmarks import qa_data, qa_pages
from benchmarks.qa_rows import KS, STEPPED
from finkg.evaluation.stats import bootstrap, paired


@dataclass
class Item:
    """One question inside its own document: the pool and where the evidence pages are."""

    question: qa_data.FBQuestion
    pool: list
    spans: list
    evidence: set[int]
    ranks: dict = field(default_factory=dict)  # (k1, b, planned, paths) -> the paths' ranks
    pages_of: dict = field(default_factory=dict)  # chunk node -> the pages it overlaps

    @property
    def relevant_chunks(self) -> int:
        """How many of the pool's chunks overlap an evidence page."""
        if not hasattr(self, "_relevant"):
            self._relevant = sum(
                bool(set(qa_pages.chunk_pages(p.start, p.end, self.spans)) & self.evidence)
                for p in self.pool
                if p.start is not None and p.end is not None
            )
        return self._relevant


def measures(item: Item, passages: list) -> dict[str, float]:
    """Page and chunk measures of one ranking (read as far as they need: the first ten
    pages and the first evidence page)."""
    pages: dict[int, None] = {}
    relevant: list[bool] = []
    first = None
    for p in passages:
        if p.start is None or p.end is None:
            continue
        if p.node not in item.pages_of:
            item.pages_of[p.node] = qa_pages.chunk_pages(p.start, p.end, item.spans)
        on = item.pages_of[p.node]
        relevant.append(bool(set(on) & item.evidence))
        for page in on:
            if page not in pages:
                pages[page] = None
                if first is None and page in item.evidence:
                    first = len(pages)
        if first is not None and len(pages) >= max(KS) and len(relevant) >= 5:
            break
    ranked = list(pages)
    out = {f"page Hit@{k}": float(first is not None and first <= k) for k in KS}
    out["page R@5"] = len(set(ranked[:5]) & item.evidence) / len(item.evidence)
    out["page MRR"] = 1.0 / first if first else 0.0
    out["chunk P@5"] = sum(relevant[:5]) / 5
    out["chunk MRR"] = next((1.0 / i for i, r in enumerate(relevant, 1) if r), 0.0)
    total = item.relevant_chunks
    out["chunk R@5"] = sum(relevant[:5]) / total if total else 0.0
    return out


def table(rows: list[dict[str, float]], n_boot: int = 1000) -> dict[str, list[float]]:
    """Each measure's mean and 95 % bootstrap interval over questions (empty: none)."""
    if not rows:
        return {}
    out = {}
    for key in rows[0] if rows else ():
        values = [r[key] for r in rows]
        ci = bootstrap(lambda p, a: float(np.mean(p)), values, [0.0] * len(values), n=n_boot)
        out[key] = [round(ci.value, 4), round(ci.low, 4), round(ci.high, 4)]
    return out | {"n": len(rows)}  # type: ignore[dict-item]


def step(now: dict[str, dict], before: dict[str, dict], n_boot: int) -> dict:
    """What a row adds to the row above on the questions both rank (measures by question
    id): the difference of each `STEPPED` measure with its paired 95 % bootstrap interval."""
    both = [q for q in now if q in before]
    if not both:
        return {}
    out: dict = {"n": len(both)}
    for key in STEPPED:
        a, b = [now[q][key] for q in both], [before[q][key] for q in both]
        d = paired(lambda p, _: float(np.mean(p)), a, b, [0.0] * len(a), n=n_boot)
        out[key] = [round(d.value, 4), round(d.low, 4), round(d.high, 4)]
    return out
