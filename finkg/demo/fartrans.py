"""FAR-Trans-shaped customers, assets, close prices and transactions (synthetic).

Four CSVs with exactly the FAR-Trans columns and value formats: ``customerType`` in
Mass/Premium/Professional, ``riskLevel`` in Conservative/Income/Balanced/Aggressive and
``investmentCapacity`` in CAP_LT30K/CAP_30K_80K/CAP_80K_300K/CAP_GT300K (about one
customer in six carries the ``Predicted_`` prefix on both, as in the real data);
``assetCategory`` Stock/Bond/MTF with FAR-Trans subcategories (empty for stocks);
bonds have sector Sovereign or Corporate, funds no sector; ``timestamp`` is a session
date ``YYYY-MM-DD``; ``transactionType`` Buy/Sell; ``transactionID`` counts from 1.
Money is in US dollars.  Planted: each customer has 1-2 preferred sectors and at least
``preferred_share`` of their stock buys (rounded up) are in them; the risk level sets the
category mix of their buys (:data:`CATEGORY_MIX`).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from finkg.demo.prices import PricePanel
from finkg.demo.universe import MARKET_NAME, SECTORS, Company, isin, stream

CUSTOMER_TYPES, CUSTOMER_P = ("Mass", "Premium", "Professional"), (0.6, 0.3, 0.1)
RISK_LEVELS = ("Conservative", "Income", "Balanced", "Aggressive")
CAPACITIES = ("CAP_LT30K", "CAP_30K_80K", "CAP_80K_300K", "CAP_GT300K")
TICKET = {
    "CAP_LT30K": (500, 3000),
    "CAP_30K_80K": (2000, 8000),
    "CAP_80K_300K": (5000, 25000),
    "CAP_GT300K": (20000, 100000),
}
CATEGORIES = ("Stock", "Bond", "MTF")
CATEGORY_MIX = {
    "Conservative": (0.2, 0.5, 0.3),
    "Income": (0.35, 0.4, 0.25),
    "Balanced": (0.55, 0.2, 0.25),
    "Aggressive": (0.8, 0.05, 0.15),
}
SELL_SHARE = 0.3


@dataclass(frozen=True)
class Asset:
    isin: str
    name: str
    category: str
    subcategory: str
    sector: str
    industry: str
    prices: np.ndarray


@dataclass(frozen=True)
class Customer:
    customer_id: str
    customer_type: str
    risk_level: str
    capacity: str
    predicted: bool
    preferred: tuple[str, ...]

    @property
    def row(self) -> list[str]:
        pre = "Predicted_" if self.predicted else ""
        return [self.customer_id, self.customer_type, pre + self.risk_level, pre + self.capacity]


def make_assets(seed: int, companies: Sequence[Company], panel: PricePanel, n: int) -> list[Asset]:
    """The companies' stocks, the market ETF, three funds and four bonds."""
    rng = stream(seed, "fartrans-assets")
    out = [
        Asset(c.isin, c.name, "Stock", "", c.sector, c.industry, panel.stocks[c.ticker].close)
        for c in companies
    ]
    out.append(Asset(isin("ZZF00000001"), MARKET_NAME, "MTF", "Equity", "", "", panel.market.close))

    def walk(start: float, vol: float, drift: float = 0.0) -> np.ndarray:
        return np.round(start * np.cumprod(1 + rng.normal(drift, vol, n)), 4)

    funds = (
        ("ZQ Global Bond Fund (synthetic)", "Bond", 0.003),
        ("ZQ Money Market Fund (synthetic)", "Money Market", 0.0002),
        ("ZQ Balanced Allocation Fund (synthetic)", "Balanced", 0.006),
    )
    for k, (name, sub, vol) in enumerate(funds, start=2):
        out.append(Asset(isin(f"ZZF{k:08d}"), name, "MTF", sub, "", "", walk(10.0, vol, 0.0001)))
    bonds = [
        ("Republic of Examplia 2.50% 2029 (synthetic)", "Government", "Sovereign", ""),
        ("Republic of Examplia 1.75% 2025 (synthetic)", "Government", "Sovereign", ""),
    ]
    bonds += [
        (f"{c.short} 4.25% 2027 Notes (synthetic)", "Corporate", "Corporate", c.industry)
        for c in companies[:2]
    ]
    for k, (name, sub, sector, industry) in enumerate(bonds, start=1):
        out.append(
            Asset(isin(f"ZZB{k:08d}"), name, "Bond", sub, sector, industry, walk(100.0, 0.002))
        )
    return out


