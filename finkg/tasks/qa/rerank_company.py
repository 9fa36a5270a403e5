"""Stage 2 data of the reranker (paper 002 §4.3, Procedure 1 lines 23-28): one company's
passages, questions and relevance labels, all from the reader.

1. The company's documents (PDFs) go through finkg's own extraction and normalisation
   (`doctext.pdf_to_text`, `chunking.normalize`) and are cut with `chunking.chunk` into
   passages short enough for one encoder window and for the reader's prompt.
2. Q_target: for a seeded sample of passages (those of 40 words or more) the reader writes
   one question each (`chunk_question` prompt, `ChunkQuestion` schema). No human question
   and no FinanceBench question or evidence label is used.
3. R(q, C_target): BM25 and the packaged MiniLM over the company's passages, fused by RRF;
   the top `candidates`, with the passage the question came from put in if missing.
4. L_anno: the reader's yes/no relevance (`LLMReranker`, eq. 3) labels each candidate:
   P(yes) >= `threshold` is a positive, below it a hard negative. A question with no
   positive is dropped. `random_negatives` passages from outside the candidates are added
   as random negatives, unlabelled, as the paper does.

Every question, candidate, probability and label is returned as a record, so the training
set can be read back (`stage2_pairs.jsonl` beside the model).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from finkg.kg import chunking
from finkg.kg.ingest import doctext
from finkg.reader.llm import LLM
from finkg.reader.read import prompt, read
from finkg.reader.schemas import ChunkQuestion
from finkg.retrieval.index.embed import Embedder
from finkg.retrieval.rank.cross_encoder import Group
from finkg.retrieval.rank.rerank import LLMReranker
from finkg.retrieval.sequences import Progress
from finkg.tasks.qa.rerank_data import Miner

MIN_WORDS = 40


def document_passages(path: Path, *, size: int, overlap: int) -> list[str]:
    """A PDF's passages as finkg's document ingest would extract and chunk them."""
    text = chunking.normalize(doctext.pdf_to_text(path.read_bytes(), source=str(path)))
    return [c.text for c in chunking.chunk(text, size=size, overlap=overlap)]


@dataclass(frozen=True)
class Labelled:
    question: str
    source: int  # the passage it was written from
    candidates: tuple[int, ...]
    p_yes: tuple[float, ...]
    random: tuple[int, ...]
    threshold: float

    def group(self, passages: Sequence[str]) -> Group:
        pos = [
            passages[c]
            for c, p in zip(self.candidates, self.p_yes, strict=True)
            if p >= self.threshold
        ]
        hard = [
            passages[c]
            for c, p in zip(self.candidates, self.p_yes, strict=True)
            if p < self.threshold
        ]
        return Group(self.question, tuple(pos), tuple(hard + [passages[r] for r in self.random]))

    def record(self) -> dict[str, object]:
        return {
            "question": self.question,
            "source": self.source,
            "candidates": [
                {"passage": c, "p_yes": round(p, 6), "positive": p >= self.threshold}
                for c, p in zip(self.candidates, self.p_yes, strict=True)
            ],
            "random_negatives": list(self.random),
        }


def write_questions(
    llm: LLM,
    company: str,
    passages: Sequence[str],
    *,
    n: int,
    seed: int,
    progress: Progress | None = None,
) -> list[tuple[int, str]]:
    """(passage index, question) for up to `n` seeded passages the reader wrote one for."""
    eligible = [i for i, p in enumerate(passages) if len(p.split()) >= MIN_WORDS]
    order = random.Random(seed).sample(eligible, len(eligible))
    template = prompt("chunk_question")
    out: list[tuple[int, str]] = []
    for tried, i in enumerate(order):
        if len(out) == n or tried >= 2 * n:  # a reader that keeps failing is not retried forever
            break
        result = read(
            llm, template, {"company": company, "chunk": passages[i]}, ChunkQuestion, max_tokens=96
        )
        if isinstance(result.output, ChunkQuestion):
            out.append((i, result.output.question.strip()))
        if progress:
            progress("write questions", len(out), n)
    return out


def label(
    llm: LLM,
    questions: Sequence[tuple[int, str]],
    passages: Sequence[str],
    embedder: Embedder,
    *,
    candidates: int,
    random_negatives: int,
    threshold: float,
    seed: int,
    progress: Progress | None = None,
) -> list[Labelled]:
    """Retrieve candidates for each question and have the reader label them (steps 3-4)."""
    keys = [str(i) for i in range(len(passages))]
    miner = Miner(keys, passages, embedder)
    annotator = LLMReranker(llm)
    draw = random.Random(seed)
    out = []
    for n, (source, question) in enumerate(questions):
        top = [int(k) for k in miner.top(question, candidates, exclude=None)]
        if source not in top:
            top[-1] = source
        p_yes = annotator.scores(question, [passages[i] for i in top])
        rest = [i for i in range(len(passages)) if i not in set(top)]
        rand = draw.sample(rest, min(random_negatives, len(rest)))
        item = Labelled(
            question, source, tuple(top), tuple(float(p) for p in p_yes), tuple(rand), threshold
        )
        if any(p >= threshold for p in item.p_yes):
            out.append(item)
        if progress:
            progress("label candidates", n + 1, len(questions))
    return out
