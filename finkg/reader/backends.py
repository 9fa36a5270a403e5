"""Choosing the reader from settings: an OpenAI-compatible endpoint when one is set, else a
local GGUF (a packaged model by name, or a file path), loaded once per process."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from finkg.config import Settings
from finkg.reader.llm import LLM
from finkg.reader.models import MODELS, assemble


def open_reader(settings: Settings, *, n_ctx: int = 4096) -> LLM:
    if settings.llm_url:
        from finkg.reader.openai_http import OpenAICompatible

        return OpenAICompatible(
            settings.llm_url, model=settings.llm_model, api_key=settings.llm_key
        )
    return _local(settings.reader, settings.cache_dir, settings.threads, n_ctx)


@cache
def _local(name: str, cache_dir: Path, threads: int, n_ctx: int) -> LLM:
    from finkg.reader.llamacpp import LlamaCpp

    if name in MODELS:
        path = assemble(name, cache_dir)
        model_id = f"{name}@sha256:{MODELS[name].sha256[:12]}"
    else:
        path = Path(name).expanduser()
        model_id = path.name
    return LlamaCpp(path, model_id=model_id, n_ctx=n_ctx, threads=threads)
