"""The evidence blocks an answer is read or computed from: what one is, its text as the
reader sees it (`block_text`), their ids (`numbered`), and the one dropped first when a
prompt runs past the reader's window (`drop_weakest`)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass

from pyoxigraph import NamedNode

from finkg.kg.statements import Section
from finkg.retrieval.passages import Hit


@dataclass(frozen=True)
class Block:
    """One evidence block the reader sees: its `kind` (C a passage, B a bank entry, T a tool
    result, F a statement fact), `id` (C1, B1, T1, F1), its text and what it points at."""

    kind: str
    id: str
    text: str
    node: NamedNode  # the passage, bank entry or tool node
    cites: tuple[NamedNode, ...]  # stored evidence a citation of this block resolves to
    rank: int = 0
    score: float | None = None


def block_text(hit: Hit, body: str, limit: int, section: Section | None = None) -> str:
    """The block as the reader sees it: its document's title, the label of the statement or
    table it lies in (title, period and units line: the header its rows belong to), its
    text."""
    head = hit.passage.title or hit.passage.document.value.rsplit("/", 1)[-1]
    body = body if len(body) <= limit else body[:limit].rsplit(" ", 1)[0] + " ..."
    if section is not None:
        return f"({head}) {section.label}\n{body}"
    return f"({head}) {body}"


def numbered(blocks: list[Block]) -> list[Block]:
    """Ids by kind and order: C1, C2 for passages, B1 for bank entries, T1 for tool results."""
    counts: Counter[str] = Counter()
    out = []
    for b in blocks:
        counts[b.kind] += 1
        out.append(dataclasses.replace(b, id=f"{b.kind}{counts[b.kind]}"))
    return out


def drop_weakest(blocks: list[Block]) -> list[Block]:
    passages = [b for b in blocks if b.kind == "C"]
    if not passages:
        return blocks[:-1]
    weakest = passages[-1]
    return [b for b in blocks if b is not weakest]


__all__ = ["Block", "block_text", "drop_weakest", "numbered"]
