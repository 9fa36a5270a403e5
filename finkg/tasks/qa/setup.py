"""Opening what `QA` needs from a store and settings: the refreshed text and vector
indexes, the embedder that built them, the reader, the reranker and the memory bank's
matcher. The CLI and the benchmark both answer through here.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

from pyoxigraph import NamedNode

from finkg import queries
from finkg.config import Settings
from finkg.errors import InputError
from finkg.kg.iri import mint
from finkg.kg.store import BaseStore
from finkg.queries import QueryRunner
from finkg.reader.llm import LLM
from finkg.retrieval.index.persist import Progress
from finkg.retrieval.memory.bank import Matcher
from finkg.retrieval.passages import PassageRetriever
from finkg.retrieval.rank.rerank import LLMReranker, Reranker
from finkg.retrieval.rank.trained import MANIFEST
from finkg.tasks.qa.ask import QA, QAConfig
from finkg.tasks.qa.types import Asked

RERANKERS = ("auto", "cross", "llm", "none")


def resolve_company(store: QueryRunner, ticker: str | None) -> NamedNode | None:
    """The company node of a ticker the market graph holds; an unknown one is an error."""
    if ticker is None:
        return None
    wanted = ticker.strip().upper()
    known = sorted(r.string("ticker") for r in queries.select(store, "company_names"))
    if wanted not in known:
        shown = ", ".join(known[:12]) + (" ..." if len(known) > 12 else "")
        raise InputError(
            "no company with this ticker in the store",
            field="--company",
            value=ticker,
            hint=f"known tickers: {shown or 'none (ingest companies first)'}",
        )
    return mint("company", wanted, base=store.graphs.base)


class RerankerDecision(TypedDict):
    """`auto_reranker_decision`: whether `--rerank auto` uses a trained stage, and why."""

    use: bool
    stage: int | None
    gain: float | None
    reason: str


def auto_reranker_decision(settings: Settings) -> RerankerDecision:
    """Whether `--rerank auto` uses a trained cross-encoder: only one whose manifest shows a
    gain on its own held-out questions (never the questions it trained on): its MRR above the
    best first-stage ranker measured beside it there (BM25 or the MiniLM cosine). The
    company-adapted stage 2 is looked at first, then the general stage 1."""
    import json

    from finkg.tasks.qa.rerank_train import default_model_dir

    seen = []
    for stage in (2, 1):
        path = default_model_dir(settings, stage) / MANIFEST
        if not path.exists():
            continue
        try:
            held = json.loads(path.read_text(encoding="utf-8")).get("held_out") or {}
            mine = float(held[f"stage{stage}"]["mrr"])
            first = max(float(held[k]["mrr"]) for k in ("bm25", "minilm_cosine") if k in held)
        except (OSError, ValueError, KeyError, TypeError):
            seen.append(f"stage {stage}: its manifest shows no held-out MRR")
            continue
        gain = mine - first
        if gain > 0:
            return {
                "use": True,
                "stage": stage,
                "gain": round(gain, 4),
                "reason": f"stage {stage} held-out MRR {mine:.3f} vs first stage {first:.3f}.",
            }
        seen.append(
            f"stage {stage} held-out MRR {mine:.3f} is not above the first stage's {first:.3f}"
        )
    reason = "; ".join(seen) if seen else "none is trained (`finkg train-reranker`)"
    return {"use": False, "stage": None, "gain": None, "reason": reason + "."}


def open_reranker(name: str, settings: Settings, llm: LLM) -> Reranker | None:
    """`none`; `llm` (yes/no option scoring); `cross` (the trained cross-encoder, stage 2
    when trained, else stage 1); `auto`: the cross-encoder only when
    `auto_reranker_decision` finds a held-out gain in its manifest, else none."""
    if name not in RERANKERS:
        raise InputError(
            "unknown reranker", field="--rerank", value=name, hint=", ".join(RERANKERS)
        )
    if name == "none":
        return None
    if name == "llm":
        return LLMReranker(llm)
    from finkg.tasks.qa.rerank_train import default_model_dir, open_cross_encoder

    if name == "auto":
        decision = auto_reranker_decision(settings)
        if not decision["use"]:
            return None
        assert decision["stage"] is not None  # a used decision names its stage
        return open_cross_encoder(settings, stage=decision["stage"])
    # the company-adapted stage 2 when trained, else the general stage 1
    for stage in (2, 1):
        if (default_model_dir(settings, stage) / MANIFEST).exists():
            return open_cross_encoder(settings, stage=stage)
    raise InputError(
        "no trained cross-encoder",
        field="--rerank",
        value=name,
        hint=f"train it with `finkg train-reranker` (into {default_model_dir(settings, 2)}), "
        "or use --rerank llm or none",
    )


def open_qa(
    store: BaseStore,
    settings: Settings,
    *,
    rerank: str = "auto",
    llm: LLM | None = None,
    config: QAConfig | None = None,
    progress: Progress | None = None,
    directory: Path | None = None,
) -> QA:
    """A `QA` over `store`; indexes live in `directory` (default: beside the store)."""
    from finkg.reader.transport.backends import open_reader
    from finkg.retrieval.index.embed import open_embedder
    from finkg.retrieval.index.indexes import open_indexes

    embedder = open_embedder(settings.embedder, threads=settings.threads, device=settings.device)
    text, vectors, _ = open_indexes(
        store, settings, embedder=embedder, progress=progress, directory=directory
    )
    config = config or QAConfig()
    retriever = PassageRetriever(
        store, text=text, vectors=vectors, embedder=embedder, k1=config.k1, b=config.b
    )
    llm = llm or open_reader(settings)
    return QA(
        store,
        retriever,
        llm,
        reranker=open_reranker(rerank, settings, llm),
        matcher=Matcher(embedder),
        config=config,
    )


def answer(
    store: BaseStore,
    settings: Settings,
    question: str,
    *,
    as_of: dt.datetime,
    company: str | None = None,
    rerank: str = "auto",
    config: QAConfig | None = None,
    stage: Callable[[str], None] | None = None,
    write: bool = True,
) -> Asked:
    """`finkg ask`: the inputs checked first (the ticker, the reranker's name); a question
    the statement facts answer is answered from them (no index or reader is opened);
    otherwise the indexes, reader and reranker are opened (tens of seconds), then one
    answer; written either way unless `write` is False."""
    say = stage or (lambda _: None)
    node = resolve_company(store, company)
    if rerank not in RERANKERS:
        raise InputError(
            "unknown reranker", field="--rerank", value=rerank, hint=", ".join(RERANKERS)
        )
    if config is None or config.facts:
        say("computing from statement facts")
        quick = QA.facts_only(store, config).answer_from_facts(
            question, as_of=as_of, company=node, write=write
        )
        if quick is not None:
            return quick
    say("opening indexes and reader")
    qa = open_qa(store, settings, rerank=rerank, config=config)
    say("answering")
    return qa.ask(question, as_of=as_of, company=node, write=write)
