"""Headline and body templates for synthetic news: one tone and one event flavour each.

Words are chosen so that a keyword mapper can read both: tone words (``beats``,
``strong``, ``fell``, ``weak``, ...) appear only in items of that tone, and flavour
words (earnings/revenue/EPS; lawsuit/litigation/court/settlement/investigation;
acquisition/merger/contract/deal/partnership; CEO/CFO/board/appointed/resigned) appear
only in items of that flavour.  Neutral items and the ``other`` flavour carry none.
"""

from __future__ import annotations

TONES: tuple[str, ...] = ("positive", "negative", "neutral")
FLAVOURS: tuple[str, ...] = ("earnings", "legal", "deals", "management", "other")

# (flavour, tone) -> ((headline, lead), ...); the lead follows "<Name> (Nasdaq:<TICKER>) ".
TEMPLATES: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {
    ("earnings", "positive"): (
        (
            "{short} Beats Earnings Estimates as Quarterly Revenue Jumps {pct}%",
            "reported quarterly earnings of ${eps} per share, beating analyst estimates, as "
            "revenue jumped {pct}% from a year earlier.",
        ),
        (
            "{short} ({ticker}) Tops Q{q} Earnings Forecasts, Lifts Full-Year Guidance",
            "posted strong quarterly results, with EPS of ${eps} topping the consensus "
            "forecast, and lifted its full-year guidance.",
        ),
        (
            "{short} Posts Record Quarterly Revenue; EPS of ${eps} Beats Consensus",
            "reported record quarterly revenue, up {pct}% year over year, and earnings of "
            "${eps} per share, ahead of expectations.",
        ),
    ),
    ("earnings", "negative"): (
        (
            "{short} Misses Earnings Estimates as Quarterly Revenue Falls {pct}%",
            "reported quarterly earnings of ${eps} per share, short of analyst estimates, as "
            "revenue fell {pct}% from a year earlier.",
        ),
        (
            "{short} ({ticker}) Q{q} Earnings Disappoint; Company Cuts Guidance",
            "posted weak quarterly results, with EPS of ${eps} below the consensus forecast, "
            "and cut its full-year guidance.",
        ),
        (
            "{short} Shares Slide After Weak Quarterly Revenue",
            "reported weak quarterly revenue, down {pct}% year over year, and earnings of "
            "${eps} per share, below expectations.",
        ),
    ),
    ("earnings", "neutral"): (
        (
            "{short} to Report Q{q} Earnings on {when}",
            "will release its quarterly earnings after the market close on {when} and host a "
            "call for investors.",
        ),
        (
            "{short} Schedules Call to Discuss Quarterly Results",
            "said it will discuss its quarterly results and revenue on a call with investors "
            "on {when}.",
        ),
        (
            "What to Expect From {short}'s Q{q} Earnings Report",
            "is expected to report quarterly earnings of about ${eps} per share when it "
            "publishes results on {when}.",
        ),
    ),
    ("legal", "positive"): (
        (
            "{short} Wins Dismissal of Patent Lawsuit",
            "said a federal court dismissed a patent lawsuit brought against the company, a "
            "favorable outcome that removes a long-running overhang.",
        ),
        (
            "Court Rules in Favor of {short} in ${amt} Million Litigation",
            "won a favorable ruling in litigation over a disputed ${amt} million claim.",
        ),
        (
            "{short} Settles Lawsuit on Favorable Terms",
            "agreed to a settlement that ends a lawsuit on favorable terms and requires no "
            "payment by the company.",
        ),
    ),
    ("legal", "negative"): (
        (
            "{short} Hit With Class-Action Lawsuit Over Disclosures",
            "was named in a class-action lawsuit alleging misleading disclosures, and shares "
            "fell on the news.",
        ),
        (
            "Regulators Open Investigation Into {short}; Shares Slide",
            "disclosed that regulators have opened an investigation into its sales "
            "practices, a development analysts called a clear negative.",
        ),
        (
            "{short} Loses Patent Lawsuit, Faces ${amt} Million in Damages",
            "lost a patent lawsuit and may owe ${amt} million in damages after a jury in "
            "federal court ruled against the company.",
        ),
    ),
    ("legal", "neutral"): (
        (
            "{short} Comments on Pending Litigation",
            "issued a statement on pending litigation and said it will respond to the "
            "complaint in court.",
        ),
        (
            "Court Sets Hearing Date in {short} Patent Case",
            "said a court has scheduled a hearing in a patent lawsuit for {when}.",
        ),
        (
            "{short} Files Response in Ongoing Lawsuit",
            "filed its response in an ongoing lawsuit and said it does not comment further on "
            "litigation.",
        ),
    ),
    ("deals", "positive"): (
        (
            "{short} to Acquire {target} in ${amt} Million Deal",
            "agreed to acquire {target} for ${amt} million, an acquisition it expects to boost "
            "growth.",
        ),
        (
            "{short} Wins ${amt} Million Multi-Year Contract",
            "won a multi-year contract worth ${amt} million, the largest in its history.",
        ),
        (
            "{short} Signs Strategic Partnership With {target}; Shares Rally",
            "signed a strategic partnership with {target} that analysts said gives it a strong "
            "position; shares rallied.",
        ),
    ),
    ("deals", "negative"): (
        (
            "{short} Terminates Planned Acquisition of {target}",
            "terminated its planned ${amt} million acquisition of {target}, a setback that "
            "analysts called disappointing.",
        ),
        (
            "{short} Loses Key Customer Contract",
            "lost a key customer contract worth about ${amt} million a year, and shares fell.",
        ),
        (
            "Merger Talks Between {short} and {target} Collapse",
            "said merger talks with {target} collapsed, ending a deal that investors had "
            "hoped for.",
        ),
    ),
    ("deals", "neutral"): (
        (
            "{short} Completes Previously Announced Acquisition of {target}",
            "completed its previously announced acquisition of {target}.",
        ),
        (
            "{short} Files Merger Documents for {target} Transaction",
            "filed documents related to its proposed merger with {target}.",
        ),
        (
            "{short} Extends Supply Contract With {target}",
            "extended an existing supply contract with {target} on unchanged terms.",
        ),
    ),
    ("management", "positive"): (
        (
            "{short} Appoints Industry Veteran {person} as CEO",
            "appointed {person}, an industry veteran with a strong record, as chief executive "
            "officer, effective immediately.",
        ),
        (
            "{short} Names {person} CFO; Analysts Upgrade Shares",
            "named {person} as CFO, and two analysts upgraded the shares, citing strong "
            "leadership.",
        ),
        (
            "{short} Shares Gain as New CEO {person} Takes Over",
            "said {person} has taken over as CEO, and shares gained on hopes of strong execution.",
        ),
    ),
    ("management", "negative"): (
        (
            "{short} CEO {person} Resigns Unexpectedly",
            "said chief executive {person} resigned unexpectedly, and shares fell sharply.",
        ),
        (
            "{short} CFO Departs Amid Accounting Review",
            "said its CFO, {person}, departed amid a review of accounting practices, a "
            "development analysts called a clear negative.",
        ),
        (
            "{short} Shares Slide as Board Ousts CEO {person}",
            "said its board of directors removed CEO {person}; shares slid on the leadership "
            "turmoil.",
        ),
    ),
    ("management", "neutral"): (
        (
            "{short} Announces Changes to Its Board of Directors",
            "announced that {person} has joined its board of directors.",
        ),
        (
            "{short} to Hold Annual Shareholder Meeting on {when}",
            "will hold its annual shareholder meeting on {when}, where the board will present "
            "its nominees.",
        ),
        (
            "{short} Appoints {person} as Chief Operating Officer",
            "appointed {person} as chief operating officer, reporting to the CEO.",
        ),
    ),
    ("other", "positive"): (
        (
            "{short} Launches New Product Line to Strong Demand",
            "launched a new product line and said early demand has been strong.",
        ),
        (
            "Analyst Upgrades {short} to Buy on Strong Outlook",
            "was upgraded to buy by an analyst who cited a strong product pipeline.",
        ),
        (
            "{short} Shares Surge on Expansion Plans",
            "unveiled plans to expand its capacity, and shares surged {pct}%.",
        ),
    ),
    ("other", "negative"): (
        (
            "{short} Recalls Products After Quality Problems",
            "announced a recall of some products after quality problems, and shares fell.",
        ),
        (
            "Analyst Downgrades {short} to Sell on Weak Outlook",
            "was downgraded to sell by an analyst who cited a weak product pipeline.",
        ),
        (
            "{short} Shares Plunge After Production Halt",
            "halted production at a key facility, and shares plunged {pct}%.",
        ),
    ),
    ("other", "neutral"): (
        (
            "{short} to Present at Investor Conference on {when}",
            "will present at an investor conference on {when}.",
        ),
        (
            "{short} Publishes Annual Sustainability Report",
            "published its annual sustainability report.",
        ),
        ("{short} Opens New Office in {place}", "opened a new office in {place}."),
    ),
}

