"""What one anchor's prediction is made of: the job's configuration (`ImpactConfig`), the
anchor's pool, card and features (`anchor_inputs`), the memory's ranking of the pool
(`retrieve`) and the result (`ImpactResult`). `predict` and its steps (`steps`) build on
these; callers import them from `predict`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pyoxigraph import NamedNode

from finkg.errors import InputError
from finkg.evaluation.baselines import prior_z
from finkg.evaluation.labels import PriceTable
from finkg.kg.calendar import MarketCalendar
from finkg.kg.derive.cards import market_card
from finkg.kg.store import BaseStore
from finkg.reader.read import ReadResult
from finkg.reader.schemas import ImpactCompact, ImpactPrediction
from finkg.retrieval.memory.source import (
    MemoryParams,
    MemoryTimeline,
    Ranked,
    SourceMemory,
    memory_counts,
    rerank,
)
from finkg.retrieval.pools import Pool, PoolSpec, TextSource, VectorSource, build_pool
from finkg.tasks.head_choice import AUTO, HeadChoice
from finkg.tasks.impact.anchors import Anchor
from finkg.tasks.impact.scoring import HEAD_KINDS, Scored, anchor_features

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
    # the decision head of a scored reply (`scoring.HEAD_KINDS`: a head or a rule), or "auto":
    # chosen on the validation items at the run's start (`head_feed.choose`), which then
    # replaces it here and records the choice (`head_choice`)
    head: str = "prior"
    head_choice: HeadChoice | None = None

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
        if self.head not in (*HEAD_KINDS, AUTO):
            raise InputError(
                "unknown decision head",
                field="head",
                value=self.head,
                hint="use " + ", ".join((*HEAD_KINDS, AUTO)),
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
            **({"head_choice": self.head_choice.as_json()} if self.head_choice else {}),
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
        pool,
        card.text(),
        anchor_features(card, anchor.event_type, z, anchor.headline),
        card.brief(),
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
