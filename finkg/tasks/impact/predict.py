"""Event-impact predictions (paper 000): one anchor in, one checked prediction out, as RDF.

For an anchor: the point-in-time pool (M0 candidates, `retrieval.pools`), the source
memory as of the decision time (`retrieval.memory`, none for the static variant), the
shared top-M by mean memory-adjusted score, the market-context card from bars up to the
session before P, and the frozen reader (prompt `impact`, JSON schema narrowed to the
given ids). The prediction, its horizon signals and citations, the anchor, and the run
(model, prompt hash, parameters, the memory it read, every used item with rank and score)
are validated against the output shapes and written in one commit.

A variant is the memory a run reads: `None` (static retrieval) or a `SourceMemory` (cited
evidence, or one of the validity checks). Predictions are keyed by (variant, anchor,
model), so variants and models live side by side and rerunning adds nothing.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass

from pyoxigraph import NamedNode, Quad

from finkg.errors import InputError
from finkg.evaluation.baselines import prior_z
from finkg.evaluation.labels import PriceTable
from finkg.kg.calendar import MarketCalendar
from finkg.kg.derive.cards import market_card
from finkg.kg.iri import mint
from finkg.kg.outputs import RunRecord, Used, run_iri, write_output
from finkg.kg.store import BaseStore
from finkg.ontology.terms import PROV
from finkg.reader.llm import LLM
from finkg.reader.read import OutputCache, ReadResult, prompt, read
from finkg.reader.schemas import ImpactCompact, ImpactPrediction
from finkg.retrieval.memory import (
    MemoryParams,
    MemoryTimeline,
    Ranked,
    SourceMemory,
    memory_counts,
    memory_node_quads,
    rerank,
)
from finkg.retrieval.pools import Pool, PoolSpec, TextSource, VectorSource, build_pool
from finkg.tasks.head_records import Head
from finkg.tasks.heads import KINDS
from finkg.tasks.impact.anchors import Anchor
from finkg.tasks.impact.prompting import prompt_values
from finkg.tasks.impact.scoring import (
    FEATURES,
    SCORED_TEMPLATE,
    Scored,
    anchor_features,
    as_prediction,
    cited_ids,
    finite,
    score_anchor,
    scored_templates_sha256,
)
from finkg.tasks.records import impact_quads

# the generated reply forms: the prompt template and the output contract each asks for;
# "scored" decides by the options' log-probabilities and a decision head (`scoring`)
REPLIES: dict[str, tuple[str, type[ImpactPrediction] | type[ImpactCompact]]] = {
    "full": ("impact", ImpactPrediction),
    "compact": ("impact_compact", ImpactCompact),
}
SCORED = "scored"
REPLY_FORMS = (SCORED, *REPLIES)


@dataclass(frozen=True, kw_only=True)
class ImpactConfig:
    pool: PoolSpec = dataclasses.field(default_factory=PoolSpec)
    memory: MemoryParams = dataclasses.field(default_factory=MemoryParams)
    proxy: str = "QQQ"
    snippet_chars: int = 600
    max_tokens: int = 768
    # "scored" (the options' log-probabilities through `head`, and a short citation reply),
    # or a generated reply: "full" (signals, reasons, prose) or "compact" (signals and one
    # citation list); see REPLIES
    reply: str = SCORED
    head: str = "prior"  # the decision head of a scored reply (`tasks.heads.KINDS`)

    def __post_init__(self) -> None:
        if self.snippet_chars < 50:
            raise InputError("must be at least 50", field="snippet_chars", value=self.snippet_chars)
        if self.reply not in REPLY_FORMS:
            raise InputError(
                "unknown reply form",
                field="reply",
                value=self.reply,
                hint="use " + ", ".join(REPLY_FORMS),
            )
        if self.head not in KINDS:
            raise InputError(
                "unknown decision head",
                field="head",
                value=self.head,
                hint="use " + ", ".join(KINDS),
            )
        if not self.proxy:
            raise InputError("a market proxy ticker is needed", field="proxy", value=self.proxy)

    def parameters(self, memory: SourceMemory | None) -> dict[str, object]:
        return {
            "M0": self.pool.size,
            "peer_share": self.pool.peer_share,
            "families": [f.value.rsplit("#", 1)[1] for f in self.pool.families],
            "lookback_days": self.pool.lookback_days,
            "near_duplicate": self.pool.near_duplicate,
            "fusion": self.pool.fusion,
            "M": self.memory.top,
            "kappa": self.memory.kappa,
            "delta": self.memory.delta,
            "lambda": self.memory.lam,
            "memory": memory.name if memory else None,
            "variant": memory.variant if memory else "static",
            "proxy": self.proxy,
            "snippet_chars": self.snippet_chars,
            "reply": self.reply,
            **({"head": self.head} if self.reply == SCORED else {}),
        }


@dataclass(frozen=True)
class Retrieved:
    pool: Pool
    context: tuple[Ranked, ...]  # the top-M the reader sees, best first
    memory_updates_seen: int


@dataclass(frozen=True)
class AnchorInputs:
    """What every variant of one anchor reads alike: the pool (the memory only reorders it)
    and the market card. Variants run together build them once (`prequential`)."""

    pool: Pool
    card: str  # the market card's text
    features: tuple[float, ...] = ()  # the job's own numbers (`scoring.FEATURES`)
    brief: str = ""  # the card's numbers in two lines (what a scored prompt shows)


def anchor_inputs(
    store: BaseStore,
    anchor: Anchor,
    *,
    texts: TextSource,
    vectors: VectorSource,
    config: ImpactConfig,
    prices: PriceTable | None = None,
    calendar: MarketCalendar | None = None,
) -> AnchorInputs:
    """The pool, the card and the features of one anchor; the prior residual z among the
    features needs `prices` and `calendar` (NaN without them)."""
    pool = build_pool(
        store,
        anchor=anchor.news,
        company=anchor.company,
        decision_time=anchor.decision_time,
        query=anchor.headline,
        texts=texts,
        vectors=vectors,
        spec=config.pool,
    )
    card = market_card(store, anchor.ticker, anchor.card_last_session, proxy=config.proxy)
    z = None
    if prices is not None and calendar is not None:
        z = prior_z(prices, anchor.ticker, config.proxy, anchor.prediction_day, calendar=calendar)
    return AnchorInputs(
        pool, card.text(), anchor_features(card, anchor.event_type, z), card.brief()
    )


@dataclass(frozen=True)
class ImpactResult:
    anchor: Anchor
    retrieved: Retrieved
    read: ReadResult  # the generated reply (for a scored decision: its summary)
    prediction: NamedNode | None  # None when the reply never matched the schema
    ids: dict[str, NamedNode]  # the reader's short ids
    scored: Scored | None = None  # a scored decision's scores, heads and values

    @property
    def cached(self) -> bool:
        """Every read of the anchor was answered by the cache (no read was made)."""
        return self.scored.cached if self.scored else self.read.cached

    @property
    def reads(self) -> int:
        """Reads really made for this anchor and variant."""
        return self.scored.reads if self.scored else int(not self.read.cached)

    @property
    def seconds(self) -> float:
        """The reader's time on the reads it made."""
        if self.scored:
            return self.scored.seconds
        return 0.0 if self.read.cached else self.read.seconds