TONE_SENTENCES: dict[str, tuple[str, ...]] = {
    "positive": (
        "Shares rose in active trading after the announcement.",
        "Several analysts said the news was a clear positive and raised their price targets.",
        "Management said momentum remains strong across its markets.",
        "The stock has gained {pct2}% over the past month.",
    ),
    "negative": (
        "Shares fell in active trading after the announcement.",
        "Several analysts called the news a clear negative and cut their price targets.",
        "Management said conditions remain weak across its markets.",
        "The stock has lost {pct2}% over the past month.",
    ),
    "neutral": (
        "Shares were little changed in early trading.",
        "Analysts said the announcement was largely expected.",
        "The company did not provide further details.",
        "A spokesperson declined to comment beyond the statement.",
    ),
}

BOILERPLATE: tuple[str, ...] = (
    "{short} is a company in the {industry} industry based in {city}, {state}.",
    "The company's shares trade on the Nasdaq under the symbol {ticker}.",
    "{short} employs about {staff} people.",
    "{short} was founded in {founded}.",
)

PERSONS: tuple[str, ...] = (
    "Mara Quillon",
    "Theo Brandvik",
    "Ines Carrow",
    "Jonah Pellett",
    "Ruth Amberley",
    "Samir Ostrand",
    "Lena Vasquell",
    "Owen Threlkeld",
    "Priya Danvers",
    "Colm Ashgrove",
)
TARGETS: tuple[str, ...] = (
    "Altavane Labs",
    "Brightmere Robotics",
    "Corvel Logistics",
    "Duskline Materials",
    "Everlake Software",
    "Foxmere Instruments",
    "Greyhollow Chemicals",
    "Hartwell Sensors",
)
PLACES: tuple[str, ...] = ("Lakeport", "Ridgemont", "Saltmarsh", "Glenbury", "Westford Falls")
SITES: tuple[str, ...] = (
    "synthwire.example",
    "marketpulse.example",
    "finledger.example",
    "tickerdaily.example",
)
REWRITE_TITLES: tuple[str, ...] = ("UPDATE: {title}", "{title} (Updated)", "Report: {title}")
