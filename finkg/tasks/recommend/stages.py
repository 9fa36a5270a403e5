"""The retrieval stages of a recommendation (paper 004): what the reader is shown and picks,
and the CONSTRUCT subgraphs of its picks, always read from the query dataset given (the
customer's graph and the market graph).

- `retrieve`: personal transaction retrieval, then market retrieval with the personal
  subgraph as context (`multi`) or without it (`parallel`);
- `full_graph`: FLARKO's baseline, no retrieval: the whole personal and market graphs as of
  the date (`window.cut_to_window` fits them to the reader's window).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from pyoxigraph import NamedNode, Triple

from finkg import queries
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG
from finkg.reader.llm import ContextOverflow
from finkg.reader.read import OutputCache
from finkg.retrieval import subgraph as sg
from finkg.tasks.recommend.types import RecommendConfig, Recording, Stage, node_text
from finkg.tasks.recommend.window import jsonld_nodes, newest_first

ALL = 1_000_000  # "list everything" for sg.candidates; the newest are kept afterwards


def retrieve(
    store: BaseStore,
    reader: Recording,
    request: str,
    graphs: list[NamedNode],
    as_of: dt.datetime,
    config: RecommendConfig,
    cache: OutputCache | None,
) -> list[Stage]:
    txs = _newest(
        sg.candidates(store, FKG.Transaction, graphs=[graphs[0]], before=as_of, cap=ALL),
        config.transactions,
    )
    first = sg.select(reader, request, txs, cache=cache, window=config.n_ctx)
    personal = _stage(store, "personal", first, first.selected, graphs, as_of)
    summaries = _newest(
        sg.candidates(store, FKG.PriceSummary, graphs=[graphs[1]], before=as_of, cap=ALL),
        config.summaries,
    )
    assets = sg.candidates(store, FKG.Asset, graphs=[graphs[1]], before=as_of, cap=ALL)
    market_list = sg.Candidates(
        [*summaries, *assets], total=summaries.total + assets.total, kind="PriceSummary, Asset"
    )
    if config.variant == "multi":
        second = _select_in_context(reader, request, market_list, personal, cache, config.n_ctx)
    else:
        second = sg.select(reader, request, market_list, cache=cache, window=config.n_ctx)
    market = _stage(store, "market", second, second.selected, graphs, as_of)
    return [personal, market]


def _select_in_context(
    reader: Recording,
    request: str,
    candidates: sg.Candidates,
    personal: Stage,
    cache: OutputCache | None,
    window: int,
) -> sg.Selection:
    """The market selection with the personal subgraph as its context. The listing is cut
    to fit beside it (`sg.select`); when not even one candidate fits, the context keeps the
    newest half of its nodes, again until the prompt fits (the reader says when it does not)."""
    nodes = personal.nodes
    while True:
        try:
            return sg.select(
                reader,
                request,
                candidates,
                context=node_text(nodes),
                cache=cache,
                window=window,
            )
        except ContextOverflow:
            if not nodes:
                raise
            nodes = newest_first(nodes)[: len(nodes) // 2]


def _stage(
    store: BaseStore,
    name: str,
    selection: sg.Selection | None,
    nodes: Sequence[str],
    graphs: list[NamedNode],
    as_of: dt.datetime,
) -> Stage:
    triples = subgraph(store, nodes, graphs=graphs, before=as_of)
    return Stage(name, selection, triples, jsonld_nodes(triples))


def subgraph(
    store: BaseStore,
    nodes: Sequence[str],
    *,
    graphs: list[NamedNode],
    before: dt.datetime,
) -> list[Triple]:
    """The `recommend_subgraph` CONSTRUCT of `nodes`, read from `graphs` only, sorted."""
    if not nodes:
        return []
    terms = sorted({NamedNode(n) for n in nodes}, key=str)
    found = queries.construct(
        store, "recommend_subgraph", {"node": terms, "before": before}, default_graphs=graphs
    )
    return sorted(set(found), key=str)


def full_graph(
    store: BaseStore,
    graphs: list[NamedNode],
    customer: NamedNode,
    as_of: dt.datetime,
    assets: sg.Candidates,
) -> list[Stage]:
    """FLARKO's baseline: the whole PKG and MKG as of D (`cut_to_window` fits it to the window)."""
    txs = sg.candidates(store, FKG.Transaction, graphs=[graphs[0]], before=as_of, cap=ALL)
    sums = sg.candidates(store, FKG.PriceSummary, graphs=[graphs[1]], before=as_of, cap=ALL)
    pkg = subgraph(store, [customer.value, *(c.iri for c in txs)], graphs=graphs, before=as_of)
    mkg = subgraph(
        store, [*(a.iri for a in assets), *(c.iri for c in sums)], graphs=[graphs[1]], before=as_of
    )
    return [
        Stage("full-personal", None, pkg, jsonld_nodes(pkg)),
        Stage("full-market", None, mkg, jsonld_nodes(mkg)),
    ]


def _newest(found: sg.Candidates, n: int) -> sg.Candidates:
    """The `n` newest candidates (they come oldest first), still oldest first."""
    return sg.Candidates(found[-n:] if n else [], total=found.total, kind=found.kind)
