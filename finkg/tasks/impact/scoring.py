"""Impact decisions by scoring options, not by generating them (paper 000 §3.2 read through
DESIGN §6 "Decisions").

For one anchor and its context the reader is asked, per horizon, one question whose
possible replies are the three whole options "up", "neutral" and "down", and one question
whose replies are the listed evidence ids and "none": which item matters most. All four
prompts share their opening (the event, the market card, the evidence) and differ only in
the question at the end, so a local reader evaluates the opening once and every question
and option after it in one batch (`LLM.score_many`); each option's log-probability is that
of the complete reply, its end-of-turn token included. Nothing is generated, so a reply
cannot be off the contract and no class is favoured by the way replies are sampled; a
decision head (`tasks.heads`) turns the probabilities, and the job's own numbers
(`features`), into +1 / 0 / -1 per horizon.

The source memory credits the families of the evidence the reader relied on (§3.5): here
the id the reader scores highest, or nothing when "none" wins (attribution by scoring; a
grammar-constrained citation reply would cost a dozen decoding steps more an anchor, each
a full pass of the model). Raw citation scores carry the same bias as raw class scores: on
real data the 0.5B reader puts "none" 2-6 nats above every id on every anchor, so nothing
is ever credited and the memory never learns. A citation head (`fit_citation`, a `prior`
head over the ids and "none") removes it: each id's mean margin over "none" on earlier
reads is subtracted before the argmax, so an id is cited where the reader rates it above
its usual rating for that slot. The read is cached by its exact prompts and options
(`reader.read.score_many`), so a variant whose context equals another's reads nothing.
"""

from __future__ import annotations

import datetime as dt
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
    tone,
)
from finkg.kg.derive.cards import MarketCard
from finkg.reader.llm import LLM, Message
from finkg.reader.read import OptionScores, OutputCache, prompt, score_many
from finkg.reader.schemas import HorizonSignal, ImpactPrediction, ImpactSignals, Signal
from finkg.tasks.heads import KINDS, HeadState, SignRule

# option -> signal value; the order is the decision heads' class order
OPTIONS: dict[str, int] = {"up": 1, "neutral": 0, "down": -1}
CLASSES = tuple(OPTIONS)
SCORED_TEMPLATE = "impact_scored"
CITE_TEMPLATE = "impact_cite"
NONE = "none"  # the citation option that cites nothing
# the job's own numbers a decision head may use besides the reader's scores: the market
# card's, the event type, the prior five sessions' residual z (`baselines.prior_z`) and
# the headline's tone (`baselines.tone`, -1, 0 or +1)
FEATURES = (*CARD_FEATURES, *EVENT_FEATURES, "prior_z", "tone")
# the no-skill rules the job computes anyway, as heads (`tasks.heads.SignRule`): momentum
# (the prior residual z beyond +-1, `baselines.momentum`) and the headline's tone
RULES = {
    "momentum": SignRule(FEATURES.index("prior_z"), 1.0, "up", "neutral", "down"),
    "tone": SignRule(FEATURES.index("tone"), 0.0, "up", "neutral", "down"),
}
HEAD_KINDS = (*KINDS, *RULES)


def anchor_features(
    card: MarketCard, event_type: NamedNode, prior_z: float | None, headline: str
) -> tuple[float, ...]:
    """The anchor's `FEATURES`, NaN where unknown; all knowable at the decision time (the
    card and the z read no bar from the prediction day on; the headline is the news')."""
    z = math.nan if prior_z is None else float(prior_z)
    return (*card_features(card), *event_type_features(event_type), z, float(tone(headline)))


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
    decided (None: the raw argmax) and the value; the citation's scores over the evidence
    ids and "none" (None when no evidence was listed); what the read cost."""

    scores: dict[int, OptionScores]
    heads: dict[int, HeadState | None]
    values: dict[int, int]
    citation: OptionScores | None
    features: tuple[float, ...]

    def _reads(self) -> list[OptionScores]:
        return [*self.scores.values(), *([self.citation] if self.citation else [])]

    @property
    def reads(self) -> int:
        """Reads really made: one batch of prompts, unless the cache answered it."""
        return int(not self.cached)

    @property
    def cached(self) -> bool:
        return all(s.cached for s in self._reads())

    @property
    def seconds(self) -> float:
        """The reader's time on the read it made (0 for a cache hit)."""
        return 0.0 if self.cached else sum(s.seconds for s in self._reads())

    @property
    def tokens_in(self) -> int:
        return sum(s.tokens_in for s in self._reads())

    @property
    def prompt_hash(self) -> str:
        """One hash over every prompt and option set the decision read."""
        parts = [s.prompt_hash for s in self._reads()]
        return hashlib.sha256("/".join(parts).encode()).hexdigest()

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


