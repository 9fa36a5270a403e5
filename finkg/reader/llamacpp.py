"""A local GGUF model through llama-cpp-python: the default reader.

Greedy decoding (temperature 0, fixed seed). A JSON schema becomes a llama.cpp grammar, so
replies are well-formed JSON of the schema's shape (they are still validated). `score`
gives each option's exact log-probability as the continuation of the chat prompt: the prompt
is evaluated once, then each option's tokens are evaluated after it.

Every call starts from an empty context. Reusing the prefix cached by the previous call
changes how the prompt is split into batches, and with it the low bits of the logits: with
SmolLM2 the same messages gave a looping reply on a fresh model and a short valid one on a
warm one. A frozen reader must answer the same prompt the same way (finkg's output cache
relies on it), so prompts are always evaluated whole.
"""

from __future__ import annotations

import itertools
import json
import math
import time
import weakref
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from finkg.errors import InputError
from finkg.reader.llm import ContextOverflow, Generation, Message, ReaderError, check_messages

# llama-cpp-python 0.3.36 writes a JSON string character as `[^"\\]`, which lets raw
# control characters (a newline, say) into strings: grammar-conformant replies that no
# JSON parser accepts (Qwen 0.5B wrote one in 50 benchmark prompts). llama.cpp's own
# converter excludes them; so does finkg's.
_LOOSE_CHAR = 'char ::= [^"\\\\] |'
_JSON_CHAR = 'char ::= [^"\\\\\\x7F\\x00-\\x1F] |'


def grammar_text(schema_json: str) -> str:
    """The GBNF grammar of a JSON schema, its strings free of control characters."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    text = json_schema_to_gbnf(schema_json)
    if _LOOSE_CHAR in text:
        text = text.replace(_LOOSE_CHAR, _JSON_CHAR)
    return text


@lru_cache(maxsize=32)
def _grammar(schema_json: str) -> Any:
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_string(grammar_text(schema_json), verbose=False)


class LlamaCpp:
    """A GGUF model file, loaded once."""

    def __init__(
        self, path: Path, *, model_id: str, n_ctx: int = 4096, threads: int = 1, seed: int = 0
    ) -> None:
        try:
            from llama_cpp import Llama
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        except ImportError:
            raise ReaderError(
                "llama-cpp-python is not installed: pip install "
                "'llama-cpp-python==0.3.36' (a ~10 minute build, then cached)"
            ) from None
        if not path.is_file():
            raise InputError("no model file here", field="model", value=str(path))
        self.model_id = model_id
        self.path = path
        self.threads = threads
        self.llm = Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_threads=threads,
            n_threads_batch=threads,
            seed=seed,
            verbose=False,
        )
        # Free the model while the interpreter is still whole; llama-cpp-python's own
        # __del__ at shutdown finds its C bindings gone and prints a TypeError.
        weakref.finalize(self, self.llm.close)
        template = self.llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise ReaderError(f"{path.name} has no chat template in its metadata")
        vocab = self.llm._model
        self._format = Jinja2ChatFormatter(
            template=template,
            eos_token=vocab.token_get_text(self.llm.token_eos()),
            bos_token=vocab.token_get_text(self.llm.token_bos()),
        )

    @property
    def n_ctx(self) -> int:
        """The context window in tokens (prompt and reply together)."""
        return int(self.llm.n_ctx())

    def count_tokens(self, messages: Sequence[Message]) -> int:
        """How many tokens `messages` take as a prompt (the chat template included)."""
        return len(self._tokens(self.prompt_text(messages), prompt=True))

    def prompt_text(self, messages: Sequence[Message]) -> str:
        """The exact text the model sees: the chat template with the assistant turn opened."""
        return self._format(messages=list(messages)).prompt

    def generate(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any] | None = None,
        *,
        max_tokens: int = 512,
    ) -> Generation:
        check_messages(messages)
        grammar = _grammar(json.dumps(schema, sort_keys=True)) if schema is not None else None
        started = time.perf_counter()
        self.llm.reset()  # evaluate the whole prompt: see the module docstring
        try:
            reply = self.llm.create_chat_completion(
                messages=list(messages),
                temperature=0.0,
                top_k=1,
                top_p=1.0,
                seed=0,
                max_tokens=max_tokens,
                grammar=grammar,
            )
        except ValueError as e:  # the prompt does not fit the context window
            raise ContextOverflow(f"{self.model_id}: {e}") from None
        usage = reply["usage"]
        return Generation(
            reply["choices"][0]["message"]["content"] or "",
            self.model_id,
            usage["prompt_tokens"],
            usage["completion_tokens"],
            time.perf_counter() - started,
        )

    def _tokens(self, text: str, *, prompt: bool) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=prompt, special=prompt)

    def _eval_prompt(self, tokens: list[int]) -> None:
        """Evaluate `tokens` from an empty context (see the module docstring)."""
        if len(tokens) >= self.llm.n_ctx():
            raise ReaderError(
                f"{self.model_id}: a prompt of {len(tokens)} tokens does not fit the "
                f"context window of {self.llm.n_ctx()}"
            )
        self.llm.reset()
        self.llm.eval(tokens)

    def _log_softmax(self) -> np.ndarray:
        logits = np.ctypeslib.as_array(
            self.llm._ctx.get_logits(),
            shape=(self.llm.n_vocab(),),
        ).astype(np.float64)
        shifted = logits - logits.max()
        return shifted - math.log(np.exp(shifted).sum())

    def score(self, messages: Sequence[Message], options: Sequence[str]) -> dict[str, float]:
        check_messages(messages)
        if not options:
            raise InputError("nothing to score", field="options")
        prompt = self._tokens(self.prompt_text(messages), prompt=True)
        self._eval_prompt(prompt)
        first = self._log_softmax()
        scores = {}
        for option in options:
            tokens = self._tokens(option, prompt=False)
            if not tokens:
                raise InputError("an empty option cannot be scored", field="options")
            logprob = float(first[tokens[0]])
            if len(tokens) > 1:
                self.llm.n_tokens = len(prompt)
                for previous, token in itertools.pairwise(tokens):
                    self.llm.eval([previous])
                    logprob += float(self._log_softmax()[token])
            scores[option] = logprob
        return scores
