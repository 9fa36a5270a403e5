"""Market chatter: news items whose directional cue is planted to be unreliable.

Paper 000's source memory learns which source family's evidence has paid off for an
event type and horizon. For that to be learnable, the world must make one family more
reliable than another, and say so in its manifest. This module does it for the anchors
where a filing is the evidence that matters: before a share of the guidance 8-Ks that a
news item reports (:func:`finkg.demo.news.filing_reports`), a "chatter" news item
speculates on the stock ahead of the filing ("Acme shares fell ahead of its full-year
outlook update, traders say"). Its cue points against the filing's guidance with
probability ``contrary_share`` and with it otherwise; it moves no price. The filing's
guidance drifts the residual return in its own direction over the next sessions
(effect 2 of :mod:`finkg.demo.world`), so on a report anchor:

- a directional cue from the ``SecFiling`` family (the 8-K raising or lowering guidance)
  agrees with the later residual move;
- a directional cue from the ``News`` family (the chatter) disagrees with it, with
  probability ``contrary_share``.

A reader that follows the best-ranked directional evidence is right when it rests on the
filing and wrong when it rests on the chatter; a memory that learns the families' utility
from matured labels promotes the filing. Nothing here is read by finkg except as text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from finkg.demo import news_text as T
from finkg.demo.news import NewsItem, slug
from finkg.demo.sessions import Sessions, as_wall_strings
from finkg.demo.universe import Company, stream

if TYPE_CHECKING:
    from finkg.demo.filings import Filing

EARLIEST_MINUTE = 300  # 05:00: the demo writes no wall time between 00:00 and 04:59
# direction -> (cue in the title, cue sentence); the words are the news tone words
CUES = {
    1: ("shares rose", "Traders called the move a clear positive for the stock."),
    -1: ("shares fell", "Traders called the move a clear negative for the stock."),
}
GUIDANCE_SIGN = {"raise": 1, "lower": -1}


def filing_chatter(
    *,
    seed: int,
    companies: Sequence[Company],
    filings: Sequence[Filing],
    reported: Sequence[str],
    sessions: Sessions,
    share: float,
    contrary_share: float,
) -> list[NewsItem]:
    """One chatter item before each of a ``share`` of the reported guidance 8-Ks.

    ``reported`` holds the accessions that a news report covers. A chatter item is
    published 10-120 minutes before the filing's acceptance (never before 05:00), so it is
    eligible evidence for the report anchor; ``NewsItem.chatter_on`` is the accession."""
    rng = stream(seed, "chatter")
    by_ticker = {c.ticker: c for c in companies}
    covered = set(reported)
    out = []
    for f in filings:
        if f.accession not in covered or f.guidance not in GUIDANCE_SIGN:
            continue
        draw, contrary, lead, site = rng.random(4)
        if draw >= share:
            continue
        c = by_ticker[f.ticker]
        accepted = np.datetime64(f.acceptance)
        day = accepted.astype("datetime64[D]")
        earliest = day.astype("datetime64[s]") + np.timedelta64(EARLIEST_MINUTE, "m")
        wall = max(earliest, accepted - np.timedelta64(10 + int(lead * 111), "m"))
        sign = GUIDANCE_SIGN[f.guidance] * (-1 if contrary < contrary_share else 1)
        out.append(_item(c, as_wall_strings(np.array([wall]))[0], sessions, wall, sign, f, site))
    return out


def _item(
    c: Company,
    stamp: str,
    sessions: Sessions,
    wall: np.datetime64,
    sign: int,
    filing: Filing,
    pick: float,
) -> NewsItem:
    cue, sentence = CUES[sign]
    title = f"{c.short} {cue} ahead of its full-year outlook update, traders say"
    text = (
        f"{c.name} (Nasdaq:{c.ticker}) {cue} in active trading as investors positioned ahead "
        "of an expected update to the company's outlook, according to market chatter. "
        f"{sentence} The company did not comment."
    )
    site = T.SITES[int(pick * len(T.SITES))]
    accession = filing.accession
    name = slug(title)
    return NewsItem(
        symbol=c.ticker,
        published=stamp,
        title=title,
        site=site,
        text=text,
        url=f"https://{site}/news/{stamp[:10].replace('-', '/')}/{name}-c{accession[-6:]}",
        image=f"https://images.{site}/news/{name}-{stamp[:10].replace('-', '')}.jpg",
        tone="positive" if sign > 0 else "negative",
        flavour="other",
        prediction_index=int(sessions.prediction_index(np.array([wall]))[0]),
        chatter_on=accession,
    )
