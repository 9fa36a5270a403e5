"""Decision heads as RDF: a fitted head's state in the memory graph, read back as of any
instant (`queries/decision_head.rq`). Written through the shape checks like every output."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any, TypedDict

from pyoxigraph import Literal, NamedNode, Quad

from finkg import queries
from finkg.kg.ingest import common
from finkg.kg.iri import mint
from finkg.kg.outputs import OutputRejected
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG, RDF
from finkg.shapes.validate import validate_quads
from finkg.tasks.heads import HeadState

JSON = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON")


@dataclass(frozen=True)
class Head:
    """A decision head an output used: its IRI in the memory graph and its state."""

    iri: NamedNode
    state: HeadState


def head_iri(store: BaseStore, task: str, state: HeadState) -> NamedNode:
    return mint(
        "head", task, state.kind, state.as_of.isoformat(), state.sha256, base=store.graphs.base
    )


def head_quads(store: BaseStore, task: str, state: HeadState) -> tuple[NamedNode, list[Quad]]:
    node = head_iri(store, task, state)
    q = common.Quads(store.graphs.memory)
    q.node(
        node,
        (RDF.type, FKG.DecisionHead),
        (FKG.task, common.string(task)),
        (FKG.headKind, common.string(state.kind)),
        (FKG.asOf, common.datetime(state.as_of)),
        (FKG.sampleSize, common.integer(state.n)),
        (FKG.windowStart, common.datetime(state.first) if state.first else None),
        (FKG.windowEnd, common.datetime(state.last) if state.last else None),
        (FKG.headState, Literal(state.parameters_json(), datatype=JSON)),
        (FKG.stateHash, common.string(state.sha256)),
    )
    return node, q.items


def write_head(store: BaseStore, task: str, state: HeadState) -> NamedNode:
    """Check and write a head's state (nothing is written when it is already stored)."""
    node, quads = head_quads(store, task, state)
    if not queries.select(store, "existing_nodes", {"node": [node]}):
        report = validate_quads(quads)
        if not report.conforms:
            raise OutputRejected(report)
        store.write(add=quads, note=f"decision head {task} {state.kind} as of {state.as_of}")
    return node


class StoredHead(TypedDict):
    """A head read back from the memory graph (`head_as_of`)."""

    head: NamedNode
    as_of: dt.datetime
    n: int
    state: dict[str, Any]
    sha256: str
    head_state: HeadState


def head_as_of(store: BaseStore, task: str, kind: str, before: dt.datetime) -> StoredHead | None:
    """The latest head of `task` and `kind` fitted as of an instant at or before `before`:
    its IRI, instant, sample size, state (parsed) and `HeadState` (`state_of`), or None."""
    r = queries.select(
        store, "decision_head", {"task": task, "kind": kind, "before": before}
    ).first()
    if r is None:
        return None
    as_of = r.datetime("asOf")
    n = r.integer("n")
    return {
        "head": r.iri("head"),
        "as_of": as_of,
        "n": n,
        "state": json.loads(r.string("state")),
        "sha256": r.string("hash"),
        "head_state": state_of(json.loads(r.string("state")), as_of, n),
    }


def state_of(data: dict, as_of: dt.datetime, n: int) -> HeadState:
    """A stored head's state, ready to decide (its fitting window is not needed for that)."""
    params = {k: v for k, v in data.items() if k not in ("kind", "classes")}
    return HeadState(data["kind"], tuple(data["classes"]), as_of, n, None, None, params)
