"""What finkg's agent tools return: the output contracts of `finkg mcp` (their JSON schemas
are the tools' output schemas).

Every result is bounded for a context window: at most `limit` rows, triples, facts or
hops, each text value cut to `MAX_CHARS` characters, and `left_out` says in words what was
not shown, so an agent can narrow its next call instead of guessing.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from finkg.queries.results import Term, python_value

MAX_CHARS = 1000  # characters of one text value in a result
CONTEXT = "finkg://context"  # the resource holding finkg's JSON-LD context


def shown_value(term: Term | None, cuts: list[int]) -> Any:
    """A term as JSON (`python_value`), a long text cut to MAX_CHARS (its full length is
    appended to `cuts`)."""
    value = python_value(term)
    if isinstance(value, str) and len(value) > MAX_CHARS:
        cuts.append(len(value))
        return value[:MAX_CHARS] + f"… [{len(value) - MAX_CHARS} more characters]"
    return value


def cut_note(cuts: list[int]) -> list[str]:
    if not cuts:
        return []
    return [f"{len(cuts)} text value(s) cut to {MAX_CHARS} characters (longest {max(cuts)})"]


class Bounded(BaseModel):
    """How much there was and how much is shown."""

    total: int = Field(description="how many rows, triples or items the read produced")
    shown: int = Field(description="how many of them are in this result")
    left_out: list[str] = Field(
        default_factory=list, description="what this result leaves out, and why"
    )


class QueryResult(Bounded):
    """A SPARQL query's answer."""

    form: Literal["select", "ask", "construct"]
    as_of: str | None = Field(
        None, description="the instant the dataset was cut at: nothing available at or after it"
    )
    graphs: list[str] = Field(description="the named graphs the query could read")
    variables: list[str] = Field(default_factory=list, description="a SELECT's variables")
    rows: list[dict[str, Any]] = Field(
        default_factory=list,
        description="a SELECT's solutions: IRIs and literals as text, numbers as numbers; "
        "an unbound variable is absent",
    )
    boolean: bool | None = Field(None, description="an ASK's answer")
    jsonld: dict[str, Any] | None = Field(
        None, description=f"a CONSTRUCT's triples as compact JSON-LD (context: {CONTEXT})"
    )


class InputInfo(BaseModel):
    name: str
    type: str = Field(description="iri, dateTime (with a zone), date, string, integer, ...")
    many: bool = Field(description="takes a list of values")
    optional: bool
    description: str = ""


class QueryInfo(BaseModel):
    """One packaged query of finkg's library."""

    name: str
    form: str
    summary: str
    inputs: list[InputInfo]
    outputs: list[str]


class Evidence(BaseModel):
    iri: str
    kind: str = Field(description="its class (fkg:NewsArticle, fkg:Chunk, ...)")
    family: str = Field(description="its source family: news, filings, documents, market ...")
    available_at: str = Field(description="when it became knowable, with its zone")
    text: str


class EvidenceResult(Bounded):
    """A company's evidence strictly before an instant, newest first."""

    company: str
    before: str
    evidence: list[Evidence]


class FactsResult(Bounded):
    """A company's statement facts available before an instant."""

    company: str
    as_of: str
    facts: list[dict[str, Any]] = Field(
        description="line item, concept, fiscal year, value, unit, printed figure, page, "
        "and the chunk and document it was read from"
    )


class Hop(BaseModel):
    iri: str
    depth: int
    statements: list[tuple[str, Any]] = Field(description="(predicate, object) pairs")


class AuditResult(Bounded):
    """A node's provenance: what it was derived from, down to source documents and the
    commits that wrote them."""

    node: str
    hops: list[Hop]


class DescribeResult(Bounded):
    """One node's one-hop neighbourhood."""

    node: str
    as_of: str | None
    jsonld: dict[str, Any] = Field(description=f"compact JSON-LD (context: {CONTEXT})")


class Citation(BaseModel):
    id: str
    node: str


class AskResult(BaseModel):
    """An answer of the QA job (papers 002 + 003): computed from statement facts or read
    from retrieved evidence, with its citations and scores; nothing is written."""

    question: str
    as_of: str
    answer: str = Field(description="the answer's summary; empty when no valid answer")
    status: str = Field(description="High, Medium, Requires Review or Critical Issues")
    scores: dict[str, float]
    how: str = Field(description="facts: computed from statement facts; reader: read")
    explanation: list[str] = Field(
        default_factory=list, description="the formula and operands, or the reader's insights"
    )
    note: str = ""
    routes: list[dict[str, str]]
    citations: list[Citation]
    seconds: dict[str, float]


__all__ = [
    "CONTEXT",
    "MAX_CHARS",
    "AskResult",
    "AuditResult",
    "Citation",
    "DescribeResult",
    "Evidence",
    "EvidenceResult",
    "FactsResult",
    "Hop",
    "InputInfo",
    "QueryInfo",
    "QueryResult",
    "cut_note",
    "shown_value",
]
