"""What the persisted indexes share: reading node texts, diffing them, saving atomically.

An index directory holds `manifest.json` and one data folder, `data-<random>/`, that the
manifest names. A save writes a new data folder, then replaces the manifest (a temporary
file renamed over it: the one atomic step), then deletes the other data folders. A crash at
any point leaves a manifest that names a complete data folder, so the old index stays
readable; leftovers of an interrupted save are removed by the next one.

The manifest records the parameters an index was built with (like bm25s's
`params.index.json`); opening it with other parameters is refused, naming the field, both
values and the fix. It also records the store state the index reflects: the generation and
the latest commit IRI (a store emptied and rebuilt can reach the same generation again,
never the same commit).

Refreshes are incremental by content: each node's text has a short hash, and only nodes
whose hash is new or changed are tokenized or embedded again.

>>> text_hash("Acme beats estimates")
'2925506e2c653f53'
>>> d = diff(["a", "b", "c"], ["h1", "h2", "h3"], {"a": "h1", "c": "h9", "d": "h4"})
>>> d.added, d.changed, d.removed, d.unchanged
(['d'], ['c'], ['b'], ['a'])
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from pyoxigraph import NamedNode

from finkg import queries
from finkg.errors import InputError
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG

DEFAULT_CLASSES = (FKG.NewsArticle, FKG.FilingPassage, FKG.DocumentChunk)
MANIFEST = "manifest.json"
# progress(stage, done, total): called as long work advances
Progress = Callable[[str, int, int], None]


class NotIndexedError(InputError):
    """Nodes asked of an index that it does not hold: the index is older than the store."""


@dataclass(frozen=True)
class RefreshReport:
    """What one refresh did: nodes added, re-done because their text changed, dropped, kept."""

    added: int
    changed: int
    removed: int
    unchanged: int
    seconds: float


@dataclass(frozen=True)
class Diff:
    added: list[str]
    changed: list[str]
    removed: list[str]
    unchanged: list[str]


def text_hash(text: str) -> str:
    """A short content hash of a node's text (16 hex digits of its SHA-256)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def class_iris(classes: Iterable[NamedNode | str]) -> tuple[str, ...]:
    """The classes as sorted IRI strings (what a manifest records), at least one."""
    if isinstance(classes, str | NamedNode):
        classes = [classes]
    iris = sorted({as_iri(c) for c in classes})
    if not iris:
        raise InputError("give at least one class to index", field="classes", value=[])
    for iri in iris:
        if not iri.startswith(("http://", "https://")):
            raise InputError("a class must be an http(s) IRI", field="classes", value=iri)
    return tuple(iris)


def node_texts(store: BaseStore, classes: Sequence[str]) -> dict[str, str]:
    """{node IRI: text} for every node of `classes`, sorted by IRI; a node's several texts
    are joined (sorted, blank line between) so the result does not depend on row order."""
    result = queries.select(store, "node_texts", {"class": [NamedNode(c) for c in classes]})
    texts: dict[str, list[str]] = {}
    for row in result:
        node, text = row.maybe("node"), row.maybe_string("text")
        if isinstance(node, NamedNode) and text is not None:
            texts.setdefault(node.value, []).append(text)
    return {iri: "\n\n".join(sorted(texts[iri])) for iri in sorted(texts)}


def store_state(store: BaseStore) -> tuple[int, str | None]:
    """(generation, latest commit IRI) of a store; (0, None) for a store never written."""
    head = queries.select(store, "store_head").first()
    generation = head.maybe_integer("generation") if head is not None else None
    if head is None or generation is None:
        return 0, None
    return generation, head.maybe_string("commit")


class StoreTexts(NamedTuple):
    """The store's state and its texts of `classes`, read once for every index refreshed
    from them (`indexes.open_indexes`: the BM25 and vector indexes read the same texts)."""

    classes: tuple[str, ...]
    generation: int
    commit: str | None
    texts: dict[str, str]
    hashes: dict[str, str]


def read_texts(store: BaseStore, classes: Sequence[str]) -> StoreTexts:
    """The store's state, read first (so a later write leaves an index stale, never wrong),
    then its texts of `classes` and their hashes."""
    generation, commit = store_state(store)
    texts = node_texts(store, classes)
    hashes = {iri: text_hash(t) for iri, t in texts.items()}
    return StoreTexts(tuple(classes), generation, commit, texts, hashes)


class Changes(NamedTuple):
    """What a refresh works from: the store's state read first (so a later write leaves the
    index stale, never wrong), the texts and their hashes, and how they differ from the
    index's."""

    generation: int
    commit: str | None
    texts: dict[str, str]
    hashes: dict[str, str]
    diff: Diff


def changes(
    store: BaseStore,
    classes: Sequence[str],
    old_iris: Sequence[str],
    old_hashes: Sequence[str],
    *,
    read: StoreTexts | None = None,
) -> Changes:
    """The store's texts of `classes` (`read` already, when it holds those classes) against
    an index's (IRI, hash) pairs."""
    if read is None or read.classes != tuple(classes):
        read = read_texts(store, classes)
    _, generation, commit, texts, hashes = read
    return Changes(generation, commit, texts, hashes, diff(old_iris, old_hashes, hashes))


