"""What a demo company says itself: an annual-report excerpt (letter to shareholders,
results, liquidity, outlook) and an earnings-call excerpt, with question/answer pairs whose
answers appear verbatim in the text."""

from __future__ import annotations

from datetime import date, timedelta

import numpy as np

from finkg.demo.document_text import Document, fill, money
from finkg.demo.filing_text import long_date
from finkg.demo.universe import Company

ANNUAL = """
Letter to shareholders

Fiscal {year} was a year of steady progress for {short}. Total revenue reached {rev}, up
{growth} from {prior} in fiscal {prev_year}. Demand held up across our main markets, and we
kept investing in the products our customers ask for most. We ended the year with {staff}
employees, most of them in engineering, operations and customer support, and with a balance
sheet that gives us room to keep investing through the cycle.

Results of operations

Gross margin was {gm} of revenue in fiscal {year}, compared with {gm_prior:.1f}% a year
earlier, as higher volumes spread fixed costs and our purchasing teams held input prices
steady. Research and development expense was {rd:.1f}% of revenue, or {rd_money}, reflecting
new programmes in our core {industry} business. Operating margin was {op:.1f}%, and operating
income was {op_money}.

Our business is organised in two segments. The Products segment contributed {seg:.1f}% of
revenue, or {seg_money}; the Services segment contributed the remaining {seg_rest:.1f}%, or
{rest_money}. Services revenue grew faster than Products revenue, helped by longer contracts
with existing customers and by renewals at higher rates.

Liquidity and capital resources

At the end of fiscal {year} we held cash and cash equivalents of {cash} and long-term debt of
{debt}. During the year we returned {buyback} to shareholders through share repurchases.
Capital expenditure was {capex}, mainly for new production capacity and for the systems that
support it. We believe that cash on hand and cash from operations will cover our needs for at
least the next twelve months, including the planned expansion of our site in {city}, {state}.

Outlook and risks

We enter fiscal {next_year} with a healthy order book. Our results depend on customer demand,
competition, the cost and availability of components and energy, exchange rates and general
economic conditions, any of which can change quickly. We describe these risks in more detail
in our annual report on Form 10-K.

Thank you to our customers, employees and shareholders for their continued support.
"""


def annual_report(rng: np.random.Generator, c: Company, first: date) -> Document:
    year, published = first.year - 1, first + timedelta(days=45)
    rev, growth = rng.uniform(2000, 6000), rng.uniform(4, 18)
    gm, rd = rng.uniform(38, 66), rng.uniform(6, 15)
    op = gm - rd - rng.uniform(10, 18)
    seg = rng.uniform(55, 75)
    v = {
        "year": year,
        "prev_year": year - 1,
        "next_year": year + 1,
        "short": c.short,
        "industry": c.industry,
        "city": c.city,
        "state": c.state,
        "rev": money(rev),
        "growth": f"{growth:.1f}%",
        "prior": money(rev / (1 + growth / 100)),
        "staff": f"{int(rng.integers(20, 140)) * 100:,}",
        "gm": f"{gm:.1f}%",
        "gm_prior": gm - rng.uniform(0.5, 2.5),
        "rd": rd,
        "rd_money": money(rev * rd / 100),
        "op": op,
        "op_money": money(rev * op / 100),
        "seg": seg,
        "seg_rest": 100 - seg,
        "seg_money": money(rev * seg / 100),
        "rest_money": money(rev * (1 - seg / 100)),
        "cash": money(rng.uniform(400, 2500)),
        "debt": money(rng.uniform(200, 1500)),
        "buyback": money(rng.uniform(50, 400)),
        "capex": money(rev * rng.uniform(0.03, 0.08)),
    }
    title = f"{c.name}: Annual Report {year} (excerpt)"
    text = fill([title, f"Published {long_date(published)}"], ANNUAL, v)
    qa = (
        (f"What was {c.short}'s total revenue in fiscal {year}?", str(v["rev"])),
        (f"By what percentage did {c.short}'s revenue grow in fiscal {year}?", str(v["growth"])),
        (f"What was {c.short}'s gross margin in fiscal {year}?", str(v["gm"])),
        (f"How many employees did {c.short} have at the end of fiscal {year}?", str(v["staff"])),
        (
            f"How much cash and cash equivalents did {c.short} hold at the end of fiscal {year}?",
            str(v["cash"]),
        ),
    )
    return Document(
        f"documents/{c.ticker.lower()}_annual_report_{year}_excerpt.txt",
        title,
        published.isoformat(),
        (c.ticker,),
        text,
        qa,
    )


CALL = """
Operator: Good afternoon, and welcome to the {short} quarterly earnings call. I will now hand
the call over to the Chief Executive Officer.

Chief Executive Officer: Thank you, and good afternoon, everyone. We had a solid quarter.
Revenue was {rev}, and our backlog grew {backlog} from a year ago, which gives us good
visibility into the rest of the year. Customers continue to consolidate their spending with
fewer suppliers, and we are winning a larger share of those decisions. I want to thank our
teams in {city} and around the world for their work.

Chief Financial Officer: Thanks. Let me add some detail. Gross margin improved by {gm:.1f}
percentage points from the prior quarter as we got better prices on components and ran our
plants at higher utilisation. Operating expenses rose {opex:.1f}%, mostly for engineering
hires. Free cash flow for the quarter was {fcf}. For the full year we plan capital
expenditure of {capex}, most of it for the new production line we announced earlier this
year. We bought back {buyback:.1f} million shares during the quarter.

Analyst: Thanks for taking my question. How should we think about pricing for the rest of
the year?

Chief Financial Officer: We put through a price increase of about {price:.1f}% at the start
of the year and it has held. We do not plan another increase this year.

Analyst: And on the backlog, how much of it converts in the next two quarters?

Chief Executive Officer: Roughly {convert:.0f}% of the backlog is scheduled for delivery in
the next two quarters. The rest is spread over multi-year agreements.

Analyst: Could you say more about the new production line? When does it start to contribute?

Chief Executive Officer: Construction is on schedule. We expect the first output late in the
year and a full contribution next year. The line will roughly double our capacity in the
products where demand has run ahead of supply, and it uses about a third less energy per unit
than our older lines, so it should help margins as well as volumes.

Operator: That concludes today's call. Thank you for joining.
"""


def earnings_call(rng: np.random.Generator, c: Company, day: date) -> Document:
    rev = rng.uniform(300, 1500)
    v = {
        "short": c.short,
        "city": c.city,
        "rev": money(rev),
        "backlog": f"{rng.uniform(5, 25):.1f}%",
        "fcf": money(rev * rng.uniform(0.06, 0.16)),
        "capex": money(rng.uniform(60, 300)),
        "gm": rng.uniform(0.3, 2.0),
        "opex": rng.uniform(2, 9),
        "buyback": rng.uniform(0.2, 1.5),
        "price": rng.uniform(2, 6),
        "convert": rng.uniform(55, 80),
    }
    title = f"{c.name} ({c.ticker}) quarterly earnings call (excerpt)"
    text = fill([title, f"Date: {long_date(day)}"], CALL, v)
    qa = (
        (
            f"What was {c.short}'s free cash flow for the quarter discussed on the call?",
            str(v["fcf"]),
        ),
        (f"By how much did {c.short}'s backlog grow from a year ago?", str(v["backlog"])),
        (f"How much capital expenditure does {c.short} plan for the full year?", str(v["capex"])),
    )
    return Document(
        f"documents/{c.ticker.lower()}_earnings_call_excerpt.txt",
        title,
        day.isoformat(),
        (c.ticker,),
        text,
        qa,
    )
