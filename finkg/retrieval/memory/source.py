"""Bayesian source memory (paper 000 §3.5): which source families have paid off, as RDF.

A `SourceMemory` is a node in the memory graph; its cells are keyed by (source family,
event type, horizon) and its `fkg:MemoryUpdate`s carry positive and negative deltas with
the instant their outcome matured. The memory as of an instant t is the sum of the updates
matured strictly before t (`memory_counts.rq`), so a decision at t reads exactly the
feedback that existed then, and no update ever rewrites history.

Reranking (eq. 6): for a candidate d of family s, event type c and horizon h,

    score_h = r(q, d) + lam * clip(eta * (u - 0.5), -delta, delta),
    u = (a + 1) / (a + b + 2),  eta = n / (n + kappa),  n = a + b,

and the reader's context is the shared top-M by the mean of score_h over the horizons.

Updates (§3.5, §4.3): after horizon h matures, a correct prediction gives each credited
family +w_y / k, a wrong one -w_y / k on its negative count, where k is the number of
credited families and w_y = 1 / (3 pi_y) balances the classes by their validation
frequencies pi_y. Which families are credited, and with what, is the memory's variant:

- `cited`: the families of the valid evidence ids the reader cited; none cited, no update;
- `selected-evidence`: every family in the reader's top-M context;
- `shuffled-labels`: as `cited`, the realized label replaced by a draw from the
  validation class mix of that horizon (seeded by memory, prediction and horizon);
- `shuffled-event-types`: as `cited`, the cell's event type sent through a seeded
  derangement of the event types, while reranking looks cells up by the true type.
"""

from __future__ import annotations

import bisect
import datetime as dt
import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from pyoxigraph import Literal, NamedNode, Quad

from finkg import queries
from finkg.errors import InputError
from finkg.kg.ingest import common
from finkg.kg.iri import mint
from finkg.kg.store import BaseStore, Commit
from finkg.ontology.terms import FKG, RDF, RDFS
from finkg.retrieval.pools import Candidate
from finkg.shapes.validate import validate_quads

VARIANTS = ("cited", "shuffled-labels", "shuffled-event-types", "selected-evidence")
HORIZONS = (1, 3, 5)
EVENT_TYPES = (
    FKG.EarningsGuidance,
    FKG.LegalRegulatory,
    FKG.CapitalTransactions,
    FKG.ManagementOperations,
    FKG.OtherMixed,
)
CellKey = tuple[NamedNode, NamedNode, int]  # (source family, event type, horizon)


@dataclass(frozen=True, kw_only=True)
class MemoryParams:
    """kappa (shrinkage), delta (clip), lam (strength), top (M); paper defaults."""

    kappa: float = 30.0
    delta: float = 0.20
    lam: float = 0.30
    top: int = 5
    horizons: tuple[int, ...] = HORIZONS

    def __post_init__(self) -> None:
        for name, ok, hint in (
            ("kappa", self.kappa > 0, "positive (paper 000: 30)"),
            ("delta", self.delta >= 0, "non-negative (paper 000: 0.20)"),
            ("lam", self.lam >= 0, "non-negative; 0 turns the memory off (paper 000: 0.30)"),
            ("top", self.top >= 1, "at least 1 (paper 000: M = 5)"),
            ("horizons", len(self.horizons) > 0 and min(self.horizons) >= 1, "sessions >= 1"),
        ):
            if not ok:
                raise InputError(f"must be {hint}", field=name, value=getattr(self, name))


@dataclass(frozen=True)
class CellCounts:
    positive: float
    negative: float
    updates: int = 0

    def adjustment(self, params: MemoryParams) -> float:
        """lam * clip(eta * (u - 0.5), -delta, delta) for this cell."""
        n = self.positive + self.negative
        utility = (self.positive + 1) / (n + 2)
        eta = n / (n + params.kappa)
        return params.lam * float(np.clip(eta * (utility - 0.5), -params.delta, params.delta))


EMPTY = CellCounts(0.0, 0.0)


@dataclass(frozen=True)
class Ranked:
    candidate: Candidate
    scores: dict[int, float]  # score_h by horizon
    mean: float


