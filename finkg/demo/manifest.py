"""``world.json``: what a synthetic world holds, what was planted in it, and file hashes.

The manifest is the ground truth a test or benchmark checks finkg against.  It is a
pydantic model (``extra="forbid"``, frozen); :meth:`WorldManifest.load` reads it back.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from finkg.errors import InputError

MANIFEST_NAME = "world.json"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FileEntry(_Model):
    path: str  # relative to the world folder, "/"-separated
    sha256: str
    bytes: int


class CompanyTruth(_Model):
    ticker: str
    cik: str
    name: str
    sector: str
    industry: str
    isin: str
    beta: float
    idio_vol: float
    dividend_payer: bool


class Effect(_Model):
    name: str
    description: str
    parameters: dict[str, Any]


class NewsTruth(_Model):
    url: str
    ticker: str
    published: str  # New York wall time, as in the file
    prediction_day: str
    tone: Literal["positive", "negative", "neutral"]
    flavour: Literal["earnings", "legal", "deals", "management", "other"]
    copies: int  # lines in news.jsonl with this url (2 = an exact duplicate was written)
    duplicate_of: str | None  # for near-duplicate rewrites: the original's url
    carries_effect: bool
    reports: str | None = None  # for a news report of an 8-K: the filing's accession
    chatter_on: str | None = None  # for market chatter before an 8-K: the filing's accession


class FilingTruth(_Model):
    accession: str
    ticker: str
    form: str
    items: str
    acceptance: str  # New York wall time, YYYY-MM-DDTHH:MM:SS
    prediction_day: str
    guidance: Literal["raise", "lower", "reaffirm", "none"]


class UserTruth(_Model):
    customer_id: str
    customer_type: str
    risk_level: str
    investment_capacity: str
    predicted_profile: bool
    preferred_sectors: tuple[str, ...]


class DividendTruth(_Model):
    ticker: str
    ex_date: str
    amount: float


class DocumentTruth(_Model):
    path: str
    title: str
    published: str
    tickers: tuple[str, ...]


class QAPair(_Model):
    question: str
    answer: str  # appears verbatim in the document
    document: str


class WorldManifest(_Model):
    """Everything written by :func:`finkg.demo.world.build_world`, and the truth behind it."""

    synthetic: Literal[True]
    notice: str
    generator: str
    spec: dict[str, Any]
    time_zone: str
    conventions: dict[str, str]
    calendar: dict[str, Any]
    market_ticker: str
    companies: tuple[CompanyTruth, ...]
    effects: tuple[Effect, ...]
    news: tuple[NewsTruth, ...]
    filings: tuple[FilingTruth, ...]
    users: tuple[UserTruth, ...]
    dividends: tuple[DividendTruth, ...]
    documents: tuple[DocumentTruth, ...]
    qa: tuple[QAPair, ...]
    files: tuple[FileEntry, ...]

    def dump(self) -> str:
        return self.model_dump_json(indent=2) + "\n"

    @classmethod
    def load(cls, folder: str | Path) -> WorldManifest:
        """Read ``folder/world.json``."""
        path = Path(folder) / MANIFEST_NAME
        if not path.is_file():
            raise InputError(
                "no world manifest here",
                source=path,
                hint="build one with finkg.demo.world.build_world(folder)",
            )
        try:
            return cls.model_validate_json(path.read_bytes())
        except ValueError as exc:
            raise InputError(
                f"not a world manifest: {exc}",
                source=path,
                hint="rebuild the world with build_world",
            ) from exc


def hash_files(folder: Path) -> tuple[FileEntry, ...]:
    """Every file under ``folder`` except the manifest, sorted by path."""
    out = []
    for path in sorted(folder.rglob("*"), key=lambda p: p.relative_to(folder).as_posix()):
        rel = path.relative_to(folder).as_posix()
        if path.is_file() and rel != MANIFEST_NAME:
            data = path.read_bytes()
            out.append(
                FileEntry(path=rel, sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
            )
    return tuple(out)
