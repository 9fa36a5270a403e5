"""Personal asset recommendations (paper 004, RAG-FLARKO): subgraphs in, three assets out.

For one customer and a recommendation instant D (zoned), in the query dataset
{the customer's graph, the market graph} and nothing else:

1. personal transaction retrieval (PTR): the reader is shown the customer's newest
   transactions available before D and picks the behaviourally telling ones; the
   `recommend_subgraph` CONSTRUCT template returns their one-hop subgraph;
2. market retrieval (MR): the reader is shown the newest ten-week price summaries and every
   asset, with the PTR subgraph as context (`multi`) or without it (`parallel`), and picks;
   CONSTRUCT again;
3. recommendation: the reader gets both subgraphs as compact JSON-LD in finkg's context and
   the list of assets, and names three different assets, each with a reason citing nodes.

The `full` variant is paper 004's FLARKO baseline: no retrieval, the customer's whole graph
and the market graph's assets and summaries (as of D) are injected, cut at the end to fit
the reader's context window. The same cut applies to every variant's final prompt (the
retrieved subgraphs are small and usually fit whole); `truncated` says how many nodes went.

The reply's contract is `Recommendation` narrowed to this call: each asset must be one of
the market graph's assets, each cited id a node of the subgraphs given, the three assets
different. A reply that breaks it is repaired at most twice and otherwise fails: nothing is
written. A valid recommendation is written with its run (model, prompt hashes, every stage,
every used entity) to the outputs graph, checked by the output shapes.

Isolation rests on the dataset, not on the reader: every query of this module runs with
`default_graphs` set to the customer's graph and the market graph (the profile: the
customer's graph alone), so no triple of another customer's graph can reach a listing, a
subgraph, a prompt or the output, whatever IRI a reader names.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from functools import partial
from typing import Any, Literal

from pydantic import Field, create_model
from pyoxigraph import NamedNode

from finkg import queries
from finkg.config import Settings
from finkg.errors import FinkgError, InputError, require_zone
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG, FKG_NS
from finkg.reader.llm import LLM
from finkg.reader.read import OutputCache, prompt, read
from finkg.reader.schemas import EVIDENCE_PER_ASSET, Recommendation, Recommended
from finkg.reader.transport.concurrent import concurrency_of, run_all
from finkg.reader.transport.endpoint import RequestFailed
from finkg.reader.transport.usage import Usage, metered
from finkg.retrieval import subgraph as sg
from finkg.tasks.recommend.output import write_failed_recommendation, write_recommendation
from finkg.tasks.recommend.stages import ALL, full_graph, retrieve
from finkg.tasks.recommend.types import (
    DEFAULT_REQUEST,
    VARIANTS,
    RecommendConfig,
    RecommendResult,
    Recording,
)
from finkg.tasks.recommend.window import cut_to_window, final_values

__all__ = [
    "DEFAULT_REQUEST",
    "VARIANTS",
    "RecommendConfig",
    "RecommendResult",
    "RecommendationRejected",
    "contract",
    "dataset",
    "recommend",
    "run_recommendation",
]


def dataset(store: BaseStore, user: str) -> tuple[NamedNode, NamedNode]:
    """The customer's graph and the customer node; an unknown user is an InputError."""
    graph = store.graphs.user(user)
    found = sg.candidates(store, FKG.Customer, graphs=[graph], cap=ALL)
    if not found:
        known = sorted(
            n
            for g in store.named_graphs()
            if (n := store.graphs.name_of(g) or "").startswith("users/")
        )
        shown = ", ".join(k.removeprefix("users/") for k in known[:3]) or "none loaded"
        raise InputError(
            "unknown user: no customer in that user's graph",
            field="user",
            value=user,
            hint=f"give a customer id loaded with `finkg ingest fartrans` (for example: {shown})",
        )
    return graph, NamedNode(found[0].iri)


def check_instant(as_of: object) -> dt.datetime:
    if not isinstance(as_of, dt.datetime):
        raise InputError(
            "the recommendation instant must be a datetime", field="as_of", value=as_of
        )
    return require_zone(as_of, field="as_of", what="the recommendation instant")


def recommend(
    store: BaseStore,
    llm: LLM,
    *,
    user: str,
    as_of: dt.datetime,
    config: RecommendConfig | None = None,
    cache: OutputCache | None = None,
    write: bool = True,
) -> RecommendResult:
    """Three assets for `user` as of `as_of` (module docstring); written when valid. A read
    whose request fails for good leaves, when writing, a run naming it and no output."""
    config = config or RecommendConfig()
    as_of = check_instant(as_of)
    started = dt.datetime.now(dt.UTC)
    with metered() as usage:
        try:
            return _recommend(store, llm, user, as_of, config, cache, write, started, usage)
        except RequestFailed as e:
            e.usage = usage
            if write:
                write_failed_recommendation(store, llm, user, as_of, config, started, e)
            raise


