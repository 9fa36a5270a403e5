"""Synthetic news items in the ``nasdaq-news`` JSON-lines shape, with tone and flavour.

Each line holds ``symbol, publishedDate, title, image, site, text, url`` (the real
file's key order); ``publishedDate`` is New York wall time without a zone.  Publication
times cover pre-market (05:00-09:29), regular hours, after close (16:00-19:59),
evenings, weekends and holidays, with a few items at exactly 09:30:00 and 16:00:00.
About 3 % of items appear twice as identical lines (same url); about 5 % get a
near-duplicate rewrite (new url and site, "UPDATE:"-style title, reworded lead, 10-240
minutes later).  Only the original of a story carries the planted price effect.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from finkg.demo import news_text as T
from finkg.demo.sessions import Sessions, as_wall_strings
from finkg.demo.universe import Company, stream

if TYPE_CHECKING:
    from finkg.demo.filings import Filing

TONE_P = (0.375, 0.375, 0.25)
FLAVOUR_P = (0.3, 0.15, 0.2, 0.15, 0.2)
# pre-market, regular hours, after close, evening: minutes of the day [lo, hi)
SLOTS = ((300, 570), (570, 960), (960, 1200), (1200, 1440))
SLOT_P = (0.22, 0.45, 0.23, 0.10)


@dataclass(frozen=True)
class NewsItem:
    """One line of news.jsonl plus its ground truth."""

    symbol: str
    published: str
    title: str
    site: str
    text: str
    url: str
    image: str
    tone: str
    flavour: str
    prediction_index: int
    duplicate_of: str | None = None
    duplicate_kind: str | None = None  # None (original), "exact" or "near"
    chatter_on: str | None = None  # market chatter (finkg.demo.chatter): the 8-K's accession

    def line(self) -> str:
        return json.dumps(
            {
                "symbol": self.symbol,
                "publishedDate": self.published,
                "title": self.title,
                "image": self.image,
                "site": self.site,
                "text": self.text,
                "url": self.url,
            }
        )


def plan_news(
    *,
    seed: int,
    companies: Sequence[Company],
    sessions: Sessions,
    per_ticker_session: float,
    exact_share: float,
    near_share: float,
) -> list[NewsItem]:
    """All news items (originals, exact copies, rewrites) sorted by publication time."""
    rng = stream(seed, "news")
    n = max(6, round(per_ticker_session * len(companies) * len(sessions)))
    days = np.array(sessions.days, dtype="datetime64[D]")
    cal = np.arange(days[0] + 1, days[-1], dtype="datetime64[D]")
    is_session = np.isin(cal, days)
    weights = np.where(is_session, 1.0, 0.25)
    day = rng.choice(len(cal), size=n, p=weights / weights.sum())
    slot = rng.choice(len(SLOTS), size=n, p=SLOT_P)
    lo, hi = np.array(SLOTS).T
    minute = rng.integers(lo[slot], hi[slot])
    off = ~is_session[day]
    minute[off] = rng.integers(420, 1320, int(off.sum()))
    edge = rng.random(n)
    minute[(edge < 0.02) & ~off] = 570  # exactly 09:30:00: not after that session's open
    minute[(edge > 0.99) & ~off] = 960  # exactly 16:00:00
    # guarantee one pre-market, one after-close and one weekend item in every world
    on, weekend = np.flatnonzero(is_session), np.flatnonzero((cal.astype(int) + 3) % 7 >= 5)
    day[:3] = on[rng.integers(len(on))], on[rng.integers(len(on))], weekend[0]
    minute[:3] = 480, 1000, 660
    wall = cal[day].astype("datetime64[s]") + minute.astype("timedelta64[m]")
    ticker = rng.integers(0, len(companies), n)
    tone = rng.choice(len(T.TONES), size=n, p=TONE_P)
    flavour = rng.choice(len(T.FLAVOURS), size=n, p=FLAVOUR_P)
    pred = sessions.prediction_index(wall)
    stamps = as_wall_strings(wall)

    items = [
        _compose(
            rng,
            k,
            companies[ticker[k]],
            stamps[k],
            int(pred[k]),
            T.TONES[tone[k]],
            T.FLAVOURS[flavour[k]],
        )
        for k in range(n)
    ]
    picks = rng.permutation(n)
    n_exact, n_near = max(1, round(exact_share * n)), max(1, round(near_share * n))
    copies = [
        replace(items[k], duplicate_of=items[k].url, duplicate_kind="exact")
        for k in picks[:n_exact]
    ]
    rewrites = []
    for k in picks[n_exact : n_exact + n_near]:
        later = wall[k] + np.timedelta64(int(rng.integers(10, 241)), "m")
        p = int(sessions.prediction_index(np.array([later]))[0])
        if p < len(sessions):
            rewrites.append(_rewrite(rng, items[k], as_wall_strings(np.array([later]))[0], p))
    everything = items + copies + rewrites
    order = sorted(
        range(len(everything)),
        key=lambda i: (everything[i].published, everything[i].symbol, everything[i].url, i),
    )
    return [everything[i] for i in order]


def news_shocks(
    items: Sequence[NewsItem], tickers: Sequence[str], n: int, effect: float
) -> np.ndarray:
    """The planted 1D residual shocks: +effect / -effect on P for positive / negative originals
    (market chatter is not news of the company's own: it moves nothing)."""
    col = {t: j for j, t in enumerate(tickers)}
    out = np.zeros((n, len(tickers)))
    sign = {"positive": 1.0, "negative": -1.0, "neutral": 0.0}
    for it in items:
        if it.duplicate_kind is None and it.chatter_on is None:
            out[it.prediction_index, col[it.symbol]] += effect * sign[it.tone]
    return out


def write_news(path: Path, items: Sequence[NewsItem]) -> None:
    path.write_bytes("".join(it.line() + "\n" for it in items).encode())


def _long_date(d: date) -> str:
    return f"{d:%B} {d.day}, {d.year}"


def slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:72].rstrip("-")


