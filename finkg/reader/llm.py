"""The LLM protocol every reader backend satisfies, and the scripted fake for tests.

- `generate(messages, schema)`: greedy decoding of a reply; when `schema` (a JSON schema) is
  given the backend constrains the reply to it where it can (llama.cpp grammar, OpenAI
  `response_format`) — callers still validate it.
- `score(prompt, options)`: the log-probability of each option as the continuation of
  `prompt` (a list of chat messages), for class decisions (rise/fall, yes/no) without free
  generation.

Backends report what they used in every `Generation` (model id, tokens in and out, seconds)
so that runs can record it.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from finkg.errors import FinkgError, InputError

if TYPE_CHECKING:
    from llama_cpp.llama_types import ChatCompletionRequestMessage

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": "..."}


class ReaderError(FinkgError):
    """A reader backend failed (model missing, server unreachable, out of context)."""


class ContextOverflow(ReaderError):
    """The prompt and the reply's token budget do not fit the model's context window.

    Exit code 2: what was asked of this reader does not fit it (jobs cut their listings and
    graphs to the window first; what is left is a prompt that cannot be cut further); the
    fix is a reader with a larger window, or less asked at once."""

    exit_code = 2


class ReaderBuildError(ReaderError):
    """The installed reader library was built in a way finkg refuses to run (a set-up
    problem the user fixes by rebuilding it, not a failure of finkg)."""

    exit_code = 2


@dataclass(frozen=True)
class Generation:
    text: str
    model: str
    tokens_in: int
    tokens_out: int
    seconds: float
    cached: bool = False


@runtime_checkable
class LLM(Protocol):
    model_id: str

    def generate(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any] | None = None,
        *,
        max_tokens: int = 512,
    ) -> Generation: ...

    def score(self, messages: Sequence[Message], options: Sequence[str]) -> dict[str, float]: ...


def messages_hash(messages: Sequence[Message], schema: Mapping[str, Any] | None = None) -> str:
    """SHA-256 over the exact messages and schema: the prompt's identity."""
    payload = json.dumps(
        {"messages": list(messages), "schema": schema}, sort_keys=True, ensure_ascii=False
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def check_messages(messages: Sequence[Message]) -> None:
    if not messages:
        raise InputError("no messages to send", field="messages")
    for i, m in enumerate(messages):
        if set(m) != {"role", "content"} or m["role"] not in ("system", "user", "assistant"):
            raise InputError(
                "a message is {'role': system|user|assistant, 'content': text}",
                field=f"messages[{i}]",
                value=m,
            )


def chat_messages(messages: Sequence[Message]) -> list[ChatCompletionRequestMessage]:
    """`messages` as llama-cpp-python's chat formatter is typed to take them: its TypedDicts
    of one role each are, at run time, the plain {"role", "content"} dicts `check_messages`
    holds a Message to (the same objects are passed)."""
    return cast("list[ChatCompletionRequestMessage]", list(messages))


@dataclass
class ScriptedLLM:
    """A fake for tests: replies come from a queue or a function of the messages.

    >>> llm = ScriptedLLM(replies=['{"selected": []}'])
    >>> llm.generate([{"role": "user", "content": "pick"}]).text
    '{"selected": []}'
    >>> llm.score([{"role": "user", "content": "up?"}], ["yes", "no"])
    {'yes': -0.6931471805599453, 'no': -0.6931471805599453}
    """

    replies: Iterable[str] = ()
    respond: Callable[[Sequence[Message]], str] | None = None
    scores: Callable[[Sequence[Message], Sequence[str]], dict[str, float]] | None = None
    model_id: str = "scripted"
    calls: list[Sequence[Message]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._queue = deque(self.replies)

    def generate(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any] | None = None,
        *,
        max_tokens: int = 512,
    ) -> Generation:
        check_messages(messages)
        self.calls.append(messages)
        started = time.perf_counter()
        if self._queue:
            text = self._queue.popleft()
        elif self.respond is not None:
            text = self.respond(messages)
        else:
            raise ReaderError("the scripted LLM has no reply left")
        words = sum(len(m["content"].split()) for m in messages)
        return Generation(
            text, self.model_id, words, len(text.split()), time.perf_counter() - started
        )

    def score(self, messages: Sequence[Message], options: Sequence[str]) -> dict[str, float]:
        check_messages(messages)
        self.calls.append(messages)
        if self.scores is not None:
            return self.scores(messages, options)
        import math

        return {o: math.log(1 / len(options)) for o in options}
