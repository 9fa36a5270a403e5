"""A FAISS HNSW index whose efSearch is chosen for a recall target, on queries it held out;
an IVF index where no efSearch reaches it.

How much of the exact top k an HNSW search finds depends on the data: on distinct passages a
small efSearch finds nearly all of it, but where many passages are near-copies (a wire story
repeated, a filing restated) the graph's neighbour lists fill with the copies and a search
stops among them. So a build measures instead of assuming. `build_hnsw` holds out `queries`
rows (seeded) and builds the graph over the rest; a `probe` turns the held-out rows into
query vectors (`VectorIndex` embeds the first line of each held-out passage, a query shaped
like a headline or a question; without one, the rows themselves are the queries). A query
is then, as in use, a vector the graph does not hold. Whole rows flatter the graph: on 50
replicas of a news corpus, held-out rows reached 0.963 recall@20 at efSearch 512 while
headlines got 0.762 (`benchmarks/reports/scale.md`). Their exact top `k` comes from an inner
product over the rest; efSearch is tried on a ladder (32, 64, ... 2048) until recall@k
reaches `target` with 95 % confidence: the mean over the queries less 1.96 standard errors
(about 0.02 on 200 queries), so that a setting which clears the target on these queries by
luck is not kept for others. A hit counts when its score ties the exact k-th score
(near-copies tie, and any of them is a right answer). Then the held-out rows join the graph.

When no efSearch on the ladder reaches the target, the graph is dropped and an inverted-file
index (FAISS IVF-Flat, `4·√n` lists, k-means on a sample of the rows) is calibrated the same
way over the same queries, its nprobe on a ladder below the number of lists. Near-copies fall
in the same list, so probing the lists nearest a query finds all of them where HNSW's graph
does not: on 637,100 passages of 50 replicas, HNSW reached 0.901 recall@20 on the build's
queries at efSearch 2048, IVF 0.993 at nprobe 512 of 3,192 lists, and 0.990 on 1,000 real
headlines (`benchmarks/reports/scale_recall.md`). When neither reaches the target, search
stays exact (an inner product over every row: tens of milliseconds at 600,000 rows) rather
than quietly returning part of the answer. The choice, the probe and every recall tried are
kept beside the index (`hnsw.json`).

The index's positions are not the matrix's rows (the held-out rows were added last), so
`order` (`hnsw-order.npy`) maps one to the other. The queries' vectors are kept too
(`hnsw-probes.npy`): an index a refresh grows is measured again on them (`grow.py`).

>>> rng = np.random.default_rng(0)
>>> matrix = rng.normal(size=(2_000, 16)).astype(np.float32)
>>> matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
>>> built = build_hnsw(matrix, queries=50)
>>> built.calibration.structure, built.calibration.lower >= 0.95
('hnsw', True)
>>> scores, rows = built.search(matrix[7], 5)
>>> int(rows[0]), round(float(scores[0]), 4)
(7, 1.0)
>>> hopeless = build_hnsw(matrix, queries=50, ladder=(1,), target=1.0, ivf_ladder=())
>>> hopeless.calibration.ef_search, hopeless.index is None
(None, True)
>>> inverted = build_hnsw(matrix, queries=50, ladder=(1,), target=0.99)
>>> inverted.calibration.structure, inverted.calibration.lower >= 0.99
('ivf', True)
>>> inverted.calibration.before.startswith("HNSW recall@20 reached")
True
>>> scores, rows = inverted.search(matrix[7], 5)
>>> int(rows[0]), round(float(scores[0]), 4)
(7, 1.0)
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from finkg.errors import InputError

M = 32  # neighbours per node
EF_CONSTRUCTION = 200
LADDER = (32, 64, 128, 256, 512, 1024, 2048)
TARGET = 0.95  # recall@K on the held-out rows, at 95 % confidence (its lower bound)
Z = 1.96  # standard errors below the mean recall: a 95 % lower bound
K = 20
QUERIES = 200
IVF_LADDER = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)  # nprobe, below the number of lists
IVF_TRAIN_PER_LIST = 64  # k-means rows per list (FAISS wants at least 39)
ROWS = "held-out rows"  # the probe when none is given: the rows are the queries
FILE = "hnsw.json"
# held-out rows -> the query vectors that stand for them (L2-normalised, one per row)
Probe = Callable[[np.ndarray], np.ndarray]
ORDER = "hnsw-order.npy"
PROBES = "hnsw-probes.npy"


@dataclass(frozen=True)
class Calibration:
    """What a build measured: the structure and its search breadth chosen (`ef_search`:
    HNSW's efSearch, or IVF's nprobe over `lists` lists; None: no rung reached the target,
    search exactly), the mean recall at it (or at the last rung) and its 95 % lower bound
    (`lower`, which the target was held to; None in an index saved before it was), the mean
    recall of every rung tried, what the queries were (`probe`; an index saved before probes
    had the rows), and, for IVF, what HNSW reached first (`before`)."""

    k: int
    target: float
    queries: int
    ef_search: int | None
    recall: float
    tried: dict[int, float]
    probe: str = ROWS
    structure: str = "hnsw"  # or "ivf"
    lists: int = 0  # IVF's
    before: str = ""  # IVF's: what HNSW reached
    lower: float | None = None
    rows: int = 0  # the rows it was built over, the held-out ones last (0: saved before)
    grown: int = 0  # rows added since (`grow.py`), the recall measured again after them

    def describe(self) -> str:
        """One line for a log or a report."""
        knob = "efSearch" if self.structure == "hnsw" else f"nprobe ({self.lists} lists)"
        name = self.structure.upper()
        if self.ef_search is None:
            best = max(self.tried.values(), default=0.0)
            line = (
                f"exact search: {name} recall@{self.k} reached {best:.3f} at most "
                f"({knob} up to {max(self.tried, default=0)}) on {self.queries} {self.probe}, "
                f"below the target {self.target}"
            )
        else:
            bound = "" if self.lower is None else f" (95 % lower bound {self.lower:.3f})"
            measured = f"recall@{self.k} {self.recall:.3f}{bound} on {self.queries} {self.probe}"
            line = f"{name} {knob} {self.ef_search}: {measured}"
        line = f"{line}, {self.grown:,} rows added since its build" if self.grown else line
        return f"{line}; before it, {self.before}" if self.before else line


@dataclass
class Hnsw:
    """A calibrated HNSW graph (or IVF index, where the graph fell short) over a matrix's
    rows (`order[p]`: the row at position p), or its calibration alone (`index` None) when
    exact search was chosen; `probes`, the calibration's query vectors, measure it again
    when it grows (`grow.py`)."""

    index: Any  # a faiss.IndexHNSWFlat or faiss.IndexIVFFlat, or None
    calibration: Calibration
    order: np.ndarray | None = None
    probes: np.ndarray | None = None

    @property
    def exact(self) -> bool:
        """Whether the build chose exact search (no graph kept)."""
        return self.index is None or self.order is None

    def search(
        self, query: np.ndarray, k: int, *, ef: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The scores and matrix rows of the `k` best (row -1 where the index found fewer),
        with the chosen breadth (or, for HNSW, the efSearch `ef`)."""
        if self.index is None or self.order is None:
            raise ValueError("this index was calibrated to exact search")
        if self.calibration.structure == "ivf":
            self.index.nprobe = self.calibration.ef_search
        else:
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
            if self.probes is not None:
                np.save(folder / PROBES, self.probes)

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

        probes = np.load(folder / PROBES) if (folder / PROBES).exists() else None
        index = faiss.read_index(str(folder / "hnsw.faiss"))
        return cls(index, calibration, np.load(folder / ORDER), probes)


