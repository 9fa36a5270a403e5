"""Any OpenAI-compatible chat endpoint as a reader (vLLM, Ollama, llama.cpp's server,
hosted APIs), over plain HTTP.

Greedy decoding (temperature 0); a JSON schema is passed as `response_format` (json_schema,
strict), or, for servers that only know `json_object` with a `schema` (llama-cpp-python's
server), in that form: the first refusal switches the instance over. `score` asks for one
token with `top_logprobs` and reads each option's first-token log-probability, so the
options must start with different tokens (rise/fall, yes/no do).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any

from finkg.errors import InputError
from finkg.reader.llm import Generation, Message, ReaderError, check_messages

TIMEOUT_S = 600
_MISSING = -1e9  # log-probability of an option the server did not list among its top tokens


class OpenAICompatible:
    """Chat completions at `base_url` (the part before `/v1/chat/completions`)."""

    def __init__(
        self, base_url: str, *, model: str, api_key: str | None = None, timeout_s: int = TIMEOUT_S
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise InputError(
                "the reader endpoint must be an http(s) URL", field="llm_url", value=base_url
            )
        self.base_url = base_url.rstrip("/").removesuffix("/v1")
        self.model = model
        self.model_id = f"{model}@{self.base_url}"
        self.api_key = api_key
        self.timeout_s = timeout_s
        self._schema_style = "json_schema"

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(
            self.base_url + "/v1/chat/completions",
            data=json.dumps(body).encode(),
            headers=headers,
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as e:
            detail = e.read().decode("utf-8", "replace")[:500]
            raise ReaderError(f"{self.base_url} answered {e.code}: {detail}") from None
        except (urllib.error.URLError, TimeoutError) as e:
            reason = getattr(e, "reason", e)
            raise ReaderError(
                f"cannot reach the reader endpoint {self.base_url}: {reason}"
            ) from None

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
            reply = self._post(body)
        else:
            try:
                reply = self._post({**body, "response_format": self._format(schema)})
            except ReaderError as e:
                if "response_format" not in str(e) or self._schema_style != "json_schema":
                    raise
                self._schema_style = "json_object"
                reply = self._post({**body, "response_format": self._format(schema)})
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

    def _format(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        if self._schema_style == "json_object":
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
        check_messages(messages)
        body = {
            "model": self.model,
            "messages": list(messages),
            "temperature": 0,
            "max_tokens": 1,
            "logprobs": True,
            "top_logprobs": 20,
        }
        reply = self._post(body)
        try:
            top = reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
        except (KeyError, IndexError, TypeError):
            raise ReaderError(f"{self.base_url} returned no logprobs; it cannot score") from None
        found = {}
        for entry in top:
            token = entry["token"].strip().lower()
            if token and token not in found:
                found[token] = float(entry["logprob"])
        scores = {}
        for option in options:
            matches = [lp for tok, lp in found.items() if option.lower().startswith(tok)]
            scores[option] = max(matches) if matches else _MISSING
        return scores
