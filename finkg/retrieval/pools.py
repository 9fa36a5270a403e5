"""Point-in-time candidate pools for event anchors (paper 000 §3.3, DESIGN §5).

For an anchor with decision time t_d, one SPARQL query (`pool_candidates.rq`) returns the
eligible evidence: about the anchor's company or a same-sector peer (a peer only where
`peer_share` leaves the pool a slot for one), of the chosen source
families or a family narrower than one of them (News draws press releases, analysis and
news reports: `finkg.ontology.families`), available strictly before t_d, with the anchor,
same-URL and same-title items left out. Then, on that eligible set only:

1. near-duplicates of the anchor go: the anchor's connected component in the graph whose
   edges join items of the anchor's own family with embedding cosine >= `near_duplicate`
   (networkx). A filing paraphrased by a news anchor is its primary source, not a copy;
   families here, and in step 3, are paper 000's (`top_family`): a news report that
   reprints a press release is a copy of it, whatever their publisher families;
2. static relevance r(q, d): BM25 of the anchor's headline and the dense cosine with the
   anchor's embedding, fused (min-max with equal weights, or RRF) over this set. BM25's
   statistics come from the eligible set itself, so no later document can move a score;
3. the pool: the `size` (M0 = 20) most relevant, with at most `peer_share` (20 %) of the
   slots for peers, near-duplicates of one another (within a family) collapsed into one
   candidate: scored as the group's best member, represented by its newest. The newest,
   not the best: a company's filings repeat one template quarter after quarter with new
   numbers, so this quarter's 8-K is a near-duplicate of last quarter's, and relevance (all
   but equal across the copies, and lower for none of them by merit) would put a stale one
   in the pool as often as the one in force.

Token lists and embeddings come from the indexes (`TextSource`, `VectorSource`), computed
once per node at indexing: a frozen tokenizer and embedder give a node the same tokens
and vector whatever the decision time, so using them leaks nothing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import networkx as nx
import numpy as np
from pyoxigraph import NamedNode

from finkg import queries
from finkg.errors import InputError
from finkg.kg.store import BaseStore
from finkg.ontology.families import source_families, top_family, with_narrower
from finkg.ontology.terms import FKG
from finkg.queries.results import python_value
from finkg.retrieval.index.bm25 import bm25_scores, tokenize
from finkg.retrieval.rank.fuse import FUSIONS, Fusion, fuse


class TextSource(Protocol):
    def tokens(self, iris: Sequence[NamedNode]) -> list[list[str]]: ...


class VectorSource(Protocol):
    def vectors(self, iris: Sequence[NamedNode]) -> np.ndarray: ...


@dataclass(frozen=True, kw_only=True)
class PoolSpec:
    """How pools are drawn; checked when built."""

    size: int = 20  # M0
    peer_share: float = 0.2
    families: tuple[NamedNode, ...] = (FKG.News, FKG.SecFiling)
    lookback_days: int = 365
    near_duplicate: float = 0.9
    fusion: Fusion = "minmax"

    def __post_init__(self) -> None:
        checks = [
            ("size", self.size >= 1, "at least 1 (paper 000 uses 20)"),
            ("peer_share", 0 <= self.peer_share <= 1, "between 0 and 1 (paper 000: 0.2)"),
            ("families", len(self.families) > 0, "at least one source family"),
            ("lookback_days", self.lookback_days >= 1, "at least 1 day"),
            ("near_duplicate", 0 < self.near_duplicate <= 1, "a cosine in (0, 1]"),
            ("fusion", self.fusion in FUSIONS, "minmax or rrf"),
        ]
        for name, ok, hint in checks:
            if not ok:
                raise InputError(f"must be {hint}", field=name, value=getattr(self, name))
        unknown = [f.value for f in self.families if f not in source_families()]
        if unknown:
            raise InputError(
                "not a concept of fkg:SourceFamilies",
                field="families",
                value=", ".join(unknown),
                hint="use fkg:News, fkg:SecFiling, ... (finkg.ontology.families)",
            )

    @property
    def max_peers(self) -> int:
        return int(self.size * self.peer_share + 1e-9)


@dataclass(frozen=True)
class Candidate:
    evidence: NamedNode
    family: NamedNode
    available_at: dt.datetime
    peer: bool
    bm25: float
    dense: float
    relevance: float  # the fused static score r(q, d)


@dataclass(frozen=True)
class Pool:
    anchor: NamedNode
    decision_time: dt.datetime
    candidates: tuple[Candidate, ...]  # best first, at most spec.size
    eligible: int  # what the query returned
    removed: dict[str, int] = field(default_factory=dict)  # near-duplicate, duplicate, peer cap


def pool_bindings(
    store: BaseStore,
    anchor: NamedNode,
    company: NamedNode,
    decision_time: dt.datetime,
    spec: PoolSpec,
) -> dict[str, object]:
    """What `eligible_rows` binds into pool_candidates.rq for an anchor."""
    g = store.graphs
    bindings: dict[str, object] = {
        "anchor": anchor,
        "company": company,
        "before": decision_time,
        "since": decision_time - dt.timedelta(days=spec.lookback_days),
        "evidenceGraph": [g.news, g.filings, g.documents],
    }
    if spec.max_peers == 0:
        # no slot for a peer: its evidence is neither read nor part of BM25's statistics
        bindings["subject"] = company
    return bindings


def eligible_rows(
    store: BaseStore,
    *,
    anchor: NamedNode,
    company: NamedNode,
    decision_time: dt.datetime,
    spec: PoolSpec,
) -> list[tuple[NamedNode, NamedNode, dt.datetime, bool]]:
    """The query's rows: (evidence, family, availableAt, peer), in a stable order."""
    if decision_time.tzinfo is None:
        raise InputError(
            "the decision time needs a zone", field="decision_time", value=str(decision_time)
        )
    duplicates = {
        r.maybe("duplicate")
        for name in ("same_source", "same_title")
        for r in queries.select(store, name, {"node": anchor})
    }
    rows = queries.select(
        store,
        "pool_candidates",
        pool_bindings(store, anchor, company, decision_time, spec),
        default_graphs=_evidence_graphs(store),
    )
    out: dict[NamedNode, tuple[NamedNode, NamedNode, dt.datetime, bool]] = {}
    families = with_narrower(spec.families)
    for r in rows:
        family = r.maybe("family")
        if not isinstance(family, NamedNode) or family not in families:
            continue
        if r.maybe("evidence") in duplicates:
            continue
        iri = r.iri("evidence")
        peer = python_value(r.maybe("peer")) is True  # "true", or "1" as Virtuoso writes it
        if iri in out and not peer:  # about the company and a peer: it is the company's
            out[iri] = (*out[iri][:3], False)
        elif iri not in out:
            out[iri] = (iri, family, r.datetime("availableAt"), peer)
    # by instant: aware datetimes in different zones compare through utcoffset() each time
    # (12 ms of a 2,000-row pool's sort); in UTC, once a row
    return sorted(out.values(), key=lambda row: (row[2].astimezone(dt.UTC), row[0].value))


