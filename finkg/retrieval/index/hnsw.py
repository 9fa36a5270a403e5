"""A FAISS HNSW index whose efSearch is chosen for a recall target, on rows it held out.

How much of the exact top k an HNSW search finds depends on the data: on distinct passages a
small efSearch finds nearly all of it, but where many passages are near-copies (a wire story
repeated, a filing restated) the graph's neighbour lists fill with the copies and a search
stops among them. So a build measures instead of assuming. `build_hnsw` holds out `queries`
rows (seeded) and builds the graph over the rest; the held-out rows are the queries, so a
query is, as in use, a vector the graph does not hold (a row searched for itself is found
at once and flatters the graph). Their exact top `k` comes from an inner product over the
rest; efSearch is tried on a ladder (32, 64, ... 2048) until the mean recall@k reaches
`target`. A hit counts when its score ties the exact k-th score (near-copies tie, and any
of them is a right answer). Then the held-out rows join the graph. When no efSearch on the
ladder reaches the target, the graph is not kept and search stays exact (an inner product
over every row: tens of milliseconds at 600,000 rows) rather than quietly returning part of
the answer. The choice and every recall tried are kept beside the index (`hnsw.json`).

The graph's positions are not the matrix's rows (the held-out rows were added last), so
`order` (`hnsw-order.npy`) maps one to the other.

>>> rng = np.random.default_rng(0)
>>> matrix = rng.normal(size=(2_000, 16)).astype(np.float32)
>>> matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
>>> built = build_hnsw(matrix, queries=50)
>>> built.calibration.ef_search is not None and built.calibration.recall >= 0.95
True
>>> scores, rows = built.search(matrix[7], 5)
>>> int(rows[0]), round(float(scores[0]), 4)
(7, 1.0)
>>> hopeless = build_hnsw(matrix, queries=50, ladder=(1,), target=1.0)
>>> hopeless.calibration.ef_search, hopeless.index is None
(None, True)
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from finkg.errors import InputError

M = 32  # neighbours per node
EF_CONSTRUCTION = 200
LADDER = (32, 64, 128, 256, 512, 1024, 2048)
TARGET = 0.95  # mean recall@K on the held-out rows
K = 20
QUERIES = 200
FILE = "hnsw.json"
ORDER = "hnsw-order.npy"


@dataclass(frozen=True)
class Calibration:
    """What a build measured: efSearch chosen (None: no rung reached the target, search
    exactly), the recall at it (or at the last rung), and the recall of every rung tried."""

    k: int
    target: float
    queries: int
    ef_search: int | None
    recall: float
    tried: dict[int, float]

    def describe(self) -> str:
        """One line for a log or a report."""
        if self.ef_search is None:
            best = max(self.tried.values(), default=0.0)
            return (
                f"exact search: HNSW recall@{self.k} reached {best:.3f} at most "
                f"(efSearch up to {max(self.tried, default=0)}), below the target {self.target}"
            )
        measured = f"recall@{self.k} {self.recall:.3f} on {self.queries} held-out rows"
        return f"HNSW efSearch {self.ef_search}: {measured}"


@dataclass
class Hnsw:
    """A calibrated HNSW graph over a matrix's rows (`order[p]`: the row at graph position
    p), or its calibration alone (`index` None) when exact search was chosen."""

    index: Any  # a faiss.IndexHNSWFlat, or None
    calibration: Calibration
    order: np.ndarray | None = None

    @property
    def exact(self) -> bool:
        """Whether the build chose exact search (no graph kept)."""
        return self.index is None or self.order is None

    def search(
        self, query: np.ndarray, k: int, *, ef: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The scores and matrix rows of the `k` best (row -1 where the graph found fewer),
        with the chosen efSearch or `ef`."""
        if self.index is None or self.order is None:
            raise ValueError("this index was calibrated to exact search")
        self.index.hnsw.efSearch = max(ef or self.calibration.ef_search or 0, k)
        scores, positions = self.index.search(query[None, :].astype(np.float32), k)
        found = positions[0]
        return scores[0], np.where(found >= 0, self.order[np.maximum(found, 0)], -1)

    def write(self, folder: Path) -> None:
        (folder / FILE).write_text(json.dumps(asdict(self.calibration)), encoding="utf-8")
        if self.index is not None and self.order is not None:
            import faiss

            faiss.write_index(self.index, str(folder / "hnsw.faiss"))
            np.save(folder / ORDER, self.order)

    @classmethod
    def read(cls, folder: Path) -> Hnsw | None:
        """The index in `folder`, or None where it has none or was built before this
        calibration (the next refresh builds and calibrates it)."""
        if not (folder / FILE).exists():
            return None
        raw = json.loads((folder / FILE).read_text(encoding="utf-8"))
        raw["tried"] = {int(ef): float(r) for ef, r in raw["tried"].items()}
        calibration = Calibration(**raw)
        if calibration.ef_search is None:
            return cls(None, calibration)
        import faiss

        return cls(
            faiss.read_index(str(folder / "hnsw.faiss")), calibration, np.load(folder / ORDER)
        )


def build_hnsw(
    matrix: np.ndarray,
    *,
    k: int = K,
    target: float = TARGET,
    queries: int = QUERIES,
    ladder: tuple[int, ...] = LADDER,
    seed: int = 0,
) -> Hnsw:
    """An HNSW graph over `matrix` (L2-normalised rows) with the smallest efSearch on
    `ladder` whose recall@k on `queries` held-out rows reaches `target`."""
    if not 0 < target <= 1:
        raise InputError("the recall target must be in (0, 1]", field="target", value=target)
    import faiss

    data = np.ascontiguousarray(matrix, dtype=np.float32)
    held = np.zeros(len(data), dtype=bool)
    size = min(queries, len(data) // 2)
    held[np.random.default_rng(seed).choice(len(data), size=size, replace=False)] = True
    if not size:  # nothing to hold out: nothing measured, so search exactly
        return Hnsw(None, Calibration(k, target, 0, None, 0.0, {}))
    rest, sample = np.flatnonzero(~held), np.flatnonzero(held)
    index = faiss.IndexHNSWFlat(data.shape[1], M, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = EF_CONSTRUCTION
    index.add(data[rest])
    k = min(k, len(rest))
    floors = _kth_scores(data[rest], data[sample], k) - 1e-6
    tried: dict[int, float] = {}
    chosen = None
    for ef in ladder:
        index.hnsw.efSearch = max(ef, k)
        scores, _ = index.search(data[sample], k)
        tried[ef] = float(np.mean(np.sum(scores >= floors[:, None], axis=1) / k))
        if tried[ef] >= target:
            chosen = ef
            break
    recall = tried[chosen] if chosen is not None else (tried[ladder[-1]] if ladder else 0.0)
    calibration = Calibration(k, target, len(sample), chosen, recall, tried)
    if chosen is None:
        return Hnsw(None, calibration)
    index.add(data[sample])
    return Hnsw(index, calibration, np.concatenate([rest, sample]))


def _kth_scores(data: np.ndarray, sample: np.ndarray, k: int, *, batch: int = 32) -> np.ndarray:
    """The exact k-th best inner product of each sampled row, a batch of rows at a time."""
    out = np.empty(len(sample), dtype=np.float32)
    for start in range(0, len(sample), batch):
        scores = sample[start : start + batch] @ data.T
        out[start : start + batch] = -np.partition(-scores, k - 1, axis=1)[:, k - 1]
    return out
