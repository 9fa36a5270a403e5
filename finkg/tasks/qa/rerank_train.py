"""`finkg train-reranker`: paper 002's two-stage training of the cross-encoder (§4.3).

Stage 1 (general finance, `train_stage1`): TAT-QA contexts are split into train and
held-out (`rerank_data`); a seeded sample of train questions, each with its annotated
positives, its same-context negatives and hard negatives mined by BM25 + MiniLM from the
other train contexts, entity-abstracted, trains a cross-encoder initialised from the
packaged MiniLM (`cross_encoder.train`, eq. 5). Held-out questions, in raw text, measure it.

Stage 2 (one company, `train_stage2`): the stage-1 model goes on training on one
FinanceBench company's documents, with questions written and candidates labelled by the
reader (`rerank_company`). A share of those questions is held out to measure it. The
company and its documents are in the manifest: an evaluation on FinanceBench should report
that company's questions apart, since the model has read its documents (never its questions
or evidence labels).

Each stage saves a folder (`model/` + `manifest.json`) under the cache's `qa/reranker/`:
`stage1` (general) and `stage2` (the company's). The manifests hold the data files and
their hashes, the split, sizes, hyper-parameters, the base model and (stage 2) the reader,
the seed, the losses and the held-out figures: MRR of the first positive and accuracy at 1
(a positive ranked first) for BM25, the packaged MiniLM's cosine, and the models.

At the defaults (300 stage-1 questions, 16 stage-2 questions with the 0.5B reader) the one
run so far took 64 minutes (stage 1: 41, stage 2: 23) on 2 CPU cores shared with other
jobs, about one core of its own. At those sizes stage 1 is undertrained: on held-out TAT-QA
it ranked below BM25 and the MiniLM cosine (manifest `held_out`). More steps are the first
thing to try.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from finkg.config import Settings
from finkg.errors import InputError
from finkg.reader.llm import LLM
from finkg.retrieval.index.bm25 import bm25_scores, tokenize
from finkg.retrieval.index.embed import Embedder, open_embedder
from finkg.retrieval.rank import cross_encoder as ce
from finkg.retrieval.rank.trained import file_digest, weights_digest, write_manifest
from finkg.retrieval.sequences import Progress
from finkg.tasks.qa import rerank_company, rerank_data

Scorer = Callable[[str, Sequence[str]], np.ndarray]
FINANCEBENCH = Path("financebench")


@dataclass(frozen=True, kw_only=True)
class RerankConfig:
    # stage 1
    questions: int = 300
    held_out: float = 0.2
    eval_questions: int = 100
    mined: int = 4
    abstraction: bool = True
    # both stages
    negatives: int = 3
    epochs: int = 1
    lr: float = 3e-5
    max_length: int = 192
    seed: int = 0
    # stage 2
    company: str = "PEPSICO"
    documents: tuple[str, ...] = ("PEPSICO_2022_10K",)
    company_questions: int = 16
    company_valid: int = 4
    candidates: int = 8
    random_negatives: int = 3
    threshold: float = 0.5
    company_epochs: int = 2
    company_lr: float = 2e-5
    chunk_size: int = 160
    chunk_overlap: int = 24

    def __post_init__(self) -> None:
        checks = [
            (self.questions >= 1, "--questions", self.questions, "at least 1"),
            (self.eval_questions >= 1, "--eval-questions", self.eval_questions, "at least 1"),
            (self.mined >= 0, "--mined", self.mined, "0 or more"),
            (self.negatives >= 1, "--negatives", self.negatives, "at least 1"),
            (self.epochs >= 1, "--epochs", self.epochs, "at least 1"),
            (self.company_epochs >= 1, "--company-epochs", self.company_epochs, "at least 1"),
            (self.lr > 0 and self.company_lr > 0, "--lr", (self.lr, self.company_lr), "positive"),
            (32 <= self.max_length <= 512, "--max-length", self.max_length, "32 to 512"),
            (self.company_questions >= 2, "--company-questions", self.company_questions, ">= 2"),
            (
                0 < self.company_valid < self.company_questions,
                "--company-valid",
                self.company_valid,
                "at least 1 and fewer than --company-questions",
            ),
            (self.candidates >= 2, "--candidates", self.candidates, "at least 2"),
            (0 < self.threshold < 1, "--threshold", self.threshold, "a probability in (0, 1)"),
            (bool(self.documents), "--document", self.documents, "one document at least"),
            (
                0 <= self.chunk_overlap < self.chunk_size,
                "--chunk-size",
                (self.chunk_size, self.chunk_overlap),
                "a size above its overlap",
            ),
        ]
        for ok, name, value, want in checks:
            if not ok:
                raise InputError(f"must be {want}", field=name, value=value)


def default_model_dir(settings: Settings, stage: int = 2) -> Path:
    """Where `finkg train-reranker` saves stage `stage` (1: general, 2: the company's)."""
    if stage not in (1, 2):
        raise InputError("a stage is 1 or 2", field="--stage", value=stage)
    return settings.cache_dir / "qa" / "reranker" / f"stage{stage}"


def open_cross_encoder(
    settings: Settings, *, stage: int = 2, model_dir: Path | None = None
) -> ce.CrossEncoder:
    """The trained cross-encoder of a stage (or of `model_dir`), checked against its manifest."""
    folder = model_dir or default_model_dir(settings, stage)
    return ce.CrossEncoder(folder, threads=settings.threads, device=settings.device)


def ranking_metrics(scorer: Scorer, groups: Sequence[ce.Group]) -> dict[str, float]:
    """MRR of the first positive and accuracy at 1 over groups; a tie counts half.

    >>> g = [ce.Group("q", ("p",), ("n1", "n2")), ce.Group("q", ("p",), ("n1",))]
    >>> ranking_metrics(lambda q, t: np.array([1.0, 2.0, 0.0][: len(t)]), g)
    {'mrr': 0.5, 'accuracy@1': 0.0, 'groups': 2}
    """
    rr, top = [], []
    for g in groups:
        s = np.asarray(scorer(g.query, [*g.positives, *g.negatives]), dtype=np.float64)
        best, rest = s[: len(g.positives)].max(), s[len(g.positives) :]
        above, ties = int((rest > best).sum()), int((rest == best).sum())
        rr.append(1 / (1 + above + ties / 2))
        top.append(1.0 if above == 0 and ties == 0 else 0.5 if above == 0 else 0.0)
    return {
        "mrr": round(float(np.mean(rr)), 4) if rr else float("nan"),
        "accuracy@1": round(float(np.mean(top)), 4) if top else float("nan"),
        "groups": len(groups),
    }


def bm25_scorer(query: str, texts: Sequence[str]) -> np.ndarray:
    return bm25_scores(tokenize([query])[0], tokenize(list(texts)))


def cosine_scorer(embedder: Embedder) -> Scorer:
    def score(query: str, texts: Sequence[str]) -> np.ndarray:
        v = embedder.embed([query, *texts])
        return v[1:] @ v[0]

    return score


def _sample(items: Sequence[rerank_data.Question], n: int, seed: int, salt: str) -> list:
    return random.Random(f"{seed}/{salt}").sample(list(items), min(n, len(items)))


def _base_manifest(stage: int, folder: Path, config: RerankConfig, base: Embedder) -> dict:
    digest = weights_digest(folder)
    return {
        "kind": ce.KIND,
        "format": ce.FORMAT,
        "stage": stage,
        "model_id": f"cross-encoder-stage{stage}@sha256:{digest[:12]}",
        "weights_sha256": digest,
        "base_model": base.model_id,
        "architecture": "MiniLM-L6 pair encoder, mean pooling, linear head; MaxP windows",
        "hyper_parameters": asdict(config),
        "seed": config.seed,
        "created": dt.datetime.now(dt.UTC).isoformat(),
    }


def train_stage1(
    data: Path,
    *,
    settings: Settings,
    config: RerankConfig,
    folder: Path,
    progress: Progress | None = None,
) -> dict[str, object]:
    """Stage 1 (module docstring); returns the manifest it saved under `folder`."""
    started = time.perf_counter()
    path = data / rerank_data.TATQA
    tat = rerank_data.load_tatqa(path)
    split = rerank_data.split_contexts(tat.contexts, held_out=config.held_out, seed=config.seed)
    held = set(split["held_out"])
    train_q = _sample(
        [q for q in tat.questions if q.context not in held], config.questions, config.seed, "train"
    )
    eval_q = _sample(
        [q for q in tat.questions if q.context in held],
        config.eval_questions,
        config.seed,
        "held_out",
    )
    base = open_embedder("minilm", threads=settings.threads, device=settings.device)
    if progress:
        progress("mine hard negatives", 0, 2)
    train_keys, held_keys = tat.of(split["train"]), tat.of(split["held_out"])
    train_miner = rerank_data.Miner(train_keys, [tat.passages[k] for k in train_keys], base)
    abstractor = (
        rerank_data.Abstractor([*tat.passages.values(), *(q.text for q in tat.questions)])
        if config.abstraction
        else None
    )
    train_g = rerank_data.groups_for(
        tat, train_q, train_miner, mined=config.mined, abstractor=abstractor
    )
    if progress:
        progress("mine hard negatives", 1, 2)
    held_miner = rerank_data.Miner(held_keys, [tat.passages[k] for k in held_keys], base)
    eval_g = rerank_data.groups_for(tat, eval_q, held_miner, mined=config.mined, abstractor=None)
    if progress:
        progress("mine hard negatives", 2, 2)
    history = ce.train(
        train_g,
        folder,
        negatives=config.negatives,
        epochs=config.epochs,
        lr=config.lr,
        max_length=config.max_length,
        seed=config.seed,
        threads=settings.threads,
        progress=progress,
        device=settings.device,
        stage="train stage 1",
    )
    manifest = _base_manifest(1, folder, config, base)
    manifest |= {
        "data": {
            "tatqa": {"path": str(path), "sha256": file_digest(path)},
            "contexts": {k: len(v) for k, v in split.items()},
            "held_out_contexts": split["held_out"],
            "questions": {"train": len(train_g), "held_out": len(eval_g)},
            "pairs": {
                "positives": sum(len(g.positives) for g in train_g),
                "negatives": sum(len(g.negatives) for g in train_g),
            },
            "abstraction": "full (names, tickers, periods)" if abstractor else "none",
            "financebench": "not used",
        },
        "train_loss": history,
    }
    write_manifest(folder, manifest)
    trained = ce.CrossEncoder(folder, threads=settings.threads, device=settings.device)
    manifest["held_out"] = _figures(eval_g, base, {"stage1": trained}, progress, "tatqa held-out")
    manifest["seconds"] = round(time.perf_counter() - started, 1)
    write_manifest(folder, manifest)
    return manifest


def _figures(
    groups: Sequence[ce.Group],
    base: Embedder,
    models: dict[str, ce.CrossEncoder],
    progress: Progress | None,
    what: str,
) -> dict[str, dict[str, float]]:
    scorers: dict[str, Scorer] = {"bm25": bm25_scorer, "minilm_cosine": cosine_scorer(base)}
    scorers |= {name: m.scores for name, m in models.items()}
    out = {}
    for i, (name, scorer) in enumerate(scorers.items()):
        out[name] = ranking_metrics(scorer, groups)
        if progress:
            progress(f"evaluate ({what})", i + 1, len(scorers))
    return out


def company_documents(data: Path, config: RerankConfig) -> tuple[str, list[Path]]:
    """The company's name (FinanceBench's) and the PDFs of its chosen documents."""
    info_path = data / FINANCEBENCH / "financebench_document_information.jsonl"
    names: dict[str, str] = {}
    if info_path.is_file():
        for line in info_path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                names[r["doc_name"]] = r["company"]
    paths = []
    for doc in config.documents:
        if doc.split("_", 1)[0].upper() != config.company.upper():
            raise InputError(
                "a document of another company",
                field="--document",
                value=doc,
                hint=f"documents of {config.company} are named {config.company}_...",
            )
        pdf = data / FINANCEBENCH / "pdfs" / f"{doc}.pdf"
        if not pdf.is_file():
            raise InputError(
                "no such PDF", source=pdf, hint="give --data, the folder of financebench/"
            )
        paths.append(pdf)
    return names.get(config.documents[0], config.company), paths


def train_stage2(
    data: Path,
    *,
    llm: LLM,
    settings: Settings,
    config: RerankConfig,
    start: Path,
    folder: Path,
    progress: Progress | None = None,
) -> dict[str, object]:
    """Stage 2 from the stage-1 folder `start` (module docstring); returns its manifest."""
    started = time.perf_counter()
    # refuses a missing stage 1
    stage1 = ce.CrossEncoder(start, threads=settings.threads, device=settings.device)
    company, pdfs = company_documents(data, config)
    passages: list[str] = []
    for pdf in pdfs:
        passages += rerank_company.document_passages(
            pdf, size=config.chunk_size, overlap=config.chunk_overlap
        )
    base = open_embedder("minilm", threads=settings.threads, device=settings.device)
    written = rerank_company.write_questions(
        llm, company, passages, n=config.company_questions, seed=config.seed, progress=progress
    )
    labelled = rerank_company.label(
        llm,
        written,
        passages,
        base,
        candidates=config.candidates,
        random_negatives=config.random_negatives,
        threshold=config.threshold,
        seed=config.seed,
        progress=progress,
    )
    n_valid = min(config.company_valid, len(labelled) // 2)
    train_l, valid_l = labelled[n_valid:], labelled[:n_valid]
    train_g = [item.group(passages) for item in train_l]
    valid_g = [item.group(passages) for item in valid_l]
    if not any(g.negatives for g in train_g):
        raise InputError(
            "the reader labelled no usable training question",
            field="--company-questions",
            value=len(written),
            hint="give more questions, or a --threshold the reader's P(yes) reaches",
        )
    history = ce.train(
        train_g,
        folder,
        start=start / "model",
        negatives=config.negatives,
        epochs=config.company_epochs,
        lr=config.company_lr,
        max_length=config.max_length,
        seed=config.seed,
        threads=settings.threads,
        progress=progress,
        device=settings.device,
        stage="train stage 2",
    )
    with (folder / "stage2_pairs.jsonl").open("w", encoding="utf-8") as f:
        for split_name, items in (("valid", valid_l), ("train", train_l)):
            for item in items:
                f.write(json.dumps({"split": split_name, **item.record()}) + "\n")
    manifest = _base_manifest(2, folder, config, base)
    manifest |= {
        "parent": {
            "model_id": stage1.model_id,
            "weights_sha256": stage1.manifest["weights_sha256"],
        },
        "reader": llm.model_id,
        "company": {"key": config.company.upper(), "name": company},
        "data": {
            "documents": [{"path": str(p), "sha256": file_digest(p)} for p in pdfs],
            "passages": len(passages),
            "questions_written": len(written),
            "questions_labelled": len(labelled),
            "questions": {"train": len(train_g), "valid": len(valid_g)},
            "pairs": {
                "positives": sum(len(g.positives) for g in train_g),
                "negatives": sum(len(g.negatives) for g in train_g),
            },
            "labels": "stage2_pairs.jsonl",
            "financebench_questions": "not used; evaluate this company's apart",
        },
        "train_loss": history,
    }
    write_manifest(folder, manifest)
    trained = ce.CrossEncoder(folder, threads=settings.threads, device=settings.device)
    manifest["held_out"] = _figures(
        valid_g, base, {"stage1": stage1, "stage2": trained}, progress, "company valid"
    )
    manifest["seconds"] = round(time.perf_counter() - started, 1)
    write_manifest(folder, manifest)
    return manifest
