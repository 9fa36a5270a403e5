"""`finkg train-retriever`: FinSeer's training procedure (paper 001 §3.3) over the store.

1. Split the stocks with windows in the store into train / valid / test by stock, in the
   proportions of paper 001 Table 2 (ACL18: 33 / 5 / 33), seeded (`split_stocks`).
2. Training queries: non-freeze (ticker, session) pairs of the train stocks in the query
   period, a seeded sample (`labelled_queries`); validation queries likewise from the valid
   stocks. Labels come from the bars: adj_close(D) / adj_close(D-1) (eq. 1-2).
3. For each query, `candidates` windows of its split's stocks available before its decision
   instant (a seeded random draw from the pool); the reader scores each as the only
   retrieved sequence: P(c) = softmax over the labels' log-probabilities, at the true label.
4. Top-1 by P(c) is the positive, the bottom 15 the negatives; KL distillation with
   temperatures alpha (rewards) and tau (similarities) into a MiniLM copy (`finseer.train`).
5. Save the model with a manifest: data (store, windows, sample, periods), split,
   hyper-parameters, the reader's id, losses (train per epoch; valid before and after).

At its defaults (16 + 4 queries x 16 candidates = 320 reader calls of ~240 tokens with the
0.5B reader, three epochs) it takes about 30-45 minutes on 2 CPU cores.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from finkg.config import Settings
from finkg.errors import InputError
from finkg.kg.store import BaseStore
from finkg.reader.llm import LLM
from finkg.retrieval.index.embed import open_embedder
from finkg.retrieval.rank import finseer
from finkg.retrieval.rank.trained import write_manifest
from finkg.retrieval.sequence_retrievers import (
    EmbeddingCache,
    RandomRetrieval,
    SequenceRetriever,
    open_retriever,
    top_k,
)
from finkg.retrieval.sequences import Progress, Query, WindowPool
from finkg.tasks.movement.forecast import (
    LABELS,
    candidate_block,
    label_probabilities,
    movement_messages,
)
from finkg.tasks.movement.questions import labelled_queries, split_stocks, store_tickers

NEGATIVES = 15


@dataclass(frozen=True, kw_only=True)
class TrainConfig:
    queries: int = 16
    valid_queries: int = 4
    candidates: int = 16
    alpha: float = 0.1
    tau: float = 0.05
    epochs: int = 3
    lr: float = 2e-5
    query_from: dt.date = dt.date(2015, 6, 3)
    query_to: dt.date = dt.date(2015, 12, 31)
    since: dt.date = dt.date(2014, 6, 2)
    sample: float = 0.02
    seed: int = 0

    def __post_init__(self) -> None:
        if self.queries < 1:
            raise InputError("at least one training query", field="--queries", value=self.queries)
        if self.valid_queries < 0:
            raise InputError("0 or more", field="--valid-queries", value=self.valid_queries)
        if self.candidates < 2:
            raise InputError(
                "a positive and a negative at least", field="--candidates", value=self.candidates
            )
        if self.alpha <= 0 or self.tau <= 0:
            raise InputError(
                "temperatures are positive", field="--alpha/--tau", value=(self.alpha, self.tau)
            )
        if self.epochs < 1:
            raise InputError("at least one epoch", field="--epochs", value=self.epochs)
        if self.query_from > self.query_to:
            raise InputError(
                "the query period is empty",
                field="--from/--to",
                value=(str(self.query_from), str(self.query_to)),
            )
        if not 0 < self.sample <= 1:
            raise InputError(
                "a sample is a fraction in (0, 1]", field="--sample", value=self.sample
            )


def default_model_dir(settings: Settings) -> Path:
    return settings.cache_dir / "movement" / "finseer"


def embedding_cache(settings: Settings) -> EmbeddingCache:
    return EmbeddingCache(settings.cache_dir / "movement" / "embeddings")


def open_sequence_retriever(
    name: str,
    settings: Settings,
    *,
    model_dir: Path | None = None,
    progress: Progress | None = None,
) -> SequenceRetriever:
    """A retriever by name, its model (MiniLM, a trained FinSeer) loaded from settings."""
    embedder = (
        open_embedder(settings.embedder, threads=settings.threads, device=settings.device)
        if name == "minilm"
        else None
    )
    trained = None
    if name == "finseer":
        trained = finseer.FinSeer(
            model_dir or default_model_dir(settings),
            threads=settings.threads,
            device=settings.device,
        )
    return open_retriever(
        name, embedder=embedder, finseer=trained, cache=embedding_cache(settings), progress=progress
    )


def score_candidates(
    llm: LLM, query: Query, label: str, pool: WindowPool, rows: Sequence[int]
) -> list[float]:
    """P(true label | query, candidate) for each row (paper 001 eq. 4), the reader shown
    the candidate as a forecast shows it (`candidate_block`); the retriever learns from the
    JSON texts it embeds."""
    out = []
    for r in rows:
        logprobs = llm.score(movement_messages(query, candidate_block(pool, [r])), list(LABELS))
        out.append(label_probabilities(logprobs)[label])
    return out


def select(rewards: Sequence[float], *, negatives: int = NEGATIVES) -> list[int]:
    """Indices of the top-1 positive then the bottom `negatives` (ties: the earlier index).

    >>> select([0.2, 0.9, 0.5, 0.1], negatives=2)
    [1, 0, 3]
    """
    order = sorted(range(len(rewards)), key=lambda i: (-rewards[i], i))
    rest = order[1:]
    return [order[0], *rest[max(0, len(rest) - negatives) :]]


def examples_for(
    llm: LLM,
    labelled: Sequence[tuple[Query, str]],
    pool: WindowPool,
    tickers: Sequence[str],
    config: TrainConfig,
    progress: Progress | None,
    stage: str,
) -> list[finseer.Example]:
    universe = np.isin(pool.tickers, list(tickers))
    draw = RandomRetrieval(seed=config.seed)
    out = []
    for i, (query, label) in enumerate(labelled):
        rows = pool.eligible(query.decision)
        rows = rows[universe[rows]]
        hits = top_k(draw, query, pool, rows, config.candidates)
        if len(hits) < 2:
            continue
        rewards = score_candidates(llm, query, label, pool, [h.row for h in hits])
        chosen = select(rewards)
        out.append(
            finseer.Example(
                query.text,
                tuple(pool.texts[hits[j].row] for j in chosen),
                tuple(rewards[j] for j in chosen),
            )
        )
        if progress:
            progress(stage, i + 1, len(labelled))
    return out


def train_retriever(
    store: BaseStore,
    *,
    llm: LLM,
    settings: Settings,
    config: TrainConfig,
    folder: Path,
    progress: Progress | None = None,
) -> dict[str, object]:
    """Run the procedure of the module docstring; returns the manifest it saved."""
    started = time.perf_counter()
    split = split_stocks(store_tickers(store), seed=config.seed)
    train_q = labelled_queries(
        store,
        split["train"],
        config.query_from,
        config.query_to,
        n=config.queries,
        seed=config.seed,
        salt="train",
    )
    valid_q = labelled_queries(
        store,
        split["valid"],
        config.query_from,
        config.query_to,
        n=config.valid_queries,
        seed=config.seed,
        salt="valid",
    )
    if not train_q:
        raise InputError(
            "no training queries: no non-freeze sessions of the train stocks in the period",
            field="--from/--to",
            value=(config.query_from.isoformat(), config.query_to.isoformat()),
        )
    latest = max(q.decision for q, _ in [*train_q, *valid_q])
    pool = WindowPool.load(
        store,
        before=latest,
        since=config.since,
        sample=config.sample,
        universe=[*split["train"], *split["valid"]],
        progress=progress,
    )
    train_x = examples_for(
        llm, train_q, pool, split["train"], config, progress, "score train queries"
    )
    valid_x = examples_for(
        llm, valid_q, pool, split["valid"], config, progress, "score valid queries"
    )
    folder.mkdir(parents=True, exist_ok=True)
    history = finseer.train(
        train_x,
        folder,
        alpha=config.alpha,
        tau=config.tau,
        epochs=config.epochs,
        lr=config.lr,
        seed=config.seed,
        threads=settings.threads,
        progress=progress,
        device=settings.device,
    )
    base = open_embedder("minilm", threads=settings.threads, device=settings.device)
    digest = finseer.weights_digest(folder)
    manifest: dict[str, object] = {
        "kind": finseer.KIND,
        "format": finseer.FORMAT,
        "model_id": f"finseer@sha256:{digest[:12]}",
        "base_model": base.model_id,
        "reader": llm.model_id,
        "split": split,
        "split_counts": {k: len(v) for k, v in split.items()},
        "data": {
            "store": str(store.location),
            "store_generation": store.generation(),
            "windows_in_pool": len(pool),
            "pool": pool.spec,
            "train_queries": [q.key for q, _ in train_q],
            "valid_queries": [q.key for q, _ in valid_q],
        },
        "hyper_parameters": {
            **json.loads(json.dumps(asdict(config), default=str)),
            "positives": 1,
            "negatives": NEGATIVES,
        },
        "examples": {"train": len(train_x), "valid": len(valid_x)},
        "train_loss": history,
        "valid_kl": {},
        "created": dt.datetime.now(dt.UTC).isoformat(),
    }
    write_manifest(folder, manifest)
    trained = finseer.FinSeer(folder, threads=settings.threads, device=settings.device)
    manifest["valid_kl"] = {
        "base_minilm": finseer.mean_loss(base, valid_x, alpha=config.alpha, tau=config.tau),
        "finseer": finseer.mean_loss(trained, valid_x, alpha=config.alpha, tau=config.tau),
    }
    manifest["train_kl"] = {
        "base_minilm": finseer.mean_loss(base, train_x, alpha=config.alpha, tau=config.tau),
        "finseer": finseer.mean_loss(trained, train_x, alpha=config.alpha, tau=config.tau),
    }
    manifest["seconds"] = round(time.perf_counter() - started, 1)
    write_manifest(folder, manifest)
    return manifest