def recommend_many(
    store: BaseStore,
    llm: LLM,
    *,
    users: Sequence[str],
    as_of: dt.datetime,
    config: RecommendConfig | None = None,
    cache: OutputCache | None = None,
    write: bool = True,
) -> list[RecommendResult]:
    """`recommend` for several users as of one instant: each made as `recommend` makes it,
    with nothing written, up to the reader's concurrency at once (`reader.concurrent`), then
    written in the order given, so what is written is what one-at-a-time calls write. A read
    whose request fails for good stops there: those before it are written, a run names the
    request, nothing after it is written."""
    config = config or RecommendConfig()
    as_of = check_instant(as_of)
    for user in users:
        dataset(store, user)  # an unknown user fails before anything is read
    outcomes = run_all(
        [
            partial(
                recommend, store, llm, user=u, as_of=as_of, config=config, cache=cache, write=False
            )
            for u in users
        ],
        concurrency=concurrency_of(llm),
    )
    out = []
    for user, outcome in zip(users, outcomes, strict=True):
        try:
            result = outcome.get()
        except RequestFailed as e:
            if write:
                started = dt.datetime.now(dt.UTC)
                write_failed_recommendation(store, llm, user, as_of, config, started, e)
            raise
        if write and result.output is not None:
            _, customer = dataset(store, user)
            result.recommendation, result.written = write_recommendation(
                store, llm, result, customer, config, result.started or as_of
            )
        out.append(result)
    return out


def _recommend(
    store: BaseStore,
    llm: LLM,
    user: str,
    as_of: dt.datetime,
    config: RecommendConfig,
    cache: OutputCache | None,
    write: bool,
    started: dt.datetime,
    usage: Usage,
) -> RecommendResult:
    clock = time.perf_counter()
    graph, customer = dataset(store, user)
    graphs = store.graphs.user_dataset(user)  # the user's graph and the market graph only
    reader = Recording(llm)
    profile = _profile(store, customer, graph)
    assets = sg.candidates(store, FKG.Asset, graphs=[store.graphs.market], before=as_of, cap=ALL)
    if not assets:
        raise InputError(
            "the market graph holds no assets", field="store", hint="ingest FAR-Trans CSVs first"
        )
    request = f"{config.request.strip()}\nCustomer: {customer.value} ({profile})"
    if config.variant == "full":
        stages = full_graph(store, graphs, customer, as_of, assets)
    else:
        stages = retrieve(store, reader, request, graphs, as_of, config, cache)
    personal, market, truncated = cut_to_window(
        reader, stages, config, customer, profile, as_of, assets
    )
    stages = [personal, market]
    nodes = sorted({n["id"] for s in stages for n in s.nodes})
    offered = [a.iri for a in assets]
    values = final_values(config, customer, profile, as_of, personal, market, assets)
    result = read(
        reader,
        prompt("recommend"),
        values,
        contract(offered, nodes),
        allowed_ids=set(nodes) or None,
        cache=cache,
        max_tokens=config.max_tokens,
    )
    output = result.output if isinstance(result.output, Recommendation) else None
    out = RecommendResult(
        user,
        as_of,
        config.variant,
        stages,
        result,
        output,
        None,
        reader.prompts,
        offered,
        nodes,
        truncated,
        started=started,
        usage=usage,
    )
    if output is not None and write:
        out.recommendation, out.written = write_recommendation(
            store, llm, out, customer, config, started
        )
    out.seconds = time.perf_counter() - clock
    return out


def contract(assets: Sequence[str], nodes: Sequence[str]) -> type[Recommendation]:
    """`Recommendation` narrowed to one call: assets from `assets`, evidence from `nodes`."""
    asset_type: Any = Literal[tuple(sorted(assets))]
    node_type: Any = Literal[tuple(sorted(nodes))] if nodes else str
    evidence = Field(
        description="ids of graph nodes the reason rests on",
        max_length=min(len(nodes), EVIDENCE_PER_ASSET),
    )
    item = create_model(
        "RecommendedHere",
        __base__=Recommended,
        asset=(asset_type, Field(description="the asset's IRI as listed")),
        evidence=(list[node_type], evidence),
    )
    return create_model(
        "RecommendationHere",
        __base__=Recommendation,
        recommendations=(list[item], Field(min_length=3, max_length=3)),
    )


def _profile(store: BaseStore, customer: NamedNode, graph: NamedNode) -> str:
    rows = queries.select(store, "node_literals", {"node": [customer]}, default_graphs=[graph])
    props = {
        r.iri("p").value.removeprefix(FKG_NS): r.string("o")
        for r in rows
        if r.iri("p").value.startswith(FKG_NS)
    }
    return ", ".join(f"{k}={props[k]}" for k in sorted(props))


class RecommendationRejected(FinkgError):
    """The reader's reply never met the recommendation contract: nothing was written."""

    exit_code = 1


def run_recommendation(
    store: BaseStore,
    settings: Settings,
    *,
    user: str,
    as_of: dt.datetime,
    config: RecommendConfig,
    llm: LLM | None = None,
) -> RecommendResult:
    """`finkg recommend`: the configured reader and reply cache, one recommendation, written;
    a reply that never met the contract raises `RecommendationRejected`."""
    from finkg.reader.transport.backends import open_reader

    as_of = check_instant(as_of)
    dataset(store, user)  # an unknown user fails before a model is loaded
    reader = llm or open_reader(settings, n_ctx=config.n_ctx)
    cache = OutputCache(settings.cache_dir / "replies.sqlite")
    result = recommend(store, reader, user=user, as_of=as_of, config=config, cache=cache)
    if not result.ok:
        raise RecommendationRejected(
            f"the reader's reply did not meet the recommendation contract after "
            f"{result.read.attempts} attempt(s): {result.read.error}; nothing was written"
        )
    return result
