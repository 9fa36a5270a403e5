"""Market-data tools for live-data sub-questions (paper 002 §4.5): named SPARQL queries
over the market graph, offered to the reader as functions.

Paper 002 calls external APIs for "current stock prices or recent corporate actions";
finkg's live data is its own market graph, read point-in-time: a tool sees only bars and
summaries available strictly before the answer's instant. The reader is shown each tool's
name, description and arguments and replies with a `ToolCall` (grammar-constrained JSON);
finkg checks the call, runs the tool's query and hands the result back as an evidence
block the answer can cite.

A sub-question goes to the tools only when it asks about prices (`LIVE`); the reader may
still answer "none", and the sub-question then goes to document retrieval.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass

from pyoxigraph import NamedNode

from finkg import queries
from finkg.errors import InputError
from finkg.kg.iri import mint
from finkg.kg.store import BaseStore
from finkg.queries.results import python_value
from finkg.reader.llm import LLM
from finkg.reader.read import ReadResult, prompt, read
from finkg.reader.schemas import ToolCall

LIVE = re.compile(
    r"\b(share|stock)\s+price|\bclos(e|ed|ing)\s+(price|at)|\bprice[sd]?\b|\btrad(ed|ing)\s+at\b"
    r"|\bten[- ]week\b|\b10[- ]week\b|\bpriced\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ToolResult:
    tool: str
    ticker: str
    day: dt.date
    text: str  # what the reader is shown
    node: NamedNode  # the bar or summary it read
    evidence: bool  # whether `node` is fkg:Evidence a citation may point at


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    run: Callable[[BaseStore, NamedNode, dt.date, dt.datetime], ToolResult | None]


def _close(
    store: BaseStore, entity: NamedNode, day: dt.date, before: dt.datetime
) -> ToolResult | None:
    row = queries.select(
        store, "close_before", {"entity": entity, "day": day, "before": before}
    ).first()
    if row is None:
        return None
    r = {k: python_value(v) for k, v in row.as_dict().items() if v is not None}
    adj = f", adjusted close {r['adjClose']}" if "adjClose" in r else ""
    text = f"close of the {r['session']} session: {r['close']}{adj}"
    return ToolResult("close", "", day, text, row.iri("bar"), False)


def _summary(
    store: BaseStore, entity: NamedNode, day: dt.date, before: dt.datetime
) -> ToolResult | None:
    values = {"entity": entity, "day": day, "before": before}
    row = queries.select(store, "summary_before", values).first()
    if row is None:
        return None
    r = {k: python_value(v) for k, v in row.as_dict().items() if v is not None}
    text = (
        f"ten weeks {r['start']} to {r['end']}: high {r['high']}, low {r['low']}, "
        f"average {r['average']}, end {r['endPrice']}"
    )
    return ToolResult("ten_week_summary", "", day, text, row.iri("summary"), True)


TOOLS: dict[str, Tool] = {
    t.name: t
    for t in (
        Tool(
            "close",
            "close(ticker, date): the closing price of the session on that date "
            "(or the last session before it)",
            _close,
        ),
        Tool(
            "ten_week_summary",
            "ten_week_summary(ticker, date): high, low, average and end "
            "price over the ten weeks around that date",
            _summary,
        ),
    )
}


def describe() -> str:
    return "\n".join(f"- {t.description}" for t in TOOLS.values())


def choose(llm: LLM, question: str, *, as_of: dt.datetime, company: str = "") -> ReadResult:
    """The reader's `ToolCall` for `question`."""
    values = {
        "question": question,
        "as_of": as_of.date().isoformat(),
        "tools": describe(),
        "company": company,
    }
    return read(llm, prompt("tool"), values, ToolCall, max_tokens=64)


def call(store: BaseStore, call: ToolCall, *, before: dt.datetime) -> ToolResult | None:
    """Run a checked tool call; None when the tool found nothing before `before`."""
    if call.tool not in TOOLS:
        raise InputError("no such tool", field="tool", value=call.tool, hint=describe())
    try:
        day = dt.date.fromisoformat(call.date)
    except ValueError:
        raise InputError("not a date", field="date", value=call.date) from None
    ticker = call.ticker.strip().upper()
    names = {r.string("ticker") for r in queries.select(store, "company_names")}
    if ticker not in names:
        return None  # a ticker the market graph does not hold: nothing to answer from
    entity = mint("company", ticker, base=store.graphs.base)
    result = TOOLS[call.tool].run(store, entity, min(day, before.date()), before)
    if result is None:
        return None
    return ToolResult(
        result.tool, ticker, day, f"{ticker} {result.text}", result.node, result.evidence
    )
