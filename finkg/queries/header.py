"""A `.rq` file's header: what a query is called, says, takes and returns.

    # name: one line saying what it returns.
    #
    # input  ?company  iri        the company (required)
    # input  ?before   dateTime   exclusive bound, with a zone
    # input  ?node     iri*       a list (VALUES ?node { ... })
    # input  ?limitTo  integer?   optional (left unbound when not given)
    # input  ?audit    graph:audit  a named graph, bound from the store's layout
    # dataset: union             the default graph is the union of all graphs
    # bound  ?node  25           (CONSTRUCT) at most 25 triples per ?node, predicate and
    #                            direction (`bound.py`); `run(..., bound=)` overrides it
    # output ?evidence iri        a typed output (one a line: iri, dateTime, date, string,
    # output ?note string?        integer, decimal, double, boolean or term; ? = may be
    #                             unbound); or the names alone: # output ?a ?b ?c

`parse(text)` reads one into a `NamedQuery`, refusing an unknown input or output type and
an output the query never binds, with the file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from finkg.errors import QueryError
from finkg.queries.binding import SCALAR_TYPES

Form = Literal["select", "construct", "ask", "describe", "update"]
_FORM = re.compile(
    r"\b(SELECT|CONSTRUCT|ASK|DESCRIBE|INSERT|DELETE|LOAD|CLEAR|DROP|CREATE|ADD|MOVE|COPY|WITH)\b",
    re.IGNORECASE,
)
_QUERY_FORMS: dict[str, Form] = {
    "SELECT": "select",
    "CONSTRUCT": "construct",
    "ASK": "ask",
    "DESCRIBE": "describe",
}
_SENTENCE_END = re.compile(r"\.(?=\s|$)")
_HEADER_WORDS = ("input", "output", "dataset", "rows", "bound")
_INPUT = re.compile(r"#\s*input\s+\?(\w+)\s+(\S+)\s*(.*)")
_TYPED_OUTPUT = re.compile(r"#\s*output\s+\?(\w+)\s+([A-Za-z]+\??)\s*(.*)$")
OUTPUT_TYPES = (*SCALAR_TYPES, "term")
_BOUND = re.compile(r"#\s*bound\s+\?(\w+)\s+(\d+)\s*$")


@dataclass(frozen=True)
class Input:
    name: str
    type: str  # one of SCALAR_TYPES, or "graph"
    many: bool = False
    optional: bool = False
    graph: str | None = None  # for type "graph": the named graph bound by default
    description: str = ""


@dataclass(frozen=True)
class NamedQuery:
    name: str
    text: str
    form: Form
    summary: str = ""
    inputs: tuple[Input, ...] = ()
    outputs: tuple[str, ...] = ()
    output_types: tuple[tuple[str, str], ...] = ()  # (name, type), where the header types them
    union: bool = False
    path: Path | None = None
    bound: tuple[str, int] | None = None  # (input, limit): see `bound.py`

    @property
    def read_only(self) -> bool:
        return self.form != "update"


def query_form(text: str) -> Form:
    """select, construct, ask, describe or update: the query's first keyword.

    IRIs go before comments: the `#` of `<https://w3id.org/finkg/ns#>` starts no comment.

    >>> query_form("PREFIX fkg: <https://w3id.org/finkg/ns#> SELECT * WHERE { ?s ?p ?o }")
    'select'
    >>> query_form("INSERT DATA { <urn:a> <urn:b> <urn:c> }  # not a SELECT")
    'update'
    """
    stripped = re.sub(r"<[^<>\s]*>", " ", text)  # IRIs (PREFIX declarations among them)
    stripped = re.sub(r"#[^\n]*", " ", stripped)
    m = _FORM.search(stripped)
    if m is None:
        raise QueryError(
            "not a SPARQL query or update",
            field="query",
            value=text.strip()[:80],
            hint="expected SELECT, CONSTRUCT, ASK, DESCRIBE or an update operation",
        )
    return _QUERY_FORMS.get(m.group(1).upper(), "update")


def _summary(text: str) -> str:
    """The first sentence of the header's opening paragraph (`# name: what it returns...`),
    however many comment lines it runs over."""
    lines = text.splitlines()
    first = lines[0].lstrip("#").strip() if lines and lines[0].startswith("#") else ""
    if ":" not in first or first.startswith(_HEADER_WORDS):
        return ""
    words = [first.split(":", 1)[1].strip()]
    for line in lines[1:]:
        body = line.lstrip("#").strip()
        if not line.startswith("#") or not body or body.startswith(_HEADER_WORDS):
            break
        words.append(body)
    paragraph = " ".join(words)
    end = _SENTENCE_END.search(paragraph)
    return paragraph[: end.start() + 1] if end else paragraph


def parse(text: str, *, name: str = "query", path: Path | None = None) -> NamedQuery:
    """A `NamedQuery` from SPARQL text with (or without) a header."""
    summary, inputs, union = _summary(text), [], False
    outputs: list[str] = []
    typed: list[tuple[str, str]] = []
    bounded: tuple[str, int] | None = None
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.startswith("#"):
            break
        body = line.lstrip("#").strip()
        if m := _INPUT.match(line):
            inputs.append(_parse_input(m, path or name, i))
        elif m := _BOUND.match(line):
            bounded = (m.group(1), int(m.group(2)))
        elif (m := _TYPED_OUTPUT.match(line)) and not m.group(2).startswith("?"):
            kind = m.group(2)
            if kind.rstrip("?") not in OUTPUT_TYPES:
                raise QueryError(
                    f"unknown output type in header; use one of {', '.join(OUTPUT_TYPES)}",
                    source=str(path or name),
                    line=i,
                    field=f"?{m.group(1)}",
                    value=kind,
                )
            outputs.append(m.group(1))
            typed.append((m.group(1), kind))
        elif re.match(r"output\s+\?", body):
            outputs += [v.lstrip("?") for v in body.split()[1:]]
        elif body.startswith("dataset:"):
            union = body.split(":", 1)[1].strip() == "union"
    query = NamedQuery(
        name=name,
        text=text,
        form=query_form(text),
        summary=summary,
        inputs=tuple(inputs),
        outputs=tuple(outputs),
        output_types=tuple(typed),
        union=union,
        path=path,
        bound=bounded,
    )
    if query.form == "select":
        body = "\n".join(x for x in text.splitlines() if not x.startswith("#"))
        missing = [o for o in outputs if not re.search(rf"[?$]{re.escape(o)}\b", body)]
        if missing:
            raise QueryError(
                "the header declares outputs the query never binds",
                source=str(path or name),
                field="output",
                value=", ".join(f"?{m}" for m in missing),
            )
    return query


def _parse_input(m: re.Match[str], where: object, line: int) -> Input:
    name, type_, description = m.group(1), m.group(2), m.group(3).strip()
    optional, many = type_.endswith("?"), type_.rstrip("?").endswith("*")
    type_ = type_.rstrip("?").rstrip("*")
    graph = None
    if type_.startswith("graph:"):
        type_, graph = "graph", type_.split(":", 1)[1]
    elif type_ not in SCALAR_TYPES:
        raise QueryError(
            f"unknown input type in header; use one of {', '.join(SCALAR_TYPES)} or graph:NAME",
            source=str(where),
            line=line,
            field=f"?{name}",
            value=type_,
        )
    return Input(name, type_, many, optional, graph, description)


__all__ = ["OUTPUT_TYPES", "Form", "Input", "NamedQuery", "parse", "query_form"]
