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
        return OpenAICompatible(
            settings.llm_url,
            model=settings.llm_model,
            api_key=settings.llm_key,
            concurrency=settings.concurrency,
            template=(lambda: chat_template(spec, settings.cache_dir)) if spec else None,
        )
    return local_llm(settings.reader, settings.cache_dir, settings.threads, n_ctx)


def chat_template(spec: str, cache_dir: Path) -> ChatTemplate:
    """The chat template of a packaged model (by name) or of a .gguf file."""
    from finkg.reader.transport.remote_scoring import ChatTemplate

    path = assemble(spec, cache_dir) if spec in MODELS else Path(spec).expanduser()
    return ChatTemplate.from_gguf(path)


@cache
def local_llm(name: str, cache_dir: Path, threads: int, n_ctx: int) -> LLM:
    from finkg.reader.transport.llamacpp import LlamaCpp

    if name in MODELS:
        path = assemble(name, cache_dir)
        model_id = f"{name}@sha256:{MODELS[name].sha256[:12]}"
    else:
        path = Path(name).expanduser()
        model_id = path.name
    return LlamaCpp(path, model_id=model_id, n_ctx=n_ctx, threads=threads)
