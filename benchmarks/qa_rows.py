"""The page-retrieval ablation's stores (`VARIANTS`: extraction and chunking) and rows
(`ROWS`: each adds one lever to the row above), the ranks it scores at (`KS`) and the
measures whose step from row to row it tests (`STEPPED`). `qa_retrieval` runs them,
`qa_report` shows them in this order."""

from __future__ import annotations

from dataclasses import dataclass

KS = (1, 3, 5, 10)


@dataclass(frozen=True)
class Variant:
    name: str
    layout: bool
    size: int
    overlap: int


VARIANTS = {
    v.name: v
    for v in (
        Variant("plain-768", False, 768, 128),
        Variant("layout-768", True, 768, 128),
        Variant("layout-192", True, 192, 32),
    )
}


@dataclass(frozen=True)
class Row:
    name: str
    variant: str
    paths: tuple[str, ...]
    planned: bool = False
    tuned_bm25: bool = False
    tuned_weights: bool = False

    @property
    def number(self) -> str:
        """The row's number, as `--rows` and `--rerank-row` name it."""
        return self.name.split()[0]


ROWS = (
    Row("0 today: plain text, 768/128, BM25 + dense", "plain-768", ("sparse", "dense")),
    Row("1 + layout extraction (table rows)", "layout-768", ("sparse", "dense")),
    Row("2 + chunks that fit the embedder (192/32)", "layout-192", ("sparse", "dense")),
    Row("3 + query plan (instructions out, glossary)", "layout-192", ("sparse", "dense"), True),
    Row("4 + statement path", "layout-192", ("sparse", "dense", "statement"), True),
    Row(
        "5 + parts (line-item sub-queries)",
        "layout-192",
        ("sparse", "dense", "statement", "parts"),
        True,
    ),
    Row(
        "6 + metadata path",
        "layout-192",
        ("sparse", "dense", "statement", "parts", "metadata"),
        True,
    ),
    Row(
        "7 + BM25 k1, b (split A)",
        "layout-192",
        ("sparse", "dense", "statement", "parts", "metadata"),
        True,
        True,
    ),
    Row(
        "8 + fusion weights (split A)",
        "layout-192",
        ("sparse", "dense", "statement", "parts", "metadata"),
        True,
        True,
        True,
    ),
)


STEPPED = ("page Hit@5", "page MRR")
