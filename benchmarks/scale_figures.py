"""What `benchmarks/scale.py` measures, as `scale_report.py` writes and reads it."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmarks.scale_indexes import IndexFigures


@dataclass
class Replica:
    """One unit's ingest into each store."""

    replica: int
    records: int
    quads: int  # what finkg's batch loaders wrote (the documents' few hundred not counted)
    seconds: float
    peak_rss_mb: float
    rss_before_mb: float  # when the ingest began (what earlier work left in the process)
    raw_quads: int
    raw_seconds: float
    kinds: dict[str, float] = field(default_factory=dict)  # seconds per kind


@dataclass
class Group:
    """One group of anchors' query figures at one size."""

    anchors: int
    pool_ms: tuple[float, float]  # p50, p95
    one_hop_ms: tuple[float, float]
    evidence_ms: tuple[float, float]
    pool_rows: float  # median
    one_hop_triples: float
    evidence_rows: float
    # anchors whose answer equals the first size's, per query
    same: dict[str, int] = field(default_factory=dict)


@dataclass
class Size:
    units: int
    triples: int
    raw_triples: int
    store_mb: float
    raw_mb: float
    ingest: Replica
    pool_ms: tuple[float, float]
    one_hop_ms: tuple[float, float]
    evidence_ms: tuple[float, float]
    groups: dict[str, Group]
    anchors: int
    index: IndexFigures
    validate_s: float | None
    conforms: bool | None