def rerank(
    candidates: Sequence[Candidate],
    *,
    event_type: NamedNode,
    counts: Mapping[CellKey, CellCounts],
    params: MemoryParams,
) -> list[Ranked]:
    """Every candidate with its memory-adjusted scores, best mean first (ties: relevance,
    then IRI). The reader's context is the first `params.top`."""
    out = []
    for c in candidates:
        scores = {
            h: c.relevance + counts.get((c.family, event_type, h), EMPTY).adjustment(params)
            for h in params.horizons
        }
        out.append(Ranked(c, scores, sum(scores.values()) / len(scores)))
    return sorted(out, key=lambda r: (-r.mean, -r.candidate.relevance, r.candidate.evidence.value))


# -- the memory in the graph ----------------------------------------------------------


@dataclass(frozen=True)
class SourceMemory:
    iri: NamedNode
    name: str
    variant: str
    seed: int = 0


def source_memory(
    store: BaseStore, name: str = "cited", *, variant: str = "cited", seed: int = 0
) -> SourceMemory:
    """The memory called `name` (its IRI is minted from the name)."""
    if variant not in VARIANTS:
        raise InputError(
            "unknown memory variant",
            field="variant",
            value=variant,
            hint="one of " + ", ".join(VARIANTS),
        )
    return SourceMemory(mint("memory", name, base=store.graphs.base), name, variant, seed)


def memory_counts(
    store: BaseStore, memory: SourceMemory, before: dt.datetime
) -> dict[CellKey, CellCounts]:
    """The memory as of `before`: counts from updates matured strictly before it."""
    rows = queries.select(store, "memory_counts", {"memory": memory.iri, "before": before})
    return {
        (r.iri("family"), r.iri("eventType"), r.integer("horizon")): CellCounts(
            r.double("positive"), r.double("negative"), r.integer("updates")
        )
        for r in rows
    }


class MemoryTimeline:
    """A memory's updates loaded once, summed as of any instant by bisection.

    `counts(t)` equals `memory_counts(store, memory, t)` (a test checks it) without
    summing every update in SPARQL for every decision. `refresh()` reloads when the store
    has changed since the load (new feedback), and is cheap when it has not.
    """

    def __init__(self, store: BaseStore, memory: SourceMemory) -> None:
        self.store, self.memory = store, memory
        self._generation = -1
        self._cells: dict[CellKey, tuple[list[dt.datetime], np.ndarray, np.ndarray]] = {}
        self.refresh()

    def refresh(self) -> None:
        generation = self.store.generation()
        if generation == self._generation:
            return
        rows = queries.select(self.store, "memory_updates", {"memory": self.memory.iri})
        by_cell: dict[CellKey, list[tuple[dt.datetime, float, float]]] = {}
        for r in rows:
            key = (r.iri("family"), r.iri("eventType"), r.integer("horizon"))
            by_cell.setdefault(key, []).append(
                (r.datetime("matured"), r.double("positive"), r.double("negative"))
            )
        self._cells = {}
        for key, items in by_cell.items():
            items.sort()  # by instant, then deltas: the same sums on any store, in any order
            self._cells[key] = (
                [x[0] for x in items],
                np.cumsum([x[1] for x in items]),
                np.cumsum([x[2] for x in items]),
            )
        self._generation = generation

    def counts(self, before: dt.datetime) -> dict[CellKey, CellCounts]:
        """The memory as of `before`: updates matured strictly before it."""
        out = {}
        for key, (times, pos, neg) in self._cells.items():
            n = bisect.bisect_left(times, before)
            if n:
                out[key] = CellCounts(float(pos[n - 1]), float(neg[n - 1]), n)
        return out


@dataclass(frozen=True, kw_only=True)
class Feedback:
    """One matured prediction at one horizon, and what the reader rested it on."""

    prediction: NamedNode
    event_type: NamedNode
    horizon: int
    predicted: int  # -1, 0, +1
    realized: int  # the residual label
    matured_at: dt.datetime
    cited_families: Sequence[NamedNode]  # families of the valid cited ids
    context_families: Sequence[NamedNode]  # families of the top-M context
    outcome: NamedNode | None = None


@dataclass(frozen=True)
class Update:
    cell: CellKey
    positive: float
    negative: float
    feedback: Feedback


def class_weights(labels: Iterable[int]) -> dict[int, float]:
    """w_y = 1 / (3 pi_y) from validation labels; a class never seen gets weight 1."""
    counts = Counter(labels)
    total = sum(counts.values())
    return {y: (total / (3 * counts[y]) if counts[y] else 1.0) for y in (-1, 0, 1)}


