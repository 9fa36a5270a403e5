"""What a loader yields for each source record: an `Item` of quads, a `TextItem` of the
same written as N-Quads text, or a `Reject` saying why the record cannot be ingested."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import pyoxigraph as ox
from pyoxigraph import BlankNode, Literal, NamedNode, Quad

from finkg.errors import InputError

Term = NamedNode | BlankNode | Literal


def nquads(quads: Iterable[Quad]) -> bytes:
    """`quads` written as N-Quads."""
    data = ox.serialize(quads, format=ox.RdfFormat.N_QUADS)
    assert data is not None  # serialize returns the bytes when given no output
    return data


@dataclass(frozen=True)
class Item:
    """The quads of one source record; `key` present in the store means it is ingested.

    `extends_store` marks the quads of an RDF file (`rdf_files.py`): they may add
    statements to nodes the store holds, so the item is never skipped as already ingested
    (its `key` stands for the file) and its shape check reads what the store holds about
    its subjects beside it. `locate` gives the line of a node or value in the source, for
    the reports of a record that spans many lines. `derived` marks what finkg derives from
    other records (summaries, indicator windows): a re-ingest never revises it
    (`revisions.py`), it revises what it derives from. `siblings` are the other subjects
    the loader mints with the key and writes only with it (a session's other indicator
    windows): new when the key is, so the vetting reads no stored context for them, as for
    the key itself (`vetting._context`)."""

    key: NamedNode
    quads: list[Quad]
    source: str
    line: int | None = None
    extends_store: bool = False
    locate: Callable[[str], int | None] | None = field(default=None, compare=False)
    derived: bool = False
    siblings: frozenset[NamedNode] = frozenset()

    def line_of(self, text: str) -> int | None:
        """The line of `text` (a node's IRI, a value) in the source, else the item's."""
        return (self.locate(text) if self.locate else None) or self.line


@dataclass(frozen=True)
class TextItem:
    """The quads of one source record already written as N-Quads (`common.Lines`): the
    ingest stages, checks and writes the text without building a Quad object for each
    statement. `key_type` is the key's `rdf:type` quad, `sources` the source documents
    (subject, graph) among the statements, `statements` the terms the text was written
    from, flat: subject, predicate, object, subject, ... (the shape screen reads them)."""

    key: NamedNode
    nquads: bytes
    count: int
    key_type: Quad
    sources: tuple[tuple[NamedNode, NamedNode], ...]
    source: str
    line: int | None = None
    statements: Sequence[Term] = ()
    siblings: frozenset[NamedNode] = frozenset()  # as `Item.siblings`: a news item's document

    @property
    def quads(self) -> list[Quad]:
        """The statements as quads, parsed from the text (a violation report needs them)."""
        return list(ox.parse(self.nquads, format=ox.RdfFormat.N_QUADS))

    derived = False  # a loader's own record (`Item.derived`)

    def line_of(self, _text: str) -> int | None:
        return self.line


Record = Item | TextItem


@dataclass(frozen=True)
class Reject:
    """A record that cannot be ingested, and why."""

    source: str
    line: int | None
    reason: str
    field: str | None = None
    value: str | None = None

    def error(self) -> InputError:
        return InputError(
            self.reason, source=self.source, line=self.line, field=self.field, value=self.value
        )

    @classmethod
    def of(cls, error: InputError, *, source: str, line: int | None) -> Reject:
        value = None if error.value is None else str(error.value)[:500]
        return cls(error.source or source, error.line or line, _reason(error), error.field, value)


def _reason(error: InputError) -> str:
    return error.message + (f"; {error.hint}" if error.hint else "")
