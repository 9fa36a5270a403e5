"""Impact decisions by scoring options, not by generating them (paper 000 §3.2 read through
DESIGN §6 "Decisions").

For one anchor and its context the reader is asked, per horizon, one question whose
possible replies are the three whole options "up", "neutral" and "down"; `LLM.score` gives
each option's log-probability as the complete reply (its tokens and the end-of-turn token),
the prompts sharing their whole opening (the event, the market card, the evidence), which a
local reader keeps and reuses, so only the question and the options are evaluated per
horizon. Nothing is generated for the decision, so the reply cannot be off the contract and
no class is favoured by the way replies are sampled; a decision head (`tasks.heads`) turns
the probabilities, and the job's own numbers (`features`), into +1 / 0 / -1.

The source memory credits the families of the evidence the reader relied on (§3.5). That
is a second, short read: the same opening, then at most two ids, grammar-constrained
(`ImpactCitation`, about eight reply tokens). Attributing by scoring instead (each item
left out in turn) would cost five more prompt evaluations an anchor; the citation reply
costs its few decoding steps. Both reads are cached by their exact prompt
(`reader.read.OutputCache`), so a variant whose context equals another's reads nothing.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyoxigraph import NamedNode

from finkg.evaluation.baselines import (
    CARD_FEATURES,
    EVENT_FEATURES,
    card_features,
    event_type_features,
)
from finkg.kg.derive.cards import MarketCard
from finkg.reader.llm import LLM
from finkg.reader.read import OptionScores, OutputCache, ReadResult, prompt, read, score_options
from finkg.reader.schemas import HorizonSignal, ImpactCitation, ImpactPrediction, ImpactSignals
from finkg.tasks.heads import HeadState

# option -> signal value; the order is the decision heads' class order
OPTIONS: dict[str, int] = {"up": 1, "neutral": 0, "down": -1}
CLASSES = tuple(OPTIONS)
SCORED_TEMPLATE = "impact_scored"
CITE_TEMPLATE = "impact_cite"
# the job's own numbers a decision head may use besides the reader's scores: the market
# card's, the event type, and the prior five sessions' residual z (`baselines.prior_z`)
FEATURES = (*CARD_FEATURES, *EVENT_FEATURES, "prior_z")


def anchor_features(
    card: MarketCard, event_type: NamedNode, prior_z: float | None
) -> tuple[float, ...]:
    """The anchor's `FEATURES`, NaN where unknown; all knowable at the decision time (the
    card and the z read no bar from the prediction day on)."""
    z = math.nan if prior_z is None else float(prior_z)
    return (*card_features(card), *event_type_features(event_type), z)


def horizon_text(horizon: int) -> str:
    """How the question names a horizon: 'trading session' or 'N trading sessions'."""
    return "trading session" if horizon == 1 else f"{horizon} trading sessions"


def option_logprobs(logprobs: Mapping[str, float]) -> dict[str, float]:
    """The options' log-probabilities among themselves (a log-softmax of the raw ones): what
    heads use, so that a reader's overall confidence in its reply format drops out."""
    top = max(logprobs[o] for o in CLASSES)
    total = top + math.log(sum(math.exp(logprobs[o] - top) for o in CLASSES))
    return {o: logprobs[o] - total for o in CLASSES}


@dataclass(frozen=True)
class Scored:
    """One anchor's scored decision: per horizon the options' scores, the head that
    decided (None: the raw argmax) and the value; the cited ids; what the reads cost."""

    scores: dict[int, OptionScores]
    heads: dict[int, HeadState | None]
    values: dict[int, int]
    citation: ReadResult
    features: tuple[float, ...]

    @property
    def reads(self) -> int:
        """Reads really made (cache hits are not reads)."""
        made = sum(not s.cached for s in self.scores.values())
        return made + (not self.citation.cached)

    @property
    def cached(self) -> bool:
        return all(s.cached for s in self.scores.values()) and self.citation.cached

    @property
    def seconds(self) -> float:
        """The reader's time on the reads it made."""
        spent = sum(s.seconds for s in self.scores.values() if not s.cached)
        return spent + (0.0 if self.citation.cached else self.citation.seconds)

    @property
    def tokens_in(self) -> int:
        return sum(s.tokens_in for s in self.scores.values()) + self.citation.tokens_in

    @property
    def prompt_hash(self) -> str:
        """One hash over every prompt the decision read (horizons in order, then the
        citation prompt)."""
        parts = [self.scores[h].prompt_hash for h in sorted(self.scores)]
        return hashlib.sha256("/".join([*parts, self.citation.prompt_hash]).encode()).hexdigest()

    def probabilities(self, horizon: int) -> dict[str, float]:
        return self.scores[horizon].probabilities()


def decide(scores: OptionScores, features: Sequence[float], head: HeadState | None) -> int:
    """The signal value: the head's class, or the raw argmax without a head (ties: the first
    of up, neutral, down)."""
    logprobs = option_logprobs(scores.logprobs)
    if head is None:
        best = max(CLASSES, key=lambda c: (logprobs[c], -CLASSES.index(c)))
        return OPTIONS[best]
    return OPTIONS[head.decide(logprobs, features)]


def score_anchor(
    llm: LLM,
    values: Mapping[str, object],
    *,
    ids: Sequence[str],
    horizons: Sequence[int],
    features: Sequence[float],
    heads: Mapping[int, HeadState | None],
    cache: OutputCache | None = None,
) -> Scored:
    """Score the options at every horizon, decide each through its head, and ask for the
    cited ids (module docstring). `values` are the impact template's values."""
    template = prompt(SCORED_TEMPLATE)
    scores = {
        h: score_options(
            llm, template.render({**values, "horizon": horizon_text(h)}), list(CLASSES), cache=cache
        )
        for h in horizons
    }
    decided = {h: decide(scores[h], features, heads.get(h)) for h in horizons}
    citation = read(
        llm,
        prompt(CITE_TEMPLATE),
        values,
        ImpactCitation,
        allowed_ids=set(ids),
        cache=cache,
        max_tokens=32,
    )
    return Scored(scores, {h: heads.get(h) for h in horizons}, decided, citation, tuple(features))


def cited_ids(scored: Scored) -> list[str]:
    """The valid ids the citation reply named (none when it never matched its schema)."""
    output = scored.citation.output
    return list(output.ids) if isinstance(output, ImpactCitation) else []


def finite(values: Sequence[float]) -> list[float | None]:
    """JSON has no NaN: an unknown feature is null."""
    return [None if math.isnan(v) else v for v in values]


def as_prediction(scored: Scored, ids: list[str], event_type: str) -> ImpactPrediction:
    """A scored decision in the prediction contract: each horizon's value, the cited ids."""
    label = {1: "+1", 0: "0", -1: "-1"}

    def signal(h: int) -> HorizonSignal:
        return HorizonSignal(signal=label[scored.values[h]], ids=list(ids), reason="")  # type: ignore[arg-type]

    return ImpactPrediction(
        event_type=event_type,
        signals=ImpactSignals(d1=signal(1), d3=signal(3), d5=signal(5)),
        main_uncertainty="",
    )
