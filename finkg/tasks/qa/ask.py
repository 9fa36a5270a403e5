"""Auditable answers over filings and documents (papers 002 + 003): `finkg ask`.

One question in, one checked `fkg:Answer` out:

1. preprocessing (`retrieval.decompose`): normalized, split into self-contained
   sub-questions (one per asked sentence, one per listed period);
2. facts (`facts_route`): a numeric question that asks for a line item or a metric of the
   statements is planned from its own words and computed from the statement facts
   available before the answer's instant; when every operand is a stored fact, that is the
   answer (no retrieval, no reader), citing each fact; a yes/no question over a metric gets
   the computed figure as evidence for the reader; otherwise, the steps below;
3. routing, per sub-question (paper 002 §4.1, Figure 2's three paths):
   - bank: the memory bank holds a confident match for it as of the answer's instant
     (`retrieval.bank`, paper 002 §4.4); its answer and evidence are taken as they are;
   - tool: it asks about prices and the reader picks a market-data tool for it
     (`tasks.qa.tools`, paper 002 §4.5);
   - documents: multi-path retrieval (`retrieval.passages`: BM25, dense, metadata; RRF
     k=60), chunk bundling, reranking, top-5 (papers 002 §4.2-4.3, 003 stage 5);
4. if every sub-question was answered by the bank, the answer is the bank's (no reader,
   paper 002: "bypass ... deep retrieval, reasoning and generation"); a numeric question
   whose operation and operands finkg can read from the blocks' table cells is computed
   by finkg (`arithmetic`, `calculator`: the answer shows the operation and cites
   each operand); otherwise the reader answers the whole question from all the evidence
   blocks in paper 003's JSON schema, citing block ids, and its citations are checked;
5. grounding (`reader.grounding`): G, Gc, N, J, S_comp and the validation status, recomputed
   by finkg whatever the reader said (a calculation's operands are number claims, each
   checked against its block; its operation and result count as grounded only when every
   operand passes; for a question about one line item in one year, a reader's figure must
   be that fact's value, not merely a number in the cited text: `facts_route.row_check`);
6. the answer, its sub-questions and routes, its citations and its run (every context
   passage with its rank and reranker score) checked against the shapes and written in one
   commit; `finkg audit` walks from it to the cited chunks, their document, offsets and
   lifecycle transitions.

Everything read is available strictly before `as_of` (the answer's `fkg:asOf`): passages,
bank entries, bars and summaries; the output shapes check it again before the write.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from pyoxigraph import NamedNode, Quad

from finkg.errors import InputError, require_zone
from finkg.kg.store import BaseStore
from finkg.reader import grounding
from finkg.reader.llm import LLM, ContextOverflow
from finkg.reader.read import ReadResult, prompt, read
from finkg.reader.schemas import Answer, Insight, ToolCall
from finkg.reader.transport.concurrent import concurrency_of, run_all
from finkg.reader.transport.endpoint import RequestFailed
from finkg.reader.transport.usage import Usage, metered
from finkg.retrieval.index.live import node_texts
from finkg.retrieval.memory import bank
from finkg.retrieval.passages import PassageRetriever
from finkg.retrieval.plan.decompose import SubQuestion, clean, decompose
from finkg.retrieval.rank.rerank import Reranker, bundle, rerank
from finkg.tasks.qa import arithmetic, facts_route, tools
from finkg.tasks.qa.blocks import Block, block_text, drop_weakest, numbered
from finkg.tasks.qa.output import write_answer, write_failed_answer
from finkg.tasks.qa.scoring import bank_answer, scores_of, verified_status
from finkg.tasks.qa.types import Asked, Part, QAConfig, Staged

ROUTES = ("facts", "bank", "tool", "documents")


@dataclass
class QA:
    """What answering needs: the store, the retriever, the reader, optional bank and reranker.

    `facts_only(store)` needs none of the retriever, reader or indexes: it answers what the
    statement facts answer (`answer_from_facts`), in well under a second."""

    store: BaseStore
    retriever: PassageRetriever | None
    llm: LLM | None
    reranker: Reranker | None = None
    matcher: bank.Matcher | None = None
    config: QAConfig = field(default_factory=QAConfig)

    @classmethod
    def facts_only(cls, store: BaseStore, config: QAConfig | None = None) -> QA:
        return cls(store, None, None, config=config or QAConfig())

    def answer_from_facts(
        self,
        question: str,
        *,
        as_of: dt.datetime,
        company: NamedNode | None = None,
        documents: Sequence[NamedNode] = (),
        write: bool = True,
    ) -> Asked | None:
        """The answer the statement facts give (written), or None: then `ask` reads."""
        require_zone(as_of, field="as_of", what="the answer's instant")
        staged = self._stage(
            question, as_of=as_of, company=company, documents=documents, facts_only=True
        )
        if staged.facts is None or not staged.facts.answers:
            return None
        asked = self._answer(staged)
        if write:
            asked.iri = self._write(asked, staged, company, documents)
        return asked

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
        require_zone(as_of, field="as_of", what="the answer's instant")
        if self.retriever is None or self.llm is None:
            raise InputError(
                "this QA answers from statement facts only: open it with a retriever and a "
                "reader (tasks.qa.setup.open_qa) to read",
                field="qa",
            )
        staged = [
            self._stage(q, as_of=as_of, company=company, documents=documents) for q in questions
        ]
        outcomes = run_all(
            [partial(self._answer, s) for s in staged], concurrency=concurrency_of(self.llm)
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
                asked.iri = self._write(asked, s, company, documents)
            out.append(asked)
        return out

    def _write(
        self, asked: Asked, s: Staged, company: NamedNode | None, documents: Sequence[NamedNode]
    ) -> NamedNode:
        return write_answer(
            self.store,
            asked,
            config=self.config,
            retriever_paths=self.retriever.paths if self.retriever is not None else (),
            reranker=self.reranker.model_id if self.reranker is not None else "none",
            company=company,
            documents=documents,
            started=s.started,
        )

    def _stage(
        self,
        question: str,
        *,
        as_of: dt.datetime,
        company: NamedNode | None,
        documents: Sequence[NamedNode],
        facts_only: bool = False,
    ) -> Staged:
        """Preprocessing and routing: everything before the answer's read (with
        `facts_only`, the facts route alone)."""
        started = dt.datetime.now(dt.UTC)
        with metered() as usage:
            text = clean(question)
            seconds: dict[str, float] = {}
            t = time.perf_counter()
            facts = None
            if self.config.facts:
                facts = facts_route.route(
                    self.store, text, as_of=as_of, company=company, documents=documents
                )
            seconds["facts"] = time.perf_counter() - t
            if facts_only or (facts is not None and facts.answers):
                if facts is not None and facts.answers:
                    part = Part(SubQuestion(text, None), "facts", facts.blocks)
                    blocks = facts.blocks
                else:
                    part, blocks = Part(SubQuestion(text, None), "facts", []), []
                return Staged(text, as_of, [part], blocks, seconds, started, usage, facts)
            t = time.perf_counter()
            parts = [Part(sq, "documents") for sq in decompose(text)]
            seconds["preprocess"] = time.perf_counter() - t
            for part in parts:
                self._route(
                    part, as_of=as_of, company=company, documents=documents, seconds=seconds
                )
        blocks = [b for p in parts for b in p.blocks]
        if facts is not None and facts.calculation is not None:  # a yes/no judgement's figure
            blocks.insert(0, facts_route.figure_block(facts.calculation, facts.blocks))
        return Staged(text, as_of, parts, numbered(blocks), seconds, started, usage, facts)

    def _answer(self, s: Staged) -> Asked:
        """The reader's answer from the staged evidence, and its grounding (no store)."""
        t = time.perf_counter()
        blocks = s.blocks
        calc = None
        facts = s.facts
        output: Answer | None
        result: ReadResult | None
        with metered() as usage:
            try:
                if facts is not None and facts.answers and facts.calculation is not None:
                    output, result = facts_route.answer_of(facts.calculation, blocks), None
                elif all(p.route == "bank" for p in s.parts):
                    output, result = bank_answer(s.parts, blocks), None
                elif (calc := self._calculate(s.text, blocks)) is not None:
                    output, result = arithmetic.answer_of(calc), None
                else:
                    output, result, blocks = self._read(s.text, s.as_of, blocks)
            except RequestFailed as e:
                e.usage = usage
                raise
        seconds = {**s.seconds, "read": time.perf_counter() - t}
        computed = facts.calculation if facts is not None and facts.answers else None
        derived = [str(calc)] if calc is not None else [str(computed)] if computed else []
        scores, status = scores_of(output, result, blocks, derived)
        figure = facts.calculation if facts is not None and not facts.answers else None
        if figure is not None and output is not None:  # a yes/no judgement over a metric
            note = f"finkg computed from the statements: {figure}; the judgement is the reader's"
            output.insights.append(Insight(text=note[:300], citations=["F1"]))
        if computed is not None:  # how sure finkg is of the formula and the operands
            verified: bool | None = True if computed.status == "High" else None
        elif all(p.route == "bank" for p in s.parts):  # the memory bank's verified answers
            verified = True
        elif result is not None and output is not None:  # a reader's figure: the row check
            verified = facts_route.row_check(facts, [c.value for c in output.numbers])
        else:
            verified = None
        if verified is False and result is not None:
            scores["n"] = 0.0
            scores["s_comp"] = grounding.s_comp(scores["g"], scores["j"], 0.0)
        status = verified_status(status, verified)
        usage.add(s.usage)
        asked = Asked(
            s.text, s.as_of, s.parts, blocks, output, result, scores, status, seconds, usage=usage
        )
        asked.calculation = calc
        asked.facts = computed
        asked.note = facts.note if facts is not None else ""
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
        assert self.llm is not None  # ask_many checks it before routing
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
        assert self.retriever is not None  # ask_many checks it before routing
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
            Block("C", "", block_text(h, body, c.block_chars, lab), h.node, (h.node,), rank, s)
            for rank, ((h, s), body, lab) in enumerate(zip(top, bodies, labels, strict=True), 1)
        ]

    # -- reading ---------------------------------------------------------------------------

    def _read(
        self, question: str, as_of: dt.datetime, blocks: list[Block]
    ) -> tuple[Answer | None, ReadResult | None, list[Block]]:
        """The reader's answer; past the context window, the weakest block goes first."""
        assert self.llm is not None  # ask_many checks it before reading
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
                blocks = numbered(drop_weakest(blocks))
                continue
            output = result.output if isinstance(result.output, Answer) else None
            return output, result, blocks


__all__ = ["QA", "ROUTES", "Asked", "Block", "QAConfig", "Quad"]
