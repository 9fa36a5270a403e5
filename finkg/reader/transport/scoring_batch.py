"""Scoring the options of several prompts that share their opening, in one llama.cpp batch.

A class decision asks a reader several questions about the same material (the impact job:
the direction at three horizons and which evidence matters most). The prompts differ only
after their shared opening, so the opening is evaluated once (in the aligned blocks of
`llamacpp.LlamaCpp`, reused from the previous prompt where it can be) and everything after it
goes into one batch of llama.cpp sequences: for each prompt, its own tail (the question),
shared by one sequence per option, and each option's tokens and end-of-turn token on that
option's sequence. Each sequence sees the opening's cells (copied, not recomputed), its
prompt's tail and its own option, nothing of the others; the batch is decoded in chunks of
the context's batch size, in order, so every token's inputs are in place before it.

An option's score is what `LlamaCpp.score` gives: the log-probability of its tokens as the
whole reply, the end-of-turn token included. The numbers may differ from one `score` call
per prompt in their last bits (the work is split differently); the same requests always
give the same numbers, which is what the reply cache relies on (it keys the requests
together, `reader.read.score_many`).
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np

from finkg.reader.llm import Message, ReaderError

if TYPE_CHECKING:
    from llama_cpp import Llama


class BatchReader(Protocol):
    """What batch scoring uses of the local reader (`llamacpp.LlamaCpp`, which calls this
    module: a protocol rather than an import keeps the dependency one way)."""

    llm: Llama

    def prompt_text(self, messages: Sequence[Message]) -> str: ...

    def score(
        self, messages: Sequence[Message], options: Sequence[str], *, end: bool = True
    ) -> dict[str, float]: ...

    def option_tokens(
        self, messages: Sequence[Message], options: Sequence[str], *, end: bool = True
    ) -> tuple[list[int], list[list[int]]]: ...

    def _eval_prompt(self, tokens: list[int]) -> None: ...


MAX_SEQUENCES = 32  # llama.cpp sequences a context is opened with (one per option in a batch)


@dataclass
class _Entry:
    token: int
    pos: int
    seqs: list[int]
    logits: bool = False
    # where this position's logits are needed: (request, option, index into the option's
    # sequence of the token they predict); the tail's last position predicts every option's
    # first token
    wanted: list[tuple[int, int, int]] = field(default_factory=list)


def open_sequences(llm: Llama, n_seq: int = MAX_SEQUENCES) -> None:
    """Reopen a `llama_cpp.Llama`'s context with room for `n_seq` sequences (at most its
    batch size, as llama.cpp requires) in one unified cache (sequences then share the
    opening's cells instead of copying them), with the LoRA adapter the first one had."""
    from llama_cpp import _internals

    params = llm.context_params
    params.n_seq_max = max(1, min(n_seq, int(params.n_ubatch)))
    params.kv_unified = True
    ctx = _internals.LlamaContext(model=llm._model, params=params, verbose=False)
    adapter = getattr(llm, "_lora_adapter", None)  # a LoRA adapter is set per context
    if adapter is not None:
        import llama_cpp

        adapters = (llama_cpp.llama_adapter_lora_p_ctypes * 1)(adapter)
        scales = (ctypes.c_float * 1)(llm.lora_scale)
        if llama_cpp.llama_set_adapters_lora(ctx.ctx, adapters, 1, scales):
            ctx.close()
            raise ReaderError(f"llama.cpp could not apply the adapter {llm.lora_path}")
    old, llm._ctx = llm._ctx, ctx
    old.close()


def _shared(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens two prompts share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _log_softmax(row: np.ndarray) -> np.ndarray:
    x = row.astype(np.float64)
    x -= x.max()
    return x - math.log(np.exp(x).sum())


def score_many(
    reader: BatchReader,
    requests: Sequence[tuple[Sequence[Message], Sequence[str]]],
    *,
    end: bool = True,
) -> list[dict[str, float]]:
    """Each request's options scored as whole replies (module docstring). `reader` is a
    `LlamaCpp` whose model was opened with `open_sequences`."""
    import llama_cpp

    if not requests:
        return []
    r = reader
    # the tokens `score` reads (every request checked before any work)
    tokenized = [r.option_tokens(list(m), list(o), end=end) for m, o in requests]
    prompts = [prompt for prompt, _ in tokenized]
    sequences = [options for _, options in tokenized]
    room = int(r.llm.context_params.n_seq_max) - 1  # seq 0: the opening
    if sum(len(o) for o in sequences) > room:
        if len(requests) == 1:  # more options than sequences: one prompt, option by option
            return [r.score(list(requests[0][0]), list(requests[0][1]), end=end)]
        half = len(requests) // 2
        return score_many(reader, requests[:half], end=end) + score_many(
            reader, requests[half:], end=end
        )
    common = min(len(t) for t in prompts) - 1  # every request keeps one token of its own
    for t in prompts[1:]:
        common = min(common, _shared(prompts[0], t))
    if common < 1:
        return [r.score(list(m), list(o), end=end) for m, o in requests]
    opening = prompts[0][:common]
    r._eval_prompt(opening)
    entries: list[_Entry] = []
    seq = 1
    for i, (tokens, encoded) in enumerate(zip(prompts, sequences, strict=True)):
        mine = list(range(seq, seq + len(encoded)))
        seq += len(encoded)
        tail = tokens[common:]
        for k, token in enumerate(tail):
            last = k == len(tail) - 1
            entries.append(
                _Entry(
                    token,
                    common + k,
                    mine,
                    last,
                    [(i, j, 0) for j in range(len(encoded))] if last else [],
                )
            )
        for j, coded in enumerate(encoded):
            for k, token in enumerate(coded[:-1]):
                entries.append(
                    _Entry(token, common + len(tail) + k, [mine[j]], True, [(i, j, k + 1)])
                )
    llm = r.llm
    memory = llama_cpp.llama_get_memory(llm._ctx.ctx)
    for s in range(1, seq):
        llama_cpp.llama_memory_seq_cp(memory, 0, s, 0, common)
    logprob = [[0.0] * len(o) for o in sequences]
    size = llm.n_batch
    batch = llama_cpp.llama_batch_init(size, 0, max(len(o) for o in sequences))
    vocab = llm.n_vocab()
    try:
        for start in range(0, len(entries), size):
            chunk = entries[start : start + size]
            batch.n_tokens = len(chunk)
            for b, e in enumerate(chunk):
                batch.token[b] = e.token
                batch.pos[b] = e.pos
                batch.n_seq_id[b] = len(e.seqs)
                for n, s in enumerate(e.seqs):
                    batch.seq_id[b][n] = s
                batch.logits[b] = e.logits
            if llama_cpp.llama_decode(llm._ctx.ctx, batch) != 0:
                raise ReaderError("llama.cpp could not decode the options' batch")
            for b, e in enumerate(chunk):
                if not e.wanted:
                    continue
                pointer = llama_cpp.llama_get_logits_ith(llm._ctx.ctx, b)
                row = _log_softmax(
                    np.ctypeslib.as_array(
                        ctypes.cast(pointer, ctypes.POINTER(ctypes.c_float)), shape=(vocab,)
                    )
                )
                for i, j, k in e.wanted:
                    logprob[i][j] += float(row[sequences[i][j][k]])
    finally:
        llama_cpp.llama_batch_free(batch)
        for s in range(1, seq):
            llama_cpp.llama_memory_seq_rm(memory, s, -1, -1)
        llm.n_tokens = common
    return [
        dict(zip(options, values, strict=True))
        for (_, options), values in zip(requests, logprob, strict=True)
    ]
