"""Bounded CONSTRUCT results: at most so many triples per selected node, predicate and
direction, and a statement of what was left out.

A one-hop subgraph is meant to be exported to another tool, but a company node is the
object of every bar, summary, indicator window, news item and filing about it (8,972
`fkg:about` triples on the demo store). A query whose header declares

    # bound  ?node  25

returns at most 25 triples for each (selected node, predicate, direction): a node's own
statements and the statements that point at it are bounded separately, and a group over the
bound keeps a deterministic sample (SHA-256 of the triple's other end, the order subgraph
retrieval samples candidates in), so the same store and bound always give the same
subgraph. `Triples.cuts` says, for every group that was cut, how many triples it kept of
how many.

>>> from pyoxigraph import NamedNode as N, Triple as T
>>> company, about = N("https://e.org/c"), N("https://e.org/about")
>>> found = [T(N(f"https://e.org/w{i}"), about, company) for i in range(30)]
>>> kept = bound_triples(found, nodes=["https://e.org/c"], limit=25)
>>> len(kept), str(kept.cuts[0])
(25, '25 of 30 <https://e.org/about> triples pointing at <https://e.org/c>')
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from pyoxigraph import NamedNode, Triple


@dataclass(frozen=True)
class Cut:
    """One group of triples that the bound cut."""

    node: str
    predicate: str
    incoming: bool  # the triples point at the node (it is their object)
    kept: int
    total: int

    def describe(self, name: Callable[[str], str] | None = None) -> str:
        """`name` turns an IRI into what is shown (a CURIE); IRIs in <> by default."""
        show = name or (lambda iri: f"<{iri}>")
        where = "pointing at" if self.incoming else "of"
        triples = f"{show(self.predicate)} triples"
        return f"{self.kept} of {self.total} {triples} {where} {show(self.node)}"

    def __str__(self) -> str:
        return self.describe()


class Triples(list[Triple]):
    """A CONSTRUCT result, with the bound it was cut to (None: not bounded) and the cuts."""

    def __init__(
        self, items: Iterable[Triple] = (), *, limit: int | None = None, cuts: Sequence[Cut] = ()
    ) -> None:
        super().__init__(items)
        self.limit = limit
        self.cuts = list(cuts)

    @property
    def left_out(self) -> int:
        return sum(c.total - c.kept for c in self.cuts)


def _order(term: object) -> str:
    return hashlib.sha256(str(term).encode("utf-8")).hexdigest()


def bound_triples(triples: Iterable[Triple], *, nodes: Iterable[str], limit: int) -> Triples:
    """At most `limit` triples per (node of `nodes`, predicate, direction); see the module.

    A triple whose subject is a selected node belongs to that node's own statements; one
    whose object is (and whose subject is not) to the statements pointing at it. Triples
    touching no selected node are kept as they are."""
    chosen = set(nodes)
    groups: dict[tuple[str, str, bool], list[Triple]] = {}
    loose: list[Triple] = []
    for t in triples:
        subject, obj = t.subject, t.object
        if isinstance(subject, NamedNode) and subject.value in chosen:
            groups.setdefault((subject.value, t.predicate.value, False), []).append(t)
        elif isinstance(obj, NamedNode) and obj.value in chosen:
            groups.setdefault((obj.value, t.predicate.value, True), []).append(t)
        else:
            loose.append(t)
    kept, cuts = list(loose), []
    for (node, predicate, incoming), group in sorted(groups.items()):
        if len(group) > limit:
            group = sorted(group, key=lambda t: _order(t.subject if incoming else t.object))
            cuts.append(Cut(node, predicate, incoming, limit, len(group)))
            group = group[:limit]
        kept.extend(group)
    return Triples(kept, limit=limit, cuts=cuts)
