"""The graph context of a recommendation prompt: compact JSON-LD nodes, ordered, serialized,
and cut at the end to fit the reader's context window (paper 004's full-KG baseline is cut
the same way; retrieved subgraphs are small and usually fit whole)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from typing import Any

from pyoxigraph import NamedNode, Triple

from finkg.kg.export import to_jsonld
from finkg.reader.budget import context_window, count_tokens, largest
from finkg.reader.read import MAX_REPAIRS, prompt
from finkg.retrieval import subgraph as sg
from finkg.tasks.recommend.types import RecommendConfig, Recording, Stage, node_text


def cut_to_window(
    reader: Recording,
    stages: list[Stage],
    config: RecommendConfig,
    customer: NamedNode,
    profile: str,
    as_of: dt.datetime,
    assets: sg.Candidates,
) -> tuple[Stage, Stage, int]:
    """The personal and market stages cut to fit the reader's context window: the nodes are
    serialized as one list (personal, then market; each timeless first, then newest first)
    and cut at the end, as paper 004's full-KG baseline is. Retrieved subgraphs are small
    and usually fit whole; whatever was cut is neither shown nor citable."""
    personal, market = stages
    ordered = newest_first(personal.nodes) + newest_first(market.nodes)
    personal_ids = {n["id"] for n in personal.nodes}
    keep = _fit(reader, ordered, personal_ids, config, customer, profile, as_of, assets)
    if keep == len(ordered):
        return personal, market, 0
    kept = {n["id"] for n in ordered[:keep]}

    def cut(stage: Stage) -> Stage:
        triples = [
            t
            for t in stage.triples
            if not isinstance(t.subject, Triple) and t.subject.value in kept
        ]
        nodes = [n for n in stage.nodes if n["id"] in kept]
        return replace(stage, triples=triples, nodes=nodes)

    return cut(personal), cut(market), len(ordered) - keep


def _fit(
    reader: Recording,
    ordered: list[dict[str, Any]],
    personal_ids: set[str],
    config: RecommendConfig,
    customer: NamedNode,
    profile: str,
    as_of: dt.datetime,
    assets: sg.Candidates,
) -> int:
    """How many of `ordered` fit the context window beside the prompt and the reply."""
    window = context_window(reader, config.n_ctx)
    assert window is not None  # config.n_ctx, the default, is a positive whole number
    # room for the reply and for the two repairs read() may send (each adds the failed
    # reply and a short correction to the prompt)
    room = window - (1 + MAX_REPAIRS) * config.max_tokens - 150 * MAX_REPAIRS
    template = prompt("recommend")

    def fits(k: int) -> bool:
        head = ordered[:k]
        p = [n for n in head if n["id"] in personal_ids]
        m = [n for n in head if n["id"] not in personal_ids]
        values = final_values(config, customer, profile, as_of, _Texts(p), _Texts(m), assets)
        return count_tokens(reader, template.render(values)) <= room

    return largest(len(ordered), fits)


@dataclass
class _Texts:
    nodes: list[dict[str, Any]]

    def text(self) -> str:
        return node_text(self.nodes)


def final_values(
    config: RecommendConfig,
    customer: NamedNode,
    profile: str,
    as_of: dt.datetime,
    personal: Stage | _Texts,
    market: Stage | _Texts,
    assets: sg.Candidates,
) -> dict[str, object]:
    return {
        "request": config.request.strip(),
        "customer": customer.value,
        "profile": profile or "profile not given",
        "as_of": as_of.isoformat(),
        "personal": personal.text(),
        "market": market.text(),
        "assets": assets.listing(),
    }


def jsonld_nodes(triples: list[Triple]) -> list[dict[str, Any]]:
    """The compact JSON-LD nodes of `triples` (finkg's context), in id order."""
    if not triples:
        return []
    return sorted(to_jsonld(triples)["@graph"], key=lambda n: n["id"])


def newest_first(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Timeless nodes (customer, assets) first, then newest first."""
    return sorted(nodes, key=lambda n: (n.get("availableAt") is not None, _neg(n), n["id"]))


def _neg(node: dict[str, Any]) -> float:
    at = node.get("availableAt")
    return -dt.datetime.fromisoformat(at).timestamp() if isinstance(at, str) else 0.0
