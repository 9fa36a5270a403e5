"""Pages and caches for the QA retrieval benchmark.

FinanceBench marks evidence by PDF page (0-based). finkg keeps a document as one normalized
text (its pages joined by a blank line, `doctext.pdf_to_text`) cut into chunks with
character spans. This module:

- extracts each PDF's pages once per extraction mode and keeps them on disk (`PageCache`),
  so that building a store and locating pages read the same text, and a second store (a
  different chunking) does not extract again;
- gives the extractor the lifecycle calls (`PageCache.extractor`): for a PDF, exactly
  `pdf_to_text`'s text, from the cached pages, with the pages (where they start: facts'
  page numbers);
- locates each page in a document's normalized text (`page_spans`): the pages are found in
  order, each from where the previous one ended, so a page is where the document text has it;
- turns a ranked list of chunks into a ranked list of pages (`ranked_pages`): a chunk
  stands for the pages it overlaps, the page holding most of it first; a page's rank is
  where it first appears;
- keeps embeddings by text (`CachedEmbedder`), so rebuilding a store or an index never
  embeds the same text twice.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from finkg.kg import chunking, lifecycle
from finkg.kg.ingest import doctext
from finkg.kg.ingest.documents import extract as default_extract


class PageCache:
    """Each PDF's normalized pages, per extraction mode, under `folder/<mode>/`."""

    def __init__(self, folder: Path, *, layout: bool) -> None:
        import pypdf

        self.layout = layout
        self.mode = f"{'layout' if layout else 'plain'}-pypdf{pypdf.__version__}"
        self.folder = folder / self.mode
        self.folder.mkdir(parents=True, exist_ok=True)

    def pages(self, data: bytes, *, source: str = "<pdf>") -> list[str]:
        digest = hashlib.sha256(data).hexdigest()
        path = self.folder / f"{digest[:24]}.json"
        if path.exists():
            return json.loads(path.read_text())
        pages = doctext.pdf_pages(data, source=source, layout=self.layout)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(pages))
        tmp.replace(path)
        return pages

    def pdf_pages(self, pdf: Path) -> list[str]:
        return self.pages(pdf.read_bytes(), source=str(pdf))

    def extractor(self):
        def extract(upload: lifecycle.Upload) -> str | lifecycle.Extracted:
            if upload.media_type != doctext.PDF:
                return default_extract(upload)
            pages = self.pages(upload.data, source=upload.source)
            text = doctext.normalize("\n\n".join(p for p in pages if p))
            return lifecycle.Extracted(text, tuple(pages))

        return extract


def page_spans(text: str, pages: Sequence[str]) -> list[tuple[int, int] | None]:
    """Where each page lies in the document's normalized `text` (None: an empty page, or
    one not found)."""
    spans: list[tuple[int, int] | None] = []
    cursor = 0
    for page in pages:
        body = chunking.normalize(page)
        if not body:
            spans.append(None)
            continue
        start = text.find(body, cursor)
        if start >= 0:
            spans.append((start, start + len(body)))
            cursor = start + len(body)
            continue
        head = text.find(body[:80], cursor)
        if head < 0:
            spans.append(None)
            continue
        tail = text.find(body[-80:], head)
        end = tail + len(body[-80:]) if tail >= 0 else head + len(body)
        spans.append((head, end))
        cursor = end
    return spans


def located_spans(text: str, pdf: Path, folder: Path) -> list[tuple[int, int] | None]:
    """Each page's span in a document's normalized `text`, in the extraction mode (layout
    or plain, each cached under `folder`) that locates the most pages: a store does not
    record which mode built it, and its text holds the pages of the mode that did."""
    best: list[tuple[int, int] | None] = []
    found = -1
    for layout in (True, False):
        spans = page_spans(text, PageCache(folder, layout=layout).pdf_pages(pdf))
        if (n := sum(s is not None for s in spans)) > found:
            best, found = spans, n
        if found >= 0.9 * len(spans):
            break  # this mode found nearly every page: the store was built from it
    return best


def chunk_pages(start: int, end: int, spans: Sequence[tuple[int, int] | None]) -> list[int]:
    """The pages [start, end) overlaps, the one holding most of it first."""
    found = []
    for page, span in enumerate(spans):
        if span is None or span[1] <= start or span[0] >= end:
            continue
        found.append((-(min(end, span[1]) - max(start, span[0])), page))
    return [page for _, page in sorted(found)]


def ranked_pages(chunks: Sequence[tuple[int, int]], spans) -> list[int]:
    """Pages in the order a ranked list of chunk spans first reaches them."""
    out: dict[int, None] = {}
    for start, end in chunks:
        for page in chunk_pages(start, end, spans):
            out.setdefault(page, None)
    return list(out)


class CachedEmbedder:
    """An embedder whose vectors are kept by text hash in `folder` (one `.npy` of rows and
    a `.json` of keys): the same text is embedded once, whatever store asks for it."""

    def __init__(self, inner, folder: Path, *, save_every: int = 2000) -> None:
        self.inner = inner
        self.model_id, self.dim = inner.model_id, inner.dim
        self.folder = folder / hashlib.sha256(inner.model_id.encode()).hexdigest()[:12]
        self.folder.mkdir(parents=True, exist_ok=True)
        self.save_every = save_every
        keys_path, rows_path = self.folder / "keys.json", self.folder / "vectors.npy"
        if keys_path.exists() and rows_path.exists():
            keys = json.loads(keys_path.read_text())
            rows = np.load(rows_path)
            self.rows = {k: rows[i] for i, k in enumerate(keys[: len(rows)])}
        else:
            self.rows = {}
        self._unsaved = 0

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self.key(t) for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self.rows))
        if missing:
            by_key = {self.key(t): t for t in texts}
            for start in range(0, len(missing), 256):
                batch = missing[start : start + 256]
                vectors = self.inner.embed([by_key[k] for k in batch])
                self.rows.update(zip(batch, vectors, strict=True))
                self._unsaved += len(batch)
                if self._unsaved >= self.save_every:
                    self.save()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.rows[k] for k in keys]).astype(np.float32)

    def save(self) -> None:
        keys = list(self.rows)
        tmp_rows, tmp_keys = self.folder / "vectors.tmp.npy", self.folder / "keys.tmp.json"
        np.save(tmp_rows, np.stack([self.rows[k] for k in keys]) if keys else np.zeros((0, 1)))
        tmp_keys.write_text(json.dumps(keys))
        tmp_rows.replace(self.folder / "vectors.npy")
        tmp_keys.replace(self.folder / "keys.json")
        self._unsaved = 0
