"""Any OpenAI-compatible endpoint as a reader (vLLM, Ollama, llama.cpp's server, hosted
APIs), over plain HTTP: how finkg reads past the machine it runs on.

- Greedy decoding (temperature 0); a JSON schema is passed as `response_format`
  (json_schema, strict), or, for servers that only know `json_object` with a `schema`
  (llama-cpp-python's server), in that form: the first refusal switches the instance over.
- `concurrency` requests in flight at most, retries with back-off on 429/5xx and time-outs
  (`transport`); jobs read up to that many prompts at once (`reader.concurrent`).
- `score` and `score_many` give each option's log-probability through what the server
  offers, detected on first use (`remote_scoring`): whole options from prompt
  log-probabilities (`echo`), or the first token's `top_logprobs`. `scoring` names the way,
  so cached scores of one never stand in for the other's.
"""

from __future__ import annotations

import contextvars
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from finkg.reader.llm import Generation, Message, ReaderError, check_messages
from finkg.reader.transport.endpoint import TIMEOUT_S, HTTPRefused, Transport
from finkg.reader.transport.remote_scoring import ChatTemplate, RemoteScorer


class OpenAICompatible:
    """Chat completions at `base_url` (the part before `/v1/chat/completions`)."""

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        api_key: str | None = None,
        timeout_s: float = TIMEOUT_S,
        concurrency: int = 1,
        retries: int = 4,
        backoff_s: float = 0.5,
        template: ChatTemplate | Callable[[], ChatTemplate] | None = None,
    ) -> None:
        self.transport = Transport(
            base_url.rstrip("/").removesuffix("/v1"),
            api_key=api_key,
            timeout_s=timeout_s,
            retries=retries,
            backoff_s=backoff_s,
            concurrency=concurrency,
        )
        self.base_url = self.transport.base_url
        self.model = model
        self.model_id = f"{model}@{self.base_url}"
        self.concurrency = concurrency
        self._schema_style = "json_schema"
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._scorer = RemoteScorer(self.transport, model=model, template=template, fan=self._fan)

    def require_model(self) -> None:
        """Refuse, naming what the server serves, when it does not serve `model` (an
        adapter finkg was asked to read with must be one of the server's models)."""
        try:
            listed = self.transport.get("/v1/models").get("data", [])
        except (HTTPRefused, ReaderError) as e:
            raise ReaderError(
                f"{self.base_url} did not list its models, so finkg cannot tell whether it "
                f"serves the adapter {self.model}: {e}"
            ) from None
        served = [str(m.get("id")) for m in listed if isinstance(m, dict)]
        if self.model not in served:
            raise ReaderError(
                f"{self.base_url} does not serve the adapter {self.model} (it serves "
                f"{', '.join(served) or 'nothing'}); start it with the adapter, e.g. vLLM's "
                f"--enable-lora --lora-modules {self.model}=PATH, or unset FINKG_ADAPTER"
            )

    @property
    def scoring(self) -> str:
        """How options are scored (part of the reply cache's key): asks the server once."""
        return f"remote-{self._scorer.method}-1"

    def _fan(self, tasks: Sequence[Callable[[], Any]]) -> list[Any]:
        """Run one read's requests together on the reader's pool (each a leaf: it never
        waits on another task, so reads waiting on their requests cannot starve it); the
        first error is raised once all have ended."""
        if self.concurrency <= 1 or len(tasks) <= 1:
            return [t() for t in tasks]
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=self.concurrency, thread_name_prefix="finkg-http"
                )
                weakref.finalize(self, self._pool.shutdown, wait=False)
        futures = [self._pool.submit(contextvars.copy_context().run, t) for t in tasks]
        errors = [f.exception() for f in futures]
        for e in errors:
            if e is not None:
                raise e
        return [f.result() for f in futures]

    def generate(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any] | None = None,
        *,
        max_tokens: int = 512,
    ) -> Generation:
        check_messages(messages)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "temperature": 0,
            "max_tokens": max_tokens,
            "seed": 0,
        }
        started = time.perf_counter()
        if schema is None:
            reply = self.transport.post("/v1/chat/completions", body)
        else:
            style = self._schema_style
            try:
                reply = self.transport.post(
                    "/v1/chat/completions", {**body, "response_format": self._format(schema, style)}
                )
            except HTTPRefused as e:
                if "response_format" not in e.detail or style != "json_schema":
                    raise
                self._schema_style = "json_object"
                reply = self.transport.post(
                    "/v1/chat/completions",
                    {**body, "response_format": self._format(schema, "json_object")},
                )
        seconds = time.perf_counter() - started
        try:
            text = reply["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise ReaderError(
                f"unexpected reply from {self.base_url}: {str(reply)[:300]}"
            ) from None
        usage = reply.get("usage") or {}
        return Generation(
            text,
            self.model_id,
            int(usage.get("prompt_tokens", 0)),
            int(usage.get("completion_tokens", 0)),
            seconds,
        )

    @staticmethod
    def _format(schema: Mapping[str, Any], style: str) -> dict[str, Any]:
        if style == "json_object":
            return {"type": "json_object", "schema": dict(schema)}
        return {
            "type": "json_schema",
            "json_schema": {
                "name": str(schema.get("title", "output")),
                "schema": dict(schema),
                "strict": True,
            },
        }

    def score(self, messages: Sequence[Message], options: Sequence[str]) -> dict[str, float]:
        """Each option's log-probability as the reply (`remote_scoring`)."""
        return self._scorer.score_many([(messages, options)])[0]

    def score_many(
        self, requests: Sequence[tuple[Sequence[Message], Sequence[str]]]
    ) -> list[dict[str, float]]:
        """`score` for several prompts, their requests sent together."""
        return self._scorer.score_many(requests)
