"""The validity audit of paper 000 §4 over the context a variant's runs read.

- future-document rate: the share of context passages that became available at or after
  their prediction's decision instant (or whose availability is unknown); it must be 0;
- near-duplicate anchor rate: the share of context passages whose embedding has cosine
  >= `threshold` with the anchor's own news item, in any source family (the pool removes
  near-duplicates within the anchor's family; this catches what gets through, such as a
  filing a news item paraphrases). The paper reports under 1 %.

>>> import numpy as np
>>> from pyoxigraph import NamedNode as N
>>> unit = {N("urn:a"): [1.0, 0.0], N("urn:x"): [0.99, 0.14], N("urn:y"): [0.0, 1.0]}
>>> rows = [ContextUse(N("urn:p"), N("urn:a"), 10, N("urn:x"), 5),
...         ContextUse(N("urn:p"), N("urn:a"), 10, N("urn:y"), 10)]
>>> audit(rows, lambda iris: np.array([unit[i] for i in iris]), threshold=0.9)
ContextAudit(predictions=1, passages=2, future=1, near_duplicates=1)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pyoxigraph import NamedNode


@dataclass(frozen=True)
class ContextUse:
    """One passage in the context of one prediction."""

    prediction: NamedNode
    news: NamedNode  # the anchor's news item
    decision: Any  # comparable with `available` (datetimes, or numbers in tests)
    evidence: NamedNode
    available: Any | None  # None: the passage has no fkg:availableAt


@dataclass(frozen=True)
class ContextAudit:
    predictions: int
    passages: int
    future: int
    near_duplicates: int

    @property
    def future_rate(self) -> float:
        return self.future / self.passages if self.passages else 0.0

    @property
    def near_duplicate_rate(self) -> float:
        return self.near_duplicates / self.passages if self.passages else 0.0


def audit(
    rows: Sequence[ContextUse],
    vectors: Callable[[Sequence[NamedNode]], np.ndarray],
    *,
    threshold: float,
) -> ContextAudit:
    """Count future and near-duplicate passages; `vectors` gives unit-normalised embeddings."""
    future = sum(1 for r in rows if r.available is None or r.available >= r.decision)
    near = 0
    if rows:
        anchors = vectors([r.news for r in rows])
        passages = vectors([r.evidence for r in rows])
        cosines = np.einsum("ij,ij->i", anchors, passages) / (
            np.linalg.norm(anchors, axis=1) * np.linalg.norm(passages, axis=1) + 1e-12
        )
        near = int((cosines >= threshold).sum())
    return ContextAudit(len({r.prediction for r in rows}), len(rows), future, near)