def make_customers(seed: int, n: int) -> list[Customer]:
    rng = stream(seed, "fartrans-customers")
    out = []
    for _ in range(n):
        risk = str(rng.choice(RISK_LEVELS))
        k = int(rng.integers(1, 3))
        preferred = tuple(sorted(rng.choice(SECTORS, size=k, replace=False).tolist()))
        out.append(
            Customer(
                customer_id=rng.bytes(10).hex().upper(),
                customer_type=str(rng.choice(CUSTOMER_TYPES, p=CUSTOMER_P)),
                risk_level=risk,
                capacity=str(rng.choice(CAPACITIES, p=(0.55, 0.25, 0.15, 0.05))),
                predicted=bool(rng.random() < 1 / 6),
                preferred=preferred,
            )
        )
    return out


def make_transactions(
    seed: int,
    customers: Sequence[Customer],
    assets: Sequence[Asset],
    days: Sequence[str],
    preferred_share: float,
) -> list[list[str]]:
    """Transaction rows (without IDs yet): customer, ISIN, type, date, value, units."""
    rng = stream(seed, "fartrans-transactions")
    n = len(days)
    by_cat = {cat: [a for a in assets if a.category == cat] for cat in CATEGORIES}
    rows: list[tuple[str, str, str, int, float, float]] = []
    for cu in customers:
        n_buys = int(rng.integers(max(10, n // 8), max(20, n // 4) + 1))
        cats = rng.choice(len(CATEGORIES), size=n_buys, p=CATEGORY_MIX[cu.risk_level])
        cats[:3] = 0  # at least three stock buys, so the sector preference is measurable
        n_stock = int((cats == 0).sum())
        n_pref = math.ceil(preferred_share * n_stock - 1e-9)
        pref_flag = rng.permutation(np.arange(n_stock) < n_pref)
        liked = [a for a in by_cat["Stock"] if a.sector in cu.preferred]
        other = [a for a in by_cat["Stock"] if a.sector not in cu.preferred]
        s = 0
        for cat in cats:
            if cat == 0:
                pool = liked if pref_flag[s] or not other else other
                s += 1
            else:
                pool = by_cat[CATEGORIES[cat]]
            asset = pool[rng.integers(len(pool))]
            day = int(rng.integers(0, n))
            price = float(asset.prices[day])
            value = rng.uniform(*TICKET[cu.capacity])
            units = (
                float(max(1, math.floor(value / price))) if cat == 0 else round(value / price, 3)
            )
            rows.append((cu.customer_id, asset.isin, "Buy", day, round(units * price, 2), units))
            if day < n - 1 and rng.random() < SELL_SHARE:
                later = int(rng.integers(day + 1, n))
                sold = (
                    units
                    if rng.random() < 0.5
                    else (float(max(1, units // 2)) if cat == 0 else round(units / 2, 3))
                )
                rows.append(
                    (
                        cu.customer_id,
                        asset.isin,
                        "Sell",
                        later,
                        round(sold * float(asset.prices[later]), 2),
                        sold,
                    )
                )
    rows.sort(key=lambda r: (r[3], r[0], r[1], r[2]))
    return [
        [cid, code, kind, days[d], repr(value), repr(units)]
        for cid, code, kind, d, value, units in rows
    ]


def write_fartrans(
    folder: Path,
    *,
    customers: Sequence[Customer],
    assets: Sequence[Asset],
    transactions: Sequence[list[str]],
    days: Sequence[str],
) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    _csv(
        folder / "customer_information.csv",
        ["customerID", "customerType", "riskLevel", "investmentCapacity"],
        [c.row for c in customers],
    )
    _csv(
        folder / "asset_information.csv",
        ["ISIN", "assetName", "assetCategory", "assetSubCategory", "sector", "industry"],
        [[a.isin, a.name, a.category, a.subcategory, a.sector, a.industry] for a in assets],
    )
    _csv(
        folder / "close_prices.csv",
        ["ISIN", "timestamp", "closePrice"],
        [[a.isin, d, repr(float(p))] for a in assets for d, p in zip(days, a.prices, strict=True)],
    )
    _csv(
        folder / "transactions.csv",
        [
            "customerID",
            "ISIN",
            "transactionID",
            "transactionType",
            "timestamp",
            "totalValue",
            "units",
        ],
        [
            [cid, code, str(k), kind, day, value, units]
            for k, (cid, code, kind, day, value, units) in enumerate(transactions, start=1)
        ],
    )


def _csv(path: Path, header: list[str], rows: Sequence[Sequence[str]]) -> None:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    path.write_bytes(buf.getvalue().encode())
