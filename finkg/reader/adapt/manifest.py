"""What an adapter was trained from, as a JSON manifest beside it (`adapters/NAME/`).

Enough to retrain it and check the result: the base model and its SHA-256, the periods and
the instant before which every label it saw had matured, a hash of the items, the
hyper-parameters, seed and thread count, the validation figures before and after, the
work done and its time, and the GGUF adapter's SHA-256 (the same inputs, seed and thread
count give the same hash on CPU).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import AwareDatetime, BaseModel

from finkg.errors import InputError

if TYPE_CHECKING:
    from finkg.reader.adapt.train import LoraParams, Trained

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def adapter_dir(cache_dir: Path, name: str) -> Path:
    """Where the adapter `name` lives under the cache (the name checked first)."""
    if not NAME.match(name):
        raise InputError(
            "an adapter name is 1-64 letters, digits, '.', '_' or '-'",
            field="name",
            value=name,
        )
    return cache_dir / "adapters" / name


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Period(BaseModel):
    start: AwareDatetime
    end: AwareDatetime  # exclusive
    labels_before: AwareDatetime  # every label used matured strictly before this
    items: int
    anchors: int  # what the items were asked about: impact's anchors, movement's queries
    last_matured: AwareDatetime | None  # the latest maturity among the labels used
    sha256: str  # of the items (questions and labels)


class Figures(BaseModel):
    metric: str
    frozen: float  # the validation metric of the reader without the adapter (step 0)
    best: float
    best_step: int
    history: list[tuple[int, float]]
    steps: int
    items_seen: int
    seconds: float
    steps_per_second: float
    device: str
    precision: str = "fp32"  # of the matrix products (manifests before it was recorded: fp32)

    @classmethod
    def of(cls, trained: Trained, *, metric: str) -> Figures:
        return cls(
            metric=metric,
            frozen=trained.frozen,
            best=trained.best,
            best_step=trained.best_step,
            history=trained.history,
            steps=trained.steps,
            items_seen=trained.items_seen,
            seconds=round(trained.seconds, 1),
            steps_per_second=trained.steps / trained.seconds if trained.seconds else 0.0,
            device=trained.device,
            precision=trained.precision,
        )


class AdapterManifest(BaseModel):
    name: str
    job: str
    base_model: str  # the reader's model id (packaged name and hash, or file name)
    base_file: str
    base_sha256: str
    adapter_file: str
    adapter_sha256: str
    training: Period
    validation: Period
    hyper_parameters: dict[str, object]
    threads: int
    torch: str
    figures: Figures
    created: AwareDatetime
    job_parameters: dict[str, object] = {}  # how the job asked (proxy; retriever, stocks)

    @classmethod
    def of(
        cls,
        *,
        name: str,
        job: str,
        base: Path,
        base_id: str,
        adapter: Path,
        training: Period,
        validation: Period,
        params: LoraParams,
        figures: Figures,
        threads: int,
        job_parameters: dict[str, object] | None = None,
    ) -> AdapterManifest:
        import torch

        return cls(
            name=name,
            job=job,
            base_model=base_id,
            base_file=base.name,
            base_sha256=sha256_of(base),
            adapter_file=adapter.name,
            adapter_sha256=sha256_of(adapter),
            training=training,
            validation=validation,
            hyper_parameters=asdict(params),
            job_parameters=job_parameters or {},
            threads=threads,
            torch=torch.__version__,
            figures=figures,
            created=dt.datetime.now(dt.UTC),
        )
