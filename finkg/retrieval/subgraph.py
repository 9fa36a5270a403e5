"""LLM-guided subgraph retrieval (paper 004 §3.2): list, select, CONSTRUCT, serialize.

The paper gives a retrieval LLM the request and the entities of one kind (a customer's
transactions, then the market's ten-week price summaries), lets it pick the relevant ones,
and fetches their one-hop subgraph with a fixed CONSTRUCT template. Each step is here:

- `candidates(store, cls, graphs=..., before=...)`: the entities of `cls` in the allowed
  graphs, each with a one-line description, point-in-time when `before` is given; over
  `cap` of them, a deterministic sample ordered by a hash of (seed, IRI), and the listing
  says how many there were.
- `select(llm, request, candidates)`: the reader picks IRIs through the `select` prompt and
  the `EntitySelection` schema narrowed to the candidate IRIs; an IRI it invents or copies
  from elsewhere is dropped and counted, never queried.
- `construct(store, nodes, graphs=..., before=...)`: the one-hop subgraph through
  `one_hop.rq` (or `one_hop_before.rq`) with the query dataset set to `graphs`.
- `as_jsonld(triples)`: compact JSON-LD in finkg's published context.
- `retrieve(...)`: the three in a row; `Subgraph.text()` is what the next stage prepends.

Isolation does not rest on the LLM: every query runs with `default_graphs=graphs`, so a
triple stored in another customer's graph cannot reach a listing, a description or a
subgraph, whatever IRI the reader names.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyoxigraph import Literal, NamedNode, Triple

from finkg import queries
from finkg.errors import InputError
from finkg.kg.export import to_jsonld
from finkg.kg.store import BaseStore
from finkg.ontology.terms import DCTERMS, FKG, RDFS, SKOS
from finkg.queries.binding import to_term
from finkg.reader import budget
from finkg.reader.budget import largest
from finkg.reader.llm import LLM
from finkg.reader.read import OutputCache, ReadResult, prompt, read
from finkg.reader.schemas import EntitySelection

SELECT_REPLY_TOKENS = 512  # a selection's reply: about ten IRIs
DEFAULT_CAP = 50  # ~55 tokens a line: a listing fits a 4,096-token reader beside the request
DESCRIPTION_CHARS = 240
_NAMES = (FKG.text, RDFS.label, DCTERMS.title, SKOS.prefLabel)
# Bookkeeping literals that say nothing about what an entity is.
_SKIP = {FKG.timeQuality, FKG.timeRule, FKG.contentHash, FKG.normalizedText}
_KEY_PROPERTIES = 5


@dataclass(frozen=True)
class Candidate:
    iri: str
    description: str
    available_at: str | None = None  # lexical xsd:dateTime, when the entity carries one


class Candidates(list[Candidate]):
    """The listed candidates, with how many there were before sampling."""

    def __init__(self, items: Sequence[Candidate] = (), *, total: int, kind: str = "") -> None:
        super().__init__(items)
        self.total = total
        self.kind = kind

    @property
    def sampled(self) -> bool:
        return self.total > len(self)

    def listing(self) -> str:
        """One `IRI | description` line per candidate, for the prompt."""
        return "\n".join(f"{c.iri} | {c.description}" for c in self) or "(none)"


@dataclass
class Selection:
    """What the reader picked: valid IRIs in its order, and the ones it was not given."""

    candidates: Candidates
    selected: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    result: ReadResult | None = None  # None when there was nothing to choose from

    @property
    def invalid_count(self) -> int:
        return len(self.invalid)


@dataclass
class Subgraph:
    selection: Selection
    triples: list[Triple]
    jsonld: dict[str, Any]

    def text(self) -> str:
        """The subgraph's compact JSON-LD nodes as text, for a later stage's prompt (the
        `@context`, hundreds of term definitions, stays in `jsonld`)."""
        return json.dumps(self.jsonld["@graph"], ensure_ascii=False, sort_keys=True)


def _graphs(store: BaseStore, graphs: Sequence[NamedNode | str]) -> list[NamedNode]:
    if isinstance(graphs, str) or not graphs:
        raise InputError(
            "give the named graphs retrieval may read as a non-empty list",
            field="graphs",
            value=graphs,
            hint="for example [store.graphs.user(customer), store.graphs.market]",
        )
    return [g if isinstance(g, NamedNode) else store.graphs.parse(g) for g in graphs]


def _class(cls: NamedNode | str) -> NamedNode:
    if isinstance(cls, NamedNode):
        return cls
    term = to_term(cls, "iri", name="cls")
    assert isinstance(term, NamedNode)
    return term


def _when(lexical: str | None) -> float:
    """Seconds since the epoch of a zoned xsd:dateTime; timeless entities sort first."""
    if lexical is None:
        return float("-inf")
    try:
        return dt.datetime.fromisoformat(lexical).timestamp()
    except ValueError:
        return float("inf")


def sample_key(seed: int, iri: str) -> str:
    """The order a sample is drawn in: SHA-256 of (seed, IRI), so the same seed and the same
    eligible set always give the same sample, whatever order the store returns rows in."""
    return hashlib.sha256(f"{seed}\x1f{iri}".encode()).hexdigest()


def candidates(
    store: BaseStore,
    cls: NamedNode | str,
    *,
    graphs: Sequence[NamedNode | str],
    before: dt.datetime | None = None,
    cap: int = DEFAULT_CAP,
    seed: int = 0,
) -> Candidates:
    """The entities of `cls` in `graphs` (available strictly before `before`, for those that
    carry fkg:availableAt), at most `cap` of them, oldest first."""
    if not isinstance(cap, int) or cap < 1:
        raise InputError("cap must be a positive number of candidates", field="cap", value=cap)
    dataset = _graphs(store, graphs)
    cls = _class(cls)
    values: dict[str, object] = {"class": cls}
    if before is not None:
        values["before"] = before
    rows = queries.select(store, "class_members", values, default_graphs=dataset)
    found: dict[str, str | None] = {}
    for row in rows:
        node, at = row.maybe("node"), row.maybe("availableAt")
        if isinstance(node, NamedNode):
            found.setdefault(node.value, at.value if isinstance(at, Literal) else None)
    chosen = sorted(found, key=lambda iri: sample_key(seed, iri))[:cap]
    chosen.sort(key=lambda iri: (_when(found[iri]), iri))
    described = _describe(store, chosen, dataset)
    items = [Candidate(iri, described[iri], found[iri]) for iri in chosen]
    return Candidates(items, total=len(found), kind=_local(cls.value))


def _describe(store: BaseStore, nodes: list[str], dataset: list[NamedNode]) -> dict[str, str]:
    literals: dict[str, dict[NamedNode, list[str]]] = {n: {} for n in nodes}
    if nodes:
        rows = queries.select(
            store, "node_literals", {"node": [NamedNode(n) for n in nodes]}, default_graphs=dataset
        )
        for row in rows:
            node, p, o = row.maybe("node"), row.maybe("p"), row.maybe("o")
            # the query keeps literal objects only (FILTER isLiteral)
            if isinstance(node, NamedNode) and isinstance(p, NamedNode) and isinstance(o, Literal):
                literals[node.value].setdefault(p, []).append(o.value)
    return {n: describe(n, props) for n, props in literals.items()}


def describe(iri: str, props: Mapping[NamedNode, Sequence[str]]) -> str:
    """One line about an entity: its text, label or title; else a few key properties.

    >>> describe("https://e.org/asset/X1", {RDFS.label: ["Acme fund"], FKG.sector: ["Tech"]})
    'Acme fund (sector=Tech)'
    """
    name = next((sorted(props[p])[0] for p in _NAMES if props.get(p)), None)
    if name is not None and FKG.text in props:
        return _one_line(name)
    keys = sorted(
        (_local(p.value), sorted(vs)[0])
        for p, vs in props.items()
        if p not in _SKIP and p not in _NAMES and vs
    )
    extra = ", ".join(f"{k}={v}" for k, v in keys[:_KEY_PROPERTIES] if len(v) <= 60)
    head = name or _local(iri)
    return _one_line(f"{head} ({extra})" if extra else head)


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= DESCRIPTION_CHARS else text[: DESCRIPTION_CHARS - 1] + "…"


def _local(iri: str) -> str:
    return iri.rstrip("/").rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def select(
    llm: LLM,
    request: str,
    candidates: Candidates,
    *,
    context: str | Mapping[str, Any] | None = None,
    cache: OutputCache | None = None,
    window: int | None = None,
    max_tokens: int = SELECT_REPLY_TOKENS,
) -> Selection:
    """The reader's pick among `candidates` (read() drops and counts IRIs not listed).

    The listing is cut to fit the reader's context window (its own `n_ctx`, else `window`;
    neither: not cut) beside the request, the context and a reply of `max_tokens`: the
    oldest candidates go first (they are listed oldest first), the prompt says how many
    were listed of how many, and `Selection.candidates` holds those listed."""
    if not request.strip():
        raise InputError("the request is empty", field="request", value=request)
    if not candidates:
        return Selection(candidates)
    if context is not None and not isinstance(context, str):
        context = json.dumps(context, ensure_ascii=False, sort_keys=True)
    template = prompt("select")

    def values(listed: Candidates) -> dict[str, object]:
        return {
            "request": request.strip(),
            "context": context or "(none)",
            "kind": listed.kind or "entities",
            "shown": len(listed),
            "total": listed.total,
            "candidates": listed.listing(),
        }

    def newest(k: int) -> Candidates:
        return Candidates(
            candidates[len(candidates) - k :] if k else [],
            total=candidates.total,
            kind=candidates.kind,
        )

    limit = budget.context_window(llm, window)
    if limit is not None:
        room = limit - max_tokens
        fits = largest(
            len(candidates),
            lambda k: budget.count_tokens(llm, template.render(values(newest(k)))) <= room,
        )
        candidates = newest(max(fits, 1))  # one at least: past the window, the reader says so
    selection = Selection(candidates)
    allowed = [c.iri for c in candidates]
    result = read(
        llm,
        template,
        values(candidates),
        EntitySelection,
        allowed_ids=allowed,
        cache=cache,
        max_tokens=max_tokens,
    )
    selection.result = result
    if isinstance(result.output, EntitySelection):
        selection.selected = list(result.output.selected)
    selection.invalid = list(result.invalid_citations)
    return selection


def construct(
    store: BaseStore,
    nodes: Sequence[NamedNode | str],
    *,
    graphs: Sequence[NamedNode | str],
    before: dt.datetime | None = None,
) -> list[Triple]:
    """The one-hop subgraph of `nodes` read from `graphs` only, sorted; with `before`, triples
    touching a node available at or after it are left out."""
    dataset = _graphs(store, graphs)
    terms = sorted({NamedNode(n) if isinstance(n, str) else n for n in nodes}, key=str)
    if not terms:
        return []
    if before is None:
        triples = queries.construct(store, "one_hop", {"node": terms}, default_graphs=dataset)
    else:
        values = {"node": terms, "before": before}
        triples = queries.construct(store, "one_hop_before", values, default_graphs=dataset)
    return sorted(set(triples), key=str)


def as_jsonld(triples: Sequence[Triple]) -> dict[str, Any]:
    """Compact JSON-LD of `triples` with finkg's `@context` embedded."""
    return to_jsonld(triples)


def retrieve(
    store: BaseStore,
    llm: LLM,
    request: str,
    cls: NamedNode | str,
    *,
    graphs: Sequence[NamedNode | str],
    before: dt.datetime | None,
    context: str | Mapping[str, Any] | None = None,
    cap: int = DEFAULT_CAP,
    seed: int = 0,
    cache: OutputCache | None = None,
) -> Subgraph:
    """One stage of paper 004's pipeline: list `cls` in `graphs` as of `before` (None: no
    cut-off), let the reader select, and return the selection's one-hop subgraph."""
    found = candidates(store, cls, graphs=graphs, before=before, cap=cap, seed=seed)
    selection = select(llm, request, found, context=context, cache=cache)
    triples = construct(store, selection.selected, graphs=graphs, before=before)
    return Subgraph(selection, triples, as_jsonld(triples))
