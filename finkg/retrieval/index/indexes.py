"""Where a store's text and vector indexes live, and refreshing both in one call.

An on-disk store at `P` keeps its indexes beside it, in `P.indexes/` (so they move and are
deleted with it). An in-memory store or a remote endpoint has no folder of its own: its
indexes go under `$FINKG_HOME/cache/indexes/<16 hex digits of the location's SHA-256>/`.
Every in-memory store shares that one folder; that is safe because a refresh compares
content, and the manifest's latest-commit IRI tells two stores at the same generation apart.
Inside: `text/` (the BM25 index) and `vectors/<model>/` (one folder per embedder).

>>> from finkg.config import Settings
>>> settings = Settings(home=Path("/home/u/.finkg"))
>>> index_dir("/data/store", settings)
PosixPath('/data/store.indexes')
>>> index_dir("http://127.0.0.1:7878", settings)
PosixPath('/home/u/.finkg/cache/indexes/347c4583debbf3d9')
>>> [c.value.rsplit("#", 1)[1] for c in parse_classes("NewsArticle,fkg:FilingPassage")]
['NewsArticle', 'FilingPassage']
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, overload

from pyoxigraph import NamedNode

from finkg.config import Settings
from finkg.errors import InputError
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG, FKG_NS, terms_of
from finkg.retrieval.index import persist
from finkg.retrieval.index.embed import Embedder
from finkg.retrieval.index.persist import DEFAULT_CLASSES, Progress, RefreshReport
from finkg.retrieval.index.text import TextIndex
from finkg.retrieval.index.vectors import VectorIndex


@dataclass(frozen=True)
class IndexReports:
    """What `refresh_indexes` did to each index, and the sizes it left them at."""

    directory: Path
    text: RefreshReport
    text_nodes: int
    vectors: RefreshReport | None  # None when vectors were not asked for
    vector_nodes: int | None
    model_id: str | None
    search: str | None = None  # how the vector index searches: exact, or what its build chose


def index_dir(store_location: str | Path | None, settings: Settings) -> Path:
    """The folder holding the indexes of the store at `store_location`."""
    text = str(store_location) if store_location is not None else ":memory:"
    if text in ("", ":memory:") or text.startswith(("http://", "https://")):
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        return settings.cache_dir / "indexes" / digest
    path = Path(text).expanduser()
    return path.parent / (path.name + ".indexes")


def text_dir(directory: Path) -> Path:
    return directory / "text"


def vector_dir(directory: Path, model_id: str) -> Path:
    return directory / "vectors" / re.sub(r"[^A-Za-z0-9._-]+", "-", model_id)


def parse_classes(names: str | None) -> tuple[NamedNode, ...]:
    """Classes from `NewsArticle,fkg:FilingPassage,https://...` (None: the default three)."""
    if names is None:
        return DEFAULT_CLASSES
    known = {name: term for name, term in terms_of(FKG) if name[:1].isupper()}
    classes = []
    for name in (n.strip() for n in names.split(",")):
        if name.startswith(("http://", "https://")):
            classes.append(NamedNode(name))
        elif name:
            local = name.removeprefix("fkg:").removeprefix(FKG_NS)
            if local not in known:
                raise InputError(
                    "not a finkg class",
                    field="classes",
                    value=name,
                    hint="use fkg: class names such as NewsArticle, FilingPassage, "
                    "DocumentChunk, PriceSummary, IndicatorWindow, Transaction, or full IRIs",
                )
            classes.append(known[local])
    if not classes:
        raise InputError("give at least one class", field="classes", value=names)
    return tuple(classes)


def refresh_indexes(
    store: BaseStore,
    settings: Settings,
    *,
    classes: tuple[NamedNode, ...] = DEFAULT_CLASSES,
    vectors: bool = True,
    embedder: Embedder | None = None,
    directory: Path | None = None,
    progress: Progress | None = None,
) -> IndexReports:
    """Refresh the store's BM25 index and (unless `vectors=False`) its vector index, in
    `directory` (default: `index_dir(store.location, settings)`). The embedder defaults to
    the one `settings.embedder` names (the packaged MiniLM unless set to `hash`)."""
    return open_indexes(
        store,
        settings,
        classes=classes,
        vectors=vectors,
        embedder=embedder,
        directory=directory,
        progress=progress,
    )[2]


@overload
def open_indexes(
    store: BaseStore,
    settings: Settings,
    *,
    classes: tuple[NamedNode, ...] = ...,
    vectors: Literal[True] = ...,
    embedder: Embedder | None = ...,
    directory: Path | None = ...,
    progress: Progress | None = ...,
) -> tuple[TextIndex, VectorIndex, IndexReports]: ...


@overload
def open_indexes(
    store: BaseStore,
    settings: Settings,
    *,
    classes: tuple[NamedNode, ...] = ...,
    vectors: bool,
    embedder: Embedder | None = ...,
    directory: Path | None = ...,
    progress: Progress | None = ...,
) -> tuple[TextIndex, VectorIndex | None, IndexReports]: ...


def open_indexes(
    store: BaseStore,
    settings: Settings,
    *,
    classes: tuple[NamedNode, ...] = DEFAULT_CLASSES,
    vectors: bool = True,
    embedder: Embedder | None = None,
    directory: Path | None = None,
    progress: Progress | None = None,
) -> tuple[TextIndex, VectorIndex | None, IndexReports]:
    """The refreshed indexes themselves, ready to serve pools, and what the refresh did."""
    directory = directory or index_dir(store.location, settings)
    text = TextIndex.open(text_dir(directory), classes=classes)
    read = persist.read_texts(store, persist.class_iris(classes))  # once, for both indexes
    text_report = text.refresh(store, progress=_prefixed("text", progress), read=read)
    if not vectors:
        return text, None, IndexReports(directory, text_report, len(text), None, None, None)
    if embedder is None:
        from finkg.retrieval.index.embed import open_embedder

        if progress:
            progress("vectors: loading the embedding model", 0, 1)
        embedder = open_embedder(
            settings.embedder, threads=settings.threads, device=settings.device
        )
    index = VectorIndex.open(
        vector_dir(directory, embedder.model_id),
        model_id=embedder.model_id,
        dim=embedder.dim,
        classes=classes,
    )
    report = index.refresh(store, embedder, progress=_prefixed("vectors", progress), read=read)
    chosen = index.calibration
    search = (
        chosen.describe()
        if chosen is not None
        else f"exact (below {index.faiss_threshold:,} nodes)"
    )
    reports = IndexReports(
        directory, text_report, len(text), report, len(index), embedder.model_id, search
    )
    return text, index, reports


def _prefixed(name: str, progress: Progress | None) -> Progress | None:
    if progress is None:
        return None
    return lambda stage, done, total: progress(f"{name}: {stage}", done, total)
