"""Auditable answers over filings and documents (papers 002 + 003): `finkg ask`.

One question in, one checked `fkg:Answer` out:

1. preprocessing (`retrieval.decompose`): normalized, split into self-contained
   sub-questions (one per asked sentence, one per listed period);
2. routing, per sub-question (paper 002 §4.1, Figure 2's three paths):
   - bank: the memory bank holds a confident match for it as of the answer's instant
     (`retrieval.bank`, paper 002 §4.4); its answer and evidence are taken as they are;
   - tool: it asks about prices and the reader picks a market-data tool for it
     (`tasks.qa.tools`, paper 002 §4.5);
   - documents: multi-path retrieval (`retrieval.passages`: BM25, dense, metadata; RRF
     k=60), chunk bundling, reranking, top-5 (papers 002 §4.2-4.3, 003 stage 5);
3. if every sub-question was answered by the bank, the answer is the bank's (no reader,
   paper 002: "bypass ... deep retrieval, reasoning and generation"); a numeric question
   whose operation and operands finkg can read from the blocks' table cells is computed
   by finkg (`arithmetic`, `reader.calculator`: the answer shows the operation and cites
   each operand); otherwise the reader answers the whole question from all the evidence
   blocks in paper 003's JSON schema, citing block ids, and its citations are checked;
4. grounding (`reader.grounding`): G, Gc, N, J, S_comp and the validation status, recomputed
   by finkg whatever the reader said (a calculation's operands are number claims, each
   checked against its block; its operation and result count as grounded only when every
   operand passes);
5. the answer, its sub-questions and routes, its citations and its run (every context
   passage with its rank and reranker score) checked against the shapes and written in one
   commit; `finkg audit` walks from it to the cited chunks, their document, offsets and
   lifecycle transitions.

Everything read is available strictly before `as_of` (the answer's `fkg:asOf`): passages,
bank entries, bars and summaries; the output shapes check it again before the write.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from pyoxigraph import NamedNode, Quad

from finkg.errors import InputError
from finkg.kg.statements import Section
from finkg.kg.store import BaseStore
from finkg.reader import grounding
from finkg.reader.concurrent import concurrency_of, run_all
from finkg.reader.llm import LLM, ContextOverflow
from finkg.reader.read import ReadResult, prompt, read
from finkg.reader.schemas import Answer, ToolCall
from finkg.reader.transport import RequestFailed
from finkg.reader.usage import Usage, metered
from finkg.retrieval import bank
from finkg.retrieval.decompose import clean, decompose
from finkg.retrieval.live import node_texts
from finkg.retrieval.passages import Hit, PassageRetriever
from finkg.retrieval.rerank import Reranker, bundle, rerank
from finkg.tasks.qa import arithmetic, tools
from finkg.tasks.qa.output import write_answer, write_failed_answer
from finkg.tasks.qa.types import Asked, Block, Part, QAConfig, Staged

ROUTES = ("bank", "tool", "documents")


@dataclass
class QA:
    """What answering needs: the store, the retriever, the reader, optional bank and reranker."""

    store: BaseStore
    retriever: PassageRetriever
    llm: LLM
    reranker: Reranker | None = None
    matcher: bank.Matcher | None = None
    config: QAConfig = field(default_factory=QAConfig)

    def ask(
        self,
        question: str,
        *,
        as_of: dt.datetime,
        company: NamedNode | None = None,
        documents: Sequence[NamedNode] = (),
        write: bool = True,
    ) -> Asked:
        return self.ask_many(
            [question], as_of=as_of, company=company, documents=documents, write=write
        )[0]

    def ask_many(
        self,
        questions: Sequence[str],
        *,
        as_of: dt.datetime,
        company: NamedNode | None = None,
        documents: Sequence[NamedNode] = (),
        write: bool = True,
    ) -> list[Asked]:
        """Answer each question as `ask` does: routed and retrieved one after another, read
        together on the reader's concurrency (`reader.concurrent`), checked and written in
        the order given, so the answers written are those asked one at a time. A read whose
        request fails for good stops there: the answers before it are written, a run names
        the request (`output.write_failed_answer`), nothing after it is written."""
        if as_of.tzinfo is None or as_of.utcoffset() is None:
            raise InputError(
                "--as-of needs a zone",
                field="as_of",
                value=as_of.isoformat(),
                hint="e.g. 2024-03-01T16:00:00-05:00",
            )
        staged = [
            self._stage(q, as_of=as_of, company=company, documents=documents) for q in questions
        ]
        outcomes = run_all(
            [lambda s=s: self._answer(s) for s in staged], concurrency=concurrency_of(self.llm)
        )
        out = []
        for s, outcome in zip(staged, outcomes, strict=True):
            try:
                asked = outcome.get()
            except RequestFailed as e:
                if write:
                    s.usage.add(e.usage or Usage())
                    write_failed_answer(
                        self.store, s, model_id=self.llm.model_id, error=e, config=self.config
                    )
                raise
            if write:
                asked.iri = write_answer(
                    self.store,
                    asked,
                    config=self.config,
                    retriever_paths=self.retriever.paths,
                    reranker=self.reranker.model_id if self.reranker is not None else "none",
                    company=company,
                    documents=documents,
                    started=s.started,
                )
            out.append(asked)
        return out

    def _stage(
        self,
        question: str,
        *,
        as_of: dt.datetime,
        company: NamedNode | None,
        documents: Sequence[NamedNode],
    ) -> Staged:
        """Preprocessing and routing: everything before the answer's read."""
        started = dt.datetime.now(dt.UTC)
        with metered() as usage:
            text = clean(question)
            seconds: dict[str, float] = {}
            t = time.perf_counter()
            parts = [Part(sq, "documents") for sq in decompose(text)]
            seconds["preprocess"] = time.perf_counter() - t
            for part in parts:
                self._route(
                    part, as_of=as_of, company=company, documents=documents, seconds=seconds
                )
        blocks = _numbered([b for p in parts for b in p.blocks])
        return Staged(text, as_of, parts, blocks, seconds, started, usage)

    def _answer(self, s: Staged) -> Asked:
        """The reader's answer from the staged evidence, and its grounding (no store)."""
        t = time.perf_counter()
        blocks = s.blocks
        calc = None
        with metered() as usage:
            try:
                if all(p.route == "bank" for p in s.parts):
                    output, result = _bank_answer(s.parts, blocks), None
                elif (calc := self._calculate(s.text, blocks)) is not None:
                    output, result = arithmetic.answer_of(calc), None
                else:
                    output, result, blocks = self._read(s.text, s.as_of, blocks)
            except RequestFailed as e:
                e.usage = usage
                raise
        seconds = {**s.seconds, "read": time.perf_counter() - t}
        derived = [str(calc)] if calc is not None else []
        scores, status = _grounding(output, result, blocks, derived)
        usage.add(s.usage)
        asked = Asked(
            s.text, s.as_of, s.parts, blocks, output, result, scores, status, seconds, usage=usage
        )
        asked.calculation = calc
        return asked

    # -- routing ---------------------------------------------------------------------------

    def _route(self, part: Part, *, as_of, company, documents, seconds) -> None:
        t = time.perf_counter()
        if self.matcher is not None:
            match = bank.lookup(
                self.store, part.question.text, matcher=self.matcher, before=as_of, company=company
            )
            if match is not None:
                e = match.entry
                part.route, part.answer = "bank", e.answer
                cites = tuple(NamedNode(x) for x in e.evidence)
                text = f"memory bank: {e.question} ({e.period}): {e.answer}"
                part.blocks = [Block("B", "", text, e.iri(self.store.graphs.base), cites)]
                seconds["bank"] = seconds.get("bank", 0) + time.perf_counter() - t
                return
        seconds["bank"] = seconds.get("bank", 0) + time.perf_counter() - t
        if tools.LIVE.search(part.question.text):
            t = time.perf_counter()
            found = self._tool(part.question.text, as_of=as_of, company=company)
            seconds["tool"] = seconds.get("tool", 0) + time.perf_counter() - t
            if found is not None:
                part.route, part.answer = "tool", found.text
                cites = (found.node,) if found.evidence else ()
                part.blocks = [
                    Block("T", "", f"tool {found.tool}: {found.text}", found.node, cites)
                ]
                return
        self._retrieve(part, as_of=as_of, company=company, documents=documents, seconds=seconds)

    def _tool(self, question: str, *, as_of, company) -> tools.ToolResult | None:
        ticker = company.value.rsplit("/", 1)[-1] if company is not None else ""
        result = tools.choose(self.llm, question, as_of=as_of, company=ticker)
        call = result.output
        if not isinstance(call, ToolCall) or call.tool == "none":
            return None
        return tools.call(self.store, call, before=as_of)

    def _calculate(self, question: str, blocks: list[Block]):
        """finkg's calculation for a numeric question, or None (module docstring, step 3)."""
        if not self.config.calculate:
            return None
        passages = [arithmetic.Block(b.id, b.text) for b in blocks if b.kind == "C"]
        llm = self.llm if self.config.choose_by_reader else None
        if arithmetic.operation_of(question)[0] is None and not arithmetic.defined(question):
            return None  # no cue: not asked as a calculation, the reader answers
        return arithmetic.solve(question, passages, llm=llm)

    def _retrieve(self, part: Part, *, as_of, company, documents, seconds) -> None:
        c = self.config
        t = time.perf_counter()
        paths = [p for p in c.paths if p in self.retriever.paths]
        hits = self.retriever.search(
            part.question.text,
            before=as_of,
            company=company,
            documents=documents,
            paths=paths,
            weights=dict(c.weights),
            planned=c.planned,
        )[: c.pool]
        seconds["retrieve"] = seconds.get("retrieve", 0) + time.perf_counter() - t
        t = time.perf_counter()
        texts = node_texts(self.store, [h.node for h in hits])
        if self.reranker is not None and hits:
            order = rerank(
                self.reranker, part.question.text, [(h.node, texts[h.node]) for h in hits]
            )
            ranked = [(hits[r.before], r.score) for r in order]
        else:
            ranked = [(h, h.score) for h in hits]
        seconds["rerank"] = seconds.get("rerank", 0) + time.perf_counter() - t
        top = ranked[: c.top]
        t = time.perf_counter()
        if self.retriever.vectors is not None and c.bundle_k > 0:
            bundles = bundle(
                self.store,
                [h.node for h, _ in top],
                vectors=self.retriever.vectors,
                k=c.bundle_k,
                threshold=c.bundle_tau,
                before=as_of,
            )
            bodies = [b.text for b in bundles]
        else:
            bodies = [texts[h.node] for h, _ in top]
        seconds["bundle"] = seconds.get("bundle", 0) + time.perf_counter() - t
        part.hits = [h for h, _ in top]
        labels = [self.retriever.section(h.passage, tables=True) for h, _ in top]
        part.blocks = [
            Block("C", "", _block_text(h, body, c.block_chars, lab), h.node, (h.node,), rank, s)
            for rank, ((h, s), body, lab) in enumerate(zip(top, bodies, labels, strict=True), 1)
        ]

    # -- reading ---------------------------------------------------------------------------

    def _read(
        self, question: str, as_of: dt.datetime, blocks: list[Block]
    ) -> tuple[Answer | None, ReadResult | None, list[Block]]:
        """The reader's answer; past the context window, the weakest block goes first."""
        while True:
            values = {
                "question": question,
                "as_of": as_of.isoformat(timespec="minutes"),
                "evidence": "\n\n".join(f"[{b.id}] {b.text}" for b in blocks) or "(none)",
                "ids": ", ".join(b.id for b in blocks) or "none",
            }
            try:
                result = read(
                    self.llm,
                    prompt("answer"),
                    values,
                    Answer,
                    allowed_ids=[b.id for b in blocks],
                    max_tokens=self.config.max_tokens,
                )
            except ContextOverflow:
                if not blocks:
                    raise
                blocks = _numbered(_drop_weakest(blocks))
                continue
            output = result.output if isinstance(result.output, Answer) else None
            return output, result, blocks


