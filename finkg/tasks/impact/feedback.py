"""Market feedback (paper 000 §3.4-3.5): outcomes of matured predictions, and the memory
updates they make.

`feedback(store, memory, as_of=T)` takes every horizon signal of the predictions made with
`memory` whose horizon has matured by T (the close of session P+h-1 is at or before T),
computes its residual-return label (`evaluation.labels`), writes the `fkg:Outcome` (once
per anchor and horizon, shared by every variant) and the memory's updates for it, stamped
with the instant the label matured. Everything is keyed by stable IRIs, so feeding back the
same span twice adds nothing. Signals whose label cannot be computed (too little price
history, a missing bar) are skipped and counted, as the paper excludes them.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from pyoxigraph import NamedNode, Quad

from finkg import queries
from finkg.errors import FinkgError
from finkg.evaluation.labels import NoLabel, PriceTable, ResidualLabel, residual_label
from finkg.kg.calendar import MarketCalendar
from finkg.kg.ingest import common
from finkg.kg.iri import mint, readable_keys
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG, RDF
from finkg.retrieval.memory.source import Feedback, SourceMemory, update_quads, updates_for
from finkg.shapes.validate import validate_quads


@dataclass(frozen=True)
class Signal:
    """One matured-or-not horizon signal of a prediction, with what it rests on."""

    prediction: NamedNode
    anchor: NamedNode
    ticker: str
    prediction_day: dt.date
    event_type: NamedNode
    horizon: int
    value: int
    cited_families: tuple[NamedNode, ...]
    context_families: tuple[NamedNode, ...]


@dataclass
class FeedbackReport:
    signals: int = 0  # matured signals looked at
    outcomes: int = 0  # labels computed
    updates: int = 0  # memory updates made
    uncited: int = 0  # signals that cited nothing (no update, as in the paper)
    no_label: dict[str, int] = field(default_factory=dict)  # reason -> count


def signals(
    store: BaseStore,
    memory: SourceMemory,
    *,
    first_day: dt.date,
    last_day: dt.date,
    predictions: Collection[NamedNode] | None = None,
) -> list[Signal]:
    """The horizon signals of `memory`'s predictions with P in [first_day, last_day], of
    `predictions` only when given."""
    if predictions is not None and not predictions:
        return []
    values: dict[str, object] = {"memory": memory.iri, "firstDay": first_day, "lastDay": last_day}
    if predictions is not None:
        values["prediction"] = sorted(predictions, key=lambda n: n.value)
    rows = queries.select(store, "feedback_signals", values)
    grouped = {(r.iri("prediction"), r.integer("horizon")): r for r in rows}
    cited: dict[NamedNode, list[NamedNode]] = defaultdict(list)
    if grouped:
        signal_nodes = sorted({r.iri("signal") for r in grouped.values()}, key=lambda n: n.value)
        for r in queries.select(store, "signal_citations", {"signal": signal_nodes}):
            cited[r.iri("signal")].append(r.iri("family"))
    runs = sorted({r.iri("run") for r in grouped.values()}, key=lambda n: n.value)
    context: dict[NamedNode, set[NamedNode]] = defaultdict(set)
    if runs:
        for r in queries.select(store, "context_families", {"run": runs}):
            context[r.iri("run")].add(r.iri("family"))
    out = []
    for key, r in grouped.items():
        keys = readable_keys("company", r.iri("company"), base=store.graphs.base)
        if keys is None:
            continue
        out.append(
            Signal(
                prediction=key[0],
                anchor=r.iri("anchor"),
                ticker=keys[0],
                prediction_day=r.date("day"),
                event_type=r.iri("eventType"),
                horizon=key[1],
                value=r.integer("value"),
                cited_families=tuple(sorted(cited[r.iri("signal")], key=lambda n: n.value)),
                context_families=tuple(sorted(context[r.iri("run")], key=lambda n: n.value)),
            )
        )
    return sorted(out, key=lambda s: (s.prediction_day, s.prediction.value, s.horizon))


def outcome_iri(store: BaseStore, anchor: NamedNode, horizon: int) -> NamedNode:
    return mint("outcome", anchor.value, horizon, base=store.graphs.base)


def outcome_quads(
    node: NamedNode, anchor: NamedNode, label: ResidualLabel, graph: NamedNode
) -> list[Quad]:
    q = common.Quads(graph)
    q.node(
        node,
        (RDF.type, FKG.Outcome),
        (FKG.anchor, anchor),
        (FKG.horizon, common.integer(label.horizon)),
        (FKG.residualZ, common.double(label.z)),
        (FKG.residualLabel, common.integer(label.label)),
        (FKG.maturedAt, common.datetime(label.matured_at)),
    )
    return q.items


def feedback(
    store: BaseStore,
    memory: SourceMemory,
    *,
    as_of: dt.datetime,
    first_day: dt.date,
    prices: PriceTable,
    calendar: MarketCalendar,
    proxy: str,
    weights: Mapping[int, Mapping[int, float]],
    mix: Mapping[int, Mapping[int, float]] | None = None,
    skip: set[tuple[NamedNode, int]] | None = None,
    predictions: Collection[NamedNode] | None = None,
) -> FeedbackReport:
    """Outcomes and memory updates for the signals with prediction day >= `first_day`
    that matured by `as_of` (see the module docstring). `skip` holds (prediction,
    horizon) pairs already fed back by the caller; the pairs done now are added to it.
    `predictions`, when the caller knows them, are the only ones that can still need
    feedback: the store is then not searched for them (on a long run's store, that search
    grew with every prediction written)."""
    report = FeedbackReport()
    done = skip if skip is not None else set()
    quads: list[Quad] = []
    updates = []
    found = signals(
        store, memory, first_day=first_day, last_day=as_of.date(), predictions=predictions
    )
    for s in found:
        if (s.prediction, s.horizon) in done:
            continue
        _, end = calendar.label_window(s.prediction_day, s.horizon)
        if calendar.bar_available_at(end) > as_of:
            continue  # not matured yet
        done.add((s.prediction, s.horizon))
        report.signals += 1
        label = residual_label(
            prices, s.ticker, proxy, s.prediction_day, s.horizon, calendar=calendar
        )
        if isinstance(label, NoLabel):
            reason = label.reason.split(" ", 1)[1] if label.reason[0].isdigit() else label.reason
            report.no_label[reason] = report.no_label.get(reason, 0) + 1
            continue
        outcome = outcome_iri(store, s.anchor, s.horizon)
        quads += outcome_quads(outcome, s.anchor, label, store.graphs.outputs)
        report.outcomes += 1
        if not s.cited_families and memory.variant != "selected-evidence":
            report.uncited += 1
        updates += updates_for(
            Feedback(
                prediction=s.prediction,
                event_type=s.event_type,
                horizon=s.horizon,
                predicted=s.value,
                realized=label.label,
                matured_at=label.matured_at,
                cited_families=s.cited_families,
                context_families=s.context_families,
                outcome=outcome,
            ),
            memory,
            weights=weights,
            mix=mix,
        )
    if not quads:
        return report
    quads += update_quads(memory, updates, graph=store.graphs.memory, base=store.graphs.base)
    check = validate_quads(quads)
    if not check.conforms:
        raise FinkgError("feedback broke the shapes (a bug): " + check.text(limit=3))
    store.write(add=quads, note=f"feedback {memory.name} as of {as_of.isoformat()}")
    report.updates = len(updates)
    return report