def build_hnsw(
    matrix: np.ndarray,
    *,
    k: int = K,
    target: float = TARGET,
    queries: int = QUERIES,
    ladder: tuple[int, ...] = LADDER,
    seed: int = 0,
    probe: Probe | None = None,
    probe_name: str = ROWS,
    ivf_ladder: tuple[int, ...] = IVF_LADDER,
) -> Hnsw:
    """An HNSW graph over `matrix` (L2-normalised rows) with the smallest efSearch on
    `ladder` whose recall@k reaches `target` at 95 % confidence on `queries` held-out rows,
    each searched for as `probe` turns it into a query (named `probe_name`; by default the row
    itself); where none does, an IVF index with the smallest nprobe on `ivf_ladder` that does;
    where neither does, exact search (module docstring)."""
    if not 0 < target <= 1:
        raise InputError("the recall target must be in (0, 1]", field="target", value=target)
    data = np.ascontiguousarray(matrix, dtype=np.float32)
    held = np.zeros(len(data), dtype=bool)
    size = min(queries, len(data) // 2)
    held[np.random.default_rng(seed).choice(len(data), size=size, replace=False)] = True
    if not size:  # nothing to hold out: nothing measured, so search exactly
        return Hnsw(None, Calibration(k, target, 0, None, 0.0, {}, probe_name, lower=0.0))
    rest, sample = np.flatnonzero(~held), np.flatnonzero(held)
    k = min(k, len(rest))
    asked = data[sample] if probe is None else np.asarray(probe(sample), dtype=np.float32)
    if asked.shape != (len(sample), data.shape[1]):
        raise ValueError(f"the probe gave shape {asked.shape} for {len(sample)} rows")
    floors = kth_scores(data[rest], asked, k) - 1e-6
    order = np.concatenate([rest, sample])
    calibration = Calibration(k, target, len(sample), None, 0.0, {}, probe_name)
    for structure, index, breadth, rungs, lists in _structures(
        data[rest], k, ladder, ivf_ladder, seed
    ):
        chosen, tried, lower = climb(index, breadth, rungs, asked, floors, k, target)
        before = calibration.describe().removeprefix("exact search: ") if calibration.tried else ""
        calibration = Calibration(
            k, target, len(sample), chosen, recall_at(tried, chosen), tried, probe_name, structure,
            lists, before, lower, len(data),
        )  # fmt: skip
        if chosen is not None:
            index.add(data[sample])
            return Hnsw(index, calibration, order, asked)
        index.reset()  # its memory, before the next structure takes as much again
    return Hnsw(None, calibration)


# a structure to calibrate: its name, the index over the rows, how to set its search breadth,
# the breadths to try, and IVF's number of lists (0 for HNSW)
Structure = tuple[str, Any, Callable[[int], None], tuple[int, ...], int]


def _structures(
    rows: np.ndarray,
    k: int,
    ladder: tuple[int, ...],
    ivf_ladder: tuple[int, ...],
    seed: int,
) -> Iterator[Structure]:
    """HNSW over `rows`, then IVF, each built only when the one before it fell short."""
    if ladder:
        graph = _hnsw(rows)
        yield "hnsw", graph, lambda ef: setattr(graph.hnsw, "efSearch", max(ef, k)), ladder, 0
    # FAISS's guidance, with the 39 rows a list that k-means wants
    lists = max(1, min(int(4 * math.sqrt(len(rows))), len(rows) // 39))
    rungs = tuple(n for n in ivf_ladder if n < lists)  # probing every list is exact search
    if rungs:
        ivf = _ivf(rows, lists, seed)
        yield "ivf", ivf, lambda n: setattr(ivf, "nprobe", n), rungs, lists


def _hnsw(rows: np.ndarray) -> Any:
    """An HNSW inner-product graph over `rows`."""
    import faiss

    index = faiss.IndexHNSWFlat(rows.shape[1], M, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = EF_CONSTRUCTION
    index.add(rows)
    return index


def _ivf(rows: np.ndarray, lists: int, seed: int) -> Any:
    """An IVF-Flat inner-product index over `rows`, its lists from k-means on a sample."""
    import faiss

    quantizer = faiss.IndexFlatIP(rows.shape[1])  # the IVF index holds a reference to it
    index = faiss.IndexIVFFlat(quantizer, rows.shape[1], lists, faiss.METRIC_INNER_PRODUCT)
    size = min(len(rows), IVF_TRAIN_PER_LIST * lists)
    picked = np.sort(np.random.default_rng(seed).choice(len(rows), size=size, replace=False))
    index.train(rows[picked])
    index.add(rows)
    return index


def climb(
    index: Any,
    breadth: Callable[[int], None],
    ladder: tuple[int, ...],
    asked: np.ndarray,
    floors: np.ndarray,
    k: int,
    target: float,
) -> tuple[int | None, dict[int, float], float]:
    """The first rung of `ladder` at which `index` finds `target` of the queries' exact top
    `k` at 95 % confidence (a hit counts when it ties the k-th score, `floors`), the mean
    recall at every rung tried, and the lower bound at the last."""
    tried: dict[int, float] = {}
    lower = 0.0
    for rung in ladder:
        breadth(rung)
        scores, _ = index.search(asked, k)
        found = np.sum(scores >= floors[:, None], axis=1) / k
        tried[rung] = float(found.mean())
        spread = float(found.std(ddof=1)) / math.sqrt(len(found)) if len(found) > 1 else 0.0
        lower = tried[rung] - Z * spread
        if lower >= target:
            return rung, tried, lower
    return None, tried, lower


def recall_at(tried: dict[int, float], chosen: int | None) -> float:
    """The recall at the chosen rung, or at the last one tried."""
    if chosen is not None:
        return tried[chosen]
    return tried[max(tried)] if tried else 0.0


def kth_scores(
    data: np.ndarray,
    sample: np.ndarray,
    k: int,
    *,
    batch: int = 32,
    skip: np.ndarray | None = None,
) -> np.ndarray:
    """The exact k-th best inner product of each sampled row, a batch of rows at a time;
    `skip[i]`, a row of `data` left out for sample i (the passage a query was made from)."""
    out = np.empty(len(sample), dtype=np.float32)
    for start in range(0, len(sample), batch):
        scores = sample[start : start + batch] @ data.T
        if skip is not None:
            scores[np.arange(len(scores)), skip[start : start + batch]] = -np.inf
        out[start : start + batch] = -np.partition(-scores, k - 1, axis=1)[:, k - 1]
    return out