def label_mix(labels: Iterable[int]) -> dict[int, float]:
    """pi_y: the class frequencies the shuffled-label variant draws from."""
    counts = Counter(labels)
    total = sum(counts.values()) or 1
    return {y: counts[y] / total for y in (-1, 0, 1)}


def updates_for(
    feedback: Feedback,
    memory: SourceMemory,
    *,
    weights: Mapping[int, Mapping[int, float]],
    mix: Mapping[int, Mapping[int, float]] | None = None,
) -> list[Update]:
    """The updates one matured feedback makes to `memory` (the variants of the docstring).
    `weights[h][y]` are the class weights per horizon; `mix[h]` the shuffled-label draw."""
    fb, h = feedback, feedback.horizon
    families = fb.context_families if memory.variant == "selected-evidence" else fb.cited_families
    families = sorted(set(families), key=lambda n: n.value)
    if not families:
        return []  # uncited: no update
    realized = fb.realized
    if memory.variant == "shuffled-labels":
        if mix is None or h not in mix:
            raise InputError(
                "the shuffled-label memory needs the validation label mix", field="mix", value=h
            )
        rng = np.random.default_rng(_seed(memory, fb.prediction.value, h))
        realized = int(rng.choice([-1, 0, 1], p=[mix[h][-1], mix[h][0], mix[h][1]]))
    event = fb.event_type
    if memory.variant == "shuffled-event-types":
        event = _derangement(memory)[event]
    w = weights[h][realized] / len(families)
    right = fb.predicted == realized
    return [
        Update((family, event, h), w if right else 0.0, 0.0 if right else w, fb)
        for family in families
    ]


def _seed(memory: SourceMemory, *parts: object) -> int:
    key = "\x1f".join(map(str, (memory.name, memory.seed, *parts)))
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little")


def _derangement(memory: SourceMemory) -> dict[NamedNode, NamedNode]:
    """A seeded permutation of the event types that moves every one of them."""
    rng = np.random.default_rng(_seed(memory, "event-types"))
    while True:
        order = rng.permutation(len(EVENT_TYPES))
        if all(order[i] != i for i in range(len(order))):
            return {EVENT_TYPES[i]: EVENT_TYPES[j] for i, j in enumerate(order)}


def _local(node: NamedNode) -> str:
    return node.value.rsplit("#", 1)[-1]


def memory_node_quads(memory: SourceMemory, graph: NamedNode) -> list[Quad]:
    """The memory's own node (written with its first update, or its first run)."""
    q = common.Quads(graph)
    q.node(
        memory.iri,
        (RDF.type, FKG.SourceMemory),
        (FKG.variant, common.string(memory.variant)),
        (RDFS.label, Literal(f"source memory {memory.name}")),
    )
    return q.items


def update_quads(
    memory: SourceMemory, updates: Sequence[Update], *, graph: NamedNode, base: str
) -> list[Quad]:
    """The memory node, the cells the updates touch, and the updates (IRIs from stable
    keys: writing the same feedback twice adds nothing)."""
    q = common.Quads(graph)
    q.items.extend(memory_node_quads(memory, graph))
    for u in updates:
        family, event, h = u.cell
        cell = mint("memory-cell", memory.name, _local(family), _local(event), h, base=base)
        q.node(
            cell,
            (RDF.type, FKG.MemoryCell),
            (FKG.memory, memory.iri),
            (FKG.sourceFamily, family),
            (FKG.eventType, event),
            (FKG.horizon, common.integer(h)),
        )
        node = mint(
            "memory-update", memory.name, u.feedback.prediction.value, h, family.value, base=base
        )
        q.node(
            node,
            (RDF.type, FKG.MemoryUpdate),
            (FKG.cell, cell),
            (FKG.positiveDelta, common.double(u.positive)),
            (FKG.negativeDelta, common.double(u.negative)),
            (FKG.maturedAt, common.datetime(u.feedback.matured_at)),
            (FKG.fromPrediction, u.feedback.prediction),
            (FKG.fromOutcome, u.feedback.outcome),
        )
    return q.items


def write_updates(
    store: BaseStore, memory: SourceMemory, updates: Sequence[Update]
) -> Commit | None:
    """Check the updates against the memory shapes and write them in one commit."""
    quads = update_quads(memory, updates, graph=store.graphs.memory, base=store.graphs.base)
    report = validate_quads(quads)
    if not report.conforms:
        raise InputError(
            "memory updates break the shapes", field="updates", value=report.text(limit=3)
        )
    return store.write(add=quads, note=f"memory {memory.name}: {len(updates)} updates")
