"""The demo's companies, identifiers and random streams (all synthetic).

Tickers start with ``ZQ`` (the market ETF is ``ZQMX``), names end in ``(synthetic)``,
CIKs start at 99,000,001 (far above any CIK the SEC has issued) and ISINs use the
unassigned country code ``ZZ`` with a valid check digit, so nothing here can be
mistaken for, or collide with, a real security.

>>> isin("US037833100")   # Apple's real ISIN, to show the check digit is right
'US0378331005'
>>> isin("ZZS00000001")
'ZZS000000011'
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

SECTORS: tuple[str, ...] = ("Technology", "Healthcare", "Energy")

# industry -> (SIC code, SIC description as EDGAR writes it)
SIC: dict[str, tuple[str, str]] = {
    "Software - Application": ("7372", "Services-Prepackaged Software"),
    "Electronic Components": ("3679", "Electronic Components, NEC"),
    "Biotechnology": ("2836", "Biological Products, (No Diagnostic Substances)"),
    "Medical Devices": ("3841", "Surgical & Medical Instruments & Apparatus"),
    "Oil & Gas E&P": ("1311", "Crude Petroleum & Natural Gas"),
    "Utilities - Renewable": ("4911", "Electric Services"),
}
OWNER_ORG = {
    "Technology": "06 Technology",
    "Healthcare": "03 Life Sciences",
    "Energy": "01 Energy & Transportation",
}

# (ticker, legal name, short name, industry, city, state); eight per sector.
_NAMES: dict[str, tuple[tuple[str, str, str, str, str, str], ...]] = {
    "Technology": (
        ("ZQAW", "Acme Widgets Corp", "Acme Widgets", "Electronic Components", "Port Ellery", "CA"),
        ("ZQCW", "Cindral Cloudworks Inc", "Cindral", "Software - Application", "Brinmoor", "WA"),
        (
            "ZQBV",
            "Bravura Silicon Corp",
            "Bravura",
            "Electronic Components",
            "Calloway Springs",
            "TX",
        ),
        (
            "ZQEL",
            "Elmsquare Analytics Inc",
            "Elmsquare",
            "Software - Application",
            "Northwick",
            "MA",
        ),
        (
            "ZQDX",
            "Dexalon Microdevices Corp",
            "Dexalon",
            "Electronic Components",
            "Fairhollow",
            "OR",
        ),
        (
            "ZQGL",
            "Glimmerware Systems Inc",
            "Glimmerware",
            "Software - Application",
            "Ostley",
            "CO",
        ),
        ("ZQFT", "Fentrix Photonics Corp", "Fentrix", "Electronic Components", "Harlow Bay", "AZ"),
        ("ZQHX", "Halvex Data Systems Inc", "Halvex", "Software - Application", "Kestwood", "NC"),
    ),
    "Healthcare": (
        ("ZQIB", "Ivorel Biologics Inc", "Ivorel", "Biotechnology", "Lindenmere", "MA"),
        (
            "ZQJM",
            "Junivale Medical Devices Corp",
            "Junivale",
            "Medical Devices",
            "Marrow Point",
            "MN",
        ),
        ("ZQKT", "Kestrana Therapeutics Inc", "Kestrana", "Biotechnology", "Quenby", "CA"),
        ("ZQLD", "Lumaris Diagnostics Corp", "Lumaris", "Medical Devices", "Redhaven", "IN"),
        ("ZQMG", "Morvanti Genomics Inc", "Morvanti", "Biotechnology", "Sallow Creek", "NJ"),
        ("ZQNS", "Nexavon Surgical Corp", "Nexavon", "Medical Devices", "Tamsworth", "OH"),
        ("ZQOB", "Orlith Biosciences Inc", "Orlith", "Biotechnology", "Upperford", "PA"),
        ("ZQPC", "Pellucid Care Instruments Corp", "Pellucid", "Medical Devices", "Vantry", "UT"),
    ),
    "Energy": (
        ("ZQQP", "Quarrow Petroleum Co", "Quarrow", "Oil & Gas E&P", "Westerholm", "TX"),
        ("ZQRS", "Rivensol Power Inc", "Rivensol", "Utilities - Renewable", "Yarlow", "NV"),
        ("ZQSO", "Stonebrack Oil & Gas Co", "Stonebrack", "Oil & Gas E&P", "Amberlee", "OK"),
        ("ZQTW", "Tarnwind Energy Inc", "Tarnwind", "Utilities - Renewable", "Bexley Flats", "IA"),
        ("ZQUP", "Umberfield Petroleum Co", "Umberfield", "Oil & Gas E&P", "Corrow", "ND"),
        (
            "ZQVR",
            "Veltara Renewables Inc",
            "Veltara",
            "Utilities - Renewable",
            "Dunmore Vale",
            "NM",
        ),
        ("ZQWX", "Wexmoor Exploration Co", "Wexmoor", "Oil & Gas E&P", "Elsworth", "LA"),
        ("ZQYS", "Yarrowsun Power Inc", "Yarrowsun", "Utilities - Renewable", "Fernhill", "CA"),
    ),
}
MAX_TICKERS = sum(len(v) for v in _NAMES.values())
MARKET_TICKER = "ZQMX"
MARKET_NAME = "ZQ Total Market Index ETF (synthetic)"
CIK_BASE = 99_000_000


@dataclass(frozen=True)
class Company:
    """One synthetic listed company and the parameters its prices are drawn with."""

    ticker: str
    cik: int
    name: str
    short: str
    sector: str
    industry: str
    city: str
    state: str
    isin: str
    beta: float
    idio_vol: float
    start_price: float
    base_volume: float

    @property
    def cik10(self) -> str:
        return f"{self.cik:010d}"

    @property
    def sic(self) -> tuple[str, str]:
        return SIC[self.industry]


def stream(seed: int, name: str) -> np.random.Generator:
    """An independent random stream per (seed, part), so one part's draws never shift another's."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def isin(body: str) -> str:
    """``body`` (11 characters) plus its ISIN check digit (Luhn over letters as 10..35)."""
    digits = "".join(str(int(c, 36)) for c in body.upper())
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 == 0 else 1)
        total += n // 10 + n % 10
    return body.upper() + str((10 - total % 10) % 10)


def make_companies(n: int, seed: int) -> tuple[Company, ...]:
    """``n`` companies, sectors taken in turn (Technology, Healthcare, Energy, ...)."""
    rng = stream(seed, "companies")
    out = []
    for k in range(n):
        sector = SECTORS[k % len(SECTORS)]
        ticker, name, short, industry, city, state = _NAMES[sector][k // len(SECTORS)]
        out.append(
            Company(
                ticker=ticker,
                cik=CIK_BASE + k + 1,
                name=f"{name} (synthetic)",
                short=short,
                sector=sector,
                industry=industry,
                city=city,
                state=state,
                isin=isin(f"ZZS{k + 1:08d}"),
                beta=round(float(rng.uniform(0.7, 1.4)), 3),
                idio_vol=round(float(rng.uniform(0.012, 0.019)), 4),
                start_price=round(float(rng.uniform(15.0, 250.0)), 2),
                base_volume=float(rng.uniform(1.0e6, 2.0e7)),
            )
        )
    return tuple(out)
