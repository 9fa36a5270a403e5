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
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field, create_model
from pyoxigraph import NamedNode, Triple

from finkg import queries
from finkg.config import Settings
from finkg.errors import FinkgError, InputError, TimestampError
from finkg.kg.export import to_jsonld
from finkg.kg.iri import mint
from finkg.kg.outputs import RunRecord, Used, run_iri, write_output
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG, FKG_NS
from finkg.reader.llm import LLM, ContextOverflow, Message
from finkg.reader.read import MAX_REPAIRS, OutputCache, ReadResult, prompt, read
from finkg.reader.schemas import Recommendation, Recommended
from finkg.retrieval import subgraph as sg
from finkg.tasks.records import recommendation_quads

VARIANTS = ("multi", "parallel", "full")
ALL = 1_000_000  # "list everything" for sg.candidates; the newest are kept afterwards
DEFAULT_REQUEST = (
    "Recommend three assets for this customer to buy on the recommendation date, in line "
    "with their past transactions, risk level and investment capacity."
)


@dataclass(frozen=True, kw_only=True)
class RecommendConfig:
    """What a recommendation reads; checked when built."""

    variant: str = "multi"
    transactions: int = 40  # PTR: the customer's newest transactions listed
    summaries: int = 30  # MR: the newest ten-week summaries listed (every asset is listed too)
    n_ctx: int = 4096  # the reader's context window when it does not say (full baseline)
    max_tokens: int = 500  # for the recommendation reply
    request: str = DEFAULT_REQUEST

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise InputError(
                "unknown variant",
                field="variant",
                value=self.variant,
                hint="use one of " + ", ".join(VARIANTS),
            )
        for name in ("transactions", "summaries", "n_ctx", "max_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError("must be a positive whole number", field=name, value=value)
        if not self.request.strip():
            raise InputError("the request is empty", field="request", value=self.request)

    def parameters(self) -> dict[str, object]:
        return {
            "variant": self.variant,
            "transactions": self.transactions,
            "summaries": self.summaries,
            "n_ctx": self.n_ctx,
            "max_tokens": self.max_tokens,
            "request": self.request,
        }


@dataclass
class Stage:
    """One retrieval stage: what was listed, what the reader picked, the subgraph."""

    name: str  # "personal" or "market" ("full": the injected graph, no reader)
    selection: sg.Selection | None
    triples: list[Triple]
    nodes: list[dict[str, Any]]  # the JSON-LD nodes given to later prompts

    def text(self) -> str:
        return _text(self.nodes)

    def summary(self) -> dict[str, object]:
        s, r = self.selection, self.selection.result if self.selection else None
        return {
            "stage": self.name,
            "listed": len(s.candidates) if s else None,
            "eligible": s.candidates.total if s else None,
            "selected": len(s.selected) if s else None,
            "invalid": s.invalid_count if s else 0,
            "prompt_hash": r.prompt_hash if r else None,
            "tokens_in": r.tokens_in if r else 0,
            "triples": len(self.triples),
            "nodes": len(self.nodes),
        }


@dataclass
class RecommendResult:
    user: str
    as_of: dt.datetime
    variant: str
    stages: list[Stage]
    read: ReadResult
    output: Recommendation | None
    recommendation: NamedNode | None  # None when the reply never met the contract
    prompts: list[list[Message]] = field(default_factory=list)  # every prompt sent, in order
    offered_assets: list[str] = field(default_factory=list)
    offered_nodes: list[str] = field(default_factory=list)
    truncated: int = 0  # graph nodes cut to fit the context window
    seconds: float = 0.0
    written: bool = False  # False also when the same recommendation was already stored

    @property
    def ok(self) -> bool:
        return self.output is not None

    @property
    def assets(self) -> list[str]:
        return [r.asset for r in self.output.recommendations] if self.output else []

    @property
    def reads(self) -> list[ReadResult]:
        return [s.selection.result for s in self.stages if s.selection and s.selection.result] + [
            self.read
        ]

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens over every reader call of this recommendation (repairs included)."""
        return sum(r.tokens_in for r in self.reads)


class _Recording:
    """The reader behind a recorder: every prompt it is sent is kept, in order."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm
        self.model_id = llm.model_id
        self.prompts: list[list[Message]] = []

    def generate(self, messages: Sequence[Message], schema: Any = None, **kw: Any) -> Any:
        self.prompts.append(list(messages))
        return self.llm.generate(messages, schema, **kw)

    def score(self, messages: Sequence[Message], options: Sequence[str]) -> dict[str, float]:
        self.prompts.append(list(messages))
        return self.llm.score(messages, options)


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
    if as_of.tzinfo is None or as_of.utcoffset() is None:
        raise TimestampError(
            "the recommendation instant has no zone",
            field="as_of",
            value=as_of.isoformat(),
            hint="give a zoned instant, e.g. 2020-06-01T00:00+03:00",
        )
    return as_of


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
    """Three assets for `user` as of `as_of` (module docstring); written when valid."""
    config = config or RecommendConfig()
    as_of = check_instant(as_of)
    started, clock = dt.datetime.now(dt.UTC), time.perf_counter()
    graph, customer = dataset(store, user)
    graphs = store.graphs.user_dataset(user)  # the user's graph and the market graph only
    reader = _Recording(llm)
    profile = _profile(store, customer, graph)
    assets = sg.candidates(store, FKG.Asset, graphs=[store.graphs.market], before=as_of, cap=ALL)
    if not assets:
        raise InputError(
            "the market graph holds no assets", field="store", hint="ingest FAR-Trans CSVs first"
        )
    request = f"{config.request.strip()}\nCustomer: {customer.value} ({profile})"
    if config.variant == "full":
        stages = _full_graph(store, graphs, customer, as_of, assets)
    else:
        stages = _retrieve(store, reader, request, graphs, as_of, config, cache)
    personal, market, truncated = _cut(reader, stages, config, customer, profile, as_of, assets)
    stages = [personal, market]
    nodes = sorted({n["id"] for s in stages for n in s.nodes})
    offered = [a.iri for a in assets]
    values = _final_values(config, customer, profile, as_of, personal, market, assets)
    result = read(
        reader,  # type: ignore[arg-type]
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
    )
    if output is not None and write:
        out.recommendation, out.written = _write(store, llm, out, customer, config, started)
    out.seconds = time.perf_counter() - clock
    return out


def contract(assets: Sequence[str], nodes: Sequence[str]) -> type[Recommendation]:
    """`Recommendation` narrowed to one call: assets from `assets`, evidence from `nodes`."""
    asset_type: Any = Literal[tuple(sorted(assets))]  # type: ignore[valid-type]
    node_type: Any = Literal[tuple(sorted(nodes))] if nodes else str  # type: ignore[valid-type]
    evidence = Field(
        description="ids of graph nodes the reason rests on",
        max_length=len(nodes) if nodes else 0,
    )
    item = create_model(
        "RecommendedHere",
        __base__=Recommended,
        asset=(asset_type, Field(description="the asset's IRI as listed")),
        evidence=(list[node_type], evidence),
    )
    return create_model(  # type: ignore[no-any-return]
        "RecommendationHere",
        __base__=Recommendation,
        recommendations=(list[item], Field(min_length=3, max_length=3)),  # type: ignore[valid-type]
    )


def _retrieve(
    store: BaseStore,
    reader: _Recording,
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
    first = sg.select(reader, request, txs, cache=cache)  # type: ignore[arg-type]
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
        second = _select_in_context(reader, request, market_list, personal, cache)
    else:
        second = sg.select(reader, request, market_list, cache=cache)  # type: ignore[arg-type]
    market = _stage(store, "market", second, second.selected, graphs, as_of)
    return [personal, market]


def _select_in_context(
    reader: _Recording,
    request: str,
    candidates: sg.Candidates,
    personal: Stage,
    cache: OutputCache | None,
) -> sg.Selection:
    """The market selection with the personal subgraph as its context. When the prompt
    passes the reader's window, the context keeps the newest half of its nodes, again until
    it fits (the reader itself says when it does not: nothing is estimated)."""
    nodes = personal.nodes
    while True:
        try:
            return sg.select(reader, request, candidates, context=_text(nodes), cache=cache)  # type: ignore[arg-type]
        except ContextOverflow:
            if not nodes:
                raise
            nodes = _newest_first(nodes)[: len(nodes) // 2]


def _stage(
    store: BaseStore,
    name: str,
    selection: sg.Selection | None,
    nodes: Sequence[str],
    graphs: list[NamedNode],
    as_of: dt.datetime,
) -> Stage:
    triples = subgraph(store, nodes, graphs=graphs, before=as_of)
    return Stage(name, selection, triples, _nodes(triples))


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
    found = queries.run(
        store, "recommend_subgraph", {"node": terms, "before": before}, default_graphs=graphs
    )
    return sorted(set(found), key=str)  # type: ignore[arg-type]


def _full_graph(
    store: BaseStore,
    graphs: list[NamedNode],
    customer: NamedNode,
    as_of: dt.datetime,
    assets: sg.Candidates,
) -> list[Stage]:
    """FLARKO's baseline: the whole PKG and MKG as of D (`_cut` fits it to the window)."""
    txs = sg.candidates(store, FKG.Transaction, graphs=[graphs[0]], before=as_of, cap=ALL)
    sums = sg.candidates(store, FKG.PriceSummary, graphs=[graphs[1]], before=as_of, cap=ALL)
    pkg = subgraph(store, [customer.value, *(c.iri for c in txs)], graphs=graphs, before=as_of)
    mkg = subgraph(
        store, [*(a.iri for a in assets), *(c.iri for c in sums)], graphs=[graphs[1]], before=as_of
    )
    return [
        Stage("full-personal", None, pkg, _nodes(pkg)),
        Stage("full-market", None, mkg, _nodes(mkg)),
    ]


def _cut(
    reader: _Recording,
    stages: list[Stage],
    config: RecommendConfig,
    customer: NamedNode,
    profile: str,
    as_of: dt.datetime,
    assets: sg.Candidates,
) -> tuple[Stage, Stage, int]:
    """The personal and market stages cut to fit the reader's context window: the nodes are
    serialized as one list (personal, then market; each timeless first, then newest first)
    and cut at the end, as paper 004's full-KG baseline is. Retrieved subgraphs are small
    and usually fit whole; whatever was cut is neither shown nor citable."""
    personal, market = stages
    ordered = _newest_first(personal.nodes) + _newest_first(market.nodes)
    personal_ids = {n["id"] for n in personal.nodes}
    keep = _fit(reader, ordered, personal_ids, config, customer, profile, as_of, assets)
    if keep == len(ordered):
        return personal, market, 0
    kept = {n["id"] for n in ordered[:keep]}

    def cut(stage: Stage) -> Stage:
        triples = [t for t in stage.triples if t.subject.value in kept]
        nodes = [n for n in stage.nodes if n["id"] in kept]
        return Stage(stage.name, stage.selection, triples, nodes)

    return cut(personal), cut(market), len(ordered) - keep


def _fit(
    reader: _Recording,
    ordered: list[dict[str, Any]],
    personal_ids: set[str],
    config: RecommendConfig,
    customer: NamedNode,
    profile: str,
    as_of: dt.datetime,
    assets: sg.Candidates,
) -> int:
    """How many of `ordered` fit the context window beside the prompt and the reply."""
    window = getattr(reader.llm, "n_ctx", None) or config.n_ctx
    # room for the reply and for the two repairs read() may send (each adds the failed
    # reply and a short correction to the prompt)
    budget = int(window) - (1 + MAX_REPAIRS) * config.max_tokens - 150 * MAX_REPAIRS
    template = prompt("recommend")

    def fits(k: int) -> bool:
        head = ordered[:k]
        p = [n for n in head if n["id"] in personal_ids]
        m = [n for n in head if n["id"] not in personal_ids]
        values = _final_values(config, customer, profile, as_of, _Texts(p), _Texts(m), assets)
        return count_tokens(reader.llm, template.render(values)) <= budget

    lo, hi = 0, len(ordered)
    if fits(hi):
        return hi
    while lo < hi:  # the largest k that fits
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


@dataclass
class _Texts:
    nodes: list[dict[str, Any]]

    def text(self) -> str:
        return _text(self.nodes)


def count_tokens(llm: LLM, messages: list[Message]) -> int:
    """The reader's own count when it has one, else about three characters a token."""
    count = getattr(llm, "count_tokens", None)
    if callable(count):
        return int(count(messages))
    return sum(len(m["content"]) for m in messages) // 3 + 1


def _final_values(
    config: RecommendConfig,
    customer: NamedNode,
    profile: str,
    as_of: dt.datetime,
    personal: Stage | _Texts,
    market: Stage | _Texts,
    assets: sg.Candidates,
) -> dict[str, object]:
    return {
        "request": config.request.strip(),
        "customer": customer.value,
        "profile": profile or "profile not given",
        "as_of": as_of.isoformat(),
        "personal": personal.text(),
        "market": market.text(),
        "assets": assets.listing(),
    }


def _profile(store: BaseStore, customer: NamedNode, graph: NamedNode) -> str:
    rows = queries.run(store, "node_literals", {"node": [customer]}, default_graphs=[graph])
    props = {
        r["p"].value.removeprefix(FKG_NS): r["o"].value  # type: ignore[union-attr]
        for r in rows  # type: ignore[union-attr]
        if r["p"].value.startswith(FKG_NS)  # type: ignore[union-attr]
    }
    return ", ".join(f"{k}={props[k]}" for k in sorted(props))


def _newest(found: sg.Candidates, n: int) -> sg.Candidates:
    """The `n` newest candidates (they come oldest first), still oldest first."""
    return sg.Candidates(found[-n:] if n else [], total=found.total, kind=found.kind)


def _nodes(triples: list[Triple]) -> list[dict[str, Any]]:
    """The compact JSON-LD nodes of `triples` (finkg's context), in id order."""
    if not triples:
        return []
    return sorted(to_jsonld(triples)["@graph"], key=lambda n: n["id"])


def _newest_first(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Timeless nodes (customer, assets) first, then newest first."""
    return sorted(nodes, key=lambda n: (n.get("availableAt") is not None, _neg(n), n["id"]))


def _neg(node: dict[str, Any]) -> float:
    at = node.get("availableAt")
    return -dt.datetime.fromisoformat(at).timestamp() if isinstance(at, str) else 0.0


def _text(nodes: list[dict[str, Any]]) -> str:
    if not nodes:
        return "(none)"
    return json.dumps(nodes, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _write(
    store: BaseStore,
    llm: LLM,
    out: RecommendResult,
    customer: NamedNode,
    config: RecommendConfig,
    started: dt.datetime,
) -> tuple[NamedNode, bool]:
    assert out.output is not None
    r = out.read
    base = store.graphs.base
    key = (config.variant, out.user, out.as_of.isoformat(), llm.model_id)
    rec = mint("recommendation", *key, base=base)
    run = run_iri(store, "recommend", *key, r.prompt_hash)
    evidence = {
        t.subject.value for s in out.stages for t in s.triples if t.predicate == FKG.availableAt
    }
    used: list[NamedNode] = []
    for s in out.stages:
        picked = s.selection.selected if s.selection else [n["id"] for n in s.nodes]
        used += [NamedNode(i) for i in picked if NamedNode(i) not in used]
    invalid = sum(s.selection.invalid_count for s in out.stages if s.selection) + len(
        r.invalid_citations
    )
    record = RunRecord(
        task="recommend",
        model_id=llm.model_id,
        started=started,
        ended=dt.datetime.now(dt.UTC),
        prompt_hash=r.prompt_hash,
        template_hash=r.prompt_sha256,
        parameters={
            **config.parameters(),
            "user": out.user,
            "stages": [s.summary() for s in out.stages],
            "truncated_nodes": out.truncated,
            "prompt_tokens": out.prompt_tokens,
        },
        tokens_in=out.prompt_tokens,
        tokens_out=sum(x.tokens_out for x in out.reads),
        json_valid=r.json_valid,
        invalid_citations=invalid,
        used=[Used(n, rank) for rank, n in enumerate(used, start=1)],
    )
    quads = recommendation_quads(
        out.output,
        output=rec,
        customer=customer,
        run=run,
        as_of=out.as_of,
        evidence=evidence,
        graph=store.graphs.outputs,
    )
    commit = write_output(
        store, record, quads, output=rec, run=run, note=f"recommend {config.variant}"
    )
    return rec, commit is not None


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
    from finkg.reader.backends import open_reader

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