def _compose(
    rng: np.random.Generator, k: int, c: Company, published: str, pred: int, tone: str, flavour: str
) -> NewsItem:
    day = date.fromisoformat(published[:10])
    month = day.month
    values = {
        "short": c.short,
        "ticker": c.ticker,
        "industry": c.industry,
        "city": c.city,
        "state": c.state,
        "pct": f"{rng.uniform(1.5, 24.0):.1f}",
        "pct2": f"{rng.uniform(2.0, 15.0):.1f}",
        "eps": f"{rng.uniform(0.12, 3.5):.2f}",
        "amt": str(int(rng.integers(5, 900))),
        "q": str((month - 1) // 3 or 4),
        "when": _long_date(day + timedelta(days=int(rng.integers(5, 26)))),
        "person": T.PERSONS[rng.integers(len(T.PERSONS))],
        "target": T.TARGETS[rng.integers(len(T.TARGETS))],
        "place": T.PLACES[rng.integers(len(T.PLACES))],
        "staff": f"{(c.cik % 97 + 3) * 150:,}",
        "founded": str(1950 + c.cik % 61),
    }
    options = T.TEMPLATES[(flavour, tone)]
    headline, lead = options[rng.integers(len(options))]
    tone_pool = T.TONE_SENTENCES[tone]
    chosen = rng.choice(len(tone_pool), size=2, replace=False)
    extra = rng.choice(len(T.BOILERPLATE), size=2, replace=False)
    site = T.SITES[rng.integers(len(T.SITES))]
    body = [
        f"{c.city.upper()}, {c.state}--(SYNTHWIRE)--{c.name} (Nasdaq:{c.ticker}) {lead}",
        *(tone_pool[i] for i in sorted(chosen)),
        *(T.BOILERPLATE[i] for i in sorted(extra)),
    ]
    title = headline.format(**values)
    name = slug(title)
    return NewsItem(
        symbol=c.ticker,
        published=published,
        title=title,
        site=site,
        text=" ".join(body).format(**values),
        url=f"https://{site}/news/{published[:10].replace('-', '/')}/{name}-{k:06d}",
        image=f"https://images.{site}/news/{name}-{published[:10].replace('-', '')}.jpg",
        tone=tone,
        flavour=flavour,
        prediction_index=pred,
    )


def _rewrite(rng: np.random.Generator, orig: NewsItem, published: str, pred: int) -> NewsItem:
    site = T.SITES[(T.SITES.index(orig.site) + 1 + int(rng.integers(3))) % len(T.SITES)]
    title = T.REWRITE_TITLES[rng.integers(len(T.REWRITE_TITLES))].format(title=orig.title)
    _, rest = orig.text.split("--(SYNTHWIRE)--", 1)
    text = f"According to people familiar with the matter, {rest}"
    name = slug(title)
    stamp = published[:10]
    return replace(
        orig,
        published=published,
        title=title,
        site=site,
        text=text,
        url=f"https://{site}/news/{stamp.replace('-', '/')}/{name}-r{orig.url[-6:]}",
        image=f"https://images.{site}/news/{name}-{stamp.replace('-', '')}.jpg",
        prediction_index=pred,
        duplicate_of=orig.url,
        duplicate_kind="near",
    )


REPORT_WORDS = {"raise": "raises its full-year guidance", "lower": "lowers its full-year outlook"}


def filing_reports(
    *,
    seed: int,
    companies: Sequence[Company],
    filings: Sequence[Filing],
    sessions: Sessions,
    share: float,
) -> list[tuple[NewsItem, str]]:
    """News reports of 8-Ks that raise or lower guidance, each with the filing's accession.

    A report is published 5-90 minutes after the filing's acceptance, neutral in tone and
    without a price effect of its own (the effect is the filing's). They are the anchors
    on which the filing is point-in-time evidence, as the AAPL 8-K is for the Benzinga
    article in paper 000 appendix B."""
    rng = stream(seed, "filing-reports")
    by_ticker = {c.ticker: c for c in companies}
    out = []
    for f in filings:
        if f.guidance not in REPORT_WORDS or f.form != "8-K" or rng.random() >= share:
            continue
        c = by_ticker[f.ticker]
        minutes = int(rng.integers(5, 91))
        wall = np.datetime64(f.acceptance) + np.timedelta64(minutes, "m")
        stamp = as_wall_strings(np.array([wall]))[0]
        pred = int(sessions.prediction_index(np.array([wall]))[0])
        if pred >= len(sessions):
            continue
        words = REPORT_WORDS[f.guidance]
        title = f"{c.short} {words}, 8-K shows"
        text = (
            f"{c.name} (Nasdaq:{c.ticker}) {words} in a Form 8-K filed with the SEC, "
            f"accession {f.accession}, according to the filing. The company updated its "
            "revenue and earnings per share expectations for the fiscal year. "
            f"{c.short} is a company in the {c.industry} industry based in {c.city}, "
            f"{c.state}."
        )
        name = slug(title)
        site = T.SITES[int(rng.integers(len(T.SITES)))]
        item = NewsItem(
            symbol=c.ticker,
            published=stamp,
            title=title,
            site=site,
            text=text,
            url=f"https://{site}/news/{stamp[:10].replace('-', '/')}/{name}-f{f.accession[-6:]}",
            image=f"https://images.{site}/news/{name}-{stamp[:10].replace('-', '')}.jpg",
            tone="neutral",
            flavour="earnings",
            prediction_index=pred,
        )
        out.append((item, f.accession))
    return out
