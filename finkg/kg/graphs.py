"""finkg's named graphs: one place that knows their IRIs.

| name | holds |
|---|---|
| `news`, `filings`, `documents` | evidence of those families and their source documents |
| `market` | companies, assets, price bars, summaries, indicator windows, market cards |
| `users/{id}` | one customer's profile and transactions (read only by that customer's runs) |
| `memory` | source-memory cells and updates |
| `outputs` | predictions, answers, recommendations, runs, outcomes |
| `audit` | commits (every write), ingest batches, lifecycle transitions |
| `ontology` | finkg.ttl |

>>> g = Graphs()
>>> g.news.value
'https://w3id.org/finkg/id/graph/news'
>>> g.parse("users/c-42").value
'https://w3id.org/finkg/id/graph/users/c-42'
>>> g.name_of(g.parse("market"))
'market'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pyoxigraph import NamedNode

from finkg.config import DEFAULT_BASE_IRI
from finkg.errors import UnknownGraphError

GRAPH_NAMES = (
    "news",
    "filings",
    "documents",
    "market",
    "memory",
    "outputs",
    "audit",
    "ontology",
)
_USER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


@dataclass(frozen=True)
class Graphs:
    """The named-graph IRIs under one base IRI."""

    base: str = DEFAULT_BASE_IRI

    @property
    def prefix(self) -> str:
        return self.base + "graph/"

    def __getattr__(self, name: str) -> NamedNode:
        if name in GRAPH_NAMES:
            return NamedNode(self.prefix + name)
        raise AttributeError(name)

    def user(self, user_id: str) -> NamedNode:
        """The graph of one customer; ids are `[A-Za-z0-9._-]`, at most 128 characters."""
        if not _USER_ID.fullmatch(user_id):
            raise UnknownGraphError(
                "a user id must be 1-128 characters of letters, digits, '.', '_' or '-'",
                field="user",
                value=user_id,
            )
        return NamedNode(self.prefix + "users/" + user_id)

    def user_dataset(self, user_id: str) -> list[NamedNode]:
        """What one user's work may read (paper 004): their own graph and the market graph.
        Passed as a query dataset it is enforced by the store, through GRAPH patterns too."""
        return [self.user(user_id), self.market]

    def all_fixed(self) -> list[NamedNode]:
        return [NamedNode(self.prefix + n) for n in GRAPH_NAMES]

    def name_of(self, graph: NamedNode) -> str | None:
        """`news`, `users/42`, ...; None when the IRI is not one of finkg's graphs."""
        if not graph.value.startswith(self.prefix):
            return None
        name = graph.value[len(self.prefix) :]
        if name in GRAPH_NAMES:
            return name
        if name.startswith("users/") and _USER_ID.fullmatch(name[len("users/") :]):
            return name
        return None

    def parse(self, text: str) -> NamedNode:
        """A graph from its short name (`news`, `users/42`) or its full IRI."""
        text = text.strip()
        if text.startswith("users/"):
            return self.user(text[len("users/") :])
        if text in GRAPH_NAMES:
            return NamedNode(self.prefix + text)
        if text.startswith(("http://", "https://")):
            graph = NamedNode(text)
            if self.name_of(graph) is not None:
                return graph
        raise UnknownGraphError(
            "unknown named graph",
            field="graph",
            value=text,
            hint="use one of " + ", ".join(GRAPH_NAMES) + " or users/<id>"
            f" (full IRIs start with {self.prefix})",
        )
