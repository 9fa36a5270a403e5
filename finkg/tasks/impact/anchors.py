"""Event anchors (paper 000 §3.1, §3.3): each news item as a prediction trigger.

An anchor carries the ticker, the headline (the event query), the event type from the
deterministic keyword mapper of appendix A, and the times of DESIGN §3 from the XNYS
calendar: prediction day P (the first session opening after publication) and decision
time t_d = max(publication, close of the session before P). As RDF it is an
`fkg:EventAnchor` in the outputs graph, written with the first prediction made on it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from pyoxigraph import NamedNode, Quad

from finkg import queries
from finkg.errors import InputError
from finkg.kg.calendar import MarketCalendar
from finkg.kg.enrich import EVENT_CONCEPTS, event_type
from finkg.kg.ingest import common
from finkg.kg.iri import mint, readable_keys
from finkg.kg.store import BaseStore
from finkg.ontology.terms import DCTERMS, FKG, RDF

SUMMARY_CHARS = 400  # the headline and the lead: what appendix A's mapper reads


@dataclass(frozen=True)
class Anchor:
    iri: NamedNode  # the fkg:EventAnchor
    news: NamedNode
    company: NamedNode
    ticker: str
    headline: str
    published: dt.datetime
    prediction_day: dt.date
    decision_time: dt.datetime
    card_last_session: dt.date
    event_type: NamedNode

    @property
    def event_label(self) -> str:
        return next(k for k, v in EVENT_CONCEPTS.items() if v == self.event_type)

    def quads(self, graph: NamedNode) -> list[Quad]:
        q = common.Quads(graph)
        q.node(
            self.iri,
            (RDF.type, FKG.EventAnchor),
            (FKG.newsItem, self.news),
            (FKG.about, self.company),
            (DCTERMS.title, common.string(self.headline)),
            (FKG.eventType, self.event_type),
            (FKG.predictionDay, common.date(self.prediction_day)),
            (FKG.decisionTime, common.datetime(self.decision_time)),
        )
        return q.items


def anchors(
    store: BaseStore,
    *,
    start: dt.datetime,
    end: dt.datetime,
    calendar: MarketCalendar,
    tickers: frozenset[str] | None = None,
) -> list[Anchor]:
    """Every news item published in [start, end) (about `tickers`, when given), in time order."""
    for name, value in (("from", start), ("to", end)):
        if value.tzinfo is None:
            raise InputError(
                "needs a zone",
                field=name,
                value=value.isoformat(),
                hint="for example 2020-01-01T00:00:00-05:00",
            )
    rows = queries.select(store, "news_anchors", {"from": start, "to": end})
    out = []
    base = store.graphs.base
    for r in rows:
        company, news = r.iri("company"), r.iri("news")
        keys = readable_keys("company", company, base=base)
        if keys is None:
            continue  # a company named by a hashed key has no ticker to trade
        ticker = keys[0]
        if tickers is not None and ticker not in tickers:
            continue
        published = r.datetime("availableAt")
        times = calendar.anchor_times(published)
        headline = r.string("title")
        summary = r.string("text")[:SUMMARY_CHARS]
        out.append(
            Anchor(
                iri=mint("anchor", news.value, base=base),
                news=news,
                company=company,
                ticker=ticker,
                headline=headline,
                published=times.published,
                prediction_day=times.prediction_day,
                decision_time=times.decision_time,
                card_last_session=times.card_last_session,
                event_type=EVENT_CONCEPTS[event_type(summary)],
            )
        )
    return out
