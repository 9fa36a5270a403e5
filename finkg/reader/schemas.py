"""The readers' output contracts: pydantic models whose JSON schema is given to the LLM
(grammar-constrained on llama.cpp, `response_format` elsewhere) and which validate replies.

Every model forbids extra fields. Evidence is cited by the short ids the prompt gave it
(`N1`, `F2`, `C3`, or a subgraph node's IRI); `read.py` checks citations against the ids that
were actually given and drops the rest, counting them. Bounded strings stay at 400 characters
or less: llama.cpp turns maxLength into a bounded repetition, and a 1,200-character bound
crashed the packaged readers.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- paper 000, appendix B: event-impact prediction -------------------------------------

Signal = Literal["-1", "0", "+1"]


class HorizonSignal(_Out):
    signal: Signal = Field(
        description="+1 positive, 0 neutral/uncertain, -1 negative residual impact"
    )
    ids: list[str] = Field(description="ids of the retrieved evidence this signal rests on")
    reason: str = Field(max_length=400)

    @property
    def value(self) -> int:
        return int(self.signal)


class ImpactSignals(_Out):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    d1: HorizonSignal = Field(alias="1D")
    d3: HorizonSignal = Field(alias="3D")
    d5: HorizonSignal = Field(alias="5D")

    def by_horizon(self) -> dict[int, HorizonSignal]:
        return {1: self.d1, 3: self.d3, 5: self.d5}


class ImpactPrediction(_Out):
    """Residual market impact of a news anchor at 1, 3 and 5 sessions."""

    event_type: str = Field(max_length=40)
    signals: ImpactSignals
    main_uncertainty: str = Field(max_length=300)


class ImpactCompact(_Out):
    """The same three signals without the prose, and one list of at most two ids of the
    evidence they rest on: about 35 reply tokens instead of 150-250, for runs where the
    reader's time is the budget (`ImpactConfig.reply`). `expanded` gives the full
    prediction, each horizon citing the list, and no reasons."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    d1: Signal = Field(alias="1D")
    d3: Signal = Field(alias="3D")
    d5: Signal = Field(alias="5D")
    ids: list[str] = Field(
        max_length=2, description="ids of the retrieved evidence the signals rest on"
    )

    def expanded(self, event_type: str) -> ImpactPrediction:
        def horizon(signal: Signal) -> HorizonSignal:
            return HorizonSignal(signal=signal, ids=list(self.ids), reason="")

        return ImpactPrediction(
            event_type=event_type,
            signals=ImpactSignals(d1=horizon(self.d1), d3=horizon(self.d3), d5=horizon(self.d5)),
            main_uncertainty="",
        )


# -- paper 001: next-session movement ---------------------------------------------------


class MovementPrediction(_Out):
    """Rise or fall, decided by comparing the two labels' log-probabilities."""

    movement: Literal["rise", "fall"]
    logprob_rise: float
    logprob_fall: float

    @property
    def p_rise(self) -> float:
        import math

        hi = max(self.logprob_rise, self.logprob_fall)
        a, b = math.exp(self.logprob_rise - hi), math.exp(self.logprob_fall - hi)
        return a / (a + b)


# -- paper 003: grounded answer ---------------------------------------------------------


class Insight(_Out):
    text: str = Field(max_length=300)
    citations: list[str] = Field(description="chunk ids supporting this insight")


class NumberClaim(_Out):
    value: str = Field(
        description="the number exactly as written in the evidence, e.g. $58.3 billion"
    )
    label: str = Field(max_length=120)
    citation: str


class AnswerSignal(_Out):
    name: str = Field(max_length=80)
    direction: Literal["positive", "negative", "neutral", "mixed"]
    citations: list[str]


ValidationStatus = Literal["High", "Medium", "Low", "Requires Review", "Critical Issues"]


class Answer(_Out):
    """An answer over retrieved chunks, every claim citing chunk ids."""

    summary: str = Field(max_length=400)
    insights: list[Insight]
    signals: list[AnswerSignal]
    citations: list[str]
    numbers: list[NumberClaim]
    validation_status: ValidationStatus = Field(
        description="the model's own view; finkg recomputes it from groundedness"
    )


class ToolCall(_Out):
    """The reader's choice of a market-data tool for a live-data sub-question (paper 002
    §4.5, function calling): which tool, for which ticker, as of which day; "none" when no
    tool answers it."""

    tool: Literal["close", "ten_week_summary", "none"]
    ticker: str = Field(max_length=12, description="the company's ticker, upper case")
    date: str = Field(
        pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$", description="the day asked about, YYYY-MM-DD"
    )


# -- paper 004: recommendation and entity selection --------------------------------------


# A recommendation reply must fit its token budget (`RecommendConfig.max_tokens`): node IRIs
# run to 20-40 tokens each, so an unbounded evidence list let a small reader cite until the
# budget cut its JSON off.
EVIDENCE_PER_ASSET = 3


class Recommended(_Out):
    asset: str = Field(description="the asset's IRI as given in the subgraph")
    reason: str = Field(max_length=300)
    evidence: list[str] = Field(
        description="IRIs of subgraph nodes the reason rests on",
        max_length=EVIDENCE_PER_ASSET,
    )


class Recommendation(_Out):
    """Three different assets for a customer, each with a reason citing subgraph nodes."""

    recommendations: list[Recommended] = Field(min_length=3, max_length=3)

    @model_validator(mode="after")
    def _distinct(self) -> Recommendation:
        assets = [r.asset for r in self.recommendations]
        if len(set(assets)) != len(assets):
            raise ValueError(f"the three assets must be different (got {assets})")
        return self


class EntitySelection(_Out):
    """The entities (IRIs from the listed candidates) whose subgraph should be retrieved."""

    selected: list[str] = Field(description="IRIs copied exactly from the candidate list")


# -- paper 002 §4.3, stage 2: a question a company's passage answers --------------------


class ChunkQuestion(_Out):
    """A question the reader writes for a passage, to adapt the reranker to a company."""

    question: str = Field(min_length=10, max_length=200)


OUTPUTS: dict[str, type[_Out]] = {
    "impact": ImpactPrediction,
    "movement": MovementPrediction,
    "answer": Answer,
    "tool": ToolCall,
    "recommendation": Recommendation,
    "selection": EntitySelection,
    "chunk_question": ChunkQuestion,
}