def scored_templates_sha256() -> str:
    """The templates a scored decision reads, as one hash (the run's template hash)."""
    parts = [prompt(SCORED_TEMPLATE).sha256, prompt(CITE_TEMPLATE).sha256]
    return hashlib.sha256("/".join(parts).encode()).hexdigest()


def questions(
    values: Mapping[str, object], *, ids: Sequence[str], horizons: Sequence[int]
) -> list[tuple[list[Message], list[str]]]:
    """The prompts and options of one anchor's decision: a direction question per horizon,
    then (with evidence listed) the citation question over the ids and "none"."""
    template = prompt(SCORED_TEMPLATE)
    out = [
        (template.render({**values, "horizon": horizon_text(h)}), list(CLASSES)) for h in horizons
    ]
    if ids:
        out.append((prompt(CITE_TEMPLATE).render(values), [*ids, NONE]))
    return out


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
    """Score every question's options in one read, and decide each horizon through its
    head (module docstring). `values` are the impact template's values."""
    read = score_many(llm, questions(values, ids=ids, horizons=horizons), cache=cache)
    scores = dict(zip(horizons, read, strict=False))
    decided = {h: decide(scores[h], features, heads.get(h)) for h in horizons}
    citation = read[len(horizons)] if ids else None
    return Scored(scores, {h: heads.get(h) for h in horizons}, decided, citation, tuple(features))


def margins(logprobs: Mapping[str, float]) -> dict[str, float]:
    """Each listed id's citation log-probability minus that of "none"."""
    return {o: lp - logprobs[NONE] for o, lp in logprobs.items() if o != NONE}


def fit_citation(
    reads: Sequence[tuple[dt.datetime, Mapping[str, float]]], *, as_of: dt.datetime
) -> HeadState:
    """A `prior` head for the citation question, fitted on the citation scores of the
    `reads` (decision time, raw option log-probabilities) made strictly before `as_of`: per
    id (its family letter and place in the list) the mean margin over "none"; `unseen` is
    the mean over every id, for an id the reads never listed. No outcome is needed, so
    nothing has to mature: a read is known once made."""
    used = [(t, lp) for t, lp in reads if t < as_of and NONE in lp]
    totals: dict[str, list[float]] = {}
    for _, lp in used:
        for o, m in margins(lp).items():
            totals.setdefault(o, []).append(m)
    ids = sorted(totals)
    every = [m for o in ids for m in totals[o]]
    times = [t for t, _ in used]
    parameters: dict[str, object] = {
        "means": [round(sum(totals[o]) / len(totals[o]), 10) for o in ids] + [0.0],
        "unseen": round(sum(every) / len(every), 10) if every else 0.0,
        "relative_to": NONE,
    }
    return HeadState(
        "prior",
        (*ids, NONE),
        as_of,
        len(used),
        min(times) if times else None,
        max(times) if times else None,
        parameters if used else {},
    )


def cited_ids(scored: Scored, head: HeadState | None = None) -> list[str]:
    """The id the reader scored highest among the evidence, none when "none" won (ties: the
    first listed); through a citation `head` (`fit_citation`), each id's margin over "none"
    less its mean margin on the head's reads, cited where that is above 0."""
    if scored.citation is None:
        return []
    logprobs = scored.citation.logprobs
    order = list(logprobs)
    if head is not None and head.n:
        stored, unseen_margin = head.parameters["means"], head.parameters["unseen"]
        if not isinstance(stored, list) or not isinstance(unseen_margin, int | float):
            raise ValueError("a citation head's state needs a list of means and an unseen margin")
        means = dict(zip(head.classes, stored, strict=True))
        unseen = float(unseen_margin)
        adjusted = {o: m - float(means.get(o, unseen)) for o, m in margins(logprobs).items()}
        adjusted[NONE] = 0.0
    else:
        adjusted = dict(logprobs)
    best = max(order, key=lambda o: (adjusted[o], -order.index(o)))
    return [] if best == NONE else [best]


def finite(values: Sequence[float]) -> list[float | None]:
    """JSON has no NaN: an unknown feature is null."""
    return [None if math.isnan(v) else v for v in values]


def as_prediction(scored: Scored, ids: list[str], event_type: str) -> ImpactPrediction:
    """A scored decision in the prediction contract: each horizon's value, the cited ids."""
    label: dict[int, Signal] = {1: "+1", 0: "0", -1: "-1"}

    def signal(h: int) -> HorizonSignal:
        return HorizonSignal(signal=label[scored.values[h]], ids=list(ids), reason="")

    return ImpactPrediction(
        event_type=event_type,
        signals=ImpactSignals(d1=signal(1), d3=signal(3), d5=signal(5)),
        main_uncertainty="",
    )
