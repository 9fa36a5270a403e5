"""Writing an output with the run that produced it: checked, then one transaction.

A task builds its output's quads (a prediction, an answer, a recommendation) and a
`RunRecord` (task, model, prompt hashes, parameters, tokens, timing, the evidence used with
ranks and scores). `write_output` adds the run's quads, fetches from the store what the
checks need about the used and cited evidence, validates everything against finkg's shapes
(including: nothing used or cited is available at or after the output's `fkg:asOf`, and
every citation resolves to stored evidence), and writes output and run as one commit.

Run and output IRIs come from the task's key (for example the anchor, model and prompt
hash), so writing the same output twice adds nothing.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pyoxigraph import Literal, NamedNode, Quad

from finkg import queries
from finkg.errors import FinkgError
from finkg.kg.ingest import common
from finkg.kg.iri import mint
from finkg.kg.store import BaseStore, Commit
from finkg.ontology.terms import FKG, PROV, RDF, RDFS, XSD
from finkg.shapes.validate import Report, validate_quads


class OutputRejected(FinkgError):
    """An output broke finkg's output shapes and was not written."""

    exit_code = 1

    def __init__(self, report: Report) -> None:
        self.report = report
        super().__init__("output not written: " + report.text(limit=5))


@dataclass(frozen=True)
class Used:
    evidence: NamedNode
    rank: int
    score: float | None = None


@dataclass(frozen=True, kw_only=True)
class Cost:
    """What a run's reads cost: HTTP requests answered and attempts retried (a remote
    reader's; 0 for a local one), the reader's seconds, each failed attempt in words, and the
    requests that failed for good (the run then wrote no output)."""

    requests: int = 0
    retries: int = 0
    seconds: float = 0.0
    attempts: Sequence[str] = ()
    failed: Sequence[str] = ()


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    task: str
    model_id: str
    started: dt.datetime
    ended: dt.datetime
    prompt_hash: str | None = None
    template_hash: str | None = None
    parameters: Mapping[str, object] = field(default_factory=dict)
    tokens_in: int = 0
    tokens_out: int = 0
    json_valid: bool | None = None
    invalid_citations: int = 0
    used: Sequence[Used] = ()
    cost: Cost | None = None  # recorded when the task meters its reads


def run_iri(store: BaseStore, task: str, *key: object) -> NamedNode:
    return mint("run", task, *key, base=store.graphs.base)


ADAPTER = re.compile(r"\+lora:([0-9a-f]{64})$")  # how a reader's model id names its adapter


def adapter_of(model_id: str) -> str | None:
    """The SHA-256 of the LoRA adapter a reader's model id names (`...+lora:SHA256`).

    >>> adapter_of("qwen2.5-coder-0.5b@sha256:4f3b+lora:" + "a" * 64) == "a" * 64
    True
    >>> adapter_of("qwen2.5-coder-0.5b@sha256:4f3b") is None
    True
    """
    found = ADAPTER.search(model_id)
    return found.group(1) if found else None


def run_quads(run: NamedNode, record: RunRecord, graph: NamedNode, *, base: str) -> list[Quad]:
    q = common.Quads(graph)
    adapter = adapter_of(record.model_id)
    if adapter is not None:  # the reader read with an adapter: the run used it
        node = mint("adapter", adapter, base=base)
        q.node(run, (PROV.used, node))
        q.node(node, (RDF.type, FKG.ReaderAdapter), (FKG.adapterSha256, Literal(adapter)))
    q.node(
        run,
        (RDF.type, FKG.Run),
        (RDFS.label, Literal(f"{record.task} run")),
        (FKG.task, Literal(record.task)),
        (FKG.modelId, Literal(record.model_id)),
        (FKG.promptHash, Literal(record.prompt_hash) if record.prompt_hash else None),
        (FKG.templateHash, Literal(record.template_hash) if record.template_hash else None),
        (
            FKG.parameters,
            Literal(
                json.dumps(dict(record.parameters), sort_keys=True, default=str), datatype=RDF.JSON
            ),
        ),
        (PROV.startedAtTime, common.datetime(record.started)),
        (PROV.endedAtTime, common.datetime(record.ended)),
        (FKG.tokensIn, common.integer(record.tokens_in)),
        (FKG.tokensOut, common.integer(record.tokens_out)),
        (
            FKG.jsonValid,
            None
            if record.json_valid is None
            else Literal("true" if record.json_valid else "false", datatype=XSD.boolean),
        ),
        (FKG.invalidCitations, common.integer(record.invalid_citations)),
    )
    if record.cost is not None:
        c = record.cost
        q.node(
            run,
            (FKG.requests, common.integer(c.requests)),
            (FKG.retries, common.integer(c.retries)),
            (FKG.readerSeconds, common.double(max(0.0, c.seconds))),
            *[(FKG.attemptFailure, Literal(a)) for a in c.attempts],
            *[(FKG.failedRequest, Literal(f)) for f in c.failed],
        )
    for used in record.used:
        usage = NamedNode(f"{run.value}/usage/{used.rank}")
        q.node(run, (PROV.used, used.evidence), (PROV.qualifiedUsage, usage))
        q.node(
            usage,
            (RDF.type, PROV.Usage),
            (PROV.entity, used.evidence),
            (FKG.rank, common.integer(used.rank)),
            (FKG.score, None if used.score is None else common.double(used.score)),
        )
    return q.items


def write_failed_run(
    store: BaseStore, record: RunRecord, *, run: NamedNode, note: str
) -> Commit | None:
    """Check and write the run of a read that failed for good (`record.cost.failed` names
    the request), alone: there is no output, and nothing of one is written."""
    if record.cost is None or not record.cost.failed:
        raise FinkgError("a failed run names the request that failed (record.cost.failed)")
    quads = run_quads(run, record, store.graphs.outputs, base=store.graphs.base)
    report = validate_quads(quads)
    if not report.conforms:
        raise OutputRejected(report)
    return store.write(add=quads, note=note)


def write_output(
    store: BaseStore,
    record: RunRecord,
    quads: Sequence[Quad],
    *,
    output: NamedNode,
    run: NamedNode,
    note: str,
) -> Commit | None:
    """Check and write `output` (its `quads`) with its run; None if it is already stored."""
    if queries.select(store, "existing_nodes", {"node": [output]}):
        return None
    quads = [*quads, *run_quads(run, record, store.graphs.outputs, base=store.graphs.base)]
    referenced = sorted(
        {
            q.object
            for q in quads
            if q.predicate in (FKG.cites, PROV.entity) and isinstance(q.object, NamedNode)
        },
        key=lambda n: n.value,
    )
    context = (
        queries.construct(store, "evidence_context", {"node": referenced}) if referenced else []
    )
    report = validate_quads([*quads, *(Quad(t.subject, t.predicate, t.object) for t in context)])
    if not report.conforms:
        raise OutputRejected(report)
    return store.write(add=quads, note=note)
