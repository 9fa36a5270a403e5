"""Which records of one chunk the ingest may write: each item's quads are in finkg's named
graphs (never `audit` or `ontology`, which finkg alone writes), none of them says anything
about a term of finkg's vocabulary (or of PROV, SKOS, RDF, RDFS, OWL, SHACL, XSD: those are
defined in the ontology graph alone, and a data graph stating `fkg:NewsArticle
rdfs:subClassOf ...` would redefine them for every query over the union), its key node is not in the
store yet (`existing`), nothing in it became available after the moment of ingestion, and
its statements conform to finkg's shapes (the Python screen, `shapes/screen.py`, passes a
chunk that surely does; the shapes compiled to SPARQL, `shapes/validate.py`, decide and
report on the rest). Each item is checked with what the store holds about the subjects it
may share with stored records (all but its key; an RDF file's item, `Item.extends_store`,
every node it names), as `finkg validate` would see them after the write."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain

from pyoxigraph import BlankNode, Literal, NamedNode, Quad, Triple

from finkg import queries
from finkg.errors import InputError
from finkg.kg.ingest.records import Item, Record, Reject, TextItem
from finkg.kg.ingest.revisions import revise
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG, RDF, is_vocabulary_term
from finkg.shapes.screen import Statement, surely_conforms
from finkg.shapes.validate import validate_quads

CONTEXT_BATCH = 1_000  # nodes per lookup of what the store holds about them


@dataclass(frozen=True)
class Vetted:
    """One checked chunk: the items to stage, how many were already in the store, rejects."""

    items: list[Record]
    skipped: int
    rejects: list[Reject]
    revisions: int = 0  # among the items: revisions of stored records (`revisions.py`)
    kept: int = 0  # records with no time of their own that differ from the stored ones


def vet(
    store: BaseStore, items: list[Record], skip_bad: bool, *, now: dt.datetime | None = None
) -> Vetted:
    """The items of one chunk that are not in the store yet, were available by `now` (the
    moment of ingestion; default: the present) and conform to the shapes."""
    _check_graphs(store, items)
    rejects: list[Reject] = []
    items = _not_about_vocabulary(items, rejects, skip_bad)
    moment = now or dt.datetime.now(dt.UTC)
    present = existing(store, [i for i in items if not _extends(i)])
    new = list({i.key: i for i in items if i.key not in present}.values())
    held = list({i.key: i for i in items if i.key in present}.values())
    revised = revise(store, held, now=moment)
    known = _known_by(moment, [*new, *revised.items], rejects, skip_bad)
    checked = _check_shapes(store, known, {i.key for i in new}, rejects, skip_bad)
    revisions = sum(1 for item in checked if item in revised.items)
    skipped = len(items) - len(new) - len(revised.items)
    return Vetted(checked, skipped, rejects, revisions, revised.kept)


def _extends(item: Record) -> bool:
    return isinstance(item, Item) and item.extends_store


def _check_graphs(store: BaseStore, items: list[Record]) -> None:
    finkgs_own = {store.graphs.audit, store.graphs.ontology}
    for item in items:
        if isinstance(item, TextItem):  # `common.Lines` writes every line in its graph
            continue
        for q in item.quads:
            if not isinstance(q.graph_name, NamedNode) or q.graph_name in finkgs_own:
                raise InputError(
                    "finkg keeps every triple in a named graph"
                    if not isinstance(q.graph_name, NamedNode)
                    else "the audit and ontology graphs are written by finkg alone",
                    source=item.source,
                    line=item.line,
                    field="graph",
                    value=str(q),
                )


def _not_about_vocabulary(
    items: list[Record], rejects: list[Reject], skip_bad: bool
) -> list[Record]:
    """Refuse (or, with skip_bad, set aside) the items with a statement whose subject is a
    vocabulary term (`update_targets.is_vocabulary_term`)."""
    kept = []
    for item in items:
        found = next((t for t in _triples(item) if _is_term(t[0])), None)
        if found is None:
            kept.append(item)
            continue
        s, p, o = found
        reject = Reject(
            item.source,
            item.line_of(s.value),
            f"a statement about {s.value}, a term of finkg's vocabulary (or of PROV, SKOS, "
            "RDF, RDFS, OWL, SHACL, XSD): those are defined in the ontology graph alone; "
            "state it about a term of your own namespace",
            p.value,
            f"{s} {p} {o}",
        )
        if not skip_bad:
            raise reject.error()
        rejects.append(reject)
    return kept


def _is_term(subject: object) -> bool:
    return isinstance(subject, NamedNode) and is_vocabulary_term(subject.value)


def _triples(item: Record) -> Iterator[tuple]:
    if isinstance(item, TextItem):
        terms = iter(item.statements)
        yield from zip(terms, terms, terms, strict=True)
    else:
        for q in item.quads:
            yield q.subject, q.predicate, q.object


_FAR_YEAR = re.compile(r"\+?[0-9]{5,}-")  # a year Python's datetime cannot hold: after 9999


def _known_by(
    now: dt.datetime, items: list[Record], rejects: list[Reject], skip_bad: bool
) -> list[Record]:
    """Refuse (or, with skip_bad, set aside) the items with a `fkg:availableAt` after `now`:
    nothing can be known before it happens, and a decision must never see it early."""
    kept = []
    for item in items:
        late = next((t for t in _available_at(item) if _after(t, now)), None)
        if late is None:
            kept.append(item)
            continue
        reject = Reject(
            item.source,
            item.line_of(late),
            f"available after the moment of ingestion ({now.isoformat(timespec='seconds')}): "
            "nothing is known before it happens; fix the time, or ingest it once it has passed",
            FKG.availableAt.value,
            late,
        )
        if not skip_bad:
            raise reject.error()
        rejects.append(reject)
    return kept


def _available_at(item: Record) -> Iterator[str]:
    if isinstance(item, TextItem):
        terms = item.statements
        for i in range(1, len(terms), 3):
            if terms[i] == FKG.availableAt:
                yield terms[i + 1].value
        return
    for q in item.quads:
        if q.predicate == FKG.availableAt and isinstance(q.object, Literal):
            yield q.object.value


def _after(lexical: str, now: dt.datetime) -> bool:
    try:
        at = dt.datetime.fromisoformat(lexical)
    except ValueError:  # not a date-time Python reads: the shapes judge its form
        return _FAR_YEAR.match(lexical) is not None
    return at.tzinfo is not None and at > now


def _check_shapes(
    store: BaseStore,
    items: list[Record],
    new: set[NamedNode],
    rejects: list[Reject],
    skip_bad: bool,
) -> list[Record]:
    """Drop (or refuse) the items whose nodes break a shape (`new`: the keys not stored
    yet). The screen passes nearly every chunk without the SPARQL checks; where it cannot,
    they decide and report."""
    context = _context(store, items, new)
    stored = (_statement(q) for q in context)
    if surely_conforms(chain(_statements(items), stored)):
        return items
    result = validate_quads(
        chain((q for item in items if isinstance(item, Item) for q in item.quads), context),
        nquads=b"".join(item.nquads for item in items if isinstance(item, TextItem)),
    )
    if result.conforms:
        return items
    owner = {_subject(q).value: item for item in items for q in item.quads}
    held = {_subject(q).value for q in context}
    bad: dict[int, Reject] = {}
    for v in result.violations:
        item = owner.get(v.focus)
        if item is None:
            continue
        also = "; with what the store already holds about it" if v.focus in held else ""
        reason = f"{v.message} ({v.focus}){also}"
        reject = Reject(item.source, item.line_of(v.focus), reason, v.path, v.value)
        if not skip_bad:
            raise reject.error()
        bad.setdefault(id(item), reject)
    rejects.extend(bad.values())
    return [item for item in items if id(item) not in bad]


def _context(store: BaseStore, items: list[Record], new: set[NamedNode]) -> list[Quad]:
    """What the store holds about the nodes `items` share with other records: the subjects
    besides each item's key (new, as `existing` found) and, where the key is new, its
    `siblings` (written only with it: a session's other windows, a news item's document; on
    the 6× scale store 87,806 lookups a unit, 85 µs each, none found), so a new passage
    cannot give a stored source document a second content hash; for an RDF file, every
    node it names, so the file is checked as the store will hold it."""
    nodes: set[NamedNode] = set()
    for item in items:
        own = {item.key, *item.siblings} if item.key in new else {item.key}
        if isinstance(item, TextItem):  # its subjects: the key and its source documents
            nodes.update(doc for doc, _graph in item.sources if doc not in own)
        elif item.extends_store:
            terms = (t for q in item.quads for t in (q.subject, q.object))
            nodes.update(t for t in terms if isinstance(t, NamedNode))
        else:
            subjects = (q.subject for q in item.quads if q.subject not in own)
            nodes.update(s for s in subjects if isinstance(s, NamedNode))
    listed = list(nodes)
    quads: list[Quad] = []
    for start in range(0, len(listed), CONTEXT_BATCH):
        batch = listed[start : start + CONTEXT_BATCH]
        rows = queries.select(store, "subject_quads", {"node": batch})
        quads += [Quad(r.iri("node"), r.iri("p"), r.term("o"), r.iri("g")) for r in rows]
    return quads


def _subject(q: Quad) -> NamedNode | BlankNode:
    """A quad's subject: finkg holds no RDF 1.2 triple terms (`rdf_files` refuses them)."""
    if isinstance(q.subject, Triple):
        raise InputError(_RDF12, field=q.predicate.value, value=str(q))
    return q.subject


def _statement(q: Quad) -> Statement:
    """A stored quad's statement, for the screen (`_subject`: no triple terms)."""
    if isinstance(q.object, Triple):
        raise InputError(_RDF12, field=q.predicate.value, value=str(q))
    return _subject(q), q.predicate, q.object


_RDF12 = "an RDF 1.2 triple term: finkg does not use RDF 1.2"


def _statements(items: list[Record]) -> Iterator[tuple]:
    for item in items:
        yield from _triples(item)


def existing(store: BaseStore, items: Sequence[Record]) -> set[NamedNode]:
    """The keys of `items` that the store already holds: a key counts as held when its own
    `rdf:type` quad (its class in its graph) is in the store, one point lookup each."""
    typed = [_key_type(i) for i in items]
    held = store.held(typed)
    return {q.subject for q in typed if q in held and isinstance(q.subject, NamedNode)}


def _key_type(item: Record) -> Quad:
    if isinstance(item, TextItem):
        return item.key_type
    for q in item.quads:
        if q.subject == item.key and q.predicate == RDF.type:
            return q
    raise ValueError(f"loader bug: the key {item.key} of {item.source} has no rdf:type quad")
