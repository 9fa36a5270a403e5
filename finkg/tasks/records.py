"""Reader outputs as RDF: the quads of each output kind, citing evidence by IRI.

The reader sees evidence under short ids (`N1`, `F2`); `ids` maps them back to the
evidence IRIs, which are what the graph cites.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping, Sequence

from pyoxigraph import Literal, NamedNode, Quad

from finkg.kg.ingest import common
from finkg.kg.outputs import Cost
from finkg.ontology.terms import FKG, PROV, RDF
from finkg.reader.schemas import ImpactPrediction, Recommendation
from finkg.reader.transport.usage import Usage


def impact_quads(
    prediction: ImpactPrediction,
    *,
    output: NamedNode,
    anchor: NamedNode,
    run: NamedNode,
    as_of: dt.datetime,
    ids: Mapping[str, NamedNode],
    graph: NamedNode,
    probabilities: Mapping[int, Mapping[str, float]] | None = None,
    decided_by: Mapping[int, NamedNode] | None = None,
) -> list[Quad]:
    """An fkg:ImpactPrediction with one fkg:HorizonSignal per horizon; a scored decision's
    signals carry the options' probabilities (`up`, `neutral`, `down`) and the head that
    decided."""
    q = common.Quads(graph)
    uncertainty = prediction.main_uncertainty  # empty from a compact reply, then not written
    q.node(
        output,
        (RDF.type, FKG.ImpactPrediction),
        (FKG.anchor, anchor),
        (FKG.asOf, common.datetime(as_of)),
        (PROV.wasGeneratedBy, run),
        *(((FKG.reason, Literal(uncertainty)),) if uncertainty else ()),
    )
    for horizon, signal in prediction.signals.by_horizon().items():
        node = NamedNode(f"{output.value}/{horizon}D")
        q.node(output, (FKG.signal, node))
        q.node(
            node,
            (RDF.type, FKG.HorizonSignal),
            (FKG.horizon, common.integer(horizon)),
            (FKG.signalValue, common.integer(signal.value)),
            *(((FKG.reason, Literal(signal.reason)),) if signal.reason else ()),
            *((FKG.cites, ids[i]) for i in signal.ids if i in ids),
        )
        if probabilities is not None:
            p = probabilities[horizon]
            q.node(
                node,
                (FKG.upProbability, common.double(p["up"])),
                (FKG.neutralProbability, common.double(p["neutral"])),
                (FKG.downProbability, common.double(p["down"])),
            )
        if decided_by and horizon in decided_by:
            q.node(node, (FKG.decidedBy, decided_by[horizon]))
    return q.items


def recommendation_quads(
    recommendation: Recommendation,
    *,
    output: NamedNode,
    customer: NamedNode,
    run: NamedNode,
    as_of: dt.datetime,
    evidence: Collection[str],
    graph: NamedNode,
) -> list[Quad]:
    """An fkg:Recommendation of three assets, one fkg:RecommendedAsset per pick; cited
    nodes in `evidence` (they carry fkg:availableAt) are fkg:cites, the others (assets, the
    customer) fkg:refersTo."""
    q = common.Quads(graph)
    q.node(
        output,
        (RDF.type, FKG.Recommendation),
        (FKG.forCustomer, customer),
        (FKG.asOf, common.datetime(as_of)),
        (PROV.wasGeneratedBy, run),
    )
    for position, pick in enumerate(recommendation.recommendations, start=1):
        node = NamedNode(f"{output.value}/{position}")
        asset = NamedNode(pick.asset)
        q.node(output, (FKG.recommends, asset), (FKG.pick, node))
        q.node(
            node,
            (RDF.type, FKG.RecommendedAsset),
            (FKG.asset, asset),
            (FKG.position, common.integer(position)),
            (FKG.reason, common.string(pick.reason)),
            *(
                (FKG.cites if i in evidence else FKG.refersTo, NamedNode(i))
                for i in dict.fromkeys(pick.evidence)
            ),
        )
    return q.items


def run_cost(usage: Usage, *, seconds: float | None = None, failed: Sequence[str] = ()) -> Cost:
    """A run's `Cost` from what its reads were metered at (`reader.usage`); `seconds` is
    the reader's time when the task measured it itself (a cache hit: 0), and `failed` names
    requests that failed for good besides those the meter saw."""
    return Cost(
        requests=usage.requests,
        retries=usage.retries,
        seconds=usage.seconds if seconds is None else seconds,
        attempts=tuple(usage.attempts),
        failed=tuple(dict.fromkeys([*usage.failed, *failed])),
    )
