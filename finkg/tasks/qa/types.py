"""What an answer is made of (papers 002 + 003): the configuration, the evidence blocks the
reader sees (`blocks.Block`), each sub-question with its route, and the whole `Asked`
record. `ask` builds them and `output` writes them; both import them from here."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyoxigraph import NamedNode

from finkg.errors import InputError
from finkg.reader.read import ReadResult
from finkg.reader.schemas import Answer
from finkg.reader.transport.usage import Usage
from finkg.retrieval.passages import PATHS, Hit
from finkg.retrieval.plan.decompose import SubQuestion
from finkg.tasks.qa.blocks import Block
from finkg.tasks.qa.calculator import Calculation

if TYPE_CHECKING:
    from finkg.tasks.qa.fact_calc import FactCalculation
    from finkg.tasks.qa.facts_route import FactsOutcome


@dataclass(frozen=True, kw_only=True)
class QAConfig:
    """depth: passages each retrieval path keeps (paper 003: 100); pool: fused passages
    the reranker sees; top: passages in the reader's context (paper 003: 5); bundle_k and
    bundle_tau: chunk bundling (paper 002 eq. 2); block_chars: the most characters of one
    evidence block shown to the reader (its 4,096-token window holds five); paths: the
    retrieval paths fused; weights: their RRF weights (a path not named weighs 1);
    planned: the question read by `retrieval.query_plan` before retrieval (its core and
    glossary words; needed by the statement and parts paths); k1, b: BM25's parameters;
    calculate: a numeric question is answered by finkg's calculator over the blocks'
    table cells (`arithmetic`) when it can read the operation and the operands, else by
    the reader; choose_by_reader: the reader scores the operation or a row as options
    where the rules leave them open; facts: a numeric question about the statements is
    computed from the statement facts first (`facts_route`). The paths are the levers the
    page-level benchmark adds (benchmarks/qa_retrieval.py, issue 28); BM25's k1, b and the
    weights stay at their usual values until its dev run chooses them
    (benchmarks/reports/qa.md)."""

    paths: tuple[str, ...] = ("sparse", "dense", "statement", "parts")
    weights: tuple[tuple[str, float], ...] = ()
    planned: bool = True
    k1: float = 1.5
    b: float = 0.75
    calculate: bool = True
    choose_by_reader: bool = True
    facts: bool = True
    depth: int = 100
    pool: int = 20
    top: int = 5
    bundle_k: int = 1
    bundle_tau: float = 0.75
    block_chars: int = 1800
    max_tokens: int = 700

    def __post_init__(self) -> None:
        if not self.paths or any(p not in PATHS for p in self.paths):
            raise InputError(
                f"paths are some of {', '.join(PATHS)}", field="paths", value=self.paths
            )
        for name in ("depth", "pool", "top", "block_chars", "max_tokens"):
            if getattr(self, name) < 1:
                raise InputError(f"{name} is 1 or more", field=name, value=getattr(self, name))
        if self.top > self.pool:
            raise InputError("top cannot exceed pool", field="top", value=self.top)
        if any(p in ("statement", "parts") for p in self.paths) and not self.planned:
            raise InputError(
                "the statement and parts paths read the query plan: set planned",
                field="paths",
                value=self.paths,
            )
        for name, weight in self.weights:
            if name not in PATHS or not weight >= 0:
                raise InputError(
                    "a weight is (a path name, a number >= 0)",
                    field="weights",
                    value=(name, weight),
                )

    def parameters(self) -> dict[str, object]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["weights"] = dict(self.weights)
        return out


@dataclass
class Part:
    """A sub-question and what answered it."""

    question: SubQuestion
    route: str
    blocks: list[Block] = field(default_factory=list)
    answer: str | None = None  # bank or tool answer
    hits: list[Hit] = field(default_factory=list)


@dataclass
class Asked:
    question: str
    as_of: dt.datetime
    parts: list[Part]
    blocks: list[Block]
    output: Answer | None
    read: ReadResult | None
    scores: dict[str, float]
    status: str
    seconds: dict[str, float]
    iri: NamedNode | None = None
    usage: Usage = field(default_factory=Usage)  # what its reads cost (`reader.usage`)
    calculation: Calculation | None = None  # finkg's arithmetic, when it answered
    facts: FactCalculation | None = None  # finkg's computation from statement facts
    note: str = ""  # what the facts route made of the question

    @property
    def summary(self) -> str:
        return self.output.summary if self.output is not None else ""


@dataclass
class Staged:
    """A question routed and retrieved, its answer not yet read (`QA.ask_many`)."""

    text: str
    as_of: dt.datetime
    parts: list[Part]
    blocks: list[Block]
    seconds: dict[str, float]
    started: dt.datetime
    usage: Usage  # what routing cost (tool choice, LLM reranking)
    facts: FactsOutcome | None = None  # the facts route's outcome
