"""Chunk enrichment (paper 003 stage 3) and the event-type mapper (paper 000 appendix A).

Deterministic analyzers over text, with no model:

- `tickers`: symbols written as tickers (`$AAPL`, `NASDAQ: AAPL`, `(AAPL)`) that the graph
  knows, plus companies named by their names without legal suffixes, capitalized as
  registered ("Apple", not "apple");
- `topics`: the analyst topics of paper 003 (risk factors, governance, guidance, liquidity,
  capital allocation, market events) by counted cue phrases;
- `event_type`: paper 000's coarse event type: the type with the most cue matches in the
  lower-cased headline and summary; no cue, or a tie at the top, is Other/Mixed.

>>> event_type("Apple Reports Big Q2 Earnings Beat, Driven By Record Services Revenue")
'Earnings & Guidance'
>>> event_type("Acme names new CEO after lawsuit")  # one management cue, one legal cue: a tie
'Other/Mixed'
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from pyoxigraph import NamedNode

from finkg.ontology.terms import FKG

OTHER = "Other/Mixed"
# Paper 000, Table 5 (appendix A), verbatim.
EVENT_CUES: dict[str, tuple[str, ...]] = {
    "Earnings & Guidance": (
        "earnings",
        "eps",
        "revenue",
        "sales",
        "quarter",
        "quarterly results",
        "fiscal q",
        "beat",
        "miss",
        "guidance",
        "outlook",
        "forecast",
        "raises guidance",
        "cuts guidance",
        "margin",
        "ebitda",
        "profit",
        "loss",
    ),
    "Legal & Regulatory": (
        "lawsuit",
        "litigation",
        "class action",
        "investigation",
        "probe",
        "subpoena",
        "settlement",
        "fine",
        "penalty",
        "enforcement",
        "antitrust",
        "doj",
        "ftc",
        "fda",
        "fda approval",
        "regulatory approval",
        "recall",
        "compliance",
        "consent order",
    ),
    "Capital & Transactions": (
        "merger",
        "acquisition",
        "m&a",
        "takeover",
        "buyout",
        "deal",
        "divestiture",
        "spin-off",
        "ipo",
        "offering",
        "secondary offering",
        "debt",
        "notes",
        "refinancing",
        "credit facility",
        "buyback",
        "repurchase",
        "dividend",
        "stake",
        "investment",
    ),
    "Management & Operations": (
        "ceo",
        "cfo",
        "coo",
        "board",
        "appoints",
        "resigns",
        "departure",
        "management change",
        "partnership",
        "contract",
        "customer win",
        "product launch",
        "supply chain",
        "facility",
        "plant",
        "production",
        "layoffs",
        "restructuring",
        "workforce",
    ),
}
EVENT_CONCEPTS: dict[str, NamedNode] = {
    "Earnings & Guidance": FKG.EarningsGuidance,
    "Legal & Regulatory": FKG.LegalRegulatory,
    "Capital & Transactions": FKG.CapitalTransactions,
    "Management & Operations": FKG.ManagementOperations,
    OTHER: FKG.OtherMixed,
}
TOPIC_CUES: dict[str, tuple[str, ...]] = {
    "risk factors": (
        "risk factor*",
        "risks",
        "uncertaint*",
        "adverse",
        "could harm",
        "material weakness*",
        "exposure*",
        "volatility",
    ),
    "governance": (
        "board of directors",
        "governance",
        "audit committee",
        "director*",
        "compensation committee",
        "shareholder vote",
        "proxy",
        "independence",
    ),
    "guidance": (
        "guidance",
        "outlook",
        "expect*",
        "forecast*",
        "full-year",
        "full year",
        "next quarter",
        "projected",
    ),
    "liquidity": (
        "liquidity",
        "cash and cash equivalents",
        "cash flow*",
        "credit facilit*",
        "working capital",
        "debt maturit*",
        "borrowing*",
        "covenant*",
    ),
    "capital allocation": (
        "buyback*",
        "repurchase*",
        "dividend*",
        "capital expenditure*",
        "capex",
        "acquisition*",
        "capital allocation",
        "investment*",
    ),
    "market events": (
        "market share",
        "competition",
        "demand",
        "pricing",
        "supply chain",
        "tariff",
        "macroeconomic",
        "interest rate",
    ),
}


def _cue(cue: str) -> str:
    """A cue as a regex: whole words, or a stem when written with a trailing '*'."""
    stem = cue.endswith("*")
    return r"\b" + re.escape(cue.rstrip("*")) + ("" if stem else r"\b")


_EVENT_PATTERNS = {k: [re.compile(_cue(c)) for c in v] for k, v in EVENT_CUES.items()}
_TOPIC_PATTERNS = {k: re.compile("|".join(_cue(c) for c in v)) for k, v in TOPIC_CUES.items()}
_TICKER = re.compile(
    r"\$([A-Z]{1,5}(?:\.[A-Z])?)\b|\b(?:NASDAQ|NYSE|Nasdaq|NYSE American)\s*:\s*"
    r"([A-Z]{1,5}(?:\.[A-Z])?)\b|\(([A-Z]{1,5}(?:\.[A-Z])?)\)"
)
_NAME_SUFFIX = re.compile(
    r"\s*\((?:synthetic)\)|,?\s+(?:inc|corp|corporation|co|company|ltd|"
    r"plc|holdings|group|sa|ag|nv)\.?$",
    re.IGNORECASE,
)


def event_counts(text: str) -> Counter[str]:
    """Matched cue count per event type (each cue counted once per occurrence)."""
    lowered = text.lower()
    return Counter(
        {
            kind: sum(len(p.findall(lowered)) for p in patterns)
            for kind, patterns in _EVENT_PATTERNS.items()
        }
    )


def event_type(text: str) -> str:
    """The event type with the most cue matches; no match or a tie at the top: Other/Mixed."""
    counts = event_counts(text).most_common()
    if not counts or counts[0][1] == 0 or (len(counts) > 1 and counts[1][1] == counts[0][1]):
        return OTHER
    return counts[0][0]


def topics(text: str) -> list[str]:
    """Analyst topics with at least one cue, the most cued first (ties alphabetical)."""
    lowered = text.lower()
    counts = {k: len(p.findall(lowered)) for k, p in _TOPIC_PATTERNS.items()}
    return sorted((k for k, n in counts.items() if n), key=lambda k: (-counts[k], k))


def company_name_key(name: str) -> str:
    """A company name without legal suffixes, for matching in text ("Apple Inc." → "Apple")."""
    previous = None
    while previous != name:
        previous, name = name, _NAME_SUFFIX.sub("", name).strip()
    return name


def tickers(text: str, known: Mapping[str, str]) -> list[str]:
    """Tickers the text mentions, among `known` (ticker → company name), sorted."""
    found = {t for m in _TICKER.finditer(text) for t in m.groups() if t and t in known}
    for ticker, name in known.items():  # names as capitalized in the text: "Apple", not "apple"
        key = company_name_key(name)
        if len(key) >= 3 and re.search(r"\b" + re.escape(key) + r"\b", text):
            found.add(ticker)
    return sorted(found)