def _block_text(hit: Hit, body: str, limit: int, section: Section | None = None) -> str:
    """The block as the reader sees it: its document's title, the label of the statement or
    table it lies in (title, period and units line: the header its rows belong to), its
    text."""
    head = hit.passage.title or hit.passage.document.value.rsplit("/", 1)[-1]
    body = body if len(body) <= limit else body[:limit].rsplit(" ", 1)[0] + " ..."
    if section is not None:
        return f"({head}) {section.label}\n{body}"
    return f"({head}) {body}"


def _numbered(blocks: list[Block]) -> list[Block]:
    """Ids by kind and order: C1, C2 for passages, B1 for bank entries, T1 for tool results."""
    counts: Counter[str] = Counter()
    out = []
    for b in blocks:
        counts[b.kind] += 1
        out.append(dataclasses.replace(b, id=f"{b.kind}{counts[b.kind]}"))
    return out


def _drop_weakest(blocks: list[Block]) -> list[Block]:
    passages = [b for b in blocks if b.kind == "C"]
    if not passages:
        return blocks[:-1]
    weakest = passages[-1]
    return [b for b in blocks if b is not weakest]


def _bank_answer(parts: list[Part], blocks: list[Block]) -> Answer:
    """The bank's answers as they stand, each citing its entry's block."""
    insights = [
        {"text": f"{p.question.text} {p.answer}", "citations": [b.id]}
        for p, b in zip(parts, blocks, strict=True)
    ]
    return Answer.model_validate(
        {
            "summary": " ".join(str(p.answer) for p in parts),
            "insights": insights,
            "signals": [],
            "citations": [b.id for b in blocks],
            "numbers": [],
            "validation_status": "High",
        }
    )


