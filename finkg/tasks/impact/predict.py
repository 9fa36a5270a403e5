"""Event-impact predictions (paper 000): one anchor in, one checked prediction out, as RDF.

For an anchor: the point-in-time pool (M0 candidates, `retrieval.pools`), the source
memory as of the decision time (`retrieval.memory`, none for the static variant), the
shared top-M by mean memory-adjusted score, the market-context card from bars up to the
session before P, and the frozen reader (prompt `impact`, JSON schema narrowed to the
given ids). The prediction, its horizon signals and citations, the anchor, and the run
(model, prompt hash, parameters, the memory it read, every used item with rank and score)
are validated against the output shapes and written in one commit.

A variant is the memory a run reads: `None` (static retrieval) or a `SourceMemory` (cited
evidence, or one of the validity checks). Predictions are keyed by (variant, anchor,
model), so variants and models live side by side and rerunning adds nothing.

`predict` is three steps (`steps.prepare`, `steps.read_prepared`, `steps.finish`), which the
prequential runner takes apart to read the anchors of one decision session together.
"""

from __future__ import annotations

from collections.abc import Mapping

from finkg.kg.store import BaseStore
from finkg.reader.llm import LLM
from finkg.reader.read import OutputCache
from finkg.retrieval.memory.source import MemoryTimeline, SourceMemory
from finkg.retrieval.pools import TextSource, VectorSource
from finkg.tasks.head_records import Head
from finkg.tasks.impact.anchors import Anchor
from finkg.tasks.impact.inputs import (
    REPLIES,
    REPLY_FORMS,
    SCORED,
    AnchorInputs,
    ImpactConfig,
    ImpactResult,
    Retrieved,
    anchor_inputs,
    retrieve,
    shown_card,
)
from finkg.tasks.impact.steps import finish, prepare, read_prepared

__all__ = [
    "REPLIES",
    "REPLY_FORMS",
    "SCORED",
    "AnchorInputs",
    "ImpactConfig",
    "ImpactResult",
    "Retrieved",
    "anchor_inputs",
    "predict",
    "retrieve",
    "shown_card",
]


def predict(
    store: BaseStore,
    anchor: Anchor,
    *,
    llm: LLM,
    texts: TextSource,
    vectors: VectorSource,
    memory: SourceMemory | None,
    config: ImpactConfig | None = None,
    cache: OutputCache | None = None,
    timeline: MemoryTimeline | None = None,
    inputs: AnchorInputs | None = None,
    heads: Mapping[int, Head] | None = None,
) -> ImpactResult:
    """Retrieve, read and write one anchor's prediction (module docstring); `inputs` are
    the anchor's pool, card and features when the caller built them already; `heads` decide
    a scored reply per horizon (none: the raw argmax), each fitted before the decision."""
    p = prepare(
        store,
        anchor,
        texts=texts,
        vectors=vectors,
        memory=memory,
        config=config or ImpactConfig(),
        timeline=timeline,
        inputs=inputs,
        heads=heads,
    )
    return finish(store, llm, p, read_prepared(llm, p, cache=cache))
