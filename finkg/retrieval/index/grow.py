"""A calibrated index grown in place, its recall measured again.

A refresh that only adds passages (news arrives every day; nothing is removed or changed)
need not build the FAISS index anew: HNSW and IVF both take new rows, and a build over
650,000 passages takes minutes (`benchmarks/reports/scale_recall.md`: 342 s at 50 replicas,
300 of them on an HNSW graph IVF then replaced). `grow` adds the new rows to a copy of the
index and measures its recall@k again on the queries its build held out (their vectors are
kept beside it, `Hnsw.probes`), now over every row, the query's own passage left out on
both sides (held out at the build, it has joined the index since). The breadth it had is
kept when it still reaches the target at 95 % confidence; else the next rung up that does;
where none does, or the index has grown past twice the rows it was built over (IVF's lists
were sized and trained for those), or it cannot be measured (saved before its probes were
kept, or calibrated to exact search), `grow` returns None and the refresh builds and
calibrates a new one (`hnsw.build_hnsw`).

>>> from finkg.retrieval.index.hnsw import build_hnsw
>>> rng = np.random.default_rng(0)
>>> matrix = rng.normal(size=(2_400, 16)).astype(np.float32)
>>> matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
>>> built = build_hnsw(matrix[:2_000], queries=50)
>>> grown = grow(built, matrix, built.order, np.arange(2_000, 2_400))
>>> grown.calibration.grown, grown.calibration.lower >= 0.95, len(grown.order)
(400, True, 2400)
>>> int(grown.search(matrix[2_345], 1)[1][0])
2345
>>> grow(grown, np.vstack([matrix, matrix]), grown.order, np.arange(2_400, 4_800)) is None
True
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from finkg.retrieval.index.hnsw import IVF_LADDER, LADDER, Hnsw, climb, kth_scores, recall_at

GROWTH = 2.0  # rebuild past this many times the rows an index was built over


def grow(
    built: Hnsw,
    matrix: np.ndarray,
    order: np.ndarray,
    added: np.ndarray,
    *,
    ladder: tuple[int, ...] = LADDER,
    ivf_ladder: tuple[int, ...] = IVF_LADDER,
) -> Hnsw | None:
    """`built` with the rows `added` of `matrix` added and its recall measured again, or None
    where it must be built anew (module docstring). `order[p]` is the row of `matrix` that
    `built`'s position p holds, as the rows of `matrix` now stand."""
    calibration, probes = built.calibration, built.probes
    total = len(order) + len(added)
    if built.index is None or probes is None or calibration.ef_search is None:
        return None
    if not calibration.rows or total > GROWTH * calibration.rows:
        return None
    import faiss

    index: Any = faiss.clone_index(built.index)  # the index in use stays as it was until saved
    index.add(np.ascontiguousarray(matrix[added], dtype=np.float32))
    order = np.concatenate([order, added]).astype(np.int64)
    # the held-out passages were added last at the build: the positions before `rows`
    own = order[calibration.rows - calibration.queries : calibration.rows]
    k = calibration.k
    floors = kth_scores(matrix, probes, k, skip=own) - 1e-6
    if calibration.structure == "ivf":
        rungs = tuple(n for n in ivf_ladder if calibration.ef_search <= n < calibration.lists)

        def breadth(n: int) -> None:
            index.nprobe = n
    else:
        rungs = tuple(ef for ef in ladder if ef >= calibration.ef_search)

        def breadth(n: int) -> None:
            index.hnsw.efSearch = max(n, k + 1)

    rungs = rungs if calibration.ef_search in rungs else (calibration.ef_search, *rungs)
    measured = _OwnLeftOut(index, order, own)
    chosen, tried, lower = climb(measured, breadth, rungs, probes, floors, k, calibration.target)
    if chosen is None:
        return None
    again = dataclasses.replace(
        calibration,
        ef_search=chosen,
        recall=recall_at(tried, chosen),
        tried=tried,
        lower=lower,
        grown=total - calibration.rows,
    )
    return Hnsw(index, again, order, probes)


class _OwnLeftOut:
    """`index` searched as `climb` searches, each query's own passage left out of its hits."""

    def __init__(self, index: Any, order: np.ndarray, own: np.ndarray) -> None:
        self.index, self.order, self.own = index, order, own

    def search(self, asked: np.ndarray, k: int) -> tuple[np.ndarray, None]:
        scores, positions = self.index.search(asked, k + 1)
        rows = np.where(positions >= 0, self.order[np.maximum(positions, 0)], -1)
        scores = np.where(rows == self.own[:, None], -np.inf, scores)
        return -np.sort(-scores, axis=1)[:, :k], None
