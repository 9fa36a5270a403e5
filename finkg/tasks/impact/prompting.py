"""What the impact reader is shown (paper 000 appendix B): the evidence lines under short
ids, the market card, and the template's values for one anchor and its context."""

from __future__ import annotations

from pyoxigraph import NamedNode

from finkg.kg.store import BaseStore
from finkg.ontology.families import family_label, top_family
from finkg.ontology.terms import FKG
from finkg.retrieval.index.live import node_texts
from finkg.retrieval.memory.source import Ranked
from finkg.tasks.impact.anchors import Anchor

# short ids by paper 000's family (`top_family`): a press release, analysis or news report
# is an N; the label the reader sees is the item's own family (`family_label`)
SHORT = {FKG.News: ("N", "News"), FKG.SecFiling: ("F", "SEC Filing")}
OTHER_FAMILY = ("D", "Document")


def evidence_block(
    store: BaseStore, context: tuple[Ranked, ...], snippet_chars: int
) -> tuple[str, dict[str, NamedNode]]:
    """`N1 [News, 2020-04-29]: text...` lines and the id of each item."""
    texts = node_texts(store, [r.candidate.evidence for r in context])
    lines: list[str] = []
    ids: dict[str, NamedNode] = {}
    counter: dict[str, int] = {}
    for r in context:
        c = r.candidate
        letter, _ = SHORT.get(top_family(c.family), OTHER_FAMILY)
        label = family_label(c.family)  # the publisher's family where the news has one
        counter[letter] = counter.get(letter, 0) + 1
        short = f"{letter}{counter[letter]}"
        ids[short] = c.evidence
        body = " ".join(texts[c.evidence].split())
        if len(body) > snippet_chars:
            body = body[: snippet_chars - 3].rsplit(" ", 1)[0] + "..."
        lines.append(f"{short} [{label}, {c.available_at.date().isoformat()}]: {body}")
    return "\n".join(lines) or "(no eligible evidence)", ids


def prompt_values(
    store: BaseStore,
    anchor: Anchor,
    context: tuple[Ranked, ...],
    snippet_chars: int,
    card: str,
) -> tuple[dict[str, object], dict[str, NamedNode]]:
    """The impact template's values for one anchor, its context and its market card, and
    the evidence ids the reader may cite."""
    evidence, ids = evidence_block(store, context, snippet_chars)
    values: dict[str, object] = {
        "anchor_id": "A0",
        "headline": anchor.headline,
        "ticker": anchor.ticker,
        "prediction_day": anchor.prediction_day.isoformat(),
        "event_type": anchor.event_label,
        "evidence": evidence,
        "market_card": card,
    }
    return values, ids
