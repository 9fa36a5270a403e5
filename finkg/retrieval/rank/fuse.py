"""Fusing retrievers' scores over one candidate pool.

- `minmax`: each retriever's scores are scaled to [0, 1] within the pool, then averaged
  with equal weights (paper 000 §3.3: BM25 and dense cosine, "min-max normalizing both
  scores to [0, 1] within each anchor's candidate pool").
- `rrf`: reciprocal rank fusion, sum of 1 / (k + rank) with k = 60 (paper 003).

Both see only the scores of the pool they are given, so a fused score never depends on a
document outside it.

>>> bm25, dense = [3.0, 1.0, 2.0], [0.1, 0.5, 0.9]
>>> fuse([bm25, dense], method="minmax").tolist()
[0.5, 0.25, 0.75]
>>> fuse([bm25, dense], method="rrf").round(5).tolist()  # ranks (1, 3), (3, 2), (2, 1)
[0.03227, 0.032, 0.03252]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from finkg.errors import InputError

Fusion = Literal["minmax", "rrf"]
FUSIONS: tuple[Fusion, ...] = ("minmax", "rrf")
RRF_K = 60


def minmax(scores: Sequence[float] | np.ndarray) -> np.ndarray:
    """Scores scaled to [0, 1]; all equal (or one) gives all zeros: no retriever preference."""
    x = np.asarray(scores, dtype=np.float64)
    if x.size == 0:
        return x
    lo, hi = x.min(), x.max()
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def ranks(scores: Sequence[float] | np.ndarray) -> np.ndarray:
    """1-based ranks, best first; ties broken by position (stable)."""
    x = np.asarray(scores, dtype=np.float64)
    order = np.argsort(-x, kind="stable")
    out = np.empty(len(x), dtype=np.int64)
    out[order] = np.arange(1, len(x) + 1)
    return out


def fuse(
    score_lists: Sequence[Sequence[float] | np.ndarray],
    *,
    method: Fusion = "minmax",
    weights: Sequence[float] | None = None,
    k: int = RRF_K,
) -> np.ndarray:
    """One fused score per candidate from several retrievers' scores of the same pool."""
    if method not in FUSIONS:
        raise InputError("unknown fusion", field="fusion", value=method, hint="minmax or rrf")
    lists = [np.asarray(s, dtype=np.float64) for s in score_lists]
    if not lists:
        raise InputError("nothing to fuse", field="scores")
    if len({len(s) for s in lists}) != 1:
        raise InputError(
            "every retriever must score the same candidates",
            field="scores",
            value=[len(s) for s in lists],
        )
    w = np.ones(len(lists)) if weights is None else np.asarray(weights, dtype=np.float64)
    if len(w) != len(lists) or (w < 0).any() or w.sum() == 0:
        raise InputError(
            "one non-negative weight per retriever, not all zero",
            field="weights",
            value=list(w),
        )
    if k < 1:
        raise InputError("k must be at least 1", field="k", value=k)
    if method == "minmax":
        parts = [minmax(s) for s in lists]
        return sum(wi * p for wi, p in zip(w, parts, strict=True)) / w.sum()
    parts = [1.0 / (k + ranks(s)) for s in lists]
    return sum(wi * p for wi, p in zip(w, parts, strict=True))
