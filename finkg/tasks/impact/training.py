"""`finkg train-reader --job impact`: a LoRA adapter for the impact job's reader, trained on
a training period's matured labels (paper 000 §4.2's supervised LoRA reader).

Items are the job's own scored questions: for each anchor of the period, the direction
question at each horizon exactly as the job asks it without memory (`steps.prepare`,
`scoring.questions`: the same retrieval, evidence, card and template), its options `up`,
`neutral`, `down` tokenized as the local reader scores them, and the residual label
(`head_feed.LabelBook`). Strictly point-in-time: a training item's label matured before the
validation period starts, a validation item's before the validation period ends; an
anchor whose label matured later is left out (`examples`), so an adapter meant for
decisions from `validation.end` on never saw a label matured at or after that instant.

The adapter is kept under the cache (`adapters/NAME/`: `adapter.gguf`, the PEFT folder,
`manifest.json`), where `FINKG_ADAPTER=NAME` finds it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from finkg.config import Settings
from finkg.errors import InputError
from finkg.evaluation.stats import macro_f1
from finkg.kg.calendar import get_calendar
from finkg.kg.store import BaseStore
from finkg.reader.adapt.fit import Base, fit, period
from finkg.reader.adapt.manifest import AdapterManifest
from finkg.reader.adapt.train import LoraParams
from finkg.reader.llm import Message
from finkg.retrieval.pools import TextSource, VectorSource
from finkg.tasks.impact.anchors import Anchor, anchors
from finkg.tasks.impact.head_feed import LABEL_OPTION, LabelBook
from finkg.tasks.impact.labels import load_prices
from finkg.tasks.impact.predict import ImpactConfig
from finkg.tasks.impact.scoring import CLASSES, questions
from finkg.tasks.impact.steps import prepare
from finkg.tasks.span import Span

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Example:
    """One direction question of one anchor, beside its label and when it matured."""

    anchor: str
    horizon: int
    decision: dt.datetime
    matured_at: dt.datetime
    messages: list[Message]
    label: str  # up, neutral or down

    @property
    def group(self) -> str:
        return self.anchor

    def digest_row(self) -> list[object]:
        return [self.anchor, self.horizon, self.label, self.messages]


def sample(found: Sequence[Anchor], n: int | None) -> list[Anchor]:
    """`n` anchors in a fixed order (SHA-256 of their IRIs: any prefix is a sample of the
    period), back in time order; all of them without `n`."""
    if n is None or n >= len(found):
        return list(found)
    ranked = sorted(found, key=lambda a: hashlib.sha256(a.iri.value.encode()).hexdigest())
    return sorted(ranked[:n], key=lambda a: (a.decision_time, a.news.value))


def examples(
    store: BaseStore,
    span: Span,
    *,
    before: dt.datetime,
    texts: TextSource,
    vectors: VectorSource,
    config: ImpactConfig,
    limit: int | None = None,
    progress: Progress | None = None,
) -> list[Example]:
    """The questions of (a sample of `limit`) anchors decided in `span` whose label at a
    horizon matured strictly before `before` (the others are left out)."""
    if before.tzinfo is None:
        raise InputError("an instant needs a zone", field="before", value=before.isoformat())
    calendar = get_calendar()
    found = sample(anchors(store, start=span.start, end=span.end, calendar=calendar), limit)
    if not found:
        return []
    book = LabelBook(
        load_prices(store, found, proxy=config.proxy, calendar=calendar),
        proxy=config.proxy,
        calendar=calendar,
    )
    out: list[Example] = []
    for done, anchor in enumerate(found, start=1):
        labels = {
            h: book.label(anchor.ticker, anchor.prediction_day, h) for h in config.memory.horizons
        }
        known = {h: x for h, x in labels.items() if x is not None and x.matured_at < before}
        if known:
            p = prepare(store, anchor, texts=texts, vectors=vectors, memory=None, config=config)
            asked = questions(p.values, ids=[], horizons=list(known))
            for (h, label), (messages, _) in zip(known.items(), asked, strict=True):
                out.append(
                    Example(
                        anchor.iri.value,
                        h,
                        anchor.decision_time,
                        label.matured_at,
                        messages,
                        LABEL_OPTION[label.label],
                    )
                )
        if progress:
            progress(f"questions of {span.first_day} to {span.last_day}", done, len(found))
    return out


def _macro_f1(chosen: np.ndarray, actual: np.ndarray) -> float:
    return macro_f1(chosen, actual, classes=range(len(CLASSES)))


def train_impact_reader(
    store: BaseStore,
    settings: Settings,
    *,
    name: str,
    training: Span,
    validation: Span,
    texts: TextSource,
    vectors: VectorSource,
    config: ImpactConfig | None = None,
    params: LoraParams | None = None,
    anchors_limit: int | None = None,
    validation_limit: int | None = None,
    progress: Progress | None = None,
) -> AdapterManifest:
    """Train, convert and describe an adapter for `settings.reader` (module docstring)."""
    config = config or ImpactConfig()
    params = params or LoraParams()
    base = Base.open(
        settings, name=name, training_end=training.end, validation_start=validation.start
    )
    fitting = examples(
        store, training, before=validation.start, texts=texts, vectors=vectors,
        config=config, limit=anchors_limit, progress=progress,
    )  # fmt: skip
    checking = examples(
        store, validation, before=validation.end, texts=texts, vectors=vectors,
        config=config, limit=validation_limit, progress=progress,
    )  # fmt: skip
    return fit(
        base, settings, name=name, job="impact", options=CLASSES, fitting=fitting,
        checking=checking, training=period(training.start, training.end, validation.start, fitting),
        validation=period(validation.start, validation.end, validation.end, checking),
        metric=_macro_f1, metric_name="macro-F1", params=params,
        job_parameters={"proxy": config.proxy, "snippet_chars": config.snippet_chars},
        progress=progress,
    )  # fmt: skip
