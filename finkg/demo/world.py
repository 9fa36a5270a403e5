"""A deterministic synthetic market, written as real-format files, with known planted effects.

Everything here is synthetic: the companies (tickers ``ZQ..``, names ending in
"(synthetic)", CIKs from 0099000001, ISINs with the unassigned country code ``ZZ``), the
people, prices, news, filings, customers and documents describe nothing real.  finkg's
loaders read these files exactly as they read real data, and tests check that finkg finds
what was planted.  ``build_world(folder)`` writes (paths relative to ``folder``)::

    news/news.jsonl                      nasdaq-news JSON lines
    edgar/submissions/CIK##########.json EDGAR submissions index, one per company
    edgar/documents/<accession>.txt      EDGAR full-submission text (SGML header + text)
    prices/<TICKER>.csv, prices/ZQMX.csv Date,Open,High,Low,Close,Adj Close,Volume
    companies.csv                        ticker,cik,name,sector,industry
    fartrans/{customer_information,asset_information,close_prices,transactions}.csv
    documents/*.txt                      four documents with QA pairs in the manifest
    world.json                           the manifest (WorldManifest): spec, truth, hashes

Time.  Every timestamp in the files is America/New_York wall time without a zone, as
in the real data: news ``publishedDate``; EDGAR ``acceptanceDateTime`` (written
``YYYY-MM-DDTHH:MM:SS.000Z`` like EDGAR's, whose ``Z`` is also Eastern wall time, not
UTC) and the SGML ``<ACCEPTANCE-DATETIME>``.  Price dates are XNYS sessions
(``exchange_calendars`` via :mod:`finkg.kg.calendar`); FAR-Trans timestamps are session
dates.  The prediction day ``P`` of an item is the first session whose open (09:30) is
strictly after its publication or acceptance; its "1D" return is close(P-1) to close(P),
on ``Adj Close``.

Planted effects (defaults of :class:`WorldSpec`; "residual" = the part of the return not
explained by beta times the market ETF's return):

1. News tone, 1D.  The original of every positive news item adds +1.5 % to its stock's
   residual return on P, every negative one -1.5 %, neutral 0; nothing after P
   (``news_tone_effect=0.015``).  Exact and near duplicates add nothing.
2. Guidance drift.  An 8-K (items 2.02 or 7.01) that "raises full-year guidance" adds
   +0.25 % on P and then +1 % on each of P+1..P+4 (+4 % drift, +4.25 % over 5D); one
   that "lowers its outlook" the same with minus signs; "reaffirms" and no guidance add
   nothing (``guidance_day1_effect=0.0025``, ``guidance_drift=0.04``,
   ``guidance_drift_sessions=4``).
   Reports: a share of the 8-Ks that raise or lower guidance
   (``filing_report_share=0.8``) is reported by a neutral news item 5-90 minutes after
   acceptance ("Acme raises its full-year guidance, 8-K shows"), which moves nothing by
   itself: on that anchor, the filing is the point-in-time evidence that matters at 3D/5D.
   Chatter (source reliability).  Before a share of those reported 8-Ks
   (``chatter_share=1.0``), a news item says the shares rose or fell "ahead of its
   full-year outlook update"; its cue contradicts the guidance with probability
   ``chatter_contrary_share=0.8`` and moves nothing: on the report anchor the filing
   (SecFiling family) is reliable evidence and the chatter (News family) is reliably
   wrong, the family utility paper 000's source memory should learn
   (:mod:`finkg.demo.chatter`).
3. Sector preference.  Each customer prefers 1 or 2 of the three sectors; at least 85 %
   of their stock buys (rounded up) are stocks of those sectors
   (``preferred_sector_share=0.85``).
4. Risk and category.  The share of a customer's buys in Stock / Bond / MTF is
   Conservative 20/50/30 %, Income 35/40/25 %, Balanced 55/20/25 %, Aggressive 80/5/15 %
   (the first three buys of every customer are stocks).
5. Dividends (an adjustment, not a signal).  The first ``dividend_tickers=2`` payers
   (Energy, then Healthcare) go ex-dividend every 63 sessions, 0.5 % of the price; only
   there does ``Adj Close`` differ from ``Close``.

Everything else is noise: market returns N(0.04 %, 1 %), sector factors N(0, 0.6 %),
betas U(0.7, 1.4), idiosyncratic N(0, 1.2-1.9 %), news times, template choices, volumes
(which rise with the size of the residual), fund and bond prices, transaction sizes.

Determinism: the same spec writes byte-identical files; another seed gives other files.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from finkg.demo import documents as D
from finkg.demo import fartrans as FT
from finkg.demo.chatter import filing_chatter
from finkg.demo.filings import guidance_shocks, plan_filings, write_filings
from finkg.demo.manifest import (
    MANIFEST_NAME,
    CompanyTruth,
    DividendTruth,
    DocumentTruth,
    Effect,
    FilingTruth,
    NewsTruth,
    QAPair,
    UserTruth,
    WorldManifest,
    hash_files,
)
from finkg.demo.news import filing_reports, news_shocks, plan_news, write_news
from finkg.demo.prices import dividend_payers, simulate, write_csv
from finkg.demo.sessions import ZONE, demo_sessions
from finkg.demo.universe import MARKET_TICKER, MAX_TICKERS, Company, make_companies
from finkg.errors import InputError
from finkg.kg.calendar import RANGE_END, RANGE_START

__all__ = ["DEFAULT_SPEC", "WorldManifest", "WorldSpec", "build_world"]

NOTICE = (
    "This world is synthetic: every company, ticker, CIK, ISIN, person, price, news "
    "item, filing, customer and document in it was generated by finkg.demo.world from "
    "a seed and describes nothing real."
)

# field -> (low, high) inclusive; ints are checked as whole numbers
_BOUNDS: dict[str, tuple[float, float]] = {
    "seed": (0, 2**32 - 1),
    "sessions": (30, 2520),
    "tickers": (3, MAX_TICKERS),
    "users": (1, 1000),
    "news_per_ticker_session": (0.01, 5.0),
    "news_tone_effect": (0.0, 0.2),
    "exact_duplicate_share": (0.0, 0.2),
    "near_duplicate_share": (0.0, 0.2),
    "extra_8k_per_ticker_session": (0.0, 1.0),
    "guidance_day1_effect": (0.0, 0.2),
    "guidance_drift": (0.0, 0.5),
    "guidance_drift_sessions": (1, 20),
    "market_vol": (0.0, 0.1),
    "sector_vol": (0.0, 0.1),
    "preferred_sector_share": (0.5, 1.0),
    "dividend_tickers": (0, 8),
    "filing_report_share": (0.0, 1.0),
    "chatter_share": (0.0, 1.0),
    "chatter_contrary_share": (0.0, 1.0),
}


@dataclass(frozen=True, kw_only=True)
class WorldSpec:
    """What to generate; checked when built (an InputError quotes the bad value).

    >>> WorldSpec(tickers=2)
    Traceback (most recent call last):
    ...
    finkg.errors.InputError: tickers: must be between 3 and 24 (got 2); the default is 8
    """

    seed: int = 7
    start: date = date(2019, 1, 2)  # first session is the first XNYS session on or after it
    sessions: int = 260
    tickers: int = 8  # companies, sectors taken in turn: Technology, Healthcare, Energy
    users: int = 24  # FAR-Trans customers
    news_per_ticker_session: float = 0.3  # original news items
    news_tone_effect: float = 0.015
    exact_duplicate_share: float = 0.03
    near_duplicate_share: float = 0.05
    extra_8k_per_ticker_session: float = 0.06  # 8-Ks besides the quarterly earnings 8-K
    guidance_day1_effect: float = 0.0025
    guidance_drift: float = 0.04
    guidance_drift_sessions: int = 4
    market_vol: float = 0.01
    sector_vol: float = 0.006
    preferred_sector_share: float = 0.85
    dividend_tickers: int = 2
    filing_report_share: float = 0.8  # guidance 8-Ks that a news item reports within 90 min
    chatter_share: float = 1.0  # reported guidance 8-Ks preceded by market chatter
    chatter_contrary_share: float = 0.8  # chatter whose cue contradicts the filing

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name == "start":
                continue
            value, (lo, hi) = getattr(self, f.name), _BOUNDS[f.name]
            whole = isinstance(f.default, int)
            if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)):
                raise InputError(
                    f"must be a {'whole number' if whole else 'number'}",
                    field=f.name,
                    value=value,
                    hint=f"the default is {f.default!r}",
                )
            if not lo <= value <= hi:
                raise InputError(
                    f"must be between {lo} and {hi}",
                    field=f.name,
                    value=value,
                    hint=f"the default is {f.default!r}",
                )
        if self.dividend_tickers > self.tickers:
            raise InputError(
                "must not exceed tickers",
                field="dividend_tickers",
                value=self.dividend_tickers,
                hint=f"use at most {self.tickers}",
            )
        if isinstance(self.start, datetime) or not isinstance(self.start, date):
            raise InputError(
                "must be a datetime.date",
                field="start",
                value=self.start,
                hint="e.g. date(2019, 1, 2)",
            )
        last = self.start + timedelta(days=int(self.sessions * 1.6) + 30)
        if self.start <= RANGE_START or last > RANGE_END:
            raise InputError(
                f"the world must fit in the calendar range {RANGE_START}..{RANGE_END}",
                field="start",
                value=self.start.isoformat(),
                hint="choose a later start or fewer sessions",
            )
        if last >= datetime.now(UTC).date():  # ingest refuses what is available after its moment
            raise InputError(
                "the world must end before today: nothing after the moment of ingestion "
                "can be ingested",
                field="start",
                value=self.start.isoformat(),
                hint="choose an earlier start or fewer sessions",
            )

    def as_json(self) -> dict[str, object]:
        return {k: (v.isoformat() if isinstance(v, date) else v) for k, v in asdict(self).items()}


DEFAULT_SPEC = WorldSpec()


def build_world(
    out_dir: str | Path, spec: WorldSpec = DEFAULT_SPEC, *, overwrite: bool = False
) -> WorldManifest:
    """Write the world described by ``spec`` into ``out_dir`` and return its manifest.

    ``out_dir`` must be new or empty; with ``overwrite=True`` a world built there before
    (the files its ``world.json`` lists) is removed first, and nothing else is touched.
    """
    if not isinstance(spec, WorldSpec):
        raise InputError(
            "spec must be a WorldSpec",
            field="spec",
            value=spec,
            hint="build one with WorldSpec(seed=..., ...)",
        )
    out = Path(out_dir)
    _prepare(out, overwrite)
    sessions = demo_sessions(spec.start, spec.sessions)
    n, days = len(sessions), sessions.iso
    companies = make_companies(spec.tickers, spec.seed)
    tickers = [c.ticker for c in companies]

    news = plan_news(
        seed=spec.seed,
        companies=companies,
        sessions=sessions,
        per_ticker_session=spec.news_per_ticker_session,
        exact_share=spec.exact_duplicate_share,
        near_share=spec.near_duplicate_share,
    )
    filings = plan_filings(
        seed=spec.seed,
        companies=companies,
        sessions=sessions,
        extra_8k_per_session=spec.extra_8k_per_ticker_session,
    )
    shocks = news_shocks(news, tickers, n, spec.news_tone_effect) + guidance_shocks(
        filings,
        tickers,
        n,
        day1=spec.guidance_day1_effect,
        drift=spec.guidance_drift,
        drift_sessions=spec.guidance_drift_sessions,
    )
    reports = filing_reports(
        seed=spec.seed,
        companies=companies,
        filings=filings,
        sessions=sessions,
        share=spec.filing_report_share,
    )
    reported = {item.url: accession for item, accession in reports}
    chatter = filing_chatter(
        seed=spec.seed,
        companies=companies,
        filings=filings,
        reported=list(reported.values()),
        sessions=sessions,
        share=spec.chatter_share,
        contrary_share=spec.chatter_contrary_share,
    )
    news = sorted(
        news + [item for item, _ in reports] + chatter,
        key=lambda it: (it.published, it.symbol, it.url),
    )
    panel = simulate(
        seed=spec.seed,
        companies=companies,
        n=n,
        shocks=shocks,
        market_vol=spec.market_vol,
        sector_vol=spec.sector_vol,
        dividend_tickers=spec.dividend_tickers,
    )

    (out / "prices").mkdir(parents=True, exist_ok=True)
    for c in companies:
        write_csv(out / "prices" / f"{c.ticker}.csv", days, panel.stocks[c.ticker])
    write_csv(out / "prices" / f"{MARKET_TICKER}.csv", days, panel.market)
    _write_companies(out / "companies.csv", companies)
    (out / "news").mkdir(exist_ok=True)
    write_news(out / "news" / "news.jsonl", news)
    write_filings(out, companies, filings)
    assets = FT.make_assets(spec.seed, companies, panel, n)
    customers = FT.make_customers(spec.seed, spec.users)
    trades = FT.make_transactions(spec.seed, customers, assets, days, spec.preferred_sector_share)
    FT.write_fartrans(
        out / "fartrans", customers=customers, assets=assets, transactions=trades, days=days
    )
    docs = D.make_documents(spec.seed, companies, panel, sessions.days)
    D.write_documents(out, docs)

    payers = set(dividend_payers(companies, spec.dividend_tickers))
    copies: dict[str, int] = {}
    for it in news:
        copies[it.url] = copies.get(it.url, 0) + 1
    manifest = WorldManifest(
        synthetic=True,
        notice=NOTICE,
        generator="finkg.demo.world",
        spec=spec.as_json(),
        time_zone=ZONE,
        conventions=CONVENTIONS,
        calendar={
            "exchange": "XNYS",
            "source": "exchange_calendars via finkg.kg.calendar",
            "first_session": days[0],
            "last_session": days[-1],
            "sessions": n,
        },
        market_ticker=MARKET_TICKER,
        companies=tuple(
            CompanyTruth(
                ticker=c.ticker,
                cik=c.cik10,
                name=c.name,
                sector=c.sector,
                industry=c.industry,
                isin=c.isin,
                beta=c.beta,
                idio_vol=c.idio_vol,
                dividend_payer=c.ticker in payers,
            )
            for c in companies
        ),
        effects=_effects(spec),
        news=tuple(
            NewsTruth(
                url=it.url,
                ticker=it.symbol,
                published=it.published,
                prediction_day=days[it.prediction_index],
                tone=it.tone,
                flavour=it.flavour,
                copies=copies[it.url],
                duplicate_of=it.duplicate_of if it.duplicate_kind else None,
                carries_effect=it.duplicate_kind is None
                and it.chatter_on is None
                and it.tone != "neutral",
                reports=reported.get(it.url),
                chatter_on=it.chatter_on,
            )
            for it in news
            if it.duplicate_kind != "exact"
        ),
        filings=tuple(
            FilingTruth(
                accession=f.accession,
                ticker=f.ticker,
                form=f.form,
                items=f.items,
                acceptance=f.acceptance,
                prediction_day=days[f.prediction_index],
                guidance=f.guidance,
            )
            for f in filings
        ),
        users=tuple(
            UserTruth(
                customer_id=u.customer_id,
                customer_type=u.customer_type,
                risk_level=u.risk_level,
                investment_capacity=u.capacity,
                predicted_profile=u.predicted,
                preferred_sectors=u.preferred,
            )
            for u in customers
        ),
        dividends=tuple(
            DividendTruth(ticker=d.ticker, ex_date=days[d.session], amount=d.amount)
            for d in panel.dividends
        ),
        documents=tuple(
            DocumentTruth(path=d.path, title=d.title, published=d.published, tickers=d.tickers)
            for d in docs
        ),
        qa=tuple(QAPair(question=q, answer=a, document=d.path) for d in docs for q, a in d.qa),
        files=hash_files(out),
    )
    (out / MANIFEST_NAME).write_bytes(manifest.dump().encode())
    return manifest


CONVENTIONS = {
    "news.publishedDate": "America/New_York wall time without a zone, 'YYYY-MM-DD HH:MM:SS'",
    "edgar.acceptanceDateTime": "America/New_York wall time written with a trailing 'Z' "
    "(as EDGAR does); it is not UTC",
    "edgar.sgml": "<ACCEPTANCE-DATETIME>YYYYMMDDHHMMSS, America/New_York wall time",
    "prices.Date": "XNYS session date; a bar is known at that session's close (16:00, 13:00 "
    "on early-close days); CRLF line ends like the real files",
    "fartrans.timestamp": "XNYS session date (no time of day); money in US dollars",
    "documents": "publication date (New York), title and tickers in each document's "
    ".meta.json sidecar and in this manifest",
    "prediction_day": "first XNYS session whose open (09:30 New York) is strictly after the "
    "publication or acceptance instant",
    "duplicates": "exact duplicates are repeated identical lines (same url; NewsTruth.copies=2); "
    "near duplicates have their own url and NewsTruth.duplicate_of = the "
    "original's url; only originals carry the planted effect",
    "ids": "tickers ZQ..; CIK 10 digits from 0099000001; accession <CIK10>-<YY>-<seq6>; "
    "ISIN ZZ.. with a valid check digit (ZZS stocks, ZZF funds, ZZB bonds); "
    "customerID 20 hex characters",
}


def _effects(spec: WorldSpec) -> tuple[Effect, ...]:
    return (
        Effect(
            name="news_tone_1d",
            description="Original positive (negative) news adds +e (-e) to the stock's "
            "residual return on its prediction day P only.",
            parameters={
                "e": spec.news_tone_effect,
                "horizon_sessions": 1,
                "neutral": 0.0,
                "duplicates": 0.0,
            },
        ),
        Effect(
            name="guidance_drift",
            description="An 8-K that raises (lowers) guidance adds +d1 (-d1) on P and "
            "+drift/k (-drift/k) on each of P+1..P+k; reaffirm and none add 0.",
            parameters={
                "d1": spec.guidance_day1_effect,
                "drift": spec.guidance_drift,
                "k": spec.guidance_drift_sessions,
            },
        ),
        Effect(
            name="source_reliability",
            description="Before a share of the reported guidance 8-Ks, a market-chatter news "
            "item (NewsTruth.chatter_on = the 8-K) says the shares rose or fell ahead of the "
            "outlook update; its cue contradicts the filing's guidance with probability "
            "contrary_share and it moves no price. On the report anchor a directional cue from "
            "the SecFiling family agrees with the later residual drift and one from the News "
            "family disagrees with it: the family utility paper 000's source memory learns.",
            parameters={
                "share": spec.chatter_share,
                "contrary_share": spec.chatter_contrary_share,
                "reliable_family": "SecFiling",
                "unreliable_family": "News",
                "event_type": "EarningsGuidance",
                "planted": True,
            },
        ),
        Effect(
            name="user_sector_preference",
            description="At least ceil(share x stock buys) of each customer's stock buys "
            "are in their preferred sectors (1 or 2 of 3).",
            parameters={"share": spec.preferred_sector_share},
        ),
        Effect(
            name="risk_category_mix",
            description="Probability of Stock/Bond/MTF per buy by risk level (the first "
            "three buys of each customer are stocks).",
            parameters={
                k: dict(zip(FT.CATEGORIES, v, strict=True)) for k, v in FT.CATEGORY_MIX.items()
            },
        ),
        Effect(
            name="dividends",
            description="Quarterly ex-dividend dates on the payers: Close drops by the "
            "amount, Adj Close before the ex-date is scaled by 1 - D/Close[ex-1].",
            parameters={
                "payers": spec.dividend_tickers,
                "yield_per_ex_date": 0.005,
                "every_sessions": 63,
            },
        ),
    )


def _write_companies(path: Path, companies: Sequence[Company]) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["ticker", "cik", "name", "sector", "industry"])
    w.writerows([c.ticker, c.cik10, c.name, c.sector, c.industry] for c in companies)
    path.write_bytes(buf.getvalue().encode())


def _prepare(out: Path, overwrite: bool) -> None:
    if out.exists() and not out.is_dir():
        raise InputError(
            "out_dir is a file, not a folder",
            field="out_dir",
            value=str(out),
            hint="pass a new or empty folder",
        )
    if out.is_dir() and any(out.iterdir()):
        if not overwrite:
            raise InputError(
                "out_dir is not empty",
                field="out_dir",
                value=str(out),
                hint="pass a new or empty folder, or overwrite=True to replace "
                "a world built there before",
            )
        old = WorldManifest.load(out)
        for entry in old.files:
            (out / entry.path).unlink(missing_ok=True)
        (out / MANIFEST_NAME).unlink()
        for sub in sorted((p for p in out.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            if not any(sub.iterdir()):
                sub.rmdir()
        if any(out.iterdir()):
            raise InputError(
                "out_dir holds files that are not part of the old world",
                field="out_dir",
                value=str(out),
                hint="move them away or pass another folder",
            )
    out.mkdir(parents=True, exist_ok=True)
