"""Next-session movement forecasts (paper 001): one query in, one checked prediction out.

For a ticker and a session D: the query is the five adjusted closes before D (§3.2, built
from the store's bars), its decision instant the open of D. The candidates are the
indicator windows of every stock in the universe available strictly before that instant
(freeze windows included; `retrieval.sequences.WindowPool`); a retriever keeps the top k
(`retrieval.sequence_retrievers`); the reader sees the query and those windows (prompt
`movement`) and the forecast is whichever of "rise" and "fall" has the higher
log-probability as the reply (no free generation). The prediction, with its rise
probability, decision instant and run (reader, prompt hash, retriever, parameters, every
retrieved window with rank and score, the query's bars), is checked against the output
shapes and written in one commit.

Predictions are keyed by (retriever, ticker, D, reader, parameters), so retrievers and
readers live side by side and a rerun adds nothing.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode, Quad

from finkg.errors import InputError
from finkg.kg.ingest import common
from finkg.kg.iri import mint
from finkg.kg.outputs import RunRecord, Used, run_iri, write_output
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG, PROV, RDF
from finkg.reader.llm import LLM, Message, messages_hash
from finkg.reader.read import prompt
from finkg.retrieval.sequence_retrievers import RETRIEVERS, Hit, SequenceRetriever, top_k
from finkg.retrieval.sequences import Progress, Query, WindowPool, build_query
from finkg.tasks.head_records import Head, head_as_of
from finkg.tasks.heads import KINDS

LABELS = ("rise", "fall")
EARLIEST = dt.date(1900, 1, 1)


@dataclass(frozen=True, kw_only=True)
class MovementConfig:
    """k: windows shown to the reader (paper 001: 5); sample: the fraction of windows kept
    as candidates (deterministic by IRI; 1.0 keeps all); since: the first candidate session;
    universe: the tickers whose windows are candidates (None: every stock)."""

    k: int = 5
    sample: float = 0.02
    since: dt.date = EARLIEST
    universe: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.k <= 20:
            raise InputError("k is 1 to 20 windows", field="k", value=self.k)
        if not 0 < self.sample <= 1:
            raise InputError(
                "a sample is a fraction in (0, 1]", field="--sample", value=self.sample
            )

    def parameters(self, retriever: SequenceRetriever) -> dict[str, object]:
        return {
            "retriever": retriever.name,
            "retriever_model": retriever.model_id,
            "k": 0 if retriever.name == "none" else self.k,
            "sample": self.sample,
            "since": self.since.isoformat(),
            "universe": list(self.universe) if self.universe is not None else None,
        }

    def pool(
        self, store: BaseStore, before: dt.datetime, progress: Progress | None = None
    ) -> WindowPool:
        return WindowPool.load(
            store,
            before=before,
            since=self.since,
            sample=self.sample,
            universe=self.universe,
            progress=progress,
        )


def query_features(q: Query) -> tuple[float, float]:
    """The query's own 1-day and 4-day returns from its five closes (no later bar): what a
    decision head may weigh beside the reader's scores."""
    c = q.closes
    return c[-1] / c[-2] - 1, c[-1] / c[0] - 1


@dataclass(frozen=True)
class Forecast:
    query: Query
    retriever: str
    hits: tuple[Hit, ...]
    logprobs: dict[str, float]
    messages: tuple[Message, ...]
    prediction: NamedNode | None  # None when not written
    head: Head | None = None  # None: the raw argmax of the scores

    @property
    def label(self) -> str:
        if self.head is not None:
            return self.head.state.decide(self.logprobs, query_features(self.query))
        return "rise" if self.logprobs["rise"] >= self.logprobs["fall"] else "fall"

    @property
    def rise_probability(self) -> float:
        return label_probabilities(self.logprobs)["rise"]


def label_probabilities(logprobs: dict[str, float]) -> dict[str, float]:
    """Softmax over the labels' log-probabilities (paper 001 eq. 4).

    >>> label_probabilities({"rise": math.log(0.3), "fall": math.log(0.1)})["rise"]
    0.75
    """
    top = max(logprobs.values())
    weights = {k: math.exp(v - top) for k, v in logprobs.items()}
    total = sum(weights.values())
    return {k: round(w / total, 12) for k, w in weights.items()}


def candidate_block(pool: WindowPool, rows: Sequence[int]) -> str:
    """The retrieved windows as the reader sees them, one line each (`WindowPool.brief`)."""
    return "\n".join(pool.brief(r) for r in rows) or "(none)"


def movement_messages(query: Query, candidates: str) -> list[Message]:
    """The reader's prompt: the query's line (`Query.brief`) and the candidates' lines."""
    return prompt("movement").render(
        {
            "query": query.brief,
            "candidates": candidates,
            "ticker": query.ticker,
            "date": query.day.isoformat(),
        }
    )


def prepare(
    query: Query, pool: WindowPool, *, retriever: SequenceRetriever, config: MovementConfig
) -> tuple[tuple[Hit, ...], list[Message]]:
    """The windows `retriever` keeps for `query` and the prompt that shows them (no read)."""
    hits = tuple(top_k(retriever, query, pool, pool.eligible(query.decision), config.k))
    return hits, movement_messages(query, candidate_block(pool, [h.row for h in hits]))


