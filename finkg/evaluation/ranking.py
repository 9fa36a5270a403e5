"""Ranking metrics for retrieval against a set of relevant items (paper 003 Table 4).

`ranked` is a retriever's list, best first; `relevant` the items judged relevant. With
binary relevance:

- P@k: relevant items among the top k, over k;
- R@k: relevant items among the top k, over all relevant items;
- NDCG@k: DCG of the top k (gain 1 / log2(rank + 1)) over the DCG of an ideal list;
- AP: the mean of P@r over the ranks r holding a relevant item, over all relevant items
  (relevant items never retrieved count as zero), MAP its mean over queries;
- RR: 1 / the rank of the first relevant item (0 if none), MRR its mean.

>>> ranked, relevant = ["a", "b", "c", "d"], {"b", "d", "e"}
>>> precision_at(ranked, relevant, 2), recall_at(ranked, relevant, 4)
(0.5, 0.6666666666666666)
>>> round(average_precision(ranked, relevant), 4), reciprocal_rank(ranked, relevant)
(0.3333, 0.5)
>>> round(ndcg_at(ranked, relevant, 4), 4)
0.4982
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence


def precision_at(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    return sum(1 for x in ranked[:k] if x in relevant) / k


def recall_at(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    if not relevant:
        return 0.0
    return sum(1 for x in ranked[:k] if x in relevant) / len(relevant)


def ndcg_at(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, x in enumerate(ranked[:k]) if x in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    return dcg / ideal if ideal else 0.0


def average_precision(ranked: Sequence[str], relevant: Collection[str]) -> float:
    if not relevant:
        return 0.0
    found, total = 0, 0.0
    for i, x in enumerate(ranked, start=1):
        if x in relevant:
            found += 1
            total += found / i
    return total / len(relevant)


def reciprocal_rank(ranked: Sequence[str], relevant: Collection[str]) -> float:
    return next((1 / i for i, x in enumerate(ranked, start=1) if x in relevant), 0.0)


def table(runs: Sequence[tuple[Sequence[str], Collection[str]]], k: int = 5) -> dict[str, float]:
    """P@k, R@k, NDCG@k, MAP and MRR averaged over (ranked, relevant) pairs."""
    n = len(runs) or 1
    return {
        f"P@{k}": sum(precision_at(r, g, k) for r, g in runs) / n,
        f"R@{k}": sum(recall_at(r, g, k) for r, g in runs) / n,
        f"NDCG@{k}": sum(ndcg_at(r, g, k) for r, g in runs) / n,
        "MAP": sum(average_precision(r, g) for r, g in runs) / n,
        "MRR": sum(reciprocal_rank(r, g) for r, g in runs) / n,
    }
