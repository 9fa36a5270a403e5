"""What others write about the demo companies: an analyst note (its last close taken from
the demo's own price file on the note's date) and a sector outlook, with question/answer
pairs whose answers appear verbatim in the text."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import numpy as np

from finkg.demo.document_text import Document, fill
from finkg.demo.filing_text import long_date
from finkg.demo.prices import PricePanel
from finkg.demo.universe import Company

ANALYST = """
Rating: {rating}. Price target: {target}. Last close: {price}.

Summary

We initiate coverage of {short} with an {rating} rating and a twelve-month price target of
{target}, which implies upside of {upside:.1f}% from the last close of {price}. {short} is a
well-run company in the {industry} industry with a clear lead in its core products, a loyal
customer base and a balance sheet that leaves room for investment.

Estimates

We expect earnings per share of {eps} for fiscal {year} and ${eps2:.2f} for fiscal
{next_year}. Our fiscal {year} revenue estimate is {rev}, with gross margin of {gm:.1f}% and
operating margin of {om:.1f}%. We assume the share count stays flat, with repurchases
offsetting grants to employees.

Valuation

Our price target applies a multiple of {multiple:.1f} times our fiscal {next_year} earnings
estimate, a discount to the peer group that we think is too wide given the company's record
of execution. On our numbers the shares trade at {pe:.1f} times fiscal {year} earnings.

Investment thesis

First, the core business is gaining share. Our checks with customers suggest that {short} won
more new accounts than its two closest competitors combined over the last two quarters,
helped by shorter delivery times and a broader range of products. Second, margins have room
to expand: the company is moving production to newer lines that need fewer people and less
energy per unit, and management has a long record of keeping costs in line with volumes.
Third, the balance sheet is conservative, which gives the company room to buy back shares or
to make small purchases of technology businesses without straining its finances.

What would change our mind

We would revisit our rating if order growth slowed for two quarters in a row, if the company
lost a top-five customer, or if management chose to spend heavily on a large purchase outside
its core markets. We would also become more cautious if gross margin fell below the level of
two years ago, because that would suggest the company is losing pricing power.

Risks

The main risks to our view are a slowdown in customer spending, pricing pressure from larger
competitors, delays in new products and higher input costs. A stronger dollar would also
reduce reported revenue from outside the United States, which we estimate at {abroad:.1f}% of
the total.
"""


def analyst_note(
    rng: np.random.Generator, c: Company, panel: PricePanel, days: Sequence[date]
) -> Document:
    i = min(40, len(days) - 1)
    price = float(panel.stocks[c.ticker].close[i])
    target = round(price * rng.uniform(1.1, 1.35))
    eps1 = rng.uniform(1.5, 6.0)
    eps2 = eps1 * rng.uniform(1.08, 1.22)
    year = days[i].year
    v = {
        "rating": "Outperform",
        "target": f"${target}",
        "price": f"${price:.2f}",
        "upside": (target / price - 1) * 100,
        "short": c.short,
        "industry": c.industry,
        "eps": f"${eps1:.2f}",
        "eps2": eps2,
        "year": year,
        "next_year": year + 1,
        "rev": f"${rng.uniform(1.2, 8.0):.2f} billion",
        "gm": rng.uniform(40, 60),
        "om": rng.uniform(12, 25),
        "multiple": target / eps2,
        "pe": price / eps1,
        "abroad": rng.uniform(20, 45),
    }
    title = f"Equity Research Note: {c.name} ({c.ticker})"
    text = fill([title, f"Date: {long_date(days[i])}"], ANALYST, v)
    qa = (
        (f"What is the analyst's price target for {c.short}?", str(v["target"])),
        (f"What rating does the analyst give {c.short}?", str(v["rating"])),
        (
            f"What earnings per share does the analyst expect for {c.short} in fiscal {year}?",
            str(v["eps"]),
        ),
    )
    return Document(
        f"documents/{c.ticker.lower()}_analyst_note.txt",
        title,
        days[i].isoformat(),
        (c.ticker,),
        text,
        qa,
    )


SECTOR = """
Market size and growth

We estimate that the {market} market served by the companies in our coverage was worth {size}
last year and will grow by {growth} a year over the next three years. Growth should come from
new customers, from replacement of older equipment and from price increases that have so far
stuck.

Competitive landscape

The market remains fragmented, and the largest companies in our coverage together hold less
than three quarters of it. {shares} The rest of the market is split among many smaller firms,
most of them private. We expect consolidation to continue as smaller firms struggle with the
cost of meeting new standards.

What we are watching

First, input costs: prices for the main components rose by {inputs:.1f}% last year, and not
every company passed the increase on. Second, capacity: several companies announced new
sites, which could weigh on prices if demand slows. Third, regulation: proposed rules would
require new reporting from every company in the sector from next year.

Pricing and margins

Companies in the sector raised list prices twice over the last eighteen months. So far
customers have accepted the increases, partly because supply was tight and partly because the
products are a small part of their total costs. We expect pricing to become harder from here
as new capacity comes on line, and we think margins will depend more on cost control than on
price in the next two years. The companies with the newest plants and the most automated
processes should do best.

Capital spending

Capital spending across the companies in our coverage rose sharply last year, and announced
plans imply a further increase this year. Most of the money is going to new production lines
and to upgrades of existing sites. We think the spending is justified by demand for now, but
it raises the risk of too much capacity if the economy slows. Investors should watch order
books closely in the coming quarters.

Conclusion

We stay positive on the sector. We prefer companies with a strong share of the market, a
record of passing on costs and a balance sheet that can fund new capacity without new equity.
"""


def sector_outlook(
    rng: np.random.Generator, companies: Sequence[Company], sector: str, day: date
) -> Document:
    members = [c for c in companies if c.sector == sector]
    size, growth = rng.uniform(20, 90), rng.uniform(2, 9)
    shares = rng.dirichlet(np.ones(len(members) + 1)) * rng.uniform(40, 70)
    sentences = [
        f"{c.short} ({c.ticker}) holds an estimated {s:.1f}% share of the market."
        for c, s in zip(members, shares, strict=False)
    ]
    market = sector.lower()
    v = {
        "market": market,
        "size": f"${size:.1f} billion",
        "growth": f"{growth:.1f}%",
        "shares": " ".join(sentences),
        "inputs": rng.uniform(3, 12),
    }
    title = f"{sector} Sector Outlook"
    text = fill([title, f"Date: {long_date(day)}"], SECTOR, v)
    qa = (
        (
            f"How large was the {market} market last year, according to the sector outlook?",
            str(v["size"]),
        ),
        (
            f"What annual growth does the sector outlook expect for the {market} market?",
            str(v["growth"]),
        ),
        (f"What share of the {market} market does {members[0].short} hold?", f"{shares[0]:.1f}%"),
    )
    return Document(
        f"documents/{market}_sector_outlook.txt",
        title,
        day.isoformat(),
        tuple(c.ticker for c in members),
        text,
        qa,
    )
