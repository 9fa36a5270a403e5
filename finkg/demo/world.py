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
from pathlib import Path

from finkg.demo import documents as D
from finkg.demo import fartrans as FT
from finkg.demo.chatter import filing_chatter
from finkg.demo.filings import guidance_shocks, plan_filings, write_filings
from finkg.demo.manifest import MANIFEST_NAME, WorldManifest
from finkg.demo.news import filing_reports, news_shocks, plan_news, write_news
from finkg.demo.prices import simulate, write_csv
from finkg.demo.sessions import demo_sessions
from finkg.demo.spec import DEFAULT_SPEC, WorldSpec
from finkg.demo.truth import world_manifest
from finkg.demo.universe import MARKET_TICKER, Company, make_companies
from finkg.errors import InputError

__all__ = ["DEFAULT_SPEC", "WorldManifest", "WorldSpec", "build_world"]


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

    manifest = world_manifest(
        spec,
        days=days,
        companies=companies,
        news=news,
        reported=reported,
        filings=filings,
        customers=customers,
        panel=panel,
        docs=docs,
        out=out,
    )
    (out / MANIFEST_NAME).write_bytes(manifest.dump().encode())
    return manifest


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
