"""Stage 1 data of the reranker (paper 002 §4.3.1): TAT-QA pairs, entity-abstracted, with
hard negatives mined by the retrievers.

TAT-QA (`tatqa_dataset_dev.json`) gives contexts from annual reports: a table and a few
paragraphs, and questions on them. A context's passages are its table (rows of non-empty
cells joined with " | ", as finkg's HTML extraction writes tables) and each paragraph.
The labels are the annotators':
- positives: the paragraphs in `rel_paragraphs`, and the table when `answer_from` names it
  (`table` or `table-text`);
- negatives from the same context: the other paragraphs, but only when the annotators
  marked paragraphs for that question (a `table` question marks none, so its paragraphs are
  left unlabelled, not called irrelevant); the table of a `text` question is unlabelled too;
- hard negatives from other contexts: the passages of other contexts of the same split that
  BM25 and the packaged MiniLM rank highest for the question (reciprocal rank fusion).
  TAT-QA questions are about their own report ("the company's revenue in 2019"), so another
  report's passage does not answer them, however alike it reads.

Contexts, not questions, are split into train and held-out, so no held-out passage is seen
in training. FinanceBench is never read here: it is what the QA benchmark evaluates on.

Entity abstraction (paper 002's full-abstraction strategy, which served it best) applies to
training groups only; evaluation reads raw text, as the reranker will. Within one group
(query, positives, negatives) the same mention gets the same placeholder:
- periods (`questions.periods_in`: fiscal years, quarters, bare years) become `[YEAR_n]`,
  a quarter `Q3 [YEAR_n]`;
- names become `[NAME_n]`: a run of capitalised words ending in a corporate suffix
  ("Cincinnati Bell Inc."), and any run of capitalised words none of which the corpus ever
  writes in lower case ("Proofpoint", "Sandwich Bros"), months and weekdays excepted;
- exchange tickers ("NYSE: ABC") become `[TICKER]`.

>>> a = Abstractor(["what was the revenue in", "the bell rang", "revenue grew and did not"])
>>> q, p = a.abstract(["What was Proofpoint's revenue in FY2019?",
...     "Proofpoint revenue grew in 2019 and 2018 (NYSE: PFPT). Cincinnati Bell Inc. did not."])
>>> q
"What was [NAME_1]'s revenue in [YEAR_1]?"
>>> p
'[NAME_1] revenue grew in [YEAR_1] and [YEAR_2] ([TICKER]). [NAME_2] did not.'
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from finkg.errors import InputError
from finkg.retrieval.index.bm25 import bm25_scores, tokenize
from finkg.retrieval.index.embed import Embedder
from finkg.retrieval.plan.questions import periods_in
from finkg.retrieval.rank.cross_encoder import Group
from finkg.retrieval.rank.fuse import fuse

TATQA = Path("tatqa") / "tatqa_dataset_dev.json"
_SUFFIX = r"(?:Inc|Corp|Corporation|Ltd|Limited|plc|PLC|LLC|L\.P|N\.V|S\.A|AG|SE|Pty Ltd)\b\.?"
_CAP = r"[A-Z][\w&'\-]*"
_COMPANY = re.compile(rf"\b(?:{_CAP}\s+){{0,4}}{_CAP},?\s+{_SUFFIX}")
_CAPRUN = re.compile(rf"\b{_CAP}(?: {_CAP})*")
_TICKER = re.compile(r"\b(?:NYSE|NASDAQ|Nasdaq|NYSE American|ASX|LSE|TSX)\s*:\s*[A-Z.]{1,6}\b")
_KEEP = frozenset(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday thereafter".split()
)


def _bare(word: str) -> str:
    return re.sub(r"['’]s$", "", word)


@dataclass(frozen=True)
class Question:
    context: str
    text: str
    positives: tuple[str, ...]  # passage keys (context/table, context/p2, ...)
    negatives: tuple[str, ...]  # same-context passages the annotators left out


@dataclass(frozen=True)
class TatQA:
    passages: dict[str, str]  # key -> text
    questions: list[Question]
    contexts: list[str]

    def of(self, contexts: Iterable[str]) -> list[str]:
        """The passage keys of these contexts."""
        chosen = set(contexts)
        return [k for k in self.passages if k.split("/", 1)[0] in chosen]


def table_text(rows: Sequence[Sequence[str]]) -> str:
    lines = (" | ".join(c.strip() for c in row if c and c.strip()) for row in rows)
    return "\n".join(line for line in lines if line)


def load_tatqa(path: Path) -> TatQA:
    """Passages and labelled questions of a TAT-QA file (see the module docstring)."""
    if not path.is_file():
        raise InputError(
            "no TAT-QA file here", source=path, hint="give --data, the folder holding tatqa/"
        )
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        passages: dict[str, str] = {}
        questions, contexts = [], []
        for ctx in raw:
            uid = ctx["table"]["uid"]
            contexts.append(uid)
            passages[f"{uid}/table"] = table_text(ctx["table"]["table"])
            paras = {str(p["order"]): p["text"] for p in ctx["paragraphs"]}
            passages.update({f"{uid}/p{o}": t for o, t in paras.items()})
            for q in ctx["questions"]:
                rel = {str(r) for r in q.get("rel_paragraphs") or []}
                pos = [f"{uid}/p{o}" for o in sorted(rel) if o in paras]
                if q["answer_from"] in ("table", "table-text"):
                    pos.append(f"{uid}/table")
                neg = [f"{uid}/p{o}" for o in paras if rel and o not in rel]
                if pos:
                    questions.append(Question(uid, q["question"], tuple(pos), tuple(neg)))
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(f"not a TAT-QA file: {e!r}", source=path) from None
    return TatQA(passages, questions, contexts)


def split_contexts(contexts: Sequence[str], *, held_out: float, seed: int) -> dict[str, list[str]]:
    """Train and held-out contexts by a seeded shuffle.

    >>> s = split_contexts([f"c{i}" for i in range(10)], held_out=0.2, seed=0)
    >>> len(s["train"]), len(s["held_out"]), sorted(s["train"] + s["held_out"]) == sorted(
    ...     f"c{i}" for i in range(10))
    (8, 2, True)
    """
    if not 0 < held_out < 1:
        raise InputError("a held-out share is in (0, 1)", field="--held-out", value=held_out)
    order = sorted(contexts)
    random.Random(seed).shuffle(order)
    n = max(1, round(len(order) * held_out))
    return {"train": sorted(order[n:]), "held_out": sorted(order[:n])}


class Miner:
    """Top passages of a pool for a query by BM25 and dense cosine, fused by RRF."""

    def __init__(self, keys: Sequence[str], texts: Sequence[str], embedder: Embedder) -> None:
        self.keys = list(keys)
        self.tokens = tokenize(list(texts))
        self.embedder = embedder
        self.vectors = embedder.embed(list(texts))

    def top(self, query: str, k: int, *, exclude: str | None) -> list[str]:
        """The best `k` keys, leaving out those of context `exclude` (`context/...`)."""
        lexical = bm25_scores(tokenize([query])[0], self.tokens)
        dense = self.vectors @ self.embedder.embed([query])[0]
        fused = fuse([lexical, dense], method="rrf")
        out = []
        for i in np.argsort(-fused, kind="stable"):
            key = self.keys[int(i)]
            if exclude is None or not key.startswith(exclude + "/"):
                out.append(key)
                if len(out) == k:
                    break
        return out


def groups_for(
    data: TatQA,
    questions: Sequence[Question],
    miner: Miner,
    *,
    mined: int,
    abstractor: Abstractor | None,
) -> list[Group]:
    """One group per question: its positives, its same-context negatives and `mined` hard
    negatives from other contexts; abstracted when an `abstractor` is given."""
    out = []
    for q in questions:
        negatives = [*q.negatives, *miner.top(q.text, mined, exclude=q.context)]
        texts = [q.text, *(data.passages[k] for k in q.positives)]
        texts += [data.passages[k] for k in negatives]
        if abstractor is not None:
            texts = abstractor.abstract(texts)
        n = len(q.positives)
        out.append(Group(texts[0], tuple(texts[1 : 1 + n]), tuple(texts[1 + n :])))
    return out


class Abstractor:
    """Entity abstraction with placeholders consistent within one call (module docstring)."""

    def __init__(self, corpus: Iterable[str]) -> None:
        self.lower = {w for text in corpus for w in re.findall(r"\b[a-z][\w&'\-]*", text)}

    def _proper(self, word: str) -> bool:
        """Capitalised (not all capitals: GAAP, EBITDA stay), never written in lower case."""
        w = word.lower()
        mixed = any(c.islower() for c in word[1:])
        return mixed and w not in self.lower and w not in _KEEP

    def abstract(self, texts: Sequence[str]) -> list[str]:
        names: dict[str, str] = {}
        years: dict[str, str] = {}

        def name(m: re.Match[str]) -> str:
            span = m.group(0)
            return names.setdefault(span, f"[NAME_{len(names) + 1}]")

        def year(y: str) -> str:
            return years.setdefault(y, f"[YEAR_{len(years) + 1}]")

        def names_in(m: re.Match[str]) -> str:
            words, out, i = m.group(0).split(" "), [], 0
            while i < len(words):
                j = i
                while j < len(words) and self._proper(_bare(words[j])):
                    j += 1
                if j == i:
                    out.append(words[i])
                    i += 1
                    continue
                run = [*words[i : j - 1], _bare(words[j - 1])]
                possessive = words[j - 1][len(run[-1]) :]
                out.append(names.setdefault(" ".join(run), f"[NAME_{len(names) + 1}]") + possessive)
                i = j
            return " ".join(out)

        out = []
        for text in texts:
            parts, last = [], 0
            for p in periods_in(text):
                parts.append(text[last : p.start])
                label = p.label
                parts.append(
                    year(label[2:]) if label.startswith("FY") else f"Q{label[5]} {year(label[:4])}"
                )
                last = p.end
            text = "".join(parts) + text[last:]
            text = _TICKER.sub("[TICKER]", text)
            text = _COMPANY.sub(name, text)
            text = _CAPRUN.sub(names_in, text)
            out.append(text)
        return out