def diff(old_iris: Sequence[str], old_hashes: Sequence[str], current: Mapping[str, str]) -> Diff:
    """Compare an index's (IRI, hash) pairs with the store's {IRI: hash}."""
    old = dict(zip(old_iris, old_hashes, strict=True))
    added, changed, unchanged = [], [], []
    for iri, h in current.items():
        if iri not in old:
            added.append(iri)
        elif old[iri] != h:
            changed.append(iri)
        else:
            unchanged.append(iri)
    removed = [iri for iri in old_iris if iri not in current]
    return Diff(added, changed, removed, unchanged)


def positions(known: Mapping[str, int], iris: Iterable[NamedNode | str], *, what: str) -> list[int]:
    """The row of each IRI; an IRI the index lacks raises NotIndexedError."""
    rows, missing = [], []
    for iri in iris:
        key = as_iri(iri)
        row = known.get(key)
        if row is None:
            missing.append(key)
        else:
            rows.append(row)
    if missing:
        raise NotIndexedError(
            f"{len(missing)} node(s) are not in the {what}",
            field="iri",
            value=missing[0],
            hint="refresh the index (`finkg index`, or index.refresh(store)) after writing "
            "evidence, and check the node is of an indexed class with an fkg:text",
        )
    return rows


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indexes of the `k` highest scores, best first; ties go to the lower index, so the
    order never depends on how a partition happened to fall."""
    if len(scores) > k:
        threshold = np.partition(scores, len(scores) - k)[len(scores) - k]
        candidates = np.flatnonzero(scores >= threshold)
    else:
        candidates = np.arange(len(scores))
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order][:k]


def check_count(name: str, value: object, *, least: int = 1) -> None:
    """Refuse an option that is not a whole number of at least `least`, quoting it."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        message = f"{name} must be a whole number of at least {least}"
        raise InputError(message, field=name, value=value)


def unreadable(folder: Path, reason: object) -> InputError:
    return InputError(
        f"the index data is unreadable: {reason}",
        source=folder,
        hint=f"delete {folder.parent} to rebuild the index",
    )


class PersistedIndex:
    """What both indexes share: a directory, its manifest, and staleness."""

    directory: Path
    _manifest: dict[str, Any]
    _data: Any  # has .iris, the indexed node IRIs

    @property
    def classes(self) -> tuple[NamedNode, ...]:
        return tuple(NamedNode(c) for c in self._manifest["classes"])

    @property
    def generation(self) -> int | None:
        """The store generation the index reflects (None before its first refresh)."""
        return self._manifest["generation"]

    def __len__(self) -> int:
        return len(self._data.iris)

    def stale(self, store: BaseStore) -> bool:
        """True when the store has been written since the index was last refreshed."""
        return store_state(store) != (self._manifest["generation"], self._manifest["commit"])


def as_iri(node: NamedNode | str) -> str:
    return node.value if isinstance(node, NamedNode) else str(node)


def read_manifest(directory: Path, kind: str) -> dict[str, Any] | None:
    """The manifest of an index directory (None when there is none yet)."""
    path = directory / MANIFEST
    if not path.exists():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise InputError(
            f"unreadable index manifest: {e}", source=path, hint=f"delete {directory} to rebuild"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("kind") != kind:
        got = manifest.get("kind") if isinstance(manifest, dict) else manifest
        hint = "give the directory of this kind of index"
        raise InputError(f"not a {kind} directory", source=path, field="kind", value=got, hint=hint)
    return manifest


def check_same(directory: Path, manifest: Mapping[str, Any], asked: Mapping[str, Any]) -> None:
    """Refuse to open an index built with other parameters than those asked for."""
    for field, value in asked.items():
        stored = manifest.get(field)
        if stored != value:
            raise InputError(
                f"the index in {directory} was built with {field}={stored!r}, "
                f"not the {value!r} asked for",
                field=field,
                value=value,
                hint=f"open it with {field}={stored!r}, or delete {directory} "
                "(or use another directory) to build a new index",
            )


def open_manifest(directory: Path, kind: str, asked: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest of the `kind` index in `directory`, built with the parameters `asked`
    (`check_same`); with no index there, a new empty one is saved (its "data" is None)."""
    manifest = read_manifest(directory, kind)
    if manifest is None:
        manifest = {"kind": kind, **asked, "generation": None, "commit": None, "count": 0}
        manifest["data"] = None
        save(directory, manifest, None)
        return manifest
    check_same(directory, manifest, asked)
    return manifest


def save(directory: Path, manifest: dict[str, Any], write: Callable[[Path], None] | None) -> str:
    """Write a new data folder with `write(folder)` (None: keep the manifest's folder), then
    atomically replace the manifest; returns the data folder's name."""
    directory.mkdir(parents=True, exist_ok=True)
    if write is not None:
        name = f"data-{uuid.uuid4().hex[:12]}"
        folder = directory / name
        try:
            folder.mkdir()
            write(folder)
            for path in folder.rglob("*"):
                if path.is_file():
                    _fsync(path)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        manifest = {**manifest, "data": name}
    tmp = directory / f".{MANIFEST}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        _fsync(tmp)
        os.replace(tmp, directory / MANIFEST)
    finally:
        tmp.unlink(missing_ok=True)
    for other in directory.iterdir():  # earlier data folders and interrupted saves' leftovers
        if other.name == manifest.get("data") or not other.name.startswith(("data-", ".manifest")):
            continue
        if other.is_dir():
            shutil.rmtree(other, ignore_errors=True)
        else:
            other.unlink(missing_ok=True)
    return str(manifest.get("data"))


def _fsync(path: Path) -> None:
    with path.open("rb") as f:
        os.fsync(f.fileno())
