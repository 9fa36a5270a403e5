"""`finkg train-reader --job movement`: a LoRA adapter for the movement job's reader, trained
on a training period's matured movements (paper 001's StockLLM, §3.2).

Items are the job's own questions: for a seeded sample of (stock, session) pairs with a
rise or fall, the query of the five closes before the session, the windows the chosen
retriever keeps for it (none by default: StockLLM without retrieval), and the prompt a
forecast shows the reader (`forecast.prepare`), its options `rise` and `fall` as the local
reader scores them, and the movement that happened. By stock, as paper 001 Table 2 splits
ACL18 (`train.split_stocks`, seeded): training questions come from the training stocks,
validation questions from the validation stocks, and the test stocks, where
`benchmarks/movement_decisions.py` reads, are never seen; each split's retriever searches
only its own stocks' windows. Early stopping is on the validation questions' MCC.

Strictly point-in-time: a session's movement matures at its close; a training item's
matured before the validation period starts, a validation item's before it ends (any other
is left out), and every retrieved window was available before the item's decision
(`WindowPool.eligible`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from finkg.config import Settings
from finkg.errors import InputError
from finkg.evaluation.stats import mcc
from finkg.kg.calendar import get_calendar
from finkg.kg.store import BaseStore
from finkg.reader.adapt.fit import Base, fit, period
from finkg.reader.adapt.manifest import AdapterManifest
from finkg.reader.adapt.train import LoraParams
from finkg.reader.llm import Message
from finkg.retrieval.sequence_retrievers import SequenceRetriever
from finkg.tasks.movement.forecast import LABELS, MovementConfig, prepare
from finkg.tasks.movement.questions import labelled_queries, split_stocks, store_tickers
from finkg.tasks.span import Span

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Example:
    """One query's question beside the movement that happened and when it matured."""

    query: str  # TICKER/SESSION
    decision: dt.datetime
    matured_at: dt.datetime
    messages: list[Message]
    label: str  # rise or fall

    @property
    def group(self) -> str:
        return self.query

    def digest_row(self) -> list[object]:
        return [self.query, self.label, self.messages]


def examples(
    store: BaseStore,
    tickers: Sequence[str],
    span: Span,
    *,
    before: dt.datetime,
    retriever: SequenceRetriever,
    config: MovementConfig,
    limit: int | None = None,
    seed: int = 0,
    salt: str = "",
    progress: Progress | None = None,
) -> list[Example]:
    """The questions of (a seeded sample of `limit`) rise-or-fall sessions of `tickers`
    decided in `span` whose movement matured strictly before `before`, the retriever
    searching only `tickers`' windows available before each decision."""
    if before.tzinfo is None:
        raise InputError("an instant needs a zone", field="before", value=before.isoformat())
    calendar = get_calendar()
    labelled = [
        (q, label)
        for q, label in labelled_queries(
            store,
            tickers,
            span.first_day,
            span.last_day,
            n=limit,
            seed=seed,
            salt=salt,
            progress=progress,
        )
        if span.start <= q.decision < span.end
    ]
    if not labelled:
        return []
    pool = config.pool(store, before=max(q.decision for q, _ in labelled), progress=progress)
    out: list[Example] = []
    for done, (q, label) in enumerate(labelled, start=1):
        matured = calendar.bar_available_at(q.day)
        if matured < before:
            _, messages = prepare(q, pool, retriever=retriever, config=config)
            out.append(Example(q.key, q.decision, matured, messages, label))
        if progress:
            progress(f"questions of {span.first_day} to {span.last_day}", done, len(labelled))
    return sorted(out, key=lambda e: (e.decision, e.query))


def _mcc(chosen: np.ndarray, actual: np.ndarray) -> float:
    return mcc(chosen, actual, positive=LABELS.index("rise"))


def train_movement_reader(
    store: BaseStore,
    settings: Settings,
    *,
    name: str,
    training: Span,
    validation: Span,
    retriever: SequenceRetriever,
    config: MovementConfig | None = None,
    params: LoraParams | None = None,
    queries_limit: int | None = None,
    validation_limit: int | None = None,
    progress: Progress | None = None,
) -> AdapterManifest:
    """Train, convert and describe an adapter for `settings.reader` (module docstring); the
    stocks are split with `params.seed`, as the benchmark splits them with its `--seed`."""
    config = config or MovementConfig()
    params = params or LoraParams()
    if config.universe is not None:
        raise InputError(
            "the stocks come from the split: a universe is not an option here",
            field="universe",
            value=list(config.universe),
        )
    base = Base.open(
        settings, name=name, training_end=training.end, validation_start=validation.start
    )
    split = split_stocks(store_tickers(store), seed=params.seed)

    def questions(part: str, span: Span, before: dt.datetime, limit: int | None) -> list[Example]:
        own = MovementConfig(
            k=config.k, sample=config.sample, since=config.since, universe=tuple(split[part])
        )
        return examples(
            store, split[part], span, before=before, retriever=retriever, config=own,
            limit=limit, seed=params.seed, salt=f"adapt-{part}", progress=progress,
        )  # fmt: skip

    fitting = questions("train", training, validation.start, queries_limit)
    checking = questions("valid", validation, validation.end, validation_limit)
    return fit(
        base, settings, name=name, job="movement", options=LABELS, fitting=fitting,
        checking=checking, training=period(training.start, training.end, validation.start, fitting),
        validation=period(validation.start, validation.end, validation.end, checking),
        metric=_mcc, metric_name="MCC", params=params,
        job_parameters={
            "retriever": retriever.name, "retriever_model": retriever.model_id,
            "k": 0 if retriever.name == "none" else config.k, "sample": config.sample,
            "since": config.since.isoformat(), "stocks": split,
        },
        progress=progress,
    )  # fmt: skip
