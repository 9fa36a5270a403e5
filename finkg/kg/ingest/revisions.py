"""A record re-ingested under a key the store holds: the same record again, or a revision.

Point-in-time storage never overwrites (DESIGN §3): a news item edited at its source, a
restated bar, is kept beside the version stored before, as a new node that is
`prov:wasRevisionOf` it and available from the moment it was ingested. A decision before
that moment still sees the old version, one after it sees the new one (the evidence
queries leave out a version superseded before their instant).

For each record whose key node the store holds (`revise`):

- it is the same record when every statement it makes is stored already (what it says of
  its source documents' location, `dcterms:source`, aside: the same item read from another
  copy of a file is the same item), or when a stored revision carries its record hash: it
  is skipped, as before, so ingesting a file twice adds nothing, and neither does
  ingesting the original again after a correction;
- otherwise, if it is a time-stamped record (its key states `fkg:availableAt`: evidence,
  bars, transactions), it becomes a revision of the latest stored version: the record's
  nodes whose statements differ from the stored ones get new IRIs (`{iri}/rev/{hash}`),
  references to them follow, and the key's revision is available from the moment of
  ingestion (`fkg:availableAt`; the time the record itself states goes to
  `dcterms:issued`), carries its `fkg:recordHash` and is `prov:wasRevisionOf` the latest
  version (the other revised nodes, of the node they replace);
- a record with no time of its own (a company, an asset, a customer's profile: reference
  data that several sources describe, an EDGAR index and a companies table) cannot be
  revised in time: the stored record is kept, and the ingest report counts the records
  that differ from it (`kept`), so that none is dropped without a word.

Items derived from other records (`Item.derived`: summaries, indicator windows) are not
revised: what they derive from is.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from pyoxigraph import Literal, NamedNode, Quad

from finkg import queries
from finkg.kg.ingest.records import Item, Record, nquads
from finkg.kg.store import BaseStore
from finkg.ontology.terms import DCTERMS, FKG, PROV, XSD

BATCH = 500  # keys per lookup of their versions

_RETIMED = (FKG.availableAt, FKG.timeRule, FKG.timeQuality)


@dataclass
class Versions:
    """A stored record's versions: the record hashes of its revisions, its latest version."""

    hashes: set[str]
    latest: NamedNode


@dataclass
class Revised:
    """What `revise` made of the held records: revisions to write, how many were the same
    record again, and those that differ but state no time to revise them from (kept as
    stored)."""

    items: list[Item] = field(default_factory=list)
    same: int = 0
    kept: int = 0


def record_hash(quads: Iterable[Quad]) -> str:
    """`sha256:` and the SHA-256 of the statements, as sorted N-Quads lines."""
    lines = sorted(nquads(list(quads)).splitlines())
    return "sha256:" + hashlib.sha256(b"\n".join(lines)).hexdigest()


def revise(store: BaseStore, items: list[Record], *, now: dt.datetime) -> Revised:
    """Tell each held record (its key node is in the store) a repeat from a revision (the
    module docstring)."""
    out = Revised()
    if not items:
        return out
    versions = _versions(store, [i.key for i in items])
    records = [(item, item.quads) for item in items]
    compared = [q for _item, quads in records for q in quads if q.predicate != DCTERMS.source]
    held = store.held(compared)
    for item, quads in records:
        digest = record_hash(quads)
        stored = versions.get(item.key) or Versions(set(), item.key)
        changed = [q for q in quads if q.predicate != DCTERMS.source and q not in held]
        if not changed or digest in stored.hashes:
            out.same += 1
        elif item.derived:
            out.same += 1  # what it derives from is revised, not the derived item itself
        elif not any(q.subject == item.key and q.predicate == FKG.availableAt for q in quads):
            out.kept += 1
        else:
            out.items.append(_revision(item, quads, changed, digest, stored.latest, now))
    return out


def _versions(store: BaseStore, keys: list[NamedNode]) -> dict[NamedNode, Versions]:
    """Each key's stored revision hashes and its latest version, walking the chain of
    revisions from the key one step a query (`revisions_of.rq`)."""
    out = {key: Versions(set(), key) for key in keys}
    frontier = {key: key for key in keys}  # a version to look past -> the key it revises
    seen = set(frontier)  # a chain that loops back (data can say anything) ends there
    while frontier:
        versions = list(frontier)
        reached: dict[NamedNode, NamedNode] = {}
        for start in range(0, len(versions), BATCH):
            chosen = versions[start : start + BATCH]
            for r in queries.select(store, "revisions_of", {"version": chosen}):
                key, revision = frontier[r.iri("version")], r.iri("revision")
                if (digest := r.maybe_string("hash")) is not None:
                    out[key].hashes.add(digest)
                if revision not in seen:
                    out[key].latest = revision
                    reached[revision] = key
        seen.update(reached)
        frontier = reached
    return out


def _revision(
    item: Record,
    quads: list[Quad],
    changed: list[Quad],
    digest: str,
    latest: NamedNode,
    now: dt.datetime,
) -> Item:
    """The record as a revision: its changed nodes renamed, the key retimed (module
    docstring)."""
    suffix = "/rev/" + digest.removeprefix("sha256:")[:16]
    renamed = {q.subject for q in changed} | {item.key}
    new = {s: NamedNode(s.value + suffix) for s in renamed if isinstance(s, NamedNode)}

    key = new[item.key]
    graph = next(q.graph_name for q in quads if q.subject == item.key)
    out: list[Quad] = []
    stated: Literal | None = None
    for q in quads:
        s, o = q.subject, q.object
        if s == item.key and q.predicate in _RETIMED:
            if q.predicate == FKG.availableAt and isinstance(o, Literal):  # a dateTime literal
                stated = o
            continue
        s = new.get(s, s) if isinstance(s, NamedNode) else s
        o = new.get(o, o) if isinstance(o, NamedNode) else o
        out.append(Quad(s, q.predicate, o, q.graph_name))
    at = now.astimezone(dt.UTC).isoformat(timespec="microseconds")
    rule = "a revision: available from the moment finkg ingested it"
    if stated is not None:
        rule += f" (the record states {stated.value})"
        out.append(Quad(key, DCTERMS.issued, stated, graph))
    out += [
        Quad(key, FKG.availableAt, Literal(at, datatype=XSD.dateTime), graph),
        Quad(key, FKG.timeRule, Literal(rule), graph),
        Quad(key, FKG.timeQuality, Literal("exact"), graph),
        Quad(key, FKG.recordHash, Literal(digest), graph),
        Quad(key, PROV.wasRevisionOf, latest, graph),
    ]
    for old, renamed_to in new.items():
        if old != item.key:
            graph_of = next(q.graph_name for q in quads if q.subject == old)
            out.append(Quad(renamed_to, PROV.wasRevisionOf, old, graph_of))
    return Item(key, out, item.source, item.line)
