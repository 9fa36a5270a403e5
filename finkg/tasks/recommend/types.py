"""What the stages of a recommendation share (paper 004): its configuration, the reader
that records every prompt, each retrieval stage and the result. `pipeline` builds them;
`stages`, `window` and `output` read them; all import them from here."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pyoxigraph import NamedNode, Triple

from finkg.errors import InputError
from finkg.reader.budget import context_window, count_tokens
from finkg.reader.llm import LLM, Message
from finkg.reader.read import ReadResult
from finkg.reader.schemas import Recommendation
from finkg.reader.transport.usage import Usage
from finkg.retrieval import subgraph as sg

VARIANTS = ("multi", "parallel", "full")
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
    n_ctx: int = 8192  # the window the reader is opened with (capped at what it was trained
    # for), and assumed for one that does not say; 4,096 cut the final prompt to 3 of 23 nodes
    max_tokens: int = 640  # for the recommendation reply (three bounded picks fit)
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
    started: dt.datetime | None = None  # when it was asked for (its run's start)
    usage: Usage = field(default_factory=Usage)  # what its reads cost (`reader.usage`)

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


class Recording:
    """The reader behind a recorder: every prompt it is sent is kept, in order."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm
        self.model_id = llm.model_id
        self.prompts: list[list[Message]] = []
        self.n_ctx = context_window(llm)  # None when the reader does not say

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return count_tokens(self.llm, messages)

    def generate(self, messages: Sequence[Message], schema: Any = None, **kw: Any) -> Any:
        self.prompts.append(list(messages))
        return self.llm.generate(messages, schema, **kw)

    def score(self, messages: Sequence[Message], options: Sequence[str]) -> dict[str, float]:
        self.prompts.append(list(messages))
        return self.llm.score(messages, options)


@dataclass
class Stage:
    """One retrieval stage: what was listed, what the reader picked, the subgraph."""

    name: str  # "personal" or "market" ("full": the injected graph, no reader)
    selection: sg.Selection | None
    triples: list[Triple]
    nodes: list[dict[str, Any]]  # the JSON-LD nodes given to later prompts

    def text(self) -> str:
        return node_text(self.nodes)

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


def node_text(nodes: list[dict[str, Any]]) -> str:
    """Nodes as a prompt shows them: one line of compact JSON, keys sorted."""
    if not nodes:
        return "(none)"
    return json.dumps(nodes, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
