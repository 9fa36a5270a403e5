"""Which records of one chunk the ingest may write: each item's quads are in named graphs,
its key node is not in the store yet (`existing`), and its statements conform to finkg's
shapes (the Python screen, `shapes/screen.py`, passes a chunk that surely does; the shapes
compiled to SPARQL, `shapes/validate.py`, decide and report on the rest)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pyoxigraph import NamedNode, Quad

from finkg.errors import InputError
from finkg.kg.ingest.records import Item, Record, Reject, TextItem
from finkg.kg.store import BaseStore
from finkg.ontology.terms import RDF
from finkg.shapes.screen import surely_conforms
from finkg.shapes.validate import validate_quads


@dataclass(frozen=True)
class Vetted:
    """One checked chunk: the items to stage, how many were already in the store, rejects."""

    items: list[Record]
    skipped: int
    rejects: list[Reject]


def vet(store: BaseStore, items: list[Record], skip_bad: bool) -> Vetted:
    """The items of one chunk that are not in the store yet and conform to the shapes."""
    for item in items:
        if isinstance(item, TextItem):  # `common.Lines` writes every line in its graph
            continue
        for q in item.quads:
            if not isinstance(q.graph_name, NamedNode):
                raise InputError(
                    "finkg keeps every triple in a named graph",
                    source=item.source,
                    line=item.line,
                    field="graph",
                    value=str(q),
                )
    present = existing(store, items)
    new = list({i.key: i for i in items if i.key not in present}.values())
    rejects: list[Reject] = []
    checked = _check_shapes(new, rejects, skip_bad)
    return Vetted(checked, len(items) - len(new), rejects)


def _check_shapes(items: list[Record], rejects: list[Reject], skip_bad: bool) -> list[Record]:
    """Drop (or refuse) the items whose nodes break a shape. The screen passes nearly every
    chunk without the SPARQL checks; where it cannot, they decide and report."""
    if surely_conforms(_statements(items)):
        return items
    result = validate_quads(
        (q for item in items if isinstance(item, Item) for q in item.quads),
        nquads=b"".join(item.nquads for item in items if isinstance(item, TextItem)),
    )
    if result.conforms:
        return items
    owner = {q.subject.value: item for item in items for q in item.quads}
    bad: dict[int, Reject] = {}
    for v in result.violations:
        item = owner.get(v.focus)
        if item is None:
            continue
        reject = Reject(item.source, item.line, f"{v.message} ({v.focus})", v.path, v.value)
        if not skip_bad:
            raise reject.error()
        bad.setdefault(id(item), reject)
    rejects.extend(bad.values())
    return [item for item in items if id(item) not in bad]


def _statements(items: list[Record]) -> Iterator[tuple]:
    for item in items:
        if isinstance(item, TextItem):
            terms = iter(item.statements)
            yield from zip(terms, terms, terms, strict=True)
        else:
            for q in item.quads:
                yield q.subject, q.predicate, q.object


def existing(store: BaseStore, items: Sequence[Record]) -> set[NamedNode]:
    """The keys of `items` that the store already holds: a key counts as held when its own
    `rdf:type` quad (its class in its graph) is in the store, one point lookup each."""
    typed = [_key_type(i) for i in items]
    held = store.held(typed)
    return {q.subject for q in typed if q in held}  # type: ignore[misc]


def _key_type(item: Record) -> Quad:
    if isinstance(item, TextItem):
        return item.key_type
    for q in item.quads:
        if q.subject == item.key and q.predicate == RDF.type:
            return q
    raise ValueError(f"loader bug: the key {item.key} of {item.source} has no rdf:type quad")
