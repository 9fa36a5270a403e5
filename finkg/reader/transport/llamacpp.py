"""A local GGUF model through llama-cpp-python: the default reader.

Greedy decoding (temperature 0, fixed seed). A JSON schema becomes a llama.cpp grammar, so
replies are well-formed JSON of the schema's shape (they are still validated). `score`
gives each option's exact log-probability as the continuation of the chat prompt: the prompt
is evaluated once, then each option's tokens are evaluated after it.

A prompt shares its opening with the previous one (the template's instructions; across
variants of one anchor, the anchor and its market card too), and that part's state is kept
and reused. Reuse must not change a reply: a frozen reader answers the same prompt the same
way, and finkg's output cache relies on it. llama-cpp-python's own prefix reuse breaks that,
because the reused length moves where the rest is split into batches, and with it the low bits
of the logits (with SmolLM2 the same messages once gave a looping reply on a fresh model and a
short valid one on a warm one). Here every prompt is evaluated in blocks of `block` tokens
aligned to its first token, and only whole blocks are reused, so each block is computed from
the same tokens, the same state before it and the same batch shape whether it is reused or
not: a warm model's logits are bit for bit a fresh model's.

An `adapter` (a LoRA adapter in GGUF, `reader.adapt`) is applied to the model's context,
and to every context it is reopened as; the reader's `model_id` then names the adapter too.
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
from finkg.reader.llm import (
    ContextOverflow,
    Generation,
    Message,
    ReaderError,
    chat_messages,
    check_messages,
)
from finkg.reader.transport import cpu, scoring_batch

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


def _stops(stop: str | list[str] | None) -> list[str]:
    if stop is None:
        return []
    return [stop] if isinstance(stop, str) else list(stop)


# llama.cpp's candidate record: token id, logit, probability
_CANDIDATE = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)], align=True)


class _GrammarSampler:
    """Greedy decoding under a grammar, as llama.cpp's greedy sampler after its grammar
    sampler chooses, but the grammar first judges only the most likely token: when it is
    allowed it is the most likely allowed token, so the grammar need not judge the whole
    vocabulary (152k tokens for Qwen, 20 ms a step on 2 cores). Only when it is refused are
    all tokens judged. Ties go to the lowest token id, as in llama.cpp's greedy sampler. The
    replies are the same; the grammar costs 0.1-0.2 s a reply instead of 0.6."""

    def __init__(self, llm: Any, grammar: Any) -> None:
        self.llm = llm
        self.grammar = grammar
        self.sampler: Any = None

    def __enter__(self) -> _GrammarSampler:
        if self.grammar is not None:
            import llama_cpp

            self.sampler = llama_cpp.llama_sampler_init_grammar(
                self.llm._model.vocab,
                self.grammar._grammar.encode("utf-8"),
                self.grammar._root.encode("utf-8"),
            )
            if not self.sampler:
                raise ReaderError("llama.cpp could not build the reply grammar")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.sampler:
            import llama_cpp

            llama_cpp.llama_sampler_free(self.sampler)
            self.sampler = None

    def greedy(self, logits: np.ndarray) -> int:
        token = int(np.argmax(logits))
        if self.sampler is None:
            return token
        if not self._allowed(token, logits):
            token = self._best_allowed(logits)
        import llama_cpp

        llama_cpp.llama_sampler_accept(self.sampler, token)
        return token

    def _judge(self, candidates: np.ndarray) -> None:
        """Let the grammar set the logit of each refused candidate to -inf, in place."""
        import ctypes

        import llama_cpp

        array = llama_cpp.llama_token_data_array(
            data=candidates.ctypes.data_as(ctypes.POINTER(llama_cpp.llama_token_data)),
            size=len(candidates),
            selected=-1,
            sorted=False,
        )
        llama_cpp.llama_sampler_apply(self.sampler, ctypes.byref(array))

    def _allowed(self, token: int, logits: np.ndarray) -> bool:
        one = np.zeros(1, dtype=_CANDIDATE)
        one["id"], one["logit"] = token, logits[token]
        self._judge(one)
        return bool(np.isfinite(one["logit"][0]))

    def _best_allowed(self, logits: np.ndarray) -> int:
        every = np.zeros(len(logits), dtype=_CANDIDATE)
        every["id"] = np.arange(len(logits))
        every["logit"] = logits
        self._judge(every)
        if not np.isfinite(every["logit"]).any():
            raise ReaderError("the reply grammar allows no token here")
        return int(np.argmax(every["logit"]))


# tokens per aligned prompt block (module docstring): 64 evaluate 15 % faster than 32 on 2
# cores, and the impact template's shared opening (about 80 tokens) keeps 64 either way
PREFIX_BLOCK = 64


class LlamaCpp:
    """A GGUF model file, loaded once."""

    decoding = "grammar-2"  # part of the reply cache key: bump when decoding changes a reply
    # how `score` scores: whole options with the end-of-turn token, in a unified cache
    # (`score_many`: several prompts sharing their opening in one batch)
    scoring = "options+end-2"

    def __init__(
        self,
        path: Path,
        *,
        model_id: str,
        n_ctx: int = 4096,
        threads: int = 1,
        seed: int = 0,
        block: int = PREFIX_BLOCK,
        adapter: Path | None = None,
    ) -> None:
        try:
            import llama_cpp
            from llama_cpp import Llama
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        except ImportError:
            raise ReaderError(
                "llama-cpp-python is not installed: `scripts/llama_wheel.py --pip "
                ".venv/bin/pip` builds it without AMX (about 10 minutes once, then cached)"
            ) from None
        info = llama_cpp.llama_print_system_info().decode("utf-8", errors="replace")
        cpu.refuse_amx(info)
        cpu.refuse_missing_features(info, cpu.cpu_flags())
        if not path.is_file():
            raise InputError("no model file here", field="model", value=str(path))
        if block < 1:
            raise InputError("must be at least 1", field="block", value=block)
        if adapter is not None and not adapter.is_file():
            raise InputError(
                "no adapter file here",
                field="adapter",
                value=str(adapter),
                hint="`finkg train-reader` writes one; FINKG_ADAPTER names it or its path",
            )
        self.model_id = model_id
        self.adapter = adapter
        self.path = path
        self.threads = threads
        self.block = block

        def load(window: int) -> Any:
            llm = Llama(
                model_path=str(path),
                n_ctx=window,
                n_threads=threads,
                n_threads_batch=threads,
                n_batch=block,
                n_ubatch=block,
                seed=seed,
                verbose=False,
                lora_path=str(adapter) if adapter is not None else None,
            )
            scoring_batch.open_sequences(llm)  # room for `score_many`'s sequences
            return llm

        self.llm = load(n_ctx)
        trained = int(self.llm._model.n_ctx_train())
        if 0 < trained < n_ctx:  # never past the window the model was trained for
            self.llm.close()
            self.llm = load(trained)
        self._held: list[int] = []  # the prompt whose blocks the context holds
        self.prompt_tokens = 0  # prompt tokens asked for, and of them reused: the reuse rate
        self.reused_tokens = 0
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
        return self._format(messages=chat_messages(messages)).prompt

    def _keep_prefix(self, tokens: list[int]) -> int:
        """Keep the whole blocks `tokens` shares with the held prompt (at least one token
        is always evaluated, so the logits are fresh); return how many were kept."""
        common = 0
        for held, token in zip(self._held, tokens, strict=False):
            if held != token:
                break
            common += 1
        keep = min(common, len(tokens) - 1) // self.block * self.block
        if keep:
            self.llm.n_tokens = keep  # the rest, replies included, is dropped on the next eval
        else:
            self.llm.reset()
        self._held = []  # until the caller's eval of `tokens` has succeeded
        self.prompt_tokens += len(tokens)
        self.reused_tokens += keep
        return keep

    def generate(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any] | None = None,
        *,
        max_tokens: int = 512,
    ) -> Generation:
        check_messages(messages)
        grammar = _grammar(json.dumps(schema, sort_keys=True)) if schema is not None else None
        formatted = self._format(messages=chat_messages(messages))
        tokens = self._tokens(formatted.prompt, prompt=True)
        started = time.perf_counter()
        self._eval_prompt(tokens)
        stops = [s.encode("utf-8") for s in _stops(formatted.stop)]
        reply: list[int] = []
        text = b""
        limit = min(max_tokens, self.n_ctx - len(tokens))
        with _GrammarSampler(self.llm, grammar) as sampler:
            while len(reply) < limit:
                token = sampler.greedy(self._logits())
                if self._is_end(token):
                    break
                reply.append(token)
                text = self.llm.detokenize(reply, prev_tokens=tokens)
                if any(stop in text for stop in stops):
                    text = text[: min(text.index(s) for s in stops if s in text)]
                    break
                if len(reply) < limit:  # the next token needs this one's logits
                    self.llm.eval([token])
        return Generation(
            text.decode("utf-8", errors="ignore"),
            self.model_id,
            len(tokens),
            len(reply),
            time.perf_counter() - started,
        )

    def _logits(self) -> np.ndarray:
        """The last evaluated position's logits (a view into llama.cpp's buffer)."""
        return np.ctypeslib.as_array(self.llm._ctx.get_logits(), shape=(self.llm.n_vocab(),))

    def _is_end(self, token: int) -> bool:
        from llama_cpp import llama_vocab_is_eog

        return bool(llama_vocab_is_eog(self.llm._model.vocab, token))

    def _tokens(self, text: str, *, prompt: bool) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=prompt, special=prompt)

    def _eval_prompt(self, tokens: list[int]) -> None:
        """Evaluate `tokens` in aligned blocks, reusing the held ones (module docstring)."""
        if len(tokens) >= self.llm.n_ctx():
            raise ContextOverflow(
                f"{self.model_id}: a prompt of {len(tokens)} tokens does not fit the "
                f"context window of {self.llm.n_ctx()}; use a reader with a larger window "
                "(FINKG_READER), or ask about less at once"
            )
        keep = self._keep_prefix(tokens)
        self.llm.eval(tokens[keep:])
        self._held = tokens

    def _log_softmax(self) -> np.ndarray:
        logits = self._logits().astype(np.float64)
        shifted = logits - logits.max()
        return shifted - math.log(np.exp(shifted).sum())

    def _end_token(self) -> int:
        """The token that closes the assistant's turn (end-of-turn where the vocabulary has
        one, as Qwen's <|im_end|>; else end-of-sequence)."""
        import llama_cpp

        eot = int(llama_cpp.llama_vocab_eot(self.llm._model.vocab))
        return eot if eot >= 0 else int(self.llm.token_eos())

    def option_tokens(
        self, messages: Sequence[Message], options: Sequence[str], *, end: bool = True
    ) -> tuple[list[int], list[list[int]]]:
        """The tokens `score` reads: the prompt's, and each option's (tokenized on its own,
        as a reply is) with the end-of-turn token after it when `end`. What a trainer must
        use too, so that training and scoring see the same tokens (`reader.adapt`)."""
        check_messages(messages)
        if not options:
            raise InputError("nothing to score", field="options")
        prompt = self._tokens(self.prompt_text(messages), prompt=True)
        closing = [self._end_token()] if end else []
        sequences = []
        for option in options:
            tokens = self._tokens(option, prompt=False)
            if not tokens:
                raise InputError("an empty option cannot be scored", field="options")
            sequences.append(tokens + closing)
        return prompt, sequences

    def score_many(
        self, requests: Sequence[tuple[Sequence[Message], Sequence[str]]], *, end: bool = True
    ) -> list[dict[str, float]]:
        """`score` for several prompts that share their opening: the opening evaluated once,
        every prompt's tail and options in one batch (`scoring_batch`)."""
        return scoring_batch.score_many(self, requests, end=end)

    def score(
        self, messages: Sequence[Message], options: Sequence[str], *, end: bool = True
    ) -> dict[str, float]:
        """The log-probability of each option as the whole reply: its tokens (tokenized on
        their own, as a reply is) and, with `end`, the end-of-turn token after them, so an
        option that is the start of a longer reply is not scored as if it were all of it.
        The prompt is evaluated once; each option's continuation is evaluated after it."""
        prompt, sequences = self.option_tokens(messages, options, end=end)
        self._eval_prompt(prompt)
        first = self._log_softmax()
        scores = {}
        for option, sequence in zip(options, sequences, strict=True):
            logprob = float(first[sequence[0]])
            if len(sequence) > 1:
                self.llm.n_tokens = len(prompt)
                for previous, token in itertools.pairwise(sequence):
                    self.llm.eval([previous])
                    logprob += float(self._log_softmax()[token])
            scores[option] = logprob
        return scores