def _grounding(
    output: Answer | None,
    result: ReadResult | None,
    blocks: list[Block],
    derived: Sequence[str] = (),
) -> tuple[dict[str, float], str]:
    """G, Gc, N, J, S_comp and the status, from the answer and the evidence it had;
    `derived`: finkg's own calculations, grounded only when every number claim passes N."""
    json_valid = output is not None and (result is None or result.json_valid)
    if output is None:
        scores = {"g": 0.0, "gc": 0.0, "n": 0.0, "j": 0.0}
        scores["s_comp"] = 0.0
        return scores, "Critical Issues"
    by_id = {b.id: b.text for b in blocks}
    claimed = " ".join([output.summary, *(i.text for i in output.insights)])
    n = grounding.numeric_consistency((c.value, by_id.get(c.citation)) for c in output.numbers)
    evidence = list(by_id.values()) + (list(derived) if n == 1.0 else [])
    g = grounding.groundedness(claimed, evidence)
    j = 1.0 if json_valid else 0.0
    s = grounding.s_comp(g.g, j, n)
    uncited = sum(1 for i in output.insights if not i.citations)
    status = grounding.validation_status(
        s=s, gc=g.gc, json_valid=json_valid, uncited_insights=uncited
    )
    return {"g": g.g, "gc": g.gc, "n": n, "j": j, "s_comp": s}, status


__all__ = ["QA", "ROUTES", "Asked", "Block", "QAConfig", "Quad"]