def _evidence_graphs(store: BaseStore) -> list[NamedNode]:
    g = store.graphs
    return [g.news, g.filings, g.documents, g.market]  # never a user's graph


def build_pool(
    store: BaseStore,
    *,
    anchor: NamedNode,
    company: NamedNode,
    decision_time: dt.datetime,
    query: str,
    texts: TextSource,
    vectors: VectorSource,
    spec: PoolSpec | None = None,
    anchor_family: NamedNode = FKG.News,
) -> Pool:
    """The anchor's pool (module docstring); `query` is the anchor's headline."""
    spec = spec or PoolSpec()
    rows = eligible_rows(
        store, anchor=anchor, company=company, decision_time=decision_time, spec=spec
    )
    removed = {"near-duplicate of the anchor": 0, "near-duplicate in the pool": 0, "peer cap": 0}
    if not rows:
        return Pool(anchor, decision_time, (), 0, removed)
    iris = [r[0] for r in rows]
    vecs = vectors.vectors(iris)
    anchor_vec = vectors.vectors([anchor])[0]
    dense = vecs @ anchor_vec
    # near-duplicates are sought among the anchor's own family only: a filing that a news
    # item paraphrases is that item's primary source, not a copy of it (paper 000 app. B)
    top = top_family(anchor_family)
    same = [i for i, r in enumerate(rows) if top_family(r[1]) == top]
    cluster = {same[j] for j in anchor_cluster(anchor_vec, vecs[same], spec.near_duplicate)}
    removed["near-duplicate of the anchor"] = len(cluster)
    keep = [i for i in range(len(rows)) if i not in cluster]
    if not keep:
        return Pool(anchor, decision_time, (), len(rows), removed)
    bm25 = bm25_scores(tokenize([query])[0], texts.tokens([iris[i] for i in keep]))
    relevance = fuse([bm25, dense[keep]], method=spec.fusion)
    order = sorted(range(len(keep)), key=lambda j: (-relevance[j], iris[keep[j]].value))
    chosen: list[Candidate] = []
    peers = 0
    # near-duplicates among the best (and their copies anywhere in the eligible set) are
    # collapsed: one candidate per group, scored as its best member, represented by its newest
    groups = _near_duplicate_groups(
        order[: 3 * spec.size],
        vecs[keep],
        [top_family(rows[i][1]) for i in keep],
        [rows[i][2] for i in keep],
        spec.near_duplicate,
    )
    for best, newest, size in groups:
        removed["near-duplicate in the pool"] += size - 1
        i = keep[newest]
        iri, family, at, peer = rows[i]
        if peer and peers >= spec.max_peers:
            removed["peer cap"] += 1
            continue
        peers += peer
        chosen.append(
            Candidate(
                iri, family, at, peer, float(bm25[newest]), float(dense[i]), float(relevance[best])
            )
        )
        if len(chosen) == spec.size:
            break
    return Pool(anchor, decision_time, tuple(chosen), len(rows), removed)


