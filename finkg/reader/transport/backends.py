"""Choosing the reader from settings: an OpenAI-compatible endpoint when one is set, else a
local GGUF (a packaged model by name, or a file path), loaded once per process."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from finkg.config import Settings
from finkg.reader.llm import LLM
from finkg.reader.transport.models import MODELS, assemble

if TYPE_CHECKING:
    from finkg.reader.transport.remote_scoring import ChatTemplate


def open_reader(settings: Settings, *, n_ctx: int = 4096) -> LLM:
    """The configured reader; an endpoint reader keeps `settings.concurrency` requests in
    flight and scores exactly when `settings.llm_template` names its model's chat template
    (read on the first score, not here)."""
    if settings.llm_url:
        from finkg.reader.transport.openai_http import OpenAICompatible

        spec = settings.llm_template
        reader = OpenAICompatible(
            settings.llm_url,
            # a server that serves adapters (vLLM's --lora-modules) names each as a model
            model=settings.adapter or settings.llm_model,
            api_key=settings.llm_key,
            concurrency=settings.concurrency,
            template=(lambda: chat_template(spec, settings.cache_dir)) if spec else None,
        )
        if settings.adapter:
            reader.require_model()
        return reader
    return local_llm(settings.reader, settings.cache_dir, settings.threads, n_ctx, settings.adapter)


def reader_file(name: str, cache_dir: Path) -> tuple[Path, str]:
    """A local reader's GGUF file and model id: a packaged model (assembled on first use)
    by name, or a .gguf path."""
    if name in MODELS:
        return assemble(name, cache_dir), f"{name}@sha256:{MODELS[name].sha256[:12]}"
    path = Path(name).expanduser()
    return path, path.name


def adapter_file(spec: str, cache_dir: Path) -> Path:
    """A LoRA adapter's GGUF file: a .gguf path, or the name of one `finkg train-reader`
    kept under the cache."""
    from finkg.reader.adapt.manifest import adapter_dir

    if spec.endswith(".gguf") or "/" in spec:
        return Path(spec).expanduser()
    return adapter_dir(cache_dir, spec) / "adapter.gguf"


def chat_template(spec: str, cache_dir: Path) -> ChatTemplate:
    """The chat template of a packaged model (by name) or of a .gguf file."""
    from finkg.reader.transport.remote_scoring import ChatTemplate

    path = assemble(spec, cache_dir) if spec in MODELS else Path(spec).expanduser()
    return ChatTemplate.from_gguf(path)


@cache
def local_llm(
    name: str, cache_dir: Path, threads: int, n_ctx: int, adapter: str | None = None
) -> LLM:
    """The local reader, loaded once per arguments; with `adapter`, its model id names the
    adapter's SHA-256 too (`+lora:SHA256`), so outputs and caches tell the two apart and a
    run records that it used the adapter (`kg.outputs.run_quads`)."""
    from finkg.reader.adapt.manifest import sha256_of
    from finkg.reader.transport.llamacpp import LlamaCpp

    path, model_id = reader_file(name, cache_dir)
    lora = adapter_file(adapter, cache_dir) if adapter else None
    if lora is not None and lora.is_file():
        model_id = f"{model_id}+lora:{sha256_of(lora)}"  # kg.outputs.adapter_of reads it
    return LlamaCpp(path, model_id=model_id, n_ctx=n_ctx, threads=threads, adapter=lora)
