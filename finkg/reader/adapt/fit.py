"""From a job's labelled questions to a kept adapter: what every job's trainer shares.

A job (`tasks.impact.training`, `tasks.movement.adapt`) builds its questions exactly as it
asks them, each with the option that happened and when that label matured, and calls
`fit`: the local reader turns each question into the tokens it scores (`Base`), `train.
train` fits the adapter with early stopping on the job's validation metric, llama.cpp's
converter makes it a GGUF adapter, and the manifest (`manifest.AdapterManifest`) is saved
beside it under the cache (`adapters/NAME/`), where `FINKG_ADAPTER=NAME` finds it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from finkg.config import Settings
from finkg.errors import InputError
from finkg.reader.adapt.manifest import AdapterManifest, Figures, Period, adapter_dir
from finkg.reader.adapt.train import Item, LoraParams, Metric, Progress, Trained, train
from finkg.reader.llm import Message


class Question(Protocol):
    """One labelled question of a job, as the trainer needs it."""

    @property
    def group(self) -> str: ...  # what it was asked about (an anchor, a query)

    @property
    def matured_at(self) -> dt.datetime: ...

    @property
    def messages(self) -> list[Message]: ...

    @property
    def label(self) -> str: ...  # the option that happened

    def digest_row(self) -> list[object]: ...  # what it asks and what happened, as JSON


def period(
    start: dt.datetime, end: dt.datetime, before: dt.datetime, found: Sequence[Question]
) -> Period:
    """A period's description: its bounds, the cut every label matured before, its counts
    and one hash over what the questions ask and what happened (the data an adapter saw)."""
    h = hashlib.sha256()
    for q in found:
        h.update(json.dumps(q.digest_row()).encode())
    return Period(
        start=start,
        end=end,
        labels_before=before,
        items=len(found),
        anchors=len({q.group for q in found}),
        last_matured=max((q.matured_at for q in found), default=None),
        sha256=h.hexdigest(),
    )


@dataclass(frozen=True)
class Base:
    """The local reader an adapter is for: its GGUF file, model id and tokenizer of the
    options as it scores them (`LlamaCpp.option_tokens`)."""

    path: Path
    model_id: str
    option_tokens: Callable[[list[Message], list[str]], tuple[list[int], list[list[int]]]]

    @classmethod
    def open(
        cls,
        settings: Settings,
        *,
        name: str,
        training_end: dt.datetime,
        validation_start: dt.datetime,
    ) -> Base:
        """`settings.reader`, checked with the adapter's name and periods before any
        question is built: the training period must end before the validation one starts,
        and an endpoint reader has no weights here to adapt."""
        from finkg.reader.transport.backends import local_llm, reader_file

        if training_end > validation_start:
            raise InputError(
                "the training period must end before the validation period starts",
                field="--train",
                value=f"ends {training_end.isoformat()}, after {validation_start.isoformat()}",
            )
        adapter_dir(settings.cache_dir, name)  # the name checked before any work

        path, model_id = reader_file(settings.reader, settings.cache_dir)
        reader = local_llm(settings.reader, settings.cache_dir, 1, 4096)
        tokens_of = getattr(reader, "option_tokens", None)
        if tokens_of is None:
            raise InputError("a reader to adapt is a local GGUF model", field="FINKG_READER")
        return cls(path, model_id, tokens_of)

    def items(self, found: Sequence[Question], options: Sequence[str]) -> list[Item]:
        out = []
        for q in found:
            prompt, tokens = self.option_tokens(q.messages, list(options))
            out.append(
                Item(tuple(prompt), tuple(tuple(o) for o in tokens), list(options).index(q.label))
            )
        return out


def fit(
    base: Base,
    settings: Settings,
    *,
    name: str,
    job: str,
    options: Sequence[str],
    fitting: Sequence[Question],
    checking: Sequence[Question],
    training: Period,
    validation: Period,
    metric: Metric,
    metric_name: str,
    params: LoraParams,
    job_parameters: Mapping[str, object] | None = None,
    progress: Progress | None = None,
) -> AdapterManifest:
    """Train on `fitting`, stop early on `metric` over `checking`, convert, and save the
    adapter with its manifest under the cache (module docstring)."""
    from finkg.reader.adapt.convert import to_gguf
    from finkg.retrieval.index.embed import torch_device

    folder = adapter_dir(settings.cache_dir, name)
    trained: Trained = train(
        base.path, base.items(fitting, options), base.items(checking, options), out_dir=folder,
        metric=metric, params=params, threads=settings.threads,
        device=torch_device(settings.device), progress=progress,
    )  # fmt: skip
    gguf = to_gguf(trained.adapter_dir, trained.base_config_dir, folder / "adapter.gguf")
    manifest = AdapterManifest.of(
        name=name,
        job=job,
        base=base.path,
        base_id=base.model_id,
        adapter=gguf,
        training=training,
        validation=validation,
        params=params,
        job_parameters=dict(job_parameters or {}),
        figures=Figures.of(trained, metric=metric_name),
        threads=settings.threads,
    )
    (folder / "manifest.json").write_text(manifest.model_dump_json(indent=2) + "\n")
    return manifest
