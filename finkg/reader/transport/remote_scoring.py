"""Option scoring over HTTP: whatever log-probabilities the server offers, detected once.

Two ways, tried in this order on the first `score` (and then kept for the server):

- `echo`: `/v1/completions` with `echo` and `logprobs` gives the log-probability of every
  prompt token (llama-cpp-python's server, vLLM, most self-hosted servers). A prompt is sent
  as the chat template renders it with the assistant's turn opened, once alone and once per
  option with the option and the end-of-turn token after it; the option's score is the sum
  over the tokens the second has beyond the first (so the server's own tokenizer decides
  them, and the prompt's tokens must be a prefix of the longer prompt's, which is checked).
  That is the local reader's score (`LlamaCpp.score`: whole options, end of turn included)
  up to the arithmetic of other batch splits. It needs the model's chat template, which an
  OpenAI-compatible server does not publish: `ChatTemplate.from_gguf` reads it from the
  same model file (a packaged model name or a .gguf path: `FINKG_LLM_TEMPLATE`). Where the
  server also gives `top_logprobs`, the probe checks that both agree on the first reply
  token: llama-cpp-python 0.3's server shifts echoed log-probabilities by one token for
  models that add no BOS token (Qwen2.5), and such a server is not scored this way.
- `top_logprobs`: `/v1/chat/completions` with `logprobs` and `top_logprobs` gives the first
  reply token's most likely tokens (hosted APIs): each option scores as the best listed
  token it starts with, -1e9 when none is listed. Only the first token counts, so options
  must differ in it (up/neutral/down, yes/no do; evidence ids such as N1 and N2 tie), and
  the scores are not the local reader's.

A server that offers neither is refused, naming what it lacks. The method is part of the
reader's `scoring` version, so the reply cache never mixes scores made the two ways.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from finkg.errors import InputError
from finkg.reader.llm import Message, ReaderError, chat_messages, check_messages
from finkg.reader.transport.endpoint import HTTPRefused, Transport
from finkg.reader.transport.usage import unmetered

log = logging.getLogger("finkg.reader")

ECHO = "echo"
TOP_LOGPROBS = "top_logprobs"
MISSING = -1e9  # the first-token score of an option the server did not list
_TOP = 20  # top_logprobs asked for (OpenAI's maximum)
ECHO_CHECK_NATS = 0.05  # echo and top_logprobs may differ this much on the probe's token
PROBE: list[Message] = [{"role": "user", "content": "Say yes."}]

Fan = Callable[[Sequence[Callable[[], Any]]], list[Any]]


@dataclass(frozen=True)
class ChatTemplate:
    """A model's chat prompt as text, and the text of the token that ends the assistant's
    turn: what the `echo` way sends to a completions endpoint."""

    name: str
    render: Callable[[Sequence[Message]], str]
    end: str

    @classmethod
    def from_gguf(cls, path: Path) -> ChatTemplate:
        """The chat template and end-of-turn token of a GGUF file (its vocabulary alone is
        loaded), rendered exactly as the local reader renders it."""
        try:
            import llama_cpp
            from llama_cpp import Llama
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        except ImportError:
            raise ReaderError(
                "reading a chat template from a GGUF file needs llama-cpp-python "
                "(`pip install 'finkg[llm]'`)"
            ) from None
        if not Path(path).is_file():
            raise InputError("no model file here", field="FINKG_LLM_TEMPLATE", value=str(path))
        vocab_only = Llama(model_path=str(path), vocab_only=True, verbose=False)
        template = vocab_only.metadata.get("tokenizer.chat_template")
        if not template:
            raise ReaderError(f"{Path(path).name} has no chat template in its metadata")
        vocab = vocab_only._model
        eot = int(llama_cpp.llama_vocab_eot(vocab.vocab))
        end = eot if eot >= 0 else int(vocab_only.token_eos())
        formatter = Jinja2ChatFormatter(
            template=template,
            eos_token=vocab.token_get_text(vocab_only.token_eos()),
            bos_token=vocab.token_get_text(vocab_only.token_bos()),
        )
        end_text = vocab.token_get_text(end)
        vocab_only.close()
        return cls(
            Path(path).name,
            lambda messages: formatter(messages=chat_messages(messages)).prompt,
            end_text,
        )


class RemoteScorer:
    """Scores options through `transport` (module docstring); `fan` runs a read's requests
    together (the reader's bounded pool)."""

    def __init__(
        self,
        transport: Transport,
        *,
        model: str,
        template: ChatTemplate | Callable[[], ChatTemplate] | None,
        fan: Fan,
    ) -> None:
        self.transport = transport
        self.model = model
        self._template = template
        self._fan = fan
        self._method: str | None = None
        self._lock = threading.Lock()

    @property
    def template(self) -> ChatTemplate | None:
        if callable(self._template) and not isinstance(self._template, ChatTemplate):
            self._template = self._template()
        return self._template

    @property
    def method(self) -> str:
        """`echo` or `top_logprobs`, asked of the server on first use."""
        with self._lock:
            if self._method is None:
                with unmetered():
                    self._method = self._detect()
                log.info("%s scores options by %s", self.transport.base_url, self._method)
            return self._method

    def _detect(self) -> str:
        lacking = []
        template = self.template
        if template is None:
            lacking.append(
                "no chat template to send prompts to /v1/completions with `echo` "
                "(set FINKG_LLM_TEMPLATE to the model's packaged name or .gguf file)"
            )
        else:
            text = template.render(PROBE)
            try:
                entries, _ = self._echo(text + "yes" + template.end)
                if sum(e is not None for e in entries) < 2:
                    raise KeyError("token_logprobs")
                shifted = self._echo_disagrees(text)
                if shifted is None:
                    return ECHO
                lacking.append(shifted)
            except HTTPRefused as e:
                lacking.append(
                    f"/v1/completions refused `echo` with `logprobs` ({e.status}: {e.detail[:120]})"
                )
            except (KeyError, IndexError, TypeError, ValueError):
                lacking.append(
                    "/v1/completions gave no prompt log-probabilities for `echo` with `logprobs`"
                )
        try:
            self._first_tokens(PROBE)
            return TOP_LOGPROBS
        except HTTPRefused as e:
            lacking.append(
                f"/v1/chat/completions refused `logprobs` with `top_logprobs` "
                f"({e.status}: {e.detail[:120]})"
            )
        except (KeyError, IndexError, TypeError, ValueError):
            lacking.append("/v1/chat/completions returned no `logprobs`/`top_logprobs`")
        raise ReaderError(f"{self.transport.base_url} cannot score options: " + "; ".join(lacking))

    def _echo_disagrees(self, text: str) -> str | None:
        """Why `echo`'s log-probabilities cannot be trusted, or None: the first reply
        token's log-probability from `top_logprobs` must be the one `echo` gives that token
        after the same prompt (llama-cpp-python 0.3's server shifts echoed log-probabilities
        by one token for models that add no BOS token, Qwen2.5's among them). Without
        `top_logprobs` there is nothing to check against."""
        try:
            top = self._chat_top(PROBE)
        except (HTTPRefused, KeyError, IndexError, TypeError, ValueError):
            return None
        token, expected = top[0]["token"], float(top[0]["logprob"])
        (alone, tokens), (longer, longer_tokens) = self._echo(text), self._echo(text + token)
        n = len(alone)
        echoed = longer[n] if len(longer) > n and longer_tokens[:n] == tokens else None
        if echoed is None:
            return None  # the token is not one token after the prompt: no check
        if abs(float(echoed) - expected) <= ECHO_CHECK_NATS:
            return None
        return (
            f"/v1/completions with `echo` gave {float(echoed):.3f} for the first reply "
            f"token {token!r} where /v1/chat/completions' `top_logprobs` gave "
            f"{expected:.3f}: its prompt log-probabilities are shifted, not used"
        )

    # -- echo ------------------------------------------------------------------------------

    def _echo(self, text: str) -> tuple[list[float | None], list[str]]:
        """The prompt tokens' log-probabilities and token texts for `text` (the generated
        token's entry dropped)."""
        reply = self.transport.post(
            "/v1/completions",
            {
                "model": self.model,
                "prompt": text,
                "max_tokens": 1,  # 0 means "no limit" to some servers
                "temperature": 0,
                "echo": True,
                "logprobs": 1,
                "seed": 0,
            },
        )
        logprobs = reply["choices"][0]["logprobs"]
        entries = list(logprobs["token_logprobs"])
        tokens = list(logprobs["tokens"])
        made = int(reply["usage"]["completion_tokens"])
        cut = len(entries) - made
        if cut < 1 or len(tokens) != len(entries):
            raise ValueError("token_logprobs")
        return entries[:cut], tokens[:cut]

    def _echo_options(self, text: str, options: Sequence[str], end: str) -> list[Callable[[], Any]]:
        """The requests of one prompt: the prompt alone, then each option after it and the
        end-of-turn text `end`."""
        return [
            lambda: self._echo(text),
            *[lambda o=o: self._echo(text + o + end) for o in options],
        ]

    def _sum_option(
        self,
        alone: tuple[list[float | None], list[str]],
        whole: tuple[list[float | None], list[str]],
        option: str,
    ) -> float:
        (entries, tokens), (longer, longer_tokens) = alone, whole
        n = len(entries)
        if len(longer) <= n or longer_tokens[:n] != tokens:
            raise ReaderError(
                f"{self.transport.base_url} tokenized the prompt differently once the option "
                f"{option!r} followed it: its tokens cannot be told from the prompt's"
            )
        tail = [x for x in longer[n:] if x is not None]
        if len(tail) < len(longer) - n:
            raise ReaderError(f"{self.transport.base_url} gave no log-probability for {option!r}")
        return float(sum(tail))

    # -- top_logprobs ----------------------------------------------------------------------

    def _first_tokens(self, messages: Sequence[Message]) -> dict[str, float]:
        top = self._chat_top(messages)
        found: dict[str, float] = {}
        for entry in top:
            token = entry["token"].strip().lower()
            if token and token not in found:
                found[token] = float(entry["logprob"])
        return found

    def _chat_top(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """The first reply token's `top_logprobs` entries, most likely first."""
        reply = self.transport.post(
            "/v1/chat/completions",
            {
                "model": self.model,
                "messages": list(messages),
                "temperature": 0,
                "max_tokens": 1,
                "logprobs": True,
                "top_logprobs": _TOP,
                "seed": 0,
            },
        )
        top = list(reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"])
        if not top:
            raise ValueError("top_logprobs")
        return sorted(top, key=lambda e: -float(e["logprob"]))

    @staticmethod
    def _match(found: dict[str, float], options: Sequence[str]) -> dict[str, float]:
        scores = {}
        for option in options:
            matches = [lp for tok, lp in found.items() if option.lower().startswith(tok)]
            scores[option] = max(matches) if matches else MISSING
        return scores

    # -- scoring ---------------------------------------------------------------------------

    def score_many(
        self, requests: Sequence[tuple[Sequence[Message], Sequence[str]]]
    ) -> list[dict[str, float]]:
        """Each request's options scored; every request of every prompt goes out together."""
        for messages, options in requests:
            check_messages(messages)
            if not options:
                raise InputError("nothing to score", field="options")
        if self.method == TOP_LOGPROBS:
            found = self._fan([partial(self._first_tokens, m) for m, _ in requests])
            return [self._match(f, o) for f, (_, o) in zip(found, requests, strict=True)]
        template = self.template
        assert template is not None  # `method` is ECHO only with a template (`_detect`)
        tasks: list[Callable[[], Any]] = []
        for messages, options in requests:
            tasks += self._echo_options(template.render(messages), options, template.end)
        answers = self._fan(tasks)
        out, at = [], 0
        for _, options in requests:
            alone, rest = answers[at], answers[at + 1 : at + 1 + len(options)]
            at += 1 + len(options)
            out.append(
                {
                    o: self._sum_option(alone, whole, o)
                    for o, whole in zip(options, rest, strict=True)
                }
            )
        return out
