"""Synthetic EDGAR filings: a submissions index per company and one text file per filing.

``edgar/submissions/CIK##########.json`` copies the real index's keys, with
``filings.recent`` as parallel lists, newest first.  ``acceptanceDateTime`` is written like
EDGAR's, ``YYYY-MM-DDTHH:MM:SS.000Z``: the ``Z`` is a lie EDGAR tells too, the clock is
New York wall time.  Every acceptance falls on a session between 06:00 and 17:25, so
``filingDate`` is the acceptance date.  Per company and quarter: an earnings 8-K (items
``2.02,9.01``; 70 % after the close, 16:01-16:44, else 06:30-08:59) 18-38 days after the
quarter end, then a 10-Q (10-K for December quarters) 1-8 (5-20) sessions later.  Other
8-Ks (``7.01`` Reg FD outlook updates, ``5.02``, ``8.01``, ``1.01,9.01``) arrive at a
Poisson rate per session.  Accession numbers are ``<CIK10>-<YY>-<seq6>``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import numpy as np

from finkg.demo import filing_text as F
from finkg.demo.news_text import PERSONS, PLACES, TARGETS
from finkg.demo.sessions import Sessions, as_wall_strings
from finkg.demo.universe import OWNER_ORG, Company, stream

EXTRA_ITEMS = ("7.01", "7.01,9.01", "5.02", "8.01", "1.01,9.01")
EXTRA_P = (0.3, 0.2, 0.2, 0.2, 0.1)
EARNINGS_GUIDANCE, EARNINGS_P = ("raise", "lower", "reaffirm", "none"), (0.35, 0.35, 0.2, 0.1)
UPDATE_GUIDANCE, UPDATE_P = ("raise", "lower", "reaffirm"), (0.45, 0.45, 0.1)
PERIODIC_LAG = {"10-Q": (1, 9), "10-K": (5, 21)}
DIRECTION = {"raise": 1.0, "lower": -1.0, "reaffirm": 0.0, "none": 0.0}


@dataclass(frozen=True)
class Filing:
    """One filing: its index row, its text, and its ground truth."""

    ticker: str
    accession: str
    form: str
    items: str
    acceptance: str  # YYYY-MM-DDTHH:MM:SS, New York wall time
    filing_date: str
    report_date: str
    prediction_index: int
    guidance: str  # raise | lower | reaffirm | none
    primary_document: str
    film: str
    text: str


def quarter_ends(first: date, last: date) -> list[date]:
    out: list[date] = []
    y, q = first.year, 1
    while True:
        end = date(y, 3 * q, 31 if q in (1, 4) else 30)
        if end > last:
            return out
        if end >= first:
            out.append(end)
        y, q = (y + 1, 1) if q == 4 else (y, q + 1)


def plan_filings(
    *, seed: int, companies: Sequence[Company], sessions: Sessions, extra_8k_per_session: float
) -> list[Filing]:
    """Every filing of every company, each with its text, in company then time order."""
    rng = stream(seed, "filings")
    out: list[Filing] = []
    for c in companies:
        out += _company_filings(rng, c, sessions, extra_8k_per_session)
    return out


def _company_filings(
    rng: np.random.Generator, c: Company, sessions: Sessions, rate: float
) -> list[Filing]:
    days = np.array(sessions.days, dtype="datetime64[D]")
    n = len(days)
    quarters = quarter_ends(sessions.days[0] - timedelta(days=800), sessions.days[-1])
    growth = rng.normal(0.02, 0.04, len(quarters))
    revenue = dict(zip(quarters, rng.uniform(150, 1500) * np.cumprod(1 + growth), strict=True))
    margin, shares = rng.uniform(35, 70), rng.uniform(50, 400)

    plan: list[tuple[int, int, str, str, str, date | None]] = []
    for q in quarters:
        target = np.datetime64(q + timedelta(days=int(rng.integers(18, 39))))
        earn = int(np.searchsorted(days, target)) if target >= days[0] else -n
        after = rng.random() < 0.7
        secs = int(
            rng.integers(16 * 3600 + 60, 16 * 3600 + 45 * 60)
            if after
            else rng.integers(6 * 3600 + 1800, 9 * 3600)
        )
        if 1 <= earn <= n - 2:
            plan.append(
                (
                    earn,
                    secs,
                    "8-K",
                    "2.02,9.01",
                    str(rng.choice(EARNINGS_GUIDANCE, p=EARNINGS_P)),
                    q,
                )
            )
        form = "10-K" if q.month == 12 else "10-Q"
        idx = earn + int(rng.integers(*PERIODIC_LAG[form]))
        secs = int(rng.integers(6 * 3600, 17 * 3600 + 20 * 60))
        if 1 <= idx <= n - 2:
            plan.append((idx, secs, form, "", "none", q))
    for _ in range(int(rng.poisson(rate * n))):
        items = str(rng.choice(EXTRA_ITEMS, p=EXTRA_P))
        guidance = str(rng.choice(UPDATE_GUIDANCE, p=UPDATE_P)) if "7.01" in items else "none"
        plan.append(
            (
                int(rng.integers(1, n - 1)),
                int(rng.integers(6 * 3600, 17 * 3600 + 1500)),
                "8-K",
                items,
                guidance,
                None,
            )
        )
    plan.sort(key=lambda p: (p[0], p[1]))
    if not plan:
        return []

    wall = days[[p[0] for p in plan]].astype("datetime64[s]") + np.array(
        [p[1] for p in plan], dtype="timedelta64[s]"
    )
    pred = sessions.prediction_index(wall)
    stamps = as_wall_strings(wall, sep="T")
    out: list[Filing] = []
    seq: dict[int, int] = {}
    names: set[str] = set()
    for k, (_, _, form, items, guidance, period) in enumerate(plan):
        accepted = stamps[k]
        day = date.fromisoformat(accepted[:10])
        yy = day.year % 100
        seq[yy] = seq.get(yy, 0) + 1
        accession = f"{c.cik10}-{yy:02d}-{seq[yy]:06d}"
        known = period or max(x for x in quarters if x + timedelta(days=20) <= day)
        facts = _facts(rng, c, day, period, known, guidance, revenue, margin, shares)
        item_list = items.split(",") if items else []
        body = (
            F.body_8k(c, item_list, facts)
            if form == "8-K"
            else F.body_periodic(c, form, facts, _annual(revenue, known))
        )
        slug = {"8-K": "8k", "10-Q": "10q", "10-K": "10k"}[form]
        primary = f"{c.ticker.lower()}-{slug}_{day:%Y%m%d}.txt"
        if primary in names:
            primary = primary.replace(".txt", f"-{k}.txt")
        names.add(primary)
        report = (period if period and form != "8-K" else day).isoformat()
        film = f"{yy:02d}{int(rng.integers(100000, 999999))}"
        text = F.sgml(
            c=c,
            accession=accession,
            form=form,
            items=item_list,
            acceptance=accepted,
            filing_date=day.isoformat(),
            report_date=report,
            film=film,
            primary=primary,
            body=body,
        )
        out.append(
            Filing(
                ticker=c.ticker,
                accession=accession,
                form=form,
                items=items,
                acceptance=accepted,
                filing_date=day.isoformat(),
                report_date=report,
                prediction_index=int(pred[k]),
                guidance=guidance,
                primary_document=primary,
                film=film,
                text=text,
            )
        )
    return out


def _annual(revenue: dict[date, float], q: date) -> tuple[float, float]:
    keys = sorted(k for k in revenue if k <= q)
    return sum(revenue[k] for k in keys[-4:]), sum(revenue[k] for k in keys[-8:-4])


def _facts(
    rng: np.random.Generator,
    c: Company,
    day: date,
    q: date | None,
    known: date,
    guidance: str,
    revenue: dict[date, float],
    margin: float,
    shares: float,
) -> F.Facts:
    keys = sorted(revenue)
    rev = revenue[known]
    prior = revenue[keys[max(0, keys.index(known) - 4)]]
    ni = rev * rng.uniform(0.05, 0.2)
    base = 4 * rev * 1.03
    before = (round(base * 0.98), round(base * 1.02))
    move = {"raise": 1, "lower": -1}.get(guidance, 0) * rng.uniform(0.02, 0.06)
    now = (round(before[0] * (1 + move)), round(before[1] * (1 + move)))
    eps_year = 4 * ni / shares * (1 + move)
    return F.Facts(
        event_day=day,
        quarter_end=q or known,
        revenue=round(rev, 1),
        revenue_prior=round(prior, 1),
        net_income=round(ni, 1),
        eps=round(ni / shares, 2),
        gross_margin=round(margin + rng.normal(0, 1.5), 1),
        cash=round(rev * rng.uniform(0.5, 2.5), 1),
        guidance=guidance,
        fiscal_year=day.year,
        range_now=now,
        range_before=before,
        eps_range=(round(eps_year * 0.97, 2), round(eps_year * 1.03, 2)),
        person=PERSONS[rng.integers(len(PERSONS))],
        counterparty=TARGETS[rng.integers(len(TARGETS))],
        place=PLACES[rng.integers(len(PLACES))],
    )


def guidance_shocks(
    filings: Sequence[Filing],
    tickers: Sequence[str],
    n: int,
    *,
    day1: float,
    drift: float,
    drift_sessions: int,
) -> np.ndarray:
    """The planted residual shocks: ``day1`` on P, then ``drift`` spread over P+1..P+k."""
    col = {t: j for j, t in enumerate(tickers)}
    out = np.zeros((n, len(tickers)))
    for f in filings:
        s = DIRECTION[f.guidance]
        if s:
            p, j = f.prediction_index, col[f.ticker]
            out[p, j] += s * day1
            out[p + 1 : p + 1 + drift_sessions, j] += s * drift / drift_sessions
    return out


def submissions(c: Company, filings: Sequence[Filing]) -> dict:
    """The EDGAR submissions JSON of one company (keys in EDGAR's order)."""
    rows = sorted(filings, key=lambda f: f.acceptance, reverse=True)
    sic, sic_desc = c.sic
    address = {
        "street1": F.street(c).upper(),
        "street2": None,
        "city": c.city.upper(),
        "stateOrCountry": c.state,
        "zipCode": F.zip_code(c),
        "stateOrCountryDescription": c.state,
        "isForeignLocation": 0,
        "foreignStateTerritory": None,
        "country": None,
        "countryCode": None,
    }
    recent = {
        "accessionNumber": [f.accession for f in rows],
        "filingDate": [f.filing_date for f in rows],
        "reportDate": [f.report_date for f in rows],
        "acceptanceDateTime": [f"{f.acceptance}.000Z" for f in rows],
        "act": ["34"] * len(rows),
        "form": [f.form for f in rows],
        "fileNumber": [F.file_number(c)] * len(rows),
        "filmNumber": [f.film for f in rows],
        "items": [f.items for f in rows],
        "core_type": [f.form for f in rows],
        "size": [len(f.text.encode()) for f in rows],
        "isXBRL": [0] * len(rows),
        "isInlineXBRL": [0] * len(rows),
        "primaryDocument": [f.primary_document for f in rows],
        "primaryDocDescription": [f.form for f in rows],
    }
    return {
        "cik": c.cik10,
        "entityType": "operating",
        "sic": sic,
        "sicDescription": sic_desc,
        "ownerOrg": OWNER_ORG[c.sector],
        "insiderTransactionForOwnerExists": 0,
        "insiderTransactionForIssuerExists": 1,
        "name": c.name,
        "tickers": [c.ticker],
        "exchanges": ["Nasdaq"],
        "ein": F.ein(c),
        "lei": None,
        "description": "Synthetic company generated by finkg.demo; not a real registrant.",
        "website": "",
        "investorWebsite": "",
        "category": "Large accelerated filer",
        "fiscalYearEnd": "1231",
        "stateOfIncorporation": "DE",
        "stateOfIncorporationDescription": "DE",
        "addresses": {"mailing": address, "business": {**address, "isForeignLocation": None}},
        "phone": F.phone(c),
        "flags": "",
        "formerNames": [],
        "filings": {"recent": recent, "files": []},
    }


def write_filings(out_dir: Path, companies: Sequence[Company], filings: Sequence[Filing]) -> None:
    docs, subs = out_dir / "edgar" / "documents", out_dir / "edgar" / "submissions"
    docs.mkdir(parents=True, exist_ok=True)
    subs.mkdir(parents=True, exist_ok=True)
    for f in filings:
        (docs / f"{f.accession}.txt").write_bytes(f.text.encode())
    for c in companies:
        mine = [f for f in filings if f.ticker == c.ticker]
        text = json.dumps(submissions(c, mine), separators=(",", ":"))
        (subs / f"CIK{c.cik10}.json").write_bytes(text.encode())
