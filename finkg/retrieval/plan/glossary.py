"""Standard financial terms as questions write them and as filings print them (used by
`query_plan`): for each, the words a filing's statements use, the statements it is read
from (income, balance, cash flow, equity: `kg.statements` kinds) and, for a ratio or a
derived metric, the line items it is computed from. Accounting vocabulary only: no
company, document or benchmark is named here.

>>> [t.words for t in GLOSSARY if t.pattern.search("What was capex?")]
['capital expenditures purchases of property plant and equipment additions to property']
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    """A glossary entry: how questions write it, the words filings use, where it is read
    from, and (for a ratio) the line items it is computed from."""

    pattern: re.Pattern[str]
    words: str
    statements: tuple[str, ...]
    items: tuple[str, ...] = ()


def _t(pattern: str, words: str, statements: str, items: str = "") -> Term:
    return Term(
        re.compile(rf"(?<![\w&]){pattern}(?![\w&])", re.I),
        words,
        tuple(s.strip() for s in statements.split(",") if s.strip()),
        tuple(i.strip() for i in items.split(";") if i.strip()),
    )


IS, BS, CF = "income", "balance", "cash flow"
GLOSSARY: tuple[Term, ...] = (
    # ratios first: their line items come from several statements
    _t(
        r"quick\s+ratio|acid[- ]test",
        "quick ratio current assets current liabilities",
        BS,
        "cash and cash equivalents; marketable securities short-term investments; "
        "accounts receivable net; total current liabilities",
    ),
    _t(
        r"current\s+ratio|working\s+capital|liquidity",
        "total current assets total current liabilities",
        BS,
        "total current assets; total current liabilities",
    ),
    _t(
        r"inventory\s+turnover",
        "inventory turnover cost of sales inventories",
        f"{IS},{BS}",
        "cost of sales cost of goods sold; inventories",
    ),
    _t(
        r"days\s+payables?\s+outstanding|\bDPO\b",
        "accounts payable cost of sales inventories",
        f"{IS},{BS}",
        "accounts payable; cost of sales cost of goods sold; inventories",
    ),
    _t(
        r"days\s+sales\s+outstanding|\bDSO\b",
        "accounts receivable revenue",
        f"{IS},{BS}",
        "accounts receivable net; total revenue net sales",
    ),
    _t(
        r"fixed\s+asset\s+turnover",
        "revenue property plant and equipment net",
        f"{IS},{BS}",
        "total revenue net sales; property plant and equipment net",
    ),
    _t(
        r"(?:total\s+)?asset\s+turnover",
        "revenue total assets",
        f"{IS},{BS}",
        "total revenue net sales; total assets",
    ),
    _t(
        r"return\s+on\s+(?:total\s+)?assets|\bROA\b",
        "net income total assets",
        f"{IS},{BS}",
        "net income; total assets",
    ),
    _t(
        r"return\s+on\s+(?:shareholders'?\s+|stockholders'?\s+)?equity|\bROE\b",
        "net income total equity",
        f"{IS},{BS}",
        "net income; total shareholders equity",
    ),
    _t(
        r"interest\s+coverage",
        "operating income interest expense",
        IS,
        "operating income; interest expense",
    ),
    _t(
        r"operating\s+cash\s+flow\s+ratio",
        "net cash provided by operating activities total current liabilities",
        f"{CF},{BS}",
        "net cash provided by operating activities; total current liabilities",
    ),
    _t(
        r"free\s+cash\s+flows?",
        "net cash provided by operating activities purchases of property plant and equipment",
        CF,
        "net cash provided by operating activities; purchases of property plant and equipment",
    ),
    _t(
        r"(?:dividend\s+)?payout\s+ratio",
        "dividends paid net income",
        f"{CF},{IS}",
        "cash dividends paid; net income",
    ),
    _t(
        r"capital[- ]intensive|capital\s+intensity",
        "capital expenditures purchases of property plant and equipment total assets revenue",
        f"{CF},{BS}",
        "purchases of property plant and equipment; property plant and equipment net; total assets",
    ),
    _t(
        r"unadjusted\s+EBITDA|\bEBITDA\b",
        "operating income depreciation and amortization",
        f"{IS},{CF}",
        "operating income; depreciation and amortization",
    ),
    _t(
        r"operating\s+margins?",
        "operating income revenue net sales",
        IS,
        "operating income; total revenue net sales",
    ),
    _t(
        r"gross\s+(?:profit\s+)?margins?",
        "gross profit gross margin revenue cost of sales",
        IS,
        "total revenue net sales; cost of sales cost of goods sold",
    ),
    _t(r"net\s+(?:profit\s+)?margins?", "net income revenue", IS, "net income; total revenue"),
    _t(
        r"effective\s+tax\s+rate",
        "provision for income taxes income before income taxes",
        IS,
        "provision for income taxes; income before income taxes",
    ),
    _t(
        r"(?:debt|leverage)\s+(?:to|ratio)|debt[- ]to[- ]equity",
        "total debt long-term debt total equity",
        BS,
        "long-term debt; total shareholders equity",
    ),
    # line items
    _t(
        r"cap(?:ital)?\s*ex(?:penditures?)?|capital\s+spending",
        "capital expenditures purchases of property plant and equipment additions to property",
        CF,
    ),
    _t(
        r"(?:cash\s+(?:flows?\s+)?from|net\s+cash\s+(?:provided\s+by|from))\s+operati\w+|"
        r"operating\s+cash\s+flows?",
        "net cash provided by operating activities",
        CF,
    ),
    _t(
        r"investing\s+activities|financing\s+activities",
        "net cash used in investing financing activities",
        CF,
    ),
    _t(r"dividends?", "dividends paid cash dividends declared per share", f"{CF},equity"),
    _t(
        r"(?:share|stock)\s+(?:repurchases?|buybacks?)|buybacks?",
        "repurchases of common stock treasury stock",
        CF,
    ),
    _t(r"depreciation|amortization|\bD&A\b", "depreciation and amortization", f"{CF},{IS}"),
    _t(
        r"cost\s+of\s+(?:goods\s+sold|sales|revenues?)|\bCOGS\b",
        "cost of sales cost of goods sold cost of revenue",
        IS,
    ),
    _t(r"gross\s+profit", "gross profit gross margin", IS),
    _t(
        r"operating\s+(?:income|profit|loss)|income\s+from\s+operations|\bEBIT\b",
        "operating income income from operations",
        IS,
    ),
    _t(
        r"net\s+(?:income|earnings|profit|loss)(?:\s+attributable)?",
        "net income net earnings attributable",
        IS,
    ),
    _t(r"earnings\s+per\s+share|\bEPS\b", "earnings per share diluted basic", IS),
    _t(
        r"revenues?|net\s+sales|top[- ]line|(?<!cost of )sales",
        "revenue revenues net sales total net revenue",
        IS,
    ),
    _t(
        r"SG&A|selling,?\s+general\s+and\s+administrative",
        "selling general and administrative expenses",
        IS,
    ),
    _t(r"R&D|research\s+and\s+development", "research and development expenses", IS),
    _t(r"interest\s+expense", "interest expense", IS),
    _t(r"restructuring", "restructuring charges costs", IS),
    _t(r"income\s+tax(?:es)?", "provision for income taxes", IS),
    _t(r"total\s+assets", "total assets", BS),
    _t(r"inventor(?:y|ies)", "inventories", BS),
    _t(r"(?:accounts\s+)?receivables?", "accounts receivable net", BS),
    _t(r"(?:accounts\s+)?payables?", "accounts payable", BS),
    _t(
        r"\bPP&E\b|property,?\s+plant,?\s+and\s+equipment|fixed\s+assets",
        "property plant and equipment net",
        BS,
    ),
    _t(
        r"(?:long[- ]term\s+|total\s+)?debt|borrowings",
        "long-term debt short-term borrowings current portion",
        BS,
    ),
    _t(
        r"cash\s+and\s+cash\s+equivalents|cash\s+(?:balance|position)",
        "cash and cash equivalents",
        BS,
    ),
    _t(r"goodwill|intangible\s+assets?", "goodwill intangible assets", BS),
    _t(
        r"(?:shareholders|stockholders)['’]?\s+equity|total\s+equity",
        "total shareholders equity",
        BS,
    ),
    _t(r"current\s+(?:assets|liabilities)", "total current assets total current liabilities", BS),
)


__all__ = ["GLOSSARY", "Term"]