def anchor_cluster(anchor_vec: np.ndarray, vecs: np.ndarray, threshold: float) -> set[int]:
    """Indices of `vecs` in the anchor's connected component of the near-duplicate graph."""
    graph = nx.Graph()
    graph.add_node(-1)
    frontier, seen = [-1], {-1}
    while frontier:
        probes = np.stack([anchor_vec if f == -1 else vecs[f] for f in frontier])
        sims = vecs @ probes.T
        nxt = []
        for col, f in enumerate(frontier):
            for j in np.flatnonzero(sims[:, col] >= threshold):
                graph.add_edge(f, int(j))
                if int(j) not in seen:
                    seen.add(int(j))
                    nxt.append(int(j))
        frontier = nxt
    return set(nx.node_connected_component(graph, -1)) - {-1}


def _near_duplicate_groups(
    window: list[int],
    vecs: np.ndarray,
    families: list[NamedNode],
    times: list[dt.datetime],
    threshold: float,
) -> list[tuple[int, int, int]]:
    """Near-duplicate groups of the `window` rows (indices into `vecs`, best first), as
    (best row, newest row, size), in the order of their best rows. A group is a connected
    component of the graph joining rows of one family with cosine >= `threshold`, over the
    window and every row that is a near-duplicate of a window row; so this quarter's 8-K
    joins last quarter's even when only last quarter's made the window."""
    family = np.array([f.value for f in families])
    win = np.array(window, dtype=np.int64)
    sims = vecs[win] @ vecs.T
    near = (sims >= threshold) & (family[win][:, None] == family[None, :])
    graph = nx.Graph()
    graph.add_nodes_from(window)
    rows, cols = np.nonzero(near)
    graph.add_edges_from((int(win[r]), int(c)) for r, c in zip(rows, cols, strict=True))
    rank = {row: pos for pos, row in enumerate(window)}
    groups = []
    for component in nx.connected_components(graph):
        best = min((r for r in component if r in rank), key=rank.__getitem__)
        newest = min(component, key=lambda r: (-times[r].timestamp(), rank.get(r, len(rank)), r))
        groups.append((best, newest, len(component)))
    return sorted(groups, key=lambda g: rank[g[0]])
