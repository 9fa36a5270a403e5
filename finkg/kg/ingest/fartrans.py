"""FAR-Trans CSVs: customers, assets, asset close prices and transactions.

Files are recognized by their columns (names do not matter), and read in that order:

- customer_information (customerID, customerType, riskLevel, investmentCapacity):
  a `fkg:Customer` in the graph `users/{customerID}`;
- asset_information (ISIN, assetName, assetCategory, assetSubCategory, sector, industry):
  a `fkg:Asset` in the market graph;
- close_prices (ISIN, timestamp, closePrice): a `fkg:PriceBar` (close only) about the asset,
  and the asset's ten-week `fkg:PriceSummary` nodes (paper 004, `finkg.kg.derive.assets`);
- transactions (customerID, ISIN, transactionID, transactionType, timestamp, totalValue,
  units): a `fkg:Transaction` in `users/{customerID}`.

Each customer's profile and transactions live in that customer's own named graph, so a
query restricted to one customer's graph and the market graph cannot see anyone else.

Time: FAR-Trans comes from a Greek bank; its timestamps are read in `--tz`, by default
Europe/Athens. A date without a time is not an instant: it becomes available at the end of
that day (the next midnight), marked `fkg:timeQuality "approximate"` with that rule, so that
nothing dated D is visible to a decision taken on D.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

from pyoxigraph import Literal, NamedNode

from finkg.errors import InputError
from finkg.kg.ingest import common
from finkg.kg.ingest.core import IngestOptions, Item, Reject
from finkg.kg.iri import mint
from finkg.ontology.terms import FKG, PROV, RDF, RDFS

DEFAULT_TZ = ZoneInfo("Europe/Athens")
KINDS = {
    "customers": {"customerid", "customertype", "risklevel", "investmentcapacity"},
    "assets": {"isin", "assetname", "assetcategory"},
    "prices": {"isin", "timestamp", "closeprice"},
    "transactions": {"customerid", "isin", "transactionid", "transactiontype", "timestamp"},
}
ORDER = ("customers", "assets", "prices", "transactions")


@dataclass(frozen=True)
class Stamp:
    at: dt.datetime
    quality: str
    rule: str


def load(paths: Sequence[Path], options: IngestOptions) -> Iterator[Item | Reject]:
    # derive imports the ingest package: imported here, once both are initialized
    from finkg.kg.derive.assets import asset_summary_items, closes_by_asset

    tables: dict[str, list[common.Table]] = {k: [] for k in ORDER}
    for path in paths:
        read = _read(path)
        if isinstance(read, Reject):
            yield read
            continue
        kind, table = read
        yield from table.rejects
        tables[kind].append(table)
    assets = {row["isin"]: row.get("assetname", "") for t in tables["assets"] for _, row in t.rows}
    customers = {row["customerid"] for t in tables["customers"] for _, row in t.rows}
    makers = {
        "customers": customer,
        "assets": asset,
        "prices": close_price,
        "transactions": transaction,
    }
    closes: list[tuple[str, dt.date, Decimal, dt.datetime]] = []
    close_files: dict[str, Path] = {}
    for kind in ORDER:
        for table in tables[kind]:
            path = table.path
            for line, row in table.rows:
                try:
                    item = makers[kind](
                        row,
                        options,
                        known_assets=assets,
                        known_customers=customers,
                        source=path,
                        line=line,
                    )
                except InputError as e:
                    yield Reject.of(e, source=str(path), line=line)
                    continue
                yield item
                if kind == "prices":
                    closes.append(_close_of(_isin(row), item))
                    close_files[closes[-1][0]] = path
        if kind == "prices":  # paper 004's ten-week summaries, before any transaction
            for isin, series in sorted(closes_by_asset(closes).items()):
                yield from asset_summary_items(
                    isin, assets.get(isin, ""), series, options, source=close_files[isin]
                )


def _close_of(isin: str, item: Item) -> tuple[str, dt.date, Decimal, dt.datetime]:
    """(ISIN, session date, close, availableAt) of a close-price item."""
    values = {q.predicate: q.object for q in item.quads if isinstance(q.object, Literal)}
    return (
        isin,
        dt.date.fromisoformat(values[FKG.sessionDate].value),
        Decimal(values[FKG.close].value),
        dt.datetime.fromisoformat(values[FKG.availableAt].value),
    )


def _read(path: Path) -> tuple[str, common.Table] | Reject:
    table = common.read_table(path)
    if isinstance(table, Reject):
        return table
    kind = next((k for k in ORDER if KINDS[k] <= set(table.columns)), None)
    if kind is None:
        return Reject(
            str(path),
            1,
            "not a FAR-Trans table: columns match none of "
            + "; ".join(f"{k} ({', '.join(sorted(v))})" for k, v in KINDS.items()),
            field="header",
            value=",".join(table.columns),
        )
    return kind, table


def isin_ok(isin: str) -> bool:
    """Whether `isin` has the ISIN form and a valid check digit (Luhn over its digits).

    >>> isin_ok("US0378331005"), isin_ok("US0378331006")
    (True, False)
    """
    if (
        len(isin) != 12
        or not isin[:2].isalpha()
        or not isin[:2].isupper()
        or not isin[-1].isdigit()
    ):
        return False
    if not isin[2:11].isalnum() or isin != isin.upper():
        return False
    digits = "".join(str(int(c, 36)) for c in isin[:11])
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 == 0 else 1)
        total += n - 9 if n > 9 else n
    return (10 - total % 10) % 10 == int(isin[-1])


def _isin(row: dict[str, str], known: dict[str, str] | None = None) -> str:
    isin = row.get("isin", "").upper()
    if not isin:
        raise InputError("missing field", field="ISIN")
    if not isin_ok(isin):
        raise InputError("not a valid ISIN (form or check digit)", field="ISIN", value=isin)
    if known and isin not in known:
        raise InputError(
            "unknown asset: not in the asset_information file of this ingest",
            field="ISIN",
            value=isin,
        )
    return isin


def _customer_id(row: dict[str, str], known: set[str] | None = None) -> str:
    cid = row.get("customerid", "")
    if not cid:
        raise InputError("missing field", field="customerID")
    if known and cid not in known:
        raise InputError(
            "unknown customer: not in the customer_information file of this ingest",
            field="customerID",
            value=cid,
        )
    return cid


def stamp(
    text: str, tz: ZoneInfo, *, field: str = "timestamp", now: dt.datetime | None = None
) -> Stamp:
    """When a FAR-Trans row became knowable (see the module docstring); after `now` (the
    moment of ingestion) it is an InputError."""
    found = _stamp(text.strip(), tz, field)
    if now is not None and found.at > now:
        raise InputError(
            f"available after the moment of ingestion ({now:%Y-%m-%d %H:%M%z})",
            field=field,
            value=text.strip(),
            hint="fix the date; nothing is known before it happens",
        )
    return found


def _stamp(text: str, tz: ZoneInfo, field: str) -> Stamp:
    if len(text) == 10:
        try:
            day = dt.date.fromisoformat(text)
        except ValueError:
            raise InputError("not a date (YYYY-MM-DD)", field=field, value=text) from None
        end = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), tzinfo=tz)
        return Stamp(
            end,
            "approximate",
            f"date-only {field}: available at the end of that day (next midnight, {tz.key})",
        )
    at = common.zoned(text, tz=tz, field=field)
    return Stamp(at, "exact", f"FAR-Trans {field} read as {tz.key}")


def _source(
    q: common.Quads, table: str, key: str, row: dict[str, str], path: Path, line: int, base: str
) -> NamedNode:
    doc = mint("source/fartrans", table, key, base=base)
    data = "\x1f".join(f"{k}={v}" for k, v in sorted(row.items())).encode("utf-8")
    q.source_document(
        doc, data=data, source=f"{path.resolve().as_uri()}#row={line}", media_type="text/csv"
    )
    return doc


def customer(
    row: dict[str, str], options: IngestOptions, *, source: Path, line: int, **_: object
) -> Item:
    cid = _customer_id(row)
    node = mint("customer", cid, base=options.base)
    q = common.Quads(options.graphs.user(cid))
    q.add(node, RDF.type, FKG.Customer).add(node, RDFS.label, Literal(f"customer {cid}"))
    for column, prop in (
        ("customertype", FKG.customerType),
        ("risklevel", FKG.riskLevel),
        ("investmentcapacity", FKG.investmentCapacity),
    ):
        q.add(node, prop, Literal(row[column]) if row.get(column) else None)
    return Item(node, q.items, str(source), line)


def asset(
    row: dict[str, str], options: IngestOptions, *, source: Path, line: int, **_: object
) -> Item:
    isin = _isin(row)
    node = mint("asset", isin, base=options.base)
    q = common.Quads(options.graphs.market)
    q.add(node, RDF.type, FKG.Asset).add(node, FKG.isin, Literal(isin))
    q.add(node, RDFS.label, Literal(row["assetname"]) if row.get("assetname") else None)
    for column, prop in (
        ("assetcategory", FKG.assetCategory),
        ("assetsubcategory", FKG.assetSubCategory),
        ("sector", FKG.sector),
        ("industry", FKG.industry),
    ):
        q.add(node, prop, Literal(row[column]) if row.get(column) else None)
    return Item(node, q.items, str(source), line)


def close_price(
    row: dict[str, str],
    options: IngestOptions,
    *,
    known_assets: dict[str, str],
    source: Path,
    line: int,
    **_: object,
) -> Item:
    isin = _isin(row, known_assets)
    when = stamp(row.get("timestamp", ""), options.tz or DEFAULT_TZ, now=options.moment)
    day = dt.date.fromisoformat(row["timestamp"][:10])
    close = common.decimal(row.get("closeprice", ""), field="closePrice", positive=True)
    node = mint("bar", isin, day.isoformat(), base=options.base)
    q = common.Quads(options.graphs.market)
    q.node(
        node,
        (RDF.type, FKG.PriceBar),
        (FKG.about, mint("asset", isin, base=options.base)),
        (FKG.sessionDate, common.date(day)),
        (FKG.availableAt, common.datetime(when.at)),
        (FKG.timeQuality, Literal(when.quality)),
        (FKG.timeRule, Literal(when.rule)),
        (FKG.close, close),
        (FKG.adjClose, close),
    )
    return Item(node, q.items, str(source), line)


def transaction(
    row: dict[str, str],
    options: IngestOptions,
    *,
    known_assets: dict[str, str],
    known_customers: set[str],
    source: Path,
    line: int,
    **_: object,
) -> Item:
    cid = _customer_id(row, known_customers)
    isin = _isin(row, known_assets)
    tid = row.get("transactionid", "")
    if not tid:
        raise InputError("missing field", field="transactionID")
    kind = row.get("transactiontype", "").capitalize()
    if kind not in ("Buy", "Sell"):
        raise InputError(
            "transactionType is Buy or Sell",
            field="transactionType",
            value=row.get("transactiontype"),
        )
    when = stamp(row.get("timestamp", ""), options.tz or DEFAULT_TZ, now=options.moment)
    value = common.decimal(row.get("totalvalue", ""), field="totalValue", non_negative=True)
    units = common.decimal(row.get("units", ""), field="units", positive=True)
    node = mint("transaction", tid, base=options.base)
    q = common.Quads(options.graphs.user(cid))
    doc = _source(q, "transactions", tid, row, source, line, options.base)
    name = known_assets.get(isin) or isin
    text = (
        f"{kind} of {units.value} units of {name} ({isin}) for {value.value} "
        f"on {row['timestamp']} by customer {cid}"
    )
    q.node(
        node,
        (RDF.type, FKG.Transaction),
        (FKG.customer, mint("customer", cid, base=options.base)),
        (FKG.about, mint("asset", isin, base=options.base)),
        (FKG.transactionType, Literal(kind)),
        (FKG.totalValue, value),
        (FKG.units, units),
        (FKG.text, Literal(text)),
        (FKG.availableAt, common.datetime(when.at)),
        (FKG.timeQuality, Literal(when.quality)),
        (FKG.timeRule, Literal(when.rule)),
        (FKG.sourceFamily, FKG.Personal),
        (PROV.wasDerivedFrom, doc),
    )
    return Item(node, q.items, str(source), line)