def predict(
    store: BaseStore,
    query: Query,
    pool: WindowPool,
    *,
    llm: LLM,
    retriever: SequenceRetriever,
    config: MovementConfig,
    write: bool = True,
    head: Head | None = None,
) -> Forecast:
    """Retrieve, read and (when `write`) record one query's forecast (module docstring),
    decided by `head` when given (it must have been fitted as of the decision or before)."""
    if head is not None and head.state.as_of > query.decision:
        raise InputError(
            "a decision head fitted after the decision would see its future",
            field="head",
            value=head.state.as_of.isoformat(),
        )
    started = dt.datetime.now(dt.UTC)
    hits, messages = prepare(query, pool, retriever=retriever, config=config)
    logprobs = llm.score(messages, list(LABELS))
    forecast = Forecast(query, retriever.name, hits, logprobs, tuple(messages), None, head)
    if not write:
        return forecast
    output = _write(store, forecast, llm=llm, retriever=retriever, config=config, started=started)
    return dataclasses.replace(forecast, prediction=output)


def _write(
    store: BaseStore,
    f: Forecast,
    *,
    llm: LLM,
    retriever: SequenceRetriever,
    config: MovementConfig,
    started: dt.datetime,
) -> NamedNode:
    parameters = config.parameters(retriever) | {
        "head": f.head.state.kind if f.head else "none",
        "head_sha256": f.head.state.sha256 if f.head else None,
    }
    digest = messages_hash(list(f.messages))
    key = json.dumps(parameters, sort_keys=True)
    base = store.graphs.base
    output = mint(
        "movement", retriever.name, f.query.ticker, f.query.day, llm.model_id, key, base=base
    )
    run = run_iri(store, "movement", output.value, digest)
    record = RunRecord(
        task="movement",
        model_id=llm.model_id,
        started=started,
        ended=dt.datetime.now(dt.UTC),
        prompt_hash=digest,
        template_hash=prompt("movement").sha256,
        parameters={**parameters, "logprobs": f.logprobs},
        used=[Used(NamedNode(h.iri), rank, h.score) for rank, h in enumerate(f.hits, start=1)],
    )
    g = store.graphs.outputs
    q = common.Quads(g)
    q.node(
        output,
        (RDF.type, FKG.MovementPrediction),
        (FKG.about, f.query.company),
        (FKG.targetDate, common.date(f.query.day)),
        (FKG.predictedLabel, common.string(f.label)),
        (FKG.riseProbability, common.double(f.rise_probability)),
        (FKG.asOf, common.datetime(f.query.decision)),
        (PROV.wasGeneratedBy, run),
        (
            FKG.reason,
            Literal(
                f"log P(rise) = {f.logprobs['rise']:.4f}, log P(fall) = {f.logprobs['fall']:.4f}"
                + (
                    f"; decided by the {f.head.state.kind} head fitted on {f.head.state.n} "
                    f"matured forecasts as of {f.head.state.as_of.isoformat()}"
                    if f.head
                    else "; the higher score decides (no decision head)"
                )
            ),
        ),
    )
    quads: list[Quad] = [*q.items, *(Quad(run, PROV.used, bar, g) for bar in f.query.bars)]
    if f.head is not None:
        quads += [Quad(output, FKG.decidedBy, f.head.iri, g), Quad(run, PROV.used, f.head.iri, g)]
    write_output(store, record, quads, output=output, run=run, note=f"movement {retriever.name}")
    return output


def forecast(
    store: BaseStore,
    *,
    ticker: str,
    day: dt.date,
    llm: LLM | Callable[[], LLM],
    retriever: SequenceRetriever | Callable[[], SequenceRetriever],
    config: MovementConfig | None = None,
    progress: Progress | None = None,
    head: str = "prior",
) -> Forecast:
    """`finkg forecast`: build the query, load its pool, predict and write (docstring),
    deciding with the latest stored `head` of the movement job fitted as of the decision
    or before (`benchmarks/movement_decisions.py` writes them); with none stored, or
    `head="none"`, the raw argmax of the scores decides.

    `llm` and `retriever` may be given as functions that open them: they are called only
    once the ticker and the date have been checked (loading a model takes tens of seconds,
    and an unknown ticker should not wait for it)."""
    config = config or MovementConfig()
    if head not in KINDS:
        raise InputError("unknown decision head", field="--head", value=head, hint=f"use {KINDS}")
    query = build_query(store, ticker, day)
    if callable(retriever):
        retriever = retriever()
    if retriever.name not in RETRIEVERS:
        raise InputError("unknown retriever", field="--retriever", value=retriever.name)
    stored = head_as_of(store, "movement", head, query.decision) if head != "none" else None
    chosen = Head(stored["head"], stored["head_state"]) if stored else None
    pool = config.pool(store, query.decision, progress)
    llm = llm() if callable(llm) else llm
    return predict(store, query, pool, llm=llm, retriever=retriever, config=config, head=chosen)
