"""Ten-week price summaries of FAR-Trans assets, from their close prices (paper 004 §3.1).

FAR-Trans gives one close price per asset and day, for stocks, bonds and funds alike, and
paper 004's market graph summarizes them as TenWeekPriceSummary entities about the asset.
The periods are `summaries.period_of`'s: ten calendar weeks from Monday 1990-01-01, the same
for every asset. With closes only, a period's high and low are its highest and lowest close.

A period gets a summary only when the closes cover it: one in its first calendar week and
one in its last. The summary is available when both hold: the period is over (midnight after
its last day, in the zone of the closes' availability) and its last close is known. So a
file cut at any instant gives the same summaries, with the same quads, for everything
available before that instant (future invariance, DESIGN §3).

Each summary's source document is keyed by the asset and period and hashes the closes it
was computed from, so it does not change when later rows are added to the price file.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from finkg.kg.derive.summaries import PERIOD_DAYS, period_of
from finkg.kg.ingest import common
from finkg.kg.ingest.core import IngestOptions, Item
from finkg.kg.iri import mint
from finkg.ontology.terms import FKG, PROV, RDF

TIME_RULE = "end of the ten-week period (midnight after its last day) or its last close, later"


@dataclass(frozen=True)
class Close:
    day: dt.date
    close: Decimal
    available_at: dt.datetime  # zoned


def _price(x: Decimal) -> str:
    return f"{x:.4f}"


def asset_summary_items(
    isin: str,
    name: str,
    closes: Sequence[Close],
    options: IngestOptions,
    *,
    source: Path,
) -> Iterator[Item]:
    """One `fkg:PriceSummary` item about the asset per complete ten-week period."""
    by_period: dict[dt.date, list[Close]] = {}
    for c in sorted(closes, key=lambda c: c.day):
        by_period.setdefault(period_of(c.day)[0], []).append(c)
    asset = mint("asset", isin, base=options.base)
    for start, rows in sorted(by_period.items()):
        end = start + dt.timedelta(days=PERIOD_DAYS - 1)
        if rows[0].day > start + dt.timedelta(days=6) or rows[-1].day < end - dt.timedelta(days=6):
            continue  # the closes do not cover the period
        last = rows[-1]
        zone = last.available_at.tzinfo
        over = dt.datetime.combine(end + dt.timedelta(days=1), dt.time(), tzinfo=zone)
        available = max(over, last.available_at)
        values = [r.close for r in rows]
        high, low, end_close = max(values), min(values), last.close
        average = sum(values, Decimal(0)) / len(values)
        text = json.dumps(
            {
                "asset": name or isin,
                "isin": isin,
                "summary": "ten-week price summary (closes)",
                "periodStartDate": start.isoformat(),
                "periodEndDate": end.isoformat(),
                "lastClose": last.day.isoformat(),
                "closes": len(rows),
                "periodHighPrice": float(_price(high)),
                "periodLowPrice": float(_price(low)),
                "periodAveragePrice": float(_price(average)),
                "periodEndPrice": float(_price(end_close)),
            }
        )
        node = mint("summary", "asset", isin, end.isoformat(), base=options.base)
        doc = mint("source/fartrans", "close_prices", isin, end.isoformat(), base=options.base)
        data = "\n".join(f"{r.day.isoformat()},{r.close}" for r in rows).encode("utf-8")
        q = common.Quads(options.graphs.market)
        q.source_document(
            doc,
            data=data,
            source=f"{source.resolve().as_uri()}#isin={isin}&period={start.isoformat()}",
            media_type="text/csv",
        )
        q.node(
            node,
            (RDF.type, FKG.PriceSummary),
            (FKG.about, asset),
            (FKG.periodStartDate, common.date(start)),
            (FKG.periodEndDate, common.date(end)),
            (FKG.periodHighPrice, common.decimal(_price(high), field="high")),
            (FKG.periodLowPrice, common.decimal(_price(low), field="low")),
            (FKG.periodAveragePrice, common.decimal(_price(average), field="average")),
            (FKG.periodEndPrice, common.decimal(_price(end_close), field="end close")),
            (FKG.text, common.string(text)),
            (FKG.availableAt, common.datetime(available)),
            (FKG.timeQuality, common.string("exact")),
            (FKG.timeRule, common.string(TIME_RULE)),
            (FKG.sourceFamily, FKG.Market),
            (PROV.wasDerivedFrom, doc),
        )
        yield Item(node, q.items, str(source), derived=True)


def closes_by_asset(
    rows: Sequence[tuple[str, dt.date, Decimal, dt.datetime]],
) -> Mapping[str, list[Close]]:
    """(ISIN, day, close, availableAt) rows grouped by ISIN; a repeated day keeps its last."""
    out: dict[str, dict[dt.date, Close]] = {}
    for isin, day, close, at in rows:
        out.setdefault(isin, {})[day] = Close(day, close, at)
    return {k: list(v.values()) for k, v in out.items()}