def shown_card(inputs: AnchorInputs, config: ImpactConfig) -> str:
    """The card a prompt shows: its numbers in two lines for a scored decision, the paper's
    card for a generated reply."""
    return inputs.brief if config.reply == SCORED and inputs.brief else inputs.card


def retrieve(
    store: BaseStore,
    anchor: Anchor,
    *,
    pool: Pool,
    memory: SourceMemory | None,
    config: ImpactConfig,
    timeline: MemoryTimeline | None = None,
) -> Retrieved:
    """The top-M of `pool` under `memory` as of the anchor's decision time."""
    if memory is None:
        counts = {}
    elif timeline is not None:
        counts = timeline.counts(anchor.decision_time)
    else:
        counts = memory_counts(store, memory, anchor.decision_time)
    params = config.memory if memory else dataclasses.replace(config.memory, lam=0.0)
    ranked = rerank(pool.candidates, event_type=anchor.event_type, counts=counts, params=params)
    seen = sum(c.updates for c in counts.values())
    return Retrieved(pool, tuple(ranked[: config.memory.top]), seen)


def predict(
    store: BaseStore,
    anchor: Anchor,
    *,
    llm: LLM,
    texts: TextSource,
    vectors: VectorSource,
    memory: SourceMemory | None,
    config: ImpactConfig | None = None,
    cache: OutputCache | None = None,
    timeline: MemoryTimeline | None = None,
    inputs: AnchorInputs | None = None,
    heads: Mapping[int, Head] | None = None,
) -> ImpactResult:
    """Retrieve, read and write one anchor's prediction (module docstring); `inputs` are
    the anchor's pool, card and features when the caller built them already; `heads` decide
    a scored reply per horizon (none: the raw argmax), each fitted before the decision."""
    config = config or ImpactConfig()
    started = dt.datetime.now(dt.UTC)
    heads = heads or {}
    for h, head in heads.items():
        if head.state.as_of > anchor.decision_time:
            raise InputError(
                "a decision head fitted after the decision would see its future",
                field=f"head {h}D",
                value=head.state.as_of.isoformat(),
            )
    if inputs is None:
        inputs = anchor_inputs(store, anchor, texts=texts, vectors=vectors, config=config)
    retrieved = retrieve(
        store, anchor, pool=inputs.pool, memory=memory, config=config, timeline=timeline
    )
    card = shown_card(inputs, config)
    values, ids = prompt_values(store, anchor, retrieved.context, config.snippet_chars, card)
    scored = None
    if config.reply == SCORED:
        scored = score_anchor(
            llm,
            values,
            ids=sorted(ids),
            horizons=config.memory.horizons,
            features=inputs.features,
            heads={h: head.state for h, head in heads.items()},
            cache=cache,
        )
        cited = cited_ids(scored)
        result = ReadResult(
            as_prediction(scored, cited, anchor.event_label),
            True,
            1,
            SCORED_TEMPLATE,
            scored_templates_sha256(),
            scored.prompt_hash,
            llm.model_id,
            tokens_in=scored.tokens_in,
            seconds=scored.seconds,
            cached=scored.cached,
            cited=cited,
        )
        prompt_hash = scored.prompt_hash
        tokens_in, tokens_out = scored.tokens_in, 0
    else:
        template, contract = REPLIES[config.reply]
        result = read(
            llm,
            prompt(template),
            values,
            contract,
            allowed_ids=set(ids),
            cache=cache,
            max_tokens=config.max_tokens,
        )
        if result.output is None:
            return ImpactResult(anchor, retrieved, result, None, ids)
        if isinstance(result.output, ImpactCompact):
            result.output = result.output.expanded(anchor.event_label)
        prompt_hash, tokens_in, tokens_out = result.prompt_hash, result.tokens_in, result.tokens_out
    variant = memory.name if memory else "static"
    base = store.graphs.base
    output = mint("impact", variant, anchor.news.value, llm.model_id, base=base)
    run = run_iri(store, "impact", variant, anchor.news.value, prompt_hash)
    parameters = config.parameters(memory)
    if scored is not None:
        parameters |= {
            "features": dict(zip(FEATURES, finite(inputs.features), strict=True)),
            "logprobs": {f"{h}D": s.logprobs for h, s in scored.scores.items()},
            "citation": scored.citation.logprobs if scored.citation else None,
            "heads": {f"{h}D": heads[h].state.sha256 for h in heads},
        }
    record = RunRecord(
        task="impact",
        model_id=llm.model_id,
        started=started,
        ended=dt.datetime.now(dt.UTC),
        prompt_hash=prompt_hash,
        template_hash=result.prompt_sha256,
        parameters=parameters,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        json_valid=result.json_valid,
        invalid_citations=len(result.invalid_citations),
        used=[
            Used(r.candidate.evidence, rank, r.mean)
            for rank, r in enumerate(retrieved.context, start=1)
        ],
    )
    graph = store.graphs.outputs
    quads = [
        *anchor.quads(graph),
        *impact_quads(
            result.output,  # type: ignore[arg-type]
            output=output,
            anchor=anchor.iri,
            run=run,
            as_of=anchor.decision_time,
            ids=ids,
            graph=graph,
            probabilities=(
                {h: s.probabilities() for h, s in scored.scores.items()} if scored else None
            ),
            decided_by={h: head.iri for h, head in heads.items()} if scored else None,
        ),
    ]
    if memory is not None:
        quads.append(Quad(run, PROV.used, memory.iri, graph))
        quads += memory_node_quads(memory, store.graphs.memory)
    if scored is not None:
        quads += [Quad(run, PROV.used, head.iri, graph) for head in heads.values()]
    write_output(store, record, quads, output=output, run=run, note=f"impact {variant}")
    return ImpactResult(anchor, retrieved, result, output, ids, scored)
