"""The prequential runner (paper 000 §4.1): predictions and feedback interleaved in time order.

Anchors are taken in decision-time order. Before each decision, every signal whose label
matured since the last feedback (a session close has passed) is fed back, so the memory a
decision reads holds exactly the matured feedback of earlier predictions, as it would have
live. The memory query itself also keeps only updates matured strictly before the decision,
so the order of writes can never leak a label; the runner just makes the feedback exist in
time. Class weights and the shuffled-label mix come from a validation period, fixed before
the run.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

from pyoxigraph import NamedNode

from finkg.errors import InputError
from finkg.evaluation.labels import PriceTable
from finkg.kg.calendar import MarketCalendar
from finkg.kg.store import BaseStore
from finkg.reader.llm import LLM
from finkg.reader.read import OutputCache
from finkg.reader.transport.concurrent import Outcome, concurrency_of, run_all
from finkg.reader.transport.endpoint import RequestFailed
from finkg.reader.transport.usage import Usage
from finkg.retrieval.memory.source import MemoryTimeline, SourceMemory
from finkg.retrieval.pools import TextSource, VectorSource
from finkg.tasks.head_choice import AUTO, HeadChoice
from finkg.tasks.head_records import Head, write_head
from finkg.tasks.heads import Matured
from finkg.tasks.impact.anchors import Anchor
from finkg.tasks.impact.feedback import FeedbackReport, feedback, signals
from finkg.tasks.impact.head_feed import HeadFeed, LabelBook, choose, cite_task
from finkg.tasks.impact.history import scored_items
from finkg.tasks.impact.labels import load_prices
from finkg.tasks.impact.predict import SCORED, ImpactConfig, ImpactResult, anchor_inputs
from finkg.tasks.impact.scoring import fit_citation
from finkg.tasks.impact.steps import Prepared, Read, finish, prepare, read_prepared, record_failure

FEEDBACK_LOOKBACK_SESSIONS = 10  # signals older than this have all matured and been fed back


@dataclass
class RunSummary:
    predictions: int = 0
    json_invalid: int = 0
    cached: int = 0  # anchors whose every read was answered by the exact output cache
    reads: int = 0  # reads really made (a scored anchor makes one per horizon and a citation)
    reader_seconds: float = 0.0  # the reader's time on the reads it did
    head_items: int = 0  # test decisions whose matured labels reached the decision heads
    head_choice: HeadChoice | None = None  # `--head auto`: what was chosen, and why
    results: list[ImpactResult] = field(default_factory=list)
    feedback: FeedbackReport = field(default_factory=FeedbackReport)


@dataclass
class _Variant:
    memory: SourceMemory | None
    timeline: MemoryTimeline | None
    summary: RunSummary
    done: set[tuple[NamedNode, int]] = field(default_factory=set)
    made: dict[NamedNode, dt.date] = field(default_factory=dict)  # prediction -> its P

    def pending(self, first_day: dt.date) -> list[NamedNode]:
        """The predictions with P on or after `first_day`: the only ones that can still
        need feedback (older ones are forgotten here)."""
        self.made = {p: day for p, day in self.made.items() if day >= first_day}
        return list(self.made)


@dataclass(frozen=True)
class Prequential:
    """The impact job's run, built once from what it reads with and how it decides (checked
    when built); `run` takes only what differs per call, the anchors and the memory
    variants, and `run_one` one variant.

    `weights` and `mix` are the validation period's class weights and shuffled-label mix
    (`job.validation`); `prices` the closes the labels need (loaded when None and needed);
    `history`, `since` and `citations` what the decision heads and the citation head start
    from (see `run`)."""

    store: BaseStore
    llm: LLM
    texts: TextSource
    vectors: VectorSource
    calendar: MarketCalendar
    weights: Mapping[int, Mapping[int, float]]
    mix: Mapping[int, Mapping[int, float]] | None = None
    config: ImpactConfig = field(default_factory=ImpactConfig)
    cache: OutputCache | None = None
    prices: PriceTable | None = None
    history: Mapping[int, Sequence[Matured]] | None = None
    since: dt.date | None = None
    citations: Sequence[tuple[dt.datetime, Mapping[str, float]]] = ()

    def __post_init__(self) -> None:
        for name, table in (("weights", self.weights), ("mix", self.mix or {})):
            for horizon, by_class in table.items():
                for cls, w in by_class.items():
                    if not (isinstance(w, int | float) and math.isfinite(w) and w >= 0):
                        raise InputError(
                            f"a {name} entry must be a finite number of at least 0",
                            field=f"{name}[{horizon}][{cls}]",
                            value=w,
                        )
        if isinstance(self.since, dt.datetime):
            raise InputError(
                "since is a prediction day (a date), not an instant",
                field="since",
                value=self.since.isoformat(),
                hint="pass since.date()",
            )
        for at, _ in self.citations:
            if at.tzinfo is None:
                raise InputError(
                    "a citation read's time needs a zone", field="citations", value=at.isoformat()
                )

    def run_one(
        self,
        anchors: Sequence[Anchor],
        memory: SourceMemory | None,
        *,
        progress: Callable[[int, int], None] | None = None,
        keep_results: bool = True,
    ) -> RunSummary:
        """Predict every anchor in decision-time order with one memory (None: static),
        feeding back matured labels as time passes."""
        name = memory.name if memory is not None else "static"
        return self.run(anchors, {name: memory}, progress=progress, keep_results=keep_results)[name]

    def run(
        self,
        anchors: Sequence[Anchor],
        variants: Mapping[str, SourceMemory | None],
        *,
        progress: Callable[[int, int], None] | None = None,
        keep_results: bool = True,
    ) -> dict[str, RunSummary]:
        """Several variants over the same anchors, in one pass: anchor by anchor, each variant
        fed back and then asked in turn. Each keeps its own memory, so each sees only its own
        matured feedback, exactly as if run alone; together, the anchor's pool and card are built
        once, the reads of one anchor follow each other, and a reader that keeps a shared prompt
        opening (the anchor, its card) or an exact reply cache gets them cheaper.

        A scored reply (`config.reply`) is decided per horizon by each variant's own decision
        head (`config.head`), started from `history` (the validation period's matured items,
        `history.validation_history`) and fed the variant's decisions as their labels mature
        (`head_feed`). With `since`, each variant's heads also learn from its own scored
        decisions an earlier run stored with prediction days from `since` up to this run's first
        (a run resumed in parts decides as one run would). The evidence a scored decision cites
        is chosen through a citation head fitted on `citations` (earlier reads' citation scores,
        `history.citation_reads`) made before the run's first decision, kept for the whole run
        (`scoring.fit_citation`; none given: the raw argmax).

        The anchors of one decision session (`decision_sessions`: no close between them, so no
        feedback can separate them) are prepared in time order, read together on the reader's
        concurrency (`reader.concurrent`; one at a time on a local reader) and written in time
        order, so a concurrent run writes what a sequential one does. A read whose request fails
        for good stops the run there: the predictions before it are written, its run names the
        request (`steps.record_failure`), nothing after it is written."""
        store, llm, texts, vectors = self.store, self.llm, self.texts, self.vectors
        calendar, config, cache = self.calendar, self.config, self.cache
        weights, mix, history = self.weights, self.mix, self.history
        prices, since, citations = self.prices, self.since, self.citations
        ordered = sorted(anchors, key=lambda a: (a.decision_time, a.news.value))
        states = {
            name: _Variant(memory, MemoryTimeline(store, memory) if memory else None, RunSummary())
            for name, memory in variants.items()
        }
        learning = [v for v in states.values() if v.memory is not None]
        scored = config.reply == SCORED
        if (learning or scored) and prices is None:
            prices = load_prices(store, ordered, proxy=config.proxy, calendar=calendar)
        feeds: dict[str, HeadFeed] = {}
        if scored and config.head == AUTO:
            first = ordered[0].decision_time if ordered else dt.datetime.now(dt.UTC)
            choice = choose(history or {}, before=first)
            config = dataclasses.replace(config, head=choice.chosen, head_choice=choice)
            for state in states.values():
                state.summary.head_choice = choice
        if scored:
            assert prices is not None  # loaded above when scoring
            book = LabelBook(prices, proxy=config.proxy, calendar=calendar)
            feeds = {
                name: HeadFeed(
                    store,
                    name,
                    kind=config.head,
                    horizons=config.memory.horizons,
                    labels=book,
                    history=history,
                )
                for name in variants
            }
            if since is not None and ordered:
                before = ordered[0].prediction_day - dt.timedelta(days=1)
                for name, memory in variants.items():
                    for item in scored_items(
                        store,
                        memory,
                        first_day=since,
                        last_day=before,
                        proxy=config.proxy,
                        calendar=calendar,
                    ):
                        feeds[name].remember(
                            ticker=item.ticker,
                            day=item.prediction_day,
                            horizon=item.horizon,
                            logprobs=item.logprobs,
                            features=item.features,
                            label=item.label,
                        )
        if learning and ordered:
            # predictions an earlier run left that can still mature during this one: from here
            # on the runner names the predictions to feed back instead of searching the store
            since = calendar.session_offset(ordered[0].prediction_day, -FEEDBACK_LOOKBACK_SESSIONS)
            for state in learning:
                assert state.memory is not None  # learning: the variants with a memory
                for s in signals(
                    store,
                    state.memory,
                    first_day=since,
                    last_day=ordered[-1].prediction_day,
                ):
                    state.made[s.prediction] = s.prediction_day
        cites: dict[str, Head] = {}
        if scored and citations and ordered:
            cite_state = fit_citation(citations, as_of=ordered[0].decision_time)
            if cite_state.n:
                cites = {
                    name: Head(write_head(store, cite_task(name), cite_state), cite_state)
                    for name in variants
                }
        last_feedback: dt.datetime | None = None
        finished = 0
        for session in decision_sessions(ordered, calendar):
            anchor = session[0]
            if learning and _a_close_passed(calendar, last_feedback, anchor.decision_time):
                first_day = calendar.session_offset(
                    anchor.prediction_day
                    if last_feedback is not None
                    else ordered[0].prediction_day,
                    -FEEDBACK_LOOKBACK_SESSIONS,
                )
                assert prices is not None  # loaded above when learning
                for state in learning:
                    assert state.memory is not None  # learning: the variants with a memory
                    report = feedback(
                        store,
                        state.memory,
                        as_of=anchor.decision_time,
                        first_day=first_day,
                        prices=prices,
                        calendar=calendar,
                        proxy=config.proxy,
                        weights=weights,
                        mix=mix,
                        skip=state.done,
                        predictions=state.pending(first_day),
                    )
                    _merge(state.summary.feedback, report)
                    if report.outcomes:
                        assert state.timeline is not None  # made for every variant with a memory
                        state.timeline.refresh()
                last_feedback = anchor.decision_time
            # nothing matures inside a session: every anchor of it is prepared on the same
            # memory and heads, read together, and written in time order
            prepared: list[tuple[str, Prepared]] = []
            for anchor in session:
                inputs = anchor_inputs(
                    store,
                    anchor,
                    texts=texts,
                    vectors=vectors,
                    config=config,
                    prices=prices if scored else None,
                    calendar=calendar,
                )
                for name, state in states.items():
                    feed = feeds.get(name)
                    if feed is not None:
                        state.summary.head_items += feed.mature(anchor.decision_time)
                    p = prepare(
                        store,
                        anchor,
                        texts=texts,
                        vectors=vectors,
                        memory=state.memory,
                        config=config,
                        timeline=state.timeline,
                        inputs=inputs,
                        heads=feed.at(anchor.decision_time) if feed is not None else None,
                        cite=cites.get(name),
                    )
                    prepared.append((name, p))
            answers = _read_session(llm, [p for _, p in prepared], cache=cache)
            for k, ((name, p), outcome) in enumerate(zip(prepared, answers, strict=True)):
                try:
                    answered = outcome.get() if outcome else read_prepared(llm, p, cache=cache)
                except RequestFailed as e:
                    record_failure(store, llm, p, e, e.usage or Usage())
                    raise
                result = finish(store, llm, p, answered)
                state = states[name]
                feed = feeds.get(name)
                if result.prediction is not None:
                    state.made[result.prediction] = p.anchor.prediction_day
                if feed is not None and result.scored is not None:
                    feed.record(p.anchor, result.scored)
                summary = state.summary
                summary.predictions += result.prediction is not None
                summary.json_invalid += result.prediction is None
                summary.cached += result.cached
                summary.reads += result.reads
                summary.reader_seconds += result.seconds
                if keep_results:
                    summary.results.append(result)
                last_of_anchor = k + 1 == len(prepared) or prepared[k + 1][1].anchor is not p.anchor
                if last_of_anchor:
                    finished += 1
                    if progress is not None:
                        progress(finished, len(ordered))
        return {name: state.summary for name, state in states.items()}


def decision_sessions(ordered: Sequence[Anchor], calendar: MarketCalendar) -> list[list[Anchor]]:
    """`ordered` (in decision-time order) cut where a session close passes between the
    first anchor of a part and the next: inside a part no label can mature (labels mature at
    closes), so no feedback can separate its decisions, and they may be read together."""
    parts: list[list[Anchor]] = []
    for anchor in ordered:
        if parts and not _a_close_passed(
            calendar, parts[-1][0].decision_time, anchor.decision_time
        ):
            parts[-1].append(anchor)
        else:
            parts.append([anchor])
    return parts


def _read_session(
    llm: LLM, prepared: Sequence[Prepared], *, cache: OutputCache | None
) -> list[Outcome[Read] | None]:
    """The reads of one decision session, together on the reader's concurrency, in order.
    With a reply cache, a read asked twice (two variants seeing the same context) is made
    once; its repeats are None, to be read from the cache when their turn comes, as a run
    reading one at a time would (a hit, not a second read)."""
    first: set[str] = set()
    tasks: list[Callable[[], Read]] = []
    slots: list[int | None] = []
    for p in prepared:
        key = p.cache_key() if cache is not None else None
        if key is not None and key in first:
            slots.append(None)
            continue
        if key is not None:
            first.add(key)
        slots.append(len(tasks))
        tasks.append(partial(read_prepared, llm, p, cache=cache))
    outcomes = run_all(tasks, concurrency=concurrency_of(llm))
    return [None if s is None else outcomes[s] for s in slots]


def _a_close_passed(calendar: MarketCalendar, last: dt.datetime | None, now: dt.datetime) -> bool:
    """Whether a session closed in (last, now]: only then can a new label have matured."""
    if last is None:
        return True
    day = last.date()
    if calendar.is_session(day) and last < calendar.session_close(day) <= now:
        return True
    nxt = calendar.next_session(day)
    return calendar.session_close(nxt) <= now


def _merge(total: FeedbackReport, part: FeedbackReport) -> None:
    total.signals += part.signals
    total.outcomes += part.outcomes
    total.updates += part.updates
    total.uncited += part.uncited
    for reason, n in part.no_label.items():
        total.no_label[reason] = total.no_label.get(reason, 0) + n
