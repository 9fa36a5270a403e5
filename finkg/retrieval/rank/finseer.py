"""FinSeer (paper 001 §3.3): a bi-encoder distilled from reader feedback, and its loading.

An `Example` is a query, its selected candidates (the top-1 positive, the bottom-15
negatives) and the reader's reward P(c) of each: the probability of the query's true
movement given the query and that one candidate (eq. 4). Training minimises, per example,

    - sum_i w_i log softmax_i(<e_q, e_ci> / tau),   w = softmax(P / alpha)      (eq. 6-7)

over L2-normalised embeddings of a bi-encoder initialised from the packaged MiniLM, with
AdamW, one example per step, in a seeded order. The result is saved as a
sentence-transformers folder under `model/` beside a `manifest.json` written by the caller
(`finkg.tasks.movement.train`); `FinSeer(folder)` refuses a folder without one (the folder
rules are `finkg.retrieval.rank.trained`'s, shared with the QA reranker).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from finkg.errors import InputError
from finkg.retrieval.index.embed import (
    Embedder,
    _load,
    _normalise,
    packaged_model_dir,
    torch_device,
)
from finkg.retrieval.rank.trained import MANIFEST as MANIFEST  # re-exported for callers
from finkg.retrieval.rank.trained import offline, read_manifest
from finkg.retrieval.rank.trained import weights_digest as weights_digest

TRAIN = "finkg train-retriever"
KIND = "finkg-finseer"
FORMAT = 1


@dataclass(frozen=True)
class Example:
    query: str
    candidates: tuple[str, ...]  # the positive first, then the negatives
    rewards: tuple[float, ...]  # the reader's P(true label | query, candidate)


def distillation_loss(
    query: np.ndarray, candidates: np.ndarray, rewards: Sequence[float], *, alpha: float, tau: float
) -> float:
    """Eq. 6-7 for one example, with numpy (what `train` minimises with torch).

    >>> q = np.array([1.0, 0.0]); c = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> round(distillation_loss(q, c, [0.9, 0.1], alpha=0.1, tau=0.05), 4)
    0.0067
    >>> round(distillation_loss(q, c[::-1], [0.9, 0.1], alpha=0.1, tau=0.05), 4)  # far from it
    19.9933
    """
    r = np.asarray(rewards, dtype=np.float64) / alpha
    w = np.exp(r - r.max())
    w /= w.sum()
    s = candidates @ query / tau
    logp = s - s.max() - np.log(np.exp(s - s.max()).sum())
    return float(-(w * logp).sum())


def mean_loss(
    embedder: Embedder, examples: Sequence[Example], *, alpha: float, tau: float
) -> float:
    """The mean eq. 7 loss of an embedder over examples (lower: closer to the reader)."""
    if not examples:
        return float("nan")
    losses = []
    for ex in examples:
        v = embedder.embed([ex.query, *ex.candidates])
        losses.append(distillation_loss(v[0], v[1:], ex.rewards, alpha=alpha, tau=tau))
    return float(np.mean(losses))


def train(
    examples: Sequence[Example],
    folder: Path,
    *,
    alpha: float,
    tau: float,
    epochs: int,
    lr: float,
    seed: int,
    threads: int = 1,
    progress: Callable[[str, int, int], None] | None = None,
    device: str = "auto",
) -> list[float]:
    """Distil `examples` into a MiniLM copy saved under `folder/model`; mean loss per epoch
    (on `embed.torch_device(device)`)."""
    import torch
    import torch.nn.functional as F

    if not examples:
        raise InputError("no training examples", field="queries", hint="give more queries")
    if alpha <= 0 or tau <= 0:
        raise InputError("temperatures must be positive", field="alpha/tau", value=(alpha, tau))
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    offline()
    from sentence_transformers import SentenceTransformer

    # a copy of its own: the cached MiniLM that `minilm` retrieval reads stays untouched
    where = torch_device(device)
    model = SentenceTransformer(str(packaged_model_dir()), device=where, local_files_only=True)
    model.train()
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr)
    order = np.random.default_rng(seed)
    history = []
    steps, total = 0, epochs * len(examples)
    for _ in range(epochs):
        losses = []
        for i in order.permutation(len(examples)):
            ex = examples[int(i)]
            features = {
                k: v.to(where) if hasattr(v, "to") else v
                for k, v in model.tokenize([ex.query, *ex.candidates]).items()
            }
            embeddings = F.normalize(model(features)["sentence_embedding"], dim=-1)
            rewards = torch.tensor(ex.rewards, dtype=torch.float32, device=where)
            w = torch.softmax(rewards / alpha, dim=0)
            logp = torch.log_softmax(embeddings[1:] @ embeddings[0] / tau, dim=0)
            loss = -(w * logp).sum()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            losses.append(float(loss.detach()))
            steps += 1
            if progress:
                progress("train retriever", steps, total)
        history.append(float(np.mean(losses)))
    model.eval()
    (folder / "model").mkdir(parents=True, exist_ok=True)
    model.save(str(folder / "model"))
    return history


class FinSeer:
    """A trained retriever's encoder (the `Embedder` protocol)."""

    dim = 384

    def __init__(self, folder: Path, *, threads: int = 1, device: str = "auto") -> None:
        folder = Path(folder)
        self.manifest = read_manifest(folder, kind=KIND, format=FORMAT, train=TRAIN)
        self.model_id = self.manifest["model_id"]
        self.model = _load(folder / "model", threads, torch_device(device))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model.encode(
            list(texts),
            batch_size=32,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return _normalise(vectors)
